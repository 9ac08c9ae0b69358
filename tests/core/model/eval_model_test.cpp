// Greedy decoding of the real alap-eval-30m model (../shared/models) against the PyTorch /
// llama.cpp reference ids, in every cache mode and with the Q8_0 file. Skips when absent.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/model/forward.h"
#include "tests/support/shared_fixtures.h"

namespace alap {
namespace {

// The "greedy_ids" array of the reference JSON (8 prompt ids, then 48 greedy ids).
std::vector<int32_t> read_greedy_ids(const std::filesystem::path& json) {
  std::ifstream in(json);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string s = ss.str();
  size_t p = s.find("\"greedy_ids\"");
  std::vector<int32_t> ids;
  if (p == std::string::npos) return ids;
  p = s.find('[', p);
  const size_t end = s.find(']', p);
  std::string body = s.substr(p + 1, end - p - 1);
  std::replace(body.begin(), body.end(), ',', ' ');
  std::istringstream is(body);
  int32_t v;
  while (is >> v) ids.push_back(v);
  return ids;
}

int32_t argmax(std::span<const float> x) {
  return static_cast<int32_t>(std::max_element(x.begin(), x.end()) - x.begin());
}

// Prompt as one batch, then greedy decode of n tokens; returns prompt + generated ids.
std::vector<int32_t> greedy(const Model& model, CacheMode mode, const std::vector<int32_t>& prompt, size_t n,
                            size_t n_threads, double* decode_tps = nullptr) {
  KvCache cache(kv_cache_config(model, mode, 128));
  ThreadPool pool(n_threads);
  Forward fwd(model, 64);
  std::vector<int32_t> ids = prompt;
  int32_t next = argmax(fwd.run(cache, pool, prompt, 0));
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < n; ++i) {
    ids.push_back(next);
    if (i + 1 == n) break;
    next = argmax(fwd.run(cache, pool, std::span<const int32_t>(&next, 1), cache.n_tokens()));
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (decode_tps) *decode_tps = static_cast<double>(n - 1) / s;
  return ids;
}

size_t matching_prefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  return i;
}

class EvalModel : public ::testing::Test {
 protected:
  void check(const char* file, CacheMode mode, bool exact, size_t min_match) {
    ALAP_SHARED_FILE_OR_SKIP(model_path, std::string("models/") + file);
    ALAP_SHARED_FILE_OR_SKIP(ref_path, "models/alap-eval-30m-reference.json");
    const std::vector<int32_t> ref = read_greedy_ids(ref_path);
    ASSERT_EQ(ref.size(), 56u);
    const Model model = Model::load(model_path);
    EXPECT_EQ(model.hparams().n_vocab, 8192);
    EXPECT_EQ(model.hparams().n_head_kv, 2);
    const std::vector<int32_t> prompt(ref.begin(), ref.begin() + 8);
    double tps = 0;
    const std::vector<int32_t> got = greedy(model, mode, prompt, ref.size() - 8, 1, &tps);
    const size_t match = matching_prefix(got, ref) - 8;
    std::printf("[ report ] %s cache %s: %zu/48 greedy tokens match the reference%s (decode %.1f tok/s, 1 thread)\n",
                file, cache_mode_name(mode), match, match == 48 ? " (exact)" : "", tps);
    if (exact) {
      EXPECT_EQ(got, ref);
    } else {
      EXPECT_GE(match, min_match);
    }
  }
};

TEST_F(EvalModel, F16FileF16CacheIsExact) { check("alap-eval-30m-f16.gguf", CacheMode::f16, true, 48); }
TEST_F(EvalModel, F16FileK8Cache) { check("alap-eval-30m-f16.gguf", CacheMode::k8, false, 20); }
TEST_F(EvalModel, F16FileK8V8Cache) { check("alap-eval-30m-f16.gguf", CacheMode::k8v8, false, 20); }
TEST_F(EvalModel, Q8FileF16Cache) { check("alap-eval-30m-q8_0.gguf", CacheMode::f16, false, 8); }

// Two threads must give the same ids as one (rows split, no reduction order change).
TEST_F(EvalModel, TwoThreadsAgreeWithOne) {
  ALAP_SHARED_FILE_OR_SKIP(model_path, "models/alap-eval-30m-f16.gguf");
  ALAP_SHARED_FILE_OR_SKIP(ref_path, "models/alap-eval-30m-reference.json");
  const std::vector<int32_t> ref = read_greedy_ids(ref_path);
  const Model model = Model::load(model_path);
  const std::vector<int32_t> prompt(ref.begin(), ref.begin() + 8);
  double tps = 0;
  EXPECT_EQ(greedy(model, CacheMode::f16, prompt, 48, 2, &tps), ref);
  std::printf("[ report ] f16 file, f16 cache, 2 threads: decode %.1f tok/s\n", tps);
}

}  // namespace
}  // namespace alap
