#include "suggest.h"

#include <algorithm>

namespace dinput_tool {

size_t edit_distance(const std::string& a, const std::string& b) {
  // Three rows of the dynamic-programming table: two back for the swap of neighbours.
  std::vector<size_t> before(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        current[j] = std::min(current[j], before[j - 2] + 1);
      }
    }
    before.swap(previous);
    previous.swap(current);
  }
  return previous[b.size()];
}

std::string closest_name(const std::string& word, const std::vector<std::string>& candidates) {
  const size_t limit =
      std::min<size_t>(word.size() <= 4 ? 1 : 2, word.size() - (word.empty() ? 0 : 1));
  std::string best;
  size_t best_distance = limit + 1;
  for (const std::string& candidate : candidates) {
    const size_t d = edit_distance(word, candidate);
    if (d < best_distance && d > 0) {
      best = candidate;
      best_distance = d;
    }
  }
  return best;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string name = closest_name(word, candidates);
  return name.empty() ? "" : " (did you mean '" + name + "'?)";
}

}  // namespace dinput_tool
