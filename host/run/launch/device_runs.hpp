// `memtopo run` of several GPUs or of one rank of a parallel launch (device_runs.cpp). Not
// installed.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "topology/document/summary.hpp"

#include "run/planning/run_choice.hpp"
#include "run/planning/run_request.hpp"

namespace memtopo::host::cli {

// Set in the environment of each run a fleet run starts: it measures its one device.
constexpr const char* kFleetMemberVariable = "MEMTOPO_FLEET_MEMBER";

// -o names a folder: "DIR/" or an existing folder.
bool is_folder_output(const std::string& output);
// Whether `run` measures as a fleet: -o a folder, several devices (--device all, a list), a
// rank of srun or mpirun with several tasks on its node, or an MPI launch of several ranks.
bool wants_device_runs(const RunRequest& a, const DeviceChoice& device);
// What a run of several devices reads of the topologies its runs wrote: tools over the run
// (the command line hands them in; the run itself compares nothing).
struct DeviceRunReaders {
  // A device's column of the combined summary, from its topology file.
  std::function<SummaryColumn(const std::string& file, const std::string& label)> column_of;
  // Rank 0 of an MPI run: every rank's files compared, written into `dir`; the exit status.
  std::function<int(const std::filesystem::path& dir, const std::vector<std::string>& files)> write_summary;
};

// Runs one child `memtopo run` per device into the folder; the combined summary on stdout.
int run_devices(const RunRequest& a, const RunChoice& run, const DeviceRunReaders& readers);

}  // namespace memtopo::host::cli
