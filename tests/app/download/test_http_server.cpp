// TestHttpServer (test_http_server.h).
#include "test_http_server.h"

#include <QHostAddress>

namespace alap::test {

namespace {

QByteArray reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 206: return "Partial Content";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 307: return "Temporary Redirect";
    case 308: return "Permanent Redirect";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 416: return "Range Not Satisfiable";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Status";
  }
}

}  // namespace

TestHttpServer::TestHttpServer(QObject* parent) : QObject(parent) {
  connect(&m_server, &QTcpServer::newConnection, this, &TestHttpServer::onConnection);
}

TestHttpServer::~TestHttpServer() {
  for (auto& s : m_held) {
    if (s) s->abort();
  }
}

bool TestHttpServer::start() { return m_server.listen(QHostAddress::LocalHost, 0); }

void TestHttpServer::clearStalls() {
  for (auto& r : m_routes) r.stallCount = 0;
  for (auto& s : m_held) {
    if (s) s->abort();
  }
  m_held.clear();
}

QList<TestHttpServer::Seen> TestHttpServer::requestsFor(const QByteArray& path) const {
  QList<Seen> out;
  for (const Seen& s : requests) {
    if (s.target == path || s.target.split('?').first() == path) out.push_back(s);
  }
  return out;
}

void TestHttpServer::onConnection() {
  while (QTcpSocket* s = m_server.nextPendingConnection()) {
    connect(s, &QTcpSocket::readyRead, this, [this, s] { onData(s); });
    connect(s, &QTcpSocket::disconnected, s, &QObject::deleteLater);
  }
}

void TestHttpServer::onData(QTcpSocket* s) {
  QByteArray& buf = m_buffers[s];
  buf += s->readAll();
  const int end = int(buf.indexOf("\r\n\r\n"));
  if (end < 0) return;
  const QList<QByteArray> lines = buf.left(end).split('\n');
  m_buffers.remove(s);
  Seen req;
  const QList<QByteArray> first = lines.value(0).trimmed().split(' ');
  req.method = first.value(0);
  req.target = first.value(1);
  for (int i = 1; i < lines.size(); ++i) {
    const QByteArray line = lines[i].trimmed();
    const int colon = int(line.indexOf(':'));
    if (colon < 0) continue;
    const QByteArray key = line.left(colon).trimmed().toLower();
    const QByteArray value = line.mid(colon + 1).trimmed();
    if (key == "range") req.range = value;
    else if (key == "if-range") req.ifRange = value;
    else if (key == "authorization") req.authorization = value;
  }
  requests.push_back(req);
  respond(s, req);
}

void TestHttpServer::respond(QTcpSocket* s, const Seen& req) {
  const QByteArray path = req.target.split('?').first();
  auto it = m_routes.find(req.target);
  if (it == m_routes.end()) it = m_routes.find(path);
  auto send = [s](int status, const QList<QPair<QByteArray, QByteArray>>& headers, const QByteArray& body,
                  qint64 declaredLength) {
    QByteArray out = "HTTP/1.1 " + QByteArray::number(status) + " " + reason(status) + "\r\n";
    for (const auto& h : headers) out += h.first + ": " + h.second + "\r\n";
    out += "Content-Length: " + QByteArray::number(declaredLength) + "\r\nConnection: close\r\n\r\n";
    s->write(out + body);
  };
  if (it == m_routes.end()) {
    send(404, {{"Content-Type", "text/plain"}, {"X-Error-Code", "EntryNotFound"}}, "no such route", 13);
    s->disconnectFromHost();
    return;
  }
  Route& r = *it;
  if (!r.requireToken.isEmpty() && req.authorization != "Bearer " + r.requireToken) {
    send(401, {{"Content-Type", "text/plain"}, {"X-Error-Code", "GatedRepo"}}, "token", 5);
    s->disconnectFromHost();
    return;
  }
  if (r.failTimes > 0) {
    --r.failTimes;
    send(r.failStatus, {{"Content-Type", "text/plain"}}, "fail", 4);
    s->disconnectFromHost();
    return;
  }
  QList<QPair<QByteArray, QByteArray>> headers = r.headers;
  if (r.status >= 300 && r.status < 400) {
    headers.push_back({"Location", r.location});
    send(r.status, headers, {}, 0);
    s->disconnectFromHost();
    return;
  }
  if (r.status != 200) {
    send(r.status, headers, r.body, r.body.size());
    s->disconnectFromHost();
    return;
  }
  headers.push_back({"Content-Type", r.contentType});
  if (!r.etag.isEmpty()) headers.push_back({"ETag", r.etag});
  const qint64 size = r.body.size();
  qint64 start = 0;
  int status = 200;
  if (r.rangeSupport && req.range.startsWith("bytes=") && req.range.endsWith("-") &&
      (req.ifRange.isEmpty() || req.ifRange == r.etag)) {
    start = req.range.mid(6, req.range.size() - 7).toLongLong();
    if (start >= size) {
      headers.push_back({"Content-Range", "bytes */" + QByteArray::number(size)});
      send(416, headers, {}, 0);
      s->disconnectFromHost();
      return;
    }
    status = 206;
    headers.push_back({"Content-Range", "bytes " + QByteArray::number(start) + "-" + QByteArray::number(size - 1) + "/" +
                                            QByteArray::number(size)});
  }
  if (r.rangeSupport) headers.push_back({"Accept-Ranges", "bytes"});
  qint64 cut = size;
  while (!r.dropAt.isEmpty() && r.dropAt.first() <= start) r.dropAt.removeFirst();
  if (!r.dropAt.isEmpty()) cut = r.dropAt.takeFirst();
  if (r.stallCount > 0 && r.stallAt > start) {
    --r.stallCount;
    send(status, headers, r.body.mid(start, r.stallAt - start), size - start);
    m_held.push_back(s);  // silent from here on
    return;
  }
  send(status, headers, r.body.mid(start, cut - start), size - start);
  s->disconnectFromHost();
}

}  // namespace alap::test
