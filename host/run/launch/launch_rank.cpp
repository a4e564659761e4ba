// This process as a rank of srun or mpirun, from the launcher's variables (device_list.hpp).
// Each variable is read here only, strictly: a value that is no whole number in range stops the
// run with the variable and its value named (exit 2), never silently rank 0 (two ranks would
// then measure one GPU) and never an uncaught exception.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "topology/base/usage_error.hpp"
#include "run/launch/device_list.hpp"

namespace memtopo::host::cli {

namespace {

// Far above any node's tasks or any launch's ranks; keeps every sum below overflow.
constexpr int64_t kMaxCount = 1 << 24;

const char* launcher_variable(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

[[noreturn]] void refuse_variable(const std::string& variable, const std::string& value, const std::string& want) {
  throw UsageError(variable + "=" + value + ": not " + want + "; the launcher (srun, mpirun) sets it: unset it, or " +
                   "start memtopo through the launcher");
}

// A whole number from 0 to kMaxCount in `text` (all of it), or nothing.
std::optional<int64_t> rank_number(const std::string& text) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  const int64_t v = std::stoll(text);
  return v <= kMaxCount ? std::optional<int64_t>(v) : std::nullopt;
}

// Variable `name` as a whole number, `fallback` where it is unset.
int variable_number(const char* name, int fallback, int64_t least = 0) {
  const char* text = launcher_variable(name);
  if (!text) return fallback;
  const auto v = rank_number(text);
  if (!v || *v < least)
    refuse_variable(name, text, "a whole number from " + std::to_string(least) + " to " + std::to_string(kMaxCount));
  return static_cast<int>(*v);
}

// Slurm's SLURM_STEP_TASKS_PER_NODE ("4(x2),1"): the tasks of node `node`; 1 when unset.
int slurm_tasks_on_node(int node) {
  const char* name = "SLURM_STEP_TASKS_PER_NODE";
  const char* spec = launcher_variable(name);
  if (!spec) return 1;
  const std::string text = spec;
  const std::string want = "a list of task counts such as 4(x2),1 with counts from 1 to " + std::to_string(kMaxCount);
  int64_t seen = 0;
  for (size_t start = 0; start <= text.size();) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string part = text.substr(start, comma - start);
    const size_t paren = part.find("(x");
    const auto tasks = rank_number(part.substr(0, paren));
    std::optional<int64_t> repeat = 1;
    if (paren != std::string::npos)
      repeat = part.back() == ')' ? rank_number(part.substr(paren + 2, part.size() - paren - 3)) : std::nullopt;
    if (!tasks || *tasks < 1 || !repeat || *repeat < 1) refuse_variable(name, text, want);
    if (node < seen + *repeat) return static_cast<int>(*tasks);
    seen += *repeat;
    start = comma + 1;
  }
  throw UsageError(std::string(name) + "=" + text + " lists " + std::to_string(seen) + " node(s), but SLURM_NODEID=" +
                   std::to_string(node) + "; the launcher sets both: start memtopo through srun");
}

}  // namespace

int mpi_world_size() { return variable_number("OMPI_COMM_WORLD_SIZE", 1, 1); }

std::optional<LaunchRank> launch_rank() {
  LaunchRank r;
  const char* local_name = nullptr;
  if (launcher_variable("OMPI_COMM_WORLD_LOCAL_RANK")) {
    r.launcher = "openmpi";
    local_name = "OMPI_COMM_WORLD_LOCAL_RANK";
    r.local_rank = variable_number(local_name, 0);
    r.local_size = variable_number("OMPI_COMM_WORLD_LOCAL_SIZE", 1, 1);
    r.rank = variable_number("OMPI_COMM_WORLD_RANK", 0);
    r.size = variable_number("OMPI_COMM_WORLD_SIZE", 1, 1);
  } else if (launcher_variable("SLURM_STEP_ID") && launcher_variable("SLURM_LOCALID")) {
    r.launcher = "slurm";
    local_name = "SLURM_LOCALID";
    r.local_rank = variable_number(local_name, 0);
    r.local_size = slurm_tasks_on_node(variable_number("SLURM_NODEID", 0));
    r.rank = variable_number("SLURM_PROCID", 0);
    r.size = variable_number("SLURM_STEP_NUM_TASKS", variable_number("SLURM_NTASKS", 1, 1), 1);
  } else {
    return std::nullopt;
  }
  if (r.local_size <= 1) return std::nullopt;
  if (r.local_rank >= r.local_size)
    throw UsageError(std::string(local_name) + "=" + std::to_string(r.local_rank) + ": beyond the " +
                     std::to_string(r.local_size) + " tasks the launcher starts on this node; start memtopo "
                     "through the launcher");
  return r;
}

}  // namespace memtopo::host::cli
