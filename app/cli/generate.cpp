// alap-cli generate -m MODEL -p PROMPT [...]: one completion streamed to stdout (only the
// generated text), warnings and timings to stderr. Chat template unless --raw. Not interactive
// (chat.cpp is).
#include <unistd.h>

#include <cstdio>
#include <exception>

#include "cli_common.h"

namespace alap::cli {
namespace {

int run_generate(const std::vector<std::string>& argv) {
  Args args("generate", argv);
  std::string error;
  LoadOptions load = read_load_options(args, error);
  GenerateRequest req = read_generate_options(args, error);
  const std::optional<std::string> prompt = args.value("-p", "--prompt");
  const bool raw = args.flag("--raw");
  if (!args.finish()) return 1;
  if (!error.empty()) return args.fail(error);
  if (load.model.empty()) return args.fail("missing -m MODEL");
  if (!prompt) return args.fail("missing -p PROMPT");
  if (raw && !req.system_prompt.empty()) return args.fail("--system has no effect with --raw");

  try {
    apply_gpu_defaults(load);
    Engine engine;
    engine.load(load.model, load.params);
    for (const auto& w : engine.model_info().warnings) {
      // The chat-template fallback does not matter when no template is used.
      if (!raw || w.find("chat template") == std::string::npos) std::fprintf(stderr, "warning: %s\n", w.c_str());
    }
    print_backend_line(engine);
    if (raw) {
      req.prompt = *prompt;
    } else {
      req.messages.push_back(ChatMessage{"user", *prompt, {}});
    }
    std::atomic<bool> cancel{false};
    InterruptGuard guard(cancel);
    const GenerateResult r = engine.generate(
        req,
        [](std::string_view text) {
          std::fwrite(text.data(), 1, text.size(), stdout);
          std::fflush(stdout);
        },
        cancel);
    if (isatty(STDOUT_FILENO)) std::fputc('\n', stdout);
    std::fflush(stdout);
    std::fprintf(stderr, "%s\n", format_stats(r.stats).c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    return args.fail(e.what());
  }
}

}  // namespace
}  // namespace alap::cli

ALAP_CLI_COMMAND("generate", "generate text from a prompt (streams to stdout)", alap::cli::run_generate);
