// The fleet comparison: per GPU model, every key against the group's majority value
// (discrete) or its median and robust spread (continuous; a list by its worst element); probes
// whose status differs; a tie, a list of another length or a key declared structure, a key
// present on some GPUs only (unless declared always written) and a float no table, profile or
// probe rates are reported, never flagged; and,
// with --reference, every key against a known-good topology (docs/fleet.md, "How a GPU is
// flagged").
#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <map>
#include <set>
#include <thread>

#include "tools/fleet/fleet.hpp"

namespace memtopo::host {

using json = nlohmann::json;

bool FleetGpu::flagged() const {
  return std::any_of(findings.begin(), findings.end(), [](const FleetFinding& f) { return f.counts; });
}

size_t FleetReport::flagged() const {
  return static_cast<size_t>(std::count_if(gpus.begin(), gpus.end(), [](const FleetGpu& g) { return g.flagged(); }));
}

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

bool is_continuous(const json& v) {
  if (v.is_number_float()) return true;
  return v.is_array() && std::any_of(v.begin(), v.end(), [](const json& e) { return e.is_number_float(); });
}

std::optional<double> deviation(double value, double expected) {
  if (expected == 0) return std::nullopt;
  return (value - expected) / std::fabs(expected) * 100;
}

// The members of one comparison: the group whose statistics are used, and who is judged; and
// every key's values by member, looked up once (thousands of GPUs, hundreds of keys).
struct Cohort {
  const std::vector<FleetMember>& all;
  std::vector<size_t> reference;  // the members whose values make the statistics
  std::vector<size_t> judged;     // the members compared with them (reference ones too)
  std::map<std::string, std::vector<const FlatValue*>> by_key;  // key -> per slot
  std::vector<int> slot;          // member -> its slot in by_key's vectors (-1: not in the cohort)
  // Against a reference: only the keys both have (an acceptance run against a default run).
  bool common_keys_only = false;

  Cohort(const std::vector<FleetMember>& members, std::vector<size_t> ref, std::vector<size_t> who)
      : all(members), reference(std::move(ref)), judged(std::move(who)), slot(members.size(), -1) {
    std::vector<size_t> in = reference;
    in.insert(in.end(), judged.begin(), judged.end());
    int next = 0;
    for (size_t m : in)
      if (slot[m] < 0) slot[m] = next++;
    for (size_t m : in) {
      // A member's keys are sorted: the place after the last one is the hint for the next.
      auto hint = by_key.begin();
      for (const auto& [key, value] : all[m].values) {
        const auto it = by_key.try_emplace(hint, key);
        auto& row = it->second;
        if (row.empty()) row.resize(static_cast<size_t>(next), nullptr);
        row[static_cast<size_t>(slot[m])] = &value;
        hint = std::next(it);
      }
    }
  }
  const FlatValue* value(const std::string& key, size_t m) const {
    const auto it = by_key.find(key);
    return it == by_key.end() ? nullptr : it->second[static_cast<size_t>(slot[m])];
  }
};

// One continuous scalar (or array element): flagged where beyond tolerance and spread.
struct Outlier {
  bool off = false;
  double expected = 0;
};

std::vector<Outlier> continuous_outliers(const std::vector<double>& ref, const std::vector<double>& judged,
                                         double tolerance_percent, double spread_factor, double least_difference) {
  const double m = median(ref);
  std::vector<double> dev;
  for (double x : ref) dev.push_back(std::fabs(x - m));
  const double spread = ref.size() >= 3 ? 1.4826 * median(dev) : 0;
  std::vector<Outlier> out;
  for (double x : judged) {
    const double d = std::fabs(x - m);
    out.push_back({d > tolerance_percent / 100 * std::fabs(m) && d > spread_factor * spread && d > least_difference, m});
  }
  return out;
}

// The most common of the texts; ties go to the first seen.
std::string mode_of(const std::vector<std::string>& texts) {
  std::map<std::string, size_t> count;
  std::string best;
  size_t most = 0;
  for (const auto& t : texts)
    if (++count[t] > most) most = count[t], best = t;
  return best;
}

// Whether the mode is held by more than half of the texts: a tie, or a plurality of three or
// more values, has no majority to judge the others by.
bool majority(const std::vector<std::string>& texts, const std::string& mode) {
  return 2 * size_t(std::count(texts.begin(), texts.end(), mode)) > texts.size();
}

// Why a difference is reported, not flagged: the reason of FleetFinding::not_flagged.
constexpr const char* kNoMajority = "no majority";
constexpr const char* kComesAndGoes = "comes and goes";
constexpr const char* kUnrated = "unrated";
constexpr const char* kStructure = "structure";

std::string structure_reason(size_t length, size_t expected_length) {
  return "structure: " + std::to_string(length) + " elements against " + std::to_string(expected_length);
}

struct KeyJudge {
  const Cohort& c;
  const std::string& key;
  const std::vector<const FlatValue*>& row;  // c.by_key[key]
  const KeyRule& rule;
  double spread_factor;
  std::vector<std::pair<size_t, FleetFinding>>& findings;  // member, finding: in the order found
  FleetGroup::Series* series;

  // A difference; `not_flagged` non-empty: reported, not flagged, for that reason (a key that
  // varies, or counts what was found, is never flagged).
  void add(size_t member, FleetFinding f, std::string not_flagged = "") const {
    f.key = key;
    if (rule.varies && not_flagged.empty()) not_flagged = "varies";
    if (rule.structure && not_flagged.empty()) not_flagged = kStructure;
    f.counts = not_flagged.empty();
    f.not_flagged = std::move(not_flagged);
    findings.emplace_back(member, std::move(f));
  }
  const FlatValue* at(size_t m) const { return row[static_cast<size_t>(c.slot[m])]; }

  // A key some GPUs have and others not, their probe ok on all (a failed probe is the probe's
  // finding): reported, unless its probe declares it written in every run and most GPUs have it.
  void presence() const {
    size_t present = 0;
    for (size_t m : c.reference) present += at(m) != nullptr;
    for (size_t m : c.judged) {
      const bool has = at(m) != nullptr, most_have = 2 * present > c.reference.size();
      const bool few_have = 2 * present < c.reference.size();
      if (!has && (most_have || !few_have)) {
        FleetFinding missing{"", "missing", nullptr, nullptr, std::nullopt};
        missing.absent_reason = c.all[m].absent_reason(key);
        add(m, std::move(missing), rule.always && most_have ? "" : kComesAndGoes);
      }
      if (has && (few_have || !most_have)) add(m, {"", "extra", at(m)->value, nullptr, std::nullopt}, kComesAndGoes);
    }
  }

  // The most common length of the reference's lists (0 where the key is no list).
  size_t common_length() const {
    std::vector<std::string> lengths;
    for (size_t m : c.reference)
      if (at(m) && at(m)->value.is_array()) lengths.push_back(std::to_string(at(m)->value.size()));
    return lengths.empty() ? 0 : std::stoul(mode_of(lengths));
  }

  // A list of another length than the group's: more or fewer levels, parts or entries found.
  // Reported, never a fault on its own; true where `m`'s value is such a list.
  bool structure(size_t m, size_t length) const {
    if (!at(m) || !at(m)->value.is_array() || at(m)->value.size() == length) return false;
    add(m, {"", "value", at(m)->value, nullptr, std::nullopt}, structure_reason(at(m)->value.size(), length));
    return true;
  }

  void bounds() const {
    std::vector<std::string> b;
    for (size_t m : c.reference)
      if (at(m)) b.push_back(at(m)->bound);
    if (b.empty()) return;
    const std::string mode = mode_of(b);
    for (size_t m : c.judged)
      if (at(m) && at(m)->bound != mode) add(m, {"", "bound", at(m)->bound, mode, std::nullopt});
  }

  void discrete() const {
    std::vector<std::string> texts;
    for (size_t m : c.reference)
      if (at(m)) texts.push_back(at(m)->value.dump());
    if (texts.empty()) return;
    const std::string mode = mode_of(texts);
    const bool decided = majority(texts, mode);
    const json mode_value = json::parse(mode);
    const json expected = decided ? mode_value : json(nullptr);
    const size_t length = common_length();
    const bool lists = mode_value.is_array();
    for (size_t m : c.judged) {
      if (!at(m) || at(m)->value.dump() == mode || (lists && structure(m, length))) continue;
      const json& v = at(m)->value;
      std::optional<double> d;
      if (v.is_number() && expected.is_number()) d = deviation(v.get<double>(), expected.get<double>());
      add(m, {"", "value", v, expected, d}, decided ? "" : kNoMajority);
    }
  }

  // Scalars, or arrays element by element (an array of another length than most is structure).
  void continuous() const {
    bool arrays = false;
    for (size_t m : c.reference)
      if (at(m)) arrays = arrays || at(m)->value.is_array();
    const size_t length = arrays ? common_length() : 1;
    for (size_t m : c.judged)
      if (at(m) && at(m)->value.is_array() != arrays) add(m, {"", "value", at(m)->value, nullptr, std::nullopt});
      else if (arrays) structure(m, length);
    auto element = [&](size_t m, size_t i) -> std::optional<double> {
      if (!at(m)) return std::nullopt;
      const json& v = arrays ? (at(m)->value.size() == length ? at(m)->value[i] : json(nullptr)) : at(m)->value;
      return v.is_number() ? std::optional<double>(v.get<double>()) : std::nullopt;
    };
    // A count rounded from a rate (an integer estimate: 25 or 26 loads in flight) comes no
    // closer than one unit, whatever the tolerance.
    bool integers = rule.estimate;
    for (size_t m : c.reference)
      if (at(m)) integers = integers && !is_continuous(at(m)->value);
    const double least = integers ? 1.0 : 0.0;
    // Per member its worst element beyond tolerance and spread: by relative deviation, so that
    // a list of latencies from 30 to 600 cycles is judged by the element most off for its size.
    struct Worst {
      double score = 0;
      double expected = 0;
      size_t index = 0;
    };
    std::map<size_t, Worst> worst;
    json medians = json::array();  // an array's expected value: its medians
    for (size_t i = 0; i < length; ++i) {
      std::vector<double> ref, judged;
      std::vector<size_t> who;
      for (size_t m : c.reference)
        if (auto x = element(m, i)) ref.push_back(*x);
      for (size_t m : c.judged)
        if (auto x = element(m, i)) judged.push_back(*x), who.push_back(m);
      if (ref.empty()) {
        medians.push_back(nullptr);
        continue;
      }
      medians.push_back(median(ref));
      const auto out = continuous_outliers(ref, judged, rule.tolerance_percent, spread_factor, least);
      for (size_t k = 0; k < who.size(); ++k) {
        const double d = std::fabs(judged[k] - out[k].expected);
        const double score = out[k].expected != 0 ? d / std::fabs(out[k].expected) : d;
        if (out[k].off && (!worst.count(who[k]) || score > worst[who[k]].score))
          worst[who[k]] = {score, out[k].expected, i};
      }
      if (!arrays) record_series(ref);
    }
    for (const auto& [m, w] : worst) {
      const json& v = at(m)->value;
      // Only a tolerance measured or declared for the model decides; the rest informs.
      const char* rating = rule.rated ? "" : kUnrated;
      if (!arrays) {
        add(m, {"", "value", v, w.expected, deviation(v.get<double>(), w.expected)}, rating);
        continue;
      }
      FleetFinding f{"", "value", v, medians, deviation(v[w.index].get<double>(), w.expected)};
      f.element = w.index;
      f.element_value = v[w.index];
      f.element_expected = w.expected;
      add(m, std::move(f), rating);
    }
  }

  // A key whose values spread, for the report's plot of every GPU.
  void record_series(const std::vector<double>& ref) const {
    if (!series || *std::min_element(ref.begin(), ref.end()) == *std::max_element(ref.begin(), ref.end())) return;
    series->key = key;
    series->median = median(ref);
    for (size_t m : c.reference) series->values.push_back(at(m) ? at(m)->value : json(nullptr));
  }
};

// A configuration key whose members do not all agree: each value with who has it.
void record_configuration(const Cohort& c, const std::string& key, const std::vector<const FlatValue*>& row,
                          std::vector<FleetGroup::Configuration>& out) {
  std::map<std::string, FleetGroup::Variant> variants;
  for (size_t m : c.judged)
    if (const FlatValue* v = row[static_cast<size_t>(c.slot[m])]) {
      auto& variant = variants[v->value.dump()];
      variant.value = v->value;
      variant.members.push_back(m);
    }
  if (variants.size() < 2) return;
  FleetGroup::Configuration cfg{key, {}};
  for (auto& [_, v] : variants) cfg.variants.push_back(std::move(v));
  std::sort(cfg.variants.begin(), cfg.variants.end(),
            [](const auto& a, const auto& b) { return a.members.size() > b.members.size(); });
  out.push_back(std::move(cfg));
}

// What judging one key gives; keys are judged on several threads and merged in key order.
struct KeyVerdict {
  bool compared = false;
  std::vector<std::pair<size_t, FleetFinding>> findings;
  FleetGroup::Series series;
  std::vector<FleetGroup::Configuration> configuration;
};

KeyVerdict judge_key(const Cohort& c, const FleetOptions& o, const KeyPolicy& policy, const std::string& key,
                     const std::vector<const FlatValue*>& row, bool for_group) {
  KeyVerdict out;
  std::vector<KeyDeclared> declared;
  for (const FlatValue* v : row)
    if (v) declared.push_back(v->declared);
  const KeyRule rule = policy.rule(key, declared);
  if (for_group && rule.key_class == KeyClass::configuration) record_configuration(c, key, row, out.configuration);
  if (rule.ignore || rule.key_class != KeyClass::measurement) return out;
  // Against a reference, a key only it or only the GPUs hold is compared with nothing.
  const auto held = [&](const std::vector<size_t>& who) {
    return std::any_of(who.begin(), who.end(), [&](size_t m) { return row[static_cast<size_t>(c.slot[m])] != nullptr; });
  };
  if (c.common_keys_only && (!held(c.reference) || !held(c.judged))) return out;
  out.compared = true;
  const KeyJudge judge{c, key, row, rule, o.spread_factor, out.findings, for_group ? &out.series : nullptr};
  if (!c.common_keys_only) judge.presence();
  judge.bounds();
  bool continuous = false;
  for (size_t m : c.reference)
    if (const FlatValue* v = judge.at(m))
      continuous = continuous || is_continuous(v->value) || (rule.estimate && (v->value.is_number() || v->value.is_array()));
  if (continuous) judge.continuous();
  else judge.discrete();
  return out;
}

// job(0) .. job(n - 1), each once, over the machine's cores; the first exception is rethrown.
template <class Job>
void for_each_index(size_t n, const Job& job) {
  std::atomic<size_t> next{0};
  std::exception_ptr failed;
  std::atomic<bool> failing{false};
  auto work = [&] {
    for (size_t i = next++; i < n; i = next++) {
      try {
        job(i);
      } catch (...) {
        if (!failing.exchange(true)) failed = std::current_exception();
      }
    }
  };
  const size_t threads = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 16);
  std::vector<std::thread> pool;
  for (size_t t = 1; t < std::min(threads, n); ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (failed) std::rethrow_exception(failed);
}

// Every key of the cohort under `policy` (the group's model's); returns how many were compared.
size_t judge_keys(const Cohort& c, const FleetOptions& o, const KeyPolicy& policy, std::vector<FleetGpu>& gpus,
                  FleetGroup* group) {
  std::vector<const std::pair<const std::string, std::vector<const FlatValue*>>*> keys;
  for (const auto& entry : c.by_key) keys.push_back(&entry);
  std::vector<KeyVerdict> verdicts(keys.size());
  for_each_index(keys.size(), [&](size_t k) {
    verdicts[k] = judge_key(c, o, policy, keys[k]->first, keys[k]->second, group != nullptr);
  });
  size_t compared = 0;
  for (auto& v : verdicts) {
    compared += v.compared;
    for (auto& [member, finding] : v.findings) gpus[member].findings.push_back(std::move(finding));
    if (!group) continue;
    for (auto& cfg : v.configuration) group->configuration.push_back(std::move(cfg));
    if (!v.series.key.empty()) group->series.push_back(std::move(v.series));
  }
  return compared;
}

// Probes whose "version status" differs from the group's majority. A probe all of whose keys
// vary between runs is reported, not flagged, like its keys; so is every difference where no
// status is held by more than half the group.
void judge_probes(const Cohort& c, const FleetOptions& o, std::vector<FleetGpu>& gpus) {
  std::set<std::string> names;
  std::set<std::string, std::less<>> steady, with_keys;
  for (size_t m : c.reference)
    for (const auto& [p, _] : c.all[m].probes) names.insert(p);
  for (const auto& [key, row] : c.by_key) {
    // The rule of each declaration once: thousands of members share one or two.
    std::vector<std::pair<KeyDeclared, bool>> varies;
    for (size_t m : c.reference) {
      const FlatValue* v = row[static_cast<size_t>(c.slot[m])];
      if (!v || v->probe.empty() || steady.count(v->probe)) continue;
      with_keys.emplace(v->probe);
      auto known = std::find_if(varies.begin(), varies.end(), [&](const auto& e) { return e.first == v->declared; });
      if (known == varies.end())
        known = varies.insert(varies.end(), {v->declared, o.policy.rule(key, std::vector<KeyDeclared>{v->declared}).varies});
      if (!known->second) steady.emplace(v->probe);
    }
  }
  static const std::string kNotRun = "not run";
  auto state = [&](size_t m, const std::string& p) -> const std::string& {
    const auto& probes = c.all[m].probes;  // sorted by name
    const auto it = std::lower_bound(probes.begin(), probes.end(), p,
                                     [](const auto& e, const std::string& name) { return e.first < name; });
    return it != probes.end() && it->first == p ? it->second : kNotRun;
  };
  for (const auto& p : names) {
    std::vector<std::string> states;
    for (size_t m : c.reference) states.push_back(state(m, p));
    const std::string mode = mode_of(states);
    const bool decided = majority(states, mode);
    for (size_t m : c.judged) {
      if (state(m, p) == mode) continue;
      FleetFinding f{"probe " + p, "probe", state(m, p), decided ? json(mode) : json(nullptr), std::nullopt, "group"};
      f.not_flagged = !decided ? kNoMajority : steady.count(p) > 0 || !with_keys.count(p) ? "" : "varies";
      f.counts = f.not_flagged.empty();
      gpus[m].findings.push_back(std::move(f));
    }
  }
}

// The model of each group: members with the same model name (and what measured them) join the
// largest group of that name as judged members (a GPU whose SM count is off is compared with its
// healthy siblings).
std::map<std::string, std::string> reference_group_of(const std::map<std::string, std::vector<size_t>>& groups,
                                                      const std::vector<FleetMember>& all) {
  auto model_of = [&](size_t m) { return all[m].model + "\n" + all[m].like; };
  std::map<std::string, std::string> largest_by_model;  // model -> group
  for (const auto& [g, members] : groups) {
    const std::string model = model_of(members.front());
    auto it = largest_by_model.find(model);
    if (it == largest_by_model.end() || groups.at(it->second).size() < members.size()) largest_by_model[model] = g;
  }
  std::map<std::string, std::string> out;
  for (const auto& [g, members] : groups) out[g] = largest_by_model[model_of(members.front())];
  return out;
}

KeyPolicy policy_of(const FleetOptions& o, const std::string& model) {
  if (!o.shipped_spreads) return o.policy;
  const ShippedSpreads& table = shipped_spreads(model);
  return o.policy.with_least_tolerances(table.least_tolerance_percent, table.rates());
}

std::string version_of(const FleetMember& m, std::string_view probe) {
  for (const auto& [name, state] : m.probes)
    if (name == probe) return state.substr(0, state.find(' '));
  return "";
}

// Every GPU against the reference alone: its values are the statistics (a median of one).
void compare_with_reference(FleetReport& r, const FleetOptions& o) {
  const size_t n = r.members.size();
  r.members.push_back(*o.reference);  // for the comparison only
  std::vector<size_t> everyone(n);
  for (size_t m = 0; m < n; ++m) everyone[m] = m;
  std::vector<FleetGpu> found(n + 1);
  Cohort c(r.members, {n}, everyone);
  c.common_keys_only = true;
  r.reference_keys_compared = judge_keys(c, o, policy_of(o, o.reference->model), found, nullptr);
  r.members.pop_back();
  for (size_t m = 0; m < n; ++m)
    for (auto& f : found[m].findings) {
      f.against = "reference";
      // A reference measured by another major version of the key's probe: another method.
      if (const std::string changed = method_change(*o.reference, r.members[m], f.key); !changed.empty())
        f.counts = false, f.not_flagged = changed;
      r.gpus[m].findings.push_back(std::move(f));
    }
}

// Groups by model, and within a model by what measured the files (build, probes run) where the
// fleet holds more than one: values of different builds or presets are compared apart.
std::map<std::string, std::vector<size_t>> groups_of(const std::vector<FleetMember>& all, std::vector<std::string>& notes) {
  std::map<std::string, std::set<std::string>> likes;
  for (const auto& m : all) likes[m.group].insert(m.like);
  std::map<std::string, std::vector<size_t>> out;
  for (size_t m = 0; m < all.size(); ++m) {
    const bool apart = likes[all[m].group].size() > 1;
    out[apart ? all[m].group + " | " + all[m].like : all[m].group].push_back(m);
  }
  for (const auto& [group, set] : likes)
    if (set.size() > 1)
      notes.push_back(group + ": files of " + std::to_string(set.size()) +
                      " builds or probe sets (default run, preset, --only, probe options), compared apart: like with like");
  return out;
}

// A GPU whose run recorded an unclean state (another process, utilization, throttling, a lowered
// power limit, MIG) is flagged with that cause first: its values are not the GPU's own.
void flag_state(FleetReport& r) {
  for (size_t m = 0; m < r.members.size(); ++m) {
    const auto& warnings = r.members[m].state_warnings;
    if (warnings.empty()) continue;
    std::string causes;
    for (const auto& w : warnings) causes += (causes.empty() ? "" : "; ") + w;
    auto& f = r.gpus[m].findings;
    f.insert(f.begin(), FleetFinding{"gpu state", "state", causes, "idle, clocks free", std::nullopt, "run", true});
  }
}

// A key whose probe judges a part of the GPU or its attachment (MT_KEY_HEALTH) and says other
// than "ok" (a link trained below its maximum) flags its GPU with that cause, alone or among
// siblings; the key's own comparison with the group's goes, the verdict says more.
void flag_health(FleetReport& r) {
  for (size_t m = 0; m < r.members.size(); ++m)
    for (const auto& [key, v] : r.members[m].values) {
      if (!v.declared.health || !v.value.is_string() || v.value.get<std::string>() == "ok") continue;
      auto& f = r.gpus[m].findings;
      std::erase_if(f, [&key = key](const FleetFinding& x) { return x.key == key; });
      f.insert(f.begin(), FleetFinding{key, "health", v.value, "ok", std::nullopt, "run", true});
    }
}

}  // namespace

std::string method_change(const FleetMember& a, const FleetMember& b, const std::string& key) {
  const FlatValue *va = a.find(key), *vb = b.find(key);
  if (!va || !vb || va->probe.empty() || va->probe != vb->probe) return "";
  return method_change(std::string(va->probe), version_of(a, va->probe), version_of(b, vb->probe));
}

FleetReport compare_fleet(std::vector<FleetMember> members, const FleetOptions& options) {
  FleetReport r;
  r.members = std::move(members);
  r.tolerance_percent = options.policy.default_tolerance();
  r.spread_factor = options.spread_factor;
  r.gpus.resize(r.members.size());
  for (size_t m = 0; m < r.members.size(); ++m) r.gpus[m].member = m;
  const auto by_group = groups_of(r.members, r.notes);
  const auto reference_group = reference_group_of(by_group, r.members);
  for (const auto& [name, members] : by_group) {
    FleetGroup g{name, members, 0, {}, {}};
    const std::vector<size_t>& group_ref = by_group.at(reference_group.at(name));
    const bool own = &group_ref == &members;
    if (group_ref.size() >= 2 || !own) {
      // A run that recorded another process or throttling is judged, but its values make no
      // part of the statistics: of two GPUs, the one measured beside a load is the odd one.
      std::vector<size_t> ref;
      for (size_t m : group_ref)
        if (r.members[m].state_warnings.empty()) ref.push_back(m);
      if (ref.empty()) ref = group_ref;
      const Cohort c(r.members, ref, members);
      const KeyPolicy policy = policy_of(options, r.members[members.front()].model);
      g.keys_compared = judge_keys(c, options, policy, r.gpus, own ? &g : nullptr);
      judge_probes(c, options, r.gpus);
    }
    r.groups.push_back(std::move(g));
  }
  if (options.reference) compare_with_reference(r, options);
  flag_health(r);
  flag_state(r);
  return r;
}

}  // namespace memtopo::host
