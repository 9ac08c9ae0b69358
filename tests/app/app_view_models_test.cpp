// View-model tests: every model checked by QAbstractItemModelTester while it changes; signals
// checked with QSignalSpy; Markdown fence splitting; MemoryMeter numbers in Bengali digits.
#include <QAbstractItemModelTester>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "controllers/app_settings.h"
#include "controllers/memory_meter.h"
#include "models/conversation_list_model.h"
#include "models/markdown_blocks.h"
#include "models/message_list_model.h"
#include "models/model_file_list_model.h"
#include "models/search_result_model.h"

using namespace alap::app;
namespace st = alap::store;

namespace {

st::Message message(st::Id id, const char* role, const char* content, st::MessageStatus status = st::MessageStatus::complete) {
  st::Message m;
  m.id = id;
  m.conversation_id = 1;
  m.role = role;
  m.content = content;
  m.status = status;
  return m;
}

st::Conversation conversation(st::Id id, const char* title, bool pinned = false) {
  st::Conversation c;
  c.id = id;
  c.title = title;
  c.pinned = pinned;
  c.updated_at = 1700000000000 + id;
  return c;
}

}  // namespace

class ViewModelsTest : public QObject {
  Q_OBJECT

 private slots:
  void markdownSplitsFencedCode() {
    const auto blocks = splitMarkdown(QStringLiteral("# Title\nSome *text*.\n```python\nprint(1)\n\nx = 2\n```\nAfter.\n"));
    QCOMPARE(blocks.size(), 3);
    QCOMPARE(blocks[0], (MarkdownBlock{MarkdownBlock::Prose, QStringLiteral("# Title\nSome *text*."), {}, true}));
    QCOMPARE(blocks[1], (MarkdownBlock{MarkdownBlock::Code, QStringLiteral("print(1)\n\nx = 2"), QStringLiteral("python"), true}));
    QCOMPARE(blocks[2], (MarkdownBlock{MarkdownBlock::Prose, QStringLiteral("After."), {}, true}));
  }

  void markdownKeepsAnUnclosedFenceOpen() {
    const auto blocks = splitMarkdown(QStringLiteral("Here:\n~~~~ c++ extra\nint x;\n```\nstill code"));
    QCOMPARE(blocks.size(), 2);
    QCOMPARE(blocks[1].kind, MarkdownBlock::Code);
    QCOMPARE(blocks[1].language, QStringLiteral("c++"));
    QCOMPARE(blocks[1].text, QStringLiteral("int x;\n```\nstill code"));  // ``` cannot close ~~~~
    QCOMPARE(blocks[1].closed, false);
    QCOMPARE(splitMarkdown(QStringLiteral("``not a fence``")).size(), 1);
    QCOMPARE(splitMarkdown(QString()).size(), 0);
  }

  void messageModelStreamsAndTruncates() {
    MessageListModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy count(&model, &MessageListModel::countChanged);
    model.setMessages({message(1, "system", "be brief"), message(2, "user", "বাংলা?"), message(3, "assistant", "হ্যাঁ")});
    QCOMPARE(model.rowCount(), 2);  // the system message is not shown
    QCOMPARE(model.data(model.index(0), MessageListModel::ContentRole).toString(), QStringLiteral("বাংলা?"));
    QCOMPARE(model.data(model.index(1), MessageListModel::IsLastRole).toBool(), true);

    const int row = model.append({0, QStringLiteral("assistant"), {}, QStringLiteral("streaming"), {}, {}, {}});
    QCOMPARE(row, 2);
    QCOMPARE(model.data(model.index(1), MessageListModel::IsLastRole).toBool(), false);
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    model.appendText(row, QStringLiteral("```py\nx"));
    model.appendText(row, QStringLiteral(" = 1\n```"));
    QCOMPARE(changed.size(), 2);
    const QVariantList blocks = model.data(model.index(row), MessageListModel::BlocksRole).toList();
    QCOMPARE(blocks.size(), 1);
    QCOMPARE(blocks[0].toMap().value(QStringLiteral("text")).toString(), QStringLiteral("x = 1"));
    QCOMPARE(model.data(model.index(row), MessageListModel::StreamingRole).toBool(), true);
    model.setStatus(row, QStringLiteral("stopped"));
    QCOMPARE(model.data(model.index(row), MessageListModel::StreamingRole).toBool(), false);

    model.truncateAfter(0);
    QCOMPARE(model.rowCount(), 1);
    QCOMPARE(model.rowOfId(2), 0);
    QCOMPARE(model.rowOfId(3), -1);
    QVERIFY(count.size() >= 3);
  }

  void statsAreFormattedInTheLocale() {
    QLocale::setDefault(QLocale(QStringLiteral("en_US")));
    const QString json = QStringLiteral(R"({"tokens":1234,"tokens_per_s":14.25,"ttft_ms":310,"cache_mode":"k8"})");
    QCOMPARE(MessageListModel::formatStats(json), QStringLiteral("1,234 tokens · 14.3 tokens/s · first token 0.31 s · k8"));
    QLocale::setDefault(QLocale(QStringLiteral("bn_BD")));
    const QString bn = MessageListModel::formatStats(json);
    QVERIFY2(bn.contains(QStringLiteral("১,২৩৪")), qPrintable(bn));
    QVERIFY2(bn.contains(QStringLiteral("১৪.৩")), qPrintable(bn));
    QLocale::setDefault(QLocale::c());
    QCOMPARE(MessageListModel::formatStats(QStringLiteral("{}")), QString());
  }

  void conversationModelKeepsRowsWhenOnlyDataChanges() {
    ConversationListModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setConversations({conversation(7, "Pinned", true), conversation(3, "Trip")});
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.idAt(1), 3);
    QCOMPARE(model.data(model.index(0), ConversationListModel::PinnedRole).toBool(), true);
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    model.setConversations({conversation(7, "Pinned", true), conversation(3, "Trip to Sylhet")});
    QCOMPARE(reset.size(), 0);
    QCOMPARE(changed.size(), 1);
    QCOMPARE(model.titleOf(3), QStringLiteral("Trip to Sylhet"));
    model.setConversations({conversation(3, "Trip to Sylhet")});
    QCOMPARE(reset.size(), 1);
    QCOMPARE(model.rowOfId(7), -1);
    QCOMPARE(model.idAt(5), 0);
  }

  void searchSnippetsAreEscapedAndMarked() {
    SearchResultModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    st::SearchHit hit;
    hit.conversation_id = 4;
    hit.message_id = 9;
    hit.conversation_title = "চা";
    hit.snippet = std::string("a <b> ") + SearchResultModel::kOpenMark + "বাংলা" + SearchResultModel::kCloseMark + " text";
    model.setHits({hit});
    QCOMPARE(model.rowCount(), 1);
    QCOMPARE(model.data(model.index(0), SearchResultModel::SnippetRole).toString(),
             QStringLiteral("a &lt;b&gt; <b>বাংলা</b> text"));
    QCOMPARE(model.data(model.index(0), SearchResultModel::MessageIdRole).toLongLong(), 9);
  }

  void modelFilesListsGgufOnly() {
    QTemporaryDir dir;
    for (const char* name : {"b.gguf", "a.gguf", "notes.txt"}) {
      QFile f(dir.filePath(QString::fromLatin1(name)));
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write("GGUF");
    }
    ModelFileListModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy scanned(&model, &ModelFileListModel::scanned);
    model.setFolder(dir.path());
    QVERIFY(scanned.wait(5000));
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.data(model.index(0), ModelFileListModel::NameRole).toString(), QStringLiteral("a.gguf"));
    QCOMPARE(model.pathAt(1), dir.filePath(QStringLiteral("b.gguf")));
  }

  void memoryMeterUsesBengaliDigits() {
    MemoryMeter meter{QLocale(QStringLiteral("bn_BD"))};
    alap::ModelInfo info;
    info.n_layer = 2;
    info.n_head_kv = 2;
    info.head_dim = 64;
    info.n_ctx = 4096;
    info.cache_mode = alap::CacheMode::k8;
    info.weights_bytes = 1536 * 1024;
    meter.setModel(info);
    alap::MemoryReport r;
    r.kv_fp16_bytes = 2 * 1024 * 1024;
    r.k_bytes = 544 * 1024;
    r.v_bytes = 1024 * 1024;
    r.kv_bytes = r.k_bytes + r.v_bytes;
    r.weights_bytes = info.weights_bytes;
    r.device_free_bytes = 1024ull * 1024 * 1024;
    QSignalSpy changed(&meter, &MemoryMeter::changed);
    meter.setReport(r);
    QCOMPARE(changed.size(), 1);
    QCOMPARE(meter.kFp16Text(), QLocale(QStringLiteral("bn_BD")).formattedDataSize(1024 * 1024, 1, QLocale::DataSizeIecFormat));
    QVERIFY2(meter.kFp16Text().contains(QStringLiteral("১")), qPrintable(meter.kFp16Text()));
    QCOMPARE(meter.kvFraction(), double(r.kv_bytes) / double(r.kv_fp16_bytes));
    // f16: 2 layers * 2 heads * 64 * 2 bytes * 2 (K and V) = 1024 bytes a token.
    QCOMPARE(meter.bytesPerToken(alap::CacheMode::f16), 1024.0);
    QVERIFY(meter.bytesPerToken(alap::CacheMode::k8) < 1024.0);
    QVERIFY(meter.bytesPerToken(alap::CacheMode::k8v8) < meter.bytesPerToken(alap::CacheMode::k8));
    const QVariantList capacity = meter.modeCapacity();
    QCOMPARE(capacity.size(), 3);
    QCOMPARE(capacity[1].toMap().value(QStringLiteral("current")).toBool(), true);

    QSignalSpy plot(&meter, &MemoryMeter::plotChanged);
    QList<MemorySample> samples;
    for (int i = 0; i < 1200; ++i) samples.append({i, quint64(i) * 1024, quint64(i) * 800});
    meter.addSamples(samples);
    QCOMPARE(plot.size(), 1);
    QVERIFY(meter.fp16Points().size() <= MemoryMeter::kMaxPlotPoints);
    QCOMPARE(meter.fp16Points().last(), QPointF(1199, 1199 * 1024));
    QCOMPARE(meter.plotMaxTokens(), 1199.0);

    meter.setContextUse(3900, 4096);
    QVERIFY(meter.contextWarning());
    QVERIFY2(meter.contextText().contains(QStringLiteral("৩,৯০০")), qPrintable(meter.contextText()));
  }

  void memoryMeterSaysWhereTheModelRuns() {
    MemoryMeter meter{QLocale(QLocale::English)};
    alap::ModelInfo info;
    info.n_layer = 24;
    info.n_head_kv = 2;
    info.head_dim = 64;
    info.n_ctx = 4096;
    info.n_threads = 2;
    meter.setModel(info);  // CPU, GPU not requested
    QCOMPARE(meter.backendText(), QStringLiteral("CPU · 2 threads"));
    QCOMPARE(meter.backendNote(), QString());
    QCOMPARE(meter.freeLabel(), QStringLiteral("Free system memory"));
    info.cpu_kernels = "AVX-512 VNNI + AMX";  // the engine names its kernels
    meter.setModel(info);
    QCOMPARE(meter.backendText(), QStringLiteral("CPU · 2 threads · AVX-512 VNNI + AMX"));
    info.cpu_kernels.clear();

    info.gpu_status = alap::ModelInfo::GpuStatus::no_device;  // auto found no device
    meter.setModel(info);
    QCOMPARE(meter.backendText(), QStringLiteral("CPU · 2 threads"));
    QVERIFY2(meter.backendNote().contains(QStringLiteral("No usable GPU")), qPrintable(meter.backendNote()));

    info.gpu_status = alap::ModelInfo::GpuStatus::other_version;  // a library of another Alap
    meter.setModel(info);
    QVERIFY2(meter.backendNote().contains(QStringLiteral("another version of Alap")), qPrintable(meter.backendNote()));

    info.gpu_status = alap::ModelInfo::GpuStatus::used;
    info.backend = "NVIDIA H200";
    info.gpu_layers = 16;
    meter.setModel(info);
    QCOMPARE(meter.backendText(), QStringLiteral("GPU NVIDIA H200 · 16 of 24 layers"));
    QCOMPARE(meter.backendNote(), QString());
    QCOMPARE(meter.freeLabel(), QStringLiteral("Free GPU memory"));

    // On the GPU: why long prompts do not take the vendor BLAS, where people can act on it.
    info.gpu_blas_name = "cuBLAS";
    const struct {
      alap::GpuBlasUse use;
      const char* says;  // nullptr: no note
    } blas[] = {{alap::GpuBlasUse::used, nullptr},
                {alap::GpuBlasUse::not_found, "cuBLAS was not found"},
                {alap::GpuBlasUse::unusable, "cuBLAS failed Alap's check"},
                {alap::GpuBlasUse::no_memory, "cuBLAS's workspace"},
                {alap::GpuBlasUse::not_built, "no vendor BLAS"},
                {alap::GpuBlasUse::off, nullptr},
                {alap::GpuBlasUse::short_batches, nullptr}};
    for (const auto& c : blas) {
      info.gpu_blas = c.use;
      meter.setModel(info);
      if (c.says == nullptr) {
        QCOMPARE(meter.backendNote(), QString());
      } else {
        QVERIFY2(meter.backendNote().contains(QString::fromUtf8(c.says)), qPrintable(meter.backendNote()));
      }
    }
    info.gpu_blas_name.clear();  // a library that names none
    info.gpu_blas = alap::GpuBlasUse::not_found;
    meter.setModel(info);
    QVERIFY2(meter.backendNote().startsWith(QStringLiteral("BLAS was not found")), qPrintable(meter.backendNote()));
    info.gpu_blas = alap::GpuBlasUse::used;

    MemoryMeter bn{QLocale(QStringLiteral("bn_BD"))};
    bn.setModel(info);
    QVERIFY2(bn.backendText().contains(QStringLiteral("১৬")), qPrintable(bn.backendText()));
  }

  void settingsAreClampedAndPersisted() {
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("s.ini"));
    {
      QSettings qs(file, QSettings::IniFormat);
      AppSettings s(&qs);
      QSignalSpy sampling(&s, &AppSettings::samplingChanged);
      s.setTemperature(7.0);
      QCOMPARE(s.temperature(), 2.0);
      s.setTopK(-3);
      QCOMPARE(s.topK(), 0);
      // Unset: automatic (the engine picks k8 where the model can pack it); estimates assume k8.
      QCOMPARE(s.cacheMode(), QStringLiteral("auto"));
      QVERIFY(s.loadParams().cache_mode_default);
      QCOMPARE(s.estimateCacheMode(), QStringLiteral("k8"));
      QCOMPARE(s.cacheModeLabels().size(), s.cacheModes().size());
      s.setCacheMode(QStringLiteral("q4"));
      QCOMPARE(s.cacheMode(), QStringLiteral("auto"));
      s.setCacheMode(QStringLiteral("k8v8"));
      QVERIFY(!s.loadParams().cache_mode_default);
      QCOMPARE(s.estimateCacheMode(), QStringLiteral("k8v8"));
      QCOMPARE(sampling.size(), 2);
    }
    QSettings qs(file, QSettings::IniFormat);
    AppSettings s(&qs);
    QCOMPARE(s.temperature(), 2.0);
    QCOMPARE(s.loadParams().cache_mode, alap::CacheMode::k8v8);
    QCOMPARE(s.samplerParams().top_k, 0);
  }

  // GPU layers: Auto (-1) by default, CPU only (0) or a number; out-of-range values are clamped,
  // a damaged stored value reads as Auto, and the value reaches LoadParams and the answer's settings.
  void gpuLayersOfferAutoCpuOrANumber() {
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("s.ini"));
    {
      QSettings qs(file, QSettings::IniFormat);
      AppSettings s(&qs);
      QCOMPARE(s.gpuLayers(), -1);
      QCOMPARE(s.gpuLayersChoice(), 0);
      QCOMPARE(s.loadParams().gpu_layers, -1);
      QSignalSpy changed(&s, &AppSettings::loadSettingsChanged);
      s.setGpuLayersChoice(1);
      QCOMPARE(s.gpuLayers(), 0);
      QCOMPARE(s.gpuLayersChoice(), 1);
      s.setGpuLayersChoice(2);  // a number: 32 the first time
      QCOMPARE(s.gpuLayers(), 32);
      QCOMPARE(s.gpuLayersChoice(), 2);
      s.setGpuLayers(20);
      s.setGpuLayersChoice(0);
      QCOMPARE(s.gpuLayers(), -1);
      s.setGpuLayersChoice(2);  // the last number comes back
      QCOMPARE(s.gpuLayers(), 20);
      s.setGpuLayersChoice(7);  // not a choice: nothing changes
      QCOMPARE(s.gpuLayers(), 20);
      QCOMPARE(changed.size(), 5);
      s.setGpuLayers(5000);
      QCOMPARE(s.gpuLayers(), AppSettings::kMaxGpuLayers);
      s.setGpuLayers(-7);
      QCOMPARE(s.gpuLayers(), -1);
      s.setGpuLayers(12);
      QVERIFY(s.settingsJson().contains(QStringLiteral("\"gpu_layers\":12")));
    }
    {
      QSettings qs(file, QSettings::IniFormat);
      AppSettings s(&qs);
      QCOMPARE(s.gpuLayers(), 12);  // persisted
      QCOMPARE(s.loadParams().gpu_layers, 12);
      qs.setValue(QStringLiteral("load/gpuLayers"), QStringLiteral("lots"));
      QCOMPARE(s.gpuLayers(), -1);
      qs.setValue(QStringLiteral("load/gpuLayers"), -40);
      QCOMPARE(s.gpuLayers(), -1);
      QCOMPARE(s.gpuLayersChoice(), 0);
    }
  }
};

QTEST_GUILESS_MAIN(ViewModelsTest)
#include "app_view_models_test.moc"
