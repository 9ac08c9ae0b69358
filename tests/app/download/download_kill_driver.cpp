// download_kill_driver: the app's download manager (DownloadEngine + StorePersistence over a real
// core/store database) fetching a few files, for download_kill_test to SIGKILL mid-transfer. Not a
// test by itself. Usage: download_kill_driver DB DIR URL SHA256 [URL SHA256 ...]
// At start it restores the database's download rows (as the app does at start-up) and enqueues
// the requested URLs that have no row yet; prints "ready", "progress <url> <bytes>" lines,
// "finished <path>", and "all done" (exit 0) once every download is done; exit 2 on a failure.
#include <QCoreApplication>
#include <QDir>
#include <QUrl>
#include <cstdio>
#include <set>
#include <string>

#include "core/store/store.h"
#include "download/download_engine.h"
#include "download/store_persistence.h"

using namespace alap::download;

namespace {

void say(const QByteArray& line) {
  std::fwrite(line.constData(), 1, size_t(line.size()), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  QCoreApplication app(argc, argv);
  const QStringList args = app.arguments();
  if (args.size() < 5 || (args.size() - 3) % 2 != 0) {
    std::fprintf(stderr, "usage: download_kill_driver DB DIR URL SHA256 [URL SHA256 ...]\n");
    return 1;
  }
  alap::store::Store store = alap::store::Store::open(args[1].toStdString());
  // The app posts these jobs to its store thread; here they run at once on the engine's thread.
  StorePersistence persistence([&store](const StorePersistence::Job& job) { job(store); });

  DownloadEngine::Options opt;
  opt.maxConcurrent = 2;
  opt.maxTries = 20;
  opt.backoffMs = 20;
  opt.stallTimeoutMs = 5000;
  opt.progressIntervalMs = 20;
  DownloadEngine engine(opt);
  engine.setPersistence(&persistence);

  QObject::connect(&engine, &DownloadEngine::progress, [](const QString& id, qint64 received, qint64, double, qint64) {
    say("progress " + id.toUtf8() + ' ' + QByteArray::number(received));
  });
  QObject::connect(&engine, &DownloadEngine::errorOccurred, [](const QString& id, ErrorKind, const QString& message) {
    std::fprintf(stderr, "error %s: %s\n", qPrintable(id), qPrintable(message));
  });
  // -1 while a download is unfinished, 2 when one failed, 0 when all are done.
  auto status = [&] {
    bool all = true;
    for (const DownloadInfo& d : engine.downloads()) {
      if (d.state == DownloadState::failed) {
        say("failed " + d.url.toUtf8());
        return 2;
      }
      if (d.state != DownloadState::done) all = false;
    }
    if (all) say("all done");
    return all ? 0 : -1;
  };
  QObject::connect(&engine, &DownloadEngine::finished, [&](const QString&, const QString& path, const QString&) {
    say("finished " + path.toUtf8());
  });
  QObject::connect(&engine, &DownloadEngine::stateChanged, [&](const QString&, DownloadState) {
    if (const int s = status(); s >= 0) app.exit(s);
  });

  engine.restore(StorePersistence::fromStore(store.list_downloads()));
  std::set<QString> known;
  for (const DownloadInfo& d : engine.downloads()) known.insert(d.url);
  for (int i = 3; i + 1 < args.size(); i += 2) {
    if (known.count(args[i]) != 0) continue;
    DownloadRequest r;
    r.url = QUrl(args[i]);
    r.path = QDir(args[2]).filePath(r.url.fileName());
    r.sha256 = args[i + 1];
    if (engine.enqueue(r).isEmpty()) {
      std::fprintf(stderr, "cannot enqueue %s\n", qPrintable(args[i]));
      return 1;
    }
  }
  say("ready");
  if (const int s = status(); s >= 0) return s;  // everything was done already
  return app.exec();
}
