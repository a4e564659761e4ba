// t-ctor-abort: a library whose static constructor aborts. Discovery must name the file and
// go on (memtopo list, memtopo run), not end the host.
#include <cstdlib>

#include <memtopo/abi.h>

namespace {
struct AbortOnLoad {
  AbortOnLoad() { std::abort(); }
} abort_on_load;
}  // namespace

extern "C" MEMTOPO_EXPORT const mt_plugin_desc* memtopo_plugin_entry(uint32_t, uint32_t) { return nullptr; }
