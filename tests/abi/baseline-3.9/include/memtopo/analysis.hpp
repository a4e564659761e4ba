// memtopo analysis toolkit (library memtopo::analysis): robust statistics, the two-sample
// Kolmogorov-Smirnov test, change-point detection, latency levels and miss patterns, and the
// size-search helpers. docs/analysis.md describes each method and where it comes from.
// Chase-array recipes are in memtopo/recipes.hpp.
#pragma once

#include "memtopo/analysis/changepoint.hpp"
#include "memtopo/analysis/counts.hpp"
#include "memtopo/analysis/extrapolate.hpp"
#include "memtopo/analysis/gf2.hpp"
#include "memtopo/analysis/ks.hpp"
#include "memtopo/analysis/levels.hpp"
#include "memtopo/analysis/robust.hpp"
#include "memtopo/analysis/search.hpp"
#include "memtopo/analysis/stopping.hpp"
#include "memtopo/analysis/units.hpp"
