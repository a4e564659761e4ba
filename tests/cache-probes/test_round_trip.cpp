// The quality bars of the cache plugins on the simulated GPU: on every shipped device they
// recover every L1, L2, texture, read-only and constant parameter of the description; with
// measurement noise switched on the same results come out; a cache with no transition in
// the searched range is reported as a bound.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <toml++/toml.h>

#include "memtopo_run.hpp"

namespace fs = std::filesystem;

namespace {

const char* const kElements[] = {"l1d", "texture", "readonly", "constant_l1", "constant_l15", "l2"};
const char* const kExactKeys[] = {"line_bytes", "fetch_granularity_bytes", "sets", "ways", "partitions"};
const char* const kLatencyKeys[] = {"latency_cycles", "far_latency_cycles"};

using probetest::add_noise;
using probetest::device_file;
using probetest::scratch;
using probetest::write_variant;

const char* const kCacheProbes = "data-cache,texture-readonly,constant,cache-sharing/l2-partitions";

// Runs the cache plugins on a simulated device; returns the topology written.
toml::table measure(const fs::path& device, const std::string& tag, const std::string& only = kCacheProbes) {
  return probetest::run_memtopo(device, tag, only);
}

void compare(const toml::table& ref, const toml::table& got) {
  for (const char* e : kElements) {
    const toml::table* r = ref[e].as_table();
    if (!r) continue;
    for (const char* k : kExactKeys) {
      if (auto want = (*r)[k].value<int64_t>()) {
        INFO(e << "." << k);
        CHECK(got[e][k].value<int64_t>() == want);
      }
    }
    if (auto want = (*r)["size_bytes"].value<int64_t>()) {
      INFO(e << ".size_bytes");
      const auto have = got[e]["size_bytes"].value<int64_t>();
      REQUIRE(have);
      // Within one line.
      const int64_t line = (*r)["line_bytes"].value_or<int64_t>(128);
      CHECK(std::fabs(double(*have - *want)) <= double(line));
    }
    if (auto want = (*r)["replacement_policy"].value<std::string>()) {
      INFO(e << ".replacement_policy");
      CHECK(got[e]["replacement_policy"].value<std::string>() == want);
    }
    if (std::string(e) == "l2" && r->contains("size_bytes") && (*r)["replacement_policy"].value_or<std::string>("lru") == "lru") {
      // The level sweep: the L2's plateau, then the next level (memory) half way up the ramp
      // between the footprints either side of the L2's size (the sweep steps by 1/8 octave).
      // Random replacement has no plateau after the L2 within the sweep.
      INFO("l2.level_start_bytes");
      const toml::array* starts = got["l2"]["level_start_bytes"].as_array();
      REQUIRE(starts);
      REQUIRE(starts->size() == 2);
      const double l2 = double((*r)["size_bytes"].value_or<int64_t>(0));
      const double next = double((*starts)[1].value_or<int64_t>(0));
      CHECK(next > l2 / 1.0906);
      CHECK(next <= l2 * 1.0906);
    }
    for (const char* k : kLatencyKeys) {
      if (auto want = (*r)[k].value<double>()) {
        INFO(e << "." << k);
        const auto have = got[e][k].value<double>();
        REQUIRE(have);
        CHECK(std::fabs(*have - *want) <= 0.05 * *want);
      }
    }
  }
}

}  // namespace

TEST_CASE("cache probes recover every shipped simulated device", "[cache][sim]") {
  const std::string name = GENERATE("hopper-like.toml", "kepler-like.toml", "pascal-like.toml");
  INFO(name);
  const toml::table ref = toml::parse_file(device_file(name).string());
  const toml::table got = probetest::shared_run(device_file(name), "exact-" + name, kCacheProbes);
  // Minimal eviction sets name the ways of an LRU L1; under random replacement (Pascal-like)
  // they come out of many sizes and the probe says so.
  const bool lru_l1 = ref["l1d"]["replacement_policy"].value_or<std::string>("lru") == "lru";
  // The L2's eviction sets, an opt-in probe, run only when named (their own test,
  // plugins/data-cache/tests): --only data-cache leaves them out.
  CHECK(!got["probes"]["data-cache/l2-eviction-sets"]);
  for (auto&& [probe, status] : *got["probes"].as_table()) {
    INFO(probe.str());
    const bool eviction = probe.str() == "data-cache/l1d-eviction-sets";
    CHECK(status.as_table()->at("status").value<std::string>() == (eviction && !lru_l1 ? "not_determinable" : "ok"));
  }
  if (lru_l1) CHECK(got["l1d"]["eviction_set_ways"].value<int64_t>() == ref["l1d"]["ways"].value<int64_t>());
  compare(ref, got);
}

namespace {

// The keys a run wrote ("l1d.sets"), and those its probes recorded absent, with why.
std::map<std::string, std::string> written_keys(const toml::table& t, std::map<std::string, std::string>* absent) {
  std::map<std::string, std::string> out;
  for (auto&& [table, node] : t) {
    const std::string name(table.str());
    if (name == "probes" && node.is_table())
      for (auto&& [probe, entry] : *node.as_table())
        if (const toml::table* a = entry.as_table() ? (*entry.as_table())["absent"].as_table() : nullptr)
          for (auto&& [key, why] : *a) (*absent)[std::string(key.str())] = why.value_or(std::string());
    if (name == "meta" || name == "provenance" || name == "probes" || name == "sim" || !node.is_table()) continue;
    for (auto&& [key, _] : *node.as_table()) out[name + "." + std::string(key.str())] = "";
  }
  return out;
}

}  // namespace

TEST_CASE("cache probes give the same results with measurement noise on", "[cache][sim][noise]") {
  const std::string name = GENERATE("hopper-like.toml", "kepler-like.toml", "pascal-like.toml");
  INFO(name);
  const std::string noisy = write_variant(name, "noisy", [](toml::table& t) { add_noise(t, 7); });
  const toml::table got = measure(noisy, "noisy-" + name);
  compare(toml::parse_file(device_file(name).string()), got);
  // Noise moves values, never which keys a run writes: every key of the exact run is in the
  // noisy one and no other (an absent key's reason says what went missing).
  const toml::table exact = probetest::shared_run(device_file(name), "exact-" + name, kCacheProbes);
  std::map<std::string, std::string> absent_exact, absent_noisy;
  const auto keys_exact = written_keys(exact, &absent_exact), keys_noisy = written_keys(got, &absent_noisy);
  for (const auto& [key, _] : keys_exact) {
    INFO(key << " absent with noise: " << (absent_noisy.count(key) ? absent_noisy[key] : "(no reason)"));
    CHECK(keys_noisy.count(key));
  }
  for (const auto& [key, _] : keys_noisy) {
    INFO(key << " absent without noise: " << (absent_exact.count(key) ? absent_exact[key] : "(no reason)"));
    CHECK(keys_exact.count(key));
  }
}


TEST_CASE("hit latencies under noise of a few cycles' mean and rare long outliers are the model's", "[cache][sim][noise]") {
  // Geometric noise of mean 4 cycles on every load (its lowest values near 0) and one load in
  // 500 interrupted for 3000 cycles: a chase's time per load holds the noise's mean, which the
  // single loads' spread takes off again (analysis::noise_excess).
  const std::string name = GENERATE("hopper-like.toml", "pascal-like.toml");
  INFO(name);
  const std::string noisy = write_variant(name, "geonoise", [](toml::table& t) {
    toml::table& sim = *t["sim"].as_table();
    sim.insert_or_assign("noise_cycles", 4);
    sim.insert_or_assign("noise_distribution", "geometric");
    sim.insert_or_assign("outlier_probability", 0.002);
    sim.insert_or_assign("outlier_cycles", 3000);
    sim.insert_or_assign("seed", 11);
  });
  const toml::table ref = toml::parse_file(device_file(name).string());
  const toml::table got = measure(noisy, "geonoise-" + name, "data-cache,texture-readonly,constant,shared-memory/banks");
  for (const char* e : {"l1d", "texture", "readonly", "constant_l1", "constant_l15", "l2", "shared"}) {
    const auto want = ref[e]["latency_cycles"].value<double>();
    if (!want) continue;
    INFO(e << ".latency_cycles");
    const auto have = got[e]["latency_cycles"].value<double>();
    REQUIRE(have);
    // The L2's levels come from pooled single loads less the timing's cost (their mean less a
    // chase's over the same footprints). Each of the two means holds about 65 outliers of 3000
    // cycles over 32768 loads, a Poisson count: 0.74 cycles of standard deviation each, 1.05
    // for the difference, so 4 cycles is 3.8 of them (3.2 came up once after the noise draws
    // of earlier probes changed); before the noise was taken off it was 5 to 6 cycles high.
    CHECK(std::fabs(*have - *want) <= (std::string(e) == "l2" ? 4.0 : 1.0));
  }
}

TEST_CASE("a cache with no transition in the searched range is reported as a bound", "[cache][sim]") {
  // A constant L1.5 larger than the constant path reaches: 64 KiB of constant memory, and on
  // Volta and later (the hopper-like device) 31 KiB of kernel parameters behind it.
  const std::string big = write_variant("hopper-like.toml", "bigl15", [](toml::table& t) {
    toml::table& c = *t["constant_l15"].as_table();
    c.insert_or_assign("size_bytes", 131072);
    c.insert_or_assign("sets", 64);
  });
  const toml::table got = measure(big, "bigl15", "constant");
  CHECK(got["constant_l15"]["size_bytes"].value<int64_t>() == 97280);
  CHECK(got["provenance"]["constant_l15"]["size_bytes"]["bound"].value<std::string>() == "at_least");
  CHECK_THAT(got["provenance"]["constant_l15"]["size_bytes"]["note"].value_or(std::string()),
             Catch::Contains("31744 bytes of kernel parameters"));
  // A launch finds the constant caches cold: the first pass misses once per L1.5 line.
  CHECK(got["constant_l15"]["fetch_granularity_bytes"].value<int64_t>() == 256);
  // Without the line, the hit chase still steps by the constant L1's line: every load misses
  // the L1 in front (at 32 B the median mixed L1 and L1.5 hits, 62 instead of 96 cycles).
  CHECK(got["constant_l15"]["latency_cycles"].value_or(0.0) == Approx(96).epsilon(0.05));
  // The smaller caches of the same device are still measured exactly.
  CHECK(got["constant_l1"]["size_bytes"].value<int64_t>() == 2048);
}

TEST_CASE("a constant L1.5 past 64 KiB is measured through the kernel parameters", "[cache][sim]") {
  // 80 KiB: past constant memory, within the reach of constant memory and kernel parameters
  // on Volta and later; a Kepler has no such parameter space, so there it stays a bound.
  const std::string name = GENERATE("hopper-like.toml", "kepler-like.toml");
  INFO(name);
  const std::string dev = write_variant(name, "l15-80k", [](toml::table& t) {
    toml::table& c = *t["constant_l15"].as_table();
    c.insert_or_assign("size_bytes", 81920);
    c.insert_or_assign("sets", 16);
    c.insert_or_assign("ways", 20);
  });
  const toml::table got = measure(dev, "l15-80k-" + name, "constant");
  const std::string bound = got["provenance"]["constant_l15"]["size_bytes"]["bound"].value_or(std::string());
  if (name == "hopper-like.toml") {
    CHECK(got["constant_l15"]["size_bytes"].value<int64_t>() == 81920);
    CHECK(bound == "exact");
    // Odd strides need 3x the size, past the reach; strides just past the line do not.
    CHECK(got["constant_l15"]["line_bytes"].value<int64_t>() == 256);
    CHECK(got["constant_l15"]["fetch_granularity_bytes"].value<int64_t>() == 256);
  } else {
    CHECK(got["constant_l15"]["size_bytes"].value<int64_t>() == 65536);
    CHECK(bound == "at_least");
  }
}

TEST_CASE("other traffic in the L2 costs the size a little, never the line", "[cache][sim]") {
  // One load in a thousand brings another client's line into the L2 first, as on the H100,
  // where lines of full sets go missing below the capacity. The first misses of the cyclic
  // sweep then come before the capacity (6.4 % early on the hopper-like L2, seed 1); the
  // size, as the lines held under random loads, misses only the lines the other client
  // holds (0.15 %), and the line, the fetch unit and the next level's start stay exact.
  const std::string name = GENERATE("hopper-like.toml", "kepler-like.toml");
  INFO(name);
  const std::string dev = write_variant(name, "foreign", [](toml::table& t) {
    toml::table& sim = *t["sim"].as_table();
    if (!sim.contains("l2")) sim.insert("l2", toml::table{});
    sim["l2"].as_table()->insert_or_assign("foreign_line_probability", 1e-3);
  });
  const toml::table ref = toml::parse_file(device_file(name).string());
  const toml::table got = measure(dev, "foreign-" + name,
                                  "data-cache/l1d-size,data-cache/l1d-line,data-cache/l2-size,data-cache/l2-line,"
                                  "data-cache/l2-occupancy,data-cache/l2-levels");
  const int64_t c = *ref["l2"]["size_bytes"].value<int64_t>();
  const auto size = got["l2"]["size_bytes"].value<int64_t>();
  REQUIRE(size);
  CHECK(*size <= c);
  CHECK(*size >= c - c / 128);
  const auto first = got["l2"]["first_miss_bytes"].value<int64_t>();
  REQUIRE(first);
  CHECK(*first <= *size);
  CHECK(got["l2"]["line_bytes"].value<int64_t>() == ref["l2"]["line_bytes"].value<int64_t>());
  CHECK(got["l2"]["fetch_granularity_bytes"].value<int64_t>() == ref["l2"]["fetch_granularity_bytes"].value<int64_t>());
  const toml::array* starts = got["l2"]["level_start_bytes"].as_array();
  REQUIRE(starts);
  REQUIRE(starts->size() >= 2);
  const int64_t next = (*starts)[1].value_or(int64_t(0));
  CHECK(next > c / 1.0906);
  CHECK(next <= c * 1.0906);
}

TEST_CASE("an L2 whose near misses are as slow as far hits still gives its line", "[cache][sim]") {
  // Two partitions: a near miss (437 cycles) is close to a far hit (372); above a threshold of
  // 30 % of the hit only far lines missed visibly, and the miss fraction plateaued at half the loads.
  // Past the size, "nearly every load missing" is then relative to that plateau; at 90 % of
  // all loads no footprint got there, and the line read 32 B for 128 (random device 10).
  const std::string dev = write_variant("kepler-like.toml", "near-misses", [](toml::table& t) {
    t["device"].as_table()->insert_or_assign("l2_bytes", 786432);
    t.insert_or_assign("l2", toml::table{{"size_bytes", 786432}, {"line_bytes", 128}, {"fetch_granularity_bytes", 32},
                                         {"sets", 512}, {"ways", 12}, {"replacement_policy", "random"},
                                         {"partitions", 2}, {"latency_cycles", 236}, {"far_latency_cycles", 372}});
    t["dram"].as_table()->insert_or_assign("latency_cycles", 437);
    t["sim"].as_table()->insert_or_assign("l2", toml::table{{"interleave_bytes", 8192}, {"interleave", "alternating"}});
  });
  const toml::table got = measure(dev, "near-misses", "data-cache/l2-size,data-cache/l2-line,data-cache/l2-geometry");
  CHECK(got["l2"]["line_bytes"].value<int64_t>() == 128);
  CHECK(got["l2"]["fetch_granularity_bytes"].value<int64_t>() == 32);
  // A shared cache's slow threshold stays below half way to the cold loads, so the near misses
  // count: lines a stride apart in one partition overflow its 12 ways (24 read before).
  CHECK(got["l2"]["ways"].value<int64_t>() == 12);
  CHECK(got["l2"]["sets"].value<int64_t>() == 512);
}

TEST_CASE("other traffic over time: the lines held are extrapolated to an infinite load rate", "[cache][sim]") {
  // Another client brings a line into the L2 every 80 000 cycles, as the H100's L2 loses
  // lines over time (sessions 10 and 11): one stream of random loads then keeps 0.9 % fewer
  // lines than the L2 holds, one with a gap 5.7 %, one with a pump of 32 lanes 0.06 %.
  // Extrapolated to an infinite rate the lines held agree with the API's size; one stream
  // alone would be 20 standard errors short of it.
  const std::string dev = write_variant("hopper-like.toml", "foreign-time", [](toml::table& t) {
    t["sim"]["l2"].as_table()->insert_or_assign("foreign_lines_per_kcycle", 0.0125);
  });
  const toml::table ref = toml::parse_file(device_file("hopper-like.toml").string());
  const toml::table got = measure(dev, "foreign-time",
                                  "data-cache/l1d-size,data-cache/l2-size,data-cache/l2-line,data-cache/l2-occupancy,"
                                  "data-cache/l2-levels,data-cache/l2-latency");
  const int64_t c = *ref["l2"]["size_bytes"].value<int64_t>();
  CHECK(got["l2"]["size_bytes"].value<int64_t>() == c);
  const std::string note = got["provenance"]["l2"]["size_bytes"]["note"].value_or(std::string());
  INFO(note);
  CHECK(note.find("extrapolated to an infinite rate") != std::string::npos);
  CHECK(note.find("with a pump of 32 lanes") != std::string::npos);
  CHECK(note.find("agrees within three standard errors with the API's L2 size") != std::string::npos);
  const auto first = got["l2"]["first_miss_bytes"].value<int64_t>();
  REQUIRE(first);
  CHECK(*first < c);
}

TEST_CASE("stray lines in one SM's L1 now and then do not move the L1 sizes", "[cache][sim]") {
  // Each call, each SM's L1, texture and read-only cache holds, with probability 0.15, another
  // user's line in one set: a footprint just below the size then misses on that SM only, as
  // on the H100, where one measurement per footprint gave one 32-byte step less in 10 of 81
  // values. The sizes must still come out exact, run after run (three seeds).
  const std::string name = GENERATE("hopper-like.toml", "kepler-like.toml", "pascal-like.toml");
  const int seed = GENERATE(1, 2, 3);
  INFO(name << ", seed " << seed);
  const std::string dev = write_variant(name, "stray" + std::to_string(seed), [&](toml::table& t) {
    toml::table& sim = *t["sim"].as_table();
    sim.insert_or_assign("stray_line_probability", 0.15);
    sim.insert_or_assign("seed", seed);
  });
  const toml::table ref = toml::parse_file(device_file(name).string());
  const toml::table got = measure(dev, "stray" + std::to_string(seed) + "-" + name,
                                  "data-cache/l1d-size,texture-readonly/texture-size,texture-readonly/readonly-size");
  int checked = 0;
  for (const char* e : {"l1d", "texture", "readonly"}) {
    const auto want = ref[e]["size_bytes"].value<int64_t>();
    if (!want) continue;
    INFO(e << ".size_bytes");
    CHECK(got[e]["size_bytes"].value<int64_t>() == want);
    ++checked;
  }
  CHECK(checked >= 1);
}

TEST_CASE("a hashed set index does not fool the line size, and sets are never made up", "[cache][sim]") {
  // Set-index bits XOR address bits far above them, as on the H100's L1: odd strides then
  // spread unevenly over the sets (their capacity says 256 B lines), power-of-two strides
  // evenly. With two bits per index bit the sets still show; with three every power-of-two
  // stride reaches every set, like a fully associative cache.
  const int bits = GENERATE(2, 3);
  INFO(bits << " address bits per set-index bit");
  const std::string dev = write_variant("hopper-like.toml", "hash" + std::to_string(bits), [bits](toml::table& t) {
    toml::array hash;
    for (int i = 0; i < 7; ++i) {  // 128 sets of 128 B lines: index bits 7..13
      toml::array xs;
      for (int j = 0; j < bits; ++j) xs.push_back(7 + i + 7 * j);
      hash.push_back(xs);
    }
    toml::table l1d;
    l1d.insert("set_hash", hash);
    t["sim"].as_table()->insert_or_assign("l1d", l1d);
  });
  const toml::table got = measure(dev, "hash" + std::to_string(bits),
                                  "data-cache/l1d-size,data-cache/l1d-line,data-cache/l1d-geometry");
  CHECK(got["l1d"]["line_bytes"].value<int64_t>() == 128);
  CHECK(got["l1d"]["fetch_granularity_bytes"].value<int64_t>() == 32);
  CHECK(got["l1d"]["size_bytes"].value<int64_t>() == 262144);
  if (bits == 2) {
    CHECK(got["l1d"]["sets"].value<int64_t>() == 128);
    CHECK(got["l1d"]["ways"].value<int64_t>() == 16);
    CHECK(got["l1d"]["set_mapping"].value<std::string>() == "hashed");
  } else {
    // Not 1 set x 2048 ways: random lines show the sets exist.
    CHECK(!got["l1d"]["sets"]);
    CHECK(!got["l1d"]["ways"]);
  }
}

TEST_CASE("a cache split in two by one address bit and hashed within each half is not taken for two sets", "[cache][sim]") {
  // Address bit 7 picks a half; bits far above it pick one of the half's 64 sets. Every
  // power-of-two stride from 256 B to 4 MiB then holds 1024 lines, exactly what 2 modulo
  // sets of 1024 ways would hold (the H100's texture path shows such a picture at 512 B).
  const std::string dev = write_variant("hopper-like.toml", "halves", [](toml::table& t) {
    toml::array hash;
    hash.push_back(toml::array{7});
    for (int i = 0; i < 6; ++i) hash.push_back(toml::array{8 + i, 14 + i, 20 + i, 26 + i});
    toml::table l1d;
    l1d.insert("set_hash", hash);
    t["sim"].as_table()->insert_or_assign("l1d", l1d);
  });
  const toml::table got = measure(dev, "halves", "data-cache/l1d-size,data-cache/l1d-line,data-cache/l1d-geometry");
  CHECK(got["l1d"]["size_bytes"].value<int64_t>() == 262144);
  CHECK(got["l1d"]["line_bytes"].value<int64_t>() == 128);
  CHECK(!got["l1d"]["sets"]);
  CHECK(!got["l1d"]["ways"]);
  CHECK(!got["l1d"]["set_mapping"]);
}

TEST_CASE("a victim census over many ways is judged and reported per bin of the fill order", "[cache][sim]") {
  // 2 sets x 96 ways, the first-filled line the victim 30 % of the time: a few hundred
  // evictions are far too few for a chi-square test over 96 positions, enough over 16 bins.
  const std::string dev = write_variant("pascal-like.toml", "wide", [](toml::table& t) {
    for (const char* e : {"l1d", "texture", "readonly"}) {
      t[e].as_table()->insert_or_assign("sets", 2);
      t[e].as_table()->insert_or_assign("ways", 96);
    }
    toml::array probs;
    probs.push_back(0.3);
    for (int i = 1; i < 96; ++i) probs.push_back(0.7 / 95);
    t["sim"]["l1d"].as_table()->insert_or_assign("victim_probabilities", probs);
  });
  const toml::table got = measure(dev, "wide", "data-cache/l1d-present,data-cache/l1d-size,data-cache/l1d-line,"
                                               "data-cache/l1d-geometry,data-cache/l1d-policy");
  CHECK(got["l1d"]["ways"].value<int64_t>() == 96);
  CHECK(got["l1d"]["replacement_policy"].value<std::string>() == "non_uniform");
  const toml::array* v = got["l1d"]["victim_probabilities"].as_array();
  REQUIRE(v);
  CHECK(v->size() == 16);
  // Bin 0 holds the favoured position and five others: 0.34; uniform would give 1/16.
  CHECK((*v)[0].value_or(0.0) > 0.2);
}

namespace {

// The constant L1.5 groups of a run against the description's [sim] sm_per_gpc: SM s is in
// group s / sm_per_gpc.
void check_l15_groups(const toml::table& ref, const toml::table& got) {
  const int64_t sms = ref["device"]["sm_count"].value_or<int64_t>(0);
  const int64_t per = ref["sim"]["sm_per_gpc"].value<int64_t>().value_or(sms);
  REQUIRE(sms > 0);
  CHECK(got["probes"]["cache-sharing/constant-l15-groups"]["status"].value_or<std::string>("") == "ok");
  CHECK(got["constant_l15"]["sm_group_count"].value_or<int64_t>(0) == (sms + per - 1) / per);
  const toml::array* of = got["constant_l15"]["group_of_sm"].as_array();
  REQUIRE(of);
  REQUIRE(int64_t(of->size()) == sms);
  for (int64_t s = 0; s < sms; ++s) {
    INFO("SM " << s);
    CHECK((*of)[size_t(s)].value_or<int64_t>(-1) == s / per);
  }
}

}  // namespace

TEST_CASE("the constant L1.5 groups recover sm_per_gpc on every shipped device, with noise too", "[sharing][sim]") {
  const std::string name = GENERATE("hopper-like.toml", "kepler-like.toml", "pascal-like.toml");
  INFO(name);
  const toml::table ref = toml::parse_file(device_file(name).string());
  check_l15_groups(ref, measure(device_file(name), "groups-" + name, "cache-sharing"));
  const std::string noisy = write_variant(name, "groups-noisy", [](toml::table& t) { add_noise(t, 11); });
  check_l15_groups(ref, measure(noisy, "groups-noisy-" + name, "cache-sharing"));
}

TEST_CASE("one constant L1.5 for every SM is one group", "[sharing][sim]") {
  const std::string one = write_variant("hopper-like.toml", "groups-one", [](toml::table& t) {
    t["sim"].as_table()->insert_or_assign("sm_per_gpc", t["device"]["sm_count"].value_or<int64_t>(1));
  });
  const toml::table got = measure(one, "groups-one", "cache-sharing");
  CHECK(got["constant_l15"]["sm_group_count"].value_or<int64_t>(0) == 1);
  CHECK(got["provenance"]["constant_l15"]["sm_group_count"]["note"].value_or<std::string>("").find(
            "every SM hit what SM 0 read") != std::string::npos);
}
