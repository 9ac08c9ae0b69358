// alap-cli kv-compare -m MODEL -f FILE --cache k8|k8v8 [--ctx N] [--chunks N] [--threads N] [--json]:
// runs the f16 cache and MODE over the same windows; both perplexities, mean and max
// KL(p_f16 ‖ p_mode), top-1 agreement (core/engine/perplexity.h), on the CPU. Not perplexity alone.
#include <cstdio>
#include <exception>

#include "cli_common.h"
#include "core/engine/perplexity.h"
#include "core/model/model.h"
#include "core/text/tokenizer.h"

namespace alap::cli {
namespace {

int run_kv_compare(const std::vector<std::string>& argv) {
  Args args("kv-compare", argv);
  std::string error;
  const std::optional<std::string> cache = args.value("--cache");
  LoadOptions load = read_load_options(args, error);
  const std::optional<std::string> file = args.value("-f", "--file");
  const std::optional<long long> chunks = args.integer("--chunks");
  const bool json = args.flag("--json");
  if (!args.finish()) return 1;
  if (!error.empty()) return args.fail(error);
  if (load.model.empty()) return args.fail("missing -m MODEL");
  if (!file) return args.fail("missing -f FILE");
  if (!cache) return args.fail("missing --cache k8|k8v8");
  const std::optional<CacheMode> mode = parse_cache_mode(*cache);
  if (!mode || *mode == CacheMode::f16) return args.fail("--cache must be k8 or k8v8, not '" + *cache + "'");
  if (chunks && *chunks < 1) return args.fail("--chunks must be at least 1");
  // Both caches must run the same layers on the same device for their KL to measure the cache
  // alone, so kv-compare stays on the CPU (perplexity takes the GPU).
  if (load.gpu_layers_given && load.params.gpu_layers != 0) {
    std::fprintf(stderr, "kv-compare runs on the CPU: --gpu-layers is not used\n");
  }

  bool progress_shown = false;
  try {
    const PerplexityParams p = perplexity_params(load, chunks, *mode);
    const std::string text = read_text_file(*file);
    const Model model = Model::load(load.model);
    const Tokenizer tok(vocab_from_gguf(model.file()));
    const std::vector<int32_t> ids = perplexity_tokens(tok, text);
    std::fprintf(stderr, "%s: %zu tokens, %zu windows of %zu, f16 against %s\n", file->c_str(), ids.size(),
                 perplexity_n_chunks(ids.size(), p), p.n_ctx, cache_mode_name(p.mode));
    const KvCompareResult r = kv_compare(model, tok.vocab(), ids, p, perplexity_progress(progress_shown));
    std::fprintf(stderr, "\n");
    if (json) {
      JsonObject o;
      o.add("ppl_f16", r.ppl_f16).add("ppl_mode", r.ppl_mode).add("kl_mean", r.kl_mean).add("kl_max", r.kl_max);
      o.add("top1_agreement", r.top1_agreement).add("tokens", r.n_scored);
      o.add("chunks", static_cast<uint64_t>(r.n_chunks)).add("ctx", static_cast<uint64_t>(p.n_ctx));
      o.add("cache", cache_mode_name(p.mode)).add("seconds", r.seconds);
      std::printf("%s\n", o.str().c_str());
    } else {
      std::printf("ppl f16 %.4f, %s %.4f | KL mean %.3e max %.3e | top-1 agreement %.3f%% | %llu tokens, %zu windows "
                  "of %zu, %.1f s\n",
                  r.ppl_f16, cache_mode_name(p.mode), r.ppl_mode, r.kl_mean, r.kl_max, 100.0 * r.top1_agreement,
                  static_cast<unsigned long long>(r.n_scored), r.n_chunks, p.n_ctx, r.seconds);
    }
    return 0;
  } catch (const std::exception& e) {
    if (progress_shown) std::fprintf(stderr, "\n");
    return args.fail(e.what());
  }
}

}  // namespace
}  // namespace alap::cli

ALAP_CLI_COMMAND("kv-compare", "perplexity and KL divergence of a packed KV cache against f16", alap::cli::run_kv_compare);
