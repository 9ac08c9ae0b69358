// FairQueue (fair_queue.h): a line of ticket numbers under one mutex and one condition variable.
// Waiters wake on every change and check whether they are first; lines are short (--max-queue).
#include "app/server/fair_queue.h"

#include <algorithm>

namespace alap::server {

FairQueue::Entry FairQueue::enter() {
  std::lock_guard<std::mutex> lock(mu_);
  Entry e;
  if (closed_) {
    e.admit = Admit::closed;
    return e;
  }
  // Capacity: the turn plus max_waiting in line. Whoever is first in line while the turn is free
  // is about to take it, so it counts as the turn.
  const size_t in_system = line_.size() + (busy_ ? 1 : 0);
  if (in_system >= max_waiting_ + 1) {
    e.admit = Admit::full;
    return e;
  }
  const uint64_t number = next_number_++;
  line_.push_back(number);
  e.admit = Admit::admitted;
  e.ticket.reset(new Ticket(*this, number));
  return e;
}

void FairQueue::close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  cv_.notify_all();
}

size_t FairQueue::n_waiting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return line_.size();
}

bool FairQueue::busy() const {
  std::lock_guard<std::mutex> lock(mu_);
  return busy_;
}

void FairQueue::leave(Ticket& t) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (t.turn_) {
      busy_ = false;
      t.turn_ = false;
    } else if (t.in_line_) {
      line_.erase(std::remove(line_.begin(), line_.end(), t.number_), line_.end());
    }
    t.in_line_ = false;
  }
  cv_.notify_all();
}

FairQueue::Ticket::~Ticket() { q_.leave(*this); }

FairQueue::Wait FairQueue::Ticket::wait(const std::function<bool()>& abandon, std::chrono::milliseconds poll) {
  if (turn_) return Wait::turn;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(q_.mu_);
      if (!in_line_) return Wait::abandoned;
      const auto ready = [&] { return q_.closed_ || (!q_.busy_ && q_.line_.front() == number_); };
      q_.cv_.wait_for(lock, poll, ready);
      if (q_.closed_) {
        lock.unlock();
        q_.leave(*this);
        return Wait::closed;
      }
      if (!q_.busy_ && q_.line_.front() == number_) {
        q_.line_.pop_front();
        q_.busy_ = true;
        turn_ = true;
        in_line_ = false;
        return Wait::turn;
      }
    }
    if (abandon && abandon()) {
      q_.leave(*this);
      return Wait::abandoned;
    }
  }
}

}  // namespace alap::server
