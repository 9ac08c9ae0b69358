// Sampler implementation: the filter chain of sampler.h on a copy of one logits row, in double
// where probabilities are summed. Not a GPU path: a row is at most a few hundred thousand floats.
#include "core/sample/sampler.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace alap {

namespace {

struct Cand {
  int32_t id;
  float logit;
};

// Higher logit first; equal logits keep the lower id first, so every result is deterministic.
bool cand_before(const Cand& a, const Cand& b) {
  if (a.logit != b.logit) return a.logit > b.logit;
  return a.id < b.id;
}

void check_logits(std::span<const float> logits) {
  if (logits.empty()) throw SamplerError("sampler: empty logits row");
  for (size_t i = 0; i < logits.size(); ++i) {
    if (std::isnan(logits[i])) throw SamplerError("sampler: logit " + std::to_string(i) + " is NaN");
  }
}

}  // namespace

void sampler_params_validate(const SamplerParams& p) {
  if (!std::isfinite(p.temperature)) throw SamplerError("sampler: temperature must be a finite number");
  if (std::isnan(p.top_p)) throw SamplerError("sampler: top_p is NaN");
  if (std::isnan(p.min_p) || p.min_p > 1.0f) throw SamplerError("sampler: min_p must be in [0, 1]");
  if (!std::isfinite(p.repeat_penalty) || p.repeat_penalty <= 0.0f) {
    throw SamplerError("sampler: repeat_penalty must be a positive number");
  }
  if (p.repeat_last_n < -1) throw SamplerError("sampler: repeat_last_n must be -1, 0 or positive");
  if (!std::isfinite(p.presence_penalty) || std::abs(p.presence_penalty) > 2.0f) {
    throw SamplerError("sampler: presence_penalty must be in [-2, 2]");
  }
  if (!std::isfinite(p.frequency_penalty) || std::abs(p.frequency_penalty) > 2.0f) {
    throw SamplerError("sampler: frequency_penalty must be in [-2, 2]");
  }
}

void sampler_apply_presence_penalty(std::span<float> logits, std::span<const int32_t> recent, float presence,
                                    float frequency, int32_t last_n) {
  if ((presence == 0.0f && frequency == 0.0f) || last_n == 0 || recent.empty()) return;
  size_t n = recent.size();
  if (last_n > 0) n = std::min(n, static_cast<size_t>(last_n));
  std::unordered_map<int32_t, int> counts;
  for (const int32_t id : recent.subspan(recent.size() - n)) {
    if (id >= 0 && static_cast<size_t>(id) < logits.size()) ++counts[id];
  }
  for (const auto& [id, count] : counts) {
    logits[static_cast<size_t>(id)] -= presence + frequency * static_cast<float>(count);
  }
}

void sampler_apply_repeat_penalty(std::span<float> logits, std::span<const int32_t> recent, float penalty,
                                  int32_t last_n) {
  if (penalty == 1.0f || last_n == 0 || recent.empty()) return;
  size_t n = recent.size();
  if (last_n > 0) n = std::min(n, static_cast<size_t>(last_n));
  std::unordered_set<int32_t> seen;
  for (const int32_t id : recent.subspan(recent.size() - n)) {
    if (id < 0 || static_cast<size_t>(id) >= logits.size() || !seen.insert(id).second) continue;
    float& l = logits[static_cast<size_t>(id)];
    l = l > 0.0f ? l / penalty : l * penalty;
  }
}

int32_t sampler_argmax(std::span<const float> logits) {
  if (logits.empty()) throw SamplerError("sampler: empty logits row");
  size_t best = 0;
  for (size_t i = 1; i < logits.size(); ++i) {
    if (logits[i] > logits[best]) best = i;
  }
  return static_cast<int32_t>(best);
}

std::vector<TokenProb> sampler_candidates(const SamplerParams& params, std::span<const float> logits,
                                          std::span<const int32_t> recent) {
  check_logits(logits);
  std::vector<float> work(logits.begin(), logits.end());
  sampler_apply_repeat_penalty(work, recent, params.repeat_penalty, params.repeat_last_n);
  sampler_apply_presence_penalty(work, recent, params.presence_penalty, params.frequency_penalty, params.repeat_last_n);

  if (params.temperature <= 0.0f) return {TokenProb{sampler_argmax(work), 1.0}};

  // cands [n] sorted by logit, descending: all of them, or the best top_k.
  std::vector<Cand> cands;
  size_t n = work.size();
  if (params.top_k > 0 && static_cast<size_t>(params.top_k) < n) {
    // One pass keeping the best top_k in a heap whose front is the worst kept: a later id never
    // ranks before an equal logit, so only a strictly larger logit displaces it. (A vocabulary of
    // 150k takes ~0.05 ms here against ~0.2 ms for partial_sort over a copy of every candidate,
    // which mattered beside a GPU decode step of ~1.5 ms.)
    n = static_cast<size_t>(params.top_k);
    cands.reserve(n);
    for (size_t i = 0; i < n; ++i) cands.push_back(Cand{static_cast<int32_t>(i), work[i]});
    std::make_heap(cands.begin(), cands.end(), cand_before);
    float worst = cands.front().logit;
    for (size_t i = n; i < work.size(); ++i) {
      if (!(work[i] > worst)) continue;
      std::pop_heap(cands.begin(), cands.end(), cand_before);
      cands.back() = Cand{static_cast<int32_t>(i), work[i]};
      std::push_heap(cands.begin(), cands.end(), cand_before);
      worst = cands.front().logit;
    }
    std::sort(cands.begin(), cands.end(), cand_before);
  } else {
    cands.resize(n);
    for (size_t i = 0; i < n; ++i) cands[i] = Cand{static_cast<int32_t>(i), work[i]};
    std::sort(cands.begin(), cands.end(), cand_before);
  }
  const double max_logit = cands[0].logit;
  if (!std::isfinite(max_logit)) return {TokenProb{cands[0].id, 1.0}};  // every logit is -inf

  // top-p on the temperature-1 softmax: keep the shortest prefix whose mass reaches top_p.
  if (params.top_p < 1.0f) {
    double total = 0.0;
    for (size_t i = 0; i < n; ++i) total += std::exp(static_cast<double>(cands[i].logit) - max_logit);
    double cum = 0.0;
    size_t keep = n;
    for (size_t i = 0; i < n; ++i) {
      cum += std::exp(static_cast<double>(cands[i].logit) - max_logit) / total;
      if (cum >= static_cast<double>(params.top_p)) {
        keep = i + 1;
        break;
      }
    }
    n = std::max<size_t>(keep, 1);
  }

  // min-p: p_i / p_max = exp(l_i - l_max) >= min_p (normalisation cancels).
  if (params.min_p > 0.0f) {
    size_t keep = 1;
    while (keep < n && std::exp(static_cast<double>(cands[keep].logit) - max_logit) >= static_cast<double>(params.min_p)) {
      ++keep;
    }
    n = keep;
  }

  // Temperature, then softmax over the survivors.
  const double inv_t = 1.0 / static_cast<double>(params.temperature);
  std::vector<TokenProb> out(n);
  double total = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const double e = std::exp((static_cast<double>(cands[i].logit) - max_logit) * inv_t);
    out[i] = TokenProb{cands[i].id, e};
    total += e;
  }
  for (auto& c : out) c.p /= total;
  return out;
}

Sampler::Sampler(const SamplerParams& params) : params_(params), rng_(params.seed) {
  sampler_params_validate(params_);
}

void Sampler::reseed(uint64_t seed) {
  params_.seed = seed;
  rng_.seed(seed);
}

double Sampler::next_uniform() {
  return static_cast<double>(rng_() >> 11) * (1.0 / 9007199254740992.0);  // 2^-53
}

int32_t Sampler::sample(std::span<const float> logits, std::span<const int32_t> recent) {
  const std::vector<TokenProb> cands = sampler_candidates(params_, logits, recent);
  if (cands.size() == 1) return cands[0].id;  // greedy or a single survivor: no draw consumed
  const double u = next_uniform();
  double cum = 0.0;
  for (const auto& c : cands) {
    cum += c.p;
    if (u < cum) return c.id;
  }
  return cands.back().id;  // rounding left u above the last partial sum
}

}  // namespace alap
