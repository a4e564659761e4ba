// The values of ABI 3 beside its layout (test_abi_layout.cpp): every enum value and constant a
// plugin compiles into its binary, and the signature of every function crossing the boundary.
// A plugin built against an earlier 3.x keeps the numbers and signatures it was compiled with,
// so changing one breaks it silently: add a new value (a minor) or bump MEMTOPO_ABI_MAJOR
// (docs/abi.md, "Changing the ABI").
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>

#include "memtopo/abi.h"
#include "memtopo/measure.h"
#include "memtopo/probe.hpp"

static_assert(MEMTOPO_ABI_MAJOR == 3, "a new major ABI: regenerate the tables below");
static_assert(std::string_view(MEMTOPO_ENTRY_POINT_NAME) == "memtopo_plugin_entry");
static_assert(std::string_view(MT_REPLAY_NONE).empty());

// ---------------------------------------------------------------- enums (abi.h)
static_assert(sizeof(mt_value_type) == 4 && sizeof(mt_bound) == 4 && sizeof(mt_status) == 4 &&
              sizeof(mt_log_level) == 4 && sizeof(mt_plot_kind) == 4 && sizeof(mt_invariant_kind) == 4);
static_assert(MT_VALUE_NONE == 0 && MT_VALUE_INT == 1 && MT_VALUE_FLOAT == 2 && MT_VALUE_STRING == 3 &&
              MT_VALUE_BOOL == 4 && MT_VALUE_INT_ARRAY == 5 && MT_VALUE_FLOAT_ARRAY == 6 &&
              MT_VALUE_STRING_ARRAY == 7);
static_assert(MT_BOUND_EXACT == 0 && MT_BOUND_AT_LEAST == 1 && MT_BOUND_AT_MOST == 2);
static_assert(MT_STATUS_OK == 0 && MT_STATUS_FAILED == 1 && MT_STATUS_SKIPPED == 2 &&
              MT_STATUS_NOT_DETERMINABLE == 3);
static_assert(MT_LOG_TRACE == 0 && MT_LOG_DEBUG == 1 && MT_LOG_INFO == 2 && MT_LOG_WARN == 3 && MT_LOG_ERROR == 4);
static_assert(MT_PLOT_LINES == 0 && MT_PLOT_HEATMAP == 1 && MT_PLOT_BARS == 2 && MT_PLOT_PANELS == 3);
static_assert(MT_INVARIANT_EQUALS_COUNT == 1 && MT_INVARIANT_SUM_EQUALS == 2 && MT_INVARIANT_LESS == 3);

// ---------------------------------------------------------------- constants (abi.h)
static_assert(MT_BACKEND_CUDA == 1u && MT_BACKEND_SIM == 2u);
static_assert(MT_PROBE_OWN_PROCESS == 1u);
// Key flags are in test_abi_layout.cpp with the minor that added each.

// ---------------------------------------------------------------- enums (measure.h)
static_assert(sizeof(mt_space) == 4 && sizeof(mt_array_kind) == 4 && sizeof(mt_pattern) == 4 &&
              sizeof(mt_record) == 4);
static_assert(MT_SPACE_GLOBAL_CA == 0 && MT_SPACE_GLOBAL_CG == 1 && MT_SPACE_READONLY == 2 &&
              MT_SPACE_TEXTURE == 3 && MT_SPACE_CONSTANT == 4 && MT_SPACE_SHARED == 5);
static_assert(MT_ARRAY_EXPLICIT == 0 && MT_ARRAY_STRIDE == 1);
static_assert(MT_PATTERN_CHASE == 0 && MT_PATTERN_RANDOM == 1 && MT_PATTERN_POINTERS == 2);
static_assert(MT_RECORD_SAMPLES == 0 && MT_RECORD_TOTAL == 1 && MT_RECORD_COUNTS == 2);

// ---------------------------------------------------------------- constants (measure.h)
static_assert(MT_CAP_SAMPLES == 1ull && MT_CAP_TOTAL == 2ull && MT_CAP_COUNTS == 4ull && MT_CAP_RANDOM == 8ull &&
              MT_CAP_POINTERS == 16ull && MT_CAP_STREAMS == 32ull && MT_CAP_PUMP == 64ull &&
              MT_CAP_SEQUENCE == 128ull && MT_CAP_KERNELS == 256ull && MT_CAP_WIDE_STRIDE == 512ull);
static_assert(MT_LAUNCH_NON_PORTABLE_CLUSTER == 1u && MT_LAUNCH_REFUSED == 2);
static_assert(MT_OP_PATH_REGISTER == 6u && MT_OP_PATH_CLUSTER == 7u && MT_OP_PATH_PARAM == 8u &&
              MT_OP_TIMED == 0x100u);
static_assert(MT_ATOMIC_ADD == 0u && MT_ATOMIC_CAS == 1u && MT_ATOMIC_EXCH == 2u && MT_ATOMIC_MAX == 3u);
static_assert(MT_BARRIER_BLOCK == 0u && MT_BARRIER_CLUSTER == 1u);
static_assert(MT_PROGRAM_SWEEP == 1u && MT_PROGRAM_RANDOM == 2u && MT_PROGRAM_FOLLOW == 3u);
static_assert(MT_SWEEP_READ == 1u && MT_SWEEP_WRITE == 2u && MT_SWEEP_COPY == 3u && MT_SWEEP_UPDATE == 4u);
static_assert(MT_COPY_TO_DEVICE == 1u && MT_COPY_TO_HOST == 2u && MT_COPY_ON_DEVICE == 3u);
// Count bits and MT_COUNT_REFUSED are in test_abi_layout.cpp.

// ---------------------------------------------------------------- signatures
// Every function pointer of the boundary, spelled out: a parameter added, removed or retyped
// changes what the other side calls with, which no struct size shows.
template <class Member, class Expected>
constexpr bool same = std::is_same_v<Member, Expected>;

static_assert(same<mt_plugin_entry_fn, const mt_plugin_desc* (*)(uint32_t, uint32_t)>);
static_assert(same<mt_probe_run_fn, int (*)(const mt_context*, void*, char*, size_t)>);

static_assert(same<decltype(mt_host_api::get_input), int (*)(void*, const char*, mt_value*)>);
static_assert(same<decltype(mt_host_api::get_option), int (*)(void*, const char*, mt_value*)>);
static_assert(same<decltype(mt_host_api::log), void (*)(void*, mt_log_level, const char*)>);
static_assert(same<decltype(mt_host_api::progress), void (*)(void*, double, const char*)>);
static_assert(same<decltype(mt_host_api::put_result),
                   int (*)(void*, const char*, const mt_value*, const mt_result_info*)>);
static_assert(same<decltype(mt_host_api::put_raw), int (*)(void*, const char*, const char* const*, size_t,
                                                           const double*, size_t)>);
static_assert(same<decltype(mt_host_api::cancelled), int (*)(void*)>);
static_assert(same<decltype(mt_host_api::put_absent), int (*)(void*, const char*, const char*)>);

static_assert(same<decltype(mt_backend::run_jobs), int (*)(void*, mt_job* const*, size_t, char*, size_t)>);
static_assert(same<decltype(mt_backend::timing_overhead), int (*)(void*, double*, char*, size_t)>);
static_assert(same<decltype(mt_backend::alloc_buffer), int (*)(void*, uint64_t, void**, char*, size_t)>);
static_assert(same<decltype(mt_backend::free_buffer), void (*)(void*, void*)>);
static_assert(same<decltype(mt_backend::copy_buffer),
                   int (*)(void*, void*, const void*, uint64_t, uint32_t, char*, size_t)>);
static_assert(same<decltype(mt_backend::fill_buffer), int (*)(void*, void*, int, uint64_t, char*, size_t)>);
static_assert(same<decltype(mt_backend::launch_kernel),
                   int (*)(void*, const mt_kernel_launch*, mt_kernel_report*, char*, size_t)>);
static_assert(same<decltype(mt_backend::occupancy),
                   int (*)(void*, const mt_kernel_launch*, mt_occupancy*, char*, size_t)>);
static_assert(same<decltype(mt_backend::count), int (*)(void*, int (*)(void*), void*, mt_counts*, char*, size_t)>);

static_assert(same<decltype(mt_kernel_launch::thread_main), void (*)(void*)>);
static_assert(same<decltype(mt_kernel_ops::place), void (*)(void*, mt_thread_place*)>);
static_assert(same<decltype(mt_kernel_ops::clock), uint64_t (*)(void*)>);
static_assert(same<decltype(mt_kernel_ops::globaltimer_ns), uint64_t (*)(void*)>);
static_assert(same<decltype(mt_kernel_ops::load),
                   void (*)(void*, uint32_t, const uint64_t*, uint32_t, uint32_t, void*)>);
static_assert(same<decltype(mt_kernel_ops::store), void (*)(void*, uint32_t, uint64_t, uint32_t, const void*)>);
static_assert(same<decltype(mt_kernel_ops::atomic),
                   uint64_t (*)(void*, uint32_t, uint32_t, uint64_t, uint32_t, uint64_t, uint64_t)>);
static_assert(same<decltype(mt_kernel_ops::barrier), void (*)(void*, uint32_t)>);
static_assert(same<decltype(mt_kernel_ops::shared_base), void* (*)(void*, uint32_t*)>);
static_assert(same<decltype(mt_kernel_ops::shared_static), void* (*)(void*, uint32_t, uint32_t)>);
static_assert(same<decltype(mt_kernel_ops::spend), void (*)(void*, uint64_t)>);
static_assert(same<decltype(mt_kernel_ops::fail), void (*)(void*, const char*)>);
static_assert(same<decltype(mt_kernel_ops::program),
                   void (*)(void*, const mt_access_program*, mt_program_result*)>);

// What MEMTOPO_PLUGIN writes is the entry point the host looks up, with the type it calls.
static memtopo::Probe abi_probe() {
  return memtopo::Probe("abi-values/entry").summary("ABI test").provides({"abi.entry"}).run([](memtopo::Context&) {});
}
MEMTOPO_PLUGIN("abi-values", "1.0.0", abi_probe())
static_assert(same<decltype(&memtopo_plugin_entry), mt_plugin_entry_fn>);

TEST_CASE("abi: MEMTOPO_PLUGIN's entry point returns a descriptor of this ABI", "[abi]") {
  const mt_plugin_desc* desc = memtopo_plugin_entry(MEMTOPO_ABI_MAJOR, MEMTOPO_ABI_MINOR);
  REQUIRE(desc != nullptr);
  CHECK(desc->struct_size == sizeof(mt_plugin_desc));
  CHECK(desc->abi_major == MEMTOPO_ABI_MAJOR);
  CHECK(desc->abi_minor == MEMTOPO_ABI_MINOR);
  CHECK(std::strcmp(desc->name, "abi-values") == 0);
}

TEST_CASE("abi: MEMTOPO_PLUGIN's entry point declines a host of another major ABI", "[abi]") {
  CHECK(memtopo_plugin_entry(MEMTOPO_ABI_MAJOR + 1, 0) == nullptr);
  CHECK(memtopo_plugin_entry(MEMTOPO_ABI_MAJOR - 1, MEMTOPO_ABI_MINOR) == nullptr);
  // An older minor still gets the descriptor: the host names both versions when it refuses.
  CHECK(memtopo_plugin_entry(MEMTOPO_ABI_MAJOR, 0) != nullptr);
}

TEST_CASE("abi: docs/abi.md has the section these tests cite, with the rule", "[abi]") {
  std::ifstream in(MEMTOPO_SOURCE_DIR "/docs/abi.md");
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const size_t at = doc.find("\n## Changing the ABI\n");
  REQUIRE(at != std::string::npos);
  const std::string section = doc.substr(at, doc.find("\n## ", at + 1) - at);
  CHECK(section.find("**A minor** may only add") != std::string::npos);
  CHECK(section.find("**Batch changes into releases.**") != std::string::npos);
  CHECK(section.find("**Prefer extension to new fields.**") != std::string::npos);
  CHECK(section.find("tests/abi/baseline-") != std::string::npos);
}
