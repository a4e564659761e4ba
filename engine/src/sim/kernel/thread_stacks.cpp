#include "sim/kernel/thread_stacks.hpp"

#include <cstring>

#include "sim/kernel/kernel_runtime.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define MEMTOPO_STACKS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MEMTOPO_STACKS_ASAN 1
#endif
#endif

namespace memtopo::sim::kernel {

#ifdef MEMTOPO_STACKS_ASAN
const size_t ThreadStacks::kOwnStacks = SIZE_MAX;
#else
// 16 MiB of stacks' pages: fewer pages than threads keeps the host's caches warm (a replayed
// H100's DRAM streams about a fifth faster than with a stack each, docs/simulator.md).
const size_t ThreadStacks::kOwnStacks = 4096;
#endif

namespace {

// A pointer into [from, from + bytes), moved to the same place from `to`; any other as it is.
template <class T>
void follow(T*& p, const unsigned char* from, size_t bytes, unsigned char* to) {
  const auto* at = reinterpret_cast<const unsigned char*>(p);
  if (at >= from && at < from + bytes) p = reinterpret_cast<T*>(to + (at - from));
}

// The runtime reads and writes a waiting thread's frames only through its pending operation
// (the addresses of a load, a program's description and result): they follow the frames.
void follow_frames(PendingOp& op, const unsigned char* from, size_t bytes, unsigned char* to) {
  follow(op.addresses, from, bytes, to);
  follow(op.out, from, bytes, to);
  follow(op.program, from, bytes, to);
  follow(op.program_result, from, bytes, to);
}

unsigned char* top_of(const Context& c) { return static_cast<unsigned char*>(c.stack) + c.stack_bytes; }

}  // namespace

ThreadStacks::ThreadStacks(size_t stack_bytes, size_t own_stacks) : pool_(stack_bytes), own_stacks_(own_stacks) {}

uint32_t ThreadStacks::new_slot() {
  slots_.push_back({pool_.take(), nullptr});
  return uint32_t(slots_.size() - 1);
}

uint32_t ThreadStacks::waiting_owner(const Thread* running) {
  // Round robin from where the last search stopped: the slots given away go round them all in
  // turn, not always the first ones.
  for (size_t i = 0; i < slots_.size(); ++i) {
    const size_t k = (hand_ + i) % slots_.size();
    if (slots_[k].owner && slots_[k].owner != running) {
      hand_ = k + 1;
      return uint32_t(k);
    }
  }
  return kNone;
}

bool ThreadStacks::make_ready(Thread* t, const Thread* running) {
  if (t->stack_slot == kNone) {  // its first run
    uint32_t s = kNone;
    while (s == kNone && !free_.empty()) {  // a slot listed free may have been taken back since
      s = free_.back();
      free_.pop_back();
      if (slots_[s].owner) s = kNone;
      else pool_.reuse(slots_[s].stack);
    }
    if (s == kNone && (slots_.size() < own_stacks_ || (s = waiting_owner(running)) == kNone)) s = new_slot();
    if (slots_[s].owner) copy_out(slots_[s].owner);
    slots_[s].owner = t;
    t->stack_slot = s;
    t->context.stack = slots_[s].stack;
    t->context.stack_bytes = pool_.bytes();
    Switcher::make(t->context);
    return true;
  }
  Slot& s = slots_[t->stack_slot];
  if (s.owner == t) return true;
  if (running && s.owner == running) return false;
  if (s.owner) copy_out(s.owner);
  copy_in(t);
  s.owner = t;
  return true;
}

bool ThreadStacks::release(Thread* t) {
  if (t->stack_slot == kNone) return true;
  Slot& s = slots_[t->stack_slot];
  bool clean = true;
  if (s.owner == t) {  // else its frames are copied out, and the slot is another's
    s.owner = nullptr;
    clean = pool_.unused_bottom(s.stack);
    free_.push_back(t->stack_slot);
  }
  if (t->frames) --copied_out_;
  t->frames.reset();
  t->frames_bytes = 0;
  t->stack_slot = kNone;
  t->context.stack = nullptr;
  return clean;
}

void ThreadStacks::copy_out(Thread* t) {
  unsigned char* const at = static_cast<unsigned char*>(t->context.at);
  const size_t bytes = size_t(top_of(t->context) - at);
  t->frames.reset(new unsigned char[bytes]);
  std::memcpy(t->frames.get(), at, bytes);
  t->frames_bytes = uint32_t(bytes);
  follow_frames(t->op, at, bytes, t->frames.get());
  slots_[t->stack_slot].owner = nullptr;
  ++copied_out_;
}

void ThreadStacks::copy_in(Thread* t) {
  unsigned char* const at = top_of(t->context) - t->frames_bytes;
  std::memcpy(at, t->frames.get(), t->frames_bytes);
  follow_frames(t->op, t->frames.get(), t->frames_bytes, at);
  t->frames.reset();
  t->frames_bytes = 0;
  --copied_out_;
}

}  // namespace memtopo::sim::kernel
