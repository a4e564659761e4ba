// The human summary at the end of `memtopo run`: a golden file for a fixed topology.
#include "helpers.hpp"
#include "topology/document/summary.hpp"

using namespace memtopo::host;

namespace {

ResultRecord rec(const std::string& key, Value v, mt_bound bound = MT_BOUND_EXACT) {
  ResultRecord r;
  r.key = key;
  r.value = std::move(v);
  r.bound = bound;
  return r;
}

// A key with the role its probe declares (docs/roles.md), where the shipped plugins' table has
// none for it.
ResultRecord with_role(ResultRecord r, const std::string& role) {
  r.role = role;
  return r;
}

// A key its probe declares as a headline value (MT_KEY_HEADLINE).
ResultRecord headline(ResultRecord r) {
  r.key_flags |= MT_KEY_HEADLINE;
  return r;
}

Value ints(std::vector<int64_t> v) {
  Value x;
  x.type = MT_VALUE_INT_ARRAY;
  x.ints = std::move(v);
  return x;
}

Value floats(std::vector<double> v) {
  Value x;
  x.type = MT_VALUE_FLOAT_ARRAY;
  x.floats = std::move(v);
  return x;
}

ProbeOutcome probe(const std::string& name, Status status, std::vector<ResultRecord> results) {
  ProbeOutcome o;
  o.probe = name;
  o.status = status;
  o.results = std::move(results);
  for (auto& r : o.results) r.probe = name;
  return o;
}

std::vector<ProbeOutcome> fixed_topology() {
  return {
      probe("device-info/properties", Status::Ok,
            {rec("device.name", Value::of_string("NVIDIA H100 80GB HBM3")),
             rec("device.compute_capability", Value::of_string("9.0")), rec("device.sm_count", Value::of_int(132)),
             rec("device.sm_clock_khz", Value::of_int(1755000)),
             rec("device.global_memory_bytes", Value::of_int(85899345920)),
             rec("device.warp_size", Value::of_int(32)), rec("device.memory_clock_khz", Value::of_int(2619000)),
             rec("device.memory_bus_width_bits", Value::of_int(5120)),
             rec("device.uuid", Value::of_string("GPU-00000000-1111-2222-3333-444444444444")),
             rec("device.pci_bus_id", Value::of_string("0000:17:00.0"))}),
      probe("data-cache/l1d-size", Status::Ok,
            {rec("l1d.size_bytes", Value::of_int(245760), MT_BOUND_AT_LEAST),
             rec("l1d.full_miss_bytes", Value::of_int(1536))}),
      probe("data-cache/l1d-line", Status::Ok,
            {rec("l1d.line_bytes", Value::of_int(128)), rec("l1d.fetch_granularity_bytes", Value::of_int(32))}),
      probe("data-cache/l1d-latency", Status::Ok,
            {rec("l1d.latency_cycles", Value::of_float(33.06)), rec("l1d.miss_penalty_cycles", Value::of_float(240))}),
      probe("data-cache/l1d-geometry", Status::Ok,
            {rec("l1d.sets", Value::of_int(4)), rec("l1d.ways", Value::of_int(480))}),
      probe("data-cache/l1d-policy", Status::Ok, {rec("l1d.replacement_policy", Value::of_string("lru"))}),
      // Not determinable: its kept result is shown; the ways it could not settle are not.
      probe("data-cache/l2-geometry", Status::NotDeterminable, {rec("l2.sets", Value::of_int(2048))}),
      probe("data-cache/l2-size", Status::Ok,
            {rec("l2.size_bytes", Value::of_int(52428800), MT_BOUND_AT_MOST),
             rec("l2.level_latencies_cycles", floats({262, 420.5})),
             rec("l2.level_start_bytes", ints({262144, 26214400, 52428800, 60000000, 70000000})),
             with_role(rec("l2.present", Value::of_bool(true)), "cache.present@l2_cache")}),
      // Failed: its results are not shown.
      probe("constant/constant_l15-size", Status::Failed, {rec("constant_l15.size_bytes", Value::of_int(1))}),
      probe("texture-readonly/texture-size", Status::Ok, {with_role(rec("texture.present", Value::of_bool(false)), "cache.present@texture_cache")}),
      // A drop-in plugin's element: one key of a known role; the rest listed, then counted.
      probe("tma/copy", Status::Ok,
            {with_role(rec("tma.latency_cycles", Value::of_int(480)), "memory.latency_cycles@tma"), rec("tma.copy_gbps", Value::of_float(1234.5)),
             rec("tma.mode", Value::of_string("bulk")), rec("tma.tile_bytes", Value::of_int(65536)),
             rec("tma.duration_s", Value::of_float(0.25)), rec("tma.clock_khz", Value::of_int(1234)),
             headline(rec("tma.width_bits", Value::of_int(1024))), rec("tma.multicast", Value::of_bool(true)),
             rec("tma.descriptor_kinds", Value::of_int(5)), rec("tma.swizzle_modes_bytes", ints({32, 64, 128})),
             rec("tma.note_one", Value::of_string("a string long enough to push the rest out of the line"))}),
      // Headline rates in their unit, before the other keys however long the line grows.
      probe("global-throughput/streams", Status::Ok,
            {rec("throughput.dram_copy_best_config", Value::of_string("a block of 1024 threads per round")),
             headline(rec("throughput.dram_read_bytes_per_second", Value::of_float(3197267959507.257))),
             headline(rec("throughput.l1_read_bytes_per_second", Value::of_float(29448366013071.895))),
             headline(rec("throughput.dram_read_fraction_of_theoretical", Value::of_float(0.9537478401546561)))}),
  };
}

}  // namespace

TEST_CASE("the run summary matches the golden file", "[host][summary]") {
  const std::string text = render_summary(fixed_topology());
  const auto golden_path = std::filesystem::path(MEMTOPO_HOST_TEST_DIR) / "golden" / "summary.txt";
  const std::string golden = test::read_file(golden_path);
  if (text != golden) {
    const auto actual = std::filesystem::path(MEMTOPO_BINARY_DIR) / "tests" / "summary.actual.txt";
    test::write_file(actual, text);
    FAIL("output differs from " << golden_path << "; actual output written to " << actual << ":\n" << text);
  }
}

TEST_CASE("summary units: whole KiB/MiB/GiB, cycles with one decimal", "[host][summary]") {
  CHECK(format_bytes(245760) == "240 KiB");
  CHECK(format_bytes(1536) == "1536 B");
  CHECK(format_bytes(50 * 1024 * 1024) == "50 MiB");
  CHECK(format_bytes(8LL << 30) == "8 GiB");
  CHECK(format_bytes(0) == "0 B");
  CHECK(format_bytes(63635825088) == "59.3 GiB");
  CHECK(format_bytes(339328) == "339328 B");
  CHECK(format_bytes(22020160) == "21.0 MiB");
  CHECK(format_cycles(33.06) == "33.1 cyc");
  CHECK(format_cycles(240) == "240.0 cyc");
  CHECK(render_summary({}).empty());
}

TEST_CASE("compare rows: the known keys, then every column's headline keys", "[host][summary]") {
  ProbeOutcome a = probe("p/q", Status::Ok, {headline(rec("tlb.level_count", Value::of_int(2))),
                                               rec("tlb.l1_entries", Value::of_int(16))});
  ProbeOutcome b = probe("p/q", Status::Ok, {rec("tlb.level_count", Value::of_int(1)),
                                               headline(rec("tlb.mapped_level_count", Value::of_int(3)))});
  const SummaryTable t = summary_table({{"a", {a}, ""}, {"b", {b}, ""}});
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0] == std::vector<std::string>{"tlb level_count", "2", "1"});
  CHECK(t.rows[1] == std::vector<std::string>{"tlb mapped_level_count", "-", "3"});
  CHECK(t.numbers[0] == std::vector<double>{2, 1});
}
