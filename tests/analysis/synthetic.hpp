// Synthetic series for the analysis tests. Own normal generator (Box-Muller on mt19937_64):
// std distributions differ between standard libraries, so these series are the same everywhere.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace synthetic {

class Noise {
 public:
  explicit Noise(uint64_t seed) : gen_(seed) {}
  double uniform() { return (static_cast<double>(gen_() >> 11) + 0.5) * (1.0 / 9007199254740992.0); }
  double normal() {
    const double u = uniform(), v = uniform();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
  }
  uint64_t below(uint64_t n) { return gen_() % n; }

 private:
  std::mt19937_64 gen_;
};

// Piecewise-constant levels[k] on [edges[k], edges[k+1]) plus normal noise of sd sigma.
inline std::vector<double> steps(const std::vector<size_t>& edges, const std::vector<double>& levels, double sigma,
                                 uint64_t seed) {
  Noise noise(seed);
  std::vector<double> x;
  for (size_t k = 0; k < levels.size(); ++k)
    for (size_t i = edges[k]; i < edges[k + 1]; ++i) x.push_back(levels[k] + sigma * noise.normal());
  return x;
}

}  // namespace synthetic
