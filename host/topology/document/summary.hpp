// The short human summary `memtopo run` prints at the end: one line per memory element, in
// the spirit of deviceQuery. Generic over element tables: known keys get short labels and
// formatted units, the others are listed compactly while the line has room, then counted.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "topology/document/outcome.hpp"

namespace memtopo::host {

// Lines for the results that are kept (ok and not determinable probes): device first, then
// the other elements alphabetically. Empty when nothing was measured.
std::string render_summary(const std::vector<ProbeOutcome>& outcomes);

// The summary of a run of several GPUs: one column per GPU, one row per known key of each
// element that any GPU has ("l2 size"), then each GPU's tally of probe statuses.
struct SummaryColumn {
  std::string label;  // "cuda:3"
  std::vector<ProbeOutcome> outcomes;
  std::string tally;  // "41 ok, 7 not determinable" or "failed: ..."
};
std::string render_summary_columns(const std::vector<SummaryColumn>& columns);

// The rows of render_summary_columns without the tally: `rows[i]` is {"l2 size", a cell per
// column ("-" where a column lacks the key)}, `numbers[i]` the number behind each cell (NaN
// where it is no scalar number or absent), for ratios (memtopo compare).
struct SummaryTable {
  std::vector<std::string> header;  // the column labels
  std::vector<std::vector<std::string>> rows;
  std::vector<std::vector<double>> numbers;
  std::vector<std::string> keys;  // per row: "l2.size_bytes"
  // Per row and column the value in its key's unit for a spreadsheet: a number, numbers
  // joined by ';' for a list, the text of a string; "" where the column lacks the key.
  std::vector<std::vector<std::string>> plain;
  // Per row and column whether the value is a bound (">= 520"): no ratio is taken with it.
  std::vector<std::vector<bool>> bounded;
};
SummaryTable summary_table(const std::vector<SummaryColumn>& columns);

// Value formatting used by the summary (exposed for tests):
// 245760 -> "240 KiB", 1536 -> "1536 B"; whole GiB/MiB/KiB only.
std::string format_bytes(int64_t bytes);
// 33.06 -> "33.1 cyc".
std::string format_cycles(double cycles);
// A value of `key` as JSON (what fleet and diff hold), in the unit its name says: 1.74e11 of a
// _bytes_per_second key -> "174 GB/s"; a list as "[a, b, c]" (its first `max_items`, then how
// many); anything else as JSON text.
std::string format_json_value(const std::string& key, const nlohmann::json& value, size_t max_items = 8);

}  // namespace memtopo::host
