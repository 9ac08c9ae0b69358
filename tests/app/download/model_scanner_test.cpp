// The installed-models scanner: a valid tiny llama GGUF (made with gguf::Writer) with its figures,
// a GGUF of an architecture Alap does not run, a file that is not GGUF, each with its reason;
// the scan runs off the calling thread; removal.
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include "core/gguf/gguf.h"
#include "download/installed_model_list_model.h"
#include "download/model_scanner.h"

using namespace alap::download;
namespace gguf = alap::gguf;

namespace {

// A llama model: 2 layers, E=64, 4 heads (head_dim 16), 2 KV heads, vocabulary 8, f32 weights.
void writeTinyModel(const QString& path, const std::string& arch, int fileType) {
  gguf::Writer w;
  const std::string A = arch + ".";
  w.set("general.architecture", gguf::Value::string(arch));
  w.set("general.name", gguf::Value::string("tiny"));
  if (fileType >= 0) w.set("general.file_type", gguf::Value::u32(uint32_t(fileType)));
  w.set(A + "context_length", gguf::Value::u32(2048));
  w.set(A + "embedding_length", gguf::Value::u32(64));
  w.set(A + "block_count", gguf::Value::u32(2));
  w.set(A + "feed_forward_length", gguf::Value::u32(96));
  w.set(A + "attention.head_count", gguf::Value::u32(4));
  w.set(A + "attention.head_count_kv", gguf::Value::u32(2));
  w.set(A + "attention.layer_norm_rms_epsilon", gguf::Value::f32(1e-5f));
  w.set(A + "rope.dimension_count", gguf::Value::u32(16));
  w.set("tokenizer.ggml.model", gguf::Value::string("llama"));
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>", "a", "b", "c", "d", "e"};
  w.set("tokenizer.ggml.tokens", gguf::Value::array_of_strings(tokens));
  auto add = [&](const std::string& name, std::vector<int64_t> ne) {
    int64_t n = 1;
    for (int64_t d : ne) n *= d;
    std::vector<uint8_t> bytes(size_t(n) * 4, 0);
    w.add_tensor(name, alap::kernels::DType::f32, ne, bytes);
  };
  add("token_embd.weight", {64, 8});
  add("output_norm.weight", {64});
  add("output.weight", {64, 8});
  for (int l = 0; l < 2; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    add(b + "attn_norm.weight", {64});
    add(b + "attn_q.weight", {64, 64});
    add(b + "attn_k.weight", {64, 32});
    add(b + "attn_v.weight", {64, 32});
    add(b + "attn_output.weight", {64, 64});
    add(b + "ffn_norm.weight", {64});
    add(b + "ffn_gate.weight", {64, 96});
    add(b + "ffn_up.weight", {64, 96});
    add(b + "ffn_down.weight", {96, 64});
  }
  w.write_file(QFile::encodeName(path).toStdString());
}

}  // namespace

class ModelScannerTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir m_dir;

 private slots:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    writeTinyModel(m_dir.filePath(QStringLiteral("a-tiny.gguf")), "llama", 15);
    writeTinyModel(m_dir.filePath(QStringLiteral("b-phi.gguf")), "phi3", -1);
    QFile bad(m_dir.filePath(QStringLiteral("c-broken.gguf")));
    QVERIFY(bad.open(QIODevice::WriteOnly));
    bad.write("GGUF\x03\x00\x00\x00 this is not a model");
    bad.close();
    QFile other(m_dir.filePath(QStringLiteral("notes.txt")));
    QVERIFY(other.open(QIODevice::WriteOnly));
    other.write("x");
  }

  void scansValidAndInvalidFiles() {
    const SystemMemory mem{.totalBytes = 8ull << 30, .availableBytes = 4ull << 30};
    const QList<InstalledModel> list = ModelScanner::scanFolder(m_dir.path(), 1024, mem);
    QCOMPARE(list.size(), 3);  // notes.txt is not listed

    const InstalledModel& a = list[0];
    QCOMPARE(a.fileName, QStringLiteral("a-tiny.gguf"));
    QVERIFY2(a.valid && a.supported, qPrintable(a.error));
    QCOMPARE(a.architecture, QStringLiteral("llama"));
    QCOMPARE(a.name, QStringLiteral("tiny"));
    const qint64 perLayer = 64 + 64 * 64 + 2 * 64 * 32 + 64 * 64 + 64 + 3 * 64 * 96;
    QCOMPARE(a.nParams, 2 * 64 * 8 + 64 + 2 * perLayer);
    QCOMPARE(a.quantization, QStringLiteral("Q4_K_M"));  // general.file_type 15
    QCOMPARE(a.contextLength, 2048);
    QCOMPARE(a.fileSize, QFileInfo(m_dir.filePath(QStringLiteral("a-tiny.gguf"))).size());
    QCOMPARE(a.ctx, 1024u);
    // 2 layers x 2 KV heads x 1024 tokens, head_dim 16 (a block of 16): f16 2x32 bytes;
    // k8 K = 16 + 2 bytes; k8v8 both.
    const uint64_t vectors = 2ull * 2 * 1024;
    QCOMPARE(a.kvBytes[0], vectors * 64);
    QCOMPARE(a.kvBytes[1], vectors * (18 + 32));
    QCOMPARE(a.kvBytes[2], vectors * 36);
    QCOMPARE(a.fit[0], Fit::fits);

    const InstalledModel& b = list[1];
    QVERIFY(b.valid);
    QVERIFY(!b.supported);
    QCOMPARE(b.architecture, QStringLiteral("phi3"));
    QVERIFY2(b.error.contains(QStringLiteral("cannot run")) && b.error.contains(QStringLiteral("phi3")), qPrintable(b.error));
    QCOMPARE(b.quantization, QStringLiteral("F32"));  // the dominant tensor type
    QCOMPARE(b.kvBytes[0], 0u);

    const InstalledModel& c = list[2];
    QVERIFY(!c.valid);
    QVERIFY(!c.error.isEmpty());
    QVERIFY2(c.error.contains(QStringLiteral("c-broken.gguf")), qPrintable(c.error));
  }

  void scanRunsOffThisThread() {
    ModelScanner scanner;
    QSignalSpy done(&scanner, &ModelScanner::scanFinished);
    scanner.scan(m_dir.path(), 0);  // 0: the trained context (2048), capped at 8192
    QVERIFY(scanner.isScanning());
    QVERIFY(done.wait(10000));
    QVERIFY(!scanner.isScanning());
    const auto list = done.first().at(1).value<QList<InstalledModel>>();
    QCOMPARE(list.size(), 3);
    QCOMPARE(list[0].ctx, 2048u);
  }

  void listModel() {
    InstalledModelListModel model;
    QSignalSpy scanned(&model, &InstalledModelListModel::scanned);
    model.setContextLength(1024);
    model.setFolder(m_dir.path());
    QVERIFY(scanned.wait(10000));
    QCOMPARE(model.count(), 3);
    const auto roles = model.roleNames();
    auto value = [&](int row, const QByteArray& role) { return model.data(model.index(row), roles.key(role)); };
    QCOMPARE(value(0, "fileName").toString(), QStringLiteral("a-tiny.gguf"));
    QCOMPARE(value(0, "kvBytes").toDouble(), double(2 * 2 * 1024 * 50));  // k8 by default
    model.setCacheMode(QStringLiteral("f16"));
    QCOMPARE(value(0, "kvBytes").toDouble(), double(2 * 2 * 1024 * 64));
    QCOMPARE(value(2, "valid").toBool(), false);
    QVERIFY(!value(2, "error").toString().isEmpty());
  }

  void fileTypeNames() {
    QCOMPARE(fileTypeName(15), QStringLiteral("Q4_K_M"));
    QCOMPARE(fileTypeName(30), QStringLiteral("IQ4_XS"));
    QCOMPARE(fileTypeName(999), QString());
  }

  void removesAModel() {
    const QString p = m_dir.filePath(QStringLiteral("z.gguf"));
    QFile f(p);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.close();
    QString error;
    QVERIFY(QDir().mkpath(m_dir.filePath(QStringLiteral("xdg-data"))));
    qputenv("XDG_DATA_HOME", QFile::encodeName(m_dir.filePath(QStringLiteral("xdg-data"))));
    QVERIFY2(ModelScanner::removeModel(p, &error), qPrintable(error));
    QVERIFY(!QFile::exists(p));
    QVERIFY(!ModelScanner::removeModel(p, &error));
    QVERIFY(error.contains(QStringLiteral("not a file")));
  }
};

QTEST_GUILESS_MAIN(ModelScannerTest)
#include "model_scanner_test.moc"
