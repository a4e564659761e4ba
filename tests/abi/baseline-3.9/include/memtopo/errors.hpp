// memtopo probe SDK: the exceptions a probe throws and the metadata of a result. The
// trampoline in memtopo/plugin.hpp turns each exception into a status at the C boundary.
#pragma once

#include <stdexcept>
#include <string>

#include "memtopo/abi.h"

namespace memtopo {

// A deliberate skip: the probe cannot measure this on this device.
struct Skip : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Measured, but the data cannot settle the value; the message says why. Results stored
// before the throw are kept.
struct NotDeterminable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A failure reported by the engine or the host.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class Bound { Exact = MT_BOUND_EXACT, AtLeast = MT_BOUND_AT_LEAST, AtMost = MT_BOUND_AT_MOST };

struct ResultInfo {
  double confidence = 1.0;
  Bound bound = Bound::Exact;
  std::string note;
  // How a second method checked the value (mt_result_info, memtopo/verify.hpp): "" not checked,
  // "counters" or "unverified"; the bytes the counters counted; what was compared, or why not.
  std::string verified;
  double counted_bytes = 0;
  std::string verify_note;
};

}  // namespace memtopo
