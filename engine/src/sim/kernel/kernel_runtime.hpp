// The simulated GPU's runtime for probes' own kernels (mt_backend::launch_kernel): blocks
// placed on SMs as the device's limits allow, every thread a context of its own run in the
// order of its simulated clock, and the toolkit's operations priced by the simulated
// hierarchy (sim_gpu.hpp) and the shared resources that make loads queue (resources.hpp).
// Lanes of one warp that issue the same operation at the same cycle form one warp instruction:
// their loads coalesce into lines and their shared-memory words take bank turns.
// docs/simulator.md, "Probe kernels".
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <boost/heap/d_ary_heap.hpp>
#include <boost/unordered/unordered_flat_set.hpp>

#include "memtopo/errors.hpp"
#include "memtopo/measure.h"
#include "sim/kernel/fiber.hpp"
#include "sim/kernel/resources.hpp"
#include "sim/kernel/thread_stacks.hpp"
#include "sim/sim_gpu.hpp"

namespace memtopo::sim::kernel {

struct Block;

enum class OpKind { None, Load, Store, Atomic, Program };

// The operation a thread waits on: it stays in the warp's open group until the group is priced.
struct PendingOp {
  OpKind kind = OpKind::None;
  uint32_t path = 0;
  bool timed = false;
  const uint64_t* addresses = nullptr;
  uint32_t count = 0, bytes = 0;
  void* out = nullptr;
  uint64_t address = 0;         // Store, Atomic: where (addresses points at it)
  uint32_t atomic_op = 0;       // Atomic
  uint64_t result = 0;          // Atomic: the value before
  const mt_access_program* program = nullptr;  // Program
  mt_program_result* program_result = nullptr;
  uint64_t signature = 0;       // what lanes must share to issue as one warp instruction
};

// One lane's random chains (MT_PROGRAM_RANDOM).
struct ChainState {
  uint64_t x[8] = {};
  uint64_t cycles = 0, outliers = 0, first = 0;
  uint32_t fold = 0;  // SWEEP: the xor of the words the lane loaded
};

struct Thread {
  Block* block = nullptr;
  uint32_t linear = 0, lane = 0, warp = 0;
  mt_dim3 idx{};
  uint64_t warp_key = 0;  // the warp's place in the launch (block-major)
  double clock = 0;
  Context context;
  // ThreadStacks: the slot of its stack; while another thread runs there, its frames.
  uint32_t stack_slot = UINT32_MAX, frames_bytes = 0;
  std::unique_ptr<unsigned char[]> frames;
  bool done = false;
  uint32_t static_shared = 0;  // bytes of static shared arrays carved so far
  PendingOp op;
  // A wait on the global timer during which no thread wrote memory: the writes counted when it
  // began, and the thread's clock then.
  uint64_t quiet_writes = ~0ull;
  double quiet_since = 0;
};

struct Barrier {
  uint32_t arrived = 0;
  double latest = 0;
  std::vector<Thread*> waiting;
};

struct Cluster {
  std::vector<Block*> blocks;
  uint32_t live = 0;  // threads not yet done
  Barrier barrier;
};

struct Block {
  mt_dim3 idx{};
  uint32_t linear = 0, sm = 0, rank = 0;
  Cluster* cluster = nullptr;
  std::vector<Thread> threads;
  uint32_t live = 0;
  Barrier barrier;
  char* shared = nullptr;        // dynamic shared memory, then the static arrays
  uint32_t shared_bytes = 0;     // all of it
  uint32_t dynamic_bytes = 0;
};

// The keys ready to run, earliest first: a heap, and beside it a run of keys pushed in rising
// order (a launch's threads, lanes that a barrier releases at one clock), which cost no sift.
// The heap has four children a node: half the levels of a binary heap for each pop (a fifth of
// a stream's time was a binary heap's). The keys are distinct, so the pops come in the keys'
// order whatever holds them.
template <class K>
class ReadyQueue {
 public:
  bool empty() const { return heap_.empty() && head_ == run_.size(); }
  const K& top() const { return from_run() ? run_[head_] : heap_.top(); }
  void pop() {
    if (!from_run()) return heap_.pop();
    if (++head_ == run_.size()) {
      run_.clear();
      head_ = 0;
    } else if (head_ >= 4096 && 2 * head_ >= run_.size()) {  // drop the front now and then
      run_.erase(run_.begin(), run_.begin() + std::ptrdiff_t(head_));
      head_ = 0;
    }
  }
  void push(const K& k) {
    if (head_ == run_.size() || k > run_.back())
      run_.push_back(k);
    else
      heap_.push(k);
  }
  void clear() {
    heap_.clear();
    run_.clear();
    head_ = 0;
  }

 private:
  bool from_run() const { return head_ < run_.size() && (heap_.empty() || heap_.top() > run_[head_]); }
  boost::heap::d_ary_heap<K, boost::heap::arity<4>, boost::heap::compare<std::greater<K>>> heap_;
  std::vector<K> run_;
  size_t head_ = 0;
};

// A warp's access program (mt_access_program), run by the runtime itself: one step (a place of
// a sweep, a step of random chains) at a time, in the order of simulated time, its lanes parked
// until it ends.
struct WarpProgram {
  std::vector<Thread*> lanes;
  mt_access_program d{};  // its first lane's description, and that lane's warp, thread and block
  uint64_t warp_key = 0;
  uint32_t linear = 0;
  const Block* block = nullptr;
  // SWEEP: each lane's range and next place, copied from its description.
  struct Sweep {
    uint64_t src, dst, place, end, step, spread;
    uint32_t value, passes_left;  // passes after this one
    uint64_t first;
  };
  std::vector<Sweep> sweeps;
  std::vector<ChainState> chains;  // RANDOM: each lane's generators and tally
  std::vector<uint32_t> folds;     // SWEEP: each lane's fold, apart (a step touches every lane's)
  uint64_t step = 0;               // RANDOM: steps done
  double time = 0;
  uint32_t sm = 0;
  bool finished = false;
  // SWEEP, for the steady state (kernel_fast_forward.cpp): passes its first lane began in this
  // epoch of the launch, what the counters counted of its steps in the pass under way and in
  // the last one, and the passes it had done at each round's end of the epoch.
  struct Passes {
    uint64_t epoch = 0, marked_epoch = 0;
    uint32_t begun = 0;
    Gpu::Counts counting, last;
    std::vector<double> marked;
  } passes;
};

// The rounds of the sweeps under way: a round ends when every sweep has begun one more pass in
// this epoch (a new one each time a sweep comes or goes, or the passes are skipped).
struct SweepRounds {
  uint64_t epoch = 0;
  std::vector<uint32_t> at_pass;    // sweeps under way by passes begun in the epoch
  uint32_t sweeps = 0, others = 0;  // programs under way: sweeps, and programs of other kinds
  uint32_t round = 0;               // passes every sweep under way began in the epoch
  struct Mark {
    double time;      // at a round's end
    double progress;  // passes all sweeps did by then, those under way in part
    double backlog;   // stores still to drain, in cycles
  };
  std::vector<Mark> marks;
};

// A launch the simulated GPU refuses for its shape (the backend returns MT_LAUNCH_REFUSED).
struct Refused : Error {
  using Error::Error;
};

// Where a block of a launch goes, once placed.
struct Placement {
  uint32_t blocks_per_sm = 0;
  uint32_t max_cluster_blocks = 16;
};

class KernelRuntime {
 public:
  explicit KernelRuntime(Gpu& gpu);
  ~KernelRuntime();
  KernelRuntime(const KernelRuntime&) = delete;
  KernelRuntime& operator=(const KernelRuntime&) = delete;

  const mt_kernel_ops* ops() const { return &ops_; }
  // The state a probe starts from: the clock at 0, no dirty line; buffers stay where they are.
  void restart() {
    device_clock_ = 0;
    dirty_.clear();
  }
  // Runs the launch; throws memtopo::Error naming what was wrong (a bad launch, a thread's
  // failure, a barrier no thread can pass).
  void launch(const mt_kernel_launch& l, mt_kernel_report& report);
  uint32_t max_active_clusters(const mt_kernel_launch& l) const;
  // SMs of the largest GPC (a cluster's blocks never leave one).
  uint32_t largest_gpc() const;
  uint32_t blocks_per_sm(const mt_kernel_launch& l) const { return placement(l).blocks_per_sm; }
  // Throws Refused for a launch the device cannot run as it is shaped.
  void check_shape(const mt_kernel_launch& l) const;

  // The device memory probe kernels use: host memory the simulated GPU knows by address.
  void* alloc(uint64_t bytes);
  void free(void* p);
  void copy(void* dst, const void* src, uint64_t bytes, uint32_t kind);
  void fill(void* dst, int value, uint64_t bytes);

  // Entry points of mt_kernel_ops (kernel_ops.cpp), on the thread running now.
  void op_place(mt_thread_place* out) const;
  uint64_t op_clock() const;
  uint64_t op_globaltimer_ns();
  void op_load(uint32_t path, const uint64_t* addresses, uint32_t count, uint32_t bytes, void* out);
  void op_store(uint32_t path, uint64_t address, uint32_t bytes, const void* value);
  uint64_t op_atomic(uint32_t op, uint64_t address, uint32_t bytes, uint64_t operand, uint64_t compare);
  void op_barrier(uint32_t scope);
  void* op_shared_base(uint32_t* size) const;
  void* op_shared_static(uint32_t bytes, uint32_t align);
  void op_spend(uint64_t cycles);
  void op_program(const mt_access_program* p, mt_program_result* r);
  [[noreturn]] void op_fail(std::string message);

 private:
  // What runs next: a thread, or a step of a warp's program. 32 bytes, for the ready queue
  // moves a key at every level of each push and pop.
  struct Key {
    double clock;
    uint64_t warp;
    uint32_t lane;
    bool is_program;
    void* item;
    static Key of(Thread* t) { return {t->clock, t->warp_key, t->lane, false, t}; }
    static Key of(WarpProgram* p, uint64_t warp) { return {p->time, warp, 0, true, p}; }
    Thread* thread() const { return is_program ? nullptr : static_cast<Thread*>(item); }
    WarpProgram* program() const { return is_program ? static_cast<WarpProgram*>(item) : nullptr; }
    bool operator>(const Key& o) const {
      if (clock != o.clock) return clock > o.clock;
      if (warp != o.warp) return warp > o.warp;
      return lane > o.lane;
    }
  };
  struct Group {
    std::vector<Thread*> members;
    double clock = 0;
    uint64_t warp = 0;
    OpKind kind = OpKind::None;
    uint32_t path = 0, bytes = 0;
    uint64_t signature = 0;
  };

  // kernel_launch.cpp
  Placement placement(const mt_kernel_launch& l) const;
  void place_waiting_blocks(double now);
  Block* start_block(uint32_t linear, uint32_t sm, Cluster* cluster, uint32_t rank, double now);
  void run_scheduler();
  void abandon_launch();
  static void thread_entry(void* arg);
  void thread_done(Thread* t);
  void arrive(Barrier& b, uint32_t live, Thread* t);
  void release(Barrier& b);
  // kernel_ops.cpp
  void submit(Thread* t);
  void wait_here(Thread* t);
  bool earliest(const Thread* t) const;
  Thread* pop_ready();                // the earliest ready thread, time advanced to its clock
  void advance_to(double t);          // simulated time moves on to t
  void switch_to(Thread* from, Thread* to);  // nullptr: the scheduler
  void run_from_scheduler(Thread* t);
  void resolve_open();
  void price_global_loads(Group& g);
  // The lines of sectors_ (sorted, distinct) requested at `issued`: line_done_ gets when each
  // arrives. The time one sector's line arrives (`issued` for none).
  void request_lines(uint32_t sm, uint32_t lane, mt_space space, double issued);
  double line_done(uint64_t sector_address, double issued) const;
  // sectors_ stored at `issued`; returns when the storing warp may go on (a store waits for a
  // place among the SM's requests in flight).
  double store_sectors(uint32_t sm, double issued);
  // Dirty lines the L2 evicted since the last look are written to DRAM from `t` on.
  void write_back_evicted(double t);
  void sorted_distinct_sectors();
  // The sectors of `bytes` at host address `host` onto sectors_, by their simulated addresses.
  void push_sectors(uint64_t host, uint32_t bytes) {
    const uint64_t a = device_address(host);
    for (uint64_t x = a >> sector_shift_; x <= (a + bytes - 1) >> sector_shift_; ++x) sectors_.push_back(x << sector_shift_);
  }
  // kernel_programs.cpp
  void start_program(Group& g);
  void run_program(WarpProgram* p);
  void run_follow(WarpProgram* p);
  void run_random(WarpProgram* p);
  void run_sweep(WarpProgram* p);
  // A sweep of shared memory (or the cluster's): its bounds at the call, and one step, every
  // lane's ILP loads priced as the warp's shared loads.
  void check_shared_sweep(Thread* t, const mt_access_program& p);
  void shared_sweep_step(WarpProgram* p);
  // Where a program's load of `bytes` at `address` is; nullptr after recording the failure.
  const char* program_bytes(Thread* t, uint32_t path, uint64_t address, uint32_t bytes);
  void finish_program(WarpProgram* p);
  // kernel_fast_forward.cpp: the rounds of the sweeps under way, and the steady state's passes
  // priced at once.
  void sweep_started(WarpProgram* p);
  void sweep_passed(WarpProgram* p);  // its first lane began another pass
  void sweep_ended(WarpProgram* p);
  void new_epoch();
  void count_step(WarpProgram* p, const Gpu::Counts& before);  // what a step of it counted
  void try_fast_forward();
  void fast_forward(double cycles);
  void price_shared(Group& g);
  // When one warp's shared or cluster loads (lane_addresses_, `per_lane` of `bytes` each, in
  // lane order) of `block` issued at `issued` are in.
  double shared_loads_done(const Block& block, uint32_t path, uint32_t per_lane, uint32_t bytes, double issued);
  // Bank turns of one warp's shared-memory loads of `bytes` each, `per_lane` consecutive
  // addresses per lane in lane order.
  int64_t bank_turns(const std::vector<uint64_t>& addresses, uint32_t per_lane, uint32_t bytes) const;
  void price_store(Group& g);
  void price_atomic(Group& g);
  // kernel_memory.cpp: where an operation's bytes are (failing the thread if nowhere)
  char* bytes_at(Thread* t, uint32_t path, uint64_t address, uint32_t bytes);
  char* shared_bytes(Thread* t, uint32_t path, uint64_t address, uint32_t bytes);
  char* global_bytes(uint64_t address, uint64_t bytes);
  // The simulated GPU's address of host address `a` in a buffer (`a` itself where in none): the
  // caches, TLBs and partitions see these, so that a run measures the same whatever addresses
  // the host's allocator returns (kernel_memory.cpp).
  uint64_t device_address(uint64_t a) {
    if (a < last_buffer_ || a >= last_buffer_end_) global_bytes(a, 1);
    return a >= last_buffer_ && a < last_buffer_end_ ? a - last_buffer_ + last_device_ : a;
  }


  Gpu& gpu_;
  mt_kernel_ops ops_{};
  ThreadStacks stacks_;
  Context scheduler_;
  struct Placed {
    uint64_t bytes, device;  // the buffer's size and its simulated GPU address
  };
  std::map<uint64_t, Placed> buffers_;     // host base -> where the buffer is
  std::map<uint64_t, uint64_t> devices_;   // simulated GPU base -> bytes of the buffers lent
  uint64_t buffer_bytes_ = 0;

  // The launch in progress.
  const mt_kernel_launch* launch_ = nullptr;
  std::vector<std::unique_ptr<Block>> blocks_;
  std::vector<std::unique_ptr<Cluster>> clusters_;
  std::vector<std::unique_ptr<WarpProgram>> programs_;
  SweepRounds rounds_;
  uint32_t live_threads_ = 0, program_lanes_ = 0;  // threads not done; of them, lanes in programs
  std::vector<uint32_t> free_slots_;  // per SM: blocks it can still take
  uint32_t next_block_ = 0, total_blocks_ = 0, cluster_size_ = 1;
  Placement placement_;
  ReadyQueue<Key> ready_;
  Group open_;
  std::vector<Thread*> spare_members_;  // a priced group's member list, kept for its capacity
  Thread* current_ = nullptr;
  Thread* finished_ = nullptr;  // the thread that just ended (its stack goes back)
  Thread* deferred_ = nullptr;  // to run from the scheduler: its stack is the last runner's
  double now_ = 0;              // the latest clock a thread was resumed at
  double forgotten_ = 0;        // servers' bookings before this are dropped
  uint64_t last_buffer_ = 0, last_buffer_end_ = 0, last_device_ = 0;  // the buffer the last access found
  std::vector<uint64_t> sectors_;  // scratch of pricing
  std::vector<uint64_t> lane_addresses_;
  mutable std::vector<std::pair<uint64_t, uint64_t>> bank_pairs_;
  uint32_t sector_shift_ = 5, line_shift_ = 7;  // the L2's sectors and lines (powers of two)
  uint32_t counted_sectors_ = 1;                 // 32 B sectors in one of the L2's (the counts' unit)
  // What one request to the L2 carries: the sectors of one 128-byte block (a warp's coalesced
  // lanes), or of one L2 line where lines are longer. [sim.memory]'s requests in flight count these.
  uint32_t request_shift_ = 7;
  std::vector<std::pair<uint64_t, double>> line_done_;
  // The longest interruption among the lines request_lines priced last: the thread was away
  // (its clock runs on), but the data and the queues did not wait (sim_gpu.hpp, Gpu::Noise).
  double away_ = 0;
  double end_ = 0, drain_ = 0;
  // L2 lines (address >> line bits) stores wrote, not yet written back; looked up for every line
  // the L2 evicts, so an open-addressing set.
  boost::unordered_flat_set<uint64_t> dirty_;
  std::string failure_;
  double device_clock_ = 0;  // the SM clock's count across launches
  uint64_t writes_ = 0;      // stores and atomics that changed memory, for waits on the timer

  // Resources that make loads queue, per SM and for the GPU.
  std::vector<Server> issue_, l1_;
  std::vector<InFlight> l2_in_flight_, dram_in_flight_;
  // The L2's and DRAM's ports, reads and writes alike: a request books bytes / its direction's
  // rate of their time (servers of one unit a cycle), so a copy's reads and writes share them.
  Server l2_port_{1.0}, dram_port_{1.0};
  double l2_read_rate_ = 0, l2_write_rate_ = 0, dram_read_rate_ = 0, dram_write_rate_ = 0;  // bytes a cycle
  static double book(Server& port, double t, double bytes, double bytes_per_cycle) {
    return bytes_per_cycle > 0 ? port.serve(t, bytes / bytes_per_cycle) : t;
  }
  // DRAM's port: a direction's rate times what the bus's turns leave of it, by how mixed the
  // last kTurnBytes booked were (dram_write_share_: the writes' share, decaying by bytes).
  double book_dram(double t, double bytes, bool write);
  static constexpr double kTurnBytes = 64 * 1024;
  double dram_turn_factor_ = 1, dram_write_share_ = 0;
  std::vector<Server> cluster_port_;
};

}  // namespace memtopo::sim::kernel
