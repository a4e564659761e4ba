// t-slow: a quick probe, then one that waits (polling cancelled()) so a test can interrupt
// a live run or start a second run beside it. The waiting probe creates the file named by
// its `marker` option when it starts: the test's signal that the run is under way.
#include <chrono>
#include <fstream>
#include <thread>

#include <memtopo/probe.hpp>

static memtopo::Probe quick() {
  return memtopo::Probe("t-slow/quick")
      .summary("reports at once")
      .provides({"t.quick_bytes"})
      .run([](memtopo::Context& ctx) { ctx.result("t.quick_bytes", int64_t{1}); });
}

static memtopo::Probe wait() {
  return memtopo::Probe("t-slow/wait")
      .summary("waits until cancelled or `seconds` passed")
      .provides({"t.waited_s"})
      .option("marker", MT_VALUE_STRING, "", "file to create when the probe starts (empty: none)")
      .option("seconds", MT_VALUE_FLOAT, "30", "how long to wait at most")
      .run([](memtopo::Context& ctx) {
        const auto marker = ctx.option<std::string>("marker");
        if (!marker.empty()) std::ofstream(marker) << "started\n";
        const auto t0 = std::chrono::steady_clock::now();
        const double limit_s = ctx.option<double>("seconds");
        double waited_s = 0;
        while (!ctx.cancelled() && waited_s < limit_s) {
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
          waited_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        }
        ctx.result("t.waited_s", waited_s);
      });
}

MEMTOPO_PLUGIN("t-slow", "1.0.0", quick(), wait())
