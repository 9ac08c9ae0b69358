// DownloadEngine (see download_engine.h for the contract).
#include "download/download_engine.h"

#include <fcntl.h>
#include <unistd.h>

#include <QDir>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QNetworkProxyFactory>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QRegularExpression>
#include <QStorageInfo>
#include <QtConcurrent/QtConcurrentRun>
#include <cstdio>

namespace alap::download {

namespace {

constexpr int kMaxBackoffMs = 30000;
constexpr qint64 kPersistEveryMs = 2000;

QString partPath(const QString& path) { return path + QStringLiteral(".part"); }

QString humanBytes(qint64 b) {
  const double d = static_cast<double>(b);
  if (b >= (qint64(1) << 30)) return QString::number(d / double(qint64(1) << 30), 'f', 2) + QStringLiteral(" GiB");
  if (b >= (qint64(1) << 20)) return QString::number(d / double(1 << 20), 'f', 1) + QStringLiteral(" MiB");
  return QString::number(b) + QStringLiteral(" bytes");
}

// SHA-256 of the first `length` bytes of a file (pool thread). Null on a read error.
std::shared_ptr<QCryptographicHash> hashPrefix(const QString& path, qint64 length) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return nullptr;
  auto h = std::make_shared<QCryptographicHash>(QCryptographicHash::Sha256);
  QByteArray buf(1 << 20, Qt::Uninitialized);
  qint64 left = length;
  while (left > 0) {
    const qint64 n = f.read(buf.data(), std::min<qint64>(left, buf.size()));
    if (n <= 0) return nullptr;
    h->addData(QByteArrayView(buf.constData(), n));
    left -= n;
  }
  return h;
}

bool syncFile(QFile& f) { return f.handle() < 0 || ::fsync(f.handle()) == 0; }

void syncDir(const QString& dir) {
  const int fd = ::open(QFile::encodeName(dir).constData(), O_RDONLY | O_DIRECTORY);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

bool retryableNetworkError(QNetworkReply::NetworkError e) {
  switch (e) {
    case QNetworkReply::RemoteHostClosedError:
    case QNetworkReply::TimeoutError:
    case QNetworkReply::OperationCanceledError:
    case QNetworkReply::TemporaryNetworkFailureError:
    case QNetworkReply::NetworkSessionFailedError:
    case QNetworkReply::UnknownNetworkError:
    case QNetworkReply::ProxyConnectionClosedError:
    case QNetworkReply::ProxyTimeoutError:
    case QNetworkReply::ConnectionRefusedError:
    case QNetworkReply::HostNotFoundError:
    case QNetworkReply::ProxyConnectionRefusedError:
    case QNetworkReply::ProxyNotFoundError:
    case QNetworkReply::ProtocolFailure:
    case QNetworkReply::UnknownProxyError:
      return true;
    default:
      return false;
  }
}

}  // namespace

struct DownloadEngine::Job {
  enum class Verdict { none, body, redirect, alreadyComplete, restartFromZero, httpError };

  QString id;
  DownloadRequest req;
  DownloadState state = DownloadState::queued;
  ErrorKind error = ErrorKind::none;
  QString errorMessage;
  QString expectedSha;  // normalised; may come from X-Linked-Etag
  QString doneSha;      // digest of the finished file
  bool verified = false;

  QNetworkReply* reply = nullptr;
  QUrl currentUrl;
  int redirects = 0;
  Verdict verdict = Verdict::none;
  ErrorKind verdictKind = ErrorKind::none;
  QString verdictMessage;
  bool verdictRetryable = false;
  QUrl redirectTo;

  std::unique_ptr<QFile> part;
  std::shared_ptr<QCryptographicHash> hash;
  qint64 received = 0;
  qint64 total = -1;
  qint64 requestOffset = 0;
  QString etag;
  int failures = 0;
  quint64 generation = 0;

  QTimer stallTimer;
  QTimer retryTimer;
  QElapsedTimer clock;  // started when the job starts running
  qint64 lastProgressMs = -1;
  qint64 lastPersistMs = -1;
  qint64 speedSampleMs = 0;
  qint64 speedSampleBytes = 0;
  double speed = 0;
};

DownloadEngine::DownloadEngine(QObject* parent) : DownloadEngine(Options{}, parent) {}

DownloadEngine::DownloadEngine(const Options& options, QObject* parent) : QObject(parent), m_options(options) {
  qRegisterMetaType<alap::download::DownloadState>();
  qRegisterMetaType<alap::download::ErrorKind>();
  QNetworkProxyFactory::setUseSystemConfiguration(true);  // the system proxy settings
  m_nam = new QNetworkAccessManager(this);
  if (m_options.maxConcurrent < 1) m_options.maxConcurrent = 1;
  if (m_options.maxTries < 1) m_options.maxTries = 1;
}

DownloadEngine::~DownloadEngine() {
  // Keep every .part and the persisted state: a new engine resumes where this one stopped.
  for (auto& j : m_jobs) {
    if (j->reply) {
      QNetworkReply* r = j->reply;
      j->reply = nullptr;
      disconnect(r, nullptr, this, nullptr);
      r->abort();
      r->deleteLater();
    }
    if (j->part) {
      if (j->part->isOpen()) syncFile(*j->part);
      j->part->close();
    }
    if (j->state == DownloadState::running || j->state == DownloadState::queued) persist(j.get());
  }
}

void DownloadEngine::setToken(const QString& token, const QString& tokenHost) {
  m_token = token.trimmed();
  m_tokenHost = tokenHost.toLower();
}

void DownloadEngine::setNetworkAccessManager(QNetworkAccessManager* nam) {
  if (nam) m_nam = nam;
}

DownloadEngine::Job* DownloadEngine::job(const QString& id) const {
  for (const auto& j : m_jobs) {
    if (j->id == id) return j.get();
  }
  return nullptr;
}

int DownloadEngine::runningCount() const {
  int n = 0;
  for (const auto& j : m_jobs) n += j->state == DownloadState::running;
  return n;
}

DownloadInfo DownloadEngine::infoOf(const Job* j) const {
  DownloadInfo i;
  i.id = j->id;
  i.url = j->req.url.toString();
  i.path = j->req.path;
  i.fileName = QFileInfo(j->req.path).fileName();
  i.state = j->state;
  i.receivedBytes = j->received;
  i.totalBytes = j->total >= 0 ? j->total : (j->req.expectedSize > 0 ? j->req.expectedSize : -1);
  i.bytesPerSecond = j->state == DownloadState::running ? j->speed : 0;
  i.etaSeconds = (i.bytesPerSecond > 1 && i.totalBytes >= 0)
                     ? static_cast<qint64>(double(i.totalBytes - j->received) / i.bytesPerSecond + 0.5)
                     : -1;
  i.attempt = j->failures + 1;
  i.error = j->error;
  i.errorMessage = j->errorMessage;
  i.sha256 = j->doneSha.isEmpty() ? j->expectedSha : j->doneSha;
  i.verified = j->verified;
  return i;
}

QList<DownloadInfo> DownloadEngine::downloads() const {
  QList<DownloadInfo> out;
  for (const auto& j : m_jobs) out.push_back(infoOf(j.get()));
  return out;
}

std::optional<DownloadInfo> DownloadEngine::info(const QString& id) const {
  if (const Job* j = job(id)) return infoOf(j);
  return std::nullopt;
}

void DownloadEngine::restore(const QList<DownloadRecord>& records) {
  for (const DownloadRecord& r : records) {
    if (job(r.url)) continue;
    auto j = std::make_unique<Job>();
    j->id = r.url;
    j->req.url = QUrl(r.url);
    j->req.path = r.path;
    j->req.sha256 = r.sha256;
    j->req.expectedSize = r.totalBytes > 0 ? r.totalBytes : -1;
    j->expectedSha = normalizeSha256(r.sha256);
    j->received = r.doneBytes;
    j->total = r.totalBytes > 0 ? r.totalBytes : -1;
    j->state = r.state == DownloadState::running ? DownloadState::queued : r.state;
    if (j->state == DownloadState::done) {
      j->doneSha = j->expectedSha;
      j->verified = !j->expectedSha.isEmpty();
    }
    if (j->state == DownloadState::queued || j->state == DownloadState::paused) {
      // The .part on disk is the truth; the row may be up to 2 s behind.
      const QFileInfo pi(partPath(r.path));
      j->received = pi.exists() ? pi.size() : 0;
    }
    const QString id = j->id;
    m_jobs.push_back(std::move(j));
    emit added(id);
  }
  schedule();
}

QString DownloadEngine::enqueue(const DownloadRequest& request) {
  QString why;
  const QString id = request.url.toString();
  auto refuse = [&](const QString& m) {
    emit errorOccurred(id, ErrorKind::invalid, m);
    return QString();
  };
  if (!isAllowedUrl(request.url, &why)) return refuse(why);
  const QString name = QFileInfo(request.path).fileName();
  if (request.path.isEmpty() || name.isEmpty() || name == QLatin1String(".") || name == QLatin1String("..")) {
    return refuse(QStringLiteral("no target file name for %1").arg(id));
  }
  const QString sha = normalizeSha256(request.sha256);
  if (!request.sha256.isEmpty() && sha.isEmpty()) {
    return refuse(QStringLiteral("'%1' is not a SHA-256 digest (64 hex digits)").arg(request.sha256));
  }
  Job* j = job(id);
  if (j && j->state == DownloadState::running) return id;
  if (!j) {
    m_jobs.push_back(std::make_unique<Job>());
    j = m_jobs.back().get();
    j->id = id;
    j->req = request;
    emit added(id);
  }
  j->req = request;
  j->req.path = QFileInfo(request.path).absoluteFilePath();
  j->expectedSha = sha;
  j->error = ErrorKind::none;
  j->errorMessage.clear();
  j->failures = 0;
  j->total = request.expectedSize > 0 ? request.expectedSize : -1;
  j->doneSha.clear();
  j->verified = false;
  const QFileInfo pi(partPath(j->req.path));
  j->received = pi.exists() ? pi.size() : 0;
  setState(j, DownloadState::queued);
  persist(j);
  schedule();
  return id;
}

void DownloadEngine::pause(const QString& id) {
  Job* j = job(id);
  if (!j || (j->state != DownloadState::running && j->state != DownloadState::queued)) return;
  stopReply(j);
  if (j->part) {
    syncFile(*j->part);
    j->part->close();
  }
  setState(j, DownloadState::paused);
  persist(j);
  schedule();
}

void DownloadEngine::resume(const QString& id) {
  Job* j = job(id);
  if (!j || (j->state != DownloadState::paused && j->state != DownloadState::failed)) return;
  j->error = ErrorKind::none;
  j->errorMessage.clear();
  j->failures = 0;
  setState(j, DownloadState::queued);
  persist(j);
  schedule();
}

void DownloadEngine::cancel(const QString& id) {
  Job* j = job(id);
  if (!j) return;
  stopReply(j);
  if (j->part) j->part->close();
  if (j->state != DownloadState::done) QFile::remove(partPath(j->req.path));
  forget(id);
}

void DownloadEngine::forget(const QString& id) {
  Job* j = job(id);
  if (!j) return;
  stopReply(j);
  if (j->part) j->part->close();
  if (m_persistence) m_persistence->removeDownload(id);
  for (auto it = m_jobs.begin(); it != m_jobs.end(); ++it) {
    if (it->get() == j) {
      m_jobs.erase(it);
      break;
    }
  }
  emit removed(id);
  schedule();
}

void DownloadEngine::schedule() {
  int running = runningCount();
  for (size_t i = 0; i < m_jobs.size() && running < m_options.maxConcurrent; ++i) {
    Job* j = m_jobs[i].get();
    if (j->state != DownloadState::queued) continue;
    ++running;
    startJob(j);
  }
}

void DownloadEngine::setState(Job* j, DownloadState s) {
  if (j->state == s) return;
  j->state = s;
  emit stateChanged(j->id, s);
}

void DownloadEngine::persist(Job* j) {
  if (!m_persistence) return;
  DownloadRecord r;
  r.url = j->id;
  r.path = j->req.path;
  r.sha256 = j->doneSha.isEmpty() ? j->expectedSha : j->doneSha;
  r.totalBytes = j->total > 0 ? j->total : 0;
  r.doneBytes = j->received;
  r.state = j->state;
  m_persistence->saveDownload(r);
  j->lastPersistMs = j->clock.isValid() ? j->clock.elapsed() : 0;
}

void DownloadEngine::stopReply(Job* j) {
  ++j->generation;  // a pending prefix hash of an older run is ignored
  j->stallTimer.stop();
  j->retryTimer.stop();
  if (!j->reply) return;
  QNetworkReply* r = j->reply;
  j->reply = nullptr;
  disconnect(r, nullptr, this, nullptr);
  r->abort();
  r->deleteLater();
}

void DownloadEngine::fail(Job* j, ErrorKind kind, const QString& message, DownloadState state) {
  stopReply(j);
  if (j->part && j->part->isOpen()) {
    syncFile(*j->part);
    j->part->close();
  }
  if (j->received == 0 && j->state == DownloadState::running) QFile::remove(partPath(j->req.path));  // nothing to resume
  j->error = kind;
  j->errorMessage = message;
  j->speed = 0;
  setState(j, state);
  persist(j);
  emit errorOccurred(j->id, kind, message);
  schedule();
}

void DownloadEngine::startJob(Job* j) {
  j->error = ErrorKind::none;
  j->errorMessage.clear();
  j->currentUrl = j->req.url;
  j->redirects = 0;
  j->speed = 0;
  j->clock.start();
  j->lastProgressMs = -1;
  j->speedSampleMs = 0;
  setState(j, DownloadState::running);

  const QFileInfo fi(j->req.path);
  if (!QDir().mkpath(fi.absolutePath())) {
    fail(j, ErrorKind::io, QStringLiteral("cannot create the folder %1").arg(fi.absolutePath()));
    return;
  }
  j->part = std::make_unique<QFile>(partPath(j->req.path));
  if (!j->part->open(QIODevice::ReadWrite | QIODevice::Unbuffered)) {
    fail(j, ErrorKind::io, QStringLiteral("cannot open %1: %2").arg(j->part->fileName(), j->part->errorString()));
    return;
  }
  j->received = j->part->size();
  j->part->seek(j->received);
  if (j->req.expectedSize > 0 && j->received > j->req.expectedSize) {
    resetPart(j);  // longer than the file can be: not ours to resume
  }
  if (j->req.expectedSize > 0) {
    const qint64 need = j->req.expectedSize - j->received;
    const qint64 avail = QStorageInfo(fi.absolutePath()).bytesAvailable();
    if (avail >= 0 && need > avail) {
      fail(j, ErrorKind::diskFull,
           QStringLiteral("not enough disk space in %1: %2 needed, %3 free")
               .arg(fi.absolutePath(), humanBytes(need), humanBytes(avail)),
           DownloadState::paused);
      return;
    }
  }
  prepareHash(j);
}

void DownloadEngine::prepareHash(Job* j) {
  if (j->received == 0) {
    j->hash = std::make_shared<QCryptographicHash>(QCryptographicHash::Sha256);
    sendRequest(j);
    return;
  }
  // The digest must cover the bytes already in the .part: re-read them off this thread.
  const QString id = j->id;
  const quint64 gen = ++j->generation;
  auto* watcher = new QFutureWatcher<std::shared_ptr<QCryptographicHash>>(this);
  connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, id, gen] {
    watcher->deleteLater();
    Job* jj = job(id);
    if (!jj || jj->generation != gen || jj->state != DownloadState::running) return;
    std::shared_ptr<QCryptographicHash> h = watcher->result();
    if (!h) {
      fail(jj, ErrorKind::io, QStringLiteral("cannot read %1").arg(partPath(jj->req.path)));
      return;
    }
    jj->hash = std::move(h);  // the pool thread is done with it
    sendRequest(jj);
  });
  watcher->setFuture(QtConcurrent::run(hashPrefix, partPath(j->req.path), j->received));
}

bool DownloadEngine::resetPart(Job* j) {
  j->received = 0;
  j->hash = std::make_shared<QCryptographicHash>(QCryptographicHash::Sha256);
  if (!j->part || !j->part->isOpen()) return true;
  const bool ok = j->part->resize(0) && j->part->seek(0);
  return ok;
}

void DownloadEngine::sendRequest(Job* j) {
  QNetworkRequest r(j->currentUrl);
  r.setAttribute(QNetworkRequest::RedirectPolicyAttribute, QNetworkRequest::ManualRedirectPolicy);
  r.setRawHeader("User-Agent", "Alap/0.1");
  r.setRawHeader("Accept-Encoding", "identity");  // byte offsets must be file offsets
  if (j->received > 0) {
    r.setRawHeader("Range", "bytes=" + QByteArray::number(j->received) + "-");
    if (!j->etag.isEmpty()) r.setRawHeader("If-Range", j->etag.toUtf8());
  }
  if (!m_token.isEmpty() && j->currentUrl.host().toLower() == m_tokenHost) {
    r.setRawHeader("Authorization", "Bearer " + m_token.toUtf8());
  }
  j->requestOffset = j->received;
  j->verdict = Job::Verdict::none;
  j->redirectTo = QUrl();
  QNetworkReply* reply = m_nam->get(r);
  j->reply = reply;
  connect(reply, &QNetworkReply::metaDataChanged, this, [this, j] { onMetaData(j); });
  connect(reply, &QIODevice::readyRead, this, [this, j] { onReadyRead(j); });
  connect(reply, &QNetworkReply::finished, this, [this, j] { onFinished(j); });
  j->stallTimer.setSingleShot(true);
  j->stallTimer.setInterval(m_options.stallTimeoutMs);
  disconnect(&j->stallTimer, nullptr, this, nullptr);
  connect(&j->stallTimer, &QTimer::timeout, this, [this, j] {
    if (!j->reply) return;
    stopReply(j);
    retryOrFail(j, ErrorKind::timeout,
                QStringLiteral("the server sent nothing for %1 s").arg(m_options.stallTimeoutMs / 1000.0));
  });
  j->stallTimer.start();
}

void DownloadEngine::onMetaData(Job* j) {
  QNetworkReply* reply = j->reply;
  if (!reply || j->verdict != Job::Verdict::none) return;
  const QVariant sv = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute);
  if (!sv.isValid()) return;
  const int status = sv.toInt();
  const QString url = j->currentUrl.toString();
  const QByteArray hfError = reply->rawHeader("X-Error-Code");
  const QByteArray hfMessage = reply->rawHeader("X-Error-Message");
  auto verdictError = [&](ErrorKind k, const QString& m, bool retryable) {
    j->verdict = Job::Verdict::httpError;
    j->verdictKind = k;
    j->verdictMessage = m;
    j->verdictRetryable = retryable;
  };
  // The hub answers /resolve/ with the LFS SHA-256 and size before redirecting to its CDN.
  if (j->expectedSha.isEmpty()) {
    const QString linked = normalizeSha256(QString::fromLatin1(reply->rawHeader("X-Linked-Etag")));
    if (!linked.isEmpty()) j->expectedSha = linked;
  }
  if (j->total < 0) {
    bool ok = false;
    const qint64 linkedSize = reply->rawHeader("X-Linked-Size").toLongLong(&ok);
    if (ok && linkedSize > 0) j->total = linkedSize;
  }

  if (status >= 300 && status < 400 && status != 304) {
    const QByteArray loc = reply->rawHeader("Location");
    if (loc.isEmpty()) {
      verdictError(ErrorKind::server, QStringLiteral("HTTP %1 without a Location from %2").arg(status).arg(url), true);
    } else {
      j->verdict = Job::Verdict::redirect;
      j->redirectTo = j->currentUrl.resolved(QUrl::fromEncoded(loc));
    }
  } else if (status == 200 || status == 206) {
    if (status == 200) {
      if (j->requestOffset > 0 && !resetPart(j)) {
        verdictError(ErrorKind::io, QStringLiteral("cannot truncate %1").arg(partPath(j->req.path)), false);
      }
      bool ok = false;
      const qint64 len = reply->header(QNetworkRequest::ContentLengthHeader).toLongLong(&ok);
      if (ok && len >= 0) j->total = len;
    } else {
      static const QRegularExpression re(QStringLiteral("^bytes\\s+(\\d+)-(\\d+)/(\\d+|\\*)$"));
      const auto m = re.match(QString::fromLatin1(reply->rawHeader("Content-Range")).trimmed());
      if (!m.hasMatch() || m.captured(1).toLongLong() != j->requestOffset) {
        j->verdict = Job::Verdict::restartFromZero;
      } else if (m.captured(3) != QLatin1String("*")) {
        j->total = m.captured(3).toLongLong();
      } else {
        bool ok = false;
        const qint64 len = reply->header(QNetworkRequest::ContentLengthHeader).toLongLong(&ok);
        if (ok) j->total = j->requestOffset + len;
      }
    }
    const QByteArray etag = reply->rawHeader("ETag");
    if (!etag.isEmpty() && !etag.startsWith("W/")) j->etag = QString::fromLatin1(etag);
    if (j->verdict == Job::Verdict::none) {
      j->verdict = Job::Verdict::body;
      if (j->total > 0) {
        const QString dir = QFileInfo(j->req.path).absolutePath();
        const qint64 need = j->total - j->received;
        const qint64 avail = QStorageInfo(dir).bytesAvailable();
        if (avail >= 0 && need > avail) {
          fail(j, ErrorKind::diskFull,
               QStringLiteral("not enough disk space in %1: %2 needed, %3 free")
                   .arg(dir, humanBytes(need), humanBytes(avail)),
               DownloadState::paused);
          return;
        }
      }
    }
  } else if (status == 416) {
    static const QRegularExpression re(QStringLiteral("^bytes\\s+\\*/(\\d+)$"));
    const auto m = re.match(QString::fromLatin1(reply->rawHeader("Content-Range")).trimmed());
    const qint64 size = m.hasMatch() ? m.captured(1).toLongLong() : j->total;
    j->verdict = (j->requestOffset > 0 && size == j->requestOffset) ? Job::Verdict::alreadyComplete
                                                                     : Job::Verdict::restartFromZero;
  } else if (status == 404 || status == 410 || hfError == "RepoNotFound" || hfError == "EntryNotFound") {
    verdictError(ErrorKind::notFound, QStringLiteral("not found (HTTP %1): %2").arg(status).arg(url), false);
  } else if (status == 401) {
    verdictError(ErrorKind::needsToken,
                 hfError == "GatedRepo"
                     ? QStringLiteral("this model is gated: accept its terms on the website and add an access token (%1)").arg(url)
                     : QStringLiteral("an access token is needed (HTTP 401): %1").arg(url),
                 false);
  } else if (status == 403) {
    verdictError(ErrorKind::forbidden,
                 QStringLiteral("access denied (HTTP 403)%1: %2")
                     .arg(hfMessage.isEmpty() ? QString() : QStringLiteral(" — ") + QString::fromUtf8(hfMessage.left(200)), url),
                 false);
  } else if (status == 408 || status == 429 || status >= 500) {
    verdictError(ErrorKind::server, QStringLiteral("the server answered HTTP %1: %2").arg(status).arg(url), true);
  } else {
    verdictError(ErrorKind::server, QStringLiteral("unexpected answer HTTP %1: %2").arg(status).arg(url), false);
  }
}

void DownloadEngine::onReadyRead(Job* j) {
  QNetworkReply* reply = j->reply;
  if (!reply) return;
  if (j->verdict == Job::Verdict::none) onMetaData(j);
  if (!j->reply) return;
  if (j->verdict != Job::Verdict::body) {
    reply->readAll();  // error pages, redirect bodies: discarded
    return;
  }
  const QByteArray data = reply->readAll();
  if (data.isEmpty()) return;
  j->stallTimer.start();
  const bool hookOk = !m_writeHook || m_writeHook(j->received, data.size());
  const qint64 n = hookOk ? j->part->write(data) : -1;
  if (n != data.size()) {
    const QString dir = QFileInfo(j->req.path).absolutePath();
    const qint64 avail = QStorageInfo(dir).bytesAvailable();
    if (n > 0) j->part->resize(j->received);  // keep only whole, hashed writes
    if (!hookOk || (avail >= 0 && avail < data.size() + (1 << 20))) {
      fail(j, ErrorKind::diskFull,
           QStringLiteral("the disk is full (%1, %2 free): free some space and resume").arg(dir, humanBytes(qMax<qint64>(avail, 0))),
           DownloadState::paused);
    } else {
      fail(j, ErrorKind::io, QStringLiteral("cannot write %1: %2").arg(j->part->fileName(), j->part->errorString()),
           DownloadState::paused);
    }
    return;
  }
  j->hash->addData(data);
  j->received += n;
  j->failures = 0;  // progress: the next failure is the first of a new series
  emitProgress(j, false);
  if (j->clock.elapsed() - j->lastPersistMs >= kPersistEveryMs) persist(j);
}

void DownloadEngine::emitProgress(Job* j, bool force) {
  const qint64 now = j->clock.elapsed();
  if (!force && j->lastProgressMs >= 0 && now - j->lastProgressMs < m_options.progressIntervalMs) return;
  // Speed over the last sample window, smoothed.
  const qint64 dt = now - j->speedSampleMs;
  if (dt >= 200 || j->speed == 0) {
    if (dt > 0 && j->received >= j->speedSampleBytes) {
      const double inst = double(j->received - j->speedSampleBytes) * 1000.0 / double(dt);
      j->speed = j->speed == 0 ? inst : 0.7 * j->speed + 0.3 * inst;
    }
    j->speedSampleMs = now;
    j->speedSampleBytes = j->received;
  }
  j->lastProgressMs = now;
  const DownloadInfo i = infoOf(j);
  emit progress(j->id, i.receivedBytes, i.totalBytes, i.bytesPerSecond, i.etaSeconds);
}

void DownloadEngine::onFinished(Job* j) {
  QNetworkReply* reply = j->reply;
  if (!reply) return;
  if (j->verdict == Job::Verdict::none && reply->error() == QNetworkReply::NoError) onMetaData(j);
  if (j->verdict == Job::Verdict::body && reply->bytesAvailable() > 0) onReadyRead(j);
  if (j->reply != reply) return;  // the read failed and stopped the job
  j->reply = nullptr;
  j->stallTimer.stop();
  disconnect(reply, nullptr, this, nullptr);
  reply->deleteLater();

  switch (j->verdict) {
    case Job::Verdict::redirect: {
      QString why;
      if (++j->redirects > m_options.maxRedirects) {
        fail(j, ErrorKind::server, QStringLiteral("too many redirects from %1").arg(j->req.url.toString()));
      } else if (j->currentUrl.scheme() == QLatin1String("https") && j->redirectTo.scheme() != QLatin1String("https")) {
        fail(j, ErrorKind::invalid, QStringLiteral("refused a redirect from https to %1").arg(j->redirectTo.toString()));
      } else if (!isAllowedUrl(j->redirectTo, &why)) {
        fail(j, ErrorKind::invalid, QStringLiteral("refused a redirect: %1").arg(why));
      } else {
        j->currentUrl = j->redirectTo;
        sendRequest(j);
      }
      return;
    }
    case Job::Verdict::httpError:
      if (j->verdictRetryable) retryOrFail(j, j->verdictKind, j->verdictMessage);
      else fail(j, j->verdictKind, j->verdictMessage);
      return;
    case Job::Verdict::restartFromZero:
      if (!resetPart(j)) {
        fail(j, ErrorKind::io, QStringLiteral("cannot truncate %1").arg(partPath(j->req.path)));
        return;
      }
      retryOrFail(j, ErrorKind::server, QStringLiteral("the server sent a range that was not asked for; restarting"));
      return;
    case Job::Verdict::alreadyComplete:
      complete(j);
      return;
    case Job::Verdict::none:
    case Job::Verdict::body:
      break;
  }
  const QNetworkReply::NetworkError err = reply->error();
  if (err != QNetworkReply::NoError) {
    const QString m = reply->errorString();
    if (err == QNetworkReply::SslHandshakeFailedError) {
      fail(j, ErrorKind::offline, QStringLiteral("the server's TLS certificate could not be verified: %1").arg(m));
    } else if (retryableNetworkError(err)) {
      const bool offline = err == QNetworkReply::HostNotFoundError || err == QNetworkReply::ConnectionRefusedError ||
                           err == QNetworkReply::NetworkSessionFailedError ||
                           err == QNetworkReply::TemporaryNetworkFailureError;
      retryOrFail(j, offline ? ErrorKind::offline : ErrorKind::server,
                  offline ? QStringLiteral("cannot reach %1 (offline?): %2").arg(j->currentUrl.host(), m)
                          : QStringLiteral("the connection was interrupted: %1").arg(m));
    } else {
      fail(j, ErrorKind::server, QStringLiteral("download failed: %1").arg(m));
    }
    return;
  }
  if (j->total >= 0 && j->received != j->total) {
    retryOrFail(j, ErrorKind::server,
                QStringLiteral("the connection ended after %1 of %2 bytes").arg(j->received).arg(j->total));
    return;
  }
  complete(j);
}

void DownloadEngine::retryOrFail(Job* j, ErrorKind kind, const QString& message) {
  ++j->failures;
  if (j->failures >= m_options.maxTries) {
    fail(j, kind, QStringLiteral("%1 (gave up after %2 tries)").arg(message).arg(j->failures));
    return;
  }
  const int shift = qMin(j->failures - 1, 15);
  const int delay = int(qMin<qint64>(qint64(m_options.backoffMs) << shift, kMaxBackoffMs));
  emit retrying(j->id, j->failures + 1, delay, message);
  persist(j);
  j->retryTimer.setSingleShot(true);
  disconnect(&j->retryTimer, nullptr, this, nullptr);
  connect(&j->retryTimer, &QTimer::timeout, this, [this, j] {
    if (j->state != DownloadState::running) return;
    j->currentUrl = j->req.url;  // CDN links expire: ask the origin again
    j->redirects = 0;
    sendRequest(j);
  });
  j->retryTimer.start(delay);
}

void DownloadEngine::complete(Job* j) {
  emitProgress(j, true);
  if (!syncFile(*j->part)) {
    fail(j, ErrorKind::io, QStringLiteral("cannot flush %1 to disk").arg(j->part->fileName()));
    return;
  }
  j->part->close();
  const QString digest = QString::fromLatin1(j->hash->result().toHex());
  const QString part = partPath(j->req.path);
  if (!j->expectedSha.isEmpty() && digest != j->expectedSha) {
    QFile::remove(part);
    j->received = 0;
    fail(j, ErrorKind::checksum,
         QStringLiteral("checksum mismatch for %1: expected SHA-256 %2, got %3; the downloaded data was deleted")
             .arg(QFileInfo(j->req.path).fileName(), j->expectedSha, digest));
    return;
  }
  if (j->expectedSha.isEmpty() && j->req.requireChecksum) {
    fail(j, ErrorKind::checksum,
         QStringLiteral("no SHA-256 is known for %1, so it cannot be verified; it was kept as %2")
             .arg(j->req.url.toString(), part));
    return;
  }
  if (std::rename(QFile::encodeName(part).constData(), QFile::encodeName(j->req.path).constData()) != 0) {
    fail(j, ErrorKind::io, QStringLiteral("cannot rename %1 to %2").arg(part, j->req.path));
    return;
  }
  syncDir(QFileInfo(j->req.path).absolutePath());
  j->doneSha = digest;
  j->verified = !j->expectedSha.isEmpty();
  j->total = j->received;
  j->speed = 0;
  setState(j, DownloadState::done);
  persist(j);
  emit finished(j->id, j->req.path, digest);
  schedule();
}

}  // namespace alap::download
