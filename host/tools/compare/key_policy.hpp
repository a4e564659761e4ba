// How comparisons of topologies (memtopo diff, memtopo fleet) treat each key: its class, as the
// probe declared it and the topology's provenance records it (identity, setting, measurement;
// varies), and a tolerance profile's per-key tolerances, ignores and classes (docs/fleet.md,
// "Tolerance profiles"). One rule set for both commands.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace memtopo::host {

enum class KeyClass {
  measurement,  // compared: discrete values exactly, floats within a tolerance
  identity,     // names one device (a UUID): never a difference
  setting,      // a choice a probe made (the best configuration found): never a difference
  configuration,  // how this GPU was built (floor sweeping): shown, never a difference
};
const char* key_class_name(KeyClass c);  // "measurement", "identity", "setting", "configuration"

struct KeyRule {
  KeyClass key_class = KeyClass::measurement;
  bool varies = false;  // known to vary between runs of one GPU: reported, not counted
  bool ignore = false;  // not compared at all
  bool estimate = false;  // an integer compared like a float (within the tolerance), not for equality
  double tolerance_percent = 3;  // for floats: |a - b| <= P % of the larger magnitude
  // Whether the tolerance of a float (or an estimate) is known to hold for GPUs of the model:
  // from a measured spread table, a tolerance profile's rule for the key or the probe's noise
  // model (MT_KEY_RATED). `memtopo fleet` flags only rated deviations; the rest it reports.
  bool rated = false;
  bool structure = false;  // counts or names what was found (MT_KEY_STRUCTURE): reported only
  bool always = false;     // written in every ok run (MT_KEY_ALWAYS): its absence is a finding
  bool health = false;     // "ok" or a fault of the GPU (MT_KEY_HEALTH): flagged even alone

  // Whether a difference in this key makes two topologies differ (diff's exit 1, fleet's flag).
  bool counts() const { return !ignore && !varies && key_class == KeyClass::measurement; }
};

// What a topology's [provenance] entry records of a key ("class", "varies").
struct KeyDeclared {
  std::optional<KeyClass> key_class;
  bool varies = false;
  bool estimate = false;
  bool headline = false;  // shown first by the summary and compare, never a comparison rule
  bool rated = false;
  bool structure = false;
  bool always = false;
  bool health = false;
  bool operator==(const KeyDeclared&) const = default;
};
// The entry's declaration; an empty one for null or an entry without them.
KeyDeclared declared_in(const nlohmann::json* provenance_entry);
// What a key's MT_KEY_* flags declare (mt_key_desc::flags), as a provenance entry records it.
KeyDeclared declared_by_flags(uint32_t flags);

// A profile that cannot be used: "FILE:LINE: what; what to do".
struct ProfileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class KeyPolicy {
 public:
  KeyPolicy() = default;
  explicit KeyPolicy(double default_tolerance_percent) : default_tolerance_(default_tolerance_percent) {}
  // A tolerance profile (TOML):
  //   tolerance_percent = 3                     # floats without a rule of their own
  //   [keys."l2.latency_cycles"]  tolerance_percent = 1.5
  //   [keys."tlb.*"]              varies = true
  //   [keys."*_config"]           class = "setting"   # or "identity", "measurement"
  //   [keys."device.sm_clock_khz"] ignore = true
  //   [keys."*_in_flight"]        estimate = true     # integers within the tolerance
  //   [keys."l2.slice_*"]         rated = false       # never flag a deviation of these
  // A rule's tolerance_percent rates the keys it matches (the operator measured it).
  // `*` matches any run of characters; every rule a key matches applies, later ones over
  // earlier ones. Throws ProfileError.
  static KeyPolicy from_profile(const std::string& path);
  static KeyPolicy from_profile_text(const std::string& text, const std::string& name);

  // The command line's --tolerance-percent: the default for floats, over the profile's.
  void set_default_tolerance(double percent) { default_tolerance_ = percent; }
  double default_tolerance() const { return default_tolerance_; }

  // This policy with a least tolerance for each key of `spreads` (key -> percent), below every
  // rule of its own: a key's measured spread between runs and GPUs of one model (the fleet's
  // shipped table, fleet_spreads.hpp) widens the tolerance, never narrows it.
  // With `rates`, each of those keys is rated (a table from enough GPUs and runs).
  KeyPolicy with_least_tolerances(const std::vector<std::pair<std::string, double>>& spreads, bool rates = false) const;

  // This policy with what the probes of this build declare of their keys, applied as a file's
  // own declarations are: a file of an older build, which recorded fewer classes (a key
  // declared configuration since), is compared by today's declarations too.
  KeyPolicy with_declarations(std::map<std::string, KeyDeclared> declared) const;

  // The rule for `key` ("l2.latency_cycles"), given what the compared files declare of it: a
  // class or `varies` any of them, or this build's probes, declare applies, then the profile's
  // rules.
  KeyRule rule(const std::string& key, const std::vector<KeyDeclared>& declared) const;

 private:
  struct Pattern {
    std::string glob;
    std::optional<KeyClass> key_class;
    std::optional<bool> varies, ignore, estimate, rated;
    std::optional<double> tolerance_percent;
    std::optional<double> least_tolerance_percent;  // a floor, after every other rule
  };
  double default_tolerance_ = 3;
  std::vector<Pattern> patterns_;
  std::map<std::string, KeyDeclared> declared_;  // by this build's probes
};

// A probe's major version is its method (docs/writing-a-probe.md, "Versions"): where the probe
// ran as version_a ("1.0.0") in one file and version_b ("2.1.0") in another of another major,
// "method changed (global-throughput/streams 1 -> 2)", which diff, compare and fleet --reference
// show instead of a change or a finding; else "".
std::string method_change(const std::string& probe, const std::string& version_a, const std::string& version_b);

// "a.b.c" matches "a.*" and "*.c": `*` is any run of characters, everything else literal.
bool glob_match(const std::string& glob, const std::string& text);

// [provenance.<element>].<key> of a topology's JSON form, or null.
const nlohmann::json* provenance_entry(const nlohmann::json& doc, const std::string& element, const std::string& key);

}  // namespace memtopo::host
