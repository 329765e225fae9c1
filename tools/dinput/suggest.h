// "did you mean ...?" for a misspelt function, keyword argument, option or command.
#ifndef DINPUT_TOOL_SUGGEST_H_
#define DINPUT_TOOL_SUGGEST_H_

#include <string>
#include <vector>

namespace dinput_tool {

// The edit distance between a and b: insertions, deletions, substitutions and swaps of two
// neighbouring characters each count 1 (the optimal string alignment distance).
size_t edit_distance(const std::string& a, const std::string& b);

// The candidate closest to `word`, when it is close enough to be the name meant (at most
// one edit for names of up to four characters, two for longer ones, and fewer edits than
// the word has characters); "" otherwise, so that a word unlike every name gets no
// suggestion. Ties go to the earliest candidate.
std::string closest_name(const std::string& word, const std::vector<std::string>& candidates);

// " (did you mean 'shuffle'?)" when closest_name finds one, else "": for appending to the
// name in an error message.
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

// The same over any range of items with a name, e.g. did_you_mean(word, specs, &Spec::name).
template <typename Range, typename NameOf>
std::string did_you_mean(const std::string& word, const Range& items, NameOf name_of) {
  std::vector<std::string> names;
  for (const auto& item : items) names.emplace_back(name_of(item));
  return did_you_mean(word, names);
}

}  // namespace dinput_tool

#endif  // DINPUT_TOOL_SUGGEST_H_
