// Probe isolation on a GPU: a probe whose kernel leaves a sticky CUDA error fails alone, and the
// probe after it gets a working context. Runs the memtopo executable; [gpu] tests exit with 77
// (skipped) without a GPU.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>

#include "../host/helpers.hpp"
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

}  // namespace

TEST_CASE("cuda isolation: a sticky CUDA error fails its probe alone, the next probe runs", "[cuda][gpu]") {
  require_gpu();
  const auto dir = std::filesystem::temp_directory_path() / ("memtopo-isolation-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto out = dir / "t.toml";
  const std::string plugins = test::plugin_set("cuda-faults").string();
  const auto r = test::run_memtopo("run --device cuda -q --plugin-path '" + plugins + "' -o '" + out.string() + "'");
  INFO(r.output);
  CHECK(r.exit_code == 1);  // one probe failed
  const std::string topo = test::read_file(out);
  CHECK_THAT(topo, Contains("after_ok = 1"));
  CHECK_THAT(r.output, Contains("illegal"));
  std::filesystem::remove_all(dir);
}
