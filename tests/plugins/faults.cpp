// t-faults: one probe per way a probe can misbehave (crash, abort, exit, hang, escaping
// exceptions, NaN, a failed allocation, a sleep or a spin past a budget), a good one and a slow
// one that honours cancelled().
// Written against the C ABI directly: several of them break its rules on purpose.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <thread>

#include <memtopo/abi.h>

namespace {

void say(const mt_context* ctx, const char* text) { ctx->api->log(ctx->host, MT_LOG_WARN, text); }

int put_int(const mt_context* ctx, const char* key, int64_t value) {
  mt_value v{};
  v.type = MT_VALUE_INT;
  v.i = value;
  return ctx->api->put_result(ctx->host, key, &v, nullptr);
}

double option_seconds(const mt_context* ctx) {
  mt_value v{};
  return ctx->api->get_option(ctx->host, "seconds", &v) && v.type == MT_VALUE_FLOAT ? v.f : 30;
}

int run_crash(const mt_context* ctx, void*, char*, size_t) {
  say(ctx, "about to dereference a bad pointer");
  std::raise(SIGSEGV);
  return MT_STATUS_OK;
}

int run_abort(const mt_context*, void*, char*, size_t) { std::abort(); }

int run_exit(const mt_context*, void*, char*, size_t) { std::exit(0); }

int run_hang(const mt_context* ctx, void*, char*, size_t) {
  say(ctx, "hanging (cancelled() is not polled)");
  while (true) std::this_thread::sleep_for(std::chrono::seconds(1));
}

// Busy without end (the CPU time a simulated GPU's work takes), never polling cancelled().
int run_spin(const mt_context* ctx, void*, char*, size_t) {
  say(ctx, "spinning (cancelled() is not polled)");
  volatile uint64_t x = 1;
  while (true) x = x * 6364136223846793005ull + 1;
}

int run_throw(const mt_context*, void*, char*, size_t) { throw std::runtime_error("thrown across the C boundary"); }

int run_nan(const mt_context* ctx, void*, char*, size_t) {
  mt_value v{};
  v.type = MT_VALUE_FLOAT;
  v.f = std::numeric_limits<double>::quiet_NaN();
  ctx->api->put_result(ctx->host, "t.nan_ratio", &v, nullptr);
  return MT_STATUS_OK;
}

int run_alloc(const mt_context*, void*, char*, size_t) {
  volatile size_t huge = std::numeric_limits<size_t>::max() / 4;
  void* p = ::operator new(huge);  // std::bad_alloc leaves the run function (a call, never elided)
  ::operator delete(p);
  return MT_STATUS_OK;
}

int run_good(const mt_context* ctx, void*, char*, size_t) {
  put_int(ctx, "t.good_bytes", 7);
  return MT_STATUS_OK;
}

int run_slow(const mt_context* ctx, void*, char* message, size_t size) {
  say(ctx, "started");
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(option_seconds(ctx));
  while (std::chrono::steady_clock::now() < end) {
    if (ctx->api->cancelled(ctx->host)) {
      std::snprintf(message, size, "cancelled");
      return MT_STATUS_SKIPPED;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  put_int(ctx, "t.slow_bytes", 1);
  return MT_STATUS_OK;
}

// Removes the simulated device's file (option "file"), then crashes: no new worker can open
// the device again.
int run_break_device(const mt_context* ctx, void*, char*, size_t) {
  mt_value v{};
  if (ctx->api->get_option(ctx->host, "file", &v) && v.type == MT_VALUE_STRING && v.s[0]) std::remove(v.s);
  std::raise(SIGSEGV);
  return MT_STATUS_OK;
}

const char* const kNone[] = {nullptr};
const char* const kGood[] = {"t.good_bytes", nullptr};
const char* const kNan[] = {"t.nan_ratio", nullptr};
const char* const kSlow[] = {"t.slow_bytes", nullptr};
const char* const kGoodInput[] = {"t.good_bytes", nullptr};
const mt_option_desc kSlowOptions[] = {
    {sizeof(mt_option_desc), "seconds", MT_VALUE_FLOAT, "30", "how long to run when not cancelled"}};
const mt_option_desc kFileOptions[] = {{sizeof(mt_option_desc), "file", MT_VALUE_STRING, "", "file to remove"}};

mt_probe_desc probe(const char* name, mt_probe_run_fn run, const char* const* provided = kNone,
                    const mt_option_desc* options = nullptr, size_t option_count = 0, double budget_s = 0,
                    const char* const* used = kNone) {
  mt_probe_desc d{};
  d.struct_size = sizeof d;
  d.name = name;
  d.summary = "misbehaves on purpose";
  d.provided_keys = provided;
  d.required_keys = kNone;
  d.used_keys = used;
  d.options = options;
  d.option_count = option_count;
  d.run = run;
  d.budget_s = budget_s;
  return d;
}

}  // namespace

extern "C" MEMTOPO_EXPORT const mt_plugin_desc* memtopo_plugin_entry(uint32_t, uint32_t) {
  static const mt_probe_desc probes[] = {
      probe("t-faults/abort", &run_abort),
      probe("t-faults/alloc", &run_alloc),
      probe("t-faults/break-device", &run_break_device, kNone, kFileOptions, 1),
      probe("t-faults/crash", &run_crash),
      probe("t-faults/exit", &run_exit),
      probe("t-faults/good", &run_good, kGood),
      probe("t-faults/hang", &run_hang),
      probe("t-faults/nan", &run_nan, kNan),
      // Declared budgets, on the simulated GPU limits of CPU time: the one that sleeps meets the
      // wall clock's backstop, the one that spins its CPU time.
      probe("t-faults/over-budget", &run_hang, kNone, nullptr, 0, /*budget_s=*/0.25),
      // Uses t.good_bytes so that it runs after good whatever the names.
      probe("t-faults/slow", &run_slow, kSlow, kSlowOptions, 1, 0, kGoodInput),
      probe("t-faults/spin", &run_spin, kNone, nullptr, 0, /*budget_s=*/0.25),
      probe("t-faults/throw", &run_throw),
  };
  static const mt_plugin_desc desc = {sizeof(mt_plugin_desc), MEMTOPO_ABI_MAJOR, MEMTOPO_ABI_MINOR, "t-faults",
                                      "1.0.0", probes, sizeof probes / sizeof probes[0]};
  return &desc;
}
