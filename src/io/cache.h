// cache(): the elements of a dataset's first full pass kept, in memory or in a file, and
// delivered from there by later passes (docs/cache.md).
#pragma once

#include <string>

#include "data/dataset.h"

namespace dinput {

// filename "": in memory, shared by the iterators of this node. Otherwise the file
// `filename`: written (atomically, beside it) during the first full pass when it does not
// exist, read back when it does. A file written by another pipeline is FAILED_PRECONDITION
// naming it; a damaged one DATA_LOSS naming it and the byte offset.
DatasetPtr make_cache(DatasetPtr input, std::string filename);

}  // namespace dinput
