// global-throughput/latency-spectrum: the chase whose loads meet every level of the hierarchy in
// one series (docs/global-throughput.md, "Latency spectrum"). Plain C++: the layout of the
// chase, free of measurement, so that tests check it without a backend.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "spectrum_analysis.hpp"

namespace global_throughput {

// What the design is sized from: measured keys where a probe gave them, else the device info.
struct SpectrumInputs {
  uint64_t line_bytes = 128;       // L1 line: the unit of a cache miss on the .ca path
  uint64_t l1_bytes = 0;           // an upper bound on the L1 one thread sees
  uint64_t l2_bytes = 0;           // the L2 (all partitions)
  uint64_t page_bytes = 2 << 20;   // the page of the TLB level to miss
  uint64_t tlb_pages = 0;          // pages the TLB segment cycles through; 0: no TLB segment
  uint64_t rounds = 512;           // timed rounds (each one load of every segment, two of the L1 one)
  uint64_t max_footprint_bytes = 256ULL << 20;  // the explicit array is host memory too
};

// A byte range of the array whose loads belong to one segment.
struct Region {
  uint64_t begin = 0, end = 0;
  Segment segment = Segment::L1;
};

struct SpectrumDesign {
  std::vector<uint64_t> offsets;   // byte offsets in visit order: the warm-up, then the timed rounds
  uint64_t warmup_steps = 0;
  uint64_t steps = 0;
  uint64_t footprint_bytes = 0;
  uint64_t hot_lines = 0;          // lines of the L1 segment (the pointer chase for the timing cost)
  uint64_t l2_lines = 0;           // lines of the L2 segment
  uint64_t tlb_pages = 0, tlb_lines_per_page = 0;
  std::vector<Region> regions;
  std::vector<std::string> notes;  // what the design had to give up, for the log and the result note

  // The segment of element `e` (4-byte index); false when it lies in no region.
  bool segment_of(uint64_t element, Segment& out) const;
};

// The chase: per timed round two L1 loads (two words of one line of a small hot set), one L2
// load (a set three times the L1, revisited through another word of a line), one TLB load (a
// set of lines as large spread over more pages than the TLB holds), one DRAM load (a line no
// earlier load touched). Throws std::invalid_argument when the inputs leave no room for it.
SpectrumDesign design_spectrum(const SpectrumInputs& in);

}  // namespace global_throughput
