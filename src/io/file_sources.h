// Sources that read files. Each is a FileSource, so FILE auto-sharding can split its list.
#pragma once

#include <string>
#include <vector>

#include "data/dataset.h"

namespace dinput {

// One bytes scalar per line; "\n" or "\r\n" ends a line, the last line needs none.
DatasetPtr make_text_lines(std::vector<std::string> files);

// The names of the files matching the glob patterns (sorted; shuffled per iterator when
// `shuffle`, seed < 0 meaning random). NOT_FOUND when nothing matches.
DatasetPtr make_list_files(const std::vector<std::string>& patterns, bool shuffle, int64_t seed);

}  // namespace dinput
