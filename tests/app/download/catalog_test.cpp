// resources/catalog.json (as embedded in alap_download) validates; the validator refuses bad
// entries; the "fits on this machine" figures are the exact KV arithmetic plus the file size.
#include <algorithm>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QtTest>

#include "download/catalog.h"
#include "download/catalog_list_model.h"
#include "download/system_memory.h"

using namespace alap::download;

namespace {

QByteArray embedded() {
  QFile f(QString::fromLatin1(kCatalogResource));
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// The embedded catalog with entry 0 changed by `edit`.
QByteArray withEdit(const std::function<void(QJsonObject&)>& edit) {
  QJsonObject root = QJsonDocument::fromJson(embedded()).object();
  QJsonArray models = root.value(QStringLiteral("models")).toArray();
  QJsonObject first = models.at(0).toObject();
  edit(first);
  models.replace(0, first);
  root.insert(QStringLiteral("models"), models);
  return QJsonDocument(root).toJson();
}

}  // namespace

class CatalogTest : public QObject {
  Q_OBJECT

 private slots:
  void embeddedCatalogValidates() {
    const auto c = loadCatalog();
    QVERIFY2(c.ok(), qPrintable(c.error));
    QVERIFY(c.value->size() >= 10 && c.value->size() <= 14);
    QSet<QString> archs;
    for (const CatalogEntry& e : *c.value) {
      archs.insert(e.architecture);
      QVERIFY(e.sizeBytes > 100'000'000 && e.sizeBytes < 6'000'000'000);
      QVERIFY(!e.license.isEmpty() && !e.description.isEmpty());
      // The Bengali description is in Bengali script (U+0980..U+09FF), not a copy of the English.
      QVERIFY2(std::any_of(e.descriptionBn.begin(), e.descriptionBn.end(),
                           [](QChar ch) { return ch.unicode() >= 0x0980 && ch.unicode() <= 0x09FF; }),
               qPrintable(e.id));
      QVERIFY(e.headDim % 32 == 0);  // every cache mode possible
    }
    QCOMPARE(archs, QSet<QString>({"llama", "qwen2", "qwen3"}));
  }

  void bengaliIsHonest() {
    const auto c = loadCatalog();
    QVERIFY(c.ok());
    int bengali = 0;
    for (const CatalogEntry& e : *c.value) {
      if (e.repository.contains(QStringLiteral("Qwen"))) QVERIFY2(e.bengali, qPrintable(e.id));
      if (e.repository.contains(QStringLiteral("Llama-3.2"))) {
        QVERIFY(e.multilingual);
        QVERIFY2(!e.bengali, "Llama 3.2 does not list Bengali");
      }
      if (e.repository.contains(QStringLiteral("SmolLM2"))) QVERIFY(!e.multilingual);
      bengali += e.bengali;
    }
    QVERIFY(bengali >= 5);
  }

  void refusesBadEntries_data() {
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("error");
    QTest::newRow("phi3") << withEdit([](QJsonObject& o) { o[QStringLiteral("architecture")] = QStringLiteral("phi3"); })
                          << "is not one Alap runs";
    QTest::newRow("checksum") << withEdit([](QJsonObject& o) { o[QStringLiteral("sha256")] = QStringLiteral("00"); })
                              << "must come from the server";
    QTest::newRow("no license") << withEdit([](QJsonObject& o) { o.remove(QStringLiteral("license")); }) << "\"license\"";
    QTest::newRow("size 0") << withEdit([](QJsonObject& o) { o[QStringLiteral("size_bytes")] = 0; }) << "\"size_bytes\"";
    QTest::newRow("size string") << withEdit([](QJsonObject& o) { o[QStringLiteral("size_bytes")] = QStringLiteral("1"); })
                                 << "\"size_bytes\"";
    QTest::newRow("quant mismatch") << withEdit([](QJsonObject& o) { o[QStringLiteral("quantization")] = QStringLiteral("Q8_0"); })
                                    << "does not match the file name";
    QTest::newRow("path file") << withEdit([](QJsonObject& o) { o[QStringLiteral("file")] = QStringLiteral("../x-Q4_K_M.gguf"); })
                               << "unsafe file name";
    QTest::newRow("repo") << withEdit([](QJsonObject& o) { o[QStringLiteral("repository")] = QStringLiteral("nope"); })
                          << "owner/name";
    QTest::newRow("no bengali") << withEdit([](QJsonObject& o) { o.remove(QStringLiteral("description_bn")); })
                                << "\"description_bn\"";
    QTest::newRow("no layers") << withEdit([](QJsonObject& o) { o.remove(QStringLiteral("n_layer")); }) << "\"n_layer\"";
    QTest::newRow("languages") << withEdit([](QJsonObject& o) { o[QStringLiteral("languages")] = QJsonArray(); }) << "\"languages\"";
    QTest::newRow("not json") << QByteArray("{") << "not valid JSON";
    QTest::newRow("wrong format") << QByteArray(R"({"format":"x","version":1,"models":[]})") << "\"format\"";
  }
  void refusesBadEntries() {
    QFETCH(QByteArray, json);
    QFETCH(QString, error);
    const auto c = parseCatalog(json);
    QVERIFY(!c.ok());
    QVERIFY2(c.error.contains(error), qPrintable(c.error));
  }

  void fitUsesKvArithmetic() {
    const auto c = loadCatalog();
    QVERIFY(c.ok());
    const CatalogEntry* q = nullptr;
    for (const CatalogEntry& e : *c.value) {
      if (e.id == QLatin1String("qwen2.5-1.5b-instruct-q4_k_m")) q = &e;
    }
    QVERIFY(q);
    // 28 layers x 2 KV heads x 4096 tokens x head_dim 128: f16 K+V = 2 x 2 bytes; k8 K = 128 + 4x2
    // scale bytes; k8v8 both packed.
    const uint64_t vectors = 28ull * 2 * 4096;
    SystemMemory mem{.totalBytes = 16ull << 30, .availableBytes = 8ull << 30};
    const CatalogFit f = catalogFit(*q, 4096, mem);
    QCOMPARE(f.kvBytes[0], vectors * 256 * 2);
    QCOMPARE(f.kvBytes[1], vectors * (136 + 256));
    QCOMPARE(f.kvBytes[2], vectors * 136 * 2);
    QCOMPARE(f.needBytes[0], memoryNeeded(uint64_t(q->sizeBytes), f.kvBytes[0]));
    QCOMPARE(f.fit[0], Fit::fits);
    mem.availableBytes = 1ull << 30;
    QCOMPARE(catalogFit(*q, 4096, mem).fit[0], Fit::tight);
    mem.totalBytes = 1ull << 30;
    QCOMPARE(catalogFit(*q, 4096, mem).fit[2], Fit::tooLarge);
    QCOMPARE(catalogFit(*q, 4096, SystemMemory{}).fit[1], Fit::unknown);
  }

  void listModelShowsFit() {
    CatalogListModel model;
    QVERIFY2(model.error().isEmpty(), qPrintable(model.error()));
    QCOMPARE(model.rowCount(), loadCatalog().value->size());
    const auto c = loadCatalog();
    SystemMemory mem{.totalBytes = 16ull << 30, .availableBytes = 8ull << 30};
    CatalogListModel fixed(*c.value, mem);
    const auto roles = fixed.roleNames();
    auto value = [&](int row, const QByteArray& role) { return fixed.data(fixed.index(row), roles.key(role)); };
    QCOMPARE(value(0, "modelId").toString(), c.value->at(0).id);
    QCOMPARE(fixed.cacheMode(), QStringLiteral("k8"));
    const double k8 = value(0, "kvBytes").toDouble();
    fixed.setCacheMode(QStringLiteral("f16"));
    QVERIFY(value(0, "kvBytes").toDouble() > k8);
    QCOMPARE(value(0, "kvBytes").toDouble(), double(catalogFit(c.value->at(0), 4096, mem).kvBytes[0]));
    QCOMPARE(value(0, "fit").toString(), QStringLiteral("fits"));
    fixed.setContextLength(1 << 30);  // absurd context: nothing fits
    QCOMPARE(value(0, "fit").toString(), QStringLiteral("too_large"));
    fixed.setCacheMode(QStringLiteral("bogus"));
    QCOMPARE(fixed.cacheMode(), QStringLiteral("f16"));
    QCOMPARE(value(0, "description").toString(), c.value->at(0).description);
    QSignalSpy changed(&fixed, &QAbstractItemModel::dataChanged);
    fixed.setLanguage(QStringLiteral("bn"));
    QCOMPARE(changed.size(), 1);
    QCOMPARE(value(0, "description").toString(), c.value->at(0).descriptionBn);
    fixed.setLanguage(QStringLiteral("en"));
    QCOMPARE(value(0, "description").toString(), c.value->at(0).description);
  }

  void meminfo() {
    const SystemMemory m = parseMeminfo("MemTotal:       16318012 kB\nMemFree:  1 kB\nMemAvailable:   9000000 kB\n");
    QCOMPARE(m.totalBytes, 16318012ull * 1024);
    QCOMPARE(m.availableBytes, 9000000ull * 1024);
    QVERIFY(systemMemory().totalBytes > 0);
    QCOMPARE(memoryNeeded(1ull << 30, 0), (1ull << 30) + (256ull << 20));
  }
};

QTEST_GUILESS_MAIN(CatalogTest)
#include "catalog_test.moc"
