#include "run/launch/mpi_session.hpp"

#include <cstdlib>

#ifdef MEMTOPO_HAVE_MPI
// The C interface only: Open MPI and MPICH would add their deprecated C++ bindings.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace memtopo::host::cli {

#ifdef MEMTOPO_HAVE_MPI

namespace {

class OpenSession : public MpiSession {
 public:
  OpenSession() {
    MPI_Init(nullptr, nullptr);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~OpenSession() override { MPI_Finalize(); }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }
  std::vector<std::string> gather(const std::string& mine) override {
    int length = static_cast<int>(mine.size());
    std::vector<int> lengths(rank_ == 0 ? size_ : 0);
    MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::vector<int> offsets(lengths.size());
    int total = 0;
    for (size_t i = 0; i < lengths.size(); ++i) offsets[i] = total, total += lengths[i];
    std::string all(static_cast<size_t>(total), '\0');
    MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0,
                MPI_COMM_WORLD);
    std::vector<std::string> out;
    for (size_t i = 0; i < lengths.size(); ++i) out.push_back(all.substr(offsets[i], lengths[i]));
    return out;
  }

 private:
  int rank_ = 0, size_ = 1;
};

}  // namespace

bool mpi_built() { return true; }

std::unique_ptr<MpiSession> MpiSession::start() {
  // Only under a launcher: MPI_Init alone would start a singleton, or wait for one.
  if (!std::getenv("OMPI_COMM_WORLD_SIZE") && !std::getenv("PMIX_RANK")) return nullptr;
  return std::make_unique<OpenSession>();
}

#else

bool mpi_built() { return false; }
std::unique_ptr<MpiSession> MpiSession::start() { return nullptr; }

#endif

}  // namespace memtopo::host::cli
