// Plain data of the download manager: what a download is (request, persisted record, live
// info), its states and the kinds of failure a person is shown. No behaviour beyond naming and
// URL/file-name checks; the engine is download_engine.h.
#pragma once

#include <QList>
#include <QMetaType>
#include <QString>
#include <QUrl>
#include <optional>

namespace alap::download {

// The same five states as core/store's DownloadStatus (names are identical).
enum class DownloadState { queued, running, paused, done, failed };
const char* stateName(DownloadState s);
std::optional<DownloadState> parseState(const QString& s);

// Why a download stopped, in words a person understands (errorKindText).
enum class ErrorKind {
  none,
  invalid,       // bad URL (not https, not loopback http), bad target path or file name
  notFound,      // 404 / the repository or file does not exist
  needsToken,    // 401: the model is gated or private: an access token is needed
  forbidden,     // 403: the token has no access (terms not accepted on the website)
  offline,       // host not found, connection refused, network unreachable
  timeout,       // the server stalled longer than the stall timeout, after every retry
  server,        // 5xx or a malformed response, after every retry
  diskFull,      // not enough free space before the start, or a write failed (ENOSPC)
  io,            // any other local file error
  checksum,      // the SHA-256 did not match (the partial file was deleted)
};
const char* errorKindName(ErrorKind k);  // "not_found", "needs_token", ...

// What the caller asks for.
struct DownloadRequest {
  QUrl url;
  QString path;            // final file; data goes to path + ".part" until verified
  QString sha256;          // expected digest (hex, any case); empty: the server's X-Linked-Etag
  qint64 expectedSize = -1;  // when known in advance (catalog, API): checked against free space
  bool requireChecksum = true;  // false: accept a file no digest is known for (alap-cli)
};

// One persisted row (core/store Download, keyed by url).
struct DownloadRecord {
  QString url;
  QString path;
  QString sha256;  // lowercase hex or empty
  qint64 totalBytes = 0;
  qint64 doneBytes = 0;
  DownloadState state = DownloadState::queued;
};

// A download as the UI sees it.
struct DownloadInfo {
  QString id;  // the URL (downloads are keyed by URL, like the store)
  QString url;
  QString path;
  QString fileName;
  DownloadState state = DownloadState::queued;
  qint64 receivedBytes = 0;
  qint64 totalBytes = -1;     // -1 while unknown
  double bytesPerSecond = 0;  // smoothed
  qint64 etaSeconds = -1;     // -1 while unknown
  int attempt = 0;            // tries of the current run (reset by progress)
  ErrorKind error = ErrorKind::none;
  QString errorMessage;
  QString sha256;             // expected, or after success the verified digest
  bool verified = false;      // done and matched an expected digest
};

// True when url may be fetched: https, or http to a loopback address (tests, local mirrors).
bool isAllowedUrl(const QUrl& url, QString* why = nullptr);

// A safe local file name from a name the server gave: the last path component only if the whole
// name has no "..", no "\\", no control characters, no leading '.', and is not empty. Otherwise
// empty with the reason in *why.
QString sanitizeFileName(const QString& name, QString* why = nullptr);

// Lowercase 64-digit hex, or empty when s is not a SHA-256 digest (quotes and "sha256:" allowed).
QString normalizeSha256(const QString& s);

}  // namespace alap::download

Q_DECLARE_METATYPE(alap::download::DownloadState)
Q_DECLARE_METATYPE(alap::download::ErrorKind)
