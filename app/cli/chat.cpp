// alap-cli chat -m MODEL [options of generate]: an interactive conversation in a terminal. The
// history stays in the conversation (the engine reuses its cached prefix); /exit or Ctrl-D
// leaves, /reset starts over, Ctrl-C stops the reply being written.
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <iostream>

#include "cli_common.h"

namespace alap::cli {
namespace {

int run_chat(const std::vector<std::string>& argv) {
  Args args("chat", argv);
  std::string error;
  LoadOptions load = read_load_options(args, error);
  GenerateRequest req = read_generate_options(args, error);
  const bool show_stats = args.flag("--stats");
  if (!args.finish()) return 1;
  if (!error.empty()) return args.fail(error);
  if (load.model.empty()) return args.fail("missing -m MODEL");

  try {
    Engine engine;
    apply_gpu_defaults(load);
    engine.load(load.model, load.params);
    const ModelInfo info = engine.model_info();
    for (const auto& w : info.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
    print_backend_line(engine);
    const bool tty = isatty(STDIN_FILENO) != 0;
    if (tty) {
      std::fprintf(stderr, "%s: %zu tokens of context, cache %s. /exit or Ctrl-D to leave, /reset to start over.\n",
                   info.name.c_str(), info.n_ctx, cache_mode_name(info.cache_mode));
    }
    std::atomic<bool> cancel{false};
    InterruptGuard guard(cancel);
    std::string line;
    for (;;) {
      if (tty) std::fputs("> ", stderr);
      std::fflush(stderr);
      if (!std::getline(std::cin, line)) {
        if (tty) std::fputc('\n', stderr);
        break;
      }
      // A line ending in a backslash continues on the next one.
      while (!line.empty() && line.back() == '\\') {
        line.back() = '\n';
        std::string more;
        if (!std::getline(std::cin, more)) break;
        line += more;
      }
      if (line == "/exit" || line == "/quit") break;
      if (line == "/reset") {
        req.messages.clear();
        engine.reset_context();
        std::fprintf(stderr, "(new conversation)\n");
        continue;
      }
      if (line.empty()) continue;
      req.messages.push_back(ChatMessage{"user", line, {}});
      cancel.store(false);
      GenerateResult r;
      try {
        r = engine.generate(
            req,
            [](std::string_view text) {
              std::fwrite(text.data(), 1, text.size(), stdout);
              std::fflush(stdout);
            },
            cancel);
      } catch (const EngineError& e) {
        req.messages.pop_back();
        std::fprintf(stderr, "error: %s\n", e.what());
        continue;
      }
      std::fputc('\n', stdout);
      std::fflush(stdout);
      req.messages.push_back(ChatMessage{"assistant", r.text, {}});
      if (r.stats.stop_reason == StopReason::cancelled) std::fprintf(stderr, "(stopped)\n");
      if (r.stats.stop_reason == StopReason::context_full) std::fprintf(stderr, "%s\n", r.stats.message.c_str());
      if (show_stats) std::fprintf(stderr, "%s\n", format_stats(r.stats).c_str());
    }
    return 0;
  } catch (const std::exception& e) {
    return args.fail(e.what());
  }
}

}  // namespace
}  // namespace alap::cli

ALAP_CLI_COMMAND("chat", "interactive chat in a terminal", alap::cli::run_chat);
