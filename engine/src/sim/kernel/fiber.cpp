#include "sim/kernel/fiber.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <new>

#include "memtopo/errors.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define MEMTOPO_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MEMTOPO_ASAN 1
#endif
#endif
#ifdef MEMTOPO_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace memtopo::sim::kernel {

namespace {

size_t page_size() { return size_t(::sysconf(_SC_PAGESIZE)); }

// What a switch carries: where the context left must be stored, and the context switched to.
struct Jump {
  Context* from;
  Context* to;
};

#ifdef MEMTOPO_ASAN
// AddressSanitizer must know the stack each switch lands on; the scheduler's (the thread's
// own) it learns at the first switch back.
const void* g_main_bottom = nullptr;
size_t g_main_size = 0;
#endif

void arrived(const ctx::transfer_t& t) {
  const Jump* j = static_cast<const Jump*>(t.data);
  j->from->at = t.fctx;
}

}  // namespace

StackPool::StackPool(size_t bytes) : bytes_((bytes + page_size() - 1) / page_size() * page_size()) {}

StackPool::~StackPool() {
  for (const Mapping& m : mappings_) ::munmap(m.base, m.bytes);
}

// The first stacks get a guard page each: an overflow faults where it happens. A guard page
// is a mapping of its own, and a process has at most vm.max_map_count (65530 by default)
// mappings, fewer than the threads a large GPU keeps resident (132 SMs x 2048); later stacks
// come in slabs with one guard page below each, and unused_bottom checks the lowest bytes of a
// stack, which a thread that ran past its stack writes and nothing else does.
void* StackPool::take() {
  if (!free_.empty()) {  // the rest of the last slab
    void* s = free_.back();
    free_.pop_back();
    return s;
  }
  const size_t per_mapping = taken_ < kGuardedStacks ? 1 : kSlabStacks;
  const size_t bytes = per_mapping * bytes_ + page_size();
  void* m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) throw Error("simulated GPU: no memory for another kernel thread's stack");
  ::mprotect(m, page_size(), PROT_NONE);
  mappings_.push_back({m, bytes});
  char* first = static_cast<char*>(m) + page_size();
  for (size_t k = per_mapping; k-- > 1;) free_.push_back(first + k * bytes_);
  taken_ += per_mapping;
  return first;
}

// Fresh anonymous memory reads as zeros and a thread's frames stay at the top of its stack,
// so non-zero lowest bytes mean the thread overflowed (into the stack below, in a slab).
#ifdef MEMTOPO_ASAN
__attribute__((no_sanitize_address))
#endif
bool StackPool::unused_bottom(const void* stack) {
  const auto* low = static_cast<const unsigned char*>(stack);
  bool clean = true;
  for (size_t i = 0; i < kCheckedBytes; ++i) clean = clean && low[i] == 0;
  return clean;
}

void StackPool::reuse(void* stack) const {
#ifdef MEMTOPO_ASAN
  // A context dropped before its end (a failed launch) leaves its frames' redzones poisoned.
  ASAN_UNPOISON_MEMORY_REGION(stack, bytes_);
#else
  (void)stack;
#endif
}

void Switcher::make(Context& c) {
  c.at = ctx::make_fcontext(static_cast<char*>(c.stack) + c.stack_bytes, c.stack_bytes, &Switcher::entry);
  c.started = false;
}

void Switcher::entry(ctx::transfer_t t) {
  const Jump j = *static_cast<const Jump*>(t.data);
  arrived(t);
#ifdef MEMTOPO_ASAN
  if (!j.from->stack)
    __sanitizer_finish_switch_fiber(nullptr, &g_main_bottom, &g_main_size);
  else
    __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
#endif
  j.to->fn(j.to->arg);
  __builtin_unreachable();  // fn ends by switching away for good
}

void Switcher::switch_to(Context& from, Context& to) {
  Jump j{&from, &to};
#ifdef MEMTOPO_ASAN
  void* fake = nullptr;
  if (to.stack)
    __sanitizer_start_switch_fiber(&fake, to.stack, to.stack_bytes);
  else
    __sanitizer_start_switch_fiber(&fake, g_main_bottom, g_main_size);
#endif
  to.started = true;
  ctx::transfer_t t = ctx::jump_fcontext(to.at, &j);
  arrived(t);
#ifdef MEMTOPO_ASAN
  // The bounds ASan reports are those of the stack that switched here: the scheduler's only when
  // the scheduler did (a kernel thread resumed), never when it is the one resuming.
  const bool from_main = !static_cast<const Jump*>(t.data)->from->stack;
  __sanitizer_finish_switch_fiber(fake, from_main ? &g_main_bottom : nullptr, from_main ? &g_main_size : nullptr);
#endif
}

}  // namespace memtopo::sim::kernel
