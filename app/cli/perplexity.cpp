// alap-cli perplexity -m MODEL -f FILE [--ctx N] [--cache MODE] [--chunks N] [--threads N]
// [--gpu-layers N] [--json]: perplexity by the convention of DESIGN.md "alap-cli"
// (core/engine/perplexity.h), on the GPU when there is one (as generate's, --gpu-layers 0 for the
// CPU); progress and the backend on stderr. Not kv-compare (kv_compare.cpp), which sets two
// caches against each other.
#include <cstdio>
#include <exception>

#include "cli_common.h"
#include "core/engine/perplexity.h"
#include "core/model/model.h"
#include "core/text/tokenizer.h"

namespace alap::cli {
namespace {

int run_perplexity(const std::vector<std::string>& argv) {
  Args args("perplexity", argv);
  std::string error;
  LoadOptions load = read_load_options(args, error);
  const std::optional<std::string> file = args.value("-f", "--file");
  const std::optional<long long> chunks = args.integer("--chunks");
  const bool json = args.flag("--json");
  if (!args.finish()) return 1;
  if (!error.empty()) return args.fail(error);
  if (load.model.empty()) return args.fail("missing -m MODEL");
  if (!file) return args.fail("missing -f FILE");
  if (chunks && *chunks < 1) return args.fail("--chunks must be at least 1");

  bool progress_shown = false;
  try {
    if (!load.gpu_layers_given) load.params.gpu_layers = default_gpu_layers();
    PerplexityParams p = perplexity_params(load, chunks, load.params.cache_mode);
    p.gpu_layers = load.params.gpu_layers;
    const std::string text = read_text_file(*file);
    const Model model = Model::load(load.model);
    const Tokenizer tok(vocab_from_gguf(model.file()));
    const std::vector<int32_t> ids = perplexity_tokens(tok, text);
    const size_t n_chunks = perplexity_n_chunks(ids.size(), p);
    std::fprintf(stderr, "%s: %zu tokens, %zu windows of %zu, cache %s\n", file->c_str(), ids.size(), n_chunks, p.n_ctx,
                 cache_mode_name(p.mode));
    const PerplexityResult r = perplexity(model, tok.vocab(), ids, p, perplexity_progress(progress_shown));
    std::fprintf(stderr, "\nbackend: %s\n", r.backend.c_str());
    if (json) {
      JsonObject o;
      o.add("ppl", r.ppl).add("tokens", r.n_scored).add("chunks", static_cast<uint64_t>(r.n_chunks));
      o.add("nll", r.nll_mean).add("ctx", static_cast<uint64_t>(p.n_ctx)).add("cache", cache_mode_name(p.mode));
      o.add("seconds", r.seconds).add("backend", r.backend);
      std::printf("%s\n", o.str().c_str());
    } else {
      std::printf("perplexity %.4f (mean NLL %.6f) over %llu tokens: %zu windows of %zu, cache %s, %.1f s\n", r.ppl,
                  r.nll_mean, static_cast<unsigned long long>(r.n_scored), r.n_chunks, p.n_ctx, cache_mode_name(p.mode),
                  r.seconds);
    }
    return 0;
  } catch (const std::exception& e) {
    if (progress_shown) std::fprintf(stderr, "\n");
    return args.fail(e.what());
  }
}

}  // namespace
}  // namespace alap::cli

ALAP_CLI_COMMAND("perplexity", "perplexity of a text file (llama-perplexity convention)", alap::cli::run_perplexity);
