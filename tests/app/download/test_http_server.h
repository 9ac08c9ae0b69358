// TestHttpServer: a tiny HTTP/1.1 server on 127.0.0.1 for the download tests (no internet). Each
// route serves bytes with or without Range/If-Range, a status (404, 500, ...), a redirect, a
// token check, or injected faults: the connection cut at given file offsets, a stall (headers and
// some bytes, then silence), the first N answers failing. One request per connection.
#pragma once

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QTcpServer>
#include <QTcpSocket>
#include <QUrl>

namespace alap::test {

class TestHttpServer : public QObject {
  Q_OBJECT

 public:
  struct Route {
    int status = 200;
    QByteArray body;
    QByteArray contentType = "application/octet-stream";
    bool rangeSupport = true;
    QByteArray etag;                 // sent, and compared with If-Range
    QByteArray location;             // for 3xx
    QList<QPair<QByteArray, QByteArray>> headers;  // extra headers
    QList<qint64> dropAt;            // ascending file offsets: each answer is cut at the next one
    qint64 stallAt = -1;             // send up to this offset, then hold the connection silent
    int stallCount = 0;              // how many answers stall
    QByteArray requireToken;         // 401 unless "Authorization: Bearer <token>"
    int failTimes = 0;               // the first N answers are failStatus
    int failStatus = 500;
  };

  struct Seen {
    QByteArray method;
    QByteArray target;  // path and query
    QByteArray range;
    QByteArray ifRange;
    QByteArray authorization;
  };

  explicit TestHttpServer(QObject* parent = nullptr);
  ~TestHttpServer() override;

  bool start();
  quint16 port() const { return m_server.serverPort(); }
  QString base() const { return QStringLiteral("http://127.0.0.1:%1").arg(port()); }
  QUrl url(const QString& path) const { return QUrl(base() + path); }

  // Routes are matched on the whole target first, then on the path without the query.
  Route& route(const QByteArray& path) { return m_routes[path]; }
  void clearStalls();  // closes held connections and stops stalling
  QList<Seen> requests;  // every request, in order
  QList<Seen> requestsFor(const QByteArray& path) const;

 private:
  void onConnection();
  void onData(QTcpSocket* s);
  void respond(QTcpSocket* s, const Seen& req);

  QTcpServer m_server;
  QHash<QByteArray, Route> m_routes;
  QHash<QTcpSocket*, QByteArray> m_buffers;
  QList<QPointer<QTcpSocket>> m_held;
};

}  // namespace alap::test
