// Chooses and opens the measurement backend named on the command line.
#include <charconv>
#include <memory>
#include <string>

#include "memtopo/engine.hpp"
#include "memtopo/errors.hpp"

namespace memtopo::engine {

#ifndef MEMTOPO_HAVE_CUDA
bool cuda_built() { return false; }
int cuda_device_count() { return 0; }
std::unique_ptr<Device> open_cuda(int) {
  throw Error("this memtopo was built without the CUDA backend; rebuild with a CUDA toolkit "
              "(-DMEMTOPO_WITH_CUDA=ON) or use --device sim");
}
#endif

std::unique_ptr<Device> open_device(const std::string& spec, std::string* fallback_reason, const ReplayMap& replay) {
  if (spec.empty() || spec == "auto") {
    if (cuda_device_count() > 0) return open_cuda(0);
    if (fallback_reason)
      *fallback_reason = cuda_built() ? "no CUDA device is available" : "built without the CUDA backend";
    return open_sim("");
  }
  if (spec == "sim") return open_sim("");
  if (spec.rfind("sim:", 0) == 0) {
    std::string path = spec.substr(4);
    if (path.empty()) throw Error("--device sim: needs a file name after the colon (sim:FILE)");
    return open_sim(path, replay);
  }
  if (spec == "cuda" && cuda_built() && cuda_device_count() == 0)  // as cuda:0 says it, not the driver's words
    throw Error("--device cuda: this host has 0 CUDA GPUs; use --device sim for the simulated GPU");
  if (spec == "cuda") return open_cuda(0);
  if (spec.rfind("cuda:", 0) == 0) {
    const std::string n = spec.substr(5);
    if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos)
      throw Error("--device " + spec + ": expected cuda:N with N a device number");
    int ordinal = 0;
    const auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), ordinal);
    const int count = cuda_device_count();
    if (ec != std::errc() || end != n.data() + n.size() || (cuda_built() && ordinal >= count))
      throw Error("--device " + spec + ": there is no GPU " + n + "; this host has " + std::to_string(count) +
                  (count == 1 ? " CUDA GPU (cuda:0)" : count > 0 ? " CUDA GPUs (cuda:0 to cuda:" + std::to_string(count - 1) + ")" : " CUDA GPUs"));
    return open_cuda(ordinal);
  }
  throw Error("--device " + spec + ": unknown device; use auto, cuda, cuda:N, sim or sim:FILE");
}

}  // namespace memtopo::engine
