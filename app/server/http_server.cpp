// ChatServer (http_server.h) on cpp-httplib: routes, auth, the loading/ready state, the fair
// queue around the engine, streaming through a chunked content provider, and the per-request
// log line. The JSON shapes are openai_api.cpp's.
#include "app/server/http_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <csignal>
#include <cstdio>
#include <ctime>

namespace alap::server {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// The record of the request this worker thread is serving. httplib runs the pre-routing
// handler, the route handler, the content provider and the logger of one request on the same
// worker thread, one request at a time.
struct RequestScope {
  RequestRecord record;
  Clock::time_point start;
};
thread_local RequestScope t_scope;

constexpr const char* kJson = "application/json";

bool is_known_path(const std::string& path) {
  return path == "/v1/chat/completions" || path == "/v1/models" || path.rfind("/v1/models/", 0) == 0 ||
         path == "/health";
}

// Holds a queue ticket for a streaming response; the provider releases it when the generation
// ends, whatever copies of the provider httplib keeps.
struct TicketBox {
  std::unique_ptr<FairQueue::Ticket> ticket;
};

}  // namespace

std::string format_record(const RequestRecord& r) {
  char buf[160];
  std::string line = r.method + " " + r.path + " " + std::to_string(r.status) + " " + r.remote;
  if (r.generated) {
    std::snprintf(buf, sizeof buf, " %s prompt=%zu completion=%zu finish=%s queue=%.1fms",
                  r.stream ? "stream" : "whole", r.n_prompt_tokens, r.n_generated, stop_reason_name(r.stop_reason),
                  r.queue_ms);
    line += buf;
  }
  std::snprintf(buf, sizeof buf, " %.1fms", r.total_ms);
  line += buf;
  if (!r.error.empty()) line += " error: " + r.error;
  return line;
}

ChatServer::ChatServer(EngineInterface& engine, ServerOptions options)
    : engine_(engine), options_(std::move(options)), queue_(options_.max_queue), http_(std::make_unique<httplib::Server>()) {
  std::random_device rd;
  rng_.seed((static_cast<uint64_t>(rd()) << 32) ^ rd());

  // Workers: the one generating, the ones waiting in line, and spares so that /v1/models,
  // rejections and idle keep-alive connections are answered while the line is full.
  const size_t n_workers = options_.max_queue + 1 + 8;
  http_->new_task_queue = [n_workers] { return new httplib::ThreadPool(n_workers); };
  http_->set_payload_max_length(options_.max_body_bytes);
  http_->set_read_timeout(options_.io_timeout_s, 0);
  http_->set_write_timeout(options_.io_timeout_s, 0);
  http_->set_keep_alive_timeout(2);  // bounds how long stop() waits for idle keep-alive connections
  // SO_REUSEADDR only: httplib's default also sets SO_REUSEPORT, which would let a second server
  // share a port that is in use instead of failing to start.
  http_->set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });

  http_->set_pre_routing_handler([](const httplib::Request& req, httplib::Response&) {
    t_scope = RequestScope{};
    t_scope.start = Clock::now();
    t_scope.record.remote = req.remote_addr + ":" + std::to_string(req.remote_port);
    t_scope.record.method = req.method;
    t_scope.record.path = req.path;
    return httplib::Server::HandlerResponse::Unhandled;
  });
  http_->set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    RequestRecord& r = t_scope.record;
    if (r.method.empty()) {  // refused before routing (a malformed request line, a huge body)
      r.method = req.method;
      r.path = req.path;
      r.remote = req.remote_addr + ":" + std::to_string(req.remote_port);
    }
    r.status = res.status;
    r.total_ms = t_scope.start == Clock::time_point{} ? 0.0 : ms_since(t_scope.start);
    if (options_.on_request) {
      options_.on_request(r);
    } else {
      std::fprintf(stderr, "serve: %s\n", format_record(r).c_str());
    }
    t_scope = RequestScope{};  // a request refused before routing must not inherit this one's record
  });
  http_->set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;  // a handler already wrote an error body
    std::string message;
    int status = res.status;
    if (status == 404 && is_known_path(req.path)) {
      status = 405;
      res.set_header("Allow", req.path == "/v1/chat/completions" ? "POST" : "GET");
      message = "method " + req.method + " is not allowed on " + req.path;
    } else if (status == 404) {
      message = "Invalid URL (" + req.method + " " + req.path + ")";
    } else if (status == 413) {
      message = "the request body is too large";
    } else {
      message = "the request could not be served";
    }
    res.status = status;
    t_scope.record.error = message;
    res.set_content(error_json(status, message, {}, status == 404 ? "unknown_url" : ""), kJson);
  });
  http_->set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string message = "internal error";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      message = e.what();
    } catch (...) {
    }
    res.status = 500;
    t_scope.record.error = message;
    res.set_content(error_json(500, message), kJson);
  });

  http_->Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) { handle_chat(req, res); });
  http_->Get("/v1/models", [this](const httplib::Request& req, httplib::Response& res) { handle_models(req, res, false); });
  http_->Get(R"(/v1/models/(.+))", [this](const httplib::Request& req, httplib::Response& res) { handle_models(req, res, true); });
  http_->Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    const State s = state_.load();
    res.status = s == State::ready ? 200 : 503;
    res.set_content(s == State::ready ? R"({"status":"ok"})" : s == State::loading ? R"({"status":"loading"})"
                                                                                   : R"({"status":"failed"})",
                    kJson);
  });
}

ChatServer::~ChatServer() { stop(); }

int ChatServer::start() {
  if (listener_.joinable()) throw ServerError("serve: the server is already started");
  std::signal(SIGPIPE, SIG_IGN);
  if (options_.port == 0) {
    port_ = http_->bind_to_any_port(options_.host);
    if (port_ <= 0) throw ServerError("serve: cannot listen on " + options_.host + " (any port)");
  } else {
    if (options_.port < 0 || options_.port > 65535) {
      throw ServerError("serve: port " + std::to_string(options_.port) + " is out of range");
    }
    if (!http_->bind_to_port(options_.host, options_.port)) {
      throw ServerError("serve: cannot listen on " + options_.host + ":" + std::to_string(options_.port) +
                        " (in use, or not an address of this machine)");
    }
    port_ = options_.port;
  }
  listener_ = std::thread([this] { http_->listen_after_bind(); });
  return port_;
}

void ChatServer::set_ready(const std::string& model_id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    model_id_ = model_id;
    model_created_ = static_cast<int64_t>(std::time(nullptr));
  }
  state_.store(State::ready);
}

void ChatServer::set_failed(const std::string& message) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    failure_ = message;
  }
  state_.store(State::failed);
}

void ChatServer::stop() {
  if (!stopping_.exchange(true)) {
    queue_.close();
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (running_cancel_) running_cancel_->store(true);
    }
    http_->stop();
  }
  if (listener_.joinable() && listener_.get_id() != std::this_thread::get_id()) listener_.join();
}

void ChatServer::register_running(std::atomic<bool>* cancel) {
  std::lock_guard<std::mutex> lock(mu_);
  running_cancel_ = cancel;
  if (cancel && stopping_.load()) cancel->store(true);
}

uint64_t ChatServer::next_seed() {
  std::lock_guard<std::mutex> lock(mu_);
  return rng_();
}

CompletionMeta ChatServer::next_completion() {
  CompletionMeta meta;
  meta.created = static_cast<int64_t>(std::time(nullptr));
  std::lock_guard<std::mutex> lock(mu_);
  meta.id = completion_id(rng_);
  meta.model = model_id_;
  return meta;
}

void ChatServer::answer_error(httplib::Response& res, int status, const std::string& message, const std::string& param,
                              const std::string& code) {
  res.status = status;
  t_scope.record.error = message;
  res.set_content(error_json(status, message, param, code), kJson);
}

bool ChatServer::authorized(const httplib::Request& req, httplib::Response& res) {
  if (options_.api_key.empty()) return true;
  const std::string header = req.get_header_value("Authorization");
  if (bearer_matches(header, options_.api_key)) return true;
  res.set_header("WWW-Authenticate", "Bearer");
  answer_error(res, 401,
               header.empty() ? "missing API key: send the header 'Authorization: Bearer <key>'" : "incorrect API key",
               {}, "invalid_api_key");
  return false;
}

bool ChatServer::check_ready(httplib::Response& res) {
  switch (state_.load()) {
    case State::ready:
      return true;
    case State::loading:
      res.set_header("Retry-After", "2");
      answer_error(res, 503, "the model is still loading; retry shortly", {}, "model_loading");
      return false;
    case State::failed:
      break;
  }
  std::string failure;
  {
    std::lock_guard<std::mutex> lock(mu_);
    failure = failure_;
  }
  answer_error(res, 503, "the model failed to load: " + failure, {}, "model_load_failed");
  return false;
}

void ChatServer::handle_models(const httplib::Request& req, httplib::Response& res, bool one) {
  if (!authorized(req, res) || !check_ready(res)) return;
  std::string id;
  int64_t created = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    id = model_id_;
    created = model_created_;
  }
  if (!one) {
    res.set_content(models_json(id, created), kJson);
    return;
  }
  const std::string asked = req.matches[1].str();
  if (asked != id) {
    answer_error(res, 404, "the model '" + asked + "' does not exist; this server serves '" + id + "'", "model",
                 "model_not_found");
    return;
  }
  res.set_content(model_json(id, created), kJson);
}

void ChatServer::handle_chat(const httplib::Request& req, httplib::Response& res) {
  if (!authorized(req, res) || !check_ready(res)) return;
  ChatCompletionRequest request;
  try {
    request = parse_chat_request(req.body, next_seed());
  } catch (const ApiError& e) {
    answer_error(res, e.status(), e.what(), e.param(), e.code());
    return;
  }
  RequestRecord& rec = t_scope.record;
  rec.stream = request.stream;

  FairQueue::Entry entry = queue_.enter();
  if (entry.admit == FairQueue::Admit::full) {
    res.set_header("Retry-After", "1");
    answer_error(res, 503,
                 "the server is busy: " + std::to_string(queue_.max_waiting()) +
                     " requests are already waiting for the model; retry later",
                 {}, "queue_full");
    return;
  }
  if (entry.admit == FairQueue::Admit::closed) {
    answer_error(res, 503, "the server is shutting down", {}, "shutting_down");
    return;
  }
  if (request.stream) {
    handle_chat_stream(std::move(request), std::move(entry), req, res);
    return;
  }

  // Whole answer: wait in line on this worker, generate, answer. (httplib does not let a handler
  // see its socket, so a client that leaves is noticed only when the answer is written.)
  const auto t_queue = Clock::now();
  const FairQueue::Wait w = entry.ticket->wait([this] { return stopping_.load(); }, options_.queue_poll);
  rec.queue_ms = ms_since(t_queue);
  if (w != FairQueue::Wait::turn) {
    answer_error(res, 503, "the server is shutting down", {}, "shutting_down");
    return;
  }
  const CompletionMeta meta = next_completion();
  std::atomic<bool> cancel{false};
  register_running(&cancel);
  GenerateResult result;
  std::string error;
  try {
    result = engine_.generate(request.generate, {}, cancel);
  } catch (const std::exception& e) {
    error = e.what();
  }
  register_running(nullptr);
  entry.ticket.reset();  // the next request may start while this answer is written
  if (!error.empty()) {
    answer_error(res, 500, error, {}, "engine_error");
    return;
  }
  rec.generated = true;
  rec.n_prompt_tokens = result.stats.n_prompt_tokens;
  rec.n_generated = result.stats.n_generated;
  rec.stop_reason = result.stats.stop_reason;
  if (result.stats.stop_reason == StopReason::cancelled) {  // only stop() cancels a whole answer
    answer_error(res, 503, "the server is shutting down; the answer was cut short", {}, "shutting_down");
    return;
  }
  res.set_content(completion_json(meta, result), kJson);
}

void ChatServer::handle_chat_stream(ChatCompletionRequest request, FairQueue::Entry entry, const httplib::Request&,
                                    httplib::Response& res) {
  auto box = std::make_shared<TicketBox>();
  box->ticket = std::move(entry.ticket);
  auto shared_request = std::make_shared<ChatCompletionRequest>(std::move(request));
  res.status = 200;
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  res.set_chunked_content_provider(
      "text/event-stream",
      [this, box, shared_request](size_t, httplib::DataSink& sink) -> bool {
        RequestRecord& rec = t_scope.record;
        const ChatCompletionRequest& rq = *shared_request;
        bool client_gone = false;
        auto send = [&](const std::string& bytes) {
          if (client_gone) return false;
          if (!sink.write(bytes.data(), bytes.size())) client_gone = true;
          return !client_gone;
        };

        // Wait in line; a comment every poll is both a keep-alive and the disconnect probe.
        const auto t_queue = Clock::now();
        const FairQueue::Wait w = box->ticket->wait(
            [&] { return stopping_.load() || !send(sse_comment("waiting for the model")); }, options_.queue_poll);
        rec.queue_ms = ms_since(t_queue);
        if (w != FairQueue::Wait::turn) {
          box->ticket.reset();
          rec.error = client_gone ? "client left while queued" : "the server is shutting down";
          if (client_gone) return false;
          send(sse_event(error_json(503, "the server is shutting down", {}, "shutting_down")));
          sink.done();
          return true;
        }

        const CompletionMeta meta = next_completion();
        std::atomic<bool> cancel{false};
        register_running(&cancel);
        GenerateResult result;
        std::string error;
        if (send(sse_event(chunk_role_json(meta, rq.include_usage)))) {
          try {
            result = engine_.generate(
                rq.generate,
                [&](std::string_view text) {
                  if (!send(sse_event(chunk_content_json(meta, text, rq.include_usage)))) cancel.store(true);
                },
                cancel);
          } catch (const std::exception& e) {
            error = e.what();
          }
        }
        register_running(nullptr);
        box->ticket.reset();

        rec.generated = error.empty();
        rec.n_prompt_tokens = result.stats.n_prompt_tokens;
        rec.n_generated = result.stats.n_generated;
        rec.stop_reason = result.stats.stop_reason;
        if (client_gone) {
          rec.error = "client left; generation cancelled";
          return false;
        }
        if (!error.empty()) {
          // The 200 status is already sent: the error travels as an event, as OpenAI does.
          rec.error = error;
          send(sse_event(error_json(500, error, {}, "engine_error")));
          sink.done();
          return true;
        }
        if (result.stats.stop_reason == StopReason::cancelled) {
          // stop() cut it short: say so rather than pretend the model finished.
          rec.error = "cancelled by shutdown";
          send(sse_event(error_json(503, "the server is shutting down; the answer was cut short", {}, "shutting_down")));
          sink.done();
          return true;
        }
        send(sse_event(chunk_finish_json(meta, result.stats.stop_reason, rq.include_usage)));
        if (rq.include_usage) send(sse_event(usage_chunk_json(meta, result.stats)));
        send(sse_done());
        if (client_gone) return false;
        sink.done();
        return true;
      });
}

}  // namespace alap::server
