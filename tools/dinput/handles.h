// Owning smart pointers for the library's handles, so that every failure thrown in the
// tool releases what it made.
#ifndef DINPUT_TOOL_HANDLES_H_
#define DINPUT_TOOL_HANDLES_H_

#include <memory>

#include "dinput.h"

namespace dinput_tool {

template <typename T, void (*Free)(T*)>
struct HandleDeleter {
  void operator()(T* handle) const { Free(handle); }
};

template <typename T, void (*Free)(T*)>
using Handle = std::unique_ptr<T, HandleDeleter<T, Free>>;

using TensorPtr = Handle<dinput_tensor_t, dinput_tensor_free>;
using ElementPtr = Handle<dinput_element_t, dinput_element_free>;
using SpecPtr = Handle<dinput_spec_t, dinput_spec_free>;
using OptionsPtr = Handle<dinput_options_t, dinput_options_free>;
using DatasetPtr = Handle<dinput_dataset_t, dinput_dataset_free>;
using IteratorPtr = Handle<dinput_iterator_t, dinput_iterator_free>;
using RecordWriterPtr = Handle<dinput_record_writer_t, dinput_record_writer_free>;
using OptionalPtr = Handle<dinput_optional_t, dinput_optional_free>;
using ClusterPtr = Handle<dinput_cluster_t, dinput_cluster_free>;
using CollectiveOptionsPtr = Handle<dinput_collective_options_t, dinput_collective_options_free>;
using CollectivePtr = Handle<dinput_collective_t, dinput_collective_free>;
using StrategyPtr = Handle<dinput_strategy_t, dinput_strategy_free>;
using InputOptionsPtr = Handle<dinput_input_options_t, dinput_input_options_free>;
using DistDatasetPtr = Handle<dinput_dist_dataset_t, dinput_dist_dataset_free>;
using DistIteratorPtr = Handle<dinput_dist_iterator_t, dinput_dist_iterator_free>;
using PerReplicaPtr = Handle<dinput_per_replica_t, dinput_per_replica_free>;
using StatePtr = Handle<dinput_state_t, dinput_state_free>;
using BatchOptionsPtr = Handle<dinput_batch_options_t, dinput_batch_options_free>;
using ShuffleOptionsPtr = Handle<dinput_shuffle_options_t, dinput_shuffle_options_free>;
using InterleaveOptionsPtr = Handle<dinput_interleave_options_t, dinput_interleave_options_free>;
using RecordsOptionsPtr = Handle<dinput_records_options_t, dinput_records_options_free>;
using ListFilesOptionsPtr = Handle<dinput_list_files_options_t, dinput_list_files_options_free>;
using RecordWriterOptionsPtr =
    Handle<dinput_record_writer_options_t, dinput_record_writer_options_free>;

}  // namespace dinput_tool

#endif  // DINPUT_TOOL_HANDLES_H_
