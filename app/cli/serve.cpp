// alap-cli serve -m MODEL [--host 127.0.0.1] [--port 8080] [...]: the OpenAI-compatible server
// (app/server/http_server.h) over one Engine. Listens first (503 while the model loads), then
// loads; SIGINT/SIGTERM stop it gracefully. Not the server logic itself (app/server/).
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <thread>

#include "app/server/http_server.h"
#include "cli_common.h"

namespace alap::cli {
namespace {

constexpr const char* kUsage =
    "usage: alap-cli serve -m MODEL [--host 127.0.0.1] [--port 8080] [--api-key KEY] [--max-queue 8]\n"
    "                      [--ctx N] [--cache f16|k8|k8v8] [--threads N] [--gpu-layers N]\n"
    "  --port 0 picks a free port; the key may also come from ALAP_API_KEY.\n"
    "  Without --threads, one thread per physical core this process may run on.\n";

bool is_loopback(const std::string& host) {
  return host == "127.0.0.1" || host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

// SIGINT and SIGTERM are blocked in every thread (set before any thread starts) and taken here
// with sigtimedwait, so the handler-free main thread can stop the server in an orderly way.
class SignalWaiter {
 public:
  SignalWaiter() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
  }
  ~SignalWaiter() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  SignalWaiter(const SignalWaiter&) = delete;
  SignalWaiter& operator=(const SignalWaiter&) = delete;

  // The signal number, or 0 after `ms` without one.
  int wait(long ms) {
    timespec ts{ms / 1000, (ms % 1000) * 1000000L};
    const int sig = sigtimedwait(&set_, nullptr, &ts);
    return sig > 0 ? sig : 0;
  }

 private:
  sigset_t set_;
  sigset_t old_;
};

int run_serve(const std::vector<std::string>& argv) {
  Args args("serve", argv);
  std::string error;
  LoadOptions load = read_load_options(args, error);
  server::ServerOptions options;
  if (auto h = args.value("--host")) options.host = *h;
  if (auto p = args.integer("--port")) {
    if (*p < 0 || *p > 65535) error = error.empty() ? "--port must be in 0..65535" : error;
    options.port = static_cast<int>(*p);
  }
  if (auto k = args.value("--api-key")) options.api_key = *k;
  if (auto q = args.integer("--max-queue")) {
    if (*q < 0 || *q > 1024) error = error.empty() ? "--max-queue must be in 0..1024" : error;
    options.max_queue = static_cast<size_t>(*q);
  }
  const bool help = args.flag("--help") || args.flag("-h");
  if (help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (!args.finish()) return 1;
  if (!error.empty()) return args.fail(error);
  if (load.model.empty()) return args.fail("missing -m MODEL\n" + std::string(kUsage));
  if (options.api_key.empty()) {
    if (const char* env = std::getenv("ALAP_API_KEY"); env != nullptr) options.api_key = env;
  }
  if (!is_loopback(options.host) && options.api_key.empty()) {
    std::fprintf(stderr, "warning: listening on %s without --api-key: anyone who can reach it can use the model\n",
                 options.host.c_str());
  }

  SignalWaiter signals;  // before any thread exists
  Engine engine;
  server::ChatServer server(engine, options);
  int port = 0;
  try {
    port = server.start();
  } catch (const std::exception& e) {
    return args.fail(e.what());
  }
  std::fprintf(stderr, "alap-cli serve: listening on http://%s:%d (loading %s)\n", options.host.c_str(), port,
               load.model.c_str());
  std::fflush(stderr);

  std::atomic<bool> cancel_load{false};
  std::atomic<bool> load_done{false};
  std::string load_error;
  std::thread loader([&] {
    try {
      apply_gpu_defaults(load);
      engine.load(load.model, load.params, {}, &cancel_load);
      for (const auto& w : engine.model_info().warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
      print_backend_line(engine);
      const std::string id = server::model_id_from_path(load.model);
      server.set_ready(id);
      std::fprintf(stderr, "alap-cli serve: model '%s' ready (context %zu, cache %s)\n", id.c_str(),
                   engine.model_info().n_ctx, cache_mode_name(engine.model_info().cache_mode));
    } catch (const std::exception& e) {
      load_error = e.what();
      server.set_failed(load_error);
    }
    load_done.store(true);
  });

  int sig = 0;
  while (sig == 0) {
    sig = signals.wait(200);
    if (load_done.load() && !load_error.empty()) break;
  }
  if (sig != 0) {
    std::fprintf(stderr, "alap-cli serve: %s received, stopping\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    cancel_load.store(true);
  }
  server.stop();
  loader.join();
  if (!load_error.empty() && sig == 0) return args.fail(load_error);
  std::fprintf(stderr, "alap-cli serve: stopped\n");
  return 0;
}

}  // namespace
}  // namespace alap::cli

ALAP_CLI_COMMAND("serve", "OpenAI-compatible HTTP server (/v1/models, /v1/chat/completions)", alap::cli::run_serve);
