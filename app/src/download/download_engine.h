// DownloadEngine: resumable, verified, atomic downloads over QNetworkAccessManager, with a queue
// (at most maxConcurrent at once), retries with back-off, pause/resume/cancel and persistence
// through an injected DownloadPersistence. Lives on one thread (usually the GUI thread; the
// network is asynchronous, and the only heavy work, hashing an existing .part file, runs on a pool
// thread). Not a Hugging Face client (hf_client.h) and not a list model for QML.
//
// Contract of one download (keyed by URL):
// - bytes go to "<path>.part"; the final name appears only after the SHA-256 (expected digest, or
//   the X-Linked-Etag the server sends before its redirect) matched, the .part was fsync'd and
//   renamed. A mismatch deletes the .part and fails with ErrorKind::checksum;
// - an existing .part is resumed with "Range: bytes=N-" (and If-Range: <ETag> when this engine
//   saw one); a 200 answer to a Range request restarts from zero; the SHA-256 covers the old bytes
//   (re-read on a pool thread) and the new ones (hashed as they arrive);
// - redirects are followed by the engine (at most 10, never https -> http, the access token only
//   sent to the host it was given for), so X-Linked-Etag of the first answer is seen;
// - a dropped connection, a stall (no byte for stallTimeoutMs) or a 5xx/429 is retried after
//   backoffMs * 2^(n-1) (capped at 30 s), at most maxTries times in a row; a try that received
//   bytes resets the count;
// - a full disk (before the start: free space < bytes still needed; while writing: a failed
//   write) pauses the download with ErrorKind::diskFull; resume() after freeing space.
#pragma once

#include <QCryptographicHash>
#include <QElapsedTimer>
#include <QFile>
#include <QHash>
#include <QNetworkAccessManager>
#include <QObject>
#include <QPointer>
#include <QTimer>
#include <functional>
#include <memory>

#include "download/download_types.h"

namespace alap::download {

// The app implements this over core/store's downloads table (store_persistence.h does it for a
// Store reached through a post-function). Calls come on the engine's thread and must not block
// for long; saveDownload is called on every state change and at most every 2 s of progress.
class DownloadPersistence {
 public:
  virtual ~DownloadPersistence() = default;
  virtual void saveDownload(const DownloadRecord& record) = 0;  // upsert keyed by record.url
  virtual void removeDownload(const QString& url) = 0;
};

class DownloadEngine : public QObject {
  Q_OBJECT

 public:
  struct Options {
    int maxConcurrent = 2;
    int maxTries = 5;              // consecutive failed tries before giving up
    int backoffMs = 1000;          // first retry delay; doubles each time, capped at 30 s
    int stallTimeoutMs = 30000;    // no byte for this long: abort the try and retry
    int progressIntervalMs = 250;  // progress() at most this often per download
    int maxRedirects = 10;
  };

  explicit DownloadEngine(QObject* parent = nullptr);
  DownloadEngine(const Options& options, QObject* parent = nullptr);
  ~DownloadEngine() override;  // aborts running tries and keeps every .part (resumable)

  void setPersistence(DownloadPersistence* persistence) { m_persistence = persistence; }  // not owned
  // Access token (Authorization: Bearer) sent only to tokenHost (e.g. "huggingface.co").
  void setToken(const QString& token, const QString& tokenHost);
  void setNetworkAccessManager(QNetworkAccessManager* nam);  // not owned; default: an own one
  const Options& options() const { return m_options; }

  // Re-creates the queue from persisted rows (at start-up): queued/running rows are queued again
  // and resume from their .part; paused rows stay paused; done/failed rows are listed as they were.
  void restore(const QList<DownloadRecord>& records);

  // Adds a download (or, when one with this URL exists and is not running, replaces it) and
  // starts it when a slot is free. Returns the id (the URL), or empty with errorOccurred emitted
  // for an invalid request.
  QString enqueue(const DownloadRequest& request);
  void pause(const QString& id);   // running/queued -> paused (the .part is kept)
  void resume(const QString& id);  // paused/failed -> queued
  void cancel(const QString& id);  // stops it, deletes the .part, forgets it (removed())
  void forget(const QString& id);  // removes a done/failed/paused entry from the list, files kept

  QList<DownloadInfo> downloads() const;  // in the order they were added
  std::optional<DownloadInfo> info(const QString& id) const;
  int runningCount() const;

  // Test hook: called before each write with (file offset, length); returning false makes the
  // write fail as if the disk were full.
  void setWriteHook(std::function<bool(qint64 offset, qint64 length)> hook) { m_writeHook = std::move(hook); }

 signals:
  void added(const QString& id);
  void stateChanged(const QString& id, alap::download::DownloadState state);
  void progress(const QString& id, qint64 received, qint64 total, double bytesPerSecond, qint64 etaSeconds);
  void retrying(const QString& id, int attempt, int delayMs, const QString& reason);
  void finished(const QString& id, const QString& path, const QString& sha256);  // verified and renamed
  void errorOccurred(const QString& id, alap::download::ErrorKind kind, const QString& message);
  void removed(const QString& id);

 private:
  struct Job;
  Job* job(const QString& id) const;
  void schedule();
  void startJob(Job* j);
  void prepareHash(Job* j);
  void sendRequest(Job* j);
  void onMetaData(Job* j);
  void onReadyRead(Job* j);
  void onFinished(Job* j);
  void retryOrFail(Job* j, ErrorKind kind, const QString& message);
  void complete(Job* j);
  void stopReply(Job* j);
  void setState(Job* j, DownloadState s);
  void fail(Job* j, ErrorKind kind, const QString& message, DownloadState state = DownloadState::failed);
  void emitProgress(Job* j, bool force);
  void persist(Job* j);
  bool resetPart(Job* j);
  DownloadInfo infoOf(const Job* j) const;

  Options m_options;
  QNetworkAccessManager* m_nam = nullptr;
  DownloadPersistence* m_persistence = nullptr;
  QString m_token;
  QString m_tokenHost;
  std::function<bool(qint64, qint64)> m_writeHook;
  std::vector<std::unique_ptr<Job>> m_jobs;
};

}  // namespace alap::download
