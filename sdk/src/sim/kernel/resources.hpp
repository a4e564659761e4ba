// Shared resources of the simulated GPU that make loads queue: bandwidth servers (a rate in
// bytes per cycle) and limits on loads in flight (an SM's miss queues). Each is consulted in
// the order of simulated time, so a request's start is the later of its arrival and the
// resource's next free moment (docs/simulator.md, "Probe kernels").
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

namespace memtopo::sim::kernel {

// Serves bytes at `rate` per cycle, in order of arrival; rate 0: no limit.
class Server {
 public:
  explicit Server(double bytes_per_cycle = 0) : rate_(bytes_per_cycle) {}
  void set_rate(double bytes_per_cycle) { rate_ = bytes_per_cycle; }
  // When `bytes` that arrive at `t` start to be served (the server is then busy with them
  // for bytes / rate): a request's latency counts from there.
  double serve(double t, double bytes) {
    if (rate_ <= 0) return t;
    const double start = std::max(t, free_);
    free_ = start + bytes / rate_;
    return start;
  }
  double free_at() const { return free_; }
  void reset(double t) { free_ = t; }

 private:
  double rate_ = 0;
  double free_ = 0;
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

 private:
  uint32_t limit_;
  std::priority_queue<double, std::vector<double>, std::greater<double>> ends_;
};

}  // namespace memtopo::sim::kernel
