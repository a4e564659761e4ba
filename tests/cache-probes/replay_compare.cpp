// The tolerance of each key type when a replay's topology B is compared with the topology A
// it replayed (docs/simulator.md, "Replaying a measured topology", keeps the same table):
// - discrete keys (lines, sectors, sets, ways, partitions, policy, set mapping, presence,
//   [device], each value's bound, each probe's status): exactly;
// - sizes: within one line (the size probe steps by 32 B, and the replay takes whole lines),
//   or 1/1024 of the size where that is more (a large cache whose line count has too few
//   factors of two for equal power-of-two sets is replayed with one that has them);
// - cycles: within 3 % or half a cycle (the simulator counts whole cycles), each value of a
//   curve of cycles too;
// - victim probabilities: within four standard errors of the census (a few hundred evictions);
// - the footprints of a sweep: within its grid (1/8 of the size past the size, 1/8 octave for
//   the L2 levels);
// - what a plugin declares of its own keys in plugins/<name>/tests/replay.toml (rates a search
//   finds, Little's-law estimates, what its kernels measure: replay_rules.hpp), which this
//   file reads without naming a plugin or its elements;
// and the keys the simulator does not reproduce are named in `not_compared` with the reason.
#include "replay_compare.hpp"
#include "replay_rules.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

namespace probetest {
namespace {

std::string text(const toml::node* n) {
  if (!n) return "(absent)";
  std::ostringstream o;
  if (auto v = n->value_exact<std::string>()) o << '"' << *v << '"';
  else if (auto i = n->value_exact<int64_t>()) o << *i;
  else if (auto d = n->value_exact<double>()) o << *d;
  else if (auto b = n->value_exact<bool>()) o << (*b ? "true" : "false");
  else if (const toml::array* a = n->as_array()) {
    o << '[';
    for (size_t k = 0; k < a->size(); ++k) o << (k ? ", " : "") << text(a->get(k));
    o << ']';
  } else o << "(a table)";
  return o.str();
}

std::vector<double> numbers(const toml::node* n) {
  std::vector<double> out;
  if (const toml::array* a = n ? n->as_array() : nullptr)
    for (const toml::node& e : *a) out.push_back(e.value<double>().value_or(NAN));
  return out;
}

double number(const toml::node* n) { return n ? n->value<double>().value_or(NAN) : NAN; }

// The census counts whole evictions: the smallest count n for which every probability is a
// multiple of 1/n.
double evictions(const std::vector<double>& p) {
  for (int n = 20; n <= 20000; ++n) {
    bool whole = true;
    for (double x : p) whole = whole && std::fabs(x * n - std::round(x * n)) < 1e-6;
    if (whole) return n;
  }
  return 20;  // the fewest a census reports
}

const toml::table kNone;

class Comparer {
 public:
  Comparer(const toml::table& a, const toml::table& b, ReplayCheck& out) : a_(a), b_(b), out_(out) {
    for (const auto& [e, t] : a)
      if (t.is_table() && early_first_miss(std::string(e.str()))) early_.insert(std::string(e.str()));
  }

  void element(const std::string& e) {
    const toml::table* ta = a_[e].as_table();
    const toml::table* tb = b_[e].as_table();
    if (!ta && tb) return skip(e, "a table in B only: keys added since A was measured");
    if (!ta || !tb) {
      out_.mismatches.push_back(e + ": a table in " + (ta ? "A" : "B") + " only");
      return;
    }
    std::set<std::string> keys;
    for (const auto& [k, v] : *ta) keys.insert(std::string(k.str()));
    for (const auto& [k, v] : *tb) keys.insert(std::string(k.str()));
    for (const std::string& k : keys) key(e, k, ta->get(k), tb->get(k));
  }

  void bounds_and_statuses() {
    const toml::table* pa = a_["provenance"].as_table();
    for (const auto& [e, keys] : pa ? *pa : kNone) {
      for (const auto& [k, v] : keys.is_table() ? *keys.as_table() : kNone) {
        const toml::node* ba = a_["provenance"][e.str()][k.str()]["bound"].node();
        const toml::node* bb = b_["provenance"][e.str()][k.str()]["bound"].node();
        // A lower bound a plugin declares replayed as the limit itself, which B then finds.
        const ReplayRule* rule = replay_rules().find(std::string(e.str()) + "." + std::string(k.str()));
        if (rule && rule->at_least == "value" && text(ba) == "\"at_least\"") continue;
        if (bb && text(ba) != text(bb))
          mismatch(std::string(e.str()) + "." + std::string(k.str()) + " bound", ba, bb, "exact");
      }
    }
    const toml::table* probes = a_["probes"].as_table();
    for (const auto& [p, v] : probes ? *probes : kNone) {
      const std::string name(p.str());
      const std::string step = name.substr(name.find('/') + 1);
      bool from_first_miss = false;
      for (const std::string& e : early_) from_first_miss |= step == e + "-geometry" || step == e + "-policy";
      if (from_first_miss) {
        skip("probe " + name + " status", "its element's first miss came before the size in A");
        continue;
      }
      const toml::node* sa = a_["probes"][p.str()]["status"].node();
      const toml::node* sb = b_["probes"][p.str()]["status"].node();
      // A newer version of a probe may say otherwise what it could not determine; its values
      // are still compared.
      const toml::node* va = a_["probes"][p.str()]["version"].node();
      const toml::node* vb = b_["probes"][p.str()]["version"].node();
      if (text(sa) != text(sb) && va && vb && text(va) != text(vb)) {
        skip("probe " + name + " status", "its version changed since A (" + text(va) + " in A, " + text(vb) + " in B)");
        continue;
      }
      if (text(sa) != text(sb)) mismatch("probe " + std::string(p.str()) + " status", sa, sb, "exact");
    }
  }

 private:
  void mismatch(const std::string& what, const toml::node* x, const toml::node* y, const std::string& tolerance) {
    out_.mismatches.push_back(what + ": " + text(x) + " in A, " + text(y) + " in B (tolerance: " + tolerance + ")");
  }
  void skip(const std::string& what, const std::string& why) { out_.not_compared.push_back(what + ": " + why); }

  double a_num(const std::string& e, const char* k) const { return number(a_[e][k].node()); }
  bool a_has(const std::string& e, const char* k) const { return a_[e][k].node() != nullptr; }

  // A's element missed before its capacity (first miss more than a line below the size).
  bool early_first_miss(const std::string& e) const {
    return a_num(e, "first_miss_bytes") < a_num(e, "size_bytes") - line_of(e);
  }

  static bool ends_with(const std::string& k, const std::string& end) {
    return k.size() >= end.size() && k.compare(k.size() - end.size(), end.size(), end) == 0;
  }

  static std::string percent(double tolerance) { return std::to_string(int(std::lround(tolerance * 100))) + " %"; }

  // Every value of an array (or the one value) within `tolerance` of A's.
  void each(const std::string& what, const toml::node* x, const toml::node* y, double tolerance) {
    const std::vector<double> va = x && x->is_array() ? numbers(x) : std::vector<double>{number(x)};
    const std::vector<double> vb = y && y->is_array() ? numbers(y) : std::vector<double>{number(y)};
    bool ok = va.size() == vb.size();
    for (size_t i = 0; ok && i < va.size(); ++i) ok = std::fabs(va[i] - vb[i]) <= tolerance * std::fabs(va[i]);
    if (!ok) mismatch(what, x, y, percent(tolerance) + " each");
  }

  // A key of a plugin that declares how its keys replay (replay_rules.hpp).
  void by_rule(const ReplayRule& r, const std::string& e, const std::string& k, const toml::node* x, const toml::node* y) {
    const std::string what = e + "." + k;
    if (r.compare == "skip") return skip(what, r.why);
    if (r.at_least == "skip" && text(a_["provenance"][e][k]["bound"].node()) == "\"at_least\"") return skip(what, r.why);
    if (r.compare == "cycles") return cycles(e, k, x, y, r.slack_from);
    if (r.compare == "relative")
      return within(what, x, y, std::max(1e-9, r.tolerance * std::abs(number(x))), percent(r.tolerance));
    if (r.compare == "each") return each(what, x, y, r.tolerance);
    exact(what, x, y);
  }

  void key(const std::string& e, const std::string& k, const toml::node* x, const toml::node* y) {
    const std::string what = e + "." + k;
    if (e == "device") return exact(what, x, y);
    // A file measured before a probe added a key: B's key is new, not a disagreement.
    if (!x && y) return skip(what, "only in B: a key added since A was measured");
    if (const ReplayRule* r = replay_rules().find(what)) return by_rule(*r, e, k, x, y);
    // Parities of an index that is not linear (sets no power of two) replay as the simulator's
    // "mixed" hash, which has none; an index the parities name whole replays as its set_hash.
    if (k == "set_index_parities" && x && !y && !a_has(e, "set_hash"))
      return skip(what, "the GPU's partial XOR index; a set count that is not a power of two replays as the "
                        "simulator's non-linear hash (docs/simulator.md)");
    if (early_.count(e) && kFromFirstMiss.count(k))
      return skip(what, "measured from A's first miss, which other traffic made come before the size; the replay "
                        "has the size and no such traffic");
    if (k == "size_bytes") return within(what, x, y, std::max(line_of(e), a_num(e, "size_bytes") / 1024), "one line or 1/1024");
    if (k == "first_miss_bytes") return first_miss(e, x, y);
    if (k == "full_miss_bytes") return full_miss(e, x, y);
    if (k == "level_latencies_cycles" || k == "level_start_bytes") return levels(e, k, x, y);
    if (k == "victim_probabilities" || ends_with(k, "victim_fractions")) return victims(what, x, y);
    if (k.size() > 7 && k.compare(k.size() - 7, 7, "_cycles") == 0) return cycles(e, k, x, y);
    exact(what, x, y);
  }

  void exact(const std::string& what, const toml::node* x, const toml::node* y) {
    if (text(x) != text(y)) mismatch(what, x, y, "exact");
  }

  void within(const std::string& what, const toml::node* x, const toml::node* y, double tol, const std::string& how) {
    if (!x || !y || !(std::fabs(number(x) - number(y)) <= tol)) mismatch(what, x, y, how + ", " + std::to_string(tol));
  }

  double line_of(const std::string& e) const {
    const double line = a_num(e, "line_bytes");
    return std::isnan(line) ? 32 : line;
  }

  // A cache that misses by its own data alone first misses at its size. One that missed
  // earlier (the H100's L2: other clients' lines) is replayed without that traffic, so B's
  // first miss lies between A's and the size.
  void first_miss(const std::string& e, const toml::node* x, const toml::node* y) {
    const double size = a_num(e, "size_bytes"), line = line_of(e), fa = number(x), fb = number(y);
    // At or past the size (a random policy's first miss may come a few lines late), B is A's.
    if (!(size - fa > line)) return within(e + ".first_miss_bytes", x, y, line, "one line");
    if (!(fb >= fa - line && fb <= size + line))
      mismatch(e + ".first_miss_bytes", x, y, "between A's first miss and A's size, within a line");
    skip(e + ".first_miss_bytes", "A's first miss lies below its size (other traffic, which the simulator does not "
                                  "replay); B's is only checked to lie between the two");
  }

  // How misses grow past the size depends on which hash spreads the lines over the sets; a
  // replay knows the hash only under modulo mapping (a hashed or hidden set index gets a
  // derived hash of the same sets and ways).
  void full_miss(const std::string& e, const toml::node* x, const toml::node* y) {
    if (a_[e]["set_mapping"].value<std::string>() != "modulo")
      return skip(e + ".full_miss_bytes", "the set index is hashed or not determined; the replay's derived hash "
                                          "shapes the misses past the size differently");
    if (!x && !y) return;
    within(e + ".full_miss_bytes", x, y, a_num(e, "size_bytes") / 8, "1/8 of the size (the sweep's grid)");
  }

  // An L2 that copies lines into the partition near the SM (the H100) shows two on-chip levels
  // below the API's size in A; without l2.far_copy_bytes the simulated L2 spreads an SM's
  // lines over every partition, and the replay shows one.
  void levels(const std::string& e, const std::string& k, const toml::node* x, const toml::node* y) {
    const std::vector<double> starts = numbers(a_[e]["level_start_bytes"].node());
    const double api = a_num(e, "api_size_bytes");
    const auto on_chip = std::count_if(starts.begin(), starts.end(), [&](double s) { return s < api; });
    if (on_chip >= 2 && !a_[e]["far_copy_bytes"].node())
      return skip(e + "." + k, "A shows " + std::to_string(on_chip) + " on-chip levels (lines copied near the SM) "
                               "and no l2.far_copy_bytes: the simulated L2 spreads lines over the partitions");
    const std::vector<double> va = numbers(x), vb = numbers(y);
    bool ok = va.size() == vb.size() && !va.empty();
    for (size_t i = 0; ok && i < va.size(); ++i)
      ok = k == "level_start_bytes" ? std::max(va[i], vb[i]) <= 1.0906 * std::min(va[i], vb[i])
                                    : std::fabs(va[i] - vb[i]) <= std::max(0.03 * std::fabs(va[i]), 0.5);
    if (!ok) mismatch(e + "." + k, x, y, k == "level_start_bytes" ? "one step of 1/8 octave" : "3 % each");
  }

  void victims(const std::string& what, const toml::node* x, const toml::node* y) {
    const std::vector<double> pa = numbers(x), pb = numbers(y);
    bool ok = pa.size() == pb.size() && !pa.empty();
    const double na = ok ? evictions(pa) : 1, nb = ok ? evictions(pb) : 1;
    for (size_t i = 0; ok && i < pa.size(); ++i)
      ok = std::fabs(pa[i] - pb[i]) <= 4 * std::sqrt(pa[i] * (1 - pa[i]) / na + pb[i] * (1 - pb[i]) / nb) + 1e-9;
    if (!ok) mismatch(what, x, y, "four standard errors of the censuses");
  }

  // slack_from: a level two probes measured, whose value the simulator serves as the sum of
  // these keys (replay_rules.hpp): A's own disagreement with that sum is allowed on top.
  void cycles(const std::string& e, const std::string& k, const toml::node* x, const toml::node* y,
              const std::vector<std::string>& slack_from = {}) {
    if (x && x->is_array()) {  // a curve of cycles (the shared memory's latency per conflict degree)
      const std::vector<double> va = numbers(x), vb = numbers(y);
      bool ok = va.size() == vb.size();
      for (size_t i = 0; ok && i < va.size(); ++i) ok = std::fabs(va[i] - vb[i]) <= std::max(0.03 * std::fabs(va[i]), 0.5);
      if (!ok) mismatch(e + "." + k, x, y, "3 % or half a cycle each");
      return;
    }
    double tol = std::max(0.03 * std::fabs(number(x)), 0.5);
    std::string how = "3 % or half a cycle";
    double sum = 0;
    std::string terms;
    for (const std::string& key : slack_from) {
      const auto dot = key.find('.');
      sum += a_num(key.substr(0, dot), key.substr(dot + 1).c_str());
      terms += (terms.empty() ? "" : " + ") + key;
    }
    if (!slack_from.empty() && !std::isnan(sum)) {
      tol += std::fabs(number(x) - sum);
      how += ", plus A's own disagreement with " + terms;
    }
    within(e + "." + k, x, y, tol, how);
  }

  // Keys the geometry, policy and size probes measure from the first miss.
  inline static const std::set<std::string> kFromFirstMiss = {"sets", "ways", "set_mapping", "replacement_policy",
                                                              "victim_probabilities", "full_miss_bytes"};
  const toml::table& a_;
  const toml::table& b_;
  ReplayCheck& out_;
  std::set<std::string> early_;  // elements whose first miss came before the size in A
};

}  // namespace

ReplayCheck compare_replay(const toml::table& a, const toml::table& b) {
  ReplayCheck out;
  Comparer c(a, b, out);
  std::set<std::string> tables;
  for (const toml::table* t : {&a, &b})
    for (const auto& [k, v] : *t)
      if (v.is_table()) tables.insert(std::string(k.str()));
  for (const char* skip : {"meta", "provenance", "probes", "sim"}) tables.erase(skip);
  for (const std::string& e : tables) c.element(e);
  c.bounds_and_statuses();
  return out;
}

std::string probes_of(const toml::table& a) {
  std::string out;
  if (const toml::table* probes = a["probes"].as_table())
    for (const auto& [p, v] : *probes) out += (out.empty() ? "" : ",") + std::string(p.str());
  return out;
}

void drop_probes(toml::table& a, const std::vector<std::string>& probes) {
  auto dropped = [&](std::string_view name) {
    for (const std::string& p : probes)
      if (name == p || (p.back() == '/' && name.substr(0, p.size()) == p)) return true;
    return false;
  };
  std::vector<std::pair<std::string, std::string>> keys;
  if (toml::table* prov = a["provenance"].as_table())
    for (auto& [e, t] : *prov)
      if (toml::table* kt = t.as_table())
        for (auto& [k, v] : *kt)
          if (dropped(v.as_table() ? (*v.as_table())["probe"].value_or(std::string_view()) : std::string_view()))
            keys.emplace_back(std::string(e.str()), std::string(k.str()));
  for (const auto& [e, k] : keys) {
    if (toml::table* t = a[e].as_table()) {
      t->erase(k);
      if (t->empty()) a.erase(e);
    }
    if (toml::table* t = a["provenance"][e].as_table()) {
      t->erase(k);
      if (t->empty()) a["provenance"].as_table()->erase(e);
    }
  }
  if (toml::table* pr = a["probes"].as_table()) {
    std::vector<std::string> gone;
    for (auto& [p, v] : *pr)
      if (dropped(p.str())) gone.emplace_back(p.str());
    for (const std::string& p : gone) pr->erase(p);
  }
}

}  // namespace probetest
