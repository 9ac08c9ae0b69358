// alap-cli download --url URL [--sha256 HEX] -o PATH: one file through the app's own download
// engine (app/src/download): resumable on re-run (from PATH.part), verified, renamed atomically.
// Progress goes to stderr. Exit 0 only when the file is complete, verified when a digest is
// known (--sha256, or the server's X-Linked-Etag), and renamed to PATH.
#include <unistd.h>

#include <QCoreApplication>
#include <QUrl>
#include <cmath>
#include <cstdio>
#include <string>

#include "command.h"
#include "download/download_engine.h"
#include "download/hf_api.h"
#include "download/hf_token.h"

namespace alap::cli {
namespace {

std::string bytesText(qint64 b) {
  char buf[48];
  if (b < 0) return "?";
  const double d = static_cast<double>(b);
  if (b >= (qint64(1) << 30)) std::snprintf(buf, sizeof buf, "%.2f GiB", d / double(qint64(1) << 30));
  else if (b >= (1 << 20)) std::snprintf(buf, sizeof buf, "%.1f MiB", d / double(1 << 20));
  else if (b >= 1024) std::snprintf(buf, sizeof buf, "%.1f KiB", d / 1024.0);
  else std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(b));
  return buf;
}

int run_download(const std::vector<std::string>& argv) {
  Args args("download", argv);
  const std::optional<std::string> url = args.value("--url");
  const std::optional<std::string> sha = args.value("--sha256");
  const std::optional<std::string> out = args.value("-o", "--output");
  const std::optional<long long> tries = args.integer("--tries");
  const std::optional<double> stall = args.number("--stall-timeout");
  if (!args.finish()) return 1;
  if (!url) return args.fail("missing --url URL");
  if (!out) return args.fail("missing -o PATH");
  if (tries && (*tries < 1 || *tries > 100)) return args.fail("--tries must be 1..100");
  if (stall && !(*stall > 0 && *stall <= 3600)) return args.fail("--stall-timeout must be in (0, 3600] seconds");

  static int qargc = 1;
  static char name[] = "alap-cli";
  static char* qargv[] = {name, nullptr};
  QCoreApplication app(qargc, qargv);

  download::DownloadEngine::Options opt;
  opt.maxConcurrent = 1;
  opt.progressIntervalMs = 500;
  if (tries) opt.maxTries = static_cast<int>(*tries);
  if (stall) opt.stallTimeoutMs = static_cast<int>(std::lround(*stall * 1000));
  download::DownloadEngine engine(opt);

  const QUrl qurl(QString::fromStdString(*url));
  const QUrl hub(download::defaultEndpoint());
  if (qurl.host() == hub.host()) {
    const download::TokenRead t = download::readToken();
    if (!t.error.isEmpty()) std::fprintf(stderr, "warning: %s\n", t.error.toUtf8().constData());
    if (!t.token.isEmpty()) engine.setToken(t.token, hub.host());
  }

  const bool tty = isatty(STDERR_FILENO);
  int code = 1;
  QObject::connect(&engine, &download::DownloadEngine::progress, [tty](const QString&, qint64 got, qint64 total, double bps, qint64 eta) {
    std::string line = bytesText(got) + " / " + bytesText(total);
    if (total > 0) {
      char pct[16];
      std::snprintf(pct, sizeof pct, " (%.0f%%)", 100.0 * double(got) / double(total));
      line += pct;
    }
    line += "  " + bytesText(static_cast<qint64>(bps)) + "/s";
    if (eta >= 0) {
      char e[32];
      std::snprintf(e, sizeof e, "  %lld:%02lld left", static_cast<long long>(eta / 60), static_cast<long long>(eta % 60));
      line += e;
    }
    if (tty) std::fprintf(stderr, "\r%-70s", line.c_str());
    else std::fprintf(stderr, "progress: %s\n", line.c_str());
  });
  QObject::connect(&engine, &download::DownloadEngine::retrying, [tty](const QString&, int attempt, int delayMs, const QString& why) {
    std::fprintf(stderr, "%s%s; try %d in %.1f s\n", tty ? "\n" : "", why.toUtf8().constData(), attempt, delayMs / 1000.0);
  });
  QObject::connect(&engine, &download::DownloadEngine::finished,
                   [&](const QString& id, const QString& path, const QString& digest) {
                     const auto info = engine.info(id);
                     std::fprintf(stderr, "%ssaved %s (%s, sha256 %s%s)\n", tty ? "\n" : "", path.toUtf8().constData(),
                                  bytesText(info ? info->receivedBytes : -1).c_str(), digest.toUtf8().constData(),
                                  info && info->verified ? ", verified" : ", no digest to verify against");
                     code = 0;
                     app.quit();
                   });
  QObject::connect(&engine, &download::DownloadEngine::errorOccurred,
                   [&](const QString&, download::ErrorKind kind, const QString& message) {
                     std::fprintf(stderr, "%salap-cli download: %s: %s\n", tty ? "\n" : "", download::errorKindName(kind),
                                  message.toUtf8().constData());
                     code = 1;
                     app.quit();
                   });

  download::DownloadRequest req;
  req.url = qurl;
  req.path = QString::fromStdString(*out);
  req.sha256 = sha ? QString::fromStdString(*sha) : QString();
  req.requireChecksum = false;
  if (engine.enqueue(req).isEmpty()) return 1;  // the error was printed
  app.exec();
  return code;
}

}  // namespace
}  // namespace alap::cli

ALAP_CLI_COMMAND("download", "download a file: resumable, SHA-256 verified, renamed atomically", alap::cli::run_download);
