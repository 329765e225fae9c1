/* C helpers of the Go binding. Declarations only: this header is part of the cgo preamble
 * of callbacks.go, whose //export functions make cgo copy that preamble into
 * _cgo_export.h, so it must not define anything. The definitions are in shim.c. */
#ifndef DINPUT_GO_SHIM_H
#define DINPUT_GO_SHIM_H

#include <stdint.h>
#include <stdlib.h>

#include <dinput.h>

/* The binding was written against the 0.x API; a header with another major version may
 * have changed signatures or semantics, so refuse to compile rather than misbehave. */
#if DINPUT_VERSION_MAJOR != 0
#error \
    "the dinput Go binding needs dinput 0.x (DINPUT_VERSION_MAJOR 0); the installed dinput.h differs"
#endif

/* Everything Go needs to know about a tensor, fetched in one cgo call (dtype, rank, shape). */
dinput_tensor_info_t dgo_tensor_describe(const dinput_tensor_t* t);

/* A new owned handle to tensor `index` of an element (INVALID_ARGUMENT when out of range). */
dinput_status_t dgo_element_tensor(dinput_tensor_t** out, dinput_tensor_info_t* info,
                                   const dinput_element_t* e, size_t index);
/* New owned handles to every component of an element (out[i], described by infos[i]), in
 * one cgo call. *count is the number of components; when it exceeds capacity nothing is
 * taken and the caller asks again with room for *count. */
dinput_status_t dgo_element_tensors(dinput_tensor_t** out, dinput_tensor_info_t* infos,
                                    size_t capacity, size_t* count, const dinput_element_t* e);
/* The same for every component of every replica of a per-replica value, replica by replica. */
dinput_status_t dgo_per_replica_tensors(dinput_tensor_t** out, dinput_tensor_info_t* infos,
                                        size_t capacity, size_t* count,
                                        const dinput_per_replica_t* v);
/* A new owned handle to element `replica` of a per-replica value. */
dinput_status_t dgo_per_replica_element(dinput_element_t** out, const dinput_per_replica_t* v,
                                        size_t replica);
/* A new owned handle to component `component` of replica `replica`'s element. */
dinput_status_t dgo_per_replica_tensor(dinput_tensor_t** out, dinput_tensor_info_t* info,
                                       const dinput_per_replica_t* v, size_t replica,
                                       size_t component);
/* Frees `previous` (the element before, or NULL), then get_next of a plain iterator, and the new
 * element's size: what Iterator.Next needs, in one cgo call. */
dinput_status_t dgo_iterator_next_element(dinput_element_t** out, size_t* size,
                                          dinput_element_t* previous, dinput_iterator_t* it);
/* get_next of a distributed iterator that also returns the number of replicas of the step,
 * saving a cgo round trip per step. */
dinput_status_t dgo_dist_iterator_get_next(dinput_per_replica_t** out, size_t* size,
                                           dinput_dist_iterator_t* it);
/* The same, after freeing `previous` (the step before, or NULL: freed first, its storage serves
 * the new step), with the infos of every replica's components (dinput_per_replica_tensor_infos:
 * *count of them, filled when *count <= capacity), so that host values can be read without
 * another call. The infos are an optimisation only: when they cannot be had, *count is 0. */
dinput_status_t dgo_dist_iterator_next_step(dinput_per_replica_t** out, size_t* size,
                                            dinput_tensor_info_t* infos, size_t capacity,
                                            size_t* count, dinput_per_replica_t* previous,
                                            dinput_dist_iterator_t* it);
/* Copies the data of component `component` of replica `replica` into dst (capacity dst_bytes)
 * after checking the dtype, without making a tensor handle. *num_elements receives the
 * tensor's number of scalars, also when dst is too small (then nothing is copied and the
 * status is DINPUT_OK: the caller grows dst and calls again). */
dinput_status_t dgo_per_replica_copy(const dinput_per_replica_t* v, size_t replica,
                                     size_t component, dinput_dtype_t expected, void* dst,
                                     size_t dst_bytes, int64_t* num_elements);
/* Copies the strings of a bytes tensor: lengths[i] and the bytes, concatenated, into `data`
 * (capacity data_cap; the byte size of the tensor is enough). */
dinput_status_t dgo_tensor_strings(const dinput_tensor_t* t, size_t* lengths, char* data,
                                   size_t data_cap);

/* Entry points that pass the Go trampolines of shim.c as callbacks; user data is a
 * runtime/cgo.Handle carried as an integer. */
dinput_status_t dgo_dataset_from_generator(dinput_dataset_t** out, const dinput_spec_t* spec,
                                           uintptr_t handle);
/* The same with the save and restore trampolines (FromSavableGenerator). */
dinput_status_t dgo_dataset_from_savable_generator(dinput_dataset_t** out,
                                                   const dinput_spec_t* spec, uintptr_t handle);
/* Calls the library's state writer, which Go cannot call itself. */
void dgo_call_state_write(dinput_state_write_fn write, void* sink, const void* data, size_t size);
dinput_status_t dgo_dataset_map(dinput_dataset_t** out, const dinput_dataset_t* input,
                                const dinput_spec_t* out_spec, int64_t num_parallel_calls,
                                int deterministic, uintptr_t handle);
dinput_status_t dgo_dataset_map_many(dinput_dataset_t** out, const dinput_dataset_t* input,
                                     size_t max_count, const dinput_spec_t* out_spec,
                                     int64_t num_parallel_calls, int deterministic,
                                     uintptr_t handle);
/* For a map_many callback, in one call from Go: the component counts of the count inputs. */
void dgo_element_sizes(const dinput_element_t* const* ins, size_t count, size_t* sizes);
/* outs[i] = a new reference to srcs[i] for every non-NULL srcs[i] (the results a map_many
 * function returned that are elements lent to it). On a failure the remaining such slots are
 * left NULL, never holding a lent handle. */
dinput_status_t dgo_element_ref_into(dinput_element_t** outs, dinput_element_t* const* srcs,
                                     size_t count);
/* DLPack's DLManagedTensor, written out (dinput.h only forward-declares it): the layout is
 * DLPack's ABI, unchanged from 0.5 through 1.x for this struct. */
typedef struct dgo_dl_device {
  int32_t device_type;
  int32_t device_id;
} dgo_dl_device;
typedef struct dgo_dl_dtype {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} dgo_dl_dtype;
typedef struct dgo_dl_tensor {
  void* data;
  dgo_dl_device device;
  int32_t ndim;
  dgo_dl_dtype dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
} dgo_dl_tensor;
typedef struct dgo_dl_managed {
  dgo_dl_tensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(struct dgo_dl_managed* self);
} dgo_dl_managed;
dinput_status_t dgo_tensor_to_dlpack(dgo_dl_managed** out, const dinput_tensor_t* t);
/* Calls the deleter (Go cannot call a C function pointer). */
void dgo_dlpack_delete(dgo_dl_managed* m);

/* interleave with its options; 0 leaves cycle_length, block_length and num_parallel_calls at
 * their defaults. */
dinput_status_t dgo_dataset_interleave(dinput_dataset_t** out, const dinput_dataset_t* input,
                                       const dinput_spec_t* out_spec, int64_t cycle_length,
                                       int64_t block_length, int64_t num_parallel_calls,
                                       int deterministic, uintptr_t handle);
dinput_status_t dgo_dataset_filter(dinput_dataset_t** out, const dinput_dataset_t* input,
                                   uintptr_t handle);
/* dinput_dataset_bucket_by_sequence_length_fn with the Go length function behind handle. */
dinput_status_t dgo_dataset_bucket_by_sequence_length_fn(
    dinput_dataset_t** out, const dinput_dataset_t* input, uintptr_t handle,
    const int64_t* boundaries, size_t num_boundaries, const int64_t* batch_sizes,
    size_t num_batch_sizes, int pad_to_bucket_boundary,
    const dinput_padded_batch_options_t* options);
dinput_status_t dgo_distribute_datasets_from_function(dinput_dist_dataset_t** out,
                                                      const dinput_strategy_t* strategy,
                                                      uintptr_t handle,
                                                      const dinput_input_options_t* options);
dinput_status_t dgo_distribute_values_from_function(dinput_per_replica_t** out,
                                                    const dinput_strategy_t* strategy,
                                                    uintptr_t handle);
dinput_status_t dgo_strategy_run(dinput_per_replica_t** out, const dinput_strategy_t* strategy,
                                 const dinput_per_replica_t* args, uintptr_t handle);

/* The functions of dinput_cuda.h, with CUDA's stream and event handles carried as integers
 * (Go's uintptr), so that neither cgo nor Go code needs CUDA headers. See shim.c. */
dinput_status_t dgo_tensor_cuda_wait(const dinput_tensor_t* t, uintptr_t stream);
dinput_status_t dgo_element_cuda_wait(const dinput_element_t* e, uintptr_t stream);
dinput_status_t dgo_tensor_cuda_record_stream(const dinput_tensor_t* t, uintptr_t stream);
uintptr_t dgo_tensor_cuda_ready_event(const dinput_tensor_t* t);

/* Input options built from Go values in one call (NULL out on failure). */
dinput_status_t dgo_input_options(dinput_input_options_t** out, int fetch_to_device,
                                  int replication_mode, int place_dataset_on_device,
                                  int64_t per_replica_buffer_size);

/* Collective options built from Go values in one call (NULL out on failure); allow_loopback
 * -1 leaves it unset. */
dinput_status_t dgo_collective_options(dinput_collective_options_t** out, int64_t timeout_ms,
                                       const char* job_id, const char* interface_name,
                                       const char* address, int allow_loopback);

/* flat_map with a Go callback (the interleave trampoline); the library owns the handle. */
dinput_status_t dgo_dataset_flat_map(dinput_dataset_t** out, const dinput_dataset_t* input,
                                     const dinput_spec_t* out_spec, uintptr_t handle);
/* interleave over a reader value, with the options of dgo_dataset_interleave. */
dinput_status_t dgo_dataset_interleave_reader(dinput_dataset_t** out, const dinput_dataset_t* input,
                                              const dinput_reader_t* reader, int64_t cycle_length,
                                              int64_t block_length, int64_t num_parallel_calls,
                                              int deterministic);

/* Has the library start its threads through Go (threads.go): installed once, at package init. */
void dgo_install_thread_launcher(void);
/* Runs a library thread's body: the C call a launched goroutine makes, and stays in until the
 * library is done with the thread. */
void dgo_run_thread_body(dinput_thread_body_fn body, void* arg);

#endif
