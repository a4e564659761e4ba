// memtopo device toolkit, all of it: threads, clocks, loads per path, shared memory and
// clusters, atomics, sample recording, and the launch helper. A probe's kernel written with it
// runs on a CUDA GPU and on the simulated GPU (memtopo/device/portable.hpp says how).
#pragma once

#include "memtopo/device/atomic.hpp"
#include "memtopo/device/clock.hpp"
#include "memtopo/device/keep.hpp"
#include "memtopo/device/launch.hpp"
#include "memtopo/device/load.hpp"
#include "memtopo/device/portable.hpp"
#include "memtopo/device/programs.hpp"
#include "memtopo/device/random.hpp"
#include "memtopo/device/recorder.hpp"
#include "memtopo/device/shared.hpp"
#include "memtopo/device/thread.hpp"
