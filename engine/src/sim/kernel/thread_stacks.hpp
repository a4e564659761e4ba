// The stacks of a launch's simulated threads. A thread needs its stack from its first run to its
// end, and a resident thread of a large GPU waits most of that time (at a barrier, in its warp's
// program): 132 SMs of 2048 threads touched a page each, 1.1 GB. Past kOwnStacks threads with
// a stack at once, threads share stacks: the frames of a waiting thread are copied out (under
// a kilobyte: its stack's used part) while another runs on its stack, and back before it runs
// again, at the same address, where its saved context and its pointers expect them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/kernel/fiber.hpp"

namespace memtopo::sim::kernel {

struct Thread;

class ThreadStacks {
 public:
  // Threads with a stack of their own at once, at most (the sanitizers' builds: no limit; they
  // keep their own records of each stack's frames).
  static const size_t kOwnStacks;

  explicit ThreadStacks(size_t stack_bytes, size_t own_stacks = kOwnStacks);
  size_t bytes() const { return pool_.bytes(); }
  // Before `t` runs, with `running` running now (nullptr: the scheduler): t's frames are on
  // its stack (a thread's first run takes one). False where that stack is `running`'s: the
  // scheduler must switch to `t`.
  bool make_ready(Thread* t, const Thread* running);
  // `t` ended, or is dropped with its launch: its stack is free. False where it ran past its
  // stack's end.
  bool release(Thread* t);
  // Threads whose frames are copied out now (for tests).
  size_t copied_out() const { return copied_out_; }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  struct Slot {
    void* stack = nullptr;
    Thread* owner = nullptr;  // whose frames it holds; nullptr: free
  };
  uint32_t new_slot();
  uint32_t waiting_owner(const Thread* running);  // a slot whose owner waits
  void copy_out(Thread* t);
  void copy_in(Thread* t);

  StackPool pool_;
  size_t own_stacks_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_;
  size_t hand_ = 0, copied_out_ = 0;
};

}  // namespace memtopo::sim::kernel
