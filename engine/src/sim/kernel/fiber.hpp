// Execution contexts of the simulated GPU's kernel threads: one stack and one saved context
// each (Boost.Context's fcontext). Control passes from any context straight to any other (the
// scheduler's own included): a thread whose warp-mate issues next switches to it directly. A
// context never unwinds: an abandoned one is dropped with its stack, which is why kernel
// threads own nothing that needs destroying (docs/simulator.md, "Probe kernels").
#pragma once

#include <cstddef>
#include <vector>

#include <boost/context/detail/fcontext.hpp>

namespace memtopo::sim::kernel {

namespace ctx = boost::context::detail;

// Stacks of one size (below each a guard page, or past the first kGuardedStacks one below each
// slab of them); ThreadStacks keeps them and hands them from thread to thread.
class StackPool {
 public:
  explicit StackPool(size_t bytes);
  ~StackPool();
  StackPool(const StackPool&) = delete;
  StackPool& operator=(const StackPool&) = delete;
  void* take();  // the lowest usable address; the stack grows down from take() + bytes()
  // False where the thread wrote the lowest bytes of its stack: it ran past its end.
  static bool unused_bottom(const void* stack);
  void reuse(void* stack) const;  // a stack a dropped context left, for the next one
  size_t bytes() const { return bytes_; }

 private:
  static constexpr size_t kGuardedStacks = 8192, kSlabStacks = 64, kCheckedBytes = 64;
  struct Mapping {
    void* base;
    size_t bytes;
  };
  size_t bytes_;
  size_t taken_ = 0;
  std::vector<void*> free_;
  std::vector<Mapping> mappings_;
};

// One context: where it stopped, and its stack (none for the scheduler's, which is the
// caller's own). A fresh one runs fn(arg) when first switched to; fn never returns.
struct Context {
  ctx::fcontext_t at = nullptr;
  void* stack = nullptr;
  size_t stack_bytes = 0;
  void (*fn)(void*) = nullptr;
  void* arg = nullptr;
  bool started = false;
};

class Switcher {
 public:
  // Prepares `c` to run c.fn(c.arg) on its stack.
  static void make(Context& c);
  // From the context running now (`from`) to `to`; returns when something switches back.
  // `from` may be one that never runs again (a thread that ended): then nothing returns.
  static void switch_to(Context& from, Context& to);

 private:
  static void entry(ctx::transfer_t t);
};

}  // namespace memtopo::sim::kernel
