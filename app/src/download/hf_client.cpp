// HfClient (hf_client.h).
#include "download/hf_client.h"

#include <QNetworkProxyFactory>
#include <QNetworkReply>
#include <QNetworkRequest>

namespace alap::download {

HfClient::HfClient(QObject* parent) : QObject(parent), m_endpoint(defaultEndpoint()) {
  qRegisterMetaType<alap::download::ErrorKind>();
  QNetworkProxyFactory::setUseSystemConfiguration(true);  // the system proxy settings
  m_nam = new QNetworkAccessManager(this);
}

void HfClient::setEndpoint(const QString& endpoint) {
  m_endpoint = endpoint.trimmed();
  while (m_endpoint.endsWith(QLatin1Char('/'))) m_endpoint.chop(1);
}

void HfClient::setNetworkAccessManager(QNetworkAccessManager* nam) {
  if (nam) m_nam = nam;
}

QNetworkReply* HfClient::get(const QUrl& url) {
  QNetworkRequest r(url);
  // With a token, redirects stay on the same origin so the token never reaches another host.
  r.setAttribute(QNetworkRequest::RedirectPolicyAttribute,
                 m_token.isEmpty() ? QNetworkRequest::NoLessSafeRedirectPolicy : QNetworkRequest::SameOriginRedirectPolicy);
  r.setTransferTimeout(m_timeoutMs);
  r.setRawHeader("User-Agent", "Alap/0.1");
  r.setRawHeader("Accept", "application/json");
  if (!m_token.isEmpty()) r.setRawHeader("Authorization", "Bearer " + m_token.toUtf8());
  QNetworkReply* reply = m_nam->get(r);
  // Refuse answers larger than the parse limit without holding them in memory.
  const qint64 maxBytes = m_limits.maxBytes;
  connect(reply, &QNetworkReply::downloadProgress, reply, [reply, maxBytes](qint64 received, qint64) {
    if (received > maxBytes) {
      reply->setProperty("alapTooLarge", true);
      reply->abort();
    }
  });
  return reply;
}

bool HfClient::checkReply(quint64 id, QNetworkReply* reply, QByteArray* body) {
  const QString url = reply->url().toString();
  const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
  const QByteArray hfError = reply->rawHeader("X-Error-Code");
  auto failWith = [&](ErrorKind k, const QString& m) {
    emit requestFailed(id, k, m);
    return false;
  };
  if (reply->property("alapTooLarge").toBool()) return failWith(ErrorKind::server, QStringLiteral("the answer of %1 is too large").arg(url));
  if (status == 404 || hfError == "RepoNotFound") return failWith(ErrorKind::notFound, QStringLiteral("not found: %1").arg(url));
  if (status == 401) return failWith(ErrorKind::needsToken, QStringLiteral("an access token is needed: %1").arg(url));
  if (status == 403) return failWith(ErrorKind::forbidden, QStringLiteral("access denied: %1").arg(url));
  if (status >= 400) return failWith(ErrorKind::server, QStringLiteral("the server answered HTTP %1: %2").arg(status).arg(url));
  switch (reply->error()) {
    case QNetworkReply::NoError: break;
    case QNetworkReply::HostNotFoundError:
    case QNetworkReply::ConnectionRefusedError:
    case QNetworkReply::TemporaryNetworkFailureError:
    case QNetworkReply::NetworkSessionFailedError:
      return failWith(ErrorKind::offline, QStringLiteral("cannot reach %1 (offline?): %2").arg(reply->url().host(), reply->errorString()));
    case QNetworkReply::OperationCanceledError:
    case QNetworkReply::TimeoutError:
      return failWith(ErrorKind::timeout, QStringLiteral("no answer from %1 in time").arg(reply->url().host()));
    default:
      return failWith(ErrorKind::server, QStringLiteral("request failed: %1").arg(reply->errorString()));
  }
  *body = reply->readAll();
  return true;
}

quint64 HfClient::search(const QString& query, int limit) {
  const quint64 id = m_nextId++;
  QNetworkReply* reply = get(searchUrl(m_endpoint, query, limit));
  connect(reply, &QNetworkReply::finished, this, [this, reply, id] {
    reply->deleteLater();
    QByteArray body;
    if (!checkReply(id, reply, &body)) return;
    auto parsed = parseSearchResults(body, m_limits);
    if (!parsed.ok()) {
      emit requestFailed(id, ErrorKind::server, parsed.error);
      return;
    }
    emit searchFinished(id, *parsed.value);
  });
  return id;
}

quint64 HfClient::listFiles(const QString& repoId) {
  const quint64 id = m_nextId++;
  if (!isValidRepoId(repoId)) {
    QMetaObject::invokeMethod(this, [this, id, repoId] {
      emit requestFailed(id, ErrorKind::invalid, QStringLiteral("'%1' is not a repository id (owner/name)").arg(repoId));
    }, Qt::QueuedConnection);
    return id;
  }
  QNetworkReply* reply = get(treeUrl(m_endpoint, repoId));
  connect(reply, &QNetworkReply::finished, this, [this, reply, id, repoId] {
    reply->deleteLater();
    QByteArray body;
    if (!checkReply(id, reply, &body)) return;
    auto parsed = parseTree(body, m_limits);
    if (!parsed.ok()) {
      emit requestFailed(id, ErrorKind::server, parsed.error);
      return;
    }
    emit filesFinished(id, repoId, *parsed.value, groupGgufFiles(*parsed.value));
  });
  return id;
}

}  // namespace alap::download
