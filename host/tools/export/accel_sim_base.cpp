// `memtopo export --accel-sim --base FILE`: a complete gpgpusim.config, the base config (such as
// Accel-Sim's configs/tested-cfgs/SM90_H100/gpgpusim.config) with every option the topology
// determines in place of the base's value; memtopo's defaults only where the base sets none
// (docs/accel-sim.md, "On top of a base config").
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "topology/base/terminal_text.hpp"
#include "tools/export/topology_export.hpp"

namespace memtopo::host {
namespace {

// The option a config line sets ("-gpgpu_n_mem 40  # ..." -> "-gpgpu_n_mem"), or "".
std::string option_of(const std::string& line) {
  const size_t start = line.find_first_not_of(" \t");
  if (start == std::string::npos || line[start] != '-') return "";
  const size_t end = line.find_first_of(" \t", start);
  return line.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// A value memtopo does not measure ("# default: ..."): a tuned base knows better, so the
// base's stays. The sub-partitions per channel are one: memtopo's dl2 is one of n_mem x that
// many slices, and the L2's size holds only with memtopo's count.
bool base_value_stays(const std::string& option, const std::string& line) {
  return option != "-gpgpu_n_sub_partition_per_mchannel" && line.find("  # default:") != std::string::npos;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

std::string accel_sim_on_base(const std::string& base, const std::string& base_name, const std::string& ours) {
  std::map<std::string, std::string> measured;  // option -> our line
  std::vector<std::string> order, not_written;
  for (const std::string& line : lines_of(ours)) {
    const std::string option = option_of(line);
    if (!option.empty() && !measured.count(option)) {
      measured[option] = line;
      order.push_back(option);
    } else if (line.rfind("# not written:", 0) == 0) {
      not_written.push_back(line);
    }
  }
  std::string out = "# " + terminal_text(base_name) +
                    " with the values of a memtopo topology (memtopo export --accel-sim --base)\n" +
                    "# a line marked 'memtopo:' replaces the base's value; the base's own line follows it as a comment\n";
  std::set<std::string> placed;  // options the output sets by now
  for (const std::string& line : lines_of(base)) {
    const std::string option = option_of(line);
    const auto it = measured.find(option);
    if (it == measured.end() || base_value_stays(option, it->second)) {
      out += line + "\n";
      placed.insert(option);
      continue;
    }
    out += it->second + "  (memtopo:)\n# base: " + line + "\n";
    placed.insert(option);
  }
  std::string rest;
  for (const std::string& option : order)
    if (!placed.count(option)) rest += measured[option] + "\n";
  if (!rest.empty()) out += "\n# memtopo: options " + terminal_text(base_name) + " does not set\n" + rest;
  if (!not_written.empty()) {
    out += "\n# memtopo: options the topology does not determine (the base's values stay)\n";
    for (const std::string& line : not_written) out += line + "\n";
  }
  return out;
}

}  // namespace memtopo::host
