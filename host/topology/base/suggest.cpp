// Suggestions by the optimal string alignment distance (Damerau-Levenshtein without repeated
// edits of one substring): a swap of two neighbours is the commonest typo after a dropped letter.
#include "topology/base/suggest.hpp"

#include <algorithm>

namespace memtopo::host {

size_t edit_distance(std::string_view a, std::string_view b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i)
    for (size_t j = 1; j <= m; ++j) {
      const size_t change = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + change});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

std::string nearest_name(std::string_view word, const std::vector<std::string>& candidates) {
  // Words of 64 characters and more are no typos worth a quadratic table each.
  if (word.empty() || word.size() > 64) return "";
  const size_t allowed = word.size() <= 4 ? 1 : word.size() <= 8 ? 2 : 3;
  std::vector<std::string> sorted = candidates;
  std::sort(sorted.begin(), sorted.end());
  std::string best;
  size_t best_distance = allowed + 1;
  for (const auto& c : sorted) {
    if (c == word || c.size() > word.size() + allowed || c.size() + allowed < word.size()) continue;
    const size_t d = edit_distance(word, c);
    if (d < best_distance) best = c, best_distance = d;
  }
  return best;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string name = nearest_name(word, candidates);
  return name.empty() ? "" : "; did you mean '" + name + "'?";
}

}  // namespace memtopo::host
