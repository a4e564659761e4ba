// Shared resources of the simulated GPU that make loads queue: bandwidth servers (a rate in
// bytes per cycle) and limits on loads in flight (an SM's miss queues). Each is consulted in
// the order of simulated time, so a request's start is the later of its arrival and the
// resource's next free moment (docs/simulator.md, "Probe kernels").
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

namespace memtopo::sim::kernel {

// Serves bytes at `rate` per cycle (0: no limit). Its time is booked in buckets of a few
// cycles, so that a request booked for later (a load that first waits for a slot in flight)
// never holds back one that comes for an earlier moment: each gets the first room at or after
// its own time.
class Server {
 public:
  explicit Server(double bytes_per_cycle = 0) : rate_(bytes_per_cycle) {}
  void set_rate(double bytes_per_cycle) {
    rate_ = bytes_per_cycle;
    std::fill(skip_.begin(), skip_.end(), 0u);  // which buckets are full depends on the rate
  }
  // When `bytes` that arrive at `t` start to be served: a request's latency counts from there.
  double serve(double t, double bytes) {
    if (rate_ <= 0) return t;
    // Buckets before room_ are full: a request for a moment in them starts at room_.
    int64_t b = std::max({int64_t(std::floor(t / kBucket)), first_, room_});
    double start = -1, left = bytes;
    const double capacity = rate_ * kBucket;
    for (;; ++b) {
      // Runs of full buckets ahead of room_ (booked by requests for later moments) are jumped
      // over: a backlog of DRAM write-backs made each request walk it bucket by bucket.
      const int64_t open = first_open(b);
      if (b <= room_ && room_ < open) room_ = open;
      b = open;
      // A bucket's bookings count as packed from its start: capacity is never lost to a gap
      // before a request booked for later, at the price of a start a few cycles off.
      double& used = bucket(b);
      const double base = double(b) * kBucket;
      const double room = capacity - used;
      if (room > 1e-9) {
        if (start < 0) start = std::max(t, base + used / rate_);
        const double take = std::min(room, left);
        used += take;
        left -= take;
      }
      if (capacity - used <= 1e-9) skip_[index(b)] = 1;
      if (b == room_ && used >= capacity - 1e-9) room_ = b + 1;
      if (left <= 1e-9) return start;
    }
  }
  // Bookings before `t` matter no more: no request comes for an earlier moment.
  void forget_before(double t) {
    const int64_t b = int64_t(std::floor(t / kBucket));
    while (first_ < b && head_ < used_.size()) {
      ++head_;
      ++first_;
    }
    if (head_ == used_.size()) {
      used_.clear();
      skip_.clear();
      head_ = 0;
      first_ = std::max(first_, b);
    } else if (head_ >= 1024 && 2 * head_ >= used_.size()) {  // drop the front now and then
      used_.erase(used_.begin(), used_.begin() + std::ptrdiff_t(head_));
      skip_.erase(skip_.begin(), skip_.begin() + std::ptrdiff_t(head_));
      head_ = 0;
    }
  }
  // Every booking `cycles` later (a whole number of buckets): the fast-forward of a steady state.
  void shift(double cycles) {
    const int64_t b = int64_t(std::llround(cycles / kBucket));
    first_ += b;
    room_ += b;
  }
  static constexpr double bucket_cycles() { return kBucket; }
  void reset(double t) {
    used_.clear();
    skip_.clear();
    head_ = 0;
    first_ = room_ = int64_t(std::floor(t / kBucket));
  }

 private:
  static constexpr double kBucket = 16;  // cycles
  size_t index(int64_t b) const { return head_ + size_t(b - first_); }
  double& bucket(int64_t b) {
    const size_t i = index(b);
    if (i >= used_.size()) {
      used_.resize(i + 1, 0.0);
      skip_.resize(i + 1, 0u);
    }
    return used_[i];
  }
  // The first bucket at or after `b` not known to be full, following the skip links and
  // pointing each link it passed at that bucket (path compression: each run is walked once).
  int64_t first_open(int64_t b) {
    const size_t from = index(b);
    size_t i = from;
    while (i < skip_.size() && skip_[i]) i += skip_[i];
    for (size_t j = from; j < i;) {
      const size_t next = j + skip_[j];
      skip_[j] = uint32_t(i - j);
      j = next;
    }
    return b + int64_t(i - from);
  }
  double rate_ = 0;
  int64_t first_ = 0, room_ = 0;
  // Bytes booked in each bucket from first_ on, at used_[head_] onwards: the front goes as time
  // passes (a vector with a moving head: a deque's two-level indexing cost a tenth of a stream).
  std::vector<double> used_;
  // Per bucket of used_: 0, or how far ahead the next bucket that may have room lies (it is full).
  std::vector<uint32_t> skip_;
  size_t head_ = 0;
};

// At most `limit` requests in flight at once (0: no limit): a request that arrives while all
// are taken starts when the earliest ends.
class InFlight {
 public:
  explicit InFlight(uint32_t limit = 0) : limit_(limit) {}
  void set_limit(uint32_t limit) { limit_ = limit; }
  // The start of a request arriving at `t`; then end(start + its latency).
  double start(double t) {
    while (!ends_.empty() && ends_.top() <= t) ends_.pop();
    if (limit_ == 0 || ends_.size() < limit_) return t;
    const double s = ends_.top();
    ends_.pop();
    return std::max(t, s);
  }
  void end(double t) {
    if (limit_ > 0) ends_.push(t);
  }
  void reset() { ends_ = {}; }
  void shift(double cycles) {
    std::vector<double> ends;
    for (; !ends_.empty(); ends_.pop()) ends.push_back(ends_.top() + cycles);
    for (double e : ends) ends_.push(e);
  }

 private:
  uint32_t limit_;
  std::priority_queue<double, std::vector<double>, std::greater<double>> ends_;
};

}  // namespace memtopo::sim::kernel
