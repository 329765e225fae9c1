// The handle of a dataset iterator, shared by the iterator functions (api_dataset.cc) and
// the saving and restoring of its state (api_state.cc).
#pragma once

#include <memory>

#include "capi/in_use.h"
#include "data/dataset.h"
#include "data/stage_stats.h"

struct dinput_iterator {
  dinput::DatasetPtr dataset;  // keeps the graph alive for the iterator's whole life
  std::shared_ptr<dinput::IteratorStats> stats;
  std::shared_ptr<dinput::Cancellation> cancellation;  // shared with every wait of the pipeline
  dinput::StickyIterator it;
  dinput::capi::InUseFlag in_use;  // set while a call that reads or moves the iterator runs
  // The pipeline iterated: `dataset`, or a copy of it with the random seeds of a restored
  // state. Saving fingerprints `dataset` and reads the seeds of this one.
  dinput::DatasetPtr effective;
  // Per-stage statistics and trace (data/stage_stats.h); null when off.
  std::shared_ptr<dinput::PipelineStats> pipeline_stats;
};
