// Crash safety: app_kill_driver (the app's ChatController/StoreWorker stack on a slowly streaming
// FakeEngine) is SIGKILLed at random moments during generation, 25 times with a fixed seed, on the
// same database. After every kill the database is reopened: PRAGMA integrity_check is "ok" and
// every message the driver reported committed is there with its role (answers complete, whole).
// Likewise 10 kills during JSON imports: every import is all there or not there at all.
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <csignal>
#include <map>
#include <random>
#include <string>
#include <vector>
#include <sqlite3.h>

#include "kill_test_reply.h"

class KillTest : public QObject {
  Q_OBJECT

 private slots:
  void survivesRandomKills() {
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("history.db"));
    std::mt19937 rng(20261130);
    std::uniform_int_distribution<int> delayMs(5, 450);
    std::map<qint64, QString> committed;  // id -> role, over all runs
    constexpr int kKills = 25;
    int survived = 0;
    QElapsedTimer total;
    total.start();
    for (int run = 0; run < kKills; ++run) {
      QProcess driver;
      driver.setProcessChannelMode(QProcess::SeparateChannels);
      driver.start(QStringLiteral(ALAP_KILL_DRIVER), {db});
      QVERIFY2(driver.waitForStarted(5000), qPrintable(driver.errorString()));
      QByteArray out;
      QElapsedTimer wait;
      wait.start();
      while (!out.contains("ready\n") && wait.elapsed() < 10000) {
        driver.waitForReadyRead(100);
        out += driver.readAllStandardOutput();
      }
      QVERIFY2(out.contains("ready\n"), driver.readAllStandardError().constData());
      const int delay = delayMs(rng);
      QTest::qWait(delay);
      QCOMPARE(driver.state(), QProcess::Running);  // killed while it works, not after a crash
      ::kill(pid_t(driver.processId()), SIGKILL);
      QVERIFY(driver.waitForFinished(5000));
      QCOMPARE(driver.exitStatus(), QProcess::CrashExit);
      out += driver.readAllStandardOutput();
      int newLines = 0;
      for (const QByteArray& l : out.split('\n')) {
        const QList<QByteArray> f = l.split(' ');
        if (f.size() == 3 && f[0] == "committed") {
          committed[f[1].toLongLong()] = QString::fromLatin1(f[2]);
          ++newLines;
        }
      }
      checkDatabase(db, committed);
      if (QTest::currentTestFailed()) return;
      ++survived;
      qInfo("kill %d after %d ms: %d messages committed in this run, %zu in all", run + 1, delay, newLines,
            committed.size());
    }
    QCOMPARE(survived, kKills);
    QVERIFY(committed.size() > size_t(kKills));  // the kills did hit during real work
    // Answers cut by a kill stay "streaming" with a prefix of the reply (the app marks them stopped
    // when the conversation is opened); most kills must have hit one mid-stream.
    const int midStream = countCutAnswers(db);
    QVERIFY2(midStream >= kKills / 2, qPrintable(QString::number(midStream)));
    qInfo("kills survived: %d of %d (%zu committed messages verified, %d kills cut an answer mid-stream, %lld ms)",
          survived, kKills, committed.size(), midStream, qint64(total.elapsed()));
  }

  void survivesKillsDuringImport() {
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("history.db"));
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> delayMs(5, 300);
    std::vector<qint64> imported;
    constexpr int kKills = 10;
    int survived = 0;
    for (int run = 0; run < kKills; ++run) {
      QProcess driver;
      driver.start(QStringLiteral(ALAP_KILL_DRIVER), {db, QStringLiteral("import")});
      QVERIFY2(driver.waitForStarted(5000), qPrintable(driver.errorString()));
      QByteArray out;
      QElapsedTimer wait;
      wait.start();
      while (!out.contains("ready\n") && wait.elapsed() < 10000) {
        driver.waitForReadyRead(100);
        out += driver.readAllStandardOutput();
      }
      QVERIFY2(out.contains("ready\n"), driver.readAllStandardError().constData());
      QTest::qWait(delayMs(rng));
      QCOMPARE(driver.state(), QProcess::Running);
      ::kill(pid_t(driver.processId()), SIGKILL);
      QVERIFY(driver.waitForFinished(5000));
      out += driver.readAllStandardOutput();
      for (const QByteArray& l : out.split('\n')) {
        const QList<QByteArray> f = l.split(' ');
        if (f.size() == 2 && f[0] == "imported") imported.push_back(f[1].toLongLong());
      }
      // Integrity, every reported import whole, and no partial import anywhere.
      sqlite3* handle = nullptr;
      QCOMPARE(sqlite3_open_v2(db.toUtf8().constData(), &handle, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
      auto closer = qScopeGuard([handle] { sqlite3_close(handle); });
      QCOMPARE(scalarText(handle, "PRAGMA integrity_check"), QStringLiteral("ok"));
      QCOMPARE(scalarText(handle,
                          "SELECT count(*) FROM conversations c WHERE (SELECT count(*) FROM messages m "
                          "WHERE m.conversation_id = c.id) <> " + std::to_string(kImportMessages)),
               QStringLiteral("0"));
      for (qint64 id : imported)
        QCOMPARE(scalarText(handle, "SELECT count(*) FROM messages WHERE conversation_id = " + std::to_string(id)),
                 QString::number(kImportMessages));
      ++survived;
    }
    QCOMPARE(survived, kKills);
    qInfo("import kills survived: %d of %d (%zu whole imports verified)", survived, kKills, imported.size());
  }

 private:
  static QString scalarText(sqlite3* db, const std::string& sql) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) return QStringLiteral("prepare failed");
    QString v = sqlite3_step(st) == SQLITE_ROW
                    ? QString::fromUtf8(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)))
                    : QStringLiteral("no row");
    sqlite3_finalize(st);
    return v;
  }

  int countCutAnswers(const QString& path) {
    sqlite3* db = nullptr;
    if (sqlite3_open_v2(path.toUtf8().constData(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) return -1;
    sqlite3_stmt* st = nullptr;
    int n = 0;
    sqlite3_prepare_v2(db, "SELECT content FROM messages WHERE role = 'assistant' AND status = 'streaming'", -1, &st,
                       nullptr);
    while (sqlite3_step(st) == SQLITE_ROW) {
      const QByteArray content(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
      if (!QByteArray(kKillTestReply).startsWith(content)) {
        n = -1000;  // a partial answer that is not a prefix of the reply: corrupt
        break;
      }
      ++n;
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
  }

  void checkDatabase(const QString& path, const std::map<qint64, QString>& committed) {
    sqlite3* db = nullptr;
    QCOMPARE(sqlite3_open_v2(path.toUtf8().constData(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
    auto closer = qScopeGuard([db] { sqlite3_close(db); });
    sqlite3_stmt* st = nullptr;
    QCOMPARE(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, nullptr), SQLITE_OK);
    QCOMPARE(sqlite3_step(st), SQLITE_ROW);
    const QString integrity = QString::fromUtf8(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
    sqlite3_finalize(st);
    QCOMPARE(integrity, QStringLiteral("ok"));
    QCOMPARE(sqlite3_prepare_v2(db, "SELECT role, status, content FROM messages WHERE id = ?", -1, &st, nullptr),
             SQLITE_OK);
    auto finalizer = qScopeGuard([&st] { sqlite3_finalize(st); });
    for (const auto& [id, role] : committed) {
      sqlite3_reset(st);
      sqlite3_bind_int64(st, 1, id);
      QVERIFY2(sqlite3_step(st) == SQLITE_ROW, qPrintable(QStringLiteral("message %1 (%2) is missing").arg(id).arg(role)));
      const QString storedRole = QString::fromUtf8(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
      const QString status = QString::fromUtf8(reinterpret_cast<const char*>(sqlite3_column_text(st, 1)));
      const QByteArray content(reinterpret_cast<const char*>(sqlite3_column_text(st, 2)));
      QCOMPARE(storedRole, role);
      if (role == QLatin1String("assistant")) {
        QCOMPARE(status, QStringLiteral("complete"));
        QCOMPARE(content, QByteArray(kKillTestReply));
      } else {
        QVERIFY(content.startsWith("kill test message "));
      }
    }
  }
};

QTEST_GUILESS_MAIN(KillTest)
#include "app_kill_test.moc"
