// Runner: host services, failure isolation, options, raw series, resume input, cancellation.
#include <algorithm>
#include <atomic>
#include <optional>

#include "helpers.hpp"
#include "run/running/probe_executor.hpp"
#include "run/running/result_check.hpp"
#include "run/running/runner.hpp"

using namespace memtopo::host;
using test::good_registry;

namespace {

mt_device_info fake_device() {
  mt_device_info d{};
  d.struct_size = sizeof d;
  std::snprintf(d.name, sizeof d.name, "test device");
  std::snprintf(d.backend, sizeof d.backend, "sim");
  return d;
}

const ProbeOutcome& outcome(const RunReport& r, const std::string& probe) {
  for (const auto& o : r.outcomes)
    if (o.probe == probe) return o;
  FAIL("no outcome for " << probe);
  throw 0;
}

const ResultRecord* result(const ProbeOutcome& o, const std::string& key) {
  for (const auto& r : o.results)
    if (r.key == key) return &r;
  return nullptr;
}

// A probe's outcome as the journal hands it back: one integer result.
ProbeOutcome journaled(const std::string& probe, const std::string& version, Status status, const std::string& key,
                       int64_t value) {
  ProbeOutcome done;
  done.probe = probe;
  done.version = version;
  done.status = status;
  ResultRecord rec;
  rec.key = key;
  rec.value = Value::of_int(value);
  rec.probe = probe;
  done.results.push_back(rec);
  return done;
}

}  // namespace

TEST_CASE("failures are isolated and dependents skipped with the cause", "[host][runner]") {
  const Plan plan = make_plan(good_registry(), {});
  const auto device = fake_device();
  RunSettings s;
  std::vector<std::string> journaled;
  s.on_finished = [&](const ProbeOutcome& o) { journaled.push_back(o.probe); };
  const RunReport r = run_plan(plan, device, nullptr, s);
  REQUIRE(r.outcomes.size() == 7);
  CHECK_FALSE(r.interrupted);

  const auto& source = outcome(r, "t-basic/source");
  CHECK(source.status == Status::Ok);
  REQUIRE(result(source, "t.value_bytes"));
  CHECK(result(source, "t.value_bytes")->value.i == 42);
  const auto* lat = result(source, "t.latency_cycles");
  REQUIRE(lat);
  CHECK(lat->bound == MT_BOUND_AT_LEAST);
  CHECK(lat->confidence == 0.9);
  CHECK(lat->note == "test note");

  const auto& consumer = outcome(r, "t-basic/consumer");
  CHECK(consumer.status == Status::Ok);
  CHECK(result(consumer, "t.double_bytes")->value.i == 84);
  CHECK(result(consumer, "t.saw_optional")->value.b == false);

  const auto& rogue = outcome(r, "t-basic/rogue");
  CHECK(rogue.status == Status::Failed);
  CHECK(rogue.reason.find("t.undeclared") != std::string::npos);

  CHECK(outcome(r, "t-fails/broken").status == Status::Failed);
  const auto& dependent = outcome(r, "t-fails/dependent");
  CHECK(dependent.status == Status::Skipped);
  CHECK(dependent.reason ==
        "needs t.broken_bytes, whose provider t-fails/broken failed: the test probe fails on purpose");

  const auto& skip = outcome(r, "t-skips/unsupported");
  CHECK(skip.status == Status::Skipped);
  CHECK(skip.reason == "not supported on this device");

  const auto& thrown = outcome(r, "t-throws/escape");
  CHECK(thrown.status == Status::Failed);
  CHECK(thrown.reason == "exception escaped the probe: escaped on purpose");

  // Journal hook: every probe that ran, not the one skipped for a missing input.
  CHECK(journaled.size() == 6);
  CHECK(std::find(journaled.begin(), journaled.end(), "t-fails/dependent") == journaled.end());
}

TEST_CASE("config options override declared defaults", "[host][runner]") {
  const Plan plan = make_plan(good_registry(), {{"t-basic/consumer"}, {}});
  const auto device = fake_device();
  RunSettings s;
  s.options["t-basic/source"]["value"] = Value::of_int(7);
  s.options["t-basic/consumer"]["factor"] = Value::of_float(3);
  const RunReport r = run_plan(plan, device, nullptr, s);
  CHECK(result(outcome(r, "t-basic/consumer"), "t.double_bytes")->value.i == 21);
  // The outcome records the options that differ from the defaults, for the topology.
  CHECK(outcome(r, "t-basic/source").options.at("value") == Value::of_int(7));
  CHECK(outcome(r, "t-basic/consumer").options.at("factor") == Value::of_float(3));
}

TEST_CASE("an option set to its default is not recorded as the run's", "[host][runner]") {
  const ProbeInfo* consumer = good_registry().find("t-basic/consumer");
  REQUIRE(consumer);
  REQUIRE(consumer->option("factor"));
  const Plan plan = make_plan(good_registry(), {{"t-basic/consumer"}, {}});
  RunSettings s;
  s.options["t-basic/consumer"]["factor"] = consumer->option("factor")->default_value;
  const RunReport r = run_plan(plan, fake_device(), nullptr, s);
  CHECK(outcome(r, "t-basic/consumer").options.empty());
  CHECK(outcome(r, "t-basic/source").options.empty());
}

TEST_CASE("raw series are written as CSV under the raw folder", "[host][runner]") {
  test::TempDir dir("raw");
  const Plan plan = make_plan(good_registry(), {{"t-basic/source"}, {}});
  const auto device = fake_device();
  RunSettings s;
  s.raw_dir = dir.path;
  run_plan(plan, device, nullptr, s);
  CHECK(test::read_file(dir / "t-basic__source/curve.csv") == "x,y\n1.0,10.0\n2.0,20.0\n");
}

TEST_CASE("probes already measured are not run again and feed their dependents", "[host][runner]") {
  const Plan plan = make_plan(good_registry(), {{"t-basic/consumer"}, {}});
  const auto device = fake_device();
  RunSettings s;
  const ProbeOutcome done = journaled("t-basic/source", "1.2.3", Status::Ok, "t.value_bytes", 100);
  s.already_done[done.probe] = done;
  std::vector<std::string> ran;
  s.on_finished = [&](const ProbeOutcome& o) { ran.push_back(o.probe); };
  const RunReport r = run_plan(plan, device, nullptr, s);
  CHECK(ran == std::vector<std::string>{"t-basic/consumer"});
  CHECK(result(outcome(r, "t-basic/consumer"), "t.double_bytes")->value.i == 200);
  CHECK(result(outcome(r, "t-basic/source"), "t.value_bytes")->value.i == 100);
}

TEST_CASE("a cancelled run stops before the next probe", "[host][runner]") {
  const Plan plan = make_plan(good_registry(), {});
  const auto device = fake_device();
  std::atomic<bool> cancel{true};
  RunSettings s;
  s.cancel = &cancel;
  const RunReport r = run_plan(plan, device, nullptr, s);
  CHECK(r.interrupted);
  for (const auto& o : r.outcomes) {
    CHECK(o.status == Status::Skipped);
    CHECK(o.reason == "not run: the run was interrupted");
  }
}

TEST_CASE("unit rules for result keys", "[host][runner]") {
  CHECK_FALSE(check_value_for_key("l1d.size_bytes", Value::of_int(4096)));
  CHECK(check_value_for_key("l1d.size_bytes", Value::of_float(1.5)));
  CHECK(check_value_for_key("l1d.size_bytes", Value::of_int(-1)));
  CHECK_FALSE(check_value_for_key("l1d.hit_cycles", Value::of_float(30.5)));
  CHECK(check_value_for_key("l1d.hit_cycles", Value::of_string("fast")));
  CHECK_FALSE(check_value_for_key("l1d.policy", Value::of_string("lru")));
  CHECK(check_key("L1d.size"));
  CHECK(check_key("meta.x"));
  CHECK_FALSE(check_key("l1d.size_bytes"));
}

namespace {
const Registry& undetermined_registry() {
  static Registry r = [] {
    Registry x;
    x.load_directory(test::plugin_set("undetermined"));
    return x;
  }();
  return r;
}
}  // namespace

TEST_CASE("not determinable: results kept, dependents of the missing key skipped with the reason",
          "[host][runner]") {
  REQUIRE(undetermined_registry().errors().empty());
  const Plan plan = make_plan(undetermined_registry(), {});
  const auto device = fake_device();
  RunSettings s;
  std::vector<std::string> journaled;
  s.on_finished = [&](const ProbeOutcome& o) { journaled.push_back(o.probe); };
  const RunReport r = run_plan(plan, device, nullptr, s);

  const auto& geometry = outcome(r, "t-undetermined/geometry");
  CHECK(geometry.status == Status::NotDeterminable);
  CHECK(geometry.reason == "a hashed set index hides the sets");
  REQUIRE(result(geometry, "t.fetch_bytes"));  // stored before the throw: kept
  CHECK(result(geometry, "t.fetch_bytes")->value.i == 32);
  CHECK_FALSE(result(geometry, "t.sets"));

  const auto& policy = outcome(r, "t-undetermined/policy");
  CHECK(policy.status == Status::Skipped);
  CHECK(policy.reason == "needs t.sets, which its provider t-undetermined/geometry could not determine: "
                         "a hashed set index hides the sets");
  // The kept key feeds its dependent.
  const auto& user = outcome(r, "t-undetermined/sector-user");
  CHECK(user.status == Status::Ok);
  REQUIRE(result(user, "t.twice_fetch_bytes"));
  CHECK(result(user, "t.twice_fetch_bytes")->value.i == 64);
  CHECK(journaled == std::vector<std::string>{"t-undetermined/geometry", "t-undetermined/sector-user"});
  CHECK(std::string(status_name(Status::NotDeterminable)) == "not_determinable");
}

TEST_CASE("resume keeps a not determinable probe like an ok one", "[host][runner]") {
  const Plan plan = make_plan(undetermined_registry(), {});
  const auto device = fake_device();
  RunSettings s;
  ProbeOutcome done = journaled("t-undetermined/geometry", "1.0.0", Status::NotDeterminable, "t.fetch_bytes", 16);
  done.reason = "from the journal";
  s.already_done[done.probe] = done;
  std::vector<std::string> ran;
  s.on_finished = [&](const ProbeOutcome& o) { ran.push_back(o.probe); };
  const RunReport r = run_plan(plan, device, nullptr, s);
  CHECK(ran == std::vector<std::string>{"t-undetermined/sector-user"});
  CHECK(outcome(r, "t-undetermined/geometry").reason == "from the journal");
  CHECK(result(outcome(r, "t-undetermined/sector-user"), "t.twice_fetch_bytes")->value.i == 32);
  CHECK(outcome(r, "t-undetermined/policy").reason.find("could not determine: from the journal") != std::string::npos);
}

TEST_CASE("the runner checks needs even when the plan was made without the device", "[host][runner][needs]") {
  Registry reg;
  reg.load_directory(test::plugin_set("needs"));
  const Plan plan = make_plan(reg, {});
  auto device = fake_device();  // sim
  device.cc_major = 9;
  RunSettings s;
  const RunReport r = run_plan(plan, device, nullptr, s);
  CHECK(outcome(r, "t-needs/cuda-only").status == Status::Skipped);
  CHECK(outcome(r, "t-needs/cuda-only").reason ==
        "needs a CUDA GPU (a kernel the simulated GPU cannot run); the device is the simulated GPU");
  CHECK(outcome(r, "t-needs/cuda-user")
            .reason.find("whose provider t-needs/cuda-only skipped: needs a CUDA GPU (a kernel the simulated GPU cannot "
                         "run)") !=
        std::string::npos);
  CHECK(outcome(r, "t-needs/future").reason == "needs compute capability 10.0; the device has 9.0");
  CHECK(outcome(r, "t-needs/hopper").status == Status::Ok);
  CHECK(outcome(r, "t-needs/anywhere").status == Status::Ok);
}

namespace {
ProbeOutcome ended(const std::string& probe, Status status, bool by_failure = false) {
  ProbeOutcome o;
  o.probe = probe;
  o.status = status;
  o.caused_by_failure = by_failure;
  return o;
}
}  // namespace

TEST_CASE("exit status: only failures, skips they cause and missing keys asked for make it 1", "[host][runner][exit]") {
  RunReport r;
  r.outcomes = {ended("a/ok", Status::Ok), ended("a/nd", Status::NotDeterminable), ended("a/skip", Status::Skipped)};
  const RunTally t = tally(r.outcomes);
  CHECK(t.text() == "1 ok, 1 not determinable, 1 skipped, 0 failed");
  CHECK(run_exit_status(r, {}) == 0);
  CHECK(run_exit_status(r, {"x.y_bytes was asked for but not measured: ..."}) == 1);
  r.outcomes.push_back(ended("a/after-failure", Status::Skipped, true));
  CHECK(tally(r.outcomes).skipped_for_failure == 1);
  CHECK(run_exit_status(r, {}) == 1);
  r.outcomes.pop_back();
  r.outcomes.push_back(ended("a/broken", Status::Failed));
  CHECK(tally(r.outcomes).text() == "1 ok, 1 not determinable, 1 skipped, 1 failed");
  CHECK(run_exit_status(r, {}) == 1);
  r.outcomes.pop_back();
  r.interrupted = true;
  CHECK(run_exit_status(r, {}) == 1);
}

TEST_CASE("a skip caused by a failure is marked, down the chain, other skips are not", "[host][runner][exit]") {
  Registry reg;
  reg.load_directory(test::plugin_set("good"));
  reg.load_directory(test::plugin_set("missing"));
  const Plan plan = make_plan(reg, {});
  const auto device = fake_device();
  RunSettings s;
  const RunReport r = run_plan(plan, device, nullptr, s);
  CHECK(outcome(r, "t-fails/dependent").caused_by_failure);
  CHECK_FALSE(outcome(r, "t-skips/unsupported").caused_by_failure);
  CHECK_FALSE(outcome(r, "t-missing/orphan").caused_by_failure);
  CHECK_FALSE(outcome(r, "t-missing/grandchild").caused_by_failure);
}

TEST_CASE("a key asked for by name that is missing is reported with its provider's reason", "[host][runner][exit]") {
  Registry reg;
  reg.load_directory(test::plugin_set("undetermined"));
  reg.load_directory(test::plugin_set("good"));
  const auto device = fake_device();
  RunSettings s;
  const Plan plan = make_plan(reg, {{"t.sets", "t.fetch_bytes", "t.double_bytes"}, {"t-basic/source"}});
  CHECK(plan.requested_keys.at("t.sets") == "t-undetermined/geometry");
  const RunReport r = run_plan(plan, device, nullptr, s);
  CHECK(missing_requested_keys(plan, r.outcomes) ==
        std::vector<std::string>{
            "t.double_bytes was asked for but not measured: its provider t-basic/consumer skipped: needs t.value_bytes, "
            "whose provider t-basic/source is excluded by skip",
            "t.sets was asked for but not measured: its provider t-undetermined/geometry could not determine it: a "
            "hashed set index hides the sets"});
  const Plan skipped = make_plan(reg, {{"t.value_bytes", "t.fetch_bytes"}, {"t-basic/source"}});
  CHECK(missing_requested_keys(skipped, run_plan(skipped, device, nullptr, s).outcomes) ==
        std::vector<std::string>{
            "t.value_bytes was asked for but not measured: its provider t-basic/source is excluded by skip"});
}

TEST_CASE("put_result holds values to their declared type", "[host][runner][keys]") {
  Registry reg;
  reg.load_directory(test::plugin_set("keys"));
  const Plan plan = make_plan(reg, {});
  const auto device = fake_device();
  RunSettings s;
  const RunReport r = run_plan(plan, device, nullptr, s);
  const auto& tma = outcome(r, "t-keys/tma");
  REQUIRE(tma.status == Status::Ok);
  const auto* lat = result(tma, "tma.latency_cycles");
  REQUIRE(lat);
  CHECK(lat->value.type == MT_VALUE_FLOAT);  // reported as an integer, declared a float
  CHECK(lat->value.f == 480.0);
  const auto& wrong = outcome(r, "t-keys/wrong-type");
  CHECK(wrong.status == Status::Failed);
  CHECK(wrong.reason.find("tma.copies") != std::string::npos);
}

namespace {

// Runs a probe in this process when it begins and hands the outcome over after `polls` looks,
// writing "begin x" and "end x" to `log` as a worker's probe would start and end.
class DelayedExecutor : public BackgroundExecutor {
 public:
  DelayedExecutor(const mt_device_info& device, int polls, std::vector<std::string>& log)
      : device_(device), polls_(polls), log_(log) {}
  void begin(const ProbeInfo& p, const std::map<std::string, ResultRecord>& inputs, const RunSettings& s) override {
    REQUIRE_FALSE(pending_);
    log_.push_back("begin " + p.name);
    ++begun;
    pending_ = run_probe(p, device_, nullptr, s, inputs);
    left_ = polls_;
  }
  std::optional<ProbeOutcome> poll(int) override {
    if (!pending_ || left_-- > 0) return std::nullopt;
    log_.push_back("end " + pending_->probe);
    std::optional<ProbeOutcome> o = std::move(pending_);
    pending_.reset();
    return o;
  }
  int begun = 0;

 private:
  const mt_device_info& device_;
  int polls_, left_ = 0;
  std::vector<std::string>& log_;
  std::optional<ProbeOutcome> pending_;
};

size_t position(const std::vector<std::string>& log, const std::string& entry) {
  return size_t(std::find(log.begin(), log.end(), entry) - log.begin());
}

}  // namespace

TEST_CASE("probes on several executors: each after its providers, outcomes as one at a time", "[host][runner]") {
  const Plan plan = make_plan(good_registry(), {});
  const auto device = fake_device();
  RunSettings one;
  const RunReport sequential = run_plan(plan, device, nullptr, one);
  std::vector<std::string> log, finished;
  DelayedExecutor quick(device, 0, log), slow(device, 3, log);
  RunSettings s;
  s.on_finished = [&](const ProbeOutcome& o) { finished.push_back(o.probe); };
  const RunReport r = run_plan(plan, device, std::vector<BackgroundExecutor*>{&slow, &quick}, s);
  CHECK(quick.begun > 0);
  CHECK(slow.begun > 0);
  REQUIRE(r.outcomes.size() == sequential.outcomes.size());
  for (size_t i = 0; i < r.outcomes.size(); ++i) {
    const ProbeOutcome &a = sequential.outcomes[i], &b = r.outcomes[i];
    INFO(a.probe);
    CHECK(b.probe == a.probe);  // plan order, whatever order they ended in
    CHECK(b.status == a.status);
    CHECK(b.results.size() == a.results.size());
    const PlanStep& step = plan.steps[i];
    if (position(log, "begin " + a.probe) == log.size()) continue;  // settled without running
    for (const auto* keys : {&step.probe->required, &step.probe->used})
      for (const auto& key : *keys)
        if (auto prov = plan.providers.find(key); prov != plan.providers.end())
          CHECK(position(log, "end " + prov->second->name) < position(log, "begin " + a.probe));
  }
  CHECK(finished.size() == size_t(quick.begun + slow.begun));  // the journal hook once per probe run
}

TEST_CASE("time limits: a simulated GPU of many SMs scales the declared budget", "[host][runner]") {
  mt_device_info gpu{}, small{}, large{};
  std::snprintf(gpu.backend, sizeof gpu.backend, "cuda");
  gpu.sm_count = 132;
  std::snprintf(small.backend, sizeof small.backend, "sim");
  small.sm_count = 12;
  large = small;
  large.sm_count = 132;
  CHECK(memtopo::host::budget_scale_for(gpu) == 1);
  CHECK(memtopo::host::budget_scale_for(small) == 1);
  CHECK(memtopo::host::budget_scale_for(large) == Approx(8.25));
  memtopo::host::ProbeInfo probe;
  probe.name = "t/p";
  probe.budget_s = 30;
  memtopo::host::RunSettings settings;
  settings.budget_scale = memtopo::host::budget_scale_for(large);
  const auto limit = memtopo::host::time_limit_for(probe, settings);
  CHECK(limit.seconds == Approx(247.5 * memtopo::host::build_budget_scale()));
  CHECK(limit.source.find("x 8.25 for a simulated GPU of more than 16 SMs") != std::string::npos);
  settings.time_limit_s = 10;  // a limit the user set is the user's
  CHECK(memtopo::host::time_limit_for(probe, settings).seconds == 10);
}

TEST_CASE("every declared key of a probe that keeps results is stored or absent with its reason",
          "[host][runner][absent]") {
  Registry reg;
  reg.load_directory(test::plugin_set("absent"));
  REQUIRE(reg.errors().empty());
  const Plan plan = make_plan(reg, {});
  const auto device = fake_device();
  RunSettings s;
  std::map<std::string, ProbeOutcome> journaled;
  s.on_finished = [&](const ProbeOutcome& o) { journaled[o.probe] = o; };
  const RunReport r = run_plan(plan, device, nullptr, s);

  const auto& level = outcome(r, "t-absent/level");
  REQUIRE(level.status == Status::Ok);
  CHECK(result(level, "t.near_cycles"));
  CHECK(level.absent_keys == std::map<std::string, std::string>{{"t.far_cycles", "one partition: no far line"},
                                                               {"t.unsaid_bytes", kNoReasonGiven}});
  // The journal holds what the file will: the host's account included.
  CHECK(journaled.at("t-absent/level").absent_keys == level.absent_keys);
  // A dependent of the absent key says why.
  const auto& user = outcome(r, "t-absent/far-user");
  CHECK(user.status == Status::Skipped);
  CHECK(user.reason == "needs t.far_cycles, which its provider t-absent/level did not measure: one partition: no far line");
  // A key is stored or absent; only a provided key is absent. Failed probes keep neither.
  const auto& both = outcome(r, "t-absent/stored-then-absent");
  CHECK(both.status == Status::Failed);
  CHECK(both.absent_keys.empty());
  const auto& foreign = outcome(r, "t-absent/foreign");
  CHECK(foreign.status == Status::Failed);
  CHECK(foreign.reason.find("t.near_cycles") != std::string::npos);
}

TEST_CASE("account_for_declared_keys: a not determinable probe's unsaid keys take its reason", "[host][runner][absent]") {
  ProbeInfo p;
  p.name = "t/x";
  p.provided = {"t.a_bytes", "t.b_bytes", "t.c_bytes"};
  ProbeOutcome o = journaled("t/x", "1.0.0", Status::NotDeterminable, "t.a_bytes", 1);
  o.reason = "the sets are hashed";
  o.absent_keys = {{"t.b_bytes", "its own reason"}, {"t.a_bytes", "stored after all"}};
  account_for_declared_keys(p, o);
  CHECK(o.absent_keys ==
        std::map<std::string, std::string>{{"t.b_bytes", "its own reason"}, {"t.c_bytes", "the sets are hashed"}});
  o.status = Status::Skipped;
  account_for_declared_keys(p, o);
  CHECK(o.absent_keys.empty());
}
