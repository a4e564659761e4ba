// The options memtopo diff and memtopo fleet share: --tolerance-percent and --profile, read
// into one KeyPolicy (key_policy.hpp), so both commands judge a key alike.
#include <cmath>
#include <map>

#include <CLI/CLI.hpp>

#include "cli/cli_internal.hpp"

namespace memtopo::host::cli {

std::function<std::string(const std::string&)> number_between(double low, double high, const std::string& what) {
  return [=](const std::string& value) -> std::string {
    double v = std::nan("");
    try {
      size_t used = 0;
      v = std::stod(value, &used);
      if (used != value.size()) v = std::nan("");
    } catch (const std::exception&) {
    }
    // Decimal only: std::stod also reads hexadecimal (0x10 is 16) and inf.
    if (value.find_first_not_of("0123456789.eE+-") != std::string::npos) v = std::nan("");
    if (v >= low && v <= high) return "";  // NaN fails both comparisons
    return "'" + value + "' is not " + what;
  };
}

namespace {

// A percentage from 0 to 100 (CLI11's own range check prints the largest double in full).
const auto tolerance_error = number_between(0, 100, "a percentage from 0 to 100; give e.g. 3");

}  // namespace

void add_compare_options(CLI::App* sub, CompareArgs& args) {
  sub->add_option("--tolerance-percent", args.tolerance_percent,
                  "Relative difference up to which floating-point values count as equal (default 3, or the profile's)")
      ->check(tolerance_error);
  sub->add_option("--profile", args.profile,
                  "Tolerance profile (TOML): per-key tolerances, ignores, classes (docs/fleet.md)");
}

KeyPolicy key_policy_of(const CompareArgs& args) {
  KeyPolicy policy;
  if (!args.profile.empty()) {
    try {
      policy = KeyPolicy::from_profile(args.profile);
    } catch (const ProfileError& e) {
      throw UsageError(std::string("--profile: ") + e.what());
    }
  }
  if (args.tolerance_percent) policy.set_default_tolerance(*args.tolerance_percent);
  // What the installed probes declare of their keys applies to files of any build.
  std::map<std::string, KeyDeclared> declared;
  const Registry installed = load_registry({}, false);
  for (const ProbeInfo& p : installed.probes())
    for (const KeySpec& k : p.keys)
      if (k.flags) declared[k.key] = declared_by_flags(k.flags);
  return policy.with_declarations(std::move(declared));
}

}  // namespace memtopo::host::cli
