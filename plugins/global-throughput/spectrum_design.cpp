// The latency spectrum's chase (spectrum_design.hpp).
#include "spectrum_design.hpp"

#include <algorithm>
#include <stdexcept>

namespace global_throughput {
namespace {

constexpr uint64_t kUnitBytes = 32;   // the smallest sector a cache fetches: revisits stay inside one
constexpr uint64_t kChunkBytes = 4096;
// Lines of the L2 and TLB sets per line of the L1: a cyclic set this much larger than the cache
// misses it under LRU and, all but a few percent, under random or non-uniform replacement.
constexpr uint64_t kSetOverL1 = 3;

uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }
uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

void check(const SpectrumInputs& in) {
  auto bad = [](const std::string& what) { throw std::invalid_argument("latency spectrum: " + what); };
  if (in.line_bytes < 4 || (in.line_bytes & (in.line_bytes - 1)))
    bad("line_bytes " + std::to_string(in.line_bytes) + " is not a power of two of at least 4");
  if (in.l1_bytes < in.line_bytes) bad("the L1 bound of " + std::to_string(in.l1_bytes) + " bytes holds no line");
  if (in.rounds == 0) bad("rounds must be > 0");
  if (in.page_bytes < in.line_bytes) bad("page_bytes " + std::to_string(in.page_bytes) + " is below a line");
}

// Everything the layout decides before the offsets are written.
struct Layout {
  uint64_t line = 0, unit = 0, step = 0;  // step: a chunk and a line, so neighbours change set and partition
  uint64_t hot_lines = 0, hot_free_words = 0;
  uint64_t l2_lines = 0;
  uint64_t tlb_pages = 0, tlb_per_page = 0;
  uint64_t dram_base = 0, l2_base = 0, hot_base = 0, tlb_base = 0;
  uint64_t dram_end = 0, l2_end = 0, hot_end = 0, tlb_end = 0, footprint = 0;
};

void place(const SpectrumInputs& in, Layout& l) {
  l.dram_base = 0;
  l.dram_end = in.rounds * l.step;
  l.l2_base = align_up(l.dram_end, in.page_bytes);
  l.l2_end = l.l2_base + l.l2_lines * l.line;
  l.hot_base = align_up(l.l2_end, kChunkBytes);
  l.hot_end = l.hot_base + l.hot_lines * l.line;
  l.tlb_base = align_up(l.hot_end, in.page_bytes);
  l.tlb_end = l.tlb_pages ? l.tlb_base + (l.tlb_pages - 1) * in.page_bytes + l.tlb_pages * l.tlb_per_page * l.line : l.hot_end;
  // The GPU backend uploads the array in order, which leaves its end in the L2: twice the L2
  // written after the DRAM lines pushes them out, so that their first load goes to memory.
  l.footprint = align_up(std::max(l.tlb_end, l.dram_end + 2 * in.l2_bytes), l.line);
}

Layout lay_out(const SpectrumInputs& in, std::vector<std::string>& notes) {
  Layout l;
  l.line = in.line_bytes;
  l.unit = std::min(kUnitBytes, l.line);
  l.step = kChunkBytes + l.line;
  // The hot set: every unit of a line is touched once in the warm-up, the other words are the
  // timed revisits, two per round.
  const uint64_t words = l.line / 4, units = l.line / l.unit;
  l.hot_free_words = words - units;
  if (l.hot_free_words < 2) throw std::invalid_argument("latency spectrum: a line of " + std::to_string(l.line) +
                                                        " bytes has no two words to revisit");
  l.hot_lines = ceil_div(in.rounds, l.hot_free_words / 2);
  // The L2 set: three L1s, at most a quarter of the L2 so that it and the TLB set stay in it.
  const uint64_t revisits = l.unit / 4 - 1;  // words of a line's first unit past the warm-up's
  l.l2_lines = std::max(kSetOverL1 * in.l1_bytes / l.line, ceil_div(in.rounds, revisits));
  if (in.l2_bytes && l.l2_lines * l.line > in.l2_bytes / 4) {
    l.l2_lines = std::max(in.l2_bytes / 4 / l.line, ceil_div(in.rounds, revisits));
    notes.push_back("the L2 set is a quarter of the L2 (" + std::to_string(l.l2_lines) + " lines), less than " +
                    std::to_string(kSetOverL1) + " L1s: some of its loads may hit the L1");
  }
  l.tlb_pages = in.tlb_pages;
  if (l.tlb_pages) {
    l.tlb_per_page = std::max(ceil_div(l.l2_lines, l.tlb_pages), ceil_div(in.rounds, l.tlb_pages * revisits));
    // TLB line n lies n lines into its page (tlb_line below), so every page holds lines up to
    // pages x lines per page lines in.
    if (l.tlb_pages * l.tlb_per_page * l.line > in.page_bytes) {
      l.tlb_per_page = in.page_bytes / l.line / l.tlb_pages;
      if (l.tlb_per_page * l.tlb_pages * revisits < in.rounds) {
        // Small pages, many of them (a TLB level of small pages): the other levels still stand.
        notes.push_back("no TLB segment: " + std::to_string(l.tlb_pages) + " pages of " +
                        std::to_string(in.page_bytes) + " bytes hold too few lines for " + std::to_string(in.rounds) +
                        " rounds");
        l.tlb_pages = l.tlb_per_page = 0;
      } else {
        notes.push_back("pages of " + std::to_string(in.page_bytes) + " bytes hold " +
                        std::to_string(l.tlb_per_page) + " lines each: the TLB set is smaller than the L2 set and may hit the L1");
      }
    }
  }
  place(in, l);
  if (l.footprint > in.max_footprint_bytes && l.tlb_pages) {
    notes.push_back("no TLB segment: " + std::to_string(l.tlb_pages) + " pages of " + std::to_string(in.page_bytes) +
                    " bytes pass max_footprint_bytes");
    l.tlb_pages = l.tlb_per_page = 0;
    place(in, l);
  }
  if (l.footprint > in.max_footprint_bytes) {
    if (l.hot_end > in.max_footprint_bytes)
      throw std::invalid_argument("latency spectrum: max_footprint_bytes " + std::to_string(in.max_footprint_bytes) +
                                  " is below the " + std::to_string(l.hot_end) + " bytes of the DRAM, L2 and L1 sets");
    l.footprint = in.max_footprint_bytes / l.line * l.line;
    notes.push_back("the array stops at max_footprint_bytes, less than twice the L2 past the DRAM lines: on a GPU "
                    "some of them may still be in the L2 from the upload");
  }
  return l;
}

}  // namespace

bool SpectrumDesign::segment_of(uint64_t element, Segment& out) const {
  const uint64_t byte = 4 * element;
  for (const Region& r : regions) {
    if (byte >= r.begin && byte < r.end) {
      out = r.segment;
      return true;
    }
  }
  return false;
}

SpectrumDesign design_spectrum(const SpectrumInputs& in) {
  check(in);
  SpectrumDesign d;
  const Layout l = lay_out(in, d.notes);
  d.hot_lines = l.hot_lines;
  d.l2_lines = l.l2_lines;
  d.tlb_pages = l.tlb_pages;
  d.tlb_lines_per_page = l.tlb_per_page;
  d.footprint_bytes = l.footprint;
  d.regions = {{l.dram_base, l.dram_end, Segment::Dram}, {l.l2_base, l.l2_end, Segment::L2},
               {l.hot_base, l.hot_end, Segment::L1}};
  if (l.tlb_pages) d.regions.push_back({l.tlb_base, l.tlb_end, Segment::Tlb});
  const uint64_t tlb_lines = l.tlb_pages * l.tlb_per_page;
  // TLB line n: page n % pages, n lines into it. Lines at the same place in pages a power of two
  // apart share a cache set; n lines in, the set's lines are as spread as a contiguous set's.
  auto tlb_line = [&](uint64_t n) { return l.tlb_base + (n % l.tlb_pages) * in.page_bytes + n * l.line; };
  // Warm-up: the L2 set, then the TLB set (its lines in the order the rounds revisit them), then
  // the hot set last, so that the other sets' first loads do not push it out of the L1.
  std::vector<uint64_t>& o = d.offsets;
  for (uint64_t j = 0; j < l.l2_lines; ++j) o.push_back(l.l2_base + j * l.line);
  for (uint64_t n = 0; n < tlb_lines; ++n) o.push_back(tlb_line(n));
  for (uint64_t h = 0; h < l.hot_lines; ++h)
    for (uint64_t u = 0; u < l.line; u += l.unit) o.push_back(l.hot_base + h * l.line + u);
  // One line of each page the DRAM lines lie in, none of them: the first DRAM load of a page
  // would otherwise walk the page table.
  for (uint64_t page = l.dram_base; page < l.dram_end; page += in.page_bytes) {
    uint64_t line = page;
    while ((line - l.dram_base) % l.step == 0) line += l.line;
    o.push_back(line);
  }
  d.warmup_steps = o.size();
  // The hot set's revisits: the words that are not the first of a unit, two per round.
  std::vector<uint64_t> free_words;
  for (uint64_t w = 0; w < l.line; w += 4)
    if (w % l.unit) free_words.push_back(w);
  for (uint64_t r = 0; r < in.rounds; ++r) {
    const uint64_t hot = l.hot_base + (r % l.hot_lines) * l.line, pair = 2 * (r / l.hot_lines);
    o.push_back(hot + free_words.at(pair));
    o.push_back(hot + free_words.at(pair + 1));
    o.push_back(l.l2_base + (r % l.l2_lines) * l.line + 4 * (1 + r / l.l2_lines));
    if (tlb_lines) o.push_back(tlb_line(r % tlb_lines) + 4 * (1 + r / tlb_lines));
    o.push_back(l.dram_base + r * l.step);
  }
  d.steps = o.size() - d.warmup_steps;
  return d;
}

}  // namespace global_throughput
