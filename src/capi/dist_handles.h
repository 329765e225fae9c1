// The handles of distributed datasets and iterators, shared by their functions
// (api_distribute.cc) and the saving and restoring of their state (api_state.cc).
#pragma once

#include <exception>
#include <memory>
#include <vector>

#include "capi/in_use.h"
#include "capi/step_pool.h"
#include "distribute/dist_dataset.h"

struct dinput_dist_dataset {
  dinput::DistributedDatasetPtr dataset;
};
struct dinput_dist_iterator {
  std::unique_ptr<dinput::DistributedIterator> it;
  dinput::capi::InUseFlag in_use;  // set while a get_next or save call runs on this handle
  // What get_next reuses from step to step: the per-replica values freed since the last
  // step, whose element vectors the iterator cuts the next step's pieces into
  // (capi/step_pool.h).
  dinput::capi::StepPoolLease pool{};
  // The failure dinput_dist_iterator_get_next_steps met after the steps it returned, raised
  // by the next get_next call of any kind.
  std::exception_ptr pending = nullptr;
};
