// The handles of distributed datasets and iterators, shared by their functions
// (api_distribute.cc) and the saving and restoring of their state (api_state.cc).
#pragma once

#include <memory>

#include "capi/in_use.h"
#include "distribute/dist_dataset.h"

struct dinput_dist_dataset {
  dinput::DistributedDatasetPtr dataset;
};
struct dinput_dist_iterator {
  std::unique_ptr<dinput::DistributedIterator> it;
  dinput::capi::InUseFlag in_use;  // set while a get_next or save call runs on this handle
};
