// Tests for app/server/fair_queue.{h,cpp}: turns in arrival order, the bound on waiting tickets,
// abandoning a place in line, close() waking every waiter.
#include "app/server/fair_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

namespace alap::server {
namespace {

using namespace std::chrono_literals;

void wait_until(const std::function<bool()>& cond) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!cond() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  ASSERT_TRUE(cond());
}

TEST(FairQueue, FirstTicketTakesTheTurnAtOnce) {
  FairQueue q(0);
  FairQueue::Entry a = q.enter();
  ASSERT_EQ(a.admit, FairQueue::Admit::admitted);
  EXPECT_EQ(a.ticket->wait({}, 10ms), FairQueue::Wait::turn);
  EXPECT_TRUE(a.ticket->has_turn());
  EXPECT_TRUE(q.busy());
  // max_waiting 0: nobody may wait behind the turn.
  FairQueue::Entry b = q.enter();
  EXPECT_EQ(b.admit, FairQueue::Admit::full);
  EXPECT_EQ(b.ticket, nullptr);
  a.ticket.reset();
  EXPECT_FALSE(q.busy());
  EXPECT_EQ(q.enter().admit, FairQueue::Admit::admitted);
}

TEST(FairQueue, BoundCountsTheTurnPlusTheLine) {
  FairQueue q(2);
  std::vector<FairQueue::Entry> entries;
  for (int i = 0; i < 3; ++i) {
    entries.push_back(q.enter());
    EXPECT_EQ(entries.back().admit, FairQueue::Admit::admitted) << i;
  }
  EXPECT_EQ(q.n_waiting(), 3u);  // nobody has taken the turn yet; the first one is about to
  EXPECT_EQ(q.enter().admit, FairQueue::Admit::full);
  ASSERT_EQ(entries[0].ticket->wait({}, 10ms), FairQueue::Wait::turn);
  EXPECT_EQ(q.n_waiting(), 2u);
  EXPECT_EQ(q.enter().admit, FairQueue::Admit::full);
  entries[2].ticket.reset();  // the last one leaves the line
  EXPECT_EQ(q.n_waiting(), 1u);
  EXPECT_EQ(q.enter().admit, FairQueue::Admit::admitted);
}

TEST(FairQueue, TurnsFollowArrivalOrder) {
  FairQueue q(16);
  FairQueue::Entry first = q.enter();
  ASSERT_EQ(first.ticket->wait({}, 10ms), FairQueue::Wait::turn);

  std::mutex mu;
  std::vector<int> order;
  std::vector<std::thread> threads;
  for (int i = 0; i < 6; ++i) {
    // Enter in a known order (on this thread), then wait on a thread each.
    auto entry = std::make_shared<FairQueue::Entry>(q.enter());
    ASSERT_EQ(entry->admit, FairQueue::Admit::admitted);
    threads.emplace_back([entry, i, &mu, &order] {
      ASSERT_EQ(entry->ticket->wait({}, 5ms), FairQueue::Wait::turn);
      {
        std::lock_guard<std::mutex> lock(mu);
        order.push_back(i);
      }
      std::this_thread::sleep_for(2ms);
      entry->ticket.reset();
    });
  }
  std::this_thread::sleep_for(20ms);
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_TRUE(order.empty());  // all wait behind the first turn
  }
  first.ticket.reset();
  for (auto& t : threads) t.join();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5}));
}

TEST(FairQueue, AbandonLeavesTheLineAndTheNextMovesUp) {
  FairQueue q(4);
  FairQueue::Entry first = q.enter();
  ASSERT_EQ(first.ticket->wait({}, 10ms), FairQueue::Wait::turn);
  FairQueue::Entry quitter = q.enter();
  FairQueue::Entry patient = q.enter();
  std::atomic<int> asked{0};
  EXPECT_EQ(quitter.ticket->wait([&] { return ++asked >= 3; }, 2ms), FairQueue::Wait::abandoned);
  EXPECT_EQ(asked.load(), 3);
  EXPECT_EQ(q.n_waiting(), 1u);
  std::thread t([&] { EXPECT_EQ(patient.ticket->wait({}, 2ms), FairQueue::Wait::turn); });
  first.ticket.reset();
  t.join();
  EXPECT_TRUE(patient.ticket->has_turn());
}

TEST(FairQueue, CloseWakesWaitersAndRefusesNewcomers) {
  FairQueue q(4);
  FairQueue::Entry first = q.enter();
  ASSERT_EQ(first.ticket->wait({}, 10ms), FairQueue::Wait::turn);
  std::vector<std::thread> threads;
  std::atomic<int> closed{0};
  std::vector<FairQueue::Entry> waiting;
  for (int i = 0; i < 3; ++i) waiting.push_back(q.enter());
  for (auto& e : waiting) {
    threads.emplace_back([&e, &closed] {
      // A long poll: only close() can wake it in time.
      if (e.ticket->wait({}, 10s) == FairQueue::Wait::closed) ++closed;
    });
  }
  wait_until([&] { return q.n_waiting() == 3; });
  std::this_thread::sleep_for(10ms);
  const auto t0 = std::chrono::steady_clock::now();
  q.close();
  for (auto& t : threads) t.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  EXPECT_EQ(closed.load(), 3);
  EXPECT_EQ(q.n_waiting(), 0u);
  EXPECT_TRUE(first.ticket->has_turn());  // the running turn is not taken away
  EXPECT_EQ(q.enter().admit, FairQueue::Admit::closed);
}

}  // namespace
}  // namespace alap::server
