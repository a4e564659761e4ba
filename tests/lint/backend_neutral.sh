#!/bin/sh
# No probe and no file of the SDK's library asks which backend it runs on (memtopo issue 63):
# a probe that took another path on the simulated GPU would not be tested in CI by what it runs
# on a GPU. What a backend's clock and cost ask of an experiment (repeats, window sizes,
# optional points) is the device toolkit's to answer (sdk/include/memtopo/device/launch.hpp).
# Usage: backend_neutral.sh SOURCE_DIR. Prints each offending line; exit 1 if any.
src=${1:?usage: backend_neutral.sh SOURCE_DIR}
cd "$src" || exit 2
# The backend's name, the simulated-GPU test, the simulator's launch entry, the clock's kind.
pattern='backend\(\)\.name\(\)|->name, *"(sim|cuda)"|"(sim|cuda)" *== *|simulated\(|launch_kernel|exact_clock|clock_kind'
found=$(find plugins sdk/src -type f \( -name '*.cpp' -o -name '*.cu' -o -name '*.hpp' -o -name '*.cuh' -o -name '*.h' \) \
          -not -path '*/tests/*' | sort | xargs grep -n -E "$pattern" 2>/dev/null | grep -v -E '^[^:]+:[0-9]+: *//')
if [ -n "$found" ]; then
  echo "probes and the SDK's library must not test the backend; ask the device toolkit instead:"
  echo "$found"
  exit 1
fi
echo "no backend test in plugins/ or sdk/src/"
