// The fleet table of a run of several ranks, written beside their topologies.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "topology/base/usage_error.hpp"
#include "tools/fleet/fleet.hpp"
#include "topology/base/terminal_text.hpp"
#include "topology/base/output_file.hpp"

namespace memtopo::host::cli {

// Rank 0 of an MPI run: every rank's files compared, the table printed and written beside them.
int write_fleet_summary(const std::filesystem::path& dir, const std::vector<std::string>& files) {
  std::vector<std::string> errors;
  std::vector<FleetMember> members = read_fleet(files, &errors);
  for (const auto& e : errors) spdlog::error("fleet summary: {}", e);
  if (members.empty()) return kExitIncomplete;
  const FleetReport report = compare_fleet(std::move(members), FleetOptions{});
  const std::string text = render_fleet_text(report);
  // Names memtopo chose in a shared folder: whatever is there, a planted symlink included, is
  // replaced, never written through.
  write_output(resolve_output((dir / "fleet.txt").string(), OutputNamedBy::Memtopo), text);
  write_output(resolve_output((dir / "fleet.json").string(), OutputNamedBy::Memtopo),
               fleet_to_json(report).dump(2) + "\n");
  std::fputs(terminal_lines(text).c_str(), stdout);
  return report.flagged() ? kExitIncomplete : kExitOk;
}

}  // namespace memtopo::host::cli
