// Naming and validation helpers of download_types.h.
#include "download/download_types.h"

#include <QHostAddress>

namespace alap::download {

const char* stateName(DownloadState s) {
  switch (s) {
    case DownloadState::queued: return "queued";
    case DownloadState::running: return "running";
    case DownloadState::paused: return "paused";
    case DownloadState::done: return "done";
    case DownloadState::failed: return "failed";
  }
  return "failed";
}

std::optional<DownloadState> parseState(const QString& s) {
  for (auto st : {DownloadState::queued, DownloadState::running, DownloadState::paused, DownloadState::done,
                  DownloadState::failed}) {
    if (s == QLatin1String(stateName(st))) return st;
  }
  return std::nullopt;
}

const char* errorKindName(ErrorKind k) {
  switch (k) {
    case ErrorKind::none: return "none";
    case ErrorKind::invalid: return "invalid";
    case ErrorKind::notFound: return "not_found";
    case ErrorKind::needsToken: return "needs_token";
    case ErrorKind::forbidden: return "forbidden";
    case ErrorKind::offline: return "offline";
    case ErrorKind::timeout: return "timeout";
    case ErrorKind::server: return "server";
    case ErrorKind::diskFull: return "disk_full";
    case ErrorKind::io: return "io";
    case ErrorKind::checksum: return "checksum";
  }
  return "none";
}

bool isAllowedUrl(const QUrl& url, QString* why) {
  auto refuse = [&](const QString& m) {
    if (why) *why = m;
    return false;
  };
  if (!url.isValid() || url.host().isEmpty()) return refuse(QStringLiteral("not a valid URL: %1").arg(url.toString()));
  const QString scheme = url.scheme().toLower();
  if (scheme == QLatin1String("https")) return true;
  if (scheme == QLatin1String("http")) {
    const QString host = url.host();
    QHostAddress addr(host);
    if (host.compare(QLatin1String("localhost"), Qt::CaseInsensitive) == 0 || (!addr.isNull() && addr.isLoopback())) {
      return true;
    }
    return refuse(QStringLiteral("only https is allowed (http only to this computer): %1").arg(url.toString()));
  }
  return refuse(QStringLiteral("unsupported URL scheme '%1': %2").arg(scheme, url.toString()));
}

QString sanitizeFileName(const QString& name, QString* why) {
  auto refuse = [&](const QString& m) {
    if (why) *why = QStringLiteral("unsafe file name '%1': %2").arg(name, m);
    return QString();
  };
  if (name.isEmpty()) return refuse(QStringLiteral("empty"));
  if (name.contains(QLatin1Char('\\'))) return refuse(QStringLiteral("contains a backslash"));
  for (QChar c : name) {
    if (c.unicode() < 0x20 || c.unicode() == 0x7F) return refuse(QStringLiteral("contains a control character"));
  }
  const QStringList parts = name.split(QLatin1Char('/'));
  for (const QString& p : parts) {
    if (p == QLatin1String("..")) return refuse(QStringLiteral("contains '..'"));
  }
  const QString last = parts.last();
  if (last.isEmpty() || last == QLatin1String(".")) return refuse(QStringLiteral("no file name"));
  if (last.startsWith(QLatin1Char('.'))) return refuse(QStringLiteral("hidden file"));
  // Linux limits a name to 255 bytes (not characters); the download also needs room for ".part".
  if (last.toUtf8().size() > 250) return refuse(QStringLiteral("too long (more than 250 bytes)"));
  return last;
}

QString normalizeSha256(const QString& s) {
  QString t = s.trimmed();
  if (t.startsWith(QLatin1String("W/"))) t = t.mid(2);
  if (t.size() >= 2 && t.startsWith(QLatin1Char('"')) && t.endsWith(QLatin1Char('"'))) t = t.mid(1, t.size() - 2);
  if (t.startsWith(QLatin1String("sha256:"), Qt::CaseInsensitive)) t = t.mid(7);
  t = t.toLower();
  if (t.size() != 64) return {};
  for (QChar c : t) {
    if (!((c >= QLatin1Char('0') && c <= QLatin1Char('9')) || (c >= QLatin1Char('a') && c <= QLatin1Char('f')))) return {};
  }
  return t;
}

}  // namespace alap::download
