#include "memtopo/analysis/stopping.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

#include "memtopo/analysis/robust.hpp"

namespace memtopo::analysis {

double relative_noise(const std::vector<double>& samples) {
  if (samples.size() < 2) return std::numeric_limits<double>::quiet_NaN();
  const double m = median(samples);
  if (!(std::fabs(m) > 0)) return std::numeric_limits<double>::quiet_NaN();
  return mad(samples, true) / std::sqrt(double(samples.size())) / std::fabs(m);
}

StopResult repeat_until_stable(const std::function<double()>& sample, const StopRule& rule,
                               const std::function<double()>& elapsed_s) {
  StopResult r;
  const size_t most = std::max<size_t>(rule.max_samples, 1), least = std::min(std::max<size_t>(rule.min_samples, 1), most);
  char text[128];
  while (r.samples.size() < most) {
    r.samples.push_back(sample());
    if (r.samples.size() < least) continue;
    r.relative_noise = relative_noise(r.samples);
    if (r.samples.size() >= 2 && r.relative_noise <= rule.max_relative_noise) {
      r.converged = true;
      std::snprintf(text, sizeof text, "noise %.2f %% after %zu samples", 100 * r.relative_noise, r.samples.size());
      break;
    }
    if (elapsed_s() >= rule.max_seconds) {
      std::snprintf(text, sizeof text, "%zu samples in the time budget of %g s, noise %.2f %%", r.samples.size(),
                    rule.max_seconds, 100 * r.relative_noise);
      break;
    }
  }
  if (!r.converged && r.samples.size() >= most) {
    r.relative_noise = relative_noise(r.samples);
    std::snprintf(text, sizeof text, "%zu samples (the most), noise %.2f %%", r.samples.size(), 100 * r.relative_noise);
  }
  r.why = text;
  r.median = median(r.samples);
  return r;
}

}  // namespace memtopo::analysis
