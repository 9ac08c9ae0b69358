// Token samplers: repetition penalty, top-k, top-p, min-p, temperature and a seeded draw, applied
// to one row of logits. Pure CPU math on a vector; knows nothing of models, caches or text.
//
//   alap::SamplerParams p;            // defaults: temp 0.8, top-k 40, top-p 0.95, min-p 0.05
//   p.seed = 42;
//   alap::Sampler sampler(p);
//   int32_t id = sampler.sample(logits, recent_tokens);   // logits [n_vocab] fp32
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <stdexcept>
#include <vector>

#include "core/sample/logits_top.h"

namespace alap {

struct SamplerParams {
  float temperature = 0.8f;    // <= 0: greedy (argmax; ties go to the lowest id)
  int32_t top_k = 40;          // <= 0: off
  float top_p = 0.95f;         // >= 1: off
  float min_p = 0.05f;         // <= 0: off
  float repeat_penalty = 1.0f; // 1: off; llama.cpp semantics (divide positive logits, multiply negative)
  int32_t repeat_last_n = 64;  // how many recent tokens the penalties look at; 0: off, -1: all given
  float presence_penalty = 0.0f;   // OpenAI semantics: subtracted once from every recent token's logit
  float frequency_penalty = 0.0f;  // OpenAI semantics: subtracted per occurrence in the recent tokens
  uint64_t seed = 0;
};

// One surviving candidate: token id and its probability after every filter and the temperature.
struct TokenProb {
  int32_t id = 0;
  double p = 0.0;
};

class SamplerError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Checks a parameter set; throws SamplerError naming the bad field (negative penalty, NaN, ...).
void sampler_params_validate(const SamplerParams& params);

// Applies the repetition penalty in place: each distinct id among the last repeat_last_n of
// `recent` (ids outside [0, logits.size()) ignored) has its logit divided by the penalty when
// positive and multiplied by it otherwise.
void sampler_apply_repeat_penalty(std::span<float> logits, std::span<const int32_t> recent, float penalty,
                                  int32_t last_n);
// logit[t] -= presence·[t occurs] + frequency·count(t) over the last last_n recent tokens.
void sampler_apply_presence_penalty(std::span<float> logits, std::span<const int32_t> recent, float presence,
                                    float frequency, int32_t last_n);

// Index of the largest value; ties go to the lowest index. Throws SamplerError on an empty row.
int32_t sampler_argmax(std::span<const float> logits);

// The distribution sample() draws from, in this order: repetition penalty, top-k, top-p (on the
// softmax at temperature 1: the smallest most-probable set whose mass reaches top_p), min-p (keep
// p >= min_p · p_max), temperature, softmax. Sorted by probability, descending (ties: lower id
// first); probabilities sum to 1. With temperature <= 0 it is the single argmax with p = 1.
std::vector<TokenProb> sampler_candidates(const SamplerParams& params, std::span<const float> logits,
                                          std::span<const int32_t> recent);

// The candidates of sampler_candidates(params, row, recent) from the row's best entries alone:
// the same ids in the same order with the same probabilities, bit for bit, when top holds the
// min(top_wanted(params, recent), n_vocab) best. Throws SamplerError as that call would on a NaN,
// and when top is shorter than that (a caller's error).
std::vector<TokenProb> sampler_candidates_top(const SamplerParams& params, const LogitsTop& top,
                                              std::span<const int32_t> recent);

// How many of a row's best entries sampler_candidates_top needs for these parameters and this
// history: top-k (1 when greedy) plus the distinct ids the penalties touch. 0 when the best
// entries cannot decide it and the whole row is needed: top-k off (unless greedy), or a penalty
// that can raise a logit (repeat_penalty < 1, a negative presence or frequency penalty), which
// could lift a token from anywhere in the row.
size_t sampler_top_wanted(const SamplerParams& params, std::span<const int32_t> recent);
// An upper bound of sampler_top_wanted over every history (the penalty window full of distinct
// ids), for sizing a device request once per answer; 0 as above, and when repeat_last_n is -1
// (all tokens so far, unbounded) with a penalty on.
size_t sampler_top_bound(const SamplerParams& params);

// Stateful sampler: the parameters plus a std::mt19937_64 seeded with params.seed, so the same
// seed, logits and history give the same sequence of ids on every platform.
class Sampler {
 public:
  explicit Sampler(const SamplerParams& params = {});

  // Picks the next id from logits [n_vocab]; recent = tokens so far (oldest first) for the penalty.
  int32_t sample(std::span<const float> logits, std::span<const int32_t> recent = {});
  // The same draw from the row's best entries (sampler_candidates_top): the same id as sample()
  // on the whole row, consuming the same engine draws.
  int32_t sample_top(const LogitsTop& top, std::span<const int32_t> recent = {});

  void reseed(uint64_t seed);
  const SamplerParams& params() const { return params_; }

  // A uniform double in [0, 1) from the top 53 bits of one engine draw (platform-independent,
  // unlike std::uniform_real_distribution).
  double next_uniform();

 private:
  int32_t draw(const std::vector<TokenProb>& cands);  // one engine draw unless a single candidate

  SamplerParams params_;
  std::mt19937_64 rng_;
};

}  // namespace alap
