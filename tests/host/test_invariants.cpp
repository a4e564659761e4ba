// Relations between result keys that probes declare (ABI 3.3, mt_invariant_desc): read and
// checked at load, shown by list -v, warned about at the end of a run, refused by validate.
#include <catch2/catch.hpp>

#include <cstring>
#include <memory>

#include <memtopo/probe.hpp>

#include "helpers.hpp"
#include "topology/checks/invariants.hpp"

using memtopo::host::Registry;
using test::q;
using test::run_memtopo;

namespace {

const std::string kInvariants = " --plugin-path " + q(test::plugin_set("invariants"));

// The refusal of a plugin holding one probe, or "" where it loads.
std::string refusal(const memtopo::Probe& p) {
  const auto holder = std::make_unique<memtopo::detail::PluginHolder>("iv", "1.0.0", std::vector<memtopo::Probe>{p});
  Registry r;
  if (r.add_static(holder->desc(), "iv")) return "";
  return r.errors().empty() ? std::string("refused without a message") : r.errors()[0];
}

memtopo::Probe base() {
  return memtopo::Probe("iv/p")
      .provides({"iv.count", "iv.sizes", "iv.fast_cycles"})
      .key("iv.count", MT_VALUE_INT, "", "x")
      .key("iv.sizes", MT_VALUE_INT_ARRAY, "", "x")
      .run([](memtopo::Context&) {});
}

}  // namespace

TEST_CASE("invariants are read from the descriptor and list -v shows them", "[host][invariants]") {
  Registry r;
  r.load_directory(test::plugin_set("invariants"));
  REQUIRE(r.errors().empty());
  const auto* p = r.find("t-invariants/counts");
  REQUIRE(p);
  REQUIRE(p->invariants.size() == 3);
  CHECK(p->invariants[0].kind == MT_INVARIANT_EQUALS_COUNT);
  CHECK(p->invariants[0].a == "inv.group_count");
  CHECK(p->invariants[0].b == "inv.group_sizes");
  CHECK(p->invariants[1].kind == MT_INVARIANT_SUM_EQUALS);
  CHECK(p->invariants[2].kind == MT_INVARIANT_LESS);
  CHECK(p->invariants[2].why == "the nearer level answers sooner");
  const auto l = run_memtopo("list -v" + kInvariants);
  INFO(l.output);
  CHECK(test::has(l.output, "    invariant: inv.group_count equals the element count of inv.group_sizes: one size per "
                            "group\n"));
  CHECK(test::has(l.output, "    invariant: the sum of inv.group_sizes equals device.sm_count: every SM is in one group\n"));
  CHECK(test::has(l.output, "    invariant: inv.near_cycles is less than inv.far_cycles: the nearer level answers "
                            "sooner\n"));
}

TEST_CASE("invariants a descriptor cannot hold refuse the plugin, naming the probe", "[host][invariants]") {
  CHECK(refusal(base().invariant(MT_INVARIANT_EQUALS_COUNT, "iv.count", "iv.sizes", "one size a group")) == "");
  CHECK(refusal(base().invariant(MT_INVARIANT_LESS, "other.a_cycles", "other.b_cycles", "x")) ==
        "static:iv: probe iv/p: invariant #0: relates other.a_cycles and other.b_cycles, but the probe provides "
        "neither (the probe that provides one of them declares it)");
  CHECK(refusal(base().invariant(MT_INVARIANT_LESS, "iv.fast_cycles", "iv.fast_cycles", "x")) ==
        "static:iv: probe iv/p: invariant #0: relates iv.fast_cycles to itself");
  CHECK(refusal(base().invariant(MT_INVARIANT_LESS, "iv.fast_cycles", "dram.latency_cycles", "")) ==
        "static:iv: probe iv/p: invariant #0: says no reason (why: one sentence)");
  CHECK(refusal(base().invariant(MT_INVARIANT_EQUALS_COUNT, "iv.sizes", "iv.count", "x")) ==
        "static:iv: probe iv/p: invariant #0: iv.sizes is declared integer array, but this side takes a number");
  CHECK(refusal(base().invariant(MT_INVARIANT_SUM_EQUALS, "iv.count", "device.sm_count", "x")) ==
        "static:iv: probe iv/p: invariant #0: iv.count is declared integer, but this side takes an array");
  CHECK(test::has(refusal(base().invariant(MT_INVARIANT_LESS, "iv.fast_cycles", "Bad", "x")),
                  "static:iv: probe iv/p: invariant #0: 'Bad' is not a result key"));
  // A C plugin can store any int in the kind field: the descriptor's bits are patched.
  const memtopo::detail::PluginHolder holder(
      "iv", "1.0.0", {base().invariant(MT_INVARIANT_LESS, "iv.fast_cycles", "dram.latency_cycles", "x")});
  const int bad = 7;
  std::memcpy(const_cast<mt_invariant_kind*>(&holder.desc()->probes[0].invariants[0].kind), &bad, sizeof bad);
  Registry r;
  CHECK_FALSE(r.add_static(holder.desc(), "iv"));
  REQUIRE(r.errors().size() == 1);
  CHECK(r.errors()[0] == "static:iv: probe iv/p: invariant #0: unknown kind 7");
}

TEST_CASE("a probe descriptor of ABI 3.2 (no invariants) still loads", "[host][invariants]") {
  const memtopo::detail::PluginHolder holder(
      "iv", "1.0.0", {base().invariant(MT_INVARIANT_EQUALS_COUNT, "iv.count", "iv.sizes", "one size a group")});
  // The same descriptor as a 3.2 plugin builds it: struct_size ends before `invariants`.
  mt_probe_desc old = holder.desc()->probes[0];
  old.struct_size = offsetof(mt_probe_desc, invariants);
  mt_plugin_desc desc = *holder.desc();
  desc.abi_minor = 2;
  desc.probes = &old;
  Registry r;
  REQUIRE(r.add_static(&desc, "iv32"));
  REQUIRE(r.find("iv/p"));
  CHECK(r.find("iv/p")->invariants.empty());
}

TEST_CASE("a run that breaks a declared invariant warns, naming both keys", "[host][invariants][cli]") {
  test::TempDir dir("invariants-run");
  const auto out = dir / "t.toml";
  const std::string only = " --device sim --only t-invariants -o ";
  const auto good = run_memtopo("run -q" + kInvariants + only + q(out));
  INFO(good.output);
  CHECK(good.exit_code == 0);
  CHECK_FALSE(test::has(good.output, "contradiction"));
  test::write_file(dir / "c.toml", "[probes.\"t-invariants/counts\"]\ncontradict = true\n");
  const auto bad = run_memtopo("run -q" + kInvariants + " --config " + q(dir / "c.toml") + only + q(dir / "bad.toml"));
  INFO(bad.output);
  CHECK(bad.exit_code == 0);  // a warning: the values are written as measured
  CHECK(test::has(bad.output, "contradiction: inv.group_count is 3, but inv.group_sizes has 2 elements: one size per "
                              "group (declared by t-invariants/counts)"));
  CHECK(test::has(bad.output, "contradiction: inv.group_sizes adds up to 9, but device.sm_count is 8: every SM is in "
                              "one group (declared by t-invariants/counts)"));
  CHECK(test::has(bad.output, "contradiction: inv.near_cycles (500) is not less than inv.far_cycles (400): the nearer "
                              "level answers sooner (declared by t-invariants/counts)"));
}

TEST_CASE("validate refuses a file that breaks a declared invariant, naming file, line and both keys",
          "[host][invariants][cli][validate]") {
  test::TempDir dir("invariants-validate");
  const auto file = dir / "t.toml";
  REQUIRE(run_memtopo("run -q" + kInvariants + " --device sim --only t-invariants -o " + q(file)).exit_code == 0);
  const std::string good = test::read_file(file);
  const auto ok = run_memtopo("validate" + kInvariants + " " + q(file));
  INFO(ok.output);
  CHECK(ok.exit_code == 0);
  auto edited = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    const size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
    test::write_file(file, text);
    return run_memtopo("validate" + kInvariants + " " + q(file));
  };
  SECTION("a count") {
    const auto v = edited("group_count = 2", "group_count = 3");
    INFO(v.output);
    CHECK(v.exit_code == 1);
    CHECK(test::has(v.output, "t.toml:"));
    CHECK(test::has(v.output, ": contradiction: inv.group_count is 3, but inv.group_sizes has 2 elements"));
  }
  SECTION("a sum") {
    const auto v = edited("group_sizes = [4, 4]", "group_sizes = [4, 3]");
    INFO(v.output);
    CHECK(v.exit_code == 1);
    CHECK(test::has(v.output, ": contradiction: inv.group_sizes adds up to 7, but device.sm_count is 8"));
  }
  SECTION("an order") {
    const auto v = edited("near_cycles = 30.0", "near_cycles = 400.0");
    INFO(v.output);
    CHECK(v.exit_code == 1);
    CHECK(test::has(v.output, ": contradiction: inv.near_cycles (400) is not less than inv.far_cycles (400)"));
  }
  SECTION("a key that is absent, or a bound, leaves the relation unchecked") {
    std::string text = good;
    text.replace(text.find("group_count = 2"), 15, "group_count = 3");
    text.replace(text.find("near_cycles = 30.0"), 18, "");
    // Its provenance goes with it: provenance of a key the file lacks is an error of its own.
    const size_t near_prov = text.find("near_cycles = {");
    REQUIRE(near_prov != std::string::npos);
    text.erase(near_prov, text.find('\n', near_prov) + 1 - near_prov);
    const size_t prov = text.find("group_count = {");
    REQUIRE(prov != std::string::npos);
    text.replace(text.find("bound = \"exact\"", prov), 15, "bound = \"at_least\"");
    test::write_file(file, text);
    const auto v = run_memtopo("validate" + kInvariants + " " + q(file));
    INFO(v.output);
    CHECK(v.exit_code == 0);
  }
  SECTION("without the plugin that declares it, nothing is checked") {
    const auto v = edited("group_count = 2", "group_count = 3");
    CHECK(run_memtopo("validate " + q(file)).exit_code == 0);
  }
}
