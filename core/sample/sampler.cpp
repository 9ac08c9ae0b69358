// Sampler implementation: the filter chain of sampler.h over one logits row, read in place (the
// penalised ids aside), or over the row's best entries that a GPU found (sampler_candidates_top),
// in double where probabilities are summed. Plain CPU code: a row is at most a few hundred
// thousand floats.
#include "core/sample/sampler.h"

#include <algorithm>
#include <cmath>
#include <cstring>
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

// The last `last_n` of `recent` (all when last_n is -1) that the penalties look at.
std::span<const int32_t> penalty_window(std::span<const int32_t> recent, int32_t last_n) {
  size_t n = recent.size();
  if (last_n > 0) n = std::min(n, static_cast<size_t>(last_n));
  return recent.subspan(recent.size() - n);
}

// One logit under the repetition penalty (divided when positive, multiplied otherwise) and under
// the presence and frequency penalties of a token seen `count` times: the arithmetic of the public
// functions below and of the in-place sampler (penalised), written once.
float repeat_penalised(float l, float penalty) { return l > 0.0f ? l / penalty : l * penalty; }
float presence_penalised(float l, float presence, float frequency, size_t count) {
  return l - (presence + frequency * static_cast<float>(count));
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
  std::unordered_map<int32_t, size_t> counts;
  for (const int32_t id : penalty_window(recent, last_n)) {
    if (id >= 0 && static_cast<size_t>(id) < logits.size()) ++counts[id];
  }
  for (const auto& [id, count] : counts) {
    float& l = logits[static_cast<size_t>(id)];
    l = presence_penalised(l, presence, frequency, count);
  }
}

void sampler_apply_repeat_penalty(std::span<float> logits, std::span<const int32_t> recent, float penalty,
                                  int32_t last_n) {
  if (penalty == 1.0f || last_n == 0 || recent.empty()) return;
  std::unordered_set<int32_t> seen;
  for (const int32_t id : penalty_window(recent, last_n)) {
    if (id < 0 || static_cast<size_t>(id) >= logits.size() || !seen.insert(id).second) continue;
    float& l = logits[static_cast<size_t>(id)];
    l = repeat_penalised(l, penalty);
  }
}

namespace {

// Whether any of the 16 values from x is above w or NaN (not <= w) / above w, four lanes at a
// time in GCC's vector extension (portable; GCC left the plain loops scalar inside this file).
using F4 = float __attribute__((vector_size(16)));
using I4 = int32_t __attribute__((vector_size(16)));
inline F4 load4(const float* x) {
  F4 v;
  std::memcpy(&v, x, sizeof v);
  return v;
}
inline bool any_lane(I4 m) { return (m[0] | m[1] | m[2] | m[3]) != 0; }
inline bool any_not_at_most(const float* x, float w) {
  const F4 wv = {w, w, w, w};
  const I4 m = ~(load4(x) <= wv) | ~(load4(x + 4) <= wv) | ~(load4(x + 8) <= wv) | ~(load4(x + 12) <= wv);
  return any_lane(m);
}
inline bool any_above(const float* x, float w) {
  const F4 wv = {w, w, w, w};
  return any_lane((load4(x) > wv) | (load4(x + 4) > wv) | (load4(x + 8) > wv) | (load4(x + 12) > wv));
}

// Whether any penalty is set, and whether one changes a logit for this history.
bool any_penalty(const SamplerParams& p) {
  return p.repeat_penalty != 1.0f || p.presence_penalty != 0.0f || p.frequency_penalty != 0.0f;
}
bool penalties_apply(const SamplerParams& p, std::span<const int32_t> recent) {
  return any_penalty(p) && p.repeat_last_n != 0 && !recent.empty();
}

// The distinct ids of the last `last_n` of `recent` that lie in [0, n_vocab), sorted, each with
// how often it occurs there. Empty when no penalty applies.
std::vector<std::pair<int32_t, size_t>> penalty_counts(size_t n_vocab, std::span<const int32_t> recent,
                                                       const SamplerParams& p) {
  if (!penalties_apply(p, recent)) return {};
  std::vector<int32_t> ids;
  for (const int32_t id : penalty_window(recent, p.repeat_last_n)) {
    if (id >= 0 && static_cast<size_t>(id) < n_vocab) ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  std::vector<std::pair<int32_t, size_t>> out;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j < ids.size() && ids[j] == ids[i]) ++j;
    out.emplace_back(ids[i], j - i);
    i = j;
  }
  return out;
}

// A logit after sampler_apply_repeat_penalty and then sampler_apply_presence_penalty for a token
// seen `count` times (the same float operations in the same order, so the same value).
float penalised_logit(float l, const SamplerParams& p, size_t count) {
  if (p.repeat_penalty != 1.0f) l = repeat_penalised(l, p.repeat_penalty);
  if (p.presence_penalty != 0.0f || p.frequency_penalty != 0.0f) {
    l = presence_penalised(l, p.presence_penalty, p.frequency_penalty, count);
  }
  return l;
}

// The penalised ids of the row with their penalised logits, sorted by id.
std::vector<Cand> penalised(std::span<const float> logits, std::span<const int32_t> recent, const SamplerParams& p) {
  std::vector<Cand> out;
  for (const auto& [id, count] : penalty_counts(logits.size(), recent, p)) {
    out.push_back(Cand{id, penalised_logit(logits[static_cast<size_t>(id)], p, count)});
  }
  return out;
}

// The best k (1 <= k <= logits.size()) of the row, with the logits of the ids in `pen` (sorted by
// id) replaced by theirs, sorted by cand_before; throws on a NaN logit. One pass over the row in
// blocks of 16 that only compares each value with the worst kept one (vectorised by the
// compiler), and looks closer at a block only when one of its values would displace it: the row is
// read once at memory speed, not copied. In the order of ids a later id never ranks before an equal
// logit, so within the pass only a strictly larger logit displaces the worst; the penalised ids,
// skipped there, are offered last with the full order (logit, then id), so the set kept is the k
// best of that order whatever came when, as a full sort would give.
std::vector<Cand> best_k(std::span<const float> logits, size_t k, const std::vector<Cand>& pen) {
  const float* x = logits.data();
  const size_t n = logits.size();
  std::vector<Cand> heap;  // front: the worst kept (a max-heap under cand_before)
  heap.reserve(k + 1);
  size_t next_pen = 0;  // the first penalised id not yet passed
  const auto skip = [&](size_t i) {
    while (next_pen < pen.size() && static_cast<size_t>(pen[next_pen].id) < i) ++next_pen;
    return next_pen < pen.size() && static_cast<size_t>(pen[next_pen].id) == i;
  };
  const auto offer = [&](const Cand& c) {
    if (heap.size() < k) {
      heap.push_back(c);
      std::push_heap(heap.begin(), heap.end(), cand_before);
    } else if (cand_before(c, heap.front())) {
      std::pop_heap(heap.begin(), heap.end(), cand_before);
      heap.back() = c;
      std::push_heap(heap.begin(), heap.end(), cand_before);
    }
  };
  const auto look = [&](size_t i0, size_t i1) {  // each value of [i0, i1) in order, NaN refused
    for (size_t i = i0; i < i1; ++i) {
      if (std::isnan(x[i])) throw SamplerError("sampler: logit " + std::to_string(i) + " is NaN");
      if (skip(i)) continue;
      if (heap.size() < k || x[i] > heap.front().logit) offer(Cand{static_cast<int32_t>(i), x[i]});
    }
  };
  constexpr size_t kBlock = 16;
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    if (heap.size() < k) {
      look(i, i + kBlock);
      continue;
    }
    if (any_not_at_most(x + i, heap.front().logit)) look(i, i + kBlock);  // a larger value or a NaN
  }
  look(i, n);
  for (const Cand& c : pen) offer(c);
  std::sort(heap.begin(), heap.end(), cand_before);
  return heap;
}

// Top-k off: the candidates a full sort would keep through top-p and min-p, sorted by cand_before,
// without sorting the whole row (a 150k-token vocabulary took ~19 ms a token that way):
// - min-p keeps only logits within ln(min_p) of the best, so only those are sorted (with a 1e-3
//   margin for exp's rounding; the exact test stays the caller's);
// - without min-p, those within 20 of the best, when their mass reaches top_p (the top-p prefix
//   is then among them), else the whole row.
// *total: the temperature-1 softmax's denominator over every candidate, for the caller's top-p:
// 1 for the best, then the others in id order (the sum is then >= 1 throughout, so terms below
// 2^-54, logits more than 38 under the best, would not change it and are skipped). Empty: no
// bound applies (no top-p and no min-p, or no finite logit); the caller sorts the row.
std::vector<Cand> untruncated(const SamplerParams& p, std::span<const float> logits, const std::vector<Cand>& pen,
                              double* total) {
  const Cand best = best_k(logits, 1, pen).front();  // refuses a NaN
  const double mx = best.logit;
  const bool top_p = p.top_p < 1.0f, min_p = p.min_p > 0.0f;
  if (!std::isfinite(mx) || (!top_p && !min_p)) return {};
  const double lo = min_p ? mx + std::log(static_cast<double>(p.min_p)) - 1e-3 : mx - 20.0;
  std::vector<Cand> keep;
  double sum = 1.0;
  size_t next_pen = 0;
  for (size_t i = 0; i < logits.size(); ++i) {
    float v = logits[i];
    if (next_pen < pen.size() && static_cast<size_t>(pen[next_pen].id) == i) v = pen[next_pen++].logit;
    const double d = static_cast<double>(v) - mx;
    if (top_p && i != static_cast<size_t>(best.id) && d >= -38.0) sum += std::exp(d);
    if (static_cast<double>(v) >= lo) keep.push_back(Cand{static_cast<int32_t>(i), v});
  }
  std::sort(keep.begin(), keep.end(), cand_before);
  *total = sum;
  if (!min_p) {  // top-p alone: does the mass of the kept ones reach it?
    double cum = 0.0;
    for (const Cand& c : keep) cum += std::exp(static_cast<double>(c.logit) - mx) / sum;
    if (cum < static_cast<double>(p.top_p)) return {};
  }
  return keep;
}

// The tail of the chain over cands (sorted by cand_before; the best top-k, or the untruncated
// ones): greedy, top-p (total: its denominator when known, < 0: summed over cands), min-p,
// temperature and the softmax.
std::vector<TokenProb> distribution(const SamplerParams& params, const std::vector<Cand>& cands, double total) {
  if (params.temperature <= 0.0f) return {TokenProb{cands[0].id, 1.0}};
  size_t n = cands.size();
  const double max_logit = cands[0].logit;
  if (!std::isfinite(max_logit)) return {TokenProb{cands[0].id, 1.0}};  // every logit is -inf

  // top-p on the temperature-1 softmax: keep the shortest prefix whose mass reaches top_p.
  if (params.top_p < 1.0f) {
    if (total < 0.0) {
      total = 0.0;
      for (size_t i = 0; i < n; ++i) total += std::exp(static_cast<double>(cands[i].logit) - max_logit);
    }
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
  double z = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const double e = std::exp((static_cast<double>(cands[i].logit) - max_logit) * inv_t);
    out[i] = TokenProb{cands[i].id, e};
    z += e;
  }
  for (auto& c : out) c.p /= z;
  return out;
}

}  // namespace

int32_t sampler_argmax(std::span<const float> logits) {
  if (logits.empty()) throw SamplerError("sampler: empty logits row");
  // In blocks of 16 compared with the best so far (vectorised), a closer look only where one beats
  // it: the first index of the largest value, as one compare a value in order gives (a NaN never
  // beats anything; a NaN first is never beaten).
  const float* x = logits.data();
  const size_t n = logits.size();
  size_t best = 0;
  const auto look = [&](size_t i0, size_t i1) {
    for (size_t i = i0; i < i1; ++i) {
      if (x[i] > x[best]) best = i;
    }
  };
  constexpr size_t kBlock = 16;
  size_t i = 1;
  for (; i + kBlock <= n; i += kBlock) {
    if (any_above(x + i, x[best])) look(i, i + kBlock);
  }
  look(i, n);
  return static_cast<int32_t>(best);
}

std::vector<TokenProb> sampler_candidates(const SamplerParams& params, std::span<const float> logits,
                                          std::span<const int32_t> recent) {
  if (logits.empty()) throw SamplerError("sampler: empty logits row");
  const std::vector<Cand> pen = penalised(logits, recent, params);
  const size_t n_vocab = logits.size();

  // cands [n] sorted by logit, descending: the best top_k (one when greedy), or all of them.
  std::vector<Cand> cands;
  double total = -1.0;  // top-p's denominator when untruncated() gave it (< 0: the sum over cands)
  const size_t k = params.temperature <= 0.0f ? 1 : params.top_k > 0 ? static_cast<size_t>(params.top_k) : n_vocab;
  if (k < n_vocab) {
    // The row read once in place (~0.05 ms for 150k logits here, against ~0.4 ms for the copy,
    // the penalties and a heap over the copy, which mattered beside a GPU decode step of ~1 ms).
    cands = best_k(logits, k, pen);
  } else if (cands = untruncated(params, logits, pen, &total); cands.empty()) {
    total = -1.0;  // (untruncated's best_k read the whole row: a NaN was refused there)
    cands.resize(n_vocab);
    for (size_t i = 0; i < n_vocab; ++i) cands[i] = Cand{static_cast<int32_t>(i), logits[i]};
    for (const Cand& c : pen) cands[static_cast<size_t>(c.id)].logit = c.logit;
    std::sort(cands.begin(), cands.end(), cand_before);
  }
  return distribution(params, cands, total);
}

size_t sampler_top_wanted(const SamplerParams& params, std::span<const int32_t> recent) {
  const size_t bound = sampler_top_bound(params);
  if (bound == 0) return 0;
  const size_t k = params.temperature <= 0.0f ? 1 : static_cast<size_t>(params.top_k);
  if (!penalties_apply(params, recent)) return k;
  const std::span<const int32_t> window = penalty_window(recent, params.repeat_last_n);
  std::vector<int32_t> ids(window.begin(), window.end());
  std::sort(ids.begin(), ids.end());
  return k + static_cast<size_t>(std::unique(ids.begin(), ids.end()) - ids.begin());
}

size_t sampler_top_bound(const SamplerParams& params) {
  const bool greedy = params.temperature <= 0.0f;
  if (!greedy && params.top_k <= 0) return 0;  // top-p and min-p alone reach into the whole row
  // A penalty that can raise a logit could lift a token from anywhere in the row.
  if (params.repeat_penalty < 1.0f || params.presence_penalty < 0.0f || params.frequency_penalty < 0.0f) return 0;
  const size_t k = greedy ? 1 : static_cast<size_t>(params.top_k);
  if (!any_penalty(params) || params.repeat_last_n == 0) return k;
  if (params.repeat_last_n < 0) return 0;  // every token so far: no bound
  return k + static_cast<size_t>(params.repeat_last_n);
}

std::vector<TokenProb> sampler_candidates_top(const SamplerParams& params, const LogitsTop& top,
                                              std::span<const int32_t> recent) {
  if (top.n_vocab == 0) throw SamplerError("sampler: empty logits row");
  if (top.first_nan >= 0) throw SamplerError("sampler: logit " + std::to_string(top.first_nan) + " is NaN");
  const size_t want = sampler_top_wanted(params, recent);
  if (want == 0) throw SamplerError("sampler: these settings need the whole row of logits, not its best entries");
  const size_t m = std::min(want, top.n_vocab);
  if (top.ids.size() < m || top.logits.size() != top.ids.size()) {
    throw SamplerError("sampler: " + std::to_string(top.ids.size()) + " best logits given where " + std::to_string(m) +
                       " are needed");
  }
  // The k best of the row under the penalties are among these m (a penalty here only lowers a
  // logit, so a penalised id outside them stays below the >= k unpenalised ids inside them).
  const std::vector<std::pair<int32_t, size_t>> counts = penalty_counts(top.n_vocab, recent, params);
  std::vector<Cand> cands(m);
  for (size_t i = 0; i < m; ++i) {
    Cand c{top.ids[i], top.logits[i]};
    const auto it = std::lower_bound(counts.begin(), counts.end(), c.id,
                                     [](const std::pair<int32_t, size_t>& e, int32_t id) { return e.first < id; });
    if (it != counts.end() && it->first == c.id) c.logit = penalised_logit(c.logit, params, it->second);
    cands[i] = c;
  }
  const size_t k = std::min(params.temperature <= 0.0f ? size_t{1} : static_cast<size_t>(params.top_k), m);
  std::partial_sort(cands.begin(), cands.begin() + static_cast<std::ptrdiff_t>(k), cands.end(), cand_before);
  cands.resize(k);
  return distribution(params, cands, -1.0);
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
  return draw(sampler_candidates(params_, logits, recent));
}

int32_t Sampler::sample_top(const LogitsTop& top, std::span<const int32_t> recent) {
  return draw(sampler_candidates_top(params_, top, recent));
}

int32_t Sampler::draw(const std::vector<TokenProb>& cands) {
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
