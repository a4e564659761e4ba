#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages memtopo builds with, when they are missing.
# Idempotent and quiet when everything is already there. The CUDA toolkit is optional
# (without it the simulated GPU is the only backend) and is not installed here.
set -euo pipefail

packages=(
  cmake ninja-build g++ git pkg-config
  libboost1.81-dev        # Boost.DLL (plugin loading), Boost.Math (KS distribution)
  libboost-context1.81-dev  # Boost.Context: the simulated GPU runs probe kernels' threads as contexts
  libtomlplusplus-dev     # TOML++
  libspdlog-dev           # logging
  libcli11-dev            # command line
  catch2                  # tests
  nlohmann-json3-dev      # JSON for schema validation
  libvalijson-dev         # JSON Schema validation
  clang                   # the hardened run (scripts/test-hardened): ASan, UBSan, libFuzzer
  libclang-rt-14-dev      # clang's sanitizer and libFuzzer runtimes
  llvm-14                 # llvm-symbolizer: readable sanitizer stacks
  python3-matplotlib      # memtopo report's plots (optional: the report needs it, nothing else)
  chromium                # the report's browser test (headless; skipped without it)
  libhwloc-dev            # the GPU's NUMA node and host memory bound to it, export --hwloc (optional)
  hwloc                   # lstopo-no-graphics, for the test that reads export --hwloc back
  libopenmpi-dev          # fleet runs under mpirun (optional: CMake builds without it)
  openmpi-bin             # mpirun, for the fleet test
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# --no-install-recommends keeps valijson from pulling in its optional adapters' stacks.
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
