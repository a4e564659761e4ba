// memtopo device toolkit for probes that bring their own kernels (include from .cu files):
// clock reads that wait for a load, %smid and SM claiming, cluster rank, uses of a value
// the compiler cannot drop, timed loads for every memory path, and a sample recorder. The
// host side (buffers, launches) is memtopo/cuda/launch.cuh.
#pragma once

#include "memtopo/cuda/clock.cuh"
#include "memtopo/cuda/keep.cuh"
#include "memtopo/cuda/load.cuh"
#include "memtopo/cuda/recorder.cuh"
#include "memtopo/cuda/sm.cuh"
