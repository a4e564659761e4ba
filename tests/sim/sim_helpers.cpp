#include "sim_helpers.hpp"

#include "topology/plugins/registry.hpp"

#include <atomic>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include <unistd.h>

namespace simtest {

std::string device_path(const std::string& name) { return std::string(MEMTOPO_SOURCE_DIR) + "/examples/devices/" + name; }

memtopo::engine::ReplayMap plugins_replay_map() {
  memtopo::host::Registry r;
  r.load_directory(MEMTOPO_REAL_PLUGIN_DIR);
  return r.replay_map();
}

std::string measured_path(const std::string& name) {
  return std::string(MEMTOPO_SOURCE_DIR) + "/tests/sim/measured/" + name;
}

std::unique_ptr<memtopo::engine::Device> open_device(const std::string& name) {
  return memtopo::engine::open_sim(device_path(name));
}

std::string write_temp(const std::string& stem, const std::string& text) {
  // ctest runs every test case as its own process, several at once: the pid keeps their
  // files apart.
  static std::atomic<int> counter{0};
  const std::string path = std::string(MEMTOPO_BINARY_DIR) + "/tests/sim/tmp_" + stem + "_" +
                           std::to_string(::getpid()) + "_" + std::to_string(counter++) + ".toml";
  std::ofstream(path) << text;
  return path;
}

toml::table read_device_file(const std::string& name) { return toml::parse_file(device_path(name)); }

std::string toml_text_of(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

int64_t key(const toml::table& t, const char* element, const char* k) {
  auto v = t[element][k].value<int64_t>();
  if (!v) throw std::runtime_error(std::string("no integer ") + element + "." + k);
  return *v;
}

namespace {
// One recorded job (MT_RECORD_SAMPLES), then the same as a whole-chase timing (MT_RECORD_TOTAL).
Chase run(const memtopo::engine::Device& d, mt_job& job, uint64_t steps) {
  Chase c;
  c.index.resize(steps);
  c.latency.resize(steps);
  job.out_index = c.index.data();
  job.out_latency = c.latency.data();
  char err[512] = "";
  const mt_backend* b = d.backend();
  mt_job* jobs[1] = {&job};
  if (b->run_jobs(b->self, jobs, 1, err, sizeof err)) throw std::runtime_error(err);
  c.sm = job.out.sm;
  mt_job avg = job;
  avg.record = MT_RECORD_TOTAL;
  avg.out_index = nullptr;
  avg.out_latency = nullptr;
  jobs[0] = &avg;
  if (b->run_jobs(b->self, jobs, 1, err, sizeof err)) throw std::runtime_error(err);
  c.average = avg.out.average_cycles;
  return c;
}

mt_job job_of(const mt_chase_array& a, mt_space space, uint32_t start, uint64_t warmup_steps, uint64_t steps,
              int32_t sm, int32_t carveout) {
  mt_job job{};
  job.struct_size = sizeof job;
  job.block = -1;
  job.space = space;
  job.array = &a;
  job.start = start;
  job.warmup_steps = warmup_steps;
  job.steps = steps;
  job.sm = sm;
  job.shared_carveout_percent = carveout;
  return job;
}
}  // namespace

Chase fine(const memtopo::engine::Device& d, mt_space space, uint64_t footprint_bytes, uint64_t stride_bytes,
           uint64_t warmup_steps, uint64_t steps, int32_t sm, int32_t carveout) {
  mt_chase_array a{};
  a.struct_size = sizeof a;
  a.kind = MT_ARRAY_STRIDE;
  a.elems = footprint_bytes / 4;
  a.stride_elems = stride_bytes / 4;
  mt_job job = job_of(a, space, 0, warmup_steps, steps, sm, carveout);
  return run(d, job, steps);
}

Chase fine_explicit(const memtopo::engine::Device& d, mt_space space, const std::vector<uint32_t>& next, uint32_t start,
                    uint64_t warmup_steps, uint64_t steps) {
  mt_chase_array a{};
  a.struct_size = sizeof a;
  a.kind = MT_ARRAY_EXPLICIT;
  a.next = next.data();
  a.elems = next.size();
  mt_job job = job_of(a, space, start, warmup_steps, steps, -1, -1);
  return run(d, job, steps);
}

double timing_overhead(const memtopo::engine::Device& d) {
  double c = -1;
  char err[256];
  d.backend()->timing_overhead(d.backend()->self, &c, err, sizeof err);
  return c;
}

size_t misses(const std::vector<uint32_t>& latency, uint32_t hit_cycles) {
  size_t n = 0;
  for (uint32_t l : latency) n += l > hit_cycles;
  return n;
}

std::vector<size_t> miss_positions(const std::vector<uint32_t>& latency, uint32_t hit_cycles) {
  std::vector<size_t> out;
  for (size_t i = 0; i < latency.size(); ++i)
    if (latency[i] > hit_cycles) out.push_back(i);
  return out;
}

std::unique_ptr<memtopo::engine::Device> open_text(const std::string& stem, const std::string& text) {
  return memtopo::engine::open_sim(write_temp(stem, text));
}

}  // namespace simtest
