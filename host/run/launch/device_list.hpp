// Which GPUs a `memtopo run` of several devices measures, and which one a rank of srun or
// mpirun measures (docs/fleet.md). Not installed.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "run/planning/run_choice.hpp"

namespace memtopo::host::cli {

// One device of a run of several.
struct FleetDevice {
  std::string spec;     // what its run opens: "cuda:0" (under `visible`) or "sim:a.toml"
  std::string label;    // the node's name for it: "cuda:3"; a description's stem: "sim-a", "sim-a-2"
  std::string visible;  // CUDA_VISIBLE_DEVICES for its run ("" leaves it as it is)
  std::string stem;     // its output file's name without .toml: "node01-cuda3", "node01-sim-a"
};

// The one sanitiser of a name from outside (a host name, a device description's stem) that
// becomes part of a file name: letters, digits, '-', '_' and '.' are kept, every other byte
// ('/', control characters, newline, ESC, spaces, non-ASCII) becomes '_'; a leading '.' or
// '-' becomes '_' (no hidden file, no option); empty becomes "_"; at most 64 bytes.
std::string file_name_part(const std::string& raw);

// This machine's name for file names: the whole host name (node01.clusterA and node01.clusterB
// differ), through file_name_part. MEMTOPO_TEST_HOSTNAME replaces gethostname() where set (for
// tests; docs/fleet.md).
std::string host_file_name();

// "all" (every CUDA GPU this process may use), "cuda:0,cuda:3", "sim:a.toml,sim:b.toml" or one
// device, as FleetDevices named after `host` (already a file_name_part), each stem distinct:
// where two would be equal, each of them gets "-1", "-2", ... in list order, skipping any
// number that would give another device's name. Throws UsageError for an empty entry, a form
// --device does not take, a GPU number beyond those there are, or "all" without a CUDA GPU.
std::vector<FleetDevice> expand_devices(const DeviceChoice& device, const std::string& host);

// This process as a rank of a parallel launch (srun, mpirun): its rank among the tasks of its
// node, and how many there are. Absent outside a launch, and where the node runs one task
// only (then that task measures every GPU it was given, like a run on one node). Throws
// UsageError naming a launcher variable whose value is no rank (launch_rank.cpp).
struct LaunchRank {
  int local_rank = 0;
  int local_size = 1;
  int rank = 0;         // in the whole launch
  int size = 1;
  std::string launcher;  // "slurm", "openmpi"
};
std::optional<LaunchRank> launch_rank();
// OMPI_COMM_WORLD_SIZE read as strictly (1 when unset): mpirun of one task per node.
int mpi_world_size();

// The device a rank measures: the one CUDA_VISIBLE_DEVICES leaves it when that is one GPU,
// else the local rank's entry of `devices` (a list, or every GPU for "all"). Throws UsageError
// when the node has more tasks than devices.
FleetDevice device_of_rank(const std::vector<FleetDevice>& devices, const LaunchRank& rank);

}  // namespace memtopo::host::cli
