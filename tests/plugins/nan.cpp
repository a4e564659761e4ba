// t-nan: results that are not finite numbers or not UTF-8 (refused by the host), beside a
// valid one.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <memtopo/probe.hpp>

static memtopo::Probe scalar() {
  return memtopo::Probe("t-nan/scalar")
      .summary("reports NaN cycles")
      .provides({"t.nan_cycles"})
      .run([](memtopo::Context& ctx) { ctx.result("t.nan_cycles", std::nan("")); });
}

static memtopo::Probe array() {
  return memtopo::Probe("t-nan/array")
      .summary("reports an array holding infinity")
      .provides({"t.spread"})
      .run([](memtopo::Context& ctx) {
        ctx.result("t.spread", std::vector<double>{1.5, std::numeric_limits<double>::infinity()});
      });
}

static memtopo::Probe fine() {
  return memtopo::Probe("t-nan/fine")
      .summary("reports a finite value")
      .provides({"t.fine_cycles"})
      .run([](memtopo::Context& ctx) { ctx.result("t.fine_cycles", 2.5); });
}

static memtopo::Probe bytes() {
  return memtopo::Probe("t-nan/bytes")
      .summary("reports text that is not UTF-8")
      .provides({"t.text"})
      .run([](memtopo::Context& ctx) { ctx.result("t.text", std::string("caf\xc3")); });
}

MEMTOPO_PLUGIN("t-nan", "1.0.0", scalar(), array(), fine(), bytes())
