// C side of the Go binding: small helpers that save cgo round trips on hot paths, and the
// trampolines that adapt dinput's callback signatures (const pointers, void *user_data) to the
// Go functions exported from callbacks.go (plain pointers, the cgo.Handle as an integer).
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "_cgo_export.h"
#include "shim.h"

dinput_tensor_info_t dgo_tensor_describe(const dinput_tensor_t* t) {
  dinput_tensor_info_t info;
  memset(&info, 0, sizeof info);
  info.tensor = t;
  info.dtype = dinput_tensor_dtype(t);
  info.rank = dinput_tensor_rank(t);
  info.shape = dinput_tensor_shape(t);
  return info;
}

/* New handles to the n tensors infos describe; on a failure none is kept. */
static dinput_status_t ref_all(dinput_tensor_t** out, const dinput_tensor_info_t* infos, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    dinput_status_t st = dinput_tensor_ref(&out[i], infos[i].tensor);
    if (st != DINPUT_OK) {
      while (i > 0) dinput_tensor_free(out[--i]);
      return st;
    }
  }
  return DINPUT_OK;
}

dinput_status_t dgo_element_tensors(dinput_tensor_t** out, dinput_tensor_info_t* infos,
                                    size_t capacity, size_t* count, const dinput_element_t* e) {
  dinput_status_t st = dinput_element_tensor_infos(count, infos, capacity, e);
  if (st != DINPUT_OK || *count > capacity) return st;
  return ref_all(out, infos, *count);
}

dinput_status_t dgo_per_replica_tensors(dinput_tensor_t** out, dinput_tensor_info_t* infos,
                                        size_t capacity, size_t* count,
                                        const dinput_per_replica_t* v) {
  dinput_status_t st = dinput_per_replica_tensor_infos(count, infos, capacity, v);
  if (st != DINPUT_OK || *count > capacity) return st;
  return ref_all(out, infos, *count);
}

static dinput_status_t component_out_of_range(const dinput_element_t* e, size_t index) {
  char msg[128];
  snprintf(msg, sizeof msg, "component %zu is out of range for an element of %zu component(s)",
           index, dinput_element_size(e));
  dinput_error_set(DINPUT_INVALID_ARGUMENT, msg);
  return DINPUT_INVALID_ARGUMENT;
}

dinput_status_t dgo_element_tensor(dinput_tensor_t** out, dinput_tensor_info_t* info,
                                   const dinput_element_t* e, size_t index) {
  const dinput_tensor_t* t = dinput_element_get(e, index);
  if (!t) {
    *out = NULL;
    return component_out_of_range(e, index);
  }
  dinput_status_t st = dinput_tensor_ref(out, t);
  if (st == DINPUT_OK) *info = dgo_tensor_describe(*out);
  return st;
}

static dinput_status_t replica_out_of_range(const dinput_per_replica_t* v, size_t replica) {
  char msg[128];
  snprintf(msg, sizeof msg, "replica %zu is out of range for a per-replica value of %d replica(s)",
           replica, dinput_per_replica_size(v));
  dinput_error_set(DINPUT_INVALID_ARGUMENT, msg);
  return DINPUT_INVALID_ARGUMENT;
}

/* The C API indexes replicas with int; Go's (non-negative) int index may be larger, and is
 * then out of range like any index past the end. */
static const dinput_element_t* replica_element(const dinput_per_replica_t* v, size_t replica) {
  return replica <= (size_t)INT_MAX ? dinput_per_replica_get(v, (int)replica) : NULL;
}

dinput_status_t dgo_per_replica_element(dinput_element_t** out, const dinput_per_replica_t* v,
                                        size_t replica) {
  const dinput_element_t* e = replica_element(v, replica);
  if (!e) {
    *out = NULL;
    return replica_out_of_range(v, replica);
  }
  return dinput_element_ref(out, e);
}

dinput_status_t dgo_per_replica_tensor(dinput_tensor_t** out, dinput_tensor_info_t* info,
                                       const dinput_per_replica_t* v, size_t replica,
                                       size_t component) {
  const dinput_element_t* e = replica_element(v, replica);
  if (!e) {
    *out = NULL;
    return replica_out_of_range(v, replica);
  }
  return dgo_element_tensor(out, info, e, component);
}

dinput_status_t dgo_iterator_next_element(dinput_element_t** out, size_t* size,
                                          dinput_element_t* previous, dinput_iterator_t* it) {
  dinput_element_free(previous);
  dinput_status_t st = dinput_iterator_get_next(out, it);
  *size = st == DINPUT_OK ? dinput_element_size(*out) : 0;
  return st;
}

dinput_status_t dgo_dist_iterator_get_next(dinput_per_replica_t** out, size_t* size,
                                           dinput_dist_iterator_t* it) {
  dinput_status_t st = dinput_dist_iterator_get_next(out, it);
  *size = st == DINPUT_OK ? (size_t)dinput_per_replica_size(*out) : 0;
  return st;
}

dinput_status_t dgo_dist_iterator_next_step(dinput_per_replica_t** out, size_t* size,
                                            dinput_tensor_info_t* infos, size_t capacity,
                                            size_t* count, dinput_per_replica_t* previous,
                                            dinput_dist_iterator_t* it) {
  dinput_per_replica_free(previous);
  dinput_status_t st = dgo_dist_iterator_get_next(out, size, it);
  *count = 0;
  if (st == DINPUT_OK && dinput_per_replica_tensor_infos(count, infos, capacity, *out) != DINPUT_OK)
    *count = 0;
  return st;
}

dinput_status_t dgo_per_replica_copy(const dinput_per_replica_t* v, size_t replica,
                                     size_t component, dinput_dtype_t expected, void* dst,
                                     size_t dst_bytes, int64_t* num_elements) {
  *num_elements = 0;
  const dinput_element_t* e = replica_element(v, replica);
  if (!e) return replica_out_of_range(v, replica);
  const dinput_tensor_t* t = dinput_element_get(e, component);
  if (!t) return component_out_of_range(e, component);
  int64_t n = dinput_tensor_num_elements(t);
  /* A mismatched dtype must fail even for an empty tensor or a short buffer, so the size
   * shortcut below only applies once the dtype matches. */
  if (dinput_tensor_dtype(t) == expected && expected != DINPUT_BYTES) {
    *num_elements = n;
    if ((size_t)n * dinput_dtype_size(expected) > dst_bytes) return DINPUT_OK;
    if (n == 0) return DINPUT_OK;
  }
  return dinput_tensor_copy_to(dst, dst_bytes, t, expected);
}

dinput_status_t dgo_tensor_strings(const dinput_tensor_t* t, size_t* lengths, char* data,
                                   size_t data_cap) {
  int64_t n = dinput_tensor_num_elements(t);
  size_t used = 0;
  for (int64_t i = 0; i < n; i++) {
    const char* s;
    size_t len;
    dinput_status_t st = dinput_tensor_string_view(&s, &len, t, i);
    if (st != DINPUT_OK) return st;
    if (len > data_cap - used) {
      dinput_error_set(DINPUT_INTERNAL, "the strings of a bytes tensor exceed its byte size");
      return DINPUT_INTERNAL;
    }
    if (len) memcpy(data + used, s, len);
    used += len;
    lengths[i] = len;
  }
  return DINPUT_OK;
}

/* ---- trampolines ---- */

static void free_handle(void* user_data) { dgoFreeHandle((uintptr_t)user_data); }

static dinput_status_t generator_init(void** state, void* user_data) {
  uintptr_t s = 0;
  dinput_status_t st = dgoGeneratorInit(&s, (uintptr_t)user_data);
  *state = (void*)s;
  return st;
}

static dinput_status_t generator_next(dinput_element_t** out, void* state) {
  return dgoGeneratorNext(out, (uintptr_t)state);
}

static void generator_finalize(void* state) { dgoGeneratorFinalize((uintptr_t)state); }

static dinput_status_t generator_save(void* state, dinput_state_write_fn write, void* sink) {
  return dgoGeneratorSave((uintptr_t)state, write, sink);
}

static dinput_status_t generator_restore(void* state, const void* data, size_t size) {
  return dgoGeneratorRestore((uintptr_t)state, (void*)data, size);
}

void dgo_call_state_write(dinput_state_write_fn write, void* sink, const void* data, size_t size) {
  write(sink, data, size);
}

static dinput_status_t map_fn(dinput_element_t** out, const dinput_element_t* in, void* user_data) {
  /* The element's size is read here, and when the Go function returns its lent input (which
   * dgoMap signals by leaving it in *out) the library's own reference is taken here: two calls
   * from Go into C fewer per element. */
  dinput_element_t* lent = (dinput_element_t*)in;
  dinput_status_t st = dgoMap(out, lent, dinput_element_size(in), (uintptr_t)user_data);
  if (st != DINPUT_OK || *out != lent) return st;
  *out = NULL; /* never hand the lent handle itself back */
  return dinput_element_ref(out, in);
}

static dinput_status_t map_many_fn(dinput_element_t** outs, const dinput_element_t* const* ins,
                                   size_t count, void* user_data) {
  return dgoMapMany(outs, (dinput_element_t**)ins, count, (uintptr_t)user_data);
}

static dinput_status_t interleave_fn(dinput_dataset_t** out, const dinput_element_t* in,
                                     void* user_data) {
  return dgoInterleave(out, (dinput_element_t*)in, (uintptr_t)user_data);
}

static dinput_status_t filter_fn(int* keep, const dinput_element_t* in, void* user_data) {
  return dgoFilter(keep, (dinput_element_t*)in, (uintptr_t)user_data);
}

static dinput_status_t length_fn(int64_t* length, const dinput_element_t* in, void* user_data) {
  return dgoLength(length, (dinput_element_t*)in, (uintptr_t)user_data);
}

static dinput_status_t dataset_fn(dinput_dataset_t** out, const dinput_input_context_t* ctx,
                                  void* user_data) {
  return dgoDatasetFn(out, (dinput_input_context_t*)ctx, (uintptr_t)user_data);
}

static dinput_status_t value_fn(dinput_element_t** out, const dinput_value_context_t* ctx,
                                void* user_data) {
  return dgoValueFn(out, (dinput_value_context_t*)ctx, (uintptr_t)user_data);
}

static dinput_status_t replica_fn(dinput_element_t** out, const dinput_replica_context_t* ctx,
                                  const dinput_element_t* args, void* user_data) {
  return dgoReplicaFn(out, (dinput_replica_context_t*)ctx, (dinput_element_t*)args,
                      (uintptr_t)user_data);
}

dinput_status_t dgo_dataset_from_generator(dinput_dataset_t** out, const dinput_spec_t* spec,
                                           uintptr_t handle) {
  return dinput_dataset_from_generator(out, spec, generator_init, generator_next,
                                       generator_finalize, (void*)handle, free_handle);
}

dinput_status_t dgo_dataset_from_savable_generator(dinput_dataset_t** out,
                                                   const dinput_spec_t* spec, uintptr_t handle) {
  return dinput_dataset_from_generator_with_state(out, spec, generator_init, generator_next,
                                                  generator_finalize, generator_save,
                                                  generator_restore, (void*)handle, free_handle);
}

/* The options of dgo_dataset_map and dgo_dataset_map_many; *options is set (to free) even
 * when a setting is refused. */
static dinput_status_t new_map_options(dinput_map_options_t** options,
                                       const dinput_spec_t* out_spec, int64_t num_parallel_calls,
                                       int deterministic) {
  dinput_status_t st = dinput_map_options_new(options);
  if (st == DINPUT_OK) st = dinput_map_options_set_out_spec(*options, out_spec);
  if (st == DINPUT_OK) st = dinput_map_options_set_num_parallel_calls(*options, num_parallel_calls);
  if (st == DINPUT_OK)
    st = dinput_map_options_set_deterministic(*options, (dinput_deterministic_t)deterministic);
  return st;
}

dinput_status_t dgo_dataset_map(dinput_dataset_t** out, const dinput_dataset_t* input,
                                const dinput_spec_t* out_spec, int64_t num_parallel_calls,
                                int deterministic, uintptr_t handle) {
  /* The library owns the handle from the call on, so a refused setting frees it as a
   * refused map would. */
  dinput_map_options_t* options = NULL;
  dinput_status_t st = new_map_options(&options, out_spec, num_parallel_calls, deterministic);
  if (st == DINPUT_OK) {
    st = dinput_dataset_map(out, input, map_fn, (void*)handle, free_handle, options);
  } else {
    free_handle((void*)handle);
  }
  dinput_map_options_free(options);
  return st;
}

dinput_status_t dgo_dataset_map_many(dinput_dataset_t** out, const dinput_dataset_t* input,
                                     size_t max_count, const dinput_spec_t* out_spec,
                                     int64_t num_parallel_calls, int deterministic,
                                     uintptr_t handle) {
  /* As for map: the library owns the handle from the call on. */
  dinput_map_options_t* options = NULL;
  dinput_status_t st = new_map_options(&options, out_spec, num_parallel_calls, deterministic);
  if (st == DINPUT_OK) {
    st = dinput_dataset_map_many(out, input, max_count, map_many_fn, (void*)handle, free_handle,
                                 options);
  } else {
    free_handle((void*)handle);
  }
  dinput_map_options_free(options);
  return st;
}

void dgo_element_sizes(const dinput_element_t* const* ins, size_t count, size_t* sizes) {
  for (size_t i = 0; i < count; ++i) sizes[i] = dinput_element_size(ins[i]);
}

dinput_status_t dgo_element_ref_into(dinput_element_t** outs, dinput_element_t* const* srcs,
                                     size_t count) {
  dinput_status_t st = DINPUT_OK;
  for (size_t i = 0; i < count; ++i) {
    if (srcs[i] == NULL) continue;
    outs[i] = NULL;
    if (st == DINPUT_OK) st = dinput_element_ref(&outs[i], srcs[i]);
  }
  return st;
}

/* The interleave options of dgo_dataset_interleave and dgo_dataset_interleave_reader (0 keeps
 * a setting's default); *options is NULL when making them failed. */
static dinput_status_t new_interleave_options(dinput_interleave_options_t** options,
                                              int64_t cycle_length, int64_t block_length,
                                              int64_t num_parallel_calls, int deterministic) {
  dinput_status_t st = dinput_interleave_options_new(options);
  if (st == DINPUT_OK && cycle_length != 0)
    st = dinput_interleave_options_set_cycle_length(*options, cycle_length);
  if (st == DINPUT_OK && block_length != 0)
    st = dinput_interleave_options_set_block_length(*options, block_length);
  if (st == DINPUT_OK && num_parallel_calls != 0)
    st = dinput_interleave_options_set_num_parallel_calls(*options, num_parallel_calls);
  if (st == DINPUT_OK)
    st = dinput_interleave_options_set_deterministic(*options,
                                                     (dinput_deterministic_t)deterministic);
  return st;
}

dinput_status_t dgo_dataset_interleave(dinput_dataset_t** out, const dinput_dataset_t* input,
                                       const dinput_spec_t* out_spec, int64_t cycle_length,
                                       int64_t block_length, int64_t num_parallel_calls,
                                       int deterministic, uintptr_t handle) {
  /* As for map: the library owns the handle from the call on. */
  dinput_interleave_options_t* options = NULL;
  dinput_status_t st = new_interleave_options(&options, cycle_length, block_length,
                                              num_parallel_calls, deterministic);
  if (st == DINPUT_OK) {
    st = dinput_dataset_interleave(out, input, interleave_fn, out_spec, (void*)handle, free_handle,
                                   options);
  } else {
    free_handle((void*)handle);
  }
  dinput_interleave_options_free(options);
  return st;
}

dinput_status_t dgo_dataset_filter(dinput_dataset_t** out, const dinput_dataset_t* input,
                                   uintptr_t handle) {
  return dinput_dataset_filter(out, input, filter_fn, (void*)handle, free_handle);
}

dinput_status_t dgo_dataset_bucket_by_sequence_length_fn(
    dinput_dataset_t** out, const dinput_dataset_t* input, uintptr_t handle,
    const int64_t* boundaries, size_t num_boundaries, const int64_t* batch_sizes,
    size_t num_batch_sizes, int pad_to_bucket_boundary,
    const dinput_padded_batch_options_t* options) {
  return dinput_dataset_bucket_by_sequence_length_fn(
      out, input, length_fn, (void*)handle, free_handle, boundaries, num_boundaries, batch_sizes,
      num_batch_sizes, pad_to_bucket_boundary, options);
}

dinput_status_t dgo_distribute_datasets_from_function(dinput_dist_dataset_t** out,
                                                      const dinput_strategy_t* strategy,
                                                      uintptr_t handle,
                                                      const dinput_input_options_t* options) {
  return dinput_strategy_distribute_datasets_from_function(out, strategy, dataset_fn, (void*)handle,
                                                           free_handle, options);
}

dinput_status_t dgo_distribute_values_from_function(dinput_per_replica_t** out,
                                                    const dinput_strategy_t* strategy,
                                                    uintptr_t handle) {
  return dinput_strategy_distribute_values_from_function(out, strategy, value_fn, (void*)handle);
}

dinput_status_t dgo_strategy_run(dinput_per_replica_t** out, const dinput_strategy_t* strategy,
                                 const dinput_per_replica_t* args, uintptr_t handle) {
  return dinput_strategy_run(out, strategy, replica_fn, args, (void*)handle);
}

dinput_status_t dgo_input_options(dinput_input_options_t** out, int fetch_to_device,
                                  int replication_mode, int place_dataset_on_device,
                                  int64_t per_replica_buffer_size) {
  dinput_input_options_t* o = NULL;
  dinput_status_t st = dinput_input_options_new(&o);
  if (st == DINPUT_OK) st = dinput_input_options_set_fetch_to_device(o, fetch_to_device);
  if (st == DINPUT_OK)
    st = dinput_input_options_set_replication_mode(o, (dinput_replication_mode_t)replication_mode);
  if (st == DINPUT_OK)
    st = dinput_input_options_set_place_dataset_on_device(o, place_dataset_on_device);
  if (st == DINPUT_OK)
    st = dinput_input_options_set_per_replica_buffer_size(o, per_replica_buffer_size);
  if (st != DINPUT_OK) {
    dinput_input_options_free(o);
    o = NULL;
  }
  *out = o;
  return st;
}

dinput_status_t dgo_collective_options(dinput_collective_options_t** out, int64_t timeout_ms,
                                       const char* job_id, const char* interface_name,
                                       const char* address, int allow_loopback) {
  dinput_collective_options_t* o = NULL;
  dinput_status_t st = dinput_collective_options_new(&o);
  if (st == DINPUT_OK) st = dinput_collective_options_set_timeout_ms(o, timeout_ms);
  if (st == DINPUT_OK) st = dinput_collective_options_set_job_id(o, job_id);
  if (st == DINPUT_OK) st = dinput_collective_options_set_interface(o, interface_name);
  if (st == DINPUT_OK) st = dinput_collective_options_set_address(o, address);
  if (st == DINPUT_OK && allow_loopback >= 0)
    st = dinput_collective_options_set_allow_loopback(o, allow_loopback);
  if (st != DINPUT_OK) {
    dinput_collective_options_free(o);
    o = NULL;
  }
  *out = o;
  return st;
}

/* dinput_cuda.h declares these four with cudaStream_t and cudaEvent_t, which need CUDA's
 * headers. Both types are pointers to opaque structs (struct CUstream_st *, struct
 * CUevent_st *), passed exactly like void*, so they are declared here with void* instead.
 * cuda_test.go checks that these declarations are dinput_cuda.h's with that one change. */
dinput_status_t dinput_tensor_cuda_wait(const dinput_tensor_t* tensor, void* stream);
dinput_status_t dinput_element_cuda_wait(const dinput_element_t* element, void* stream);
dinput_status_t dinput_tensor_cuda_record_stream(const dinput_tensor_t* tensor, void* stream);
void* dinput_tensor_cuda_ready_event(const dinput_tensor_t* tensor);

dinput_status_t dgo_tensor_cuda_wait(const dinput_tensor_t* t, uintptr_t stream) {
  return dinput_tensor_cuda_wait(t, (void*)stream);
}

dinput_status_t dgo_element_cuda_wait(const dinput_element_t* e, uintptr_t stream) {
  return dinput_element_cuda_wait(e, (void*)stream);
}

dinput_status_t dgo_tensor_cuda_record_stream(const dinput_tensor_t* t, uintptr_t stream) {
  return dinput_tensor_cuda_record_stream(t, (void*)stream);
}

uintptr_t dgo_tensor_cuda_ready_event(const dinput_tensor_t* t) {
  return (uintptr_t)dinput_tensor_cuda_ready_event(t);
}

dinput_status_t dgo_tensor_to_dlpack(dgo_dl_managed** out, const dinput_tensor_t* t) {
  return dinput_tensor_to_dlpack((struct DLManagedTensor**)out, t);
}

void dgo_dlpack_delete(dgo_dl_managed* m) {
  if (m != NULL && m->deleter != NULL) m->deleter(m);
}

dinput_status_t dgo_dataset_flat_map(dinput_dataset_t** out, const dinput_dataset_t* input,
                                     const dinput_spec_t* out_spec, uintptr_t handle) {
  return dinput_dataset_flat_map(out, input, interleave_fn, out_spec, (void*)handle, free_handle);
}

dinput_status_t dgo_dataset_interleave_reader(dinput_dataset_t** out, const dinput_dataset_t* input,
                                              const dinput_reader_t* reader, int64_t cycle_length,
                                              int64_t block_length, int64_t num_parallel_calls,
                                              int deterministic) {
  dinput_interleave_options_t* options = NULL;
  dinput_status_t st = new_interleave_options(&options, cycle_length, block_length,
                                              num_parallel_calls, deterministic);
  if (st == DINPUT_OK) st = dinput_dataset_interleave_reader(out, input, reader, options);
  dinput_interleave_options_free(options);
  return st;
}

static int launch_thread(dinput_thread_body_fn body, void* arg, void* user_data) {
  (void)user_data;
  return dgoLaunchThread(body, arg);
}

void dgo_install_thread_launcher(void) { dinput_set_thread_launcher(launch_thread, NULL); }

void dgo_run_thread_body(dinput_thread_body_fn body, void* arg) { body(arg); }
