// Tests of EngineController/EngineWorker on the FakeEngine: the GUI thread never stalls during a
// generation, tokens arrive in coalesced batches, Stop ends within one token, load progress,
// cancel and errors arrive as readable messages.
#include <QElapsedTimer>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

#include "controllers/app_settings.h"
#include "core/engine/fake_engine.h"
#include "engine/engine_controller.h"
#include "engine/engine_worker.h"

using alap::app::AnswerStats;
using alap::app::EngineController;
using alap::app::MemorySample;

namespace {

std::unique_ptr<alap::FakeEngine> fakeEngine(std::string reply, int delayMs, size_t pieceBytes = 1) {
  alap::FakeEngineScript script;
  script.reply = std::move(reply);
  script.piece_bytes = pieceBytes;
  script.piece_delay = std::chrono::milliseconds(delayMs);
  return std::make_unique<alap::FakeEngine>(script);
}

alap::GenerateRequest hello() {
  alap::GenerateRequest r;
  r.messages = {{"user", "Hello", {}}};
  r.max_tokens = 0;
  return r;
}

}  // namespace

class EngineWorkerTest : public QObject {
  Q_OBJECT

 private slots:
  void init() {
    QVERIFY(m_dir.isValid());
    m_qsettings = std::make_unique<QSettings>(m_dir.filePath(QStringLiteral("s.ini")), QSettings::IniFormat);
    m_settings = std::make_unique<alap::app::AppSettings>(m_qsettings.get());
  }

  void loadReportsProgressAndModel() {
    EngineController engine(fakeEngine("hi", 0), m_settings.get());
    QSignalSpy status(&engine, &EngineController::statusChanged);
    QSignalSpy loaded(&engine, &EngineController::modelLoadedChanged);
    engine.loadModel(QStringLiteral("/models/tiny.gguf"));
    QCOMPARE(engine.status(), EngineController::Loading);
    QVERIFY(loaded.wait(5000));
    QCOMPARE(engine.status(), EngineController::Ready);
    QCOMPARE(engine.modelName(), QStringLiteral("fake tiny.gguf"));
    QCOMPARE(engine.loadProgress(), 1.0);
    QCOMPARE(m_settings->lastModelPath(), QStringLiteral("/models/tiny.gguf"));
    QVERIFY(engine.errorText().isEmpty());
  }

  void loadFailureIsAReadableMessage() {
    alap::FakeEngineScript script;
    script.fail_load = "not a GGUF file (bad magic)";
    EngineController engine(std::make_unique<alap::FakeEngine>(script), m_settings.get());
    QSignalSpy error(&engine, &EngineController::errorTextChanged);
    engine.loadModel(QStringLiteral("/models/bad.gguf"));
    QTRY_COMPARE_WITH_TIMEOUT(engine.errorText(), QStringLiteral("/models/bad.gguf: not a GGUF file (bad magic)"), 5000);
    QCOMPARE(engine.status(), EngineController::NoModel);
  }

  // The GUI thread keeps running its 5 ms timer while a long answer streams: the longest gap
  // between ticks stays under 50 ms, and the text arrives in at most ~30 batches a second.
  void guiThreadNeverStalls() {
    const std::string reply(600, 'a');  // 600 one-byte tokens, 1 ms each: ~0.6 s of streaming
    EngineController engine(fakeEngine(reply, 1), m_settings.get());
    QSignalSpy loaded(&engine, &EngineController::modelLoadedChanged);
    engine.loadModel(QStringLiteral("/m/x.gguf"));
    QVERIFY(loaded.wait(5000));

    QString streamed;
    int batches = 0;
    qint64 samples = 0;
    connect(&engine, &EngineController::tokensReady, this,
            [&](quint64, const QString& text, const QList<MemorySample>& s) {
              streamed += text;
              ++batches;
              samples += s.size();
            });
    QSignalSpy finished(&engine, &EngineController::generationFinished);

    QElapsedTimer clock;
    qint64 last = 0;
    qint64 maxGap = 0;
    QTimer tick;
    tick.setInterval(5);
    tick.setTimerType(Qt::PreciseTimer);
    connect(&tick, &QTimer::timeout, this, [&] {
      const qint64 now = clock.elapsed();
      maxGap = std::max(maxGap, now - last);
      last = now;
    });
    clock.start();
    tick.start();
    engine.generate(hello());
    QVERIFY(finished.wait(10000));
    tick.stop();
    const qint64 elapsedMs = clock.elapsed();

    QCOMPARE(streamed, QString::fromStdString(reply));
    const auto stats = finished.at(0).at(2).value<AnswerStats>();
    QCOMPARE(stats.generatedTokens, 600);
    QCOMPARE(stats.stopReason, QStringLiteral("eog"));
    QCOMPARE(samples, 601);  // one memory report after prefill and one per token
    QVERIFY2(maxGap < 50, qPrintable(QStringLiteral("longest GUI stall %1 ms").arg(maxGap)));
    // At most one batch per 33 ms, plus the final flush.
    QVERIFY2(batches <= elapsedMs / alap::app::EngineWorker::kBatchIntervalMs + 2,
             qPrintable(QStringLiteral("%1 batches in %2 ms").arg(batches).arg(elapsedMs)));
    QVERIFY(batches >= 2);
    QCOMPARE(engine.status(), EngineController::Ready);
  }

  // Stop ends the answer within one token of the request.
  void stopEndsWithinOneToken() {
    const std::string reply(2000, 'b');
    EngineController engine(fakeEngine(reply, 2), m_settings.get());
    QSignalSpy loaded(&engine, &EngineController::modelLoadedChanged);
    engine.loadModel(QStringLiteral("/m/x.gguf"));
    QVERIFY(loaded.wait(5000));
    QString streamed;
    connect(&engine, &EngineController::tokensReady, this,
            [&](quint64, const QString& text, const QList<MemorySample>&) { streamed += text; });
    QSignalSpy finished(&engine, &EngineController::generationFinished);
    engine.generate(hello());
    QTRY_VERIFY_WITH_TIMEOUT(streamed.size() >= 20, 5000);
    QElapsedTimer sinceStop;
    sinceStop.start();
    engine.stop();
    QVERIFY(finished.wait(5000));
    QVERIFY2(sinceStop.elapsed() < 100, qPrintable(QString::number(sinceStop.elapsed())));
    const auto stats = finished.at(0).at(2).value<AnswerStats>();
    QCOMPARE(stats.stopReason, QStringLiteral("cancelled"));
    QVERIFY(stats.generatedTokens < 2000);
    QCOMPARE(finished.at(0).at(1).toString().size(), qsizetype(stats.generatedTokens));
  }

  void generateErrorIsReported() {
    alap::FakeEngineScript script;
    script.fail_generate = "the prompt does not fit the context (5000 > 4096 tokens)";
    EngineController engine(std::make_unique<alap::FakeEngine>(script), m_settings.get());
    QSignalSpy loaded(&engine, &EngineController::modelLoadedChanged);
    engine.loadModel(QStringLiteral("/m/x.gguf"));
    QVERIFY(loaded.wait(5000));
    QSignalSpy failed(&engine, &EngineController::generationFailed);
    engine.generate(hello());
    QVERIFY(failed.wait(5000));
    QVERIFY(failed.at(0).at(1).toString().contains(QStringLiteral("does not fit the context")));
    QCOMPARE(engine.status(), EngineController::Ready);
  }

 private:
  QTemporaryDir m_dir;
  std::unique_ptr<QSettings> m_qsettings;
  std::unique_ptr<alap::app::AppSettings> m_settings;
};

QTEST_GUILESS_MAIN(EngineWorkerTest)
#include "app_engine_worker_test.moc"
