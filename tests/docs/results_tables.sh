#!/usr/bin/env bash
# docs/results: the current values of h100.md and h200.md are what their committed topologies
# give (scripts/results_tables.py --check), every repository path and link the results and their
# logs name exists (--check-paths), none cites a device run's scratch folder (.carry); then the
# script's own tests on a hand-made topology (test_results_tables.py).
# Usage: results_tables.sh [SOURCE_DIR [PYTHON]]
set -euo pipefail
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
py=${2:-python3}
"$py" -c 'import tomllib' 2> /dev/null || { echo "SKIPPED: $py has no tomllib (Python 3.11)"; exit 77; }
cd "$src"
"$py" scripts/results_tables.py --check docs/results/h100.md docs/results/h200.md
echo "docs/results/h100.md, h200.md: the generated tables match their topologies"
"$py" scripts/results_tables.py --check-paths docs/results
echo "docs/results: every repository path and link named exists"
if grep -rn '\.carry' docs/results; then
  echo "docs/results cites .carry (a device run's scratch folder, not in the repository): cite the committed file or the script instead" >&2
  exit 1
fi
"$py" -B tests/docs/test_results_tables.py -v
