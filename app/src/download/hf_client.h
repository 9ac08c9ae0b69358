// HfClient: the Hugging Face Hub API over the network (search GGUF models, list a repository's
// files with sizes and LFS SHA-256). Asynchronous; answers are parsed with hf_api.h. Not the
// downloader (download_engine.h).
#pragma once

#include <QNetworkAccessManager>
#include <QObject>

#include "download/download_types.h"
#include "download/hf_api.h"

namespace alap::download {

class HfClient : public QObject {
  Q_OBJECT

 public:
  explicit HfClient(QObject* parent = nullptr);

  void setEndpoint(const QString& endpoint);  // default: defaultEndpoint() ($HF_ENDPOINT)
  QString endpoint() const { return m_endpoint; }
  void setToken(const QString& token) { m_token = token.trimmed(); }
  void setNetworkAccessManager(QNetworkAccessManager* nam);  // not owned
  void setTimeoutMs(int ms) { m_timeoutMs = ms; }

  // Each returns a request id that the answering signal carries.
  quint64 search(const QString& query, int limit = 30);
  quint64 listFiles(const QString& repoId);
  // The URL a file of listFiles downloads from.
  QUrl fileUrl(const QString& repoId, const QString& path) const { return resolveUrl(m_endpoint, repoId, path); }

 signals:
  void searchFinished(quint64 requestId, const QList<alap::download::HfModelSummary>& models);
  void filesFinished(quint64 requestId, const QString& repoId, const QList<alap::download::HfFile>& files,
                     const QList<alap::download::HfFileGroup>& ggufGroups);
  void requestFailed(quint64 requestId, alap::download::ErrorKind kind, const QString& message);

 private:
  QNetworkReply* get(const QUrl& url);
  bool checkReply(quint64 id, QNetworkReply* reply, QByteArray* body);

  QNetworkAccessManager* m_nam = nullptr;
  QString m_endpoint;
  QString m_token;
  int m_timeoutMs = 30000;
  quint64 m_nextId = 1;
  HfParseLimits m_limits;
};

}  // namespace alap::download
