// Tests for core/sample/sampler.{h,cpp}: each filter's exact survivors and probabilities, the
// penalty arithmetic, seeded determinism, and the draw's frequencies against the distribution.
#include "core/sample/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace alap {
namespace {

SamplerParams no_filters(float temperature = 1.0f) {
  SamplerParams p;
  p.temperature = temperature;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  p.repeat_penalty = 1.0f;
  return p;
}

std::vector<int32_t> ids_of(const std::vector<TokenProb>& c) {
  std::vector<int32_t> ids;
  for (const auto& t : c) ids.push_back(t.id);
  return ids;
}

TEST(Sampler, GreedyPicksArgmaxAndLowestIdOnTies) {
  SamplerParams p = no_filters(0.0f);
  Sampler s(p);
  const std::vector<float> logits{0.5f, 3.0f, -1.0f, 3.0f, 2.9f};
  EXPECT_EQ(s.sample(logits), 1);
  EXPECT_EQ(sampler_argmax(logits), 1);
  const std::vector<float> all_equal{7.0f, 7.0f, 7.0f};
  EXPECT_EQ(s.sample(all_equal), 0);
  const auto c = sampler_candidates(p, logits, {});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].id, 1);
  EXPECT_DOUBLE_EQ(c[0].p, 1.0);
}

TEST(Sampler, TopKOneEqualsGreedyWhateverTheSeed) {
  const std::vector<float> logits{0.1f, 0.2f, 2.5f, 2.4f, -3.0f, 2.5f};
  for (uint64_t seed = 0; seed < 20; ++seed) {
    SamplerParams p = no_filters(1.5f);
    p.top_k = 1;
    p.seed = seed;
    Sampler s(p);
    EXPECT_EQ(s.sample(logits), 2);  // 2 and 5 tie: the lower id wins
  }
}

TEST(Sampler, TopKKeepsTheKLargestInOrder) {
  SamplerParams p = no_filters(1.0f);
  p.top_k = 3;
  const std::vector<float> logits{1.0f, 4.0f, 0.0f, 3.0f, 2.0f};
  const auto c = sampler_candidates(p, logits, {});
  EXPECT_EQ(ids_of(c), (std::vector<int32_t>{1, 3, 4}));
  const double z = std::exp(4.0) + std::exp(3.0) + std::exp(2.0);
  EXPECT_NEAR(c[0].p, std::exp(4.0) / z, 1e-12);
  EXPECT_NEAR(c[2].p, std::exp(2.0) / z, 1e-12);
}

// The one-pass top-k against a full sort (logit descending, lower id first on ties) on rows with
// many ties, -inf entries and the best values late in the row.
TEST(Sampler, TopKMatchesAFullSortWithTies) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    const size_t n = 50 + rng() % 3000;
    std::vector<float> logits(n);
    for (auto& l : logits) l = static_cast<float>(static_cast<int>(rng() % 9)) - 4.0f;  // 9 values: ties
    for (int i = 0; i < 5; ++i) logits[rng() % n] = -INFINITY;
    if (trial % 2 == 0) logits[n - 1] = 100.0f;  // the best one last
    SamplerParams p = no_filters();
    p.top_k = 1 + static_cast<int32_t>(rng() % 64);
    std::vector<int32_t> order(n);
    for (size_t i = 0; i < n; ++i) order[i] = static_cast<int32_t>(i);
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
    order.resize(std::min(n, static_cast<size_t>(p.top_k)));
    EXPECT_EQ(ids_of(sampler_candidates(p, logits, {})), order) << "trial " << trial << " k " << p.top_k;
  }
}

// The filter chain read in place (the penalised ids aside, the row scanned in blocks of 16) against
// its plain statement: copy the row, apply both penalties with the public functions, sort it all
// (logit descending, lower id first), keep top_k, softmax in double. Rows of random lengths (block
// tails), ties, -inf, penalised ids among the best and the worst, repeated ids (frequency), ids out
// of range, greedy and sampling: the same ids, the same probabilities bit for bit.
TEST(Sampler, CandidatesMatchThePlainFilterChain) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    const size_t n = 1 + rng() % 2000;
    std::vector<float> logits(n);
    std::normal_distribution<float> nd(0.0f, 2.0f);
    for (auto& l : logits) l = trial % 3 == 0 ? static_cast<float>(static_cast<int>(rng() % 7)) : nd(rng);
    if (trial % 5 == 0) logits[rng() % n] = -INFINITY;
    if (trial % 4 == 0) logits[n - 1] = 50.0f;  // the best one last
    std::vector<int32_t> recent(rng() % 40);
    for (auto& id : recent) id = static_cast<int32_t>(rng() % (n + 3)) - 1;  // some out of range
    if (!recent.empty() && trial % 2 == 0) recent.push_back(recent.front());  // a repeat
    SamplerParams p = no_filters(trial % 7 == 0 ? 0.0f : 1.0f);
    p.top_k = trial % 11 == 0 ? 0 : 1 + static_cast<int32_t>(rng() % 50);
    p.repeat_penalty = trial % 3 == 1 ? 1.0f : 1.3f;
    p.presence_penalty = trial % 4 == 1 ? 0.5f : 0.0f;
    p.frequency_penalty = trial % 6 == 1 ? 0.25f : 0.0f;
    p.repeat_last_n = trial % 8 == 0 ? -1 : 16;

    std::vector<float> work = logits;
    sampler_apply_repeat_penalty(work, recent, p.repeat_penalty, p.repeat_last_n);
    sampler_apply_presence_penalty(work, recent, p.presence_penalty, p.frequency_penalty, p.repeat_last_n);
    std::vector<int32_t> order(n);
    for (size_t i = 0; i < n; ++i) order[i] = static_cast<int32_t>(i);
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return work[a] > work[b]; });
    size_t k = p.top_k > 0 ? std::min(n, static_cast<size_t>(p.top_k)) : n;
    if (p.temperature <= 0.0f) k = 1;
    order.resize(k);

    const auto got = sampler_candidates(p, logits, recent);
    ASSERT_EQ(ids_of(got), order) << "trial " << trial << " n " << n << " k " << p.top_k;
    EXPECT_EQ(sampler_argmax(work), order[0]) << "trial " << trial;
    if (p.temperature <= 0.0f || !std::isfinite(work[order[0]])) continue;
    const double mx = work[order[0]];
    double total = 0.0;
    std::vector<double> e(k);
    for (size_t i = 0; i < k; ++i) total += e[i] = std::exp((static_cast<double>(work[order[i]]) - mx) * 1.0);
    for (size_t i = 0; i < k; ++i) EXPECT_EQ(got[i].p, e[i] / total) << "trial " << trial << " rank " << i;
  }
}

// Top-k off with top-p and/or min-p: only the logits that can survive are sorted (and the whole row
// when they cannot be bounded), against the plain chain's full sort: the same survivors with the
// same probabilities. Rows: random, flat, and a long tail 20–30 under the best with top-p so near 1
// that its prefix reaches into the tail (top-p alone then needs the whole row).
TEST(Sampler, TopKOffMatchesTheFullSort) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    size_t n = 1 + rng() % 3000;
    std::vector<float> logits(n);
    std::normal_distribution<float> nd(0.0f, trial % 3 == 0 ? 0.3f : 3.0f);
    for (auto& l : logits) l = nd(rng);
    if (trial % 10 == 1) std::fill(logits.begin(), logits.end(), 1.5f);  // flat
    if (trial % 10 == 2) {  // the best alone, then a long tail just over 20 under it (~6e-6 of the mass)
      logits.assign(3000, 0.0f);
      for (size_t i = 0; i < logits.size(); ++i) logits[i] = -20.05f - static_cast<float>(i % 7) * 0.01f;
      logits[rng() % logits.size()] = 0.0f;
      n = logits.size();
    }
    SamplerParams p = no_filters(trial % 4 == 0 ? 0.7f : 1.0f);
    p.top_k = 0;
    p.top_p = trial % 3 == 1 ? 1.0f : 0.5f + 0.49f * static_cast<float>(rng() % 100) / 100.0f;
    p.min_p = trial % 3 == 2 ? 0.0f : 0.01f * static_cast<float>(1 + rng() % 20);
    if (p.top_p >= 1.0f && p.min_p <= 0.0f) p.min_p = 0.05f;
    if (trial % 10 == 2) {  // top-p alone, so near 1 that the prefix reaches into the tail
      p.top_p = 0.999999f;
      p.min_p = 0.0f;
    }
    std::vector<int32_t> recent{static_cast<int32_t>(rng() % n), static_cast<int32_t>(rng() % n)};
    p.repeat_penalty = trial % 2 == 0 ? 1.2f : 1.0f;

    std::vector<float> work = logits;
    sampler_apply_repeat_penalty(work, recent, p.repeat_penalty, p.repeat_last_n);
    std::vector<int32_t> order(n);
    for (size_t i = 0; i < n; ++i) order[i] = static_cast<int32_t>(i);
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return work[a] > work[b]; });
    const double mx = work[order[0]];
    size_t keep = n;
    if (p.top_p < 1.0f) {
      double total = 0.0, cum = 0.0;
      for (const int32_t id : order) total += std::exp(static_cast<double>(work[id]) - mx);
      for (size_t i = 0; i < n; ++i) {
        cum += std::exp(static_cast<double>(work[order[i]]) - mx) / total;
        if (cum >= static_cast<double>(p.top_p)) {
          keep = i + 1;
          break;
        }
      }
    }
    if (p.min_p > 0.0f) {
      size_t m = 1;
      while (m < keep && std::exp(static_cast<double>(work[order[m]]) - mx) >= static_cast<double>(p.min_p)) ++m;
      keep = m;
    }
    order.resize(keep);
    const auto got = sampler_candidates(p, logits, recent);
    ASSERT_EQ(ids_of(got), order) << "trial " << trial << " n " << n << " top_p " << p.top_p << " min_p " << p.min_p;
    const double inv_t = 1.0 / static_cast<double>(p.temperature);
    double z = 0.0;
    std::vector<double> e(keep);
    for (size_t i = 0; i < keep; ++i) z += e[i] = std::exp((static_cast<double>(work[order[i]]) - mx) * inv_t);
    for (size_t i = 0; i < keep; ++i) EXPECT_EQ(got[i].p, e[i] / z) << "trial " << trial << " rank " << i;
  }
}

// A NaN anywhere is refused with its index: in the first top_k values, later in a block of the
// scan, in the row's tail, at a penalised id; the greedy and the full-sort paths too.
TEST(Sampler, NaNIsRefusedWherever) {
  for (const size_t at : {size_t{0}, size_t{3}, size_t{100}, size_t{517}, size_t{999}}) {
    std::vector<float> logits(1000, 1.0f);
    logits[at] = std::nanf("");
    for (const int32_t k : {0, 1, 10}) {
      for (const float t : {0.0f, 1.0f}) {
        SamplerParams p = no_filters(t);
        p.top_k = k;
        p.repeat_penalty = 1.2f;
        const std::vector<int32_t> recent{static_cast<int32_t>(at), 5};
        try {
          sampler_candidates(p, logits, recent);
          ADD_FAILURE() << "no error for a NaN at " << at << " k " << k << " t " << t;
        } catch (const SamplerError& e) {
          EXPECT_NE(std::string(e.what()).find("logit " + std::to_string(at) + " is NaN"), std::string::npos) << e.what();
        }
      }
    }
  }
}

// The m best entries of a row in the sampler's full order, as a device returns them.
struct HostTop {
  std::vector<int32_t> ids;
  std::vector<float> logits;
  LogitsTop view(size_t n_vocab) const { return LogitsTop{ids, logits, n_vocab, -1}; }
};
HostTop host_top(const std::vector<float>& row, size_t m) {
  std::vector<int32_t> order(row.size());
  for (size_t i = 0; i < row.size(); ++i) order[i] = static_cast<int32_t>(i);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return row[a] > row[b]; });
  HostTop t;
  for (size_t i = 0; i < std::min(m, row.size()); ++i) {
    t.ids.push_back(order[i]);
    t.logits.push_back(row[order[i]] == 0.0f ? 0.0f : row[order[i]]);  // a device may give +0 for -0
  }
  return t;
}

// The draw from a row's best entries (a GPU decode step sends back only those): the same
// candidates with the same probabilities, bit for bit, as from the whole row, over random rows
// with ties, -0.0 and -inf, every penalty that only lowers logits, greedy and sampled, windows
// with repeats and ids outside the vocabulary; and the same sequence of draws from one seed.
TEST(Sampler, BestEntriesGiveTheRowsCandidates) {
  std::mt19937 rng(23);
  for (int trial = 0; trial < 400; ++trial) {
    const size_t n = 1 + rng() % 3000;
    std::vector<float> row(n);
    std::normal_distribution<float> nd(0.0f, 3.0f);
    for (auto& l : row) l = trial % 3 == 0 ? static_cast<float>(static_cast<int>(rng() % 5)) : nd(rng);
    if (trial % 5 == 0) row[rng() % n] = -INFINITY;
    if (trial % 6 == 0) row[rng() % n] = -0.0f;
    std::vector<int32_t> recent(rng() % 80);
    for (auto& id : recent) {
      // Often the best ids (a penalty then reorders the top), sometimes outside the row.
      id = rng() % 2 == 0 ? static_cast<int32_t>(rng() % (n + 3)) - 1
                          : host_top(row, 8).ids[rng() % std::min<size_t>(8, n)];
    }
    SamplerParams p;
    p.temperature = trial % 7 == 0 ? 0.0f : 0.5f + static_cast<float>(rng() % 10) / 10.0f;
    p.top_k = 1 + static_cast<int32_t>(rng() % 60);
    p.top_p = trial % 4 == 0 ? 1.0f : 0.9f;
    p.min_p = trial % 3 == 0 ? 0.0f : 0.05f;
    p.repeat_penalty = trial % 3 == 1 ? 1.0f : 1.0f + static_cast<float>(rng() % 8) / 10.0f;
    p.presence_penalty = trial % 4 == 1 ? 0.5f : 0.0f;
    p.frequency_penalty = trial % 5 == 1 ? 0.25f : 0.0f;
    p.repeat_last_n = trial % 9 == 0 ? 0 : 1 + static_cast<int32_t>(rng() % 64);
    p.seed = static_cast<uint64_t>(trial);

    const size_t want = sampler_top_wanted(p, recent);
    ASSERT_GT(want, 0u) << "trial " << trial;
    ASSERT_LE(want, sampler_top_bound(p)) << "trial " << trial;
    const HostTop top = host_top(row, want);
    const auto full = sampler_candidates(p, row, recent);
    const auto part = sampler_candidates_top(p, top.view(n), recent);
    ASSERT_EQ(ids_of(part), ids_of(full)) << "trial " << trial << " n " << n << " k " << p.top_k << " want " << want;
    for (size_t i = 0; i < full.size(); ++i) EXPECT_EQ(part[i].p, full[i].p) << "trial " << trial << " rank " << i;

    Sampler a(p), b(p);
    std::vector<int32_t> ha = recent, hb = recent;
    for (int step = 0; step < 5; ++step) {
      const HostTop t = host_top(row, sampler_top_wanted(p, hb));
      const int32_t ia = a.sample(row, ha), ib = b.sample_top(t.view(n), hb);
      ASSERT_EQ(ia, ib) << "trial " << trial << " step " << step;
      ha.push_back(ia);
      hb.push_back(ib);
    }
  }
}

// What the best entries cannot decide is refused, never guessed: top-k off, a penalty that can
// raise a logit, an unbounded window with a penalty (bound 0), too few entries; a NaN the device
// found is the row's error.
TEST(Sampler, BestEntriesRefuseWhatTheyCannotDecide) {
  const std::vector<float> row{1.0f, 4.0f, 2.0f, 3.0f};
  const HostTop top = host_top(row, 4);
  const std::vector<int32_t> recent{1, 1, 3};
  SamplerParams p;
  p.top_k = 2;
  EXPECT_EQ(sampler_top_wanted(p, recent), 2u);
  EXPECT_EQ(sampler_top_bound(p), 2u);
  p.repeat_penalty = 1.1f;
  p.repeat_last_n = 64;
  EXPECT_EQ(sampler_top_wanted(p, recent), 4u);  // k + the 2 distinct penalised ids
  EXPECT_EQ(sampler_top_bound(p), 66u);
  EXPECT_EQ(ids_of(sampler_candidates_top(p, top.view(4), recent)), ids_of(sampler_candidates(p, row, recent)));
  LogitsTop short_top = top.view(4);
  short_top.ids = short_top.ids.first(3);
  short_top.logits = short_top.logits.first(3);
  EXPECT_THROW(sampler_candidates_top(p, short_top, recent), SamplerError);
  LogitsTop nan_top = top.view(4);
  nan_top.first_nan = 2;
  try {
    sampler_candidates_top(p, nan_top, recent);
    ADD_FAILURE() << "no error for a NaN";
  } catch (const SamplerError& e) {
    EXPECT_NE(std::string(e.what()).find("logit 2 is NaN"), std::string::npos) << e.what();
  }
  p.repeat_last_n = -1;
  EXPECT_EQ(sampler_top_bound(p), 0u);
  EXPECT_EQ(sampler_top_wanted(p, recent), 0u);
  p.repeat_last_n = 64;
  for (const auto& raise : {std::pair{0.9f, 0.0f}, std::pair{1.0f, -0.5f}}) {
    SamplerParams q = p;
    q.repeat_penalty = raise.first;
    q.presence_penalty = raise.second;
    EXPECT_EQ(sampler_top_bound(q), 0u);
    EXPECT_EQ(sampler_top_wanted(q, recent), 0u);
    EXPECT_THROW(sampler_candidates_top(q, top.view(4), recent), SamplerError);
  }
  SamplerParams off = p;
  off.top_k = 0;
  EXPECT_EQ(sampler_top_bound(off), 0u);
  off.temperature = 0.0f;  // greedy needs only the best (plus the penalised ids)
  EXPECT_EQ(sampler_top_wanted(off, recent), 3u);
}

TEST(Sampler, TopPKeepsTheSmallestSetReachingP) {
  // Probabilities 0.5, 0.25, 0.125, 0.125 (logits are their logs).
  const std::vector<float> logits{std::log(0.125f), std::log(0.5f), std::log(0.125f), std::log(0.25f)};
  SamplerParams p = no_filters(1.0f);
  p.top_p = 0.5f;
  EXPECT_EQ(ids_of(sampler_candidates(p, logits, {})), (std::vector<int32_t>{1}));
  p.top_p = 0.6f;
  EXPECT_EQ(ids_of(sampler_candidates(p, logits, {})), (std::vector<int32_t>{1, 3}));
  p.top_p = 0.74f;
  EXPECT_EQ(ids_of(sampler_candidates(p, logits, {})), (std::vector<int32_t>{1, 3}));
  p.top_p = 0.8f;
  const auto c = sampler_candidates(p, logits, {});
  EXPECT_EQ(ids_of(c), (std::vector<int32_t>{1, 3, 0}));  // ties at 0.125: lower id first
  EXPECT_NEAR(c[0].p, 0.5 / 0.875, 1e-6);
  p.top_p = 0.99f;
  EXPECT_EQ(ids_of(sampler_candidates(p, logits, {})).size(), 4u);
}

TEST(Sampler, MinPKeepsTokensAtLeastMinPTimesTheBest) {
  // Relative probabilities 1, 0.5, 0.2, 0.05.
  const std::vector<float> logits{std::log(0.05f), std::log(1.0f), std::log(0.2f), std::log(0.5f)};
  SamplerParams p = no_filters(1.0f);
  p.min_p = 0.3f;
  EXPECT_EQ(ids_of(sampler_candidates(p, logits, {})), (std::vector<int32_t>{1, 3}));
  p.min_p = 0.1f;
  const auto c = sampler_candidates(p, logits, {});
  EXPECT_EQ(ids_of(c), (std::vector<int32_t>{1, 3, 2}));
  EXPECT_NEAR(c[2].p, 0.2 / 1.7, 1e-6);
  p.min_p = 1.0f;
  EXPECT_EQ(ids_of(sampler_candidates(p, logits, {})), (std::vector<int32_t>{1}));
}

TEST(Sampler, TemperatureSharpensAfterFiltering) {
  const std::vector<float> logits{2.0f, 1.0f, 0.0f};
  SamplerParams p = no_filters(0.5f);
  const auto c = sampler_candidates(p, logits, {});
  const double z = std::exp(4.0) + std::exp(2.0) + 1.0;
  ASSERT_EQ(c.size(), 3u);
  EXPECT_NEAR(c[0].p, std::exp(4.0) / z, 1e-12);
  EXPECT_NEAR(c[1].p, std::exp(2.0) / z, 1e-12);
  EXPECT_NEAR(c[2].p, 1.0 / z, 1e-12);
  // top-p is judged at temperature 1: p(0) = e^2/(e^2+e+1) = 0.665 < 0.7, so two survive even
  // though at T = 0.5 the first alone would hold 0.867.
  p.top_p = 0.7f;
  EXPECT_EQ(ids_of(sampler_candidates(p, logits, {})), (std::vector<int32_t>{0, 1}));
}

TEST(Sampler, RepeatPenaltyDividesPositiveAndMultipliesNegative) {
  std::vector<float> logits{2.0f, -1.0f, 3.0f, 0.5f, 4.0f};
  const std::vector<int32_t> recent{4, 0, 1, 1, 99, -3};  // 99 and -3 are out of range
  sampler_apply_repeat_penalty(logits, recent, 2.0f, -1);
  EXPECT_FLOAT_EQ(logits[0], 1.0f);
  EXPECT_FLOAT_EQ(logits[1], -2.0f);  // once, although it appears twice
  EXPECT_FLOAT_EQ(logits[2], 3.0f);
  EXPECT_FLOAT_EQ(logits[3], 0.5f);
  EXPECT_FLOAT_EQ(logits[4], 2.0f);

  std::vector<float> window{2.0f, 2.0f, 2.0f};
  const std::vector<int32_t> hist{0, 1, 2};
  sampler_apply_repeat_penalty(window, hist, 4.0f, 2);  // only the last two: ids 1 and 2
  EXPECT_EQ(window, (std::vector<float>{2.0f, 0.5f, 0.5f}));
}

TEST(Sampler, PresenceAndFrequencyPenaltiesSubtractPerTokenAndPerOccurrence) {
  std::vector<float> logits{2.0f, -1.0f, 3.0f, 0.5f};
  const std::vector<int32_t> recent{2, 0, 2, 2, 7, -1};  // 7 and -1 are out of range
  sampler_apply_presence_penalty(logits, recent, 0.5f, 0.25f, -1);
  EXPECT_FLOAT_EQ(logits[0], 2.0f - 0.5f - 0.25f);         // once
  EXPECT_FLOAT_EQ(logits[1], -1.0f);                       // absent
  EXPECT_FLOAT_EQ(logits[2], 3.0f - 0.5f - 3 * 0.25f);     // three times
  EXPECT_FLOAT_EQ(logits[3], 0.5f);

  std::vector<float> window{1.0f, 1.0f, 1.0f};
  sampler_apply_presence_penalty(window, std::vector<int32_t>{0, 1, 2}, 1.0f, 0.0f, 2);  // last two only
  EXPECT_EQ(window, (std::vector<float>{1.0f, 0.0f, 0.0f}));

  // A presence penalty moves the greedy choice off a repeated token.
  SamplerParams p;
  p.temperature = 0.0f;
  p.presence_penalty = 1.0f;
  const std::vector<float> row{1.0f, 1.5f, 0.9f};
  EXPECT_EQ(Sampler(p).sample(row, std::vector<int32_t>{1}), 0);
  p.presence_penalty = 2.5f;
  EXPECT_THROW(sampler_params_validate(p), SamplerError);
}

TEST(Sampler, RepeatPenaltyChangesTheGreedyChoice) {
  SamplerParams p = no_filters(0.0f);
  p.repeat_penalty = 1.5f;
  Sampler s(p);
  const std::vector<float> logits{3.0f, 2.5f, 1.0f};
  const std::vector<int32_t> recent{0};
  EXPECT_EQ(s.sample(logits, recent), 1);  // 3/1.5 = 2 < 2.5
  EXPECT_EQ(s.sample(logits), 0);
}

TEST(Sampler, SameSeedSameSequenceDifferentSeedDiffers) {
  std::vector<float> logits(50);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = static_cast<float>(std::sin(static_cast<double>(i)));
  SamplerParams p = no_filters(1.0f);
  p.seed = 1234;
  Sampler a(p), b(p);
  p.seed = 1235;
  Sampler c(p);
  std::vector<int32_t> sa, sb, sc;
  for (int i = 0; i < 64; ++i) {
    sa.push_back(a.sample(logits));
    sb.push_back(b.sample(logits));
    sc.push_back(c.sample(logits));
  }
  EXPECT_EQ(sa, sb);
  EXPECT_NE(sa, sc);
  a.reseed(1234);
  EXPECT_EQ(a.sample(logits), sa[0]);
}

TEST(Sampler, UniformDrawIsInUnitInterval) {
  Sampler s(no_filters());
  for (int i = 0; i < 1000; ++i) {
    const double u = s.next_uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

TEST(Sampler, DrawFrequenciesFollowTheDistribution) {
  // p = 0.4, 0.3, 0.2, 0.1; 20000 draws; chi-square with 3 degrees of freedom: 0.999 quantile
  // is 16.3, so 25 is generous for a fixed seed but would catch a skewed or off-by-one draw.
  const std::vector<float> logits{std::log(0.3f), std::log(0.1f), std::log(0.4f), std::log(0.2f)};
  SamplerParams p = no_filters(1.0f);
  p.seed = 7;
  Sampler s(p);
  std::map<int32_t, int> count;
  const int n = 20000;
  for (int i = 0; i < n; ++i) ++count[s.sample(logits)];
  const double expect[4] = {0.3, 0.1, 0.4, 0.2};
  double chi2 = 0.0;
  for (int32_t id = 0; id < 4; ++id) {
    const double e = expect[id] * n;
    chi2 += (count[id] - e) * (count[id] - e) / e;
  }
  EXPECT_LT(chi2, 25.0);
  EXPECT_EQ(count.size(), 4u);
}

TEST(Sampler, FilteredTokensAreNeverDrawn) {
  SamplerParams p = no_filters(2.0f);
  p.top_k = 2;
  p.seed = 3;
  Sampler s(p);
  const std::vector<float> logits{0.0f, 1.0f, 1.1f, 0.9f};
  for (int i = 0; i < 500; ++i) {
    const int32_t id = s.sample(logits);
    ASSERT_TRUE(id == 1 || id == 2) << id;
  }
}

TEST(Sampler, BadInputIsRefusedWithAMessage) {
  SamplerParams p = no_filters();
  p.repeat_penalty = 0.0f;
  EXPECT_THROW(Sampler{p}, SamplerError);
  Sampler s(no_filters());
  EXPECT_THROW(s.sample(std::vector<float>{}), SamplerError);
  EXPECT_THROW(s.sample(std::vector<float>{1.0f, std::nanf("")}), SamplerError);
}

}  // namespace
}  // namespace alap
