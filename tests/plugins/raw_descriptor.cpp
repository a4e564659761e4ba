// A hand-made descriptor with one thing wrong, chosen by compile definitions:
// TEST_ABI_MAJOR / TEST_ABI_MINOR (a foreign ABI), TEST_STRUCT_SIZE (a truncated struct),
// TEST_NAME (plugin name; differs from the file stem for t-wrong-name), TEST_PROBE_NAME.
#include <memtopo/abi.h>

#ifndef TEST_ABI_MAJOR
#define TEST_ABI_MAJOR MEMTOPO_ABI_MAJOR
#endif
#ifndef TEST_ABI_MINOR
#define TEST_ABI_MINOR MEMTOPO_ABI_MINOR
#endif
#ifndef TEST_STRUCT_SIZE
#define TEST_STRUCT_SIZE sizeof(mt_plugin_desc)
#endif
#ifndef TEST_PROBE_NAME
#define TEST_PROBE_NAME TEST_NAME "/probe"
#endif

static int run_ok(const mt_context*, void*, char*, size_t) { return MT_STATUS_OK; }
static const char* const none[] = {nullptr};

extern "C" MEMTOPO_EXPORT const mt_plugin_desc* memtopo_plugin_entry(uint32_t, uint32_t) {
  static mt_probe_desc probe = {sizeof(mt_probe_desc), TEST_PROBE_NAME, "", none, none, none, nullptr, 0, &run_ok,
                                nullptr};
  static mt_plugin_desc desc = {TEST_STRUCT_SIZE, TEST_ABI_MAJOR, TEST_ABI_MINOR, TEST_NAME, "1.0.0", &probe, 1};
  return &desc;
}
