// Tests of ModelsController (the Models page's wiring) against the in-process HTTP server of
// tests/app/download on 127.0.0.1: a catalog download asks the tree API for the LFS SHA-256 and
// enqueues the resolve URL into the models folder; the file arrives verified; the download row is
// saved in SQLite through StoreWorker and restored by a new controller; a row a killed app left
// "running" resumes from its .part with a Range request; search, file groups, the token file.
#include <QCryptographicHash>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "controllers/app_settings.h"
#include "controllers/models_controller.h"
#include "download/catalog_list_model.h"
#include "download/download_engine.h"
#include "download/download_list_model.h"
#include "download/hf_api.h"
#include "store/store_worker.h"
#include "test_http_server.h"

using alap::app::ModelsController;
namespace dl = alap::download;

namespace {

dl::CatalogListModel* oneEntryCatalog() {
  dl::CatalogEntry e;
  e.id = QStringLiteral("tiny");
  e.name = QStringLiteral("Tiny");
  e.repository = QStringLiteral("owner/tiny-GGUF");
  e.file = QStringLiteral("tiny-Q4_K_M.gguf");
  e.sizeBytes = 4096;
  e.quantization = QStringLiteral("Q4_K_M");
  e.architecture = QStringLiteral("llama");
  e.parameters = QStringLiteral("0.1B");
  e.license = QStringLiteral("apache-2.0");
  e.languages = {QStringLiteral("en"), QStringLiteral("bn")};
  e.bengali = true;
  e.contextLength = 2048;
  e.nLayer = 2;
  e.nHeadKv = 1;
  e.headDim = 16;
  dl::SystemMemory mem;
  mem.totalBytes = 16ull << 30;
  mem.availableBytes = 8ull << 30;
  return new dl::CatalogListModel({e}, mem);
}

}  // namespace

class ModelsControllerTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    QVERIFY(m_server.start());
    m_body = QByteArray(4096, 'x');
    for (int i = 0; i < m_body.size(); ++i) m_body[i] = char((i * 131 + 7) & 0xff);
    m_sha = QString::fromLatin1(QCryptographicHash::hash(m_body, QCryptographicHash::Sha256).toHex());
    const QByteArray tree = QStringLiteral(
        R"([{"type":"file","path":"README.md","size":10},)"
        R"({"type":"file","path":"tiny-Q4_K_M.gguf","size":4096,"lfs":{"oid":"%1","size":4096}},)"
        R"({"type":"file","path":"tiny-Q8_0.gguf","size":8192,"lfs":{"oid":"%1","size":8192}},)"
        R"({"type":"file","path":"tiny-IQ2_XXS.gguf","size":2048,"lfs":{"oid":"%1","size":2048}}])").arg(m_sha).toUtf8();
    auto& t = m_server.route("/api/models/owner/tiny-GGUF/tree/main");
    t.body = tree;
    t.contentType = "application/json";
    m_server.route("/owner/tiny-GGUF/resolve/main/tiny-Q4_K_M.gguf").body = m_body;
    auto& s = m_server.route("/api/models");
    s.body = R"([{"id":"owner/tiny-GGUF","downloads":1234,"likes":56,"tags":["gguf"]}])";
    s.contentType = "application/json";
  }

  void catalogDownloadEnqueuesVerifiedFileAndPersists() {
    QSettings qs(m_dir.filePath(QStringLiteral("s.ini")), QSettings::IniFormat);
    alap::app::AppSettings settings(&qs);
    const QString models = m_dir.filePath(QStringLiteral("models"));
    settings.setModelsFolder(models);
    alap::app::StoreWorker store;
    store.open(m_dir.filePath(QStringLiteral("h.db")));
    {
      ModelsController::Parts parts;
      parts.catalog = oneEntryCatalog();
      parts.endpoint = m_server.base();
      parts.tokenPath = m_dir.filePath(QStringLiteral("token"));
      ModelsController c(&settings, &store, parts);
      QCOMPARE(c.catalogModel()->rowCount(), 1);
      QSignalSpy finished(c.downloadEngine(), &dl::DownloadEngine::finished);
      c.downloadCatalog(0);
      QVERIFY(finished.wait(10000));
      const QString url = m_server.base() + QStringLiteral("/owner/tiny-GGUF/resolve/main/tiny-Q4_K_M.gguf");
      QCOMPARE(finished.at(0).at(0).toString(), url);
      QCOMPARE(finished.at(0).at(1).toString(), models + QStringLiteral("/tiny-Q4_K_M.gguf"));
      QCOMPARE(finished.at(0).at(2).toString(), m_sha);
      const auto info = c.downloadEngine()->info(url);
      QVERIFY(info.has_value());
      QVERIFY(info->verified);
      QCOMPARE(info->sha256, m_sha);
      QFile f(models + QStringLiteral("/tiny-Q4_K_M.gguf"));
      QVERIFY(f.open(QIODevice::ReadOnly));
      QCOMPARE(f.readAll(), m_body);
      QVERIFY(!m_server.requestsFor("/api/models/owner/tiny-GGUF/tree/main").isEmpty());
    }
    // The row reached SQLite, and a new controller restores it.
    std::vector<alap::store::Download> rows;
    bool got = false;
    store.post([](alap::store::Store& s) { return s.list_downloads(); }, this,
               [&](std::vector<alap::store::Download> r) { rows = std::move(r); got = true; });
    QTRY_VERIFY_WITH_TIMEOUT(got, 5000);
    QCOMPARE(int(rows.size()), 1);
    QCOMPARE(QString::fromStdString(rows[0].sha256), m_sha);
    QCOMPARE(rows[0].status, alap::store::DownloadStatus::done);
    ModelsController::Parts parts;
    parts.catalog = oneEntryCatalog();
    parts.endpoint = m_server.base();
    parts.tokenPath = m_dir.filePath(QStringLiteral("token"));
    ModelsController again(&settings, &store, parts);
    QTRY_COMPARE_WITH_TIMEOUT(again.downloadsModel()->rowCount(), 1, 5000);
    const QModelIndex i = again.downloadsModel()->index(0);
    QCOMPARE(i.data(dl::DownloadListModel::StateRole).toString(), QStringLiteral("done"));
  }

  void restartResumesAPersistedDownloadFromItsPart() {
    QSettings qs(m_dir.filePath(QStringLiteral("r.ini")), QSettings::IniFormat);
    alap::app::AppSettings settings(&qs);
    const QString models = m_dir.filePath(QStringLiteral("resume"));
    QVERIFY(QDir().mkpath(models));
    settings.setModelsFolder(models);
    m_server.route("/owner/tiny-GGUF/resolve/main/part.gguf").body = m_body;
    const QString url = m_server.base() + QStringLiteral("/owner/tiny-GGUF/resolve/main/part.gguf");
    const QString path = models + QStringLiteral("/part.gguf");
    // What a killed app left behind: a running row in SQLite and half the bytes in the .part.
    QFile part(path + QStringLiteral(".part"));
    QVERIFY(part.open(QIODevice::WriteOnly));
    part.write(m_body.left(2048));
    part.close();
    alap::app::StoreWorker store;
    store.open(m_dir.filePath(QStringLiteral("r.db")));
    alap::store::Download row;
    row.url = url.toStdString();
    row.path = path.toStdString();
    row.sha256 = m_sha.toStdString();
    row.total_bytes = m_body.size();
    row.done_bytes = 2048;
    row.status = alap::store::DownloadStatus::running;
    store.post([row](alap::store::Store& s) { s.upsert_download(row); });

    ModelsController::Parts parts;
    parts.catalog = oneEntryCatalog();
    parts.endpoint = m_server.base();
    parts.tokenPath = m_dir.filePath(QStringLiteral("token"));
    ModelsController c(&settings, &store, parts);
    QSignalSpy finished(c.downloadEngine(), &dl::DownloadEngine::finished);
    QVERIFY(finished.wait(10000));
    QCOMPARE(finished.at(0).at(0).toString(), url);
    const QList<alap::test::TestHttpServer::Seen> seen = m_server.requestsFor("/owner/tiny-GGUF/resolve/main/part.gguf");
    QCOMPARE(seen.size(), 1);
    QCOMPARE(seen.first().range, QByteArray("bytes=2048-"));
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll(), m_body);
    QVERIFY(!QFile::exists(path + QStringLiteral(".part")));
  }

  void searchListsRepositoriesAndGroups() {
    ModelsController::Parts parts;
    parts.catalog = oneEntryCatalog();
    parts.endpoint = m_server.base();
    parts.tokenPath = m_dir.filePath(QStringLiteral("token"));
    ModelsController c(nullptr, nullptr, parts);
    QSignalSpy searched(&c, &ModelsController::searchChanged);
    c.search(QStringLiteral("tiny"));
    QVERIFY(c.searching());
    QTRY_VERIFY_WITH_TIMEOUT(!c.searching(), 5000);
    QCOMPARE(c.searchError(), QString());
    QCOMPARE(c.searchResults().size(), 1);
    const QVariantMap r = c.searchResults().first().toMap();
    QCOMPARE(r.value(QStringLiteral("id")).toString(), QStringLiteral("owner/tiny-GGUF"));
    QCOMPARE(r.value(QStringLiteral("downloads")).toDouble(), 1234.0);
    QCOMPARE(r.value(QStringLiteral("likes")).toDouble(), 56.0);
    c.openRepository(QStringLiteral("owner/tiny-GGUF"));
    QTRY_VERIFY_WITH_TIMEOUT(!c.listingFiles(), 5000);
    const QVariantList groups = c.fileGroups();
    QCOMPARE(groups.size(), 3);  // README.md is not a GGUF file
    QCOMPARE(groups[0].toMap().value(QStringLiteral("quant")).toString(), QStringLiteral("IQ2_XXS"));
    QCOMPARE(groups[0].toMap().value(QStringLiteral("runnable")).toBool(), false);  // a lattice type Alap refuses
    QCOMPARE(groups[1].toMap().value(QStringLiteral("quant")).toString(), QStringLiteral("Q4_K_M"));
    QCOMPARE(groups[1].toMap().value(QStringLiteral("size")).toDouble(), 4096.0);
    QCOMPARE(groups[1].toMap().value(QStringLiteral("runnable")).toBool(), true);
    QCOMPARE(groups[2].toMap().value(QStringLiteral("quant")).toString(), QStringLiteral("Q8_0"));
    // Asked anyway, the unrunnable group downloads nothing and says why.
    QSignalSpy queued(&c, &ModelsController::downloadQueued);
    c.downloadGroup(0);
    QVERIFY(c.notice().contains(QStringLiteral("IQ2_XXS")));
    QCOMPARE(queued.count(), 0);
  }

  void tokenIsWrittenUserOnly() {
    ModelsController::Parts parts;
    parts.catalog = oneEntryCatalog();
    parts.endpoint = m_server.base();
    parts.tokenPath = m_dir.filePath(QStringLiteral("token"));
    ModelsController c(nullptr, nullptr, parts);
    QVERIFY(!c.hasToken());
    QVERIFY(c.setToken(QStringLiteral(" hf_secret ")));
    QVERIFY(c.hasToken());
    QCOMPARE(c.tokenSource(), parts.tokenPath);
    QCOMPARE(QFile::permissions(parts.tokenPath) & (QFile::ReadGroup | QFile::ReadOther | QFile::WriteGroup | QFile::WriteOther),
             QFile::Permissions());
    QVERIFY(c.setToken(QString()));
    QVERIFY(!c.hasToken());
    QVERIFY(!QFile::exists(parts.tokenPath));
  }

 private:
  QTemporaryDir m_dir;
  alap::test::TestHttpServer m_server;
  QByteArray m_body;
  QString m_sha;
};

QTEST_MAIN(ModelsControllerTest)
#include "app_models_controller_test.moc"
