// t-throws: breaks the ABI rule on purpose by letting a C++ exception leave its run
// function (no probe.hpp trampoline). The host must survive it and go on.
#include <stdexcept>

#include <memtopo/abi.h>

static int run_throws(const mt_context*, void*, char*, size_t) { throw std::runtime_error("escaped on purpose"); }

static const char* const provided[] = {"t.throws_bytes", nullptr};
static const char* const none[] = {nullptr};

extern "C" MEMTOPO_EXPORT const mt_plugin_desc* memtopo_plugin_entry(uint32_t, uint32_t) {
  static mt_probe_desc probe = {sizeof(mt_probe_desc), "t-throws/escape", "throws", provided, none, none,
                                nullptr, 0, &run_throws, nullptr};
  static mt_plugin_desc desc = {sizeof(mt_plugin_desc), MEMTOPO_ABI_MAJOR, MEMTOPO_ABI_MINOR, "t-throws", "1.0.0",
                                &probe, 1};
  return &desc;
}
