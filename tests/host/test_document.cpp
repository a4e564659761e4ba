// The topology writer (golden file), atomic writing, the journal.
#include <algorithm>

#include "helpers.hpp"
#include "topology/document/document.hpp"
#include "run/output/journal.hpp"
#include "topology/values/schema.hpp"
#include "topology/values/topology_text.hpp"

using namespace memtopo::host;

namespace {

Meta fixed_meta() {
  Meta m;
  m.tool_version = "0.1.0";
  m.git_commit = "0123456789ab";
  m.created_utc = "2026-11-21T16:00:00Z";
  m.host = "builder";
  m.backend = "cuda";
  m.device_spec = "cuda:0";
  m.driver_version = cuda_version_string(13000);
  m.runtime_version = cuda_version_string(12040);
  m.abi = "1.0";
  return m;
}

ResultRecord rec(const std::string& probe, const std::string& key, Value v, double confidence = 1.0,
                 mt_bound bound = MT_BOUND_EXACT, const std::string& note = "") {
  ResultRecord r;
  r.probe = probe;
  r.key = key;
  r.value = std::move(v);
  r.confidence = confidence;
  r.bound = bound;
  r.note = note;
  return r;
}

// An ok outcome of `probe` with one result.
ProbeOutcome ok_outcome(const std::string& probe, const std::string& version, double duration_s, ResultRecord r) {
  ProbeOutcome o;
  o.probe = probe;
  o.version = version;
  o.status = Status::Ok;
  o.duration_s = duration_s;
  o.results = {std::move(r)};
  return o;
}

std::vector<ProbeOutcome> sample_outcomes() {
  ProbeOutcome cache;
  cache.probe = "data-cache/l1d-size";
  cache.version = "1.0.0";
  cache.status = Status::Ok;
  cache.duration_s = 1.25;
  Value sizes;
  sizes.type = MT_VALUE_INT_ARRAY;
  sizes.ints = {32768, 65536};
  cache.results = {rec(cache.probe, "l1d.size_bytes", Value::of_int(262144), 0.97, MT_BOUND_EXACT, "says \"hi\""),
                   rec(cache.probe, "l1d.hit_cycles", Value::of_float(33.5), 0.9, MT_BOUND_AT_LEAST),
                   rec(cache.probe, "l1d.tried_bytes", sizes), rec(cache.probe, "l2.line_bytes", Value::of_int(128))};
  ProbeOutcome dev;
  dev.probe = "device-info/properties";
  dev.version = "1.0.0";
  dev.status = Status::Ok;
  dev.duration_s = 0.002;
  dev.results = {rec(dev.probe, "device.sm_count", Value::of_int(132)),
                 rec(dev.probe, "device.name", Value::of_string("NVIDIA H100")),
                 rec(dev.probe, "device.ecc", Value::of_bool(true))};
  ProbeOutcome failed;
  failed.probe = "constant/l15";
  failed.version = "0.9.0";
  failed.status = Status::Failed;
  failed.reason = "launch failed";
  failed.duration_s = 0.5;
  failed.results = {rec(failed.probe, "constant_l15.size_bytes", Value::of_int(1))};  // not written
  ProbeOutcome skipped;
  skipped.probe = "tlb/l1";
  skipped.version = "1.0.0";
  skipped.status = Status::Skipped;
  skipped.reason = "needs l2.size_bytes, which no loaded probe provides";
  return {cache, failed, dev, skipped};
}

}  // namespace

TEST_CASE("the writer matches the golden file and the schema", "[host][document]") {
  const std::string text = render_topology(fixed_meta(), sample_outcomes());
  const auto golden_path = std::filesystem::path(MEMTOPO_HOST_TEST_DIR) / "golden" / "basic.toml";
  const std::string golden = test::read_file(golden_path);
  if (text != golden) {
    const auto actual = std::filesystem::path(MEMTOPO_BINARY_DIR) / "tests" / "basic.actual.toml";
    test::write_file(actual, text);
    FAIL("output differs from " << golden_path << "; actual output written to " << actual);
  }
  const auto doc = toml::parse(text);
  CHECK(validate_topology(toml_to_json(doc)).empty());
  CHECK(doc["meta"]["created_utc"].is_date_time());
  CHECK(doc["l1d"]["hit_cycles"].value<double>() == 33.5);
  CHECK_FALSE(doc.contains("constant_l15"));  // results of a failed probe are not written
}

TEST_CASE("cuda version strings", "[host][document]") {
  CHECK(cuda_version_string(13000) == "13.0");
  CHECK(cuda_version_string(12040) == "12.4");
  CHECK_FALSE(cuda_version_string(0));
}

TEST_CASE("atomic write replaces the file and leaves no temporary behind", "[host][document]") {
  test::TempDir dir("atomic");
  const auto out = dir / "t.toml";
  test::write_file(out, "old");
  write_atomically(out, "new contents\n");
  CHECK(test::read_file(out) == "new contents\n");
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path)) {
    (void)e;
    ++files;
  }
  CHECK(files == 1);
  CHECK_THROWS_WITH(write_atomically(dir / "missing-folder" / "t.toml", "x"), Catch::Contains("cannot write"));
}

TEST_CASE("journal records round-trip and a torn last line is ignored", "[host][journal]") {
  test::TempDir dir("journal");
  const auto path = journal_path_for(dir / "out.toml");
  CHECK(path.filename() == "out.toml.journal");
  const auto outcomes = sample_outcomes();
  {
    JournalWriter w;
    w.open_new(path, {{"memtopo_journal", 1}, {"device_spec", "sim"}});
    w.append(outcomes[0]);
    w.append(outcomes[1]);
  }
  {
    JournalWriter w;
    w.open_append(path);
    w.append(outcomes[2]);
  }
  {
    std::ofstream torn(path, std::ios::app);
    torn << "{\"probe\": \"half";
  }
  const JournalContents c = read_journal(path);
  CHECK(c.header["device_spec"] == "sim");
  REQUIRE(c.outcomes.size() == 3);
  REQUIRE(c.warnings.size() == 1);
  CHECK(c.warnings[0].find(":5: record ignored") != std::string::npos);
  // Round trip: the document written from the journal equals the one from memory.
  CHECK(render_topology(fixed_meta(), c.outcomes) ==
        render_topology(fixed_meta(), {outcomes[0], outcomes[1], outcomes[2]}));
  CHECK(c.outcomes[0].results[1].value.type == MT_VALUE_FLOAT);
  CHECK_THROWS_WITH(read_journal(dir / "out.toml"), Catch::Contains("cannot read journal"));
}

TEST_CASE("a not determinable probe: its kept results and its status are written, and journaled", "[host][document]") {
  ProbeOutcome nd;
  nd.probe = "data-cache/l1d-geometry";
  nd.version = "1.0.0";
  nd.status = Status::NotDeterminable;
  nd.reason = "a hashed set index hides the sets";
  nd.duration_s = 0.25;
  nd.results = {rec(nd.probe, "l1d.set_mapping", Value::of_string("hashed"), 0.8)};
  const std::string text = render_topology(fixed_meta(), {nd});
  const auto doc = toml::parse(text);
  CHECK(validate_topology(toml_to_json(doc)).empty());
  CHECK(doc["l1d"]["set_mapping"].value<std::string>() == "hashed");
  CHECK(doc["probes"]["data-cache/l1d-geometry"]["status"].value<std::string>() == "not_determinable");
  CHECK(doc["probes"]["data-cache/l1d-geometry"]["reason"].value<std::string>() == "a hashed set index hides the sets");

  const ProbeOutcome back = outcome_from_json(outcome_to_json(nd));
  CHECK(back.status == Status::NotDeterminable);
  CHECK(back.reason == nd.reason);
  REQUIRE(back.results.size() == 1);
  CHECK(back.results[0].value.s == "hashed");
}

TEST_CASE("keys without a value are written with their reasons, journaled and valid", "[host][document][absent]") {
  ProbeOutcome o = ok_outcome("data-cache/l2-latency", "1.0.0", 0.5,
                              rec("data-cache/l2-latency", "l2.latency_cycles", Value::of_float(260), 0.9));
  o.absent_keys = {{"l2.far_latency_cycles", "one partition: \"no\" far line"}, {"dram.latency_cycles", "most loads hit"}};
  const std::string text = render_topology(fixed_meta(), {o});
  CHECK(text.find("[probes.\"data-cache/l2-latency\".absent]\n\"dram.latency_cycles\" = \"most loads hit\"\n") !=
        std::string::npos);
  const auto doc = toml::parse(text);
  CHECK(validate_topology(toml_to_json(doc)).empty());
  CHECK(doc["probes"]["data-cache/l2-latency"]["absent"]["l2.far_latency_cycles"].value<std::string>() ==
        "one partition: \"no\" far line");
  CHECK(outcome_from_json(outcome_to_json(o)).absent_keys == o.absent_keys);

  toml::table bad = doc;
  bad["probes"].as_table()->get_as<toml::table>("data-cache/l2-latency")->get_as<toml::table>("absent")->insert("L2", "x");
  const auto errors = validate_topology(toml_to_json(bad));
  CHECK(std::any_of(errors.begin(), errors.end(), [](const SchemaError& e) {
    return e.path == "/probes/data-cache~1l2-latency/absent/L2" && e.message.find("bad key name") != std::string::npos;
  }));
}

TEST_CASE("a probe's options other than its defaults are written, journaled and valid", "[host][document][options]") {
  ProbeOutcome o = ok_outcome(
      "global-throughput/streams", "2.1.0", 2.5,
      rec("global-throughput/streams", "throughput.dram_read_bytes_per_second", Value::of_float(3e12), 0.9));
  Value series;
  series.type = MT_VALUE_STRING_ARRAY;
  series.strings = {"dram_read", "l2_read"};
  o.options = {{"series", series}, {"passes", Value::of_int(4)}, {"fraction", Value::of_float(2)}};
  const std::string text = render_topology(fixed_meta(), {o});
  CHECK(text.find("[probes.\"global-throughput/streams\".options]\n\"fraction\" = 2.0\n\"passes\" = 4\n"
                  "\"series\" = [\"dram_read\", \"l2_read\"]\n") != std::string::npos);
  const auto doc = toml::parse(text);
  CHECK(validate_topology(toml_to_json(doc)).empty());
  const ProbeOutcome back = outcome_from_json(outcome_to_json(o));
  CHECK(back.options == o.options);
  CHECK(back.options.at("fraction").type == MT_VALUE_FLOAT);  // 2.0 stays a float

  toml::table bad = doc;
  bad["probes"].as_table()->get_as<toml::table>("global-throughput/streams")->get_as<toml::table>("options")->insert_or_assign(
      "series", toml::table{{"a", 1}});
  const auto errors = validate_topology(toml_to_json(bad));
  INFO(errors.size());
  CHECK(std::any_of(errors.begin(), errors.end(), [](const SchemaError& e) {
    return e.path == "/probes/global-throughput~1streams/options/series";
  }));
}

TEST_CASE("a provenance entry with every flag, a role and a counters check comes back from export as written",
          "[host][document][export]") {
  ProbeOutcome o;
  o.probe = "links/attachment";
  o.version = "1.0.0";
  o.status = Status::Ok;
  ResultRecord r = rec(o.probe, "attachment.pcie_link", Value::of_string("ok"), 1.0, MT_BOUND_EXACT, "trained");
  r.key_flags = MT_KEY_IDENTITY | MT_KEY_VARIES | MT_KEY_ESTIMATE | MT_KEY_HEADLINE | MT_KEY_RATED |
                MT_KEY_STRUCTURE | MT_KEY_ALWAYS | MT_KEY_HEALTH;
  r.role = "bus.pcie_health";
  r.verified = "counters";
  r.counted_bytes = 4096;
  r.verify_note = "counted at the link";
  o.results = {r};
  const std::string text = render_topology(fixed_meta(), {o});
  CHECK(text.find("always = true, health = true, role = \"bus.pcie_health\", verified = \"counters\"") !=
        std::string::npos);
  CHECK(topology_toml_text(toml::parse(text)) == text);
  CHECK(validate_topology(toml_to_json(toml::parse(text))).empty());
  CHECK(outcome_from_json(outcome_to_json(o)).results.at(0).role == "bus.pcie_health");
}
