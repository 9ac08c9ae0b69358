// Tests of RemoteEngine (the app's remote backend) against a real `alap-cli serve --port 0`
// process on 127.0.0.1 serving tests/e2e's tiny chat model: it connects and names the model,
// streams a reply that equals what a local Engine answers for the same history (greedy), stops
// within one token, runs on the engine thread behind EngineController (Connect from the backend
// settings, the key kept in a user-only file), and turns a wrong model or a closed port into a readable error. Exits 77
// (skipped) when alap-cli is not built.
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QtTest>

#include <QSettings>
#include <QSignalSpy>

#include "controllers/app_settings.h"
#include "core/engine/engine.h"
#include "core/engine/fake_engine.h"
#include "engine/engine_controller.h"
#include "remote/backend_controller.h"
#include "remote/remote_engine.h"
#include "tests/e2e/tiny_chat_model.h"

using alap::app::RemoteConfig;
using alap::app::RemoteEngine;

class RemoteEngineTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    m_model = m_dir.filePath(QStringLiteral("tiny-chat.gguf"));
    alap::e2e::write_tiny_chat_model(m_model.toStdString());
    m_server.setProcessChannelMode(QProcess::SeparateChannels);
    m_server.start(QStringLiteral(ALAP_CLI_PATH),
                   {QStringLiteral("serve"), QStringLiteral("-m"), m_model, QStringLiteral("--port"), QStringLiteral("0"),
                    QStringLiteral("--ctx"), QStringLiteral("256"), QStringLiteral("-t"), QStringLiteral("1")});
    QVERIFY(m_server.waitForStarted(5000));
    QByteArray err;
    QElapsedTimer t;
    t.start();
    while (!err.contains("ready") && t.elapsed() < 15000) {
      m_server.waitForReadyRead(200);
      err += m_server.readAllStandardError();
      QVERIFY2(m_server.state() == QProcess::Running, err.constData());
    }
    const QRegularExpressionMatch m = QRegularExpression(QStringLiteral("listening on (http://127\\.0\\.0\\.1:\\d+)"))
                                          .match(QString::fromUtf8(err));
    QVERIFY2(m.hasMatch(), err.constData());
    QVERIFY2(err.contains("ready"), err.constData());
    m_url = m.captured(1);
  }
  void cleanupTestCase() {
    m_server.terminate();
    m_server.waitForFinished(5000);
  }

  void connectsAndNamesTheModel() {
    RemoteEngine e({m_url, QString(), QString()});
    QVERIFY(!e.is_loaded());
    e.load("remote:", {});
    QVERIFY(e.is_loaded());
    QCOMPARE(QString::fromStdString(e.model_info().name), QStringLiteral("tiny-chat @ ") + QUrl(m_url).authority());
    QCOMPARE(QString::fromStdString(e.model_info().architecture), QStringLiteral("remote"));
    QVERIFY(QString::fromStdString(e.model_info().path.string()).startsWith(QStringLiteral("remote:tiny-chat@")));
    QCOMPARE(e.memory_report().kv_bytes, uint64_t(0));
  }

  void streamsTheSameReplyAsALocalEngineForTheHistory() {
    alap::GenerateRequest req;
    req.system_prompt = "Be brief.";
    req.messages = {{"user", "Hello", {}}, {"assistant", "Hi there", {}}, {"user", "And then?", {}}};
    req.sampling.temperature = 0.0f;
    req.max_tokens = 12;

    alap::Engine local;
    alap::LoadParams p;
    p.n_ctx = 256;
    p.n_threads = 1;
    p.cache_mode_default = true;  // as `alap-cli serve` without --cache
    local.load(m_model.toStdString(), p);
    std::atomic<bool> no{false};
    const alap::GenerateResult expected = local.generate(req, {}, no);
    QVERIFY(!expected.text.empty());

    RemoteEngine e({m_url + QStringLiteral("/v1/"), QStringLiteral("tiny-chat"), QString()});
    e.load("remote:tiny-chat", {});
    std::vector<std::string> chunks;
    const alap::GenerateResult r = e.generate(req, [&](std::string_view s) { chunks.emplace_back(s); }, no);
    QCOMPARE(QString::fromStdString(r.text), QString::fromStdString(expected.text));
    QVERIFY(chunks.size() > 1);  // streamed, not one block
    std::string joined;
    for (const auto& c : chunks) joined += c;
    QCOMPARE(joined, r.text);
    QCOMPARE(r.stats.stop_reason, alap::StopReason::max_tokens);
    QCOMPARE(r.stats.n_generated, chunks.size());

    // A different history gives a different answer: the history is really sent.
    alap::GenerateRequest other = req;
    other.messages = {{"user", "Something else entirely", {}}};
    const alap::GenerateResult o = e.generate(other, {}, no);
    QCOMPARE(QString::fromStdString(o.text), QString::fromStdString(local.generate(other, {}, no).text));
  }

  void stopEndsWithinOneToken() {
    RemoteEngine e({m_url, QString(), QString()});
    e.load("remote:", {});
    alap::GenerateRequest req;
    req.messages = {{"user", "Talk for a long time", {}}};
    req.max_tokens = 200;
    std::atomic<bool> cancel{false};
    int chunks = 0;
    const alap::GenerateResult r = e.generate(req, [&](std::string_view) {
      ++chunks;
      cancel.store(true);
    }, cancel);
    QCOMPARE(r.stats.stop_reason, alap::StopReason::cancelled);
    QCOMPARE(chunks, 1);
    // The server is free again at once.
    std::atomic<bool> no{false};
    req.max_tokens = 3;
    QCOMPARE(e.generate(req, {}, no).stats.n_generated, size_t(3));
  }

  void runsOnTheEngineThreadThroughTheBackendSettings() {
    QSettings qs(m_dir.filePath(QStringLiteral("s.ini")), QSettings::IniFormat);
    alap::app::AppSettings settings(&qs);
    auto remote = std::make_shared<RemoteEngine>();
    alap::app::EngineController engine(
        std::make_unique<alap::app::RoutingEngine>(std::make_unique<alap::FakeEngine>(), remote), &settings);
    const QString keyPath = m_dir.filePath(QStringLiteral("remote_api_key"));
    alap::app::BackendController backend(&qs, remote, &engine, keyPath);
    backend.setRemote(true);
    backend.setUrl(m_url);
    backend.setModel(QStringLiteral("tiny-chat"));
    QVERIFY(backend.setApiKey(QStringLiteral("sk-test")));  // alap-cli serve without --api-key ignores it
    QCOMPARE(QFile::permissions(keyPath) & (QFile::ReadGroup | QFile::ReadOther), QFile::Permissions());
    QVERIFY(!qs.allKeys().join(QLatin1Char(' ')).contains(QStringLiteral("sk-test")));
    QVERIFY(!backend.remoteActive());
    backend.connectRemote();
    QTRY_VERIFY_WITH_TIMEOUT(engine.modelLoaded(), 10000);
    QVERIFY(backend.remoteActive());
    QCOMPARE(engine.modelName(), QStringLiteral("tiny-chat @ ") + QUrl(m_url).authority());
    QVERIFY(engine.modelPath().startsWith(QStringLiteral("remote:tiny-chat@http://127.0.0.1:")));

    QSignalSpy finished(&engine, &alap::app::EngineController::generationFinished);
    QSignalSpy tokens(&engine, &alap::app::EngineController::tokensReady);
    alap::GenerateRequest req;
    req.messages = {{"user", "Hello", {}}};
    req.max_tokens = 5;
    engine.generate(req);
    QVERIFY(finished.wait(10000));
    QVERIFY(tokens.count() >= 1);
    QString streamed;
    for (const auto& t : tokens) streamed += t.at(1).toString();
    QCOMPARE(streamed, finished.at(0).at(1).toString());
    QVERIFY(!streamed.isEmpty());

    // A second key read: a new controller finds the saved key.
    alap::app::BackendController again(&qs, remote, &engine, keyPath);
    QVERIFY(again.hasKey());
    QCOMPARE(again.url(), m_url);
  }

  void errorsAreReadable() {
    RemoteEngine wrongModel({m_url, QStringLiteral("no-such-model"), QString()});
    try {
      wrongModel.load("remote:no-such-model", {});
      QFAIL("no error");
    } catch (const alap::EngineError& err) {
      QVERIFY2(QString::fromUtf8(err.what()).contains(QStringLiteral("does not offer the model 'no-such-model'")), err.what());
      QVERIFY2(QString::fromUtf8(err.what()).contains(QStringLiteral("tiny-chat")), err.what());
    }
    QTcpServer probe;
    QVERIFY(probe.listen(QHostAddress::LocalHost));
    const quint16 closed = probe.serverPort();
    probe.close();
    RemoteEngine refused({QStringLiteral("http://127.0.0.1:%1").arg(closed), QString(), QString()});
    try {
      refused.load("remote:", {});
      QFAIL("no error");
    } catch (const alap::EngineError& err) {
      QVERIFY2(QString::fromUtf8(err.what()).contains(QStringLiteral("refused the connection")), err.what());
    }
    RemoteEngine notHttp({QStringLiteral("ftp://example.org"), QString(), QString()});
    QVERIFY_THROWS_EXCEPTION(alap::EngineError, notHttp.load("remote:", {}));
    QVERIFY_THROWS_EXCEPTION(alap::EngineError, notHttp.generate({}, {}, std::atomic<bool>{false}));
  }

 private:
  QTemporaryDir m_dir;
  QString m_model;
  QProcess m_server;
  QString m_url;
};

int main(int argc, char** argv) {
  if (!QFileInfo::exists(QStringLiteral(ALAP_CLI_PATH))) {
    std::fprintf(stderr, "alap-cli is not built (%s): skipped\n", ALAP_CLI_PATH);
    return 77;
  }
  QCoreApplication app(argc, argv);
  RemoteEngineTest test;
  return QTest::qExec(&test, argc, argv);
}

#include "app_remote_engine_test.moc"
