// The C ABI's layout, frozen for ABI 3 on LP64 (x86-64 and aarch64 Linux): every struct's size
// and every field's offset. A change that fails here breaks plugins built against an earlier
// 3.x: append fields at a struct's end (a minor) or bump MEMTOPO_ABI_MAJOR and regenerate the
// table (docs/abi.md, "Changing the ABI").
#include <catch2/catch.hpp>

#include <cstddef>

#include "memtopo/abi.h"
#include "memtopo/measure.h"

static_assert(sizeof(void*) == 8, "the layout table is for LP64 platforms");
static_assert(MEMTOPO_ABI_MAJOR == 3, "a new major ABI: regenerate the layout table below");

static_assert(sizeof(mt_value) == 72);
static_assert(offsetof(mt_value, type) == 0);
static_assert(offsetof(mt_value, i) == 8);
static_assert(offsetof(mt_value, f) == 16);
static_assert(offsetof(mt_value, b) == 24);
static_assert(offsetof(mt_value, s) == 32);
static_assert(offsetof(mt_value, int_array) == 40);
static_assert(offsetof(mt_value, float_array) == 48);
static_assert(offsetof(mt_value, string_array) == 56);
static_assert(offsetof(mt_value, count) == 64);
static_assert(sizeof(mt_result_info) == 56);  // 32 in 3.0-3.2
static_assert(offsetof(mt_result_info, struct_size) == 0);
static_assert(offsetof(mt_result_info, confidence) == 8);
static_assert(offsetof(mt_result_info, bound) == 16);
static_assert(offsetof(mt_result_info, note) == 24);
static_assert(offsetof(mt_result_info, verified) == 32);  // 3.3
static_assert(offsetof(mt_result_info, counted_bytes) == 40);
static_assert(offsetof(mt_result_info, verify_note) == 48);
static_assert(sizeof(mt_host_api) == 72);
static_assert(offsetof(mt_host_api, struct_size) == 0);
static_assert(offsetof(mt_host_api, get_input) == 8);
static_assert(offsetof(mt_host_api, get_option) == 16);
static_assert(offsetof(mt_host_api, log) == 24);
static_assert(offsetof(mt_host_api, progress) == 32);
static_assert(offsetof(mt_host_api, put_result) == 40);
static_assert(offsetof(mt_host_api, put_raw) == 48);
static_assert(offsetof(mt_host_api, cancelled) == 56);
static_assert(offsetof(mt_host_api, put_absent) == 64);  // since 3.6
static_assert(sizeof(mt_device_info) == 496);
static_assert(offsetof(mt_device_info, struct_size) == 0);
static_assert(offsetof(mt_device_info, name) == 4);
static_assert(offsetof(mt_device_info, backend) == 260);
static_assert(offsetof(mt_device_info, ordinal) == 276);
static_assert(offsetof(mt_device_info, cc_major) == 280);
static_assert(offsetof(mt_device_info, cc_minor) == 284);
static_assert(offsetof(mt_device_info, sm_count) == 288);
static_assert(offsetof(mt_device_info, warp_size) == 292);
static_assert(offsetof(mt_device_info, sm_clock_khz) == 296);
static_assert(offsetof(mt_device_info, memory_clock_khz) == 304);
static_assert(offsetof(mt_device_info, memory_bus_width_bits) == 312);
static_assert(offsetof(mt_device_info, global_memory_bytes) == 320);
static_assert(offsetof(mt_device_info, l2_bytes) == 328);
static_assert(offsetof(mt_device_info, shared_per_sm_bytes) == 336);
static_assert(offsetof(mt_device_info, shared_per_block_bytes) == 344);
static_assert(offsetof(mt_device_info, shared_per_block_optin_bytes) == 352);
static_assert(offsetof(mt_device_info, constant_memory_bytes) == 360);
static_assert(offsetof(mt_device_info, registers_per_sm) == 368);
static_assert(offsetof(mt_device_info, registers_per_block) == 376);
static_assert(offsetof(mt_device_info, max_threads_per_sm) == 384);
static_assert(offsetof(mt_device_info, max_threads_per_block) == 388);
static_assert(offsetof(mt_device_info, max_blocks_per_sm) == 392);
static_assert(offsetof(mt_device_info, driver_version) == 396);
static_assert(offsetof(mt_device_info, runtime_version) == 400);
static_assert(offsetof(mt_device_info, uuid) == 404);
static_assert(offsetof(mt_device_info, pci_bus_id) == 452);
static_assert(offsetof(mt_device_info, constant_reach_bytes) == 488);
static_assert(sizeof(mt_context) == 40);
static_assert(offsetof(mt_context, struct_size) == 0);
static_assert(offsetof(mt_context, host) == 8);
static_assert(offsetof(mt_context, api) == 16);
static_assert(offsetof(mt_context, device) == 24);
static_assert(offsetof(mt_context, backend) == 32);
static_assert(sizeof(mt_option_desc) == 56);
static_assert(offsetof(mt_option_desc, struct_size) == 0);
static_assert(offsetof(mt_option_desc, name) == 8);
static_assert(offsetof(mt_option_desc, type) == 16);
static_assert(offsetof(mt_option_desc, default_value) == 24);
static_assert(offsetof(mt_option_desc, help) == 32);
static_assert(offsetof(mt_option_desc, min_value) == 40);
static_assert(offsetof(mt_option_desc, max_value) == 48);
static_assert(sizeof(mt_key_desc) == 56);
static_assert(offsetof(mt_key_desc, struct_size) == 0);
static_assert(offsetof(mt_key_desc, key) == 8);
static_assert(offsetof(mt_key_desc, type) == 16);
static_assert(offsetof(mt_key_desc, unit) == 24);
static_assert(offsetof(mt_key_desc, meaning) == 32);
static_assert(offsetof(mt_key_desc, flags) == 40);
static_assert(offsetof(mt_key_desc, replays_as) == 48);
static_assert(sizeof(mt_series_desc) == 88);
static_assert(offsetof(mt_series_desc, struct_size) == 0);
static_assert(offsetof(mt_series_desc, series) == 8);
static_assert(offsetof(mt_series_desc, kind) == 16);
static_assert(offsetof(mt_series_desc, x) == 24);
static_assert(offsetof(mt_series_desc, y) == 32);
static_assert(offsetof(mt_series_desc, value) == 40);
static_assert(offsetof(mt_series_desc, group) == 48);
static_assert(offsetof(mt_series_desc, panel) == 56);
static_assert(offsetof(mt_series_desc, annotate) == 64);
static_assert(offsetof(mt_series_desc, labels) == 72);
static_assert(offsetof(mt_series_desc, marks) == 80);
static_assert(sizeof(mt_invariant_desc) == 32);  // 3.3
static_assert(offsetof(mt_invariant_desc, struct_size) == 0);
static_assert(offsetof(mt_invariant_desc, kind) == 4);
static_assert(offsetof(mt_invariant_desc, a) == 8);
static_assert(offsetof(mt_invariant_desc, b) == 16);
static_assert(offsetof(mt_invariant_desc, why) == 24);
static_assert(sizeof(mt_extension_desc) == 40);  // 3.9
static_assert(offsetof(mt_extension_desc, struct_size) == 0);
static_assert(offsetof(mt_extension_desc, name) == 8);
static_assert(offsetof(mt_extension_desc, version) == 16);
static_assert(offsetof(mt_extension_desc, data) == 24);
static_assert(offsetof(mt_extension_desc, count) == 32);
static_assert(sizeof(mt_key_role) == 24);  // 3.9, "memtopo.key_roles" version 1
static_assert(offsetof(mt_key_role, struct_size) == 0);
static_assert(offsetof(mt_key_role, key) == 8);
static_assert(offsetof(mt_key_role, role) == 16);
static_assert(sizeof(mt_probe_desc) == 184);  // 3.0 to 3.2: 152, up to series_count; 3.3 to 3.8: 168
static_assert(offsetof(mt_probe_desc, struct_size) == 0);
static_assert(offsetof(mt_probe_desc, name) == 8);
static_assert(offsetof(mt_probe_desc, summary) == 16);
static_assert(offsetof(mt_probe_desc, provided_keys) == 24);
static_assert(offsetof(mt_probe_desc, required_keys) == 32);
static_assert(offsetof(mt_probe_desc, used_keys) == 40);
static_assert(offsetof(mt_probe_desc, options) == 48);
static_assert(offsetof(mt_probe_desc, option_count) == 56);
static_assert(offsetof(mt_probe_desc, run) == 64);
static_assert(offsetof(mt_probe_desc, user) == 72);
static_assert(offsetof(mt_probe_desc, backends) == 80);
static_assert(offsetof(mt_probe_desc, min_cc_major) == 84);
static_assert(offsetof(mt_probe_desc, min_cc_minor) == 88);
static_assert(offsetof(mt_probe_desc, keys) == 96);
static_assert(offsetof(mt_probe_desc, key_count) == 104);
static_assert(offsetof(mt_probe_desc, budget_s) == 112);
static_assert(offsetof(mt_probe_desc, flags) == 120);
static_assert(offsetof(mt_probe_desc, backends_reason) == 128);
static_assert(offsetof(mt_probe_desc, series) == 136);
static_assert(offsetof(mt_probe_desc, series_count) == 144);
static_assert(offsetof(mt_probe_desc, invariants) == 152);  // 3.3
static_assert(offsetof(mt_probe_desc, invariant_count) == 160);
static_assert(offsetof(mt_probe_desc, extensions) == 168);  // 3.9
static_assert(offsetof(mt_probe_desc, extension_count) == 176);
static_assert(sizeof(mt_plugin_desc) == 48);
static_assert(offsetof(mt_plugin_desc, struct_size) == 0);
static_assert(offsetof(mt_plugin_desc, abi_major) == 4);
static_assert(offsetof(mt_plugin_desc, abi_minor) == 8);
static_assert(offsetof(mt_plugin_desc, name) == 16);
static_assert(offsetof(mt_plugin_desc, version) == 24);
static_assert(offsetof(mt_plugin_desc, probes) == 32);
static_assert(offsetof(mt_plugin_desc, probe_count) == 40);
static_assert(sizeof(mt_chase_array) == 32);
static_assert(offsetof(mt_chase_array, struct_size) == 0);
static_assert(offsetof(mt_chase_array, kind) == 4);
static_assert(offsetof(mt_chase_array, next) == 8);
static_assert(offsetof(mt_chase_array, elems) == 16);
static_assert(offsetof(mt_chase_array, stride_elems) == 24);
static_assert(sizeof(mt_rate) == 24);
static_assert(offsetof(mt_rate, streams) == 0);
static_assert(offsetof(mt_rate, gap_cycles) == 4);
static_assert(offsetof(mt_rate, pump_warps) == 8);
static_assert(offsetof(mt_rate, pump_lanes) == 12);
static_assert(offsetof(mt_rate, pump_cycles) == 16);
static_assert(offsetof(mt_rate, probe_loads) == 20);
static_assert(sizeof(mt_job_result) == 64);
static_assert(offsetof(mt_job_result, sm) == 0);
static_assert(offsetof(mt_job_result, reserved) == 4);
static_assert(offsetof(mt_job_result, cycles) == 8);
static_assert(offsetof(mt_job_result, average_cycles) == 16);
static_assert(offsetof(mt_job_result, slow) == 24);
static_assert(offsetof(mt_job_result, slow_recorded) == 32);
static_assert(offsetof(mt_job_result, outliers) == 40);
static_assert(offsetof(mt_job_result, span_cycles) == 48);
static_assert(offsetof(mt_job_result, pump_loads) == 56);
static_assert(sizeof(mt_job) == 208);
static_assert(offsetof(mt_job, struct_size) == 0);
static_assert(offsetof(mt_job, sm) == 4);
static_assert(offsetof(mt_job, block) == 8);
static_assert(offsetof(mt_job, lane) == 12);
static_assert(offsetof(mt_job, order) == 16);
static_assert(offsetof(mt_job, shared_carveout_percent) == 20);
static_assert(offsetof(mt_job, space) == 24);
static_assert(offsetof(mt_job, pattern) == 28);
static_assert(offsetof(mt_job, array) == 32);
static_assert(offsetof(mt_job, start) == 40);
static_assert(offsetof(mt_job, stagger_streams) == 44);  // 3.0: reserved (0)
static_assert(offsetof(mt_job, random_stride_elems) == 48);
static_assert(offsetof(mt_job, random_seed) == 56);
static_assert(offsetof(mt_job, warmup_steps) == 64);
static_assert(offsetof(mt_job, steps) == 72);
static_assert(offsetof(mt_job, rate) == 80);
static_assert(offsetof(mt_job, record) == 104);
static_assert(offsetof(mt_job, slow_cycles) == 108);
static_assert(offsetof(mt_job, slow_max_cycles) == 112);
static_assert(offsetof(mt_job, slow_capacity) == 116);
static_assert(offsetof(mt_job, out_slow_step) == 120);
static_assert(offsetof(mt_job, out_index) == 128);
static_assert(offsetof(mt_job, out_latency) == 136);
static_assert(offsetof(mt_job, out) == 144);
static_assert(sizeof(mt_dim3) == 12);
static_assert(offsetof(mt_dim3, x) == 0);
static_assert(offsetof(mt_dim3, y) == 4);
static_assert(offsetof(mt_dim3, z) == 8);
static_assert(sizeof(mt_kernel_launch) == 88);
static_assert(offsetof(mt_kernel_launch, struct_size) == 0);
static_assert(offsetof(mt_kernel_launch, name) == 8);
static_assert(offsetof(mt_kernel_launch, grid) == 16);
static_assert(offsetof(mt_kernel_launch, block) == 28);
static_assert(offsetof(mt_kernel_launch, cluster) == 40);
static_assert(offsetof(mt_kernel_launch, dynamic_shared_bytes) == 52);
static_assert(offsetof(mt_kernel_launch, shared_carveout_percent) == 56);
static_assert(offsetof(mt_kernel_launch, thread_main) == 64);
static_assert(offsetof(mt_kernel_launch, args) == 72);
static_assert(offsetof(mt_kernel_launch, flags) == 80);
static_assert(offsetof(mt_kernel_launch, reserved) == 84);
static_assert(sizeof(mt_kernel_report) == 32);
static_assert(offsetof(mt_kernel_report, struct_size) == 0);
static_assert(offsetof(mt_kernel_report, cycles) == 8);
static_assert(offsetof(mt_kernel_report, elapsed_ns) == 16);
static_assert(offsetof(mt_kernel_report, blocks_per_sm) == 24);
static_assert(offsetof(mt_kernel_report, reserved) == 28);
static_assert(sizeof(mt_occupancy) == 16);
static_assert(offsetof(mt_occupancy, struct_size) == 0);
static_assert(offsetof(mt_occupancy, blocks_per_sm) == 4);
static_assert(offsetof(mt_occupancy, clusters) == 8);
static_assert(offsetof(mt_occupancy, reserved) == 12);
static_assert(sizeof(mt_thread_place) == 76);
static_assert(offsetof(mt_thread_place, struct_size) == 0);
static_assert(offsetof(mt_thread_place, thread) == 4);
static_assert(offsetof(mt_thread_place, block) == 16);
static_assert(offsetof(mt_thread_place, block_dim) == 28);
static_assert(offsetof(mt_thread_place, grid_dim) == 40);
static_assert(offsetof(mt_thread_place, cluster_rank) == 52);
static_assert(offsetof(mt_thread_place, cluster_blocks) == 56);
static_assert(offsetof(mt_thread_place, sm) == 60);
static_assert(offsetof(mt_thread_place, sm_count) == 64);
static_assert(offsetof(mt_thread_place, lane) == 68);
static_assert(offsetof(mt_thread_place, warp) == 72);
static_assert(sizeof(mt_access_program) == 176);
static_assert(offsetof(mt_access_program, struct_size) == 0);
static_assert(offsetof(mt_access_program, kind) == 4);
static_assert(offsetof(mt_access_program, path) == 8);
static_assert(offsetof(mt_access_program, width) == 12);
static_assert(offsetof(mt_access_program, op) == 16);
static_assert(offsetof(mt_access_program, ilp) == 20);
static_assert(offsetof(mt_access_program, src) == 24);
static_assert(offsetof(mt_access_program, dst) == 32);
static_assert(offsetof(mt_access_program, first) == 40);
static_assert(offsetof(mt_access_program, end) == 48);
static_assert(offsetof(mt_access_program, step) == 56);
static_assert(offsetof(mt_access_program, spread) == 64);
static_assert(offsetof(mt_access_program, value) == 72);
static_assert(offsetof(mt_access_program, passes) == 76);
static_assert(offsetof(mt_access_program, chains) == 80);
static_assert(offsetof(mt_access_program, candidates) == 84);
static_assert(offsetof(mt_access_program, stride) == 88);
static_assert(offsetof(mt_access_program, ceiling) == 92);
static_assert(offsetof(mt_access_program, warmup) == 96);
static_assert(offsetof(mt_access_program, steps) == 104);
static_assert(offsetof(mt_access_program, states) == 112);
static_assert(sizeof(mt_program_result) == 104);
static_assert(offsetof(mt_program_result, struct_size) == 0);
static_assert(offsetof(mt_program_result, fold) == 4);
static_assert(offsetof(mt_program_result, cycles) == 8);
static_assert(offsetof(mt_program_result, outliers) == 16);
static_assert(offsetof(mt_program_result, first) == 24);
static_assert(offsetof(mt_program_result, last) == 32);
static_assert(offsetof(mt_program_result, states) == 40);
static_assert(sizeof(mt_kernel_ops) == 112);
static_assert(offsetof(mt_kernel_ops, struct_size) == 0);
static_assert(offsetof(mt_kernel_ops, self) == 8);
static_assert(offsetof(mt_kernel_ops, place) == 16);
static_assert(offsetof(mt_kernel_ops, clock) == 24);
static_assert(offsetof(mt_kernel_ops, globaltimer_ns) == 32);
static_assert(offsetof(mt_kernel_ops, load) == 40);
static_assert(offsetof(mt_kernel_ops, store) == 48);
static_assert(offsetof(mt_kernel_ops, atomic) == 56);
static_assert(offsetof(mt_kernel_ops, barrier) == 64);
static_assert(offsetof(mt_kernel_ops, shared_base) == 72);
static_assert(offsetof(mt_kernel_ops, shared_static) == 80);
static_assert(offsetof(mt_kernel_ops, spend) == 88);
static_assert(offsetof(mt_kernel_ops, fail) == 96);
static_assert(offsetof(mt_kernel_ops, program) == 104);
static_assert(sizeof(mt_backend) == 136);  // 112 in 3.0-3.2, 120 in 3.3-3.7
static_assert(offsetof(mt_backend, struct_size) == 0);
static_assert(offsetof(mt_backend, self) == 8);
static_assert(offsetof(mt_backend, name) == 16);
static_assert(offsetof(mt_backend, capabilities) == 24);
static_assert(offsetof(mt_backend, streams_max) == 32);
static_assert(offsetof(mt_backend, pump_warps_max) == 36);
static_assert(offsetof(mt_backend, run_jobs) == 40);
static_assert(offsetof(mt_backend, timing_overhead) == 48);
static_assert(offsetof(mt_backend, alloc_buffer) == 56);
static_assert(offsetof(mt_backend, free_buffer) == 64);
static_assert(offsetof(mt_backend, copy_buffer) == 72);
static_assert(offsetof(mt_backend, fill_buffer) == 80);
static_assert(offsetof(mt_backend, launch_kernel) == 88);
static_assert(offsetof(mt_backend, occupancy) == 96);
static_assert(offsetof(mt_backend, kernel_ops) == 104);
static_assert(offsetof(mt_backend, count) == 112);  // 3.3
static_assert(offsetof(mt_backend, attachment) == 120);        // 3.8
static_assert(offsetof(mt_backend, time_link_copies) == 128);  // 3.8
static_assert(sizeof(mt_attachment) == 1444);  // 3.8
static_assert(offsetof(mt_attachment, numa_node) == 4);
static_assert(offsetof(mt_attachment, local_cpus) == 12);
static_assert(offsetof(mt_attachment, pcie_generation) == 268);
static_assert(offsetof(mt_attachment, nvlink_links) == 284);
static_assert(offsetof(mt_attachment, nvlink_peers) == 292);
static_assert(offsetof(mt_attachment, source) == 1316);
static_assert(sizeof(mt_link_copy) == 112);  // 3.8
static_assert(offsetof(mt_link_copy, bytes) == 16);
static_assert(offsetof(mt_link_copy, elapsed_ns) == 32);
static_assert(offsetof(mt_link_copy, numa_node_used) == 40);
static_assert(offsetof(mt_link_copy, peer_name) == 48);
static_assert(MT_KEY_HEALTH == 512u && MT_LINK_UNAVAILABLE == 2 && MT_HOST_NUMA_FAR == -2);
static_assert(sizeof(mt_counts) == 80);           // 3.3
static_assert(offsetof(mt_counts, struct_size) == 0);
static_assert(offsetof(mt_counts, wanted) == 4);
static_assert(offsetof(mt_counts, passes) == 8);
static_assert(offsetof(mt_counts, sector_bytes) == 12);
static_assert(offsetof(mt_counts, l1_load_sectors) == 16);
static_assert(offsetof(mt_counts, l1_load_hit_sectors) == 24);
static_assert(offsetof(mt_counts, l2_read_sectors) == 32);
static_assert(offsetof(mt_counts, l2_read_hit_sectors) == 40);
static_assert(offsetof(mt_counts, l2_write_sectors) == 48);
static_assert(offsetof(mt_counts, l2_to_sm_bytes) == 56);
static_assert(offsetof(mt_counts, dram_read_bytes) == 64);
static_assert(offsetof(mt_counts, dram_write_bytes) == 72);
static_assert(MT_COUNT_REFUSED == 2);
static_assert(MT_COUNT_L1 == 1 && MT_COUNT_L2_READ == 2 && MT_COUNT_L2_HIT == 4 && MT_COUNT_L2_WRITE == 8 &&
              MT_COUNT_TO_SM == 16 && MT_COUNT_DRAM == 32);

// Key flags: bits a plugin built against any 3.x minor sets (3.4 added the configuration).
static_assert(MT_KEY_IDENTITY == 1u && MT_KEY_SETTING == 2u && MT_KEY_VARIES == 4u && MT_KEY_ESTIMATE == 8u &&
              MT_KEY_HEADLINE == 16u && MT_KEY_CONFIGURATION == 32u);
static_assert(MEMTOPO_ABI_MINOR >= 4, "MT_KEY_CONFIGURATION came with 3.4");
// 3.5: how the fleet judges a key (docs/fleet.md, "Rated keys").
static_assert(MT_KEY_RATED == 64u && MT_KEY_STRUCTURE == 128u && MT_KEY_ALWAYS == 256u);
static_assert(MEMTOPO_ABI_MINOR >= 5, "MT_KEY_RATED, MT_KEY_STRUCTURE and MT_KEY_ALWAYS came with 3.5");
static_assert(MEMTOPO_ABI_MINOR >= 6, "mt_host_api::put_absent came with 3.6");
static_assert(MEMTOPO_ABI_MINOR >= 9, "mt_probe_desc::extensions and mt_key_role came with 3.9");

TEST_CASE("abi: the layout of ABI 3 is the one plugins were built against", "[abi]") {
  // The assertions above are the test; this states the version they hold for.
  CHECK(MEMTOPO_ABI_MAJOR == 3);
  CHECK(MEMTOPO_ABI_MINOR >= 0);
}
