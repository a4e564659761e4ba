// Hardware counts of the memory hierarchy (mt_backend::count) from CUPTI's range profiler.
// CUPTI is loaded when first asked for, so a machine without it still measures (its values
// then say they are unverified). docs/measurement.md, "Counters".
#pragma once

#include <memory>
#include <string>

#include "memtopo/measure.h"

namespace memtopo::cuda {

class CuptiCounts {
 public:
  explicit CuptiCounts(int ordinal);
  ~CuptiCounts();
  CuptiCounts(const CuptiCounts&) = delete;
  CuptiCounts& operator=(const CuptiCounts&) = delete;

  // mt_backend::count: runs work once per pass the counters need, inside one range. Returns 0,
  // MT_COUNT_REFUSED (CUPTI missing or not permitted here: *err says why, the work has not
  // run), work's non-zero return, or 1 on a CUPTI failure (*err says which call).
  int count(int (*work)(void*), void* arg, mt_counts* out, std::string* err);

 private:
  struct Session;
  int ordinal_;
  std::unique_ptr<Session> session_;  // set up on the first count
  std::string refused_;               // why counting cannot work in this process, once known
};

}  // namespace memtopo::cuda
