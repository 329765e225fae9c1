"""Loading libdinput and declaring the C functions the package calls (ctypes only)."""

import ctypes
import os
from ctypes import (CFUNCTYPE, POINTER, Structure, c_char_p, c_double, c_float, c_int, c_int32,
                    c_int64, c_size_t,
                    c_void_p)

_SONAME = "libdinput.so.0"


def _candidates():
    """Where the library is looked for, in order: the DINPUT_LIBRARY variable, the build
    directory of the source tree this package sits in, then the system's search path."""
    env = os.environ.get("DINPUT_LIBRARY")
    if env:
        # An explicit choice is never second-guessed: a wrong path is an error, not a fallback.
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.normpath(os.path.join(here, "..", "..", ".."))
    found = []
    if os.path.isfile(os.path.join(root, "include", "dinput.h")):
        for build in sorted(os.listdir(root)):
            path = os.path.join(root, build, "src", _SONAME)
            if build.startswith("build") and os.path.isfile(path):
                found.append(path)
        # The default preset's directory first, then whatever other build trees exist.
        found.sort(key=lambda p: os.path.basename(os.path.dirname(os.path.dirname(p))) != "build")
    found.append(_SONAME)
    return found


def _load():
    errors = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            errors.append("%s: %s" % (path, e))
    raise ImportError("dinput: cannot load the C library (set DINPUT_LIBRARY to the path of "
                      "libdinput.so.0, or install dinput): " + "; ".join(errors))


lib, path = _load()

# Opaque handles are plain void pointers; the Python classes keep them in `_h`.
H = c_void_p
PH = POINTER(c_void_p)
Status = c_int



class TensorInfo(Structure):
    """dinput_tensor_info_t: every accessor of one tensor, filled for a whole element or step
    by one call (the cost of a ctypes call is most of a small step's)."""
    _fields_ = [("tensor", c_void_p), ("data", c_void_p), ("shape", POINTER(c_int64)),
                ("byte_size", c_size_t), ("rank", c_int32), ("dtype", c_int32),
                ("device_type", c_int32), ("device_index", c_int32)]


free_fn = CFUNCTYPE(None, c_void_p)
interleave_fn = CFUNCTYPE(Status, PH, c_void_p, c_void_p)
map_fn = CFUNCTYPE(Status, PH, c_void_p, c_void_p)
map_many_fn = CFUNCTYPE(Status, PH, POINTER(c_void_p), c_size_t, c_void_p)
filter_fn = CFUNCTYPE(Status, POINTER(c_int), c_void_p, c_void_p)
length_fn = CFUNCTYPE(Status, POINTER(c_int64), c_void_p, c_void_p)
dataset_fn = CFUNCTYPE(Status, PH, c_void_p, c_void_p)
value_fn = CFUNCTYPE(Status, PH, c_void_p, c_void_p)
replica_fn = CFUNCTYPE(Status, PH, c_void_p, c_void_p, c_void_p)
generator_init_fn = CFUNCTYPE(Status, PH, c_void_p)
generator_next_fn = CFUNCTYPE(Status, PH, c_void_p)
generator_finalize_fn = CFUNCTYPE(None, c_void_p)
state_write_fn = CFUNCTYPE(None, c_void_p, c_void_p, c_size_t)
generator_save_fn = CFUNCTYPE(Status, c_void_p, state_write_fn, c_void_p)
generator_restore_fn = CFUNCTYPE(Status, c_void_p, c_void_p, c_size_t)


def _decl(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)


_P64 = POINTER(c_int64)
_STRS = POINTER(c_char_p)

for _name, _res, _args in [
    # errors and version
    ("dinput_status_name", c_char_p, [c_int]),
    ("dinput_last_error_message", c_char_p, []),
    ("dinput_last_error_code", c_int, []),
    ("dinput_error_set", None, [c_int, c_char_p]),
    ("dinput_error_clear", None, []),
    ("dinput_version", c_char_p, []),
    ("dinput_version_number", c_int, []),
    ("dinput_build_info", c_char_p, []),
    # dtypes and tensors
    ("dinput_dtype_name", c_char_p, [c_int]),
    ("dinput_dtype_size", c_size_t, [c_int]),
    ("dinput_dtype_from_name", c_int, [c_char_p]),
    ("dinput_tensor_new", Status, [PH, c_int, _P64, c_int, c_void_p, c_size_t]),
    ("dinput_tensor_new_bytes", Status, [PH, _P64, c_int, _STRS, POINTER(c_size_t)]),
    ("dinput_tensor_ref", Status, [PH, H]),
    ("dinput_tensor_free", None, [H]),
    ("dinput_tensor_dtype", c_int, [H]),
    ("dinput_tensor_rank", c_int, [H]),
    ("dinput_tensor_shape", _P64, [H]),
    ("dinput_tensor_num_elements", c_int64, [H]),
    ("dinput_tensor_byte_size", c_size_t, [H]),
    ("dinput_tensor_data", c_void_p, [H]),
    ("dinput_tensor_device_type", c_int, [H]),
    ("dinput_tensor_device_index", c_int, [H]),
    ("dinput_tensor_to_host", Status, [PH, H]),
    ("dinput_tensor_copy_to", Status, [c_void_p, c_size_t, H, c_int]),
    ("dinput_tensor_string_view", Status, [POINTER(c_void_p), POINTER(c_size_t), H, c_int64]),
    ("dinput_tensor_to_dlpack", Status, [PH, H]),
    ("dinput_tensor_new_pinned", Status, [PH, c_int, _P64, c_int, c_void_p, c_size_t]),
    ("dinput_cuda_empty_cache", Status, []),
    ("dinput_cuda_set_cache_limit", Status, [c_size_t]),
    ("dinput_cuda_cache_limit", Status, [POINTER(c_size_t)]),
    ("dinput_cuda_pool_bytes", Status, [POINTER(c_size_t), POINTER(c_size_t), c_int]),
    # dinput_cuda.h (no-ops in a build without CUDA); streams and events are pointers
    ("dinput_tensor_cuda_wait", Status, [H, c_void_p]),
    ("dinput_element_cuda_wait", Status, [H, c_void_p]),
    ("dinput_tensor_cuda_record_stream", Status, [H, c_void_p]),
    ("dinput_tensor_cuda_ready_event", c_void_p, [H]),
    # elements and specs
    ("dinput_element_new", Status, [PH, PH, c_size_t]),
    ("dinput_element_free", None, [H]),
    ("dinput_element_ref", Status, [PH, H]),
    ("dinput_element_size", c_size_t, [H]),
    ("dinput_element_get", H, [H, c_size_t]),
    ("dinput_element_tensor_infos", Status, [POINTER(c_size_t), POINTER(TensorInfo), c_size_t,
                                             H]),
    ("dinput_spec_free", None, [H]),
    ("dinput_spec_size", c_size_t, [H]),
    ("dinput_spec_dtype", c_int, [H, c_size_t]),
    ("dinput_spec_rank", c_int, [H, c_size_t]),
    ("dinput_spec_shape", _P64, [H, c_size_t]),
    ("dinput_spec_new", Status, [PH]),
    ("dinput_spec_add", Status, [H, c_int, _P64, c_int]),
    # options
    ("dinput_options_new", Status, [PH]),
    ("dinput_options_free", None, [H]),
    ("dinput_options_set_auto_shard_policy", Status, [H, c_int]),
    ("dinput_options_auto_shard_policy", c_int, [H]),
    ("dinput_options_set_skip_corrupt_records", Status, [H, c_int]),
    ("dinput_options_skip_corrupt_records", c_int, [H]),
    ("dinput_options_set_max_record_bytes", Status, [H, c_int64]),
    ("dinput_options_max_record_bytes", c_int64, [H]),
    ("dinput_options_set_map_files", Status, [H, c_int]),
    ("dinput_options_map_files", c_int, [H]),
    ("dinput_options_set_allow_nonregular_files", Status, [H, c_int]),
    ("dinput_options_allow_nonregular_files", c_int, [H]),
    ("dinput_options_set_deterministic", Status, [H, c_int]),
    ("dinput_options_deterministic", c_int, [H]),
    ("dinput_batch_options_new", Status, [PH]),
    ("dinput_batch_options_free", None, [H]),
    ("dinput_batch_options_set_drop_remainder", Status, [H, c_int]),
    ("dinput_batch_options_set_num_parallel_calls", Status, [H, c_int64]),
    ("dinput_batch_options_set_deterministic", Status, [H, c_int]),
    ("dinput_map_options_set_deterministic", Status, [H, c_int]),
    ("dinput_records_options_set_buffer_size", Status, [H, c_int64]),
    ("dinput_input_options_set_place_dataset_on_device", Status, [H, c_int]),
    ("dinput_strategy_new_multi_worker_cpu", Status, [PH, H, c_int, c_int]),
    ("dinput_dist_iterator_element_spec", Status, [PH, H]),
    ("dinput_shuffle_options_new", Status, [PH]),
    ("dinput_shuffle_options_free", None, [H]),
    ("dinput_shuffle_options_set_seed", Status, [H, c_int64, c_int64]),
    ("dinput_shuffle_options_set_reshuffle_each_iteration", Status, [H, c_int]),
    ("dinput_interleave_options_new", Status, [PH]),
    ("dinput_interleave_options_free", None, [H]),
    ("dinput_interleave_options_set_cycle_length", Status, [H, c_int64]),
    ("dinput_interleave_options_set_block_length", Status, [H, c_int64]),
    ("dinput_interleave_options_set_num_parallel_calls", Status, [H, c_int64]),
    ("dinput_interleave_options_set_deterministic", Status, [H, c_int]),
    ("dinput_map_options_new", Status, [PH]),
    ("dinput_map_options_free", None, [H]),
    ("dinput_map_options_set_num_parallel_calls", Status, [H, c_int64]),
    ("dinput_map_options_set_out_spec", Status, [H, H]),
    ("dinput_records_options_new", Status, [PH]),
    ("dinput_records_options_free", None, [H]),
    ("dinput_records_options_set_compression", Status, [H, c_int]),
    ("dinput_list_files_options_new", Status, [PH]),
    ("dinput_list_files_options_free", None, [H]),
    ("dinput_list_files_options_set_shuffle", Status, [H, c_int]),
    ("dinput_list_files_options_set_seed", Status, [H, c_int64, c_int64]),
    # datasets
    ("dinput_dataset_free", None, [H]),
    ("dinput_dataset_ref", Status, [PH, H]),
    ("dinput_dataset_cardinality", c_int64, [H]),
    ("dinput_dataset_element_spec", Status, [PH, H]),
    ("dinput_dataset_name", c_char_p, [H]),
    ("dinput_dataset_range", Status, [PH, c_int64, c_int64, c_int64]),
    ("dinput_dataset_from_tensors", Status, [PH, H]),
    ("dinput_dataset_from_tensor_slices", Status, [PH, H]),
    ("dinput_dataset_text_lines", Status, [PH, _STRS, c_size_t]),
    ("dinput_dataset_fixed_length_records", Status, [PH, _STRS, c_size_t, c_int64, c_int64,
                                                     c_int64]),
    ("dinput_dataset_from_generator", Status, [PH, H, generator_init_fn, generator_next_fn,
                                               generator_finalize_fn, c_void_p, free_fn]),
    ("dinput_dataset_from_generator_with_state", Status,
     [PH, H, generator_init_fn, generator_next_fn, generator_finalize_fn, generator_save_fn,
      generator_restore_fn, c_void_p, free_fn]),
    ("dinput_dataset_rebatch", Status, [PH, H, _P64, c_size_t, c_int]),
    ("dinput_dataset_records", Status, [PH, _STRS, c_size_t, H]),
    ("dinput_dataset_list_files", Status, [PH, _STRS, c_size_t, H]),
    ("dinput_dataset_batch", Status, [PH, H, c_int64, H]),
    ("dinput_dataset_unbatch", Status, [PH, H]),
    ("dinput_dataset_repeat", Status, [PH, H, c_int64]),
    ("dinput_dataset_take", Status, [PH, H, c_int64]),
    ("dinput_dataset_skip", Status, [PH, H, c_int64]),
    ("dinput_dataset_shard", Status, [PH, H, c_int64, c_int64]),
    ("dinput_dataset_shuffle", Status, [PH, H, c_int64, H]),
    ("dinput_dataset_map", Status, [PH, H, map_fn, c_void_p, free_fn, H]),
    ("dinput_dataset_map_many", Status, [PH, H, c_size_t, map_many_fn, c_void_p, free_fn, H]),
    ("dinput_dataset_filter", Status, [PH, H, filter_fn, c_void_p, free_fn]),
    ("dinput_dataset_interleave", Status, [PH, H, interleave_fn, H, c_void_p, free_fn, H]),
    ("dinput_dataset_enumerate", Status, [PH, H, c_int64]),
    ("dinput_dataset_prefetch", Status, [PH, H, c_int64]),
    # tf.train.Example parsing
    ("dinput_feature_spec_new", Status, [PH]),
    ("dinput_feature_spec_free", None, [H]),
    ("dinput_feature_spec_add_fixed_len", Status, [H, c_char_p, c_int, _P64, c_int, H]),
    ("dinput_feature_spec_add_var_len", Status, [H, c_char_p, c_int]),
    ("dinput_feature_spec_add_fixed_len_sequence", Status,
     [H, c_char_p, c_int, _P64, c_int, c_int, H]),
    ("dinput_dataset_parse_example", Status, [PH, H, H, c_int64]),
    ("dinput_dataset_parse_single_example", Status, [PH, H, H, c_int64]),
    ("dinput_dataset_parse_sequence_example", Status, [PH, H, H, H, c_int64]),
    ("dinput_dataset_with_options", Status, [PH, H, H]),
    # several datasets, cache and ignore_errors
    ("dinput_dataset_zip", Status, [PH, PH, c_size_t]),
    ("dinput_dataset_concatenate", Status, [PH, H, H]),
    ("dinput_dataset_sample_from_datasets", Status, [PH, PH, c_size_t, POINTER(c_double), c_int64,
                                                     c_int]),
    ("dinput_dataset_choose_from_datasets", Status, [PH, PH, c_size_t, H, c_int]),
    ("dinput_dataset_cache", Status, [PH, H, c_char_p]),
    ("dinput_dataset_ignore_errors", Status, [PH, H, c_int]),
    # padded batches, buckets, windows, flat_map, and readers as values
    ("dinput_padded_batch_options_new", Status, [PH]),
    ("dinput_padded_batch_options_free", None, [H]),
    ("dinput_padded_batch_options_set_drop_remainder", Status, [H, c_int]),
    ("dinput_padded_batch_options_set_padded_shapes", Status, [H, H]),
    ("dinput_padded_batch_options_set_padding_values", Status, [H, H]),
    ("dinput_dataset_padded_batch", Status, [PH, H, c_int64, H]),
    ("dinput_dataset_bucket_by_sequence_length", Status, [PH, H, c_size_t, _P64, c_size_t, _P64,
                                                          c_size_t, c_int, H]),
    ("dinput_dataset_bucket_by_sequence_length_fn", Status, [PH, H, length_fn, c_void_p, free_fn,
                                                             _P64, c_size_t, _P64, c_size_t,
                                                             c_int, H]),
    ("dinput_dataset_window", Status, [PH, H, c_int64, c_int64, c_int64, c_int]),
    ("dinput_dataset_flat_map", Status, [PH, H, interleave_fn, H, c_void_p, free_fn]),
    ("dinput_reader_records", Status, [PH, H]),
    ("dinput_reader_text_lines", Status, [PH]),
    ("dinput_reader_fixed_length_records", Status, [PH, c_int64, c_int64, c_int64]),
    ("dinput_reader_free", None, [H]),
    ("dinput_dataset_interleave_reader", Status, [PH, H, H, H]),
    ("dinput_dataset_flat_map_reader", Status, [PH, H, H]),
    # iterators and optionals
    ("dinput_dataset_iterator", Status, [PH, H]),
    ("dinput_iterator_free", None, [H]),
    ("dinput_iterator_cancel", Status, [H]),
    ("dinput_iterator_get_next", Status, [PH, H]),
    ("dinput_iterator_get_next_as_optional", Status, [PH, H]),
    ("dinput_iterator_element_spec", Status, [PH, H]),
    ("dinput_iterator_statistic", Status, [_P64, H, c_char_p]),
    ("dinput_iterator_save", Status, [PH, H]),
    ("dinput_state_data", c_void_p, [H]),
    ("dinput_state_size", c_size_t, [H]),
    ("dinput_state_free", None, [H]),
    ("dinput_dataset_iterator_from_state", Status, [PH, H, c_char_p, c_size_t]),
    ("dinput_dist_iterator_save", Status, [PH, H]),
    ("dinput_dist_dataset_iterator_from_state", Status, [PH, H, c_char_p, c_size_t]),
    ("dinput_state_describe", Status, [PH, c_char_p, c_size_t]),
    ("dinput_optional_free", None, [H]),
    ("dinput_optional_has_value", c_int, [H]),
    ("dinput_optional_get_value", Status, [PH, H]),
    ("dinput_optional_get_per_replica", Status, [PH, H]),
    # record writer
    ("dinput_record_writer_options_new", Status, [PH]),
    ("dinput_record_writer_options_free", None, [H]),
    ("dinput_record_writer_options_set_compression", Status, [H, c_int]),
    ("dinput_record_writer_options_set_level", Status, [H, c_int]),
    ("dinput_record_writer_options_set_zstd_window_log", Status, [H, c_int]),
    ("dinput_record_writer_flush", Status, [H]),
    ("dinput_record_writer_discard", Status, [H]),
    ("dinput_record_writer_open", Status, [PH, c_char_p, H]),
    ("dinput_record_writer_write", Status, [H, c_void_p, c_size_t]),
    ("dinput_record_writer_close", Status, [H]),
    ("dinput_record_writer_free", None, [H]),
    # strategies and distribution
    ("dinput_cluster_resolve", Status, [PH, c_char_p]),
    ("dinput_cluster_new", Status, [PH, c_int, c_int, c_char_p]),
    ("dinput_cluster_free", None, [H]),
    ("dinput_cluster_rank", c_int, [H]),
    ("dinput_cluster_world_size", c_int, [H]),
    ("dinput_cluster_local_rank", c_int, [H]),
    ("dinput_cluster_local_world_size", c_int, [H]),
    ("dinput_cluster_rdzv_url", c_char_p, [H]),
    ("dinput_cluster_coordinator_host", c_char_p, [H]),
    ("dinput_cluster_job_id", c_char_p, [H]),
    ("dinput_cluster_source", c_char_p, [H]),
    ("dinput_cluster_task_type", c_char_p, [H]),
    ("dinput_cluster_task_index", c_int, [H]),
    ("dinput_cluster_is_input_worker", c_int, [H]),
    ("dinput_collective_options_new", Status, [PH]),
    ("dinput_collective_options_free", None, [H]),
    ("dinput_collective_options_set_timeout_ms", Status, [H, c_int64]),
    ("dinput_collective_options_set_job_id", Status, [H, c_char_p]),
    ("dinput_collective_options_set_interface", Status, [H, c_char_p]),
    ("dinput_collective_options_set_address", Status, [H, c_char_p]),
    ("dinput_collective_options_set_allow_loopback", Status, [H, c_int]),
    ("dinput_collective_new_from_cluster", Status, [PH, H, H]),
    ("dinput_collective_new_in_process", Status, [PH, c_int, c_int64]),
    ("dinput_collective_free", None, [H]),
    ("dinput_collective_abort", Status, [H, c_int, c_char_p]),
    ("dinput_collective_num_workers", c_int, [H]),
    ("dinput_strategy_new", Status, [PH, _STRS, c_int]),
    ("dinput_strategy_new_multi_worker", Status, [PH, H, c_int, _STRS, c_int]),
    ("dinput_strategy_free", None, [H]),
    ("dinput_strategy_num_replicas_in_sync", c_int, [H]),
    ("dinput_strategy_num_local_replicas", c_int, [H]),
    ("dinput_strategy_num_workers", c_int, [H]),
    ("dinput_strategy_worker_index", c_int, [H]),
    ("dinput_strategy_device", c_char_p, [H, c_int]),
    ("dinput_input_options_new", Status, [PH]),
    ("dinput_input_options_free", None, [H]),
    ("dinput_input_options_set_fetch_to_device", Status, [H, c_int]),
    ("dinput_input_options_set_per_replica_buffer_size", Status, [H, c_int64]),
    ("dinput_strategy_distribute_dataset", Status, [PH, H, H, H]),
    ("dinput_dist_dataset_free", None, [H]),
    ("dinput_dist_dataset_plan", c_char_p, [H]),
    ("dinput_dist_dataset_element_spec", Status, [PH, H]),
    ("dinput_dist_dataset_iterator", Status, [PH, H]),
    ("dinput_dist_iterator_free", None, [H]),
    ("dinput_dist_iterator_cancel", Status, [H]),
    ("dinput_dist_iterator_get_next", Status, [PH, H]),
    ("dinput_dist_iterator_get_next_as_optional", Status, [PH, H]),
    # The out-parameters as addresses (plain integers): the cheapest conversion ctypes has,
    # on the hot path of _steps.py.
    ("dinput_dist_iterator_get_next_steps", Status, [c_void_p, c_void_p, c_void_p, c_size_t,
                                                     c_size_t, H]),
    ("dinput_dist_iterator_copy_steps", Status, [c_void_p, c_void_p, c_void_p, c_size_t, c_int,
                                                 c_void_p, c_int, c_size_t, H]),
    ("dinput_dist_iterator_statistic", Status, [_P64, H, c_char_p]),
    # per-stage statistics and traces (strings returned as pointers, to be freed)
    ("dinput_string_free", None, [c_void_p]),
    ("dinput_options_set_statistics", Status, [H, c_int]),
    ("dinput_options_set_trace", Status, [H, c_int64]),
    ("dinput_options_set_ram_budget", Status, [H, c_int64]),
    ("dinput_iterator_statistics", Status, [POINTER(c_void_p), H]),
    ("dinput_iterator_trace", Status, [POINTER(c_void_p), H]),
    ("dinput_dist_iterator_statistics", Status, [POINTER(c_void_p), H, c_int]),
    ("dinput_dist_iterator_trace", Status, [POINTER(c_void_p), H]),
    ("dinput_per_replica_free", None, [H]),
    ("dinput_per_replica_size", c_int, [H]),
    ("dinput_per_replica_get", H, [H, c_int]),
    ("dinput_per_replica_tensor_infos", Status, [POINTER(c_size_t), POINTER(TensorInfo),
                                                 c_size_t, H]),
    ("dinput_per_replica_new", Status, [PH, PH, c_int]),
    ("dinput_strategy_reduce", Status, [PH, H, c_int, H, c_int]),
    ("dinput_strategy_distribute_datasets_from_function", Status, [PH, H, dataset_fn, c_void_p,
                                                                   free_fn, H]),
    ("dinput_input_options_set_replication_mode", Status, [H, c_int]),
    ("dinput_strategy_distribute_values_from_function", Status, [PH, H, value_fn, c_void_p]),
    ("dinput_value_context_replica_id_in_sync_group", c_int, [H]),
    ("dinput_value_context_num_replicas_in_sync", c_int, [H]),
    ("dinput_strategy_run", Status, [PH, H, replica_fn, H, c_void_p]),
    ("dinput_replica_context_replica_id_in_sync_group", c_int, [H]),
    ("dinput_replica_context_num_replicas_in_sync", c_int, [H]),
    ("dinput_replica_context_device", c_char_p, [H]),
    ("dinput_input_context_num_input_pipelines", c_int, [H]),
    ("dinput_input_context_input_pipeline_id", c_int, [H]),
    ("dinput_input_context_num_replicas_in_sync", c_int, [H]),
    ("dinput_input_context_get_per_replica_batch_size", Status, [_P64, H, c_int64]),
    # images
    ("dinput_image_options_new", Status, [PH]),
    ("dinput_image_options_free", None, [H]),
    ("dinput_image_options_set_component", Status, [H, c_int64]),
    ("dinput_image_options_set_num_parallel_calls", Status, [H, c_int64]),
    ("dinput_image_options_set_deterministic", Status, [H, c_int]),
    ("dinput_dataset_decode_jpeg", Status, [PH, H, c_int64, H]),
    ("dinput_dataset_decode_png", Status, [PH, H, c_int64, H]),
    ("dinput_dataset_resize", Status, [PH, H, c_int64, c_int64, H]),
    ("dinput_dataset_center_crop", Status, [PH, H, c_int64, c_int64, H]),
    ("dinput_dataset_random_crop", Status, [PH, H, c_int64, c_int64, c_int64, H]),
    ("dinput_dataset_random_resized_crop", Status,
     [PH, H, c_int64, c_int64, c_double, c_double, c_double, c_double, c_int64, H]),
    ("dinput_dataset_random_flip_left_right", Status, [PH, H, c_int64, H]),
    ("dinput_dataset_cast_image", Status, [PH, H, c_int, H]),
    ("dinput_dataset_normalize", Status,
     [PH, H, POINTER(c_float), POINTER(c_float), c_size_t, c_int, H]),
]:
    _decl(_name, _res, *_args)
