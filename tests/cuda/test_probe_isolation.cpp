// Probe isolation on a GPU: a probe whose kernel leaves a sticky CUDA error fails alone, and the
// probe after it gets a working context. Runs the memtopo executable; [gpu] tests exit with 77
// (skipped) without a GPU.
#include <catch2/catch.hpp>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include "memtopo/engine.hpp"

using Catch::Matchers::Contains;

namespace {

constexpr int kSkipped = 77;

void require_gpu() {
  if (memtopo::engine::cuda_device_count() > 0) return;
  std::printf("no CUDA device: skipped\n");
  std::fflush(stdout);
  std::exit(kSkipped);
}

struct Ran {
  int exit_code = -1;
  std::string output;
};

// The build's paths, or where a bundle for another machine put them (scripts/bundle-for-device.sh).
std::string from_env(const char* name, const char* built) {
  const char* v = std::getenv(name);
  return v && *v ? v : built;
}

Ran run_memtopo(const std::string& args) {
  const std::string cmd = "env -u MEMTOPO_PLUGIN_PATH '" + from_env("MEMTOPO_TEST_EXE", MEMTOPO_EXE) + "' " + args + " 2>&1";
  Ran r;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  REQUIRE(pipe);
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) r.output.append(buf.data(), n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("cuda isolation: a sticky CUDA error fails its probe alone; the next probe runs", "[cuda][gpu]") {
  require_gpu();
  const auto dir = std::filesystem::temp_directory_path() / ("memtopo-isolation-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto out = dir / "t.toml";
  const std::string plugins = from_env("MEMTOPO_TEST_PLUGIN_ROOT", MEMTOPO_TEST_PLUGIN_ROOT) + "/cuda-faults";
  const auto r = run_memtopo("run --device cuda -q --plugin-path '" + plugins + "' -o '" + out.string() + "'");
  INFO(r.output);
  CHECK(r.exit_code == 1);  // one probe failed
  const std::string topo = read_text(out);
  CHECK_THAT(topo, Contains("after_ok = 1"));
  CHECK_THAT(r.output, Contains("illegal"));
  std::filesystem::remove_all(dir);
}
