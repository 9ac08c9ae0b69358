// ChatServer: the OpenAI-compatible HTTP server behind `alap-cli serve` (GET /v1/models[/{id}],
// POST /v1/chat/completions with or without server-sent events, GET /health) over one
// EngineInterface. Requests take turns on the engine through a FairQueue; the wire format is
// openai_api.h. Not the command line (app/cli/serve.cpp) and not a client.
//
// HTTP library: cpp-httplib, Debian's libcpp-httplib-dev (0.11.4). Chosen because it is
// well kept upstream and packaged (with security updates) by Debian 12, is small, gives a
// threaded server (a pool of workers, one blocking handler per connection, which suits a
// server whose requests wait their turn on one engine), and streams chunked bodies through
// Response::set_chunked_content_provider, which is what server-sent events need; its DataSink
// write fails once the client is gone, which is how a disconnect cancels generation.
//
//   alap::server::ChatServer server(engine, {.host = "127.0.0.1", .port = 0});
//   int port = server.start();          // bound and accepting; answers 503 until set_ready
//   engine.load(path, params);
//   server.set_ready(alap::server::model_id_from_path(path));
//   ...
//   server.stop();                      // refuses new work, cancels the running generation
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>

#include "app/server/fair_queue.h"
#include "app/server/openai_api.h"
#include "core/engine/engine.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace alap::server {

class ServerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One finished request, as the log line shows it.
struct RequestRecord {
  std::string remote;        // "127.0.0.1:54321"
  std::string method;
  std::string path;
  int status = 0;
  bool stream = false;
  bool generated = false;    // an engine call ran; the fields below are set
  size_t n_prompt_tokens = 0;
  size_t n_generated = 0;
  StopReason stop_reason = StopReason::eog;
  double queue_ms = 0.0;     // waiting for the engine
  double total_ms = 0.0;
  std::string error;         // the error message answered, if any
};
std::string format_record(const RequestRecord& r);  // one line, no newline

struct ServerOptions {
  std::string host = "127.0.0.1";  // loopback unless asked otherwise
  int port = 8080;                 // 0: any free port (start() returns it)
  std::string api_key;             // non-empty: every /v1 request needs "Authorization: Bearer <key>"
  size_t max_queue = 8;            // requests that may wait behind the running one; more get 503
  size_t max_body_bytes = 8u << 20;
  std::chrono::milliseconds queue_poll{250};  // how often a queued stream checks that its client is there
  int io_timeout_s = 30;           // socket read/write timeout
  // Called once per request after its answer is written; default (empty): one line to stderr.
  std::function<void(const RequestRecord&)> on_request;
};

class ChatServer {
 public:
  ChatServer(EngineInterface& engine, ServerOptions options);
  ~ChatServer();  // stop()
  ChatServer(const ChatServer&) = delete;
  ChatServer& operator=(const ChatServer&) = delete;

  // Binds host:port and starts accepting on a thread of its own; returns the bound port. Throws
  // ServerError when the address cannot be bound. Ignores SIGPIPE for the whole process
  // (a vanished client must be a failed write, not a dead server).
  int start();
  // Until set_ready, chat and model requests are answered 503 ("loading").
  void set_ready(const std::string& model_id);
  // The model could not be loaded: requests are answered 503 with this message.
  void set_failed(const std::string& message);
  // Graceful shutdown: refuses new requests, wakes queued ones (503), cancels the running
  // generation (answered 503, or for a stream an error event after the text so far), then
  // joins every thread.
  void stop();

  int port() const { return port_; }
  size_t n_waiting() const { return queue_.n_waiting(); }  // for tests
  bool busy() const { return queue_.busy(); }

 private:
  enum class State { loading, ready, failed };

  void handle_chat(const httplib::Request& req, httplib::Response& res);
  void handle_chat_stream(ChatCompletionRequest request, FairQueue::Entry entry, const httplib::Request& req,
                          httplib::Response& res);
  void handle_models(const httplib::Request& req, httplib::Response& res, bool one);
  bool authorized(const httplib::Request& req, httplib::Response& res);
  bool check_ready(httplib::Response& res);
  void answer_error(httplib::Response& res, int status, const std::string& message, const std::string& param = {},
                    const std::string& code = {});
  uint64_t next_seed();
  // A new completion: a fresh id, the time now and the loaded model's id.
  CompletionMeta next_completion();

  // The running generation's cancel flag (nullptr when idle); stop() sets it.
  void register_running(std::atomic<bool>* cancel);

  EngineInterface& engine_;
  ServerOptions options_;
  FairQueue queue_;
  std::unique_ptr<httplib::Server> http_;
  std::thread listener_;
  int port_ = 0;

  std::atomic<State> state_{State::loading};
  std::atomic<bool> stopping_{false};
  mutable std::mutex mu_;          // guards model_id_, failure_, running_cancel_, rng_
  std::string model_id_;
  int64_t model_created_ = 0;
  std::string failure_;
  std::atomic<bool>* running_cancel_ = nullptr;
  std::mt19937_64 rng_;
};

}  // namespace alap::server
