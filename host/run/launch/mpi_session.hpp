// MPI for a fleet run under mpirun or srun (docs/fleet.md, "Many nodes"): the ranks start
// measuring together, and rank 0 learns what every rank wrote. Built where CMake finds MPI
// (MEMTOPO_HAVE_MPI); elsewhere start() never starts one. Not installed.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace memtopo::host::cli {

class MpiSession {
 public:
  // A session when this process was started by an MPI launcher (Open MPI's mpirun, or srun
  // with PMIx) and memtopo was built with MPI; null otherwise.
  static std::unique_ptr<MpiSession> start();
  virtual ~MpiSession() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual void barrier() = 0;
  // Every rank's text, on rank 0 in rank order (empty on the others).
  virtual std::vector<std::string> gather(const std::string& mine) = 0;
};

// Whether this build has MPI.
bool mpi_built();

}  // namespace memtopo::host::cli
