// DownloadEngine against TestHttpServer on 127.0.0.1: verified downloads, resume after drops,
// stalls, engine restarts and a killed alap-cli process, Range ignored, HTTP errors, tokens,
// redirects, cancel/pause, disk-full, the queue limit and persistence into core/store.
#include <QCryptographicHash>
#include <QFile>
#include <QProcess>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <memory>

#include "core/store/store.h"
#include "download/download_engine.h"
#include "download/download_list_model.h"
#include "download/store_persistence.h"
#include "test_http_server.h"

using namespace alap::download;
using alap::test::TestHttpServer;

namespace {

QByteArray makeData(qsizetype n, quint32 seed) {
  QByteArray b(n, Qt::Uninitialized);
  QRandomGenerator g(seed);
  for (qsizetype i = 0; i < n; ++i) b[i] = char(g.generate() & 0xFF);
  return b;
}

QString sha(const QByteArray& b) { return QString::fromLatin1(QCryptographicHash::hash(b, QCryptographicHash::Sha256).toHex()); }

QByteArray readAll(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

DownloadEngine::Options fastOptions() {
  DownloadEngine::Options o;
  o.backoffMs = 5;
  o.stallTimeoutMs = 2000;
  o.progressIntervalMs = 0;
  return o;
}

// Records persisted rows in memory, keyed by URL.
struct MemoryPersistence : DownloadPersistence {
  QHash<QString, DownloadRecord> rows;
  int saves = 0;
  void saveDownload(const DownloadRecord& r) override {
    rows[r.url] = r;
    ++saves;
  }
  void removeDownload(const QString& url) override { rows.remove(url); }
};

}  // namespace

class DownloadEngineTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir m_dir;
  std::unique_ptr<TestHttpServer> m_server;
  const QByteArray m_data = makeData(1 << 20, 7);  // 1 MiB

  QString target(const QString& name) const { return m_dir.filePath(name); }

  // Runs one download to its end; returns the final state.
  DownloadState run(DownloadEngine& e, const DownloadRequest& req, int timeoutMs = 15000) {
    QSignalSpy done(&e, &DownloadEngine::finished);
    QSignalSpy err(&e, &DownloadEngine::errorOccurred);
    const QString id = e.enqueue(req);
    if (id.isEmpty()) return DownloadState::failed;
    QDeadlineTimer deadline(timeoutMs);
    while (done.count() + err.count() == 0 && !deadline.hasExpired()) QTest::qWait(5);
    return e.info(id) ? e.info(id)->state : DownloadState::failed;
  }
  DownloadRequest request(const QByteArray& route, const QString& name, const QString& digest) const {
    DownloadRequest r;
    r.url = m_server->url(QString::fromLatin1(route));
    r.path = target(name);
    r.sha256 = digest;
    return r;
  }

 private slots:
  void init() {
    QVERIFY(m_dir.isValid());
    m_server = std::make_unique<TestHttpServer>();
    QVERIFY(m_server->start());
  }
  void cleanup() { m_server.reset(); }

  void completesAndVerifies() {
    m_server->route("/f.bin").body = m_data;
    DownloadEngine e(fastOptions());
    QSignalSpy progress(&e, &DownloadEngine::progress);
    QSignalSpy done(&e, &DownloadEngine::finished);
    QCOMPARE(run(e, request("/f.bin", "a.gguf", sha(m_data).toUpper())), DownloadState::done);
    QCOMPARE(readAll(target("a.gguf")), m_data);
    QVERIFY(!QFile::exists(target("a.gguf.part")));
    QCOMPARE(done.count(), 1);
    QCOMPARE(done.first().at(2).toString(), sha(m_data));
    QVERIFY(e.info(m_server->url("/f.bin").toString())->verified);
    QVERIFY(progress.count() >= 1);
    QCOMPARE(progress.last().at(1).toLongLong(), qint64(m_data.size()));
    QCOMPARE(progress.last().at(2).toLongLong(), qint64(m_data.size()));
    QCOMPARE(m_server->requests.size(), 1);
    QVERIFY(m_server->requests[0].range.isEmpty());
  }

  void resumesAfterDropAt40Percent() {
    auto& r = m_server->route("/f.bin");
    r.body = m_data;
    r.etag = "\"v1\"";
    const qint64 cut = m_data.size() * 4 / 10;
    r.dropAt = {cut};
    DownloadEngine e(fastOptions());
    QSignalSpy retry(&e, &DownloadEngine::retrying);
    QCOMPARE(run(e, request("/f.bin", "b.gguf", sha(m_data))), DownloadState::done);
    QCOMPARE(readAll(target("b.gguf")), m_data);
    QCOMPARE(retry.count(), 1);
    QCOMPARE(m_server->requests.size(), 2);
    QCOMPARE(m_server->requests[1].range, "bytes=" + QByteArray::number(cut) + "-");
    QCOMPARE(m_server->requests[1].ifRange, QByteArray("\"v1\""));
  }

  void survivesTwentyRandomDrops() {
    auto& r = m_server->route("/f.bin");
    r.body = m_data;
    QRandomGenerator g(42);
    QList<qint64> cuts;
    while (cuts.size() < 20) {
      const qint64 c = 1 + qint64(g.bounded(quint32(m_data.size() - 1)));
      if (!cuts.contains(c)) cuts.push_back(c);
    }
    std::sort(cuts.begin(), cuts.end());
    r.dropAt = cuts;
    auto o = fastOptions();
    o.maxTries = 2;           // progress resets the count: 20 drops in a row of 2-try series still finish
    o.stallTimeoutMs = 10000;  // a slow sanitizer build must not turn a busy moment into an extra drop
    DownloadEngine e(o);
    QCOMPARE(run(e, request("/f.bin", "c.gguf", sha(m_data)), 60000), DownloadState::done);
    QCOMPARE(readAll(target("c.gguf")), m_data);
    // Each answer is cut at the next offset, so each resume asks for exactly the bytes after that
    // cut. A request that fails before any byte arrives (a loaded CI machine) is retried at the same
    // offset; that consumes a cut on the server, so the log may repeat an offset and skip a cut,
    // but it never goes back and never skips bytes the client does not hold.
    const auto& log = m_server->requests;
    QCOMPARE(log.size(), 21);  // every answer but the last consumes one cut
    QVERIFY(log[0].range.isEmpty());
    qint64 previous = 0;
    int repeats = 0;
    for (int i = 1; i < log.size(); ++i) {
      QVERIFY2(log[i].range.startsWith("bytes=") && log[i].range.endsWith("-"), log[i].range.constData());
      const qint64 offset = log[i].range.mid(6, log[i].range.size() - 7).toLongLong();
      if (offset == previous) {
        ++repeats;
        continue;
      }
      QVERIFY2(cuts.contains(offset) && offset > previous, log[i].range.constData());
      previous = offset;
    }
    QVERIFY2(repeats <= 2, qPrintable(QStringLiteral("%1 retries without progress").arg(repeats)));
  }

  void rangeIgnoredRestartsFromZero() {
    auto& r = m_server->route("/f.bin");
    r.body = m_data;
    r.rangeSupport = false;
    // A stale .part of garbage: if it were kept, the digest could not match.
    QFile part(target("d.gguf.part"));
    QVERIFY(part.open(QIODevice::WriteOnly));
    part.write(makeData(300000, 99));
    part.close();
    DownloadEngine e(fastOptions());
    QCOMPARE(run(e, request("/f.bin", "d.gguf", sha(m_data))), DownloadState::done);
    QCOMPARE(readAll(target("d.gguf")), m_data);
    QCOMPARE(m_server->requests.size(), 1);
    QCOMPARE(m_server->requests[0].range, QByteArray("bytes=300000-"));
  }

  void wrongChecksumKeepsNothing() {
    m_server->route("/f.bin").body = m_data;
    DownloadEngine e(fastOptions());
    QSignalSpy err(&e, &DownloadEngine::errorOccurred);
    QCOMPARE(run(e, request("/f.bin", "e.gguf", sha("something else"))), DownloadState::failed);
    QCOMPARE(err.first().at(1).value<ErrorKind>(), ErrorKind::checksum);
    QVERIFY(err.first().at(2).toString().contains(QStringLiteral("checksum mismatch")));
    QVERIFY(!QFile::exists(target("e.gguf")));
    QVERIFY(!QFile::exists(target("e.gguf.part")));
  }

  void linkedEtagFromTheHubVerifies() {
    // The hub: /resolve answers 302 with X-Linked-Etag (the LFS SHA-256), the CDN serves bytes.
    auto& hub = m_server->route("/o/m/resolve/main/m.gguf");
    hub.status = 302;
    hub.location = "/cdn/m.gguf?sig=1";
    hub.headers = {{"X-Linked-Etag", "\"" + sha(m_data).toLatin1() + "\""}, {"X-Linked-Size", QByteArray::number(m_data.size())}};
    m_server->route("/cdn/m.gguf").body = m_data;
    DownloadEngine e(fastOptions());
    QCOMPARE(run(e, request("/o/m/resolve/main/m.gguf", "f.gguf", QString())), DownloadState::done);
    QVERIFY(e.info(m_server->url("/o/m/resolve/main/m.gguf").toString())->verified);
    QCOMPARE(readAll(target("f.gguf")), m_data);
    // The same with a linked digest that does not match.
    hub.headers = {{"X-Linked-Etag", "\"" + sha("x").toLatin1() + "\""}};
    QCOMPARE(run(e, request("/o/m/resolve/main/m.gguf", "g.gguf", QString())), DownloadState::failed);
    QVERIFY(!QFile::exists(target("g.gguf")));
    QCOMPARE(e.info(m_server->url("/o/m/resolve/main/m.gguf").toString())->error, ErrorKind::checksum);
  }

  void noDigestIsRefusedUnlessAllowed() {
    m_server->route("/f.bin").body = m_data;
    DownloadEngine e(fastOptions());
    QCOMPARE(run(e, request("/f.bin", "h.gguf", QString())), DownloadState::failed);
    QVERIFY(!QFile::exists(target("h.gguf")));
    QCOMPARE(e.downloads().first().error, ErrorKind::checksum);
    auto req = request("/f.bin", "h.gguf", QString());
    req.requireChecksum = false;
    QCOMPARE(run(e, req), DownloadState::done);
    QCOMPARE(readAll(target("h.gguf")), m_data);
    QVERIFY(!e.downloads().first().verified);
  }

  void httpErrorsAreClear_data() {
    QTest::addColumn<int>("status");
    QTest::addColumn<int>("kind");
    QTest::newRow("404") << 404 << int(ErrorKind::notFound);
    QTest::newRow("403") << 403 << int(ErrorKind::forbidden);
    QTest::newRow("401") << 401 << int(ErrorKind::needsToken);
  }
  void httpErrorsAreClear() {
    QFETCH(int, status);
    QFETCH(int, kind);
    auto& r = m_server->route("/f.bin");
    r.status = status;
    r.body = "no";
    DownloadEngine e(fastOptions());
    QSignalSpy err(&e, &DownloadEngine::errorOccurred);
    QCOMPARE(run(e, request("/f.bin", "i.gguf", sha(m_data))), DownloadState::failed);
    QCOMPARE(int(err.first().at(1).value<ErrorKind>()), kind);
    QVERIFY(err.first().at(2).toString().contains(QString::number(status)));
    QCOMPARE(m_server->requests.size(), 1);  // not retried
    QVERIFY(!QFile::exists(target("i.gguf")));
  }

  void tokenAfter401() {
    auto& r = m_server->route("/gated.bin");
    r.body = m_data;
    r.requireToken = "hf_secret";
    DownloadEngine e(fastOptions());
    QCOMPARE(run(e, request("/gated.bin", "j.gguf", sha(m_data))), DownloadState::failed);
    const QString id = m_server->url("/gated.bin").toString();
    QCOMPARE(e.info(id)->error, ErrorKind::needsToken);
    QVERIFY(e.info(id)->errorMessage.contains(QStringLiteral("gated")));
    e.setToken(QStringLiteral("hf_secret"), QStringLiteral("127.0.0.1"));
    QSignalSpy done(&e, &DownloadEngine::finished);
    e.resume(id);
    QTRY_COMPARE(done.count(), 1);
    QCOMPARE(readAll(target("j.gguf")), m_data);
    QCOMPARE(m_server->requests.last().authorization, QByteArray("Bearer hf_secret"));
  }

  void tokenNotSentToOtherHosts() {
    m_server->route("/a").status = 302;
    m_server->route("/a").location = "http://localhost:" + QByteArray::number(m_server->port()) + "/b";
    m_server->route("/b").body = m_data;
    DownloadEngine e(fastOptions());
    e.setToken(QStringLiteral("hf_secret"), QStringLiteral("127.0.0.1"));
    QCOMPARE(run(e, request("/a", "k.gguf", sha(m_data))), DownloadState::done);
    QCOMPARE(m_server->requests[0].authorization, QByteArray("Bearer hf_secret"));
    QVERIFY(m_server->requests[1].authorization.isEmpty());
  }

  void serverErrorsAreRetried() {
    auto& r = m_server->route("/f.bin");
    r.body = m_data;
    r.failTimes = 2;
    r.failStatus = 503;
    DownloadEngine e(fastOptions());
    QSignalSpy retry(&e, &DownloadEngine::retrying);
    QCOMPARE(run(e, request("/f.bin", "l.gguf", sha(m_data))), DownloadState::done);
    QCOMPARE(retry.count(), 2);
    QCOMPARE(retry.at(1).at(2).toInt(), 10);  // back-off doubles: 5 ms, 10 ms
    // Too many failures: gives up with the reason.
    r.failTimes = 10;
    auto o = fastOptions();
    o.maxTries = 3;
    DownloadEngine e2(o);
    QCOMPARE(run(e2, request("/f.bin", "l2.gguf", sha(m_data))), DownloadState::failed);
    QVERIFY(e2.downloads().first().errorMessage.contains(QStringLiteral("after 3 tries")));
  }

  void redirectChainFollowed() {
    m_server->route("/r1").status = 301;
    m_server->route("/r1").location = "/r2";
    m_server->route("/r2").status = 302;
    m_server->route("/r2").location = m_server->url("/r3").toEncoded();
    m_server->route("/r3").status = 307;
    m_server->route("/r3").location = "/final";
    m_server->route("/final").body = m_data;
    DownloadEngine e(fastOptions());
    QCOMPARE(run(e, request("/r1", "m.gguf", sha(m_data))), DownloadState::done);
    QCOMPARE(readAll(target("m.gguf")), m_data);
    QCOMPARE(m_server->requests.size(), 4);
    // A loop ends with a clear error.
    m_server->route("/loop").status = 302;
    m_server->route("/loop").location = "/loop";
    QCOMPARE(run(e, request("/loop", "n.gguf", sha(m_data))), DownloadState::failed);
    QVERIFY(e.info(m_server->url("/loop").toString())->errorMessage.contains(QStringLiteral("too many redirects")));
  }

  void stallTimesOutAndResumes() {
    auto& r = m_server->route("/f.bin");
    r.body = m_data;
    r.stallAt = m_data.size() / 2;
    r.stallCount = 1;
    auto o = fastOptions();
    o.stallTimeoutMs = 300;
    DownloadEngine e(o);
    QSignalSpy retry(&e, &DownloadEngine::retrying);
    QCOMPARE(run(e, request("/f.bin", "o.gguf", sha(m_data))), DownloadState::done);
    QCOMPARE(readAll(target("o.gguf")), m_data);
    QCOMPARE(retry.count(), 1);
    QVERIFY(retry.first().at(3).toString().contains(QStringLiteral("sent nothing")));
    QCOMPARE(m_server->requests[1].range, "bytes=" + QByteArray::number(m_data.size() / 2) + "-");
  }

  void cancelLeavesNoFile() {
    auto& r = m_server->route("/f.bin");
    r.body = m_data;
    r.stallAt = 200000;
    r.stallCount = 100;
    DownloadEngine e(fastOptions());
    QSignalSpy removed(&e, &DownloadEngine::removed);
    const QString id = e.enqueue(request("/f.bin", "p.gguf", sha(m_data)));
    QTRY_COMPARE(e.info(id)->receivedBytes, qint64(200000));
    QVERIFY(QFile::exists(target("p.gguf.part")));
    e.cancel(id);
    QCOMPARE(removed.count(), 1);
    QVERIFY(!e.info(id));
    QVERIFY(!QFile::exists(target("p.gguf.part")));
    QVERIFY(!QFile::exists(target("p.gguf")));
  }

  void pauseKeepsPartAndResumeUsesRange() {
    auto& r = m_server->route("/f.bin");
    r.body = m_data;
    r.stallAt = 300000;
    r.stallCount = 1;
    DownloadEngine e(fastOptions());
    const QString id = e.enqueue(request("/f.bin", "q.gguf", sha(m_data)));
    QTRY_COMPARE(e.info(id)->receivedBytes, qint64(300000));
    e.pause(id);
    QCOMPARE(e.info(id)->state, DownloadState::paused);
    QCOMPARE(QFileInfo(target("q.gguf.part")).size(), qint64(300000));
    QSignalSpy done(&e, &DownloadEngine::finished);
    e.resume(id);
    QTRY_COMPARE(done.count(), 1);
    QCOMPARE(readAll(target("q.gguf")), m_data);
    QCOMPARE(m_server->requests.last().range, QByteArray("bytes=300000-"));
  }

  void newEngineResumesFromPart() {
    auto& r = m_server->route("/f.bin");
    r.body = m_data;
    r.stallAt = 400000;
    r.stallCount = 1;
    MemoryPersistence store;
    const QString id = m_server->url("/f.bin").toString();
    {
      DownloadEngine e(fastOptions());
      e.setPersistence(&store);
      e.enqueue(request("/f.bin", "r.gguf", sha(m_data)));
      QTRY_COMPARE(e.info(id)->receivedBytes, qint64(400000));
    }  // the "app" goes away mid-download
    QVERIFY(store.rows.contains(id));
    QCOMPARE(store.rows[id].state, DownloadState::running);
    QCOMPARE(store.rows[id].sha256, sha(m_data));
    DownloadEngine e2(fastOptions());
    e2.setPersistence(&store);
    QSignalSpy done(&e2, &DownloadEngine::finished);
    e2.restore(store.rows.values());
    QTRY_COMPARE(done.count(), 1);
    QCOMPARE(readAll(target("r.gguf")), m_data);
    QCOMPARE(m_server->requests.last().range, QByteArray("bytes=400000-"));
    QCOMPARE(store.rows[id].state, DownloadState::done);
    QCOMPARE(store.rows[id].doneBytes, qint64(m_data.size()));
  }

  void killedCliProcessResumes() {
    auto& r = m_server->route("/f.bin");
    r.body = m_data;
    r.stallAt = 600000;
    r.stallCount = 1;
    const QString out = target("s.gguf");
    const QStringList args = {QStringLiteral("download"), QStringLiteral("--url"), m_server->url("/f.bin").toString(),
                              QStringLiteral("--sha256"), sha(m_data), QStringLiteral("-o"), out};
    QProcess p;
    p.start(QStringLiteral(ALAP_CLI_PATH), args);
    QVERIFY(p.waitForStarted());
    QTRY_COMPARE_WITH_TIMEOUT(QFileInfo(out + QStringLiteral(".part")).size(), qint64(600000), 10000);
    p.kill();
    QVERIFY(p.waitForFinished());
    QVERIFY(!QFile::exists(out));
    p.start(QStringLiteral(ALAP_CLI_PATH), args);
    QTRY_VERIFY_WITH_TIMEOUT(p.state() == QProcess::NotRunning, 10000);
    const QByteArray err = p.readAllStandardError();
    QVERIFY2(p.exitCode() == 0, err.constData());
    QVERIFY(err.contains("verified"));
    QCOMPARE(readAll(out), m_data);
    QCOMPARE(m_server->requests.last().range, QByteArray("bytes=600000-"));
  }

  void cliWrongChecksumExitsNonZero() {
    m_server->route("/f.bin").body = m_data;
    const QString out = target("t.gguf");
    QProcess p;
    p.start(QStringLiteral(ALAP_CLI_PATH), {QStringLiteral("download"), QStringLiteral("--url"), m_server->url("/f.bin").toString(),
                                            QStringLiteral("--sha256"), sha("x"), QStringLiteral("-o"), out});
    QTRY_VERIFY_WITH_TIMEOUT(p.state() == QProcess::NotRunning, 10000);
    QCOMPARE(p.exitCode(), 1);
    QVERIFY(p.readAllStandardError().contains("checksum mismatch"));
    QVERIFY(!QFile::exists(out));
    QVERIFY(!QFile::exists(out + QStringLiteral(".part")));
  }

  void diskFullPausesClearly() {
    m_server->route("/f.bin").body = m_data;
    DownloadEngine e(fastOptions());
    e.setWriteHook([](qint64 offset, qint64 length) { return offset + length <= 100000; });
    QSignalSpy err(&e, &DownloadEngine::errorOccurred);
    QCOMPARE(run(e, request("/f.bin", "u.gguf", sha(m_data))), DownloadState::paused);
    QCOMPARE(err.first().at(1).value<ErrorKind>(), ErrorKind::diskFull);
    QVERIFY(err.first().at(2).toString().contains(QStringLiteral("disk is full")));
    QVERIFY(!QFile::exists(target("u.gguf")));
    const qint64 kept = QFileInfo(target("u.gguf.part")).size();
    QVERIFY(kept <= 100000);
    QCOMPARE(kept, e.downloads().first().receivedBytes);
    e.setWriteHook({});
    QSignalSpy done(&e, &DownloadEngine::finished);
    e.resume(e.downloads().first().id);
    QTRY_COMPARE(done.count(), 1);
    QCOMPARE(readAll(target("u.gguf")), m_data);
  }

  void freeSpaceCheckedBeforeStart() {
    m_server->route("/f.bin").body = m_data;
    DownloadEngine e(fastOptions());
    auto req = request("/f.bin", "v.gguf", sha(m_data));
    req.expectedSize = qint64(1) << 60;
    QCOMPARE(run(e, req), DownloadState::paused);
    QCOMPARE(e.downloads().first().error, ErrorKind::diskFull);
    QVERIFY(e.downloads().first().errorMessage.contains(QStringLiteral("not enough disk space")));
    QCOMPARE(m_server->requests.size(), 0);
  }

  void queueRunsAtMostTwo() {
    for (const char* p : {"/q1", "/q2", "/q3"}) {
      auto& r = m_server->route(p);
      r.body = m_data;
      r.stallAt = 1000;
      r.stallCount = 1;
    }
    DownloadEngine e(fastOptions());
    QCOMPARE(e.options().maxConcurrent, 2);
    QSignalSpy done(&e, &DownloadEngine::finished);
    e.enqueue(request("/q1", "w1.gguf", sha(m_data)));
    e.enqueue(request("/q2", "w2.gguf", sha(m_data)));
    e.enqueue(request("/q3", "w3.gguf", sha(m_data)));
    QCOMPARE(e.runningCount(), 2);
    QCOMPARE(e.downloads().at(2).state, DownloadState::queued);
    QTRY_COMPARE(m_server->requests.size(), 2);
    m_server->clearStalls();  // the two held connections drop: they resume, then the third runs
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 3, 15000);
    for (const char* n : {"w1.gguf", "w2.gguf", "w3.gguf"}) QCOMPARE(readAll(target(QString::fromLatin1(n))), m_data);
  }

  void refusesUnsafeRequests() {
    DownloadEngine e(fastOptions());
    QSignalSpy err(&e, &DownloadEngine::errorOccurred);
    DownloadRequest r;
    r.path = target("x.gguf");
    r.url = QUrl(QStringLiteral("http://example.com/x.gguf"));
    QVERIFY(e.enqueue(r).isEmpty());
    r.url = QUrl(QStringLiteral("ftp://127.0.0.1/x.gguf"));
    QVERIFY(e.enqueue(r).isEmpty());
    r.url = m_server->url("/x");
    r.sha256 = QStringLiteral("not-hex");
    QVERIFY(e.enqueue(r).isEmpty());
    QCOMPARE(err.count(), 3);
    for (const auto& a : err) QCOMPARE(a.at(1).value<ErrorKind>(), ErrorKind::invalid);
    QVERIFY(e.downloads().isEmpty());
  }

  void listModelFollowsTheEngine() {
    m_server->route("/f.bin").body = m_data;
    m_server->route("/missing").status = 404;
    DownloadEngine e(fastOptions());
    DownloadListModel model(&e);
    QCOMPARE(model.rowCount(), 0);
    QCOMPARE(run(e, request("/f.bin", "lm.gguf", sha(m_data))), DownloadState::done);
    QCOMPARE(run(e, request("/missing", "lm2.gguf", sha(m_data))), DownloadState::failed);
    QCOMPARE(model.count(), 2);
    const auto roles = model.roleNames();
    auto value = [&](int row, const QByteArray& role) { return model.data(model.index(row), roles.key(role)); };
    QCOMPARE(value(0, "state").toString(), QStringLiteral("done"));
    QCOMPARE(value(0, "fraction").toDouble(), 1.0);
    QCOMPARE(value(0, "verified").toBool(), true);
    QCOMPARE(value(0, "fileName").toString(), QStringLiteral("lm.gguf"));
    QCOMPARE(value(1, "state").toString(), QStringLiteral("failed"));
    QCOMPARE(value(1, "errorKind").toString(), QStringLiteral("not_found"));
    QCOMPARE(model.activeCount(), 0);
    model.forget(value(1, "downloadId").toString());
    QCOMPARE(model.count(), 1);
  }

  void persistsIntoTheStore() {
    m_server->route("/f.bin").body = m_data;
    auto store = alap::store::Store::open(target("history.db").toStdString());
    StorePersistence persistence([&store](StorePersistence::Job job) { job(store); });
    DownloadEngine e(fastOptions());
    e.setPersistence(&persistence);
    QCOMPARE(run(e, request("/f.bin", "y.gguf", sha(m_data))), DownloadState::done);
    const auto rows = store.list_downloads();
    QCOMPARE(rows.size(), size_t(1));
    QCOMPARE(QString::fromStdString(rows[0].url), m_server->url("/f.bin").toString());
    QCOMPARE(rows[0].status, alap::store::DownloadStatus::done);
    QCOMPARE(QString::fromStdString(rows[0].sha256), sha(m_data));
    QCOMPARE(rows[0].done_bytes, int64_t(m_data.size()));
    const QList<DownloadRecord> back = StorePersistence::fromStore(rows);
    QCOMPARE(back.first().state, DownloadState::done);
    QCOMPARE(back.first().path, target("y.gguf"));
    e.forget(back.first().url);
    QVERIFY(store.list_downloads().empty());
  }
};

QTEST_GUILESS_MAIN(DownloadEngineTest)
#include "download_engine_test.moc"
