// Planning: order, cycles, missing providers, duplicate keys, skip propagation, selection.
#include <memory>

#include <memtopo/probe.hpp>

#include "helpers.hpp"
#include "run/planning/plan.hpp"

using namespace memtopo::host;

namespace {

memtopo::Probe probe(const std::string& name, std::vector<std::string> provides, std::vector<std::string> needs,
                     std::vector<std::string> uses = {}) {
  return memtopo::Probe(name).provides(std::move(provides)).requires_keys(std::move(needs)).uses(std::move(uses)).run(
      [](memtopo::Context&) {});
}

// Keeps the descriptors alive as long as the registry that points into them.
struct Fixture {
  std::vector<std::unique_ptr<memtopo::detail::PluginHolder>> holders;
  Registry registry;
  void add(const char* plugin, std::vector<memtopo::Probe> probes) {
    holders.push_back(std::make_unique<memtopo::detail::PluginHolder>(plugin, "1.0.0", std::move(probes)));
    REQUIRE(registry.add_static(holders.back()->desc(), plugin));
  }
};

std::vector<std::string> order(const Plan& plan) {
  std::vector<std::string> out;
  for (const auto& s : plan.steps) out.push_back(s.probe->name);
  return out;
}

// z provides the base; m needs it; a needs m's key and uses z's extra key.
void add_chain(Fixture& f) {
  f.add("z", {probe("z/base", {"base.size_bytes", "base.extra_bytes"}, {})});
  f.add("m", {probe("m/middle", {"middle.line_bytes"}, {"base.size_bytes"})});
  f.add("a", {probe("a/top", {"top.ways"}, {"middle.line_bytes"}, {"base.extra_bytes"}),
              probe("a/alone", {"alone.x"}, {})});
}

}  // namespace

TEST_CASE("dependencies come first, independent probes keep name order", "[host][plan]") {
  Fixture f;
  add_chain(f);
  const Plan plan = make_plan(f.registry, {});
  CHECK(order(plan) == std::vector<std::string>{"a/alone", "z/base", "m/middle", "a/top"});
  for (const auto& s : plan.steps) CHECK(s.skip_reason.empty());
}

TEST_CASE("a used key orders its provider first when it is selected", "[host][plan]") {
  Fixture f;
  f.add("b", {probe("b/user", {"user.x"}, {}, {"opt.y"})});
  f.add("c", {probe("c/opt", {"opt.y"}, {})});
  CHECK(order(make_plan(f.registry, {})) == std::vector<std::string>{"c/opt", "b/user"});
  // Not selected: not pulled in for a used key, and the user still runs.
  CHECK(order(make_plan(f.registry, {{"b/user"}, {}})) == std::vector<std::string>{"b/user"});
}

TEST_CASE("a cycle is an error that prints the chain", "[host][plan]") {
  Fixture f;
  f.add("cy", {probe("cy/a", {"a.x"}, {"b.y"}), probe("cy/b", {"b.y"}, {"a.x"})});
  try {
    make_plan(f.registry, {});
    FAIL("no error");
  } catch (const PlanError& e) {
    CHECK(std::string(e.what()) == "dependency cycle: cy/a needs b.y from cy/b, cy/b needs a.x from cy/a "
                                   "(skip one of them with --skip)");
  }
  // Skipping one side breaks the cycle; the other side then lacks its input.
  const Plan plan = make_plan(f.registry, {{}, {"cy/b"}});
  REQUIRE(plan.steps.size() == 1);
  CHECK(plan.steps[0].skip_reason == "needs b.y, whose provider cy/b is excluded by skip");
}

TEST_CASE("two probes providing one key is a plan error naming both", "[host][plan]") {
  Fixture f;
  f.add("p1", {probe("p1/x", {"k.value_bytes"}, {})});
  f.add("p2", {probe("p2/y", {"k.value_bytes"}, {})});
  REQUIRE_THROWS_AS(make_plan(f.registry, {}), PlanError);
  try {
    make_plan(f.registry, {});
  } catch (const PlanError& e) {
    const std::string m = e.what();
    CHECK(m.find("k.value_bytes") != std::string::npos);
    CHECK(m.find("p1/x") != std::string::npos);
    CHECK(m.find("p2/y") != std::string::npos);
  }
  CHECK(make_plan(f.registry, {{}, {"p2"}}).steps.size() == 1);
}

TEST_CASE("a missing provider skips the probe and everything needing it, with chained reasons", "[host][plan]") {
  Fixture f;
  f.add("q", {probe("q/orphan", {"orphan.x"}, {"nowhere.value_bytes"}), probe("q/child", {"child.y"}, {"orphan.x"})});
  const Plan plan = make_plan(f.registry, {});
  REQUIRE(order(plan) == std::vector<std::string>{"q/orphan", "q/child"});
  CHECK(plan.steps[0].skip_reason == "needs nowhere.value_bytes, which no loaded probe provides");
  CHECK(plan.steps[1].skip_reason ==
        "needs orphan.x, whose provider q/orphan is skipped: needs nowhere.value_bytes, which no loaded probe provides");
}

TEST_CASE("plan: --only pulls in providers of required keys and says why, --skip wins", "[host][plan]") {
  Fixture f;
  add_chain(f);
  const Plan plan = make_plan(f.registry, {{"a/top"}, {}});
  CHECK(order(plan) == std::vector<std::string>{"z/base", "m/middle", "a/top"});
  CHECK(plan.step("m/middle")->pulled_in_for == "provides middle.line_bytes for a/top");
  CHECK(plan.step("z/base")->pulled_in_for == "provides base.size_bytes for m/middle");
  CHECK(plan.step("a/top")->pulled_in_for.empty());

  // A whole plugin by name.
  CHECK(order(make_plan(f.registry, {{"z"}, {}})) == std::vector<std::string>{"z/base"});
  // Skip a provider: its dependents are skipped, with the cause chained.
  const Plan skipped = make_plan(f.registry, {{"a/top"}, {"z"}});
  CHECK(order(skipped) == std::vector<std::string>{"m/middle", "a/top"});
  CHECK(skipped.step("m/middle")->skip_reason == "needs base.size_bytes, whose provider z/base is excluded by skip");
  CHECK(skipped.step("a/top")->skip_reason.find("needs middle.line_bytes, whose provider m/middle is skipped: ") == 0);
}

TEST_CASE("unknown names in --only or --skip are plan errors", "[host][plan]") {
  Fixture f;
  add_chain(f);
  CHECK_THROWS_WITH(make_plan(f.registry, {{"nope"}, {}}), Catch::Contains("--only: unknown probe, plugin or result key 'nope'"));
  CHECK_THROWS_WITH(make_plan(f.registry, {{}, {"a/nope"}}), Catch::Contains("--skip: unknown probe or plugin"));
}

namespace {
const Registry& needs_registry() {
  static Registry r = [] {
    Registry x;
    x.load_directory(test::plugin_set("needs"));
    return x;
  }();
  return r;
}
std::string reason(const Plan& plan, const std::string& probe) {
  const PlanStep* s = plan.step(probe);
  REQUIRE(s);
  return s->skip_reason;
}
}  // namespace

TEST_CASE("needs are read from the descriptor and shown", "[host][plan][needs]") {
  const Registry& r = needs_registry();
  REQUIRE(r.errors().empty());
  const ProbeInfo* cuda = r.find("t-needs/cuda-only");
  REQUIRE(cuda);
  CHECK(cuda->backends == MT_BACKEND_CUDA);
  CHECK(needs_text(*cuda) == "cuda");
  CHECK(needs_text(*r.find("t-needs/future")) == "cc >= 10.0");
  CHECK(needs_text(*r.find("t-needs/hopper")) == "cc >= 9.0");  // both backends: no backend need
  CHECK(needs_text(*r.find("t-needs/anywhere")).empty());
}

TEST_CASE("the planner skips a probe whose needs the device does not meet, and its dependents",
          "[host][plan][needs]") {
  SECTION("the simulated GPU, compute capability 9.0") {
    const DeviceFacts sim{"sim", 9, 0};
    const Plan plan = make_plan(needs_registry(), {}, &sim);
    CHECK(reason(plan, "t-needs/cuda-only") ==
          "needs a CUDA GPU (a kernel the simulated GPU cannot run); the device is the simulated GPU");
    CHECK(reason(plan, "t-needs/cuda-user") ==
          "needs t.cuda_bytes, whose provider t-needs/cuda-only is skipped: needs a CUDA GPU (a kernel the simulated "
          "GPU cannot run); the device is the simulated GPU");
    CHECK(reason(plan, "t-needs/future") == "needs compute capability 10.0; the device has 9.0");
    CHECK(reason(plan, "t-needs/hopper").empty());
    CHECK(reason(plan, "t-needs/anywhere").empty());
  }
  SECTION("a CUDA GPU of compute capability 8.6") {
    const DeviceFacts gpu{"cuda", 8, 6};
    const Plan plan = make_plan(needs_registry(), {}, &gpu);
    CHECK(reason(plan, "t-needs/cuda-only").empty());
    CHECK(reason(plan, "t-needs/cuda-user").empty());
    CHECK(reason(plan, "t-needs/hopper") == "needs compute capability 9.0; the device has 8.6");
  }
  SECTION("a device that reports no compute capability") {
    const DeviceFacts bare{"sim", 0, 0};
    CHECK(reason(make_plan(needs_registry(), {}, &bare), "t-needs/hopper") ==
          "needs compute capability 9.0; the device reports none");
  }
  SECTION("without a device, needs are not judged") {
    for (const auto& s : make_plan(needs_registry(), {}).steps) CHECK(s.skip_reason.empty());
  }
}

TEST_CASE("plan: a plan made before the device opens, fitted to it, is the device's plan", "[host][plan][needs]") {
  const Registry& reg = needs_registry();
  for (const DeviceFacts& device : {DeviceFacts{"sim", 9, 0}, DeviceFacts{"cuda", 8, 6}, DeviceFacts{"sim", 0, 0}}) {
    Plan fitted = make_plan(reg, {});
    fit_plan_to_device(fitted, device);
    const Plan direct = make_plan(reg, {}, &device);
    REQUIRE(fitted.steps.size() == direct.steps.size());
    for (size_t i = 0; i < direct.steps.size(); ++i) {
      CHECK(fitted.steps[i].probe == direct.steps[i].probe);
      CHECK(fitted.steps[i].skip_reason == direct.steps[i].skip_reason);
    }
  }
  // Fitted twice, the second device's reasons replace the first's.
  Plan plan = make_plan(reg, {});
  fit_plan_to_device(plan, DeviceFacts{"sim", 9, 0});
  fit_plan_to_device(plan, DeviceFacts{"cuda", 9, 0});
  for (const auto& s : plan.steps) CHECK(s.skip_reason.find("simulated GPU") == std::string::npos);
}

TEST_CASE("plan: --only takes result keys: the provider and what it needs are selected", "[host][plan]") {
  Fixture f;
  add_chain(f);
  const Plan plan = make_plan(f.registry, {{"middle.line_bytes"}, {}});
  CHECK(order(plan) == std::vector<std::string>{"z/base", "m/middle"});
  CHECK(plan.requested_keys == std::map<std::string, std::string>{{"middle.line_bytes", "m/middle"}});
  CHECK(plan.step("m/middle")->pulled_in_for.empty());  // selected, not pulled in
  // Mixed with probe names.
  CHECK(order(make_plan(f.registry, {{"a/alone", "base.extra_bytes"}, {}})) ==
        std::vector<std::string>{"a/alone", "z/base"});
  CHECK_THROWS_WITH(make_plan(f.registry, {{"middle.nothing_bytes"}, {}}),
                    Catch::Contains("--only: unknown probe, plugin or result key 'middle.nothing_bytes'"));
  // --skip does not take keys.
  CHECK_THROWS_WITH(make_plan(f.registry, {{}, {"middle.line_bytes"}}),
                    Catch::Contains("--skip: unknown probe or plugin 'middle.line_bytes'"));
}

TEST_CASE("plan: a key asked for by name pulls in what its provider uses too, a probe by name does not",
          "[host][plan]") {
  Fixture f;
  add_chain(f);
  // top.ways: a/top requires middle.line_bytes (and through it base.size_bytes) and uses
  // base.extra_bytes, whose provider is z/base already; the used key's provider is measured as
  // in a default run.
  f.add("u", {probe("u/user", {"user.x"}, {}, {"opt.y"}), probe("u/opt", {"opt.y"}, {}, {"deep.z"}),
              probe("u/deep", {"deep.z"}, {})});
  CHECK(order(make_plan(f.registry, {{"user.x"}, {}})) == std::vector<std::string>{"u/deep", "u/opt", "u/user"});
  const Plan by_key = make_plan(f.registry, {{"user.x"}, {}});
  CHECK(by_key.step("u/opt")->pulled_in_for == "provides opt.y for u/user");
  CHECK(by_key.step("u/deep")->pulled_in_for == "provides deep.z for u/opt");
  // The probe by name: a measurement of its own, its requirements only.
  const Plan by_name = make_plan(f.registry, {{"u/user"}, {}});
  CHECK(order(by_name) == std::vector<std::string>{"u/user"});
  // ... and the plan says which used keys' providers do not run, and how to have them.
  CHECK(by_key.unrun_uses.empty());
  CHECK(make_plan(f.registry, {}).unrun_uses.empty());
  CHECK(by_name.unrun_uses == std::map<std::string, std::set<std::string>>{{"u/opt", {"opt.y"}}});
  CHECK_THAT(unrun_uses_hint(by_name), Catch::Contains("(--only user.x) runs what it uses"));
  CHECK(unrun_uses_hint(by_key).empty());
}

TEST_CASE("plan: an opt-in probe runs when named by itself, a key or a requirement, else is left out",
          "[host][plan][opt-in]") {
  Fixture f;
  f.add("c", {probe("c/size", {"c.size_bytes"}, {}), probe("c/sets", {"c.sets", "c.hash"}, {"c.size_bytes"}).opt_in(),
              probe("c/line", {"c.line_bytes"}, {})});
  f.add("u", {probe("u/needs_sets", {"u.x"}, {"c.sets"})});
  auto left_out = [](const Plan& plan) {
    std::vector<std::string> out;
    for (const ProbeInfo* p : plan.left_out) out.push_back(p->name);
    return out;
  };
  SECTION("a default run and a selection by plugin leave it out, and say so") {
    Fixture g;
    g.add("c", {probe("c/size", {"c.size_bytes"}, {}), probe("c/sets", {"c.sets"}, {"c.size_bytes"}).opt_in()});
    CHECK(order(make_plan(g.registry, {})) == std::vector<std::string>{"c/size"});
    CHECK(left_out(make_plan(g.registry, {})) == std::vector<std::string>{"c/sets"});
    const Plan by_plugin = make_plan(g.registry, {{"c"}, {}});
    CHECK(order(by_plugin) == std::vector<std::string>{"c/size"});
    CHECK(left_out(by_plugin) == std::vector<std::string>{"c/sets"});
  }
  SECTION("named by itself: it runs with what it requires") {
    const Plan plan = make_plan(f.registry, {{"c/sets"}, {}});
    CHECK(order(plan) == std::vector<std::string>{"c/size", "c/sets"});
    CHECK(plan.left_out.empty());
  }
  SECTION("named by one of its keys") {
    CHECK(order(make_plan(f.registry, {{"c.hash"}, {}})) == std::vector<std::string>{"c/size", "c/sets"});
  }
  SECTION("a selected probe requires one of its keys: pulled in, not left out") {
    const Plan plan = make_plan(f.registry, {});
    CHECK(order(plan) == std::vector<std::string>{"c/line", "c/size", "c/sets", "u/needs_sets"});
    CHECK(plan.left_out.empty());
    REQUIRE(plan.step("c/sets"));
    CHECK(plan.step("c/sets")->pulled_in_for == "provides c.sets for u/needs_sets");
  }
  SECTION("a key asked for by name does not pull in an opt-in provider of a key it only uses") {
    Fixture g;
    g.add("c", {probe("c/size", {"c.size_bytes"}, {}), probe("c/sets", {"c.sets"}, {"c.size_bytes"}).opt_in(),
                probe("c/geometry", {"c.ways"}, {"c.size_bytes"}, {"c.sets"})});
    CHECK(order(make_plan(g.registry, {{"c.ways"}, {}})) == std::vector<std::string>{"c/size", "c/geometry"});
    // A default run leaves the opt-in provider out too: the selection misses nothing of it.
    CHECK(make_plan(g.registry, {{"c/geometry"}, {}}).unrun_uses.empty());
    CHECK(order(make_plan(g.registry, {{"c.ways", "c/sets"}, {}})) ==
          std::vector<std::string>{"c/size", "c/sets", "c/geometry"});
  }
  SECTION("--skip wins: neither run nor listed as left out") {
    const Plan plan = make_plan(f.registry, {{"c"}, {"c/sets"}});
    CHECK(order(plan) == std::vector<std::string>{"c/line", "c/size"});
    CHECK(plan.left_out.empty());
  }
}
