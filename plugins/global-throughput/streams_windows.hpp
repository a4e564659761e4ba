// Several runs of one point's two windows taken together (docs/global-throughput.md, "Two
// windows").
#pragma once

#include <vector>

#include "streams_run.hpp"

namespace global_throughput {

// The runs' passes alone from the quickest long window less the quickest short one. An
// interruption only lengthens a window, and one at a window's end (a warp held up while the
// others have finished) adds its whole length to that window alone: the difference of one
// run's two windows then moves by as much either way, and the highest of several such
// differences is the one whose short window was held up. The quickest of each is the window
// with the fewest such cycles. `runs` of one launch; runs without two windows: the first, as
// it is.
StreamRun quickest_windows(const std::vector<StreamRun>& runs);

}  // namespace global_throughput
