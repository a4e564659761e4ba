// The simulated GPU's bandwidth server (sim/kernel/resources.hpp) jumps over runs of full
// buckets; each request must still start where a walk over every bucket would start it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>

#include "sim/kernel/resources.hpp"

using memtopo::sim::kernel::Server;

namespace {

// Every bucket looked at in turn, from the request's own (or the first kept) on: the rule the
// server implements.
class WalkingServer {
 public:
  explicit WalkingServer(double rate) : rate_(rate) {}
  double serve(double t, double bytes) {
    const double k = Server::bucket_cycles();
    int64_t b = std::max(int64_t(std::floor(t / k)), first_ + offset_);
    double start = -1, left = bytes;
    for (;; ++b) {
      double& used = used_[b - offset_];
      const double room = rate_ * k - used;
      if (room > 1e-9) {
        if (start < 0) start = std::max(t, double(b) * k + used / rate_);
        const double take = std::min(room, left);
        used += take;
        left -= take;
      }
      if (left <= 1e-9) return start;
    }
  }
  void forget_before(double t) {
    first_ = std::max(first_, int64_t(std::floor(t / Server::bucket_cycles())) - offset_);
    used_.erase(used_.begin(), used_.lower_bound(first_));
  }
  void shift(double cycles) { offset_ += int64_t(std::llround(cycles / Server::bucket_cycles())); }

 private:
  double rate_;
  int64_t first_ = 0, offset_ = 0;  // bookings are kept at their bucket less offset_
  std::map<int64_t, double> used_;
};

}  // namespace

TEST_CASE("the bandwidth server starts each request where a walk over every bucket would", "[sim][server]") {
  const double rate = GENERATE(3.0, 57.5, 114.0);
  std::mt19937_64 rng(uint64_t(rate * 1000));
  Server server(rate);
  WalkingServer walk(rate);
  double now = 0;
  for (int i = 0; i < 4000; ++i) {
    const int kind = int(rng() % 100);
    if (kind < 3) {  // time passes: bookings before it are dropped
      now += double(rng() % 400);
      server.forget_before(now);
      walk.forget_before(now);
      continue;
    }
    if (kind < 4) {  // a steady state fast-forwarded
      const double cycles = Server::bucket_cycles() * double(rng() % 50);
      server.shift(cycles);
      walk.shift(cycles);
      now += cycles;
      continue;
    }
    // Most requests come now; some for later moments (a load that waited for a slot), which
    // leave runs of full buckets ahead of the present.
    const double t = now + (kind < 30 ? double(rng() % 4000) : double(rng() % 64));
    const double bytes = kind % 2 ? 32.0 : double(1 + rng() % 256);
    INFO("request " << i << " at " << t << " for " << bytes << " B");
    REQUIRE(server.serve(t, bytes) == walk.serve(t, bytes));
  }
}
