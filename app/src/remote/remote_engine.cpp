// RemoteEngine and RoutingEngine: one blocking HTTP exchange per call, driven by a local
// QEventLoop on the calling thread; a 10 ms timer watches the cancel flag and the stall clock.
#include "remote/remote_engine.h"

#include <QElapsedTimer>
#include <QEventLoop>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QTimer>
#include <QUrl>
#include <functional>

namespace alap::app {
namespace {

struct Exchange {
  int status = 0;
  QByteArray errorBody;  // the body of a non-200 answer
  QNetworkReply::NetworkError error = QNetworkReply::NoError;
  QString errorString;
  bool cancelled = false;
  bool stalled = false;
};

// Sends one request and runs a local event loop until it ends. onData receives the body of a 200
// answer as it arrives and returns false to end the exchange early (the request is aborted).
Exchange exchange(const QNetworkRequest& request, const QByteArray* post, const std::atomic<bool>* cancel, int stallMs,
                  const std::function<bool(const QByteArray&)>& onData) {
  QNetworkAccessManager nam;
  QNetworkReply* reply = post ? nam.post(request, *post) : nam.get(request);
  Exchange ex;
  bool stop = false;
  QEventLoop loop;
  QElapsedTimer sinceByte;
  sinceByte.start();
  QObject::connect(reply, &QNetworkReply::readyRead, &loop, [&] {
    if (stop) return;
    sinceByte.restart();
    ex.status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    const QByteArray data = reply->readAll();
    if (ex.status != 200) {
      if (ex.errorBody.size() < (1 << 16)) ex.errorBody += data;
      return;
    }
    if (onData && !onData(data)) {
      stop = true;
      reply->abort();
    }
  });
  QTimer watch;
  watch.setInterval(10);
  QObject::connect(&watch, &QTimer::timeout, &loop, [&] {
    if (stop || reply->isFinished()) return;
    if (cancel && cancel->load()) {
      ex.cancelled = stop = true;
      reply->abort();
    } else if (sinceByte.elapsed() > stallMs) {
      ex.stalled = stop = true;
      reply->abort();
    }
  });
  QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
  watch.start();
  if (!reply->isFinished()) loop.exec();
  watch.stop();
  if (ex.status == 0) ex.status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
  if (!stop) {
    const QByteArray rest = reply->readAll();
    if (ex.status == 200 && onData && !rest.isEmpty()) onData(rest);
    else if (ex.status != 200) ex.errorBody += rest;
    ex.error = reply->error();
    ex.errorString = reply->errorString();
  }
  delete reply;
  return ex;
}

QString serverMessage(const QByteArray& body) {
  const QJsonObject root = QJsonDocument::fromJson(body).object();
  const QJsonValue error = root.value(QStringLiteral("error"));
  if (error.isObject()) return error.toObject().value(QStringLiteral("message")).toString();
  if (error.isString()) return error.toString();
  return QString::fromUtf8(body.left(200)).trimmed();
}

// One readable line for an exchange that did not end with a 200 answer.
[[noreturn]] void throwFailure(const Exchange& ex, const QString& url, int stallMs) {
  if (ex.stalled) {
    throw alap::EngineError(QStringLiteral("The remote server at %1 sent nothing for %2 s.")
                                .arg(url).arg(stallMs / 1000).toStdString());
  }
  if (ex.status != 0 && ex.status != 200) {
    const QString msg = serverMessage(ex.errorBody);
    QString what;
    switch (ex.status) {
      case 401: what = QStringLiteral("the remote server wants a valid API key"); break;
      case 403: what = QStringLiteral("the remote server refused access"); break;
      case 404: what = QStringLiteral("the remote server has no such model or route"); break;
      case 503: what = QStringLiteral("the remote server is busy or still loading its model"); break;
      default: what = QStringLiteral("the remote server answered with an error"); break;
    }
    throw alap::EngineError(QStringLiteral("%1 (HTTP %2)%3").arg(what).arg(ex.status)
                                .arg(msg.isEmpty() ? QString() : QStringLiteral(": ") + msg).toStdString());
  }
  QString what;
  switch (ex.error) {
    case QNetworkReply::ConnectionRefusedError:
      what = QStringLiteral("The remote server at %1 refused the connection (is it running?)").arg(url);
      break;
    case QNetworkReply::HostNotFoundError:
      what = QStringLiteral("The host of %1 was not found (check the address and the network).").arg(url);
      break;
    case QNetworkReply::TimeoutError:
      what = QStringLiteral("The remote server at %1 did not answer in time.").arg(url);
      break;
    case QNetworkReply::RemoteHostClosedError:
      what = QStringLiteral("The remote server at %1 closed the connection.").arg(url);
      break;
    case QNetworkReply::SslHandshakeFailedError:
      what = QStringLiteral("The TLS certificate of %1 could not be verified: %2").arg(url, ex.errorString);
      break;
    default:
      what = QStringLiteral("Could not reach the remote server at %1: %2").arg(url, ex.errorString);
      break;
  }
  throw alap::EngineError(what.toStdString());
}

// timeoutMs bounds the wait for any byte (QNetworkRequest's transfer timeout); 0: only the stall clock.
QNetworkRequest makeRequest(const QString& url, const RemoteConfig& c, int timeoutMs) {
  QNetworkRequest r{QUrl(url)};
  r.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
  r.setRawHeader("Accept", "application/json, text/event-stream");
  if (!c.apiKey.isEmpty()) r.setRawHeader("Authorization", "Bearer " + c.apiKey.toUtf8());
  r.setAttribute(QNetworkRequest::RedirectPolicyAttribute, QNetworkRequest::NoLessSafeRedirectPolicy);
  if (timeoutMs > 0) r.setTransferTimeout(timeoutMs);
  return r;
}

alap::StopReason finishReason(const QString& r) {
  if (r == QLatin1String("length")) return alap::StopReason::max_tokens;
  return alap::StopReason::eog;
}

}  // namespace

void RemoteEngine::setConfig(const RemoteConfig& config) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_config = config;
}

RemoteConfig RemoteEngine::config() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_config;
}

QString RemoteEngine::apiBase(const QString& baseUrl) {
  QString s = baseUrl.trimmed();
  while (s.endsWith(QLatin1Char('/'))) s.chop(1);
  const QUrl url(s);
  if (!url.isValid() || url.host().isEmpty()) return {};
  if (url.scheme() != QLatin1String("http") && url.scheme() != QLatin1String("https")) return {};
  if (!s.endsWith(QLatin1String("/v1"))) s += QStringLiteral("/v1");
  return s;
}

void RemoteEngine::load(const std::filesystem::path&, const alap::LoadParams&, const alap::LoadProgress& progress,
                        const std::atomic<bool>* cancel) {
  unload();
  const RemoteConfig c = config();
  const QString base = apiBase(c.baseUrl);
  if (base.isEmpty()) {
    throw alap::EngineError("The remote server address '" + c.baseUrl.toStdString() +
                            "' is not an http:// or https:// URL with a host.");
  }
  if (progress) progress(0.0f, "connecting");
  QByteArray body;
  const Exchange ex = exchange(makeRequest(base + QStringLiteral("/models"), c, c.connectTimeoutMs), nullptr, cancel, c.stallTimeoutMs,
                               [&](const QByteArray& d) {
                                 body += d;
                                 return body.size() < (8 << 20);
                               });
  if (ex.cancelled) throw alap::EngineError("Connecting to the remote server was cancelled.");
  if (ex.status != 200 || ex.error != QNetworkReply::NoError) throwFailure(ex, base, c.stallTimeoutMs);
  QStringList ids;
  for (const QJsonValue& v : QJsonDocument::fromJson(body).object().value(QStringLiteral("data")).toArray()) {
    const QString id = v.toObject().value(QStringLiteral("id")).toString();
    if (!id.isEmpty()) ids << id;
  }
  QString model = c.model.trimmed();
  if (model.isEmpty()) {
    if (ids.isEmpty()) throw alap::EngineError("The remote server at " + base.toStdString() + " lists no model.");
    model = ids.first();
  } else if (!ids.isEmpty() && !ids.contains(model)) {
    throw alap::EngineError(QStringLiteral("The remote server at %1 does not offer the model '%2' (it offers: %3).")
                                .arg(base, model, ids.join(QStringLiteral(", "))).toStdString());
  }
  m_active = c;
  m_base = base;
  m_model = model;
  m_loaded = true;
  if (progress) progress(1.0f, "connected");
}

void RemoteEngine::unload() {
  m_loaded = false;
  m_model.clear();
  m_base.clear();
}

alap::ModelInfo RemoteEngine::model_info() const {
  if (!m_loaded) throw alap::EngineError("No remote model is connected.");
  alap::ModelInfo info;
  info.path = (QString::fromLatin1(kPathPrefix) + m_model + QLatin1Char('@') + m_base).toStdString();
  // The name is what the chat stores with each answer: it says which server produced it.
  info.name = (m_model + QStringLiteral(" @ ") + QUrl(m_base).authority()).toStdString();
  info.architecture = "remote";
  return info;
}

alap::GenerateResult RemoteEngine::generate(const alap::GenerateRequest& request, const alap::TokenCallback& on_text,
                                            const std::atomic<bool>& cancel) {
  if (!m_loaded) throw alap::EngineError("No remote model is connected.");
  QJsonArray messages;
  if (!request.system_prompt.empty()) {
    messages.append(QJsonObject{{QStringLiteral("role"), QStringLiteral("system")},
                                {QStringLiteral("content"), QString::fromStdString(request.system_prompt)}});
  }
  for (const alap::ChatMessage& m : request.messages) {
    messages.append(QJsonObject{{QStringLiteral("role"), QString::fromStdString(m.role)},
                                {QStringLiteral("content"), QString::fromStdString(m.content)}});
  }
  if (messages.isEmpty()) {
    messages.append(QJsonObject{{QStringLiteral("role"), QStringLiteral("user")},
                                {QStringLiteral("content"), QString::fromStdString(request.prompt)}});
  }
  QJsonObject body{{QStringLiteral("model"), m_model},
                   {QStringLiteral("messages"), messages},
                   {QStringLiteral("stream"), true},
                   {QStringLiteral("temperature"), double(request.sampling.temperature)},
                   {QStringLiteral("top_p"), double(qBound(0.0f, request.sampling.top_p, 1.0f))}};
  if (request.max_tokens > 0) body.insert(QStringLiteral("max_tokens"), request.max_tokens);
  if (request.sampling.seed != 0) body.insert(QStringLiteral("seed"), qint64(request.sampling.seed & 0x7fffffffffffffffULL));
  if (!request.stop.empty()) {
    QJsonArray stop;
    for (const std::string& s : request.stop) stop.append(QString::fromStdString(s));
    body.insert(QStringLiteral("stop"), stop);
  }
  const QByteArray post = QJsonDocument(body).toJson(QJsonDocument::Compact);

  alap::GenerateResult result;
  QElapsedTimer clock;
  clock.start();
  double firstMs = -1.0;
  bool done = false;
  QString remoteError;
  QByteArray buffer;
  QByteArray plainBody;  // a server that ignored "stream": the whole JSON answer
  auto handleData = [&](const QByteArray& payload) -> bool {
    if (payload == "[DONE]") return !(done = true);
    const QJsonObject obj = QJsonDocument::fromJson(payload).object();
    if (obj.contains(QStringLiteral("error"))) {
      remoteError = serverMessage(payload);
      return false;
    }
    const QJsonObject usage = obj.value(QStringLiteral("usage")).toObject();
    if (!usage.isEmpty()) {
      result.stats.n_prompt_tokens = size_t(usage.value(QStringLiteral("prompt_tokens")).toInteger());
    }
    const QJsonArray choices = obj.value(QStringLiteral("choices")).toArray();
    if (choices.isEmpty()) return true;
    const QJsonObject choice = choices.first().toObject();
    const QString text = choice.value(QStringLiteral("delta")).toObject().value(QStringLiteral("content")).toString();
    if (!text.isEmpty()) {
      if (firstMs < 0) firstMs = double(clock.nsecsElapsed()) / 1e6;
      const std::string utf8 = text.toStdString();
      result.text += utf8;
      ++result.stats.n_generated;
      if (on_text) on_text(utf8);
    }
    const QJsonValue reason = choice.value(QStringLiteral("finish_reason"));
    if (reason.isString()) result.stats.stop_reason = finishReason(reason.toString());
    return !cancel.load();
  };
  auto onData = [&](const QByteArray& data) -> bool {
    buffer += data;
    buffer.replace("\r\n", "\n");
    if (buffer.startsWith('{')) {  // not an event stream
      plainBody = buffer;
      return buffer.size() < (32 << 20);
    }
    qsizetype end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const QByteArray event = buffer.left(end);
      buffer.remove(0, end + 2);
      for (const QByteArray& line : event.split('\n')) {
        if (!line.startsWith("data:")) continue;  // comments, event names, ids
        if (!handleData(line.mid(5).trimmed())) return false;
      }
    }
    return true;
  };
  const QString url = m_base + QStringLiteral("/chat/completions");
  const Exchange ex = exchange(makeRequest(url, m_active, 0), &post, &cancel, m_active.stallTimeoutMs, onData);
  const double totalMs = double(clock.nsecsElapsed()) / 1e6;
  if (!remoteError.isEmpty()) throw alap::EngineError("The remote server stopped with an error: " + remoteError.toStdString());
  if (ex.cancelled || (cancel.load() && !done)) {
    result.stats.stop_reason = alap::StopReason::cancelled;
  } else if (!plainBody.isEmpty() && result.text.empty()) {
    const QJsonObject choice =
        QJsonDocument::fromJson(plainBody).object().value(QStringLiteral("choices")).toArray().first().toObject();
    const std::string text =
        choice.value(QStringLiteral("message")).toObject().value(QStringLiteral("content")).toString().toStdString();
    result.text = text;
    result.stats.n_generated = text.empty() ? 0 : 1;
    if (on_text && !text.empty()) on_text(text);
    result.stats.stop_reason = finishReason(choice.value(QStringLiteral("finish_reason")).toString());
  } else if (!done && (ex.status != 200 || ex.error != QNetworkReply::NoError || ex.stalled)) {
    throwFailure(ex, m_base, m_active.stallTimeoutMs);
  }
  result.stats.ttft_ms = firstMs < 0 ? totalMs : firstMs;
  result.stats.prefill_ms = result.stats.ttft_ms;
  result.stats.decode_ms = totalMs - result.stats.ttft_ms;
  result.stats.decode_tps =
      result.stats.decode_ms > 0 && result.stats.n_generated > 1
          ? double(result.stats.n_generated - 1) / (result.stats.decode_ms / 1000.0) : 0.0;
  return result;
}

RoutingEngine::RoutingEngine(std::unique_ptr<alap::EngineInterface> local, std::shared_ptr<RemoteEngine> remote)
    : m_local(std::move(local)), m_remote(std::move(remote)) {}

void RoutingEngine::load(const std::filesystem::path& path, const alap::LoadParams& params,
                         const alap::LoadProgress& progress, const std::atomic<bool>* cancel) {
  const bool remote = path.string().rfind(RemoteEngine::kPathPrefix, 0) == 0;
  current().unload();
  m_useRemote = remote;
  current().load(path, params, progress, cancel);
}

void RoutingEngine::set_memory_callback(alap::MemoryCallback callback) {
  m_local->set_memory_callback(callback);
  m_remote->set_memory_callback(std::move(callback));
}

}  // namespace alap::app
