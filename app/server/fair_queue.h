// FairQueue: first come, first served access to the one engine of `alap-cli serve`. One ticket
// holds the turn; at most max_waiting more wait behind it, in arrival order; the next one is
// refused at once (the server answers 503). Not a thread pool: callers block on their own threads.
//
//   FairQueue q(8);
//   FairQueue::Entry e = q.enter();                   // e.ticket == nullptr: full or closed
//   if (e.ticket->wait([&] { return client_gone(); }, 250ms) == FairQueue::Wait::turn) run();
//   // the ticket's destructor ends the turn (or leaves the line) and wakes the next one
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>

namespace alap::server {

class FairQueue {
 public:
  enum class Admit { admitted, full, closed };
  enum class Wait { turn, abandoned, closed };

  class Ticket {
   public:
    ~Ticket();
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;

    // Blocks until this ticket is first in line and the turn is free, then holds the turn.
    // Every `poll` of waiting, abandon() is asked (outside the lock); true leaves the line.
    // close() wakes every waiter with Wait::closed.
    Wait wait(const std::function<bool()>& abandon, std::chrono::milliseconds poll);
    bool has_turn() const { return turn_; }

   private:
    friend class FairQueue;
    Ticket(FairQueue& q, uint64_t number) : q_(q), number_(number) {}
    FairQueue& q_;
    uint64_t number_;
    bool turn_ = false;
    bool in_line_ = true;
  };

  struct Entry {
    Admit admit = Admit::closed;
    std::unique_ptr<Ticket> ticket;  // set when admitted
  };

  explicit FairQueue(size_t max_waiting) : max_waiting_(max_waiting) {}
  FairQueue(const FairQueue&) = delete;
  FairQueue& operator=(const FairQueue&) = delete;

  // Joins the line, or is refused when the turn is taken and max_waiting tickets already wait.
  Entry enter();
  // Refuses newcomers and wakes every waiter; the ticket holding the turn keeps it until released.
  void close();

  size_t n_waiting() const;  // tickets in line (not the one holding the turn)
  bool busy() const;         // a ticket holds the turn
  size_t max_waiting() const { return max_waiting_; }

 private:
  void leave(Ticket& t);  // under no lock; from ~Ticket and wait()

  const size_t max_waiting_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<uint64_t> line_;  // ticket numbers in arrival order
  uint64_t next_number_ = 0;
  bool busy_ = false;
  bool closed_ = false;
};

}  // namespace alap::server
