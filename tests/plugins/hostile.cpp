// t-hostile: what a careless or hostile plugin hands the host: raw-series column names that
// would break a CSV or run as spreadsheet formulas, a series name that climbs out of --raw-dir,
// an option with a declared range (tests/host/test_hostile_input.cpp).
#include <memtopo/probe.hpp>

static memtopo::Probe columns() {
  return memtopo::Probe("t-hostile/columns")
      .provides({"t.columns_bytes"})
      .option("count", MT_VALUE_INT, "3", "a number in a declared range")
      .range("1", "10")
      .run([](memtopo::Context& ctx) {
        ctx.result("t.columns_bytes", ctx.option<int64_t>("count"));
        ctx.raw("curve", {"=cmd|' /C calc'!A0", "x,y\n\"z", "@sum", "plain"}, {1, 2, 3, 4});
      });
}

static memtopo::Probe escape() {
  return memtopo::Probe("t-hostile/escape")
      .provides({"t.escape_bytes"})
      .run([](memtopo::Context& ctx) {
        ctx.result("t.escape_bytes", int64_t{1});
        ctx.raw("../../x", {"a"}, {1});
      });
}

MEMTOPO_PLUGIN("t-hostile", "1.0.0", columns(), escape())
