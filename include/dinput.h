/**
 * \file dinput.h
 * dinput.h — the stable C API of dinput, distributed input pipelines for ML training.
 *
 * dinput builds input pipelines (datasets), distributes them over the replicas of a
 * strategy (auto-sharding across workers, splitting each global batch among replicas,
 * partial batches at the end of data) and iterates them. It follows the semantics of
 * TensorFlow's tf.data and tf.distribute distributed input.
 *
 * CONVENTIONS
 *  - Every object is an opaque handle `dinput_<object>_t`. Functions are named
 *    `dinput_<object>_<verb>`. Out-parameters come first and are named `out`.
 *  - Every call that can fail returns a `dinput_status_t`; DINPUT_OK (0) is success. On
 *    failure `*out` is left NULL (for pointer outputs) and a message naming what is wrong
 *    is available from dinput_last_error_message() on the same thread, until that thread's
 *    next failing call (see "The last error" below).
 *  - End of data is DINPUT_OUT_OF_RANGE, as in TensorFlow, and nothing else is: only the
 *    get_next calls report it (get_next_as_optional gives an empty optional instead, which is
 *    not an error), and only a generator's next callback may return it to mean "no more".
 *    Any other callback (map, filter, interleave, a generator's init, dataset_fn, value_fn,
 *    the run callback) that returns DINPUT_OUT_OF_RANGE fails the call with
 *    DINPUT_INVALID_ARGUMENT naming the callback (and carrying its message), so that an
 *    exhausted inner iterator cannot silently end the caller's epoch. Bad arguments (an
 *    index out of bounds included) are DINPUT_INVALID_ARGUMENT.
 *  - OWNERSHIP, one rule: what comes out through `out` is OWNED by the caller. A handle is
 *    released with the matching `dinput_<object>_free`, which accepts NULL; a buffer the
 *    caller passes as `out` (dinput_tensor_copy_to) is the caller's own. Objects keep the
 *    objects they were made from alive (an iterator keeps its dataset, a dataset its
 *    inputs, a distributed dataset its strategy), so handles can be freed in any order.
 *    BORROWED results (pointers into an object, never to be freed) are returned directly,
 *    as by the accessors (dinput_tensor_data, dinput_element_get, ...), or, where the call
 *    can fail and say why, come through `out` of a function whose name ends in `_view`
 *    (dinput_tensor_string_view). Each one's documentation says how long it stays valid:
 *      - static (valid for the life of the process): dinput_status_name,
 *        dinput_dtype_name, dinput_dataset_name, dinput_version, dinput_build_info;
 *      - until the next failing call on the thread: dinput_last_error_message;
 *      - while the handle it was read from lives (not freed): dinput_tensor_data,
 *        dinput_tensor_shape, dinput_tensor_string_view, dinput_tensor_cuda_ready_event,
 *        dinput_element_get, dinput_spec_shape, dinput_per_replica_get, dinput_state_data,
 *        dinput_strategy_device, dinput_dist_dataset_plan, and the string getters of a
 *        cluster (dinput_cluster_rdzv_url, ...);
 *      - during the callback only: the contexts passed to callbacks (input, value and
 *        replica contexts, and what dinput_replica_context_device returns from one), and the
 *        input element `in` of map, filter and interleave callbacks (the elements `ins`
 *        of a map_many callback) and `args` of a run callback. To keep such an element
 *        (or a tensor of it) past the call, take a new handle with dinput_element_ref
 *        (dinput_tensor_ref).
 *    What a callback returns through its own `out` becomes the library's.
 *  - Arguments passed as `const T *` are only read during the call unless stated.
 *    Handles passed to constructors are retained internally (the caller still frees its own).
 *  - No C++ exception, abort or exit leaves the library; failures are status codes.
 *
 * THREADING
 *  - The library is thread-safe for distinct handles. Immutable objects (tensors, elements,
 *    datasets, strategies, distributed datasets, per-replica values, optionals, clusters)
 *    may be shared and read from several threads at once.
 *  - Specs (dinput_spec_t) and options (dinput_options_t, dinput_input_options_t) are
 *    mutable until used, then frozen. The functions that use them
 *    (dinput_map_options_set_out_spec, dinput_dataset_interleave out_spec,
 *    dinput_dataset_from_generator spec,
 *    dinput_dataset_with_options, dinput_strategy_distribute_dataset,
 *    dinput_strategy_distribute_datasets_from_function) copy their values, and a successful
 *    call freezes the object: every later setter or adder on it fails with
 *    DINPUT_FAILED_PRECONDITION naming that function ("options already used by
 *    dinput_dataset_with_options; ... make a new one"). A frozen object can still be read and
 *    used again, from several threads at once. Until then it belongs to one thread: a setter
 *    must not overlap any other call on the same object.
 *  - Iterators are used by one consumer thread at a time (calls on one iterator must not
 *    overlap); the library may produce ahead on its own background threads. A get_next or
 *    get_next_as_optional call (plain or distributed) that overlaps another one on the same
 *    iterator is refused with DINPUT_FAILED_PRECONDITION ("already in use by another
 *    thread"); it consumes nothing and leaves the iterator usable.
 *  - The exception is cancellation: dinput_iterator_cancel and dinput_dist_iterator_cancel
 *    may be called from any thread, also while another thread is blocked in get_next on the
 *    same iterator (cancel and get_next may race). Freeing must not race with either: free
 *    an iterator only once no other call on it is running.
 *  - Freeing an iterator never waits for a slow upstream: background threads stuck inside a
 *    callback are left to finish that call on their own, after which they release what they
 *    used. Such a callback's user_data is still released exactly once, after its last call
 *    has returned, so it may outlive the free call.
 *  - Callbacks (generator, map, filter, interleave, dataset_fn, value_fn, run) may be called
 *    from library
 *    threads, and several at once where the documentation says so (parallel map, run).
 *    A callback reports failure by returning a status other than DINPUT_OK; it may first
 *    call dinput_error_set() to give the message that reaches the caller.
 */
#ifndef DINPUT_H
#define DINPUT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Major version of this header: releases with the same major version are ABI compatible. */
#define DINPUT_VERSION_MAJOR 0
/** Minor version of this header: grows when functions or enum values are added. */
#define DINPUT_VERSION_MINOR 1
/** Patch version of this header: fixes that change no declaration. */
#define DINPUT_VERSION_PATCH 0
/** MAJOR*10000 + MINOR*100 + PATCH, for compile-time checks. */
#define DINPUT_VERSION_NUMBER \
  (DINPUT_VERSION_MAJOR * 10000 + DINPUT_VERSION_MINOR * 100 + DINPUT_VERSION_PATCH)

/* Enums are int-sized in both languages. In C++ they are declared with int as their
 * underlying type, so any int a C caller passes is a valid value for the library to check
 * (an out-of-range value of an enum without a fixed type is undefined behaviour in C++).
 * In C each enum also ends with a ..._FORCE_32BIT = 0x7FFFFFFF sentinel, which keeps it
 * 4 bytes wide even where the compiler would pick a smaller type (-fshort-enums, some
 * embedded ABIs) and so keeps the ABI the same for every caller. The sentinels are not
 * values: the library refuses them like any other unknown value. */
#if defined(__cplusplus) && __cplusplus >= 201103L
#define DINPUT_ENUM(name) enum name : int
#else
#define DINPUT_ENUM(name) enum name
#endif

#if defined(DINPUT_BUILDING_LIBRARY) && defined(__GNUC__)
#define DINPUT_API __attribute__((visibility("default")))
#else
#define DINPUT_API
#endif

/* ------------------------------------------------------------------------------------- */
/* Status codes, errors, version                                                          */
/* ------------------------------------------------------------------------------------- */

/** The canonical status codes (the same numbers as TensorFlow/absl). Append-only. */
/* clang-format off */
typedef DINPUT_ENUM(dinput_status_t) {
  DINPUT_OK = 0,
  DINPUT_CANCELLED = 1,
  DINPUT_UNKNOWN = 2,
  DINPUT_INVALID_ARGUMENT = 3,
  DINPUT_DEADLINE_EXCEEDED = 4,
  DINPUT_NOT_FOUND = 5,
  DINPUT_ALREADY_EXISTS = 6,
  DINPUT_PERMISSION_DENIED = 7,
  DINPUT_RESOURCE_EXHAUSTED = 8,
  DINPUT_FAILED_PRECONDITION = 9,
  DINPUT_ABORTED = 10,
  DINPUT_OUT_OF_RANGE = 11,
  DINPUT_UNIMPLEMENTED = 12,
  DINPUT_INTERNAL = 13,
  DINPUT_UNAVAILABLE = 14,
  DINPUT_DATA_LOSS = 15,
  DINPUT_UNAUTHENTICATED = 16,
  DINPUT_STATUS_FORCE_32BIT = 0x7FFFFFFF
} dinput_status_t;
/* clang-format on */

/** Static name of a code, e.g. "INVALID_ARGUMENT"; "UNKNOWN_STATUS" for other values. */
DINPUT_API const char* dinput_status_name(dinput_status_t code);

/* The last error. Each thread has one last error: a code and a message. It changes only
 * when a dinput call made by that thread fails (the call sets it to its own status and
 * message), or when the thread itself calls dinput_error_set or dinput_error_clear.
 * Successful calls leave it alone, so it can be read any time after the failure, not only
 * right after it. Callbacks cannot change it either: while the library runs a callback it
 * sets the thread's last error aside (the callback starts with a clear one, and sees only the
 * errors of its own calls) and puts it back afterwards, so a callback that runs on the
 * caller's thread (dataset_fn, value_fn, replica 0 of dinput_strategy_run, a sequential map
 * or filter, an interleave callback, a generator without prefetch) cannot wipe a message the
 * caller has not read yet. When a callback fails, the call it failed reports the message the
 * callback left (with dinput_error_set, or from a dinput call of its own that failed). */

/** Message of the last failing call on this thread ("" if none). Borrowed: valid until the
 * next failing dinput call, dinput_error_set or dinput_error_clear on this thread. */
DINPUT_API const char* dinput_last_error_message(void);

/** Code of the last failing call on this thread (DINPUT_OK if none). */
DINPUT_API dinput_status_t dinput_last_error_code(void);

/** Sets this thread's last error. Meant for callbacks: call it before returning a failing
 * status so that the message reaches the caller of get_next (or of the call that ran the
 * callback). message may be NULL. code must not be DINPUT_OK: that call records
 * INVALID_ARGUMENT ("dinput_error_set: code must not be DINPUT_OK ...") instead (use
 * dinput_error_clear to clear the last error). */
DINPUT_API void dinput_error_set(dinput_status_t code, const char* message);

/** Clears this thread's last error (code DINPUT_OK, message ""). Never needed for correct
 * error handling, since a status other than DINPUT_OK is what says a call failed; for a
 * caller that has handled a failure and wants a later look at the last error to show only
 * newer ones. */
DINPUT_API void dinput_error_clear(void);

/** Run-time version string "MAJOR.MINOR.PATCH" (static: valid for the life of the process). */
DINPUT_API const char* dinput_version(void);

/** Run-time version number, same encoding as DINPUT_VERSION_NUMBER. */
DINPUT_API int dinput_version_number(void);

/** Static JSON text (valid for the life of the process) describing the build: version,
 * compiler, and for each optional component (cuda, nccl, gloo, zstd, zlib, isal: ISA-L's
 * CRC32C) whether it was compiled in and whether it is usable now,
 * e.g. {"version":"0.1.0","cuda":{"compiled":true,"available":false,"devices":0},...}. */
DINPUT_API const char* dinput_build_info(void);

/* ------------------------------------------------------------------------------------- */
/* The library's threads                                                                  */
/* ------------------------------------------------------------------------------------- */

/* The library runs pipelines on threads it starts: parallel map and interleave pools,
 * prefetch and distribution producers, the threads of dinput_strategy_run, and a few of its
 * own. Callbacks (map functions, generators, dataset_fn, ...) run on them. Some language
 * runtimes pay dearly for a call that arrives on a thread they did not create (Go attaches
 * such a thread afresh for every call, a few microseconds each), so a binding may start these
 * threads itself through a launcher (docs/c-api.md, "The library's threads"). */

/** The body of a thread the library starts; a launcher calls it with the arg it was given. */
typedef void (*dinput_thread_body_fn)(void* arg);
/** Starts one thread for the library: calls body(arg) exactly once, on a thread other than the
 * caller's, and returns 0 without waiting for body to return; or returns non-zero without ever
 * calling body, and the library starts that thread itself. body returns when the library is
 * done with the thread; what becomes of the thread then is the launcher's affair. The library
 * may call the launcher from any thread, its own included, and while it holds locks of its own:
 * the launcher must not call into the library or wait for another thread's body. */
typedef int (*dinput_thread_launcher_fn)(dinput_thread_body_fn body, void* arg, void* user_data);

/** Installs `launcher` (with its user_data) for the whole process: every thread the library
 * starts from now on starts through it. NULL restores the default (threads of the C++ runtime).
 * Threads already running are not affected. Thread-safe. user_data must stay valid as long as
 * the launcher may be called: until another call replaces it. */
DINPUT_API void dinput_set_thread_launcher(dinput_thread_launcher_fn launcher, void* user_data);

/* ------------------------------------------------------------------------------------- */
/* Data types and tensors                                                                 */
/* ------------------------------------------------------------------------------------- */

/** Element data types. Append-only. DINPUT_BYTES: each scalar is a byte string. */
/* clang-format off */
typedef DINPUT_ENUM(dinput_dtype_t) {
  DINPUT_DTYPE_INVALID = 0,
  DINPUT_BOOL = 1,
  DINPUT_INT8 = 2,
  DINPUT_INT16 = 3,
  DINPUT_INT32 = 4,
  DINPUT_INT64 = 5,
  DINPUT_UINT8 = 6,
  DINPUT_UINT16 = 7,
  DINPUT_UINT32 = 8,
  DINPUT_UINT64 = 9,
  DINPUT_FLOAT16 = 10,
  DINPUT_BFLOAT16 = 11,
  DINPUT_FLOAT32 = 12,
  DINPUT_FLOAT64 = 13,
  DINPUT_BYTES = 14,
  DINPUT_DTYPE_FORCE_32BIT = 0x7FFFFFFF
} dinput_dtype_t;
/* clang-format on */

/** Static name ("int64", "float32", "bytes", ...); "invalid" for unknown values. */
DINPUT_API const char* dinput_dtype_name(dinput_dtype_t dtype);

/** Size of one scalar in bytes; 0 for DINPUT_BYTES and invalid values. */
DINPUT_API size_t dinput_dtype_size(dinput_dtype_t dtype);

/** Parses a dtype name as printed by dinput_dtype_name. Returns DINPUT_DTYPE_INVALID when
 * the name is unknown. */
DINPUT_API dinput_dtype_t dinput_dtype_from_name(const char* name);

/** An unknown dimension in a shape (in specs only; tensors have known shapes). */
#define DINPUT_UNKNOWN_DIM (-1)

/** An immutable dense tensor: dtype, shape, data. The data is in host memory, except for the
 * tensors a distributed iterator delivers to GPU replicas (see dinput_tensor_device_type):
 * passed back to a call that reads data on the host, those are copied to the host first
 * (see the guide, docs/c-api.md, "Tensors on a GPU"). */
typedef struct dinput_tensor dinput_tensor_t;

/** Creates a tensor of a fixed-size dtype with a copy of `data`, which must hold exactly
 * product(shape) * dinput_dtype_size(dtype) bytes (`nbytes`) of host memory (not the
 * dinput_tensor_data of a CUDA tensor: copy that with dinput_tensor_to_host first). data may
 * be NULL when nbytes is 0, or to get a tensor of zeros (then nbytes is ignored). rank 0 is a
 * scalar (shape may be NULL). Errors: INVALID_ARGUMENT for DINPUT_BYTES (use
 * dinput_tensor_new_bytes), an invalid dtype, a negative dimension, a size mismatch, or a
 * DINPUT_BOOL byte other than 0 or 1. */
DINPUT_API dinput_status_t dinput_tensor_new(dinput_tensor_t** out, dinput_dtype_t dtype,
                                             const int64_t* shape, int rank, const void* data,
                                             size_t nbytes);

/** Creates a DINPUT_BYTES tensor from product(shape) strings, copied. lengths[i] is the length
 * of strings[i]; lengths may be NULL for NUL-terminated strings. */
DINPUT_API dinput_status_t dinput_tensor_new_bytes(dinput_tensor_t** out, const int64_t* shape,
                                                   int rank, const char* const* strings,
                                                   const size_t* lengths);

/** A new handle to the same tensor (no copy of the data). */
DINPUT_API dinput_status_t dinput_tensor_ref(dinput_tensor_t** out, const dinput_tensor_t* tensor);

/** Releases this handle to the tensor (the data lives on while another handle or element
 * holds it). NULL is ignored. */
DINPUT_API void dinput_tensor_free(dinput_tensor_t* tensor);

/** Accessors. On a NULL tensor they return DINPUT_DTYPE_INVALID, -1, NULL or 0. */
DINPUT_API dinput_dtype_t dinput_tensor_dtype(const dinput_tensor_t* tensor);
/** Number of dimensions (0 for a scalar), -1 for NULL. */
DINPUT_API int dinput_tensor_rank(const dinput_tensor_t* tensor);
/** Borrowed array of rank dimensions, valid while the tensor handle lives. */
DINPUT_API const int64_t* dinput_tensor_shape(const dinput_tensor_t* tensor);
/** Dimension i, or -1 when i is out of range. */
DINPUT_API int64_t dinput_tensor_dim(const dinput_tensor_t* tensor, int i);
/** Number of scalars: the product of the shape (1 for a scalar). */
DINPUT_API int64_t dinput_tensor_num_elements(const dinput_tensor_t* tensor);
/** Payload bytes: num_elements * dtype size; for DINPUT_BYTES the sum of string lengths. */
DINPUT_API size_t dinput_tensor_byte_size(const dinput_tensor_t* tensor);
/** Borrowed pointer to the row-major data of a fixed-size dtype, valid while the tensor
 * handle lives; NULL for DINPUT_BYTES. The data must not be modified. For a CUDA tensor
 * (see dinput_tensor_device_type) this is a device pointer: order GPU work after the copy
 * that fills it with dinput_tensor_cuda_wait (dinput_cuda.h), and keep the handle until that
 * work is done, since its memory is reused once the last handle is freed. */
DINPUT_API const void* dinput_tensor_data(const dinput_tensor_t* tensor);

/** Where a tensor's data lives. The numbers are DLPack's device types. Append-only. */
/* clang-format off */
typedef DINPUT_ENUM(dinput_device_type_t) {
  DINPUT_DEVICE_CPU = 1,
  DINPUT_DEVICE_CUDA = 2,
  DINPUT_DEVICE_CUDA_HOST = 3, /**< page-locked host memory */
  DINPUT_DEVICE_TYPE_FORCE_32BIT = 0x7FFFFFFF
} dinput_device_type_t;
/* clang-format on */

/** The tensor's device type (DINPUT_DEVICE_CPU for NULL). */
DINPUT_API dinput_device_type_t dinput_tensor_device_type(const dinput_tensor_t* tensor);
/** The CUDA device ordinal of a DINPUT_DEVICE_CUDA tensor; -1 otherwise. */
DINPUT_API int dinput_tensor_device_index(const dinput_tensor_t* tensor);
/** A tensor in host memory with the same values: for a CUDA tensor a copy (waiting for the
 * copy that fills it), for a host tensor a new handle to the same data. FAILED_PRECONDITION
 * naming the device when the CUDA tensor's GPU cannot be used in this process. */
DINPUT_API dinput_status_t dinput_tensor_to_host(dinput_tensor_t** out,
                                                 const dinput_tensor_t* tensor);

/** Creates a tensor like dinput_tensor_new, but in page-locked (pinned) host memory from
 * dinput's pinned pool (its device type is DINPUT_DEVICE_CUDA_HOST). Copies of it to a GPU
 * skip the staging copy that pageable memory needs and run at the full speed of the bus:
 * use it for data that a distributed iterator sends to GPUs many times (from_tensors with
 * repeat, say). The memory returns to the pool when the last reference is gone. Errors: as
 * dinput_tensor_new, FAILED_PRECONDITION without a usable CUDA driver and device (always in
 * a build without CUDA), RESOURCE_EXHAUSTED when no page-locked memory is left. */
DINPUT_API dinput_status_t dinput_tensor_new_pinned(dinput_tensor_t** out, dinput_dtype_t dtype,
                                                    const int64_t* shape, int rank,
                                                    const void* data, size_t nbytes);

/** Typed access: copies the data of `tensor` into the caller's buffer `out` (capacity
 * `out_bytes`, host memory; out may be NULL when the tensor has no data) after checking that
 * the tensor's dtype is `expected`. A CUDA tensor is copied from the GPU (waiting for the
 * copy that fills it). INVALID_ARGUMENT names both dtypes on a mismatch, or the sizes when
 * out is too small; FAILED_PRECONDITION names the device when a CUDA tensor's GPU cannot be
 * used in this process. DINPUT_BYTES tensors are read with dinput_tensor_string_view. */
DINPUT_API dinput_status_t dinput_tensor_copy_to(void* out, size_t out_bytes,
                                                 const dinput_tensor_t* tensor,
                                                 dinput_dtype_t expected);

/** String `index` (row-major) of a DINPUT_BYTES tensor, as a view: *out points into the tensor
 * (BORROWED, not NUL-terminated, valid while the tensor handle lives) and *out_len is its
 * length. A function and not an accessor, so that a bad index or a tensor of another dtype is
 * an error with a message: INVALID_ARGUMENT, leaving *out NULL and *out_len 0. Strings read
 * in increasing index order are read ahead: each call asks the CPU for the first 4 KiB of the
 * string 8 places on (docs/records.md, "Reading a batch of records"). */
DINPUT_API dinput_status_t dinput_tensor_string_view(const char** out, size_t* out_len,
                                                     const dinput_tensor_t* tensor, int64_t index);

struct DLManagedTensor; /* from dlpack/dlpack.h */

/** Exports the tensor as a DLPack tensor without copying. The caller owns *out and must call
 * (*out)->deleter(*out) when done; the data stays valid until then, whatever else is freed.
 * The data must be treated as read-only. bool is exported as uint8 (DLPack < 0.8 has no bool
 * code). CUDA tensors are exported as kDLCUDA with their device id, page-locked ones as
 * kDLCUDAHost; the consumer must order its reads after dinput_tensor_cuda_wait.
 * Errors: INVALID_ARGUMENT for DINPUT_BYTES tensors. */
DINPUT_API dinput_status_t dinput_tensor_to_dlpack(struct DLManagedTensor** out,
                                                   const dinput_tensor_t* tensor);

/* ------------------------------------------------------------------------------------- */
/* GPU memory: the caches behind CUDA tensors                                             */
/* ------------------------------------------------------------------------------------- */

/* dinput keeps the device blocks of freed CUDA tensors for reuse, because cudaMalloc and
 * cudaFree stall the GPU. A cached block is handed out again only after the GPU work of
 * every stream that read it (see dinput_tensor_cuda_wait and
 * dinput_tensor_cuda_record_stream in dinput_cuda.h) has run. These functions bound and
 * release that cache, for programs that share the GPU with another framework's allocator.
 * They need no CUDA headers; in a build without CUDA they succeed and report 0 bytes. */

/** Releases every cached block on every GPU, and the cached pinned host blocks, back to
 * CUDA. Blocks that live tensors hold are kept. Blocks whose readers may still run on the
 * GPU are released after that work: this call may wait for the GPU (it is never made from
 * inside dinput's own deleters), and for the blocks that freed iterators are handing back.
 * The cache of a GPU is also emptied when the last distributed iterator feeding that GPU is
 * freed: on a thread of dinput's, so that freeing the iterator never waits for the GPU. */
DINPUT_API dinput_status_t dinput_cuda_empty_cache(void);

/** Sets how many bytes of free blocks the cache of each GPU may keep (default 1 GiB, or
 * DINPUT_CUDA_CACHE_MB from the environment). Blocks freed beyond it go back to CUDA.
 * 0 disables caching (every block is released once its readers are done). Takes effect at
 * once; process-wide. */
DINPUT_API dinput_status_t dinput_cuda_set_cache_limit(size_t bytes);

/** The per-GPU cache limit in effect, in bytes (see dinput_cuda_set_cache_limit). */
DINPUT_API dinput_status_t dinput_cuda_cache_limit(size_t* out);

/** Device memory that dinput holds on GPU `device`: *out_held is every byte allocated from
 * CUDA and not yet returned (blocks in use by tensors plus cached ones), *out_cached the part
 * that is free for reuse. Either pointer may be NULL. A device that dinput never used, or
 * a build without CUDA, gives 0 and 0. INVALID_ARGUMENT for a negative device. */
DINPUT_API dinput_status_t dinput_cuda_pool_bytes(size_t* out_held, size_t* out_cached, int device);

/* ------------------------------------------------------------------------------------- */
/* Elements: tuples of tensors                                                            */
/* ------------------------------------------------------------------------------------- */

/** An element: an immutable tuple of tensors (its components), the unit a dataset yields. */
typedef struct dinput_element dinput_element_t;

/** Creates an element from `count` tensors (the element takes its own references). */
DINPUT_API dinput_status_t dinput_element_new(dinput_element_t** out,
                                              const dinput_tensor_t* const* tensors, size_t count);
/** Releases this handle to the element. NULL is ignored. */
DINPUT_API void dinput_element_free(dinput_element_t* element);
/** A new handle to the same element (no copy of the data). */
DINPUT_API dinput_status_t dinput_element_ref(dinput_element_t** out,
                                              const dinput_element_t* element);
/** Number of components (0 for NULL). */
DINPUT_API size_t dinput_element_size(const dinput_element_t* element);
/** Borrowed component i, valid while the element lives; NULL when out of range. Use
 * dinput_tensor_ref to keep it longer. */
DINPUT_API const dinput_tensor_t* dinput_element_get(const dinput_element_t* element, size_t i);

/** What the accessors of one tensor return, gathered by one call (dinput_element_tensor_infos,
 * dinput_per_replica_tensor_infos) for bindings whose every foreign call is costly (Python's
 * ctypes, Go's cgo). Every pointer is borrowed, valid while the element or per-replica value
 * it was read from lives. Fields are only ever appended, through new functions. */
typedef struct dinput_tensor_info {
  const dinput_tensor_t* tensor;    /**< the component itself (dinput_element_get) */
  const void* data;                 /**< dinput_tensor_data: NULL for DINPUT_BYTES */
  const int64_t* shape;             /**< dinput_tensor_shape: rank dimensions */
  size_t byte_size;                 /**< dinput_tensor_byte_size */
  int32_t rank;                     /**< dinput_tensor_rank */
  dinput_dtype_t dtype;             /**< dinput_tensor_dtype */
  dinput_device_type_t device_type; /**< dinput_tensor_device_type */
  int32_t device_index;             /**< dinput_tensor_device_index */
} dinput_tensor_info_t;

/** Fills infos[0 .. min(capacity, n)) with the element's n components, in order, and sets
 * *count to n (so a call with capacity 0, where infos may be NULL, asks for n). */
DINPUT_API dinput_status_t dinput_element_tensor_infos(size_t* count, dinput_tensor_info_t* infos,
                                                       size_t capacity,
                                                       const dinput_element_t* element);

/* ------------------------------------------------------------------------------------- */
/* Element specs                                                                          */
/* ------------------------------------------------------------------------------------- */

/** The spec of an element: per component a dtype and a shape whose dimensions may be unknown
 * (DINPUT_UNKNOWN_DIM). */
typedef struct dinput_spec dinput_spec_t;

/** Creates an empty spec (no components); add them with dinput_spec_add. A spec is mutable
 * until a call uses it (it is then frozen: see THREADING above). */
DINPUT_API dinput_status_t dinput_spec_new(dinput_spec_t** out);
/** Appends a component. Dimensions must be >= 0 or DINPUT_UNKNOWN_DIM. */
DINPUT_API dinput_status_t dinput_spec_add(dinput_spec_t* spec, dinput_dtype_t dtype,
                                           const int64_t* shape, int rank);
/** Frees the spec. NULL is ignored. */
DINPUT_API void dinput_spec_free(dinput_spec_t* spec);
/** Number of components (0 for NULL). */
DINPUT_API size_t dinput_spec_size(const dinput_spec_t* spec);
/** Dtype of component i, DINPUT_DTYPE_INVALID when out of range. */
DINPUT_API dinput_dtype_t dinput_spec_dtype(const dinput_spec_t* spec, size_t i);
/** Rank of component i, -1 when out of range. */
DINPUT_API int dinput_spec_rank(const dinput_spec_t* spec, size_t i);
/** Borrowed dimensions of component i, valid while the spec lives; NULL when out of range. */
DINPUT_API const int64_t* dinput_spec_shape(const dinput_spec_t* spec, size_t i);

/* ------------------------------------------------------------------------------------- */
/* Dataset options                                                                        */
/* ------------------------------------------------------------------------------------- */

/** How distribute_dataset shards a dataset across workers (values as in TensorFlow). */
/* clang-format off */
typedef DINPUT_ENUM(dinput_auto_shard_policy_t) {
  DINPUT_AUTO_SHARD_OFF = -1,
  DINPUT_AUTO_SHARD_AUTO = 0,
  DINPUT_AUTO_SHARD_FILE = 1,
  DINPUT_AUTO_SHARD_DATA = 2,
  DINPUT_AUTO_SHARD_HINT = 3,
  DINPUT_AUTO_SHARD_POLICY_FORCE_32BIT = 0x7FFFFFFF
} dinput_auto_shard_policy_t;
/* clang-format on */

/** Dataset options (as tf.data.Options): sharding policy, corrupt-record handling, record
 * limits, file access and determinism. Attached to a dataset with dinput_dataset_with_options;
 * mutable until used, then frozen. */
typedef struct dinput_options dinput_options_t;

/** Creates options with every setting at its default. */
DINPUT_API dinput_status_t dinput_options_new(dinput_options_t** out);
/** Frees the options. NULL is ignored; datasets built with them keep their own copy. */
DINPUT_API void dinput_options_free(dinput_options_t* options);
/** Default DINPUT_AUTO_SHARD_AUTO. */
DINPUT_API dinput_status_t dinput_options_set_auto_shard_policy(dinput_options_t* options,
                                                                dinput_auto_shard_policy_t policy);
/** The auto-shard policy (DINPUT_AUTO_SHARD_AUTO for NULL). */
DINPUT_API dinput_auto_shard_policy_t
dinput_options_auto_shard_policy(const dinput_options_t* options);
/** Default 0: a corrupt record (bad CRC, truncated) fails get_next with DINPUT_DATA_LOSS
 * naming the file and byte offset. Non-zero: readers skip corrupt records and go on. A bad
 * data CRC skips that record; a bad length CRC makes the reader scan forward for the next
 * valid header (a resynchronization); a truncated record or a corrupt compressed stream ends
 * that file's data. The iterator statistics count them: "corrupt_records_skipped" is 1 per
 * record with a bad data CRC or over max_record_bytes, per resynchronization (however many
 * records the damaged bytes held) and per file ended early; "corrupt_bytes_skipped" is every
 * byte of the (decompressed) data read and not delivered. Applies to the readers upstream of
 * the with_options node. */
DINPUT_API dinput_status_t dinput_options_set_skip_corrupt_records(dinput_options_t* options,
                                                                   int enable);
/** 1 when corrupt records are skipped, else 0 (0 when unset or options is NULL). */
DINPUT_API int dinput_options_skip_corrupt_records(const dinput_options_t* options);
/** The largest record (data bytes) the record readers accept; default 256 MiB
 * (268435456), at most 2^56. A length field claiming more is DINPUT_DATA_LOSS naming the
 * file, the offset and the claim, raised before any memory is taken for it, so a damaged or
 * hostile file (a "decompression bomb") cannot exhaust memory; with skip_corrupt_records the
 * record is skipped instead. A record is held in memory once, in a buffer of its size.
 * INVALID_ARGUMENT for max_bytes outside 1..2^56. Applies to the readers upstream of the
 * with_options node. */
DINPUT_API dinput_status_t dinput_options_set_max_record_bytes(dinput_options_t* options,
                                                               int64_t max_bytes);
/** The limit in effect (the default when unset or options is NULL). */
DINPUT_API int64_t dinput_options_max_record_bytes(const dinput_options_t* options);
/** Default 0: the file readers (records, text_lines, fixed_length_records) read files with
 * pread() into the library's own buffers, and records are views of those buffers. A regular
 * file that ends before the size it had when it was opened (truncated while being read) is
 * DINPUT_DATA_LOSS naming the file and the offset where it ended, and a file rewritten after
 * a record was returned does not change that record. Non-zero: regular files are
 * memory-mapped instead (records are then views of the page cache, which saves a copy).
 * Only for files nobody truncates or rewrites while they are read: a mapped file truncated
 * by another process kills this process with SIGBUS when the missing pages are touched, and
 * a mapped file rewritten in place changes records already returned and CRC-checked. Applies
 * to the readers upstream of the with_options node. */
DINPUT_API dinput_status_t dinput_options_set_map_files(dinput_options_t* options, int enable);
/** 1 when regular files are memory-mapped, else 0 (0 when unset or options is NULL). */
DINPUT_API int dinput_options_map_files(const dinput_options_t* options);
/** Default 0: the file readers refuse paths that are not regular files (FIFOs, character and
 * block devices, sockets) with DINPUT_FAILED_PRECONDITION naming the file, checked before
 * the file is opened (opening a FIFO waits for a writer). Non-zero: such files are read to
 * their end. text_lines then still stops at a line longer than max_record_bytes, and
 * fixed_length_records (which reads such a file whole) at one larger than max_record_bytes,
 * with DINPUT_RESOURCE_EXHAUSTED naming the file, so that /dev/zero cannot take memory
 * without bound. Applies to the readers upstream of the with_options node. */
DINPUT_API dinput_status_t dinput_options_set_allow_nonregular_files(dinput_options_t* options,
                                                                     int enable);
/** 1 when non-regular files are allowed, else 0 (0 when unset or options is NULL). */
DINPUT_API int dinput_options_allow_nonregular_files(const dinput_options_t* options);
/** The order of the map, interleave and batch nodes upstream of the with_options node whose
 * own options leave deterministic DINPUT_DETERMINISTIC_UNSET (tf.data's
 * Options.deterministic). Default 1: elements keep their input order. 0: they may come in
 * the order they are ready. */
DINPUT_API dinput_status_t dinput_options_set_deterministic(dinput_options_t* options, int enable);
/** 1 when ordered, else 0 (1 when unset or options is NULL). */
DINPUT_API int dinput_options_deterministic(const dinput_options_t* options);

/* ------------------------------------------------------------------------------------- */
/* Transformation options                                                                 */
/* ------------------------------------------------------------------------------------- */

/* The settings of a transformation beyond its required arguments (dinput_map_options_t,
 * dinput_interleave_options_t, dinput_batch_options_t, dinput_shuffle_options_t,
 * dinput_records_options_t, dinput_list_files_options_t, dinput_record_writer_options_t),
 * so that settings can be added later without changing a signature. Each works the same way:
 *  - _new(out) makes one with every setting at its default; _free accepts NULL; a NULL
 *    handle where a function takes one means "all defaults".
 *  - A setter returns INVALID_ARGUMENT naming the value it refuses; a getter returns the
 *    value in effect (the default when unset or when the handle is NULL).
 *  - The function that takes the handle copies its settings: later changes to the handle do
 *    not reach the dataset or writer made. A handle that has made a dataset or writer is
 *    frozen: a setter on it then fails with FAILED_PRECONDITION naming the function that
 *    used it. It can still be read, and used for more datasets with the same settings. A
 *    call that fails does not freeze the handle.
 *  - As for specs and options (THREADING above): until it is frozen a handle belongs to one
 *    thread; once frozen it may be read from several threads at once. */

/** tf.data's three-state `deterministic` of map, interleave and batch. */
/* clang-format off */
typedef DINPUT_ENUM(dinput_deterministic_t) {
  /** Follow dinput_options_set_deterministic of the pipeline (default: ordered). */
  DINPUT_DETERMINISTIC_UNSET = -1,
  /** Elements may come in the order they are ready rather than the input order. */
  DINPUT_DETERMINISTIC_FALSE = 0,
  /** Elements keep the input order. */
  DINPUT_DETERMINISTIC_TRUE = 1,
  DINPUT_DETERMINISTIC_FORCE_32BIT = 0x7FFFFFFF
} dinput_deterministic_t;
/* clang-format on */

/** Options of dinput_dataset_map. */
typedef struct dinput_map_options dinput_map_options_t;
/** A new handle with every setting at its default; release it with dinput_map_options_free. */
DINPUT_API dinput_status_t dinput_map_options_new(dinput_map_options_t** out);
/** Releases the handle (NULL is accepted). */
DINPUT_API void dinput_map_options_free(dinput_map_options_t* options);
/** The spec of the map function's results; NULL (the default): the same as the input's. The
 * spec is copied and frozen (a later dinput_spec_add on it fails). A result that does not
 * match it fails get_next with INVALID_ARGUMENT. */
DINPUT_API dinput_status_t dinput_map_options_set_out_spec(dinput_map_options_t* options,
                                                           const dinput_spec_t* spec);
/** A copy of the spec set, or *out = NULL when none is (DINPUT_OK either way). */
DINPUT_API dinput_status_t dinput_map_options_out_spec(dinput_spec_t** out,
                                                       const dinput_map_options_t* options);
/** 1 (the default) or 0: sequential, on the consumer's thread; 2..1024: a pool of that many
 * threads; DINPUT_AUTOTUNE: a pool the autotuner grows from 1 thread while the map keeps its
 * consumer waiting (docs/autotune.md). */
DINPUT_API dinput_status_t dinput_map_options_set_num_parallel_calls(dinput_map_options_t* options,
                                                                     int64_t num_parallel_calls);
/** The num parallel calls in effect (the default when options is NULL). */
DINPUT_API int64_t dinput_map_options_num_parallel_calls(const dinput_map_options_t* options);
/** Whether a parallel map returns results in input order (default UNSET). */
DINPUT_API dinput_status_t dinput_map_options_set_deterministic(
    dinput_map_options_t* options, dinput_deterministic_t deterministic);
/** The deterministic in effect (the default when options is NULL). */
DINPUT_API dinput_deterministic_t
dinput_map_options_deterministic(const dinput_map_options_t* options);

/** Options of dinput_dataset_interleave. */
typedef struct dinput_interleave_options dinput_interleave_options_t;
/** A new handle with every setting at its default (released by
 * dinput_interleave_options_free). */
DINPUT_API dinput_status_t dinput_interleave_options_new(dinput_interleave_options_t** out);
/** Releases the handle (NULL is accepted). */
DINPUT_API void dinput_interleave_options_free(dinput_interleave_options_t* options);
/** How many datasets are read at once: 1..4096, or DINPUT_AUTOTUNE (the default: one per
 * core). */
DINPUT_API dinput_status_t dinput_interleave_options_set_cycle_length(
    dinput_interleave_options_t* options, int64_t cycle_length);
/** The cycle length in effect (the default when options is NULL). */
DINPUT_API int64_t
dinput_interleave_options_cycle_length(const dinput_interleave_options_t* options);
/** Consecutive elements taken from one dataset before moving to the next: >= 1 (default 1). */
DINPUT_API dinput_status_t dinput_interleave_options_set_block_length(
    dinput_interleave_options_t* options, int64_t block_length);
/** The block length in effect (the default when options is NULL). */
DINPUT_API int64_t
dinput_interleave_options_block_length(const dinput_interleave_options_t* options);
/** 1 (the default) or 0: the open datasets are read on the consumer's thread; 2..1024 or
 * DINPUT_AUTOTUNE: each open dataset is read ahead on a library thread of its own. */
DINPUT_API dinput_status_t dinput_interleave_options_set_num_parallel_calls(
    dinput_interleave_options_t* options, int64_t num_parallel_calls);
/** The num parallel calls in effect (the default when options is NULL). */
DINPUT_API int64_t
dinput_interleave_options_num_parallel_calls(const dinput_interleave_options_t* options);
/** Default UNSET. When not deterministic, a parallel interleave passes over a dataset that
 * has no element ready instead of waiting for it. */
DINPUT_API dinput_status_t dinput_interleave_options_set_deterministic(
    dinput_interleave_options_t* options, dinput_deterministic_t deterministic);
/** The deterministic in effect (the default when options is NULL). */
DINPUT_API dinput_deterministic_t
dinput_interleave_options_deterministic(const dinput_interleave_options_t* options);

/** Options of dinput_dataset_batch. */
typedef struct dinput_batch_options dinput_batch_options_t;
/** A new handle with every setting at its default; release it with dinput_batch_options_free. */
DINPUT_API dinput_status_t dinput_batch_options_new(dinput_batch_options_t** out);
/** Releases the handle (NULL is accepted). */
DINPUT_API void dinput_batch_options_free(dinput_batch_options_t* options);
/** Non-zero: a last batch shorter than batch_size is dropped (default 0: it is kept). */
DINPUT_API dinput_status_t dinput_batch_options_set_drop_remainder(dinput_batch_options_t* options,
                                                                   int drop_remainder);
/** 1 when the remainder is dropped, else 0. */
DINPUT_API int dinput_batch_options_drop_remainder(const dinput_batch_options_t* options);
/** 1 (the default) or 0: batches are assembled on the consumer's thread; 2..1024 or
 * DINPUT_AUTOTUNE: the copies that stack the rows of a batch run on a pool of that many
 * threads (DINPUT_AUTOTUNE: as many as the autotuner sets, from 1, docs/autotune.md), several
 * batches at once, while the rows of the next batches are read. The batches are the same
 * either way. */
DINPUT_API dinput_status_t dinput_batch_options_set_num_parallel_calls(
    dinput_batch_options_t* options, int64_t num_parallel_calls);
/** The num parallel calls in effect (the default when options is NULL). */
DINPUT_API int64_t dinput_batch_options_num_parallel_calls(const dinput_batch_options_t* options);
/** Default UNSET. Accepted for tf.data parity; batches currently always come in input
 * order (stacking takes about as long for every batch, so reordering would gain little). */
DINPUT_API dinput_status_t dinput_batch_options_set_deterministic(
    dinput_batch_options_t* options, dinput_deterministic_t deterministic);
/** The deterministic in effect (the default when options is NULL). */
DINPUT_API dinput_deterministic_t
dinput_batch_options_deterministic(const dinput_batch_options_t* options);

/** Options of dinput_dataset_shuffle. */
typedef struct dinput_shuffle_options dinput_shuffle_options_t;
/** A new handle with every setting at its default; release it with dinput_shuffle_options_free. */
DINPUT_API dinput_status_t dinput_shuffle_options_new(dinput_shuffle_options_t** out);
/** Releases the handle (NULL is accepted). */
DINPUT_API void dinput_shuffle_options_free(dinput_shuffle_options_t* options);
/** The seed pair that picks the order, as tf.data's global seed (seed) and operation seed
 * (seed2): both >= 0. The same pair gives the same order on every run and every worker;
 * (s, 0) gives the same order as the single seed s of the tool's chain syntax and the
 * bindings. Unset (the default): a random seed, drawn once per dataset. */
DINPUT_API dinput_status_t dinput_shuffle_options_set_seed(dinput_shuffle_options_t* options,
                                                           int64_t seed, int64_t seed2);
/** The seed set, or -1 when none is. */
DINPUT_API int64_t dinput_shuffle_options_seed(const dinput_shuffle_options_t* options);
/** The second seed set, or -1 when no seed is set. */
DINPUT_API int64_t dinput_shuffle_options_seed2(const dinput_shuffle_options_t* options);
/** Default 1: each new iterator (epoch) uses a different order, derived from the seed. 0: every
 * iterator uses the same order. */
DINPUT_API dinput_status_t
dinput_shuffle_options_set_reshuffle_each_iteration(dinput_shuffle_options_t* options, int enable);
/** 1 when each iterator gets a new order, else 0 (1 when options is NULL). */
DINPUT_API int dinput_shuffle_options_reshuffle_each_iteration(
    const dinput_shuffle_options_t* options);

/* ------------------------------------------------------------------------------------- */
/* Datasets                                                                               */
/* ------------------------------------------------------------------------------------- */

/** An immutable dataset: a node of a pipeline graph. Building one does no work. */
typedef struct dinput_dataset dinput_dataset_t;

/** Releases user_data when the last dataset (or iterator) using a callback is gone. A function
 * that takes user_data with a dinput_free_fn owns it from the call on: if the call fails,
 * free_user_data has already been called when it returns, so the caller must not free
 * user_data itself in either case. */
typedef void (*dinput_free_fn)(void* user_data);

/** Cardinality values besides counts. */
#define DINPUT_INFINITE_CARDINALITY (-1)
/** Cardinality of a dataset whose size cannot be known without iterating it (a filter, a
 * generator, a file reader). */
#define DINPUT_UNKNOWN_CARDINALITY (-2)
/** count for dinput_dataset_repeat: forever. */
#define DINPUT_REPEAT_FOREVER (-1)
/** Placeholder for dinput_dataset_shard, replaced by (num_workers, worker_index) under the
 * HINT auto-shard policy. */
#define DINPUT_SHARD_HINT (-1)
/** Chosen by dinput: buffer_size of dinput_dataset_prefetch, num_parallel_calls of the map,
 * interleave and batch options, and cycle_length of the interleave options. */
#define DINPUT_AUTOTUNE (-1)

/** Releases this handle to the dataset; datasets and iterators built on it keep it alive.
 * NULL is ignored. */
DINPUT_API void dinput_dataset_free(dinput_dataset_t* dataset);
/** A new handle to the same (immutable) dataset. */
DINPUT_API dinput_status_t dinput_dataset_ref(dinput_dataset_t** out,
                                              const dinput_dataset_t* dataset);
/** Number of elements, DINPUT_INFINITE_CARDINALITY or DINPUT_UNKNOWN_CARDINALITY
 * (DINPUT_UNKNOWN_CARDINALITY for NULL). */
DINPUT_API int64_t dinput_dataset_cardinality(const dinput_dataset_t* dataset);
/** The spec of the elements the dataset yields (a new spec, owned by the caller). */
DINPUT_API dinput_status_t dinput_dataset_element_spec(dinput_spec_t** out,
                                                       const dinput_dataset_t* dataset);
/** Short name of the node ("range", "batch", ...), static (valid for the life of the
 * process); "" for NULL. */
DINPUT_API const char* dinput_dataset_name(const dinput_dataset_t* dataset);

/* -- sources -- */

/** int64 scalars start, start+step, ... up to (excluding) stop. step must not be 0. */
DINPUT_API dinput_status_t dinput_dataset_range(dinput_dataset_t** out, int64_t start, int64_t stop,
                                                int64_t step);
/** One element: `element` itself. Components that are CUDA tensors are copied to host memory
 * (the dataset's elements are always there); FAILED_PRECONDITION names the component and the
 * device when a GPU cannot be used in this process. */
DINPUT_API dinput_status_t dinput_dataset_from_tensors(dinput_dataset_t** out,
                                                       const dinput_element_t* element);
/** The slices of `element` along its first dimension; every component must have rank >= 1
 * and the same leading size. CUDA components are copied to host memory first, as by
 * dinput_dataset_from_tensors. */
DINPUT_API dinput_status_t dinput_dataset_from_tensor_slices(dinput_dataset_t** out,
                                                             const dinput_element_t* element);

/** Generator callbacks. For each new iterator the library calls init(&state, user_data)
 * (init may be NULL: state is then user_data), then next(&element, state) until next returns
 * DINPUT_OUT_OF_RANGE (end of data) or another failing status (error), and finally
 * finalize(state) (may be NULL). next transfers ownership of *out to the library. Elements
 * must match the declared spec, else get_next fails with INVALID_ARGUMENT. CUDA tensors in
 * them are copied to host memory (get_next fails with FAILED_PRECONDITION naming the device
 * when its GPU cannot be used in this process). Calls for one
 * iterator never overlap, but may come from a library thread. */
typedef dinput_status_t (*dinput_generator_init_fn)(void** state, void* user_data);
/** Generator next callback: the next element into *out (owned by the library afterwards);
 * DINPUT_OUT_OF_RANGE at the end of data. See dinput_generator_init_fn. */
typedef dinput_status_t (*dinput_generator_next_fn)(dinput_element_t** out, void* state);
/** Generator finalize callback: releases the state of one iterator. See
 * dinput_generator_init_fn. */
typedef void (*dinput_generator_finalize_fn)(void* state);
/** The writer the library passes to a generator's save callback: appends the `size` bytes at
 * `data` to the state being saved (`sink` is the library's; pass it back unchanged). It may be
 * called any number of times during the save callback, and not after it returns. */
typedef void (*dinput_state_write_fn)(void* sink, const void* data, size_t size);
/** Generator save callback (docs/checkpoint.md, "Generators"): writes where the generator of
 * one iterator (`state`, as init made it) is, as bytes of the caller's choosing, through
 * write(sink, data, size); DINPUT_OK, or a failing status that fails the save. Called between
 * next calls, never during one. */
typedef dinput_status_t (*dinput_generator_save_fn)(void* state, dinput_state_write_fn write,
                                                    void* sink);
/** Generator restore callback: positions the generator of a new iterator (`state`, just made
 * by init, before its first next) where the saved one was, from the `size` bytes at `data`
 * that its save callback wrote (valid during the call only). */
typedef dinput_status_t (*dinput_generator_restore_fn)(void* state, const void* data, size_t size);

/** A dataset whose elements come from callbacks (see dinput_generator_init_fn), declared to
 * match `spec` (copied, and frozen). Each iterator runs its own init / next / finalize
 * sequence. user_data is released with free_user_data (may be NULL) when the last dataset or
 * iterator using it is gone. Cardinality DINPUT_UNKNOWN_CARDINALITY. */
DINPUT_API dinput_status_t dinput_dataset_from_generator(
    dinput_dataset_t** out, const dinput_spec_t* spec, dinput_generator_init_fn init,
    dinput_generator_next_fn next, dinput_generator_finalize_fn finalize, void* user_data,
    dinput_free_fn free_user_data);
/** dinput_dataset_from_generator with save and restore callbacks, so that its iterators'
 * states can be saved (dinput_iterator_save): the state holds the bytes save writes, and an
 * iterator made from the state gives them to restore. Both callbacks, or neither
 * (INVALID_ARGUMENT naming the missing one); without them saving is DINPUT_UNIMPLEMENTED
 * naming from_generator, as for dinput_dataset_from_generator. */
DINPUT_API dinput_status_t dinput_dataset_from_generator_with_state(
    dinput_dataset_t** out, const dinput_spec_t* spec, dinput_generator_init_fn init,
    dinput_generator_next_fn next, dinput_generator_finalize_fn finalize,
    dinput_generator_save_fn save, dinput_generator_restore_fn restore, void* user_data,
    dinput_free_fn free_user_data);

/** One DINPUT_BYTES scalar per line of each file, files read in order. "\\n" and "\\r\\n" end a
 * line; the last line needs no newline. A line longer than max_record_bytes is
 * DINPUT_RESOURCE_EXHAUSTED naming the file and the line's offset. A file source for FILE
 * auto-sharding. The file errors of every reader: see dinput_dataset_records. */
DINPUT_API dinput_status_t dinput_dataset_text_lines(dinput_dataset_t** out,
                                                     const char* const* files, size_t num_files);

/** Compression of a record file. Append-only. ZSTD: the whole file is one zstd stream (so
 * `zstd -d` yields a plain record file); GZIP: one gzip stream. */
/* clang-format off */
typedef DINPUT_ENUM(dinput_compression_t) {
  DINPUT_COMPRESSION_NONE = 0,
  DINPUT_COMPRESSION_ZSTD = 1,
  DINPUT_COMPRESSION_GZIP = 2,
  DINPUT_COMPRESSION_FORCE_32BIT = 0x7FFFFFFF
} dinput_compression_t;
/* clang-format on */

/** Options of dinput_dataset_records (see "Transformation options" for how option handles
 * work). */
typedef struct dinput_records_options dinput_records_options_t;
/** A new handle with every setting at its default; release it with dinput_records_options_free. */
DINPUT_API dinput_status_t dinput_records_options_new(dinput_records_options_t** out);
/** Releases the handle (NULL is accepted). */
DINPUT_API void dinput_records_options_free(dinput_records_options_t* options);
/** The compression of every file (default DINPUT_COMPRESSION_NONE). */
DINPUT_API dinput_status_t dinput_records_options_set_compression(dinput_records_options_t* options,
                                                                  dinput_compression_t compression);
/** The compression in effect (the default when options is NULL). */
DINPUT_API dinput_compression_t
dinput_records_options_compression(const dinput_records_options_t* options);
/** The read buffer in bytes, >= 0 (default 0: a size the library picks). */
DINPUT_API dinput_status_t dinput_records_options_set_buffer_size(dinput_records_options_t* options,
                                                                  int64_t buffer_size);
/** The buffer size in effect (the default when options is NULL). */
DINPUT_API int64_t dinput_records_options_buffer_size(const dinput_records_options_t* options);

/** One DINPUT_BYTES scalar per record of TFRecord-framed files (u64 length, masked CRC32C of
 * the length, data, masked CRC32C of the data), read in order; both CRCs of every record are
 * verified. options (NULL: defaults): the compression and read buffer size. A bad CRC or a
 * truncated record is DINPUT_DATA_LOSS naming the file and byte offset (see
 * dinput_options_set_skip_corrupt_records); a missing file NOT_FOUND; an unreadable one
 * PERMISSION_DENIED; a directory, a symbolic link loop, or a FIFO or device (unless
 * dinput_options_set_allow_nonregular_files) FAILED_PRECONDITION; a read error (EIO) or a file
 * that ends before the size it had when opened DATA_LOSS naming the file and the offset.
 * ZSTD streams may declare windows up to 2^31 bytes (2^30 on 32-bit hosts), as
 * `zstd --long=31` writes; a larger window is RESOURCE_EXHAUSTED. A file source for FILE
 * auto-sharding. */
DINPUT_API dinput_status_t dinput_dataset_records(dinput_dataset_t** out, const char* const* files,
                                                  size_t num_files,
                                                  const dinput_records_options_t* options);

/** One DINPUT_BYTES scalar of record_bytes bytes per record of each file, after skipping
 * header_bytes at the start and footer_bytes at the end. A file whose body is not a multiple
 * of record_bytes is DINPUT_DATA_LOSS naming the file and the size. A file source. */
DINPUT_API dinput_status_t dinput_dataset_fixed_length_records(
    dinput_dataset_t** out, const char* const* files, size_t num_files, int64_t record_bytes,
    int64_t header_bytes, int64_t footer_bytes);

/** Options of dinput_dataset_list_files (see "Transformation options" for how option
 * handles work). */
typedef struct dinput_list_files_options dinput_list_files_options_t;
/** A new handle with every setting at its default (released by
 * dinput_list_files_options_free). */
DINPUT_API dinput_status_t dinput_list_files_options_new(dinput_list_files_options_t** out);
/** Releases the handle (NULL is accepted). */
DINPUT_API void dinput_list_files_options_free(dinput_list_files_options_t* options);
/** Non-zero: the names are shuffled, in a new order for each iterator. Default 0: sorted
 * (unlike tf.data, whose default is to shuffle, so that a listing is the same every run). */
DINPUT_API dinput_status_t
dinput_list_files_options_set_shuffle(dinput_list_files_options_t* options, int shuffle);
/** 1 when the names are shuffled, else 0 (0 when options is NULL). */
DINPUT_API int dinput_list_files_options_shuffle(const dinput_list_files_options_t* options);
/** The seed pair of the shuffle, as for dinput_shuffle_options_set_seed: both >= 0; unset
 * (the default): random. */
DINPUT_API dinput_status_t dinput_list_files_options_set_seed(dinput_list_files_options_t* options,
                                                              int64_t seed, int64_t seed2);
/** The seed set, or -1 when none is. */
DINPUT_API int64_t dinput_list_files_options_seed(const dinput_list_files_options_t* options);
/** The second seed set, or -1 when no seed is set. */
DINPUT_API int64_t dinput_list_files_options_seed2(const dinput_list_files_options_t* options);

/** The names (DINPUT_BYTES scalars) of the files matching any of the glob patterns, matched
 * now. Sorted, or shuffled when the options say so (NULL: sorted). NOT_FOUND when nothing
 * matches. A file source: FILE auto-sharding splits this list, so a reader fed by it
 * (through dinput_dataset_interleave) reads only the worker's files; the shuffle then
 * applies to the worker's share. */
DINPUT_API dinput_status_t dinput_dataset_list_files(dinput_dataset_t** out,
                                                     const char* const* patterns,
                                                     size_t num_patterns,
                                                     const dinput_list_files_options_t* options);

/* -- transforms -- (every transform keeps its input alive) */

/** Stacks batch_size consecutive elements along a new first dimension. The last batch may be
 * shorter unless the options drop the remainder. batch_size must be >= 1. Elements of a
 * batch must have equal shapes. options: NULL for the defaults (see dinput_batch_options_t). */
DINPUT_API dinput_status_t dinput_dataset_batch(dinput_dataset_t** out,
                                                const dinput_dataset_t* input, int64_t batch_size,
                                                const dinput_batch_options_t* options);
/** Splits each element along its first dimension into rows. */
DINPUT_API dinput_status_t dinput_dataset_unbatch(dinput_dataset_t** out,
                                                  const dinput_dataset_t* input);
/** count >= 0, or DINPUT_REPEAT_FOREVER. As in tf.data, repeating forever an input that may be
 * non-empty (of UNKNOWN cardinality too) has DINPUT_INFINITE_CARDINALITY; only an input of
 * cardinality 0 gives 0. (When one pass over the input yields nothing, iteration still ends.) */
DINPUT_API dinput_status_t dinput_dataset_repeat(dinput_dataset_t** out,
                                                 const dinput_dataset_t* input, int64_t count);
/** The first count elements (count -1: all). */
DINPUT_API dinput_status_t dinput_dataset_take(dinput_dataset_t** out,
                                               const dinput_dataset_t* input, int64_t count);
/** All but the first count elements (count -1: skips everything). */
DINPUT_API dinput_status_t dinput_dataset_skip(dinput_dataset_t** out,
                                               const dinput_dataset_t* input, int64_t count);
/** Keeps elements i with i % num_shards == index. Both may be DINPUT_SHARD_HINT (together). */
DINPUT_API dinput_status_t dinput_dataset_shard(dinput_dataset_t** out,
                                                const dinput_dataset_t* input, int64_t num_shards,
                                                int64_t index);
/** Shuffles with a buffer of buffer_size elements (>= 1). options: NULL for the defaults, a
 * random seed and a new order for each iterator (see dinput_shuffle_options_t). */
DINPUT_API dinput_status_t dinput_dataset_shuffle(dinput_dataset_t** out,
                                                  const dinput_dataset_t* input,
                                                  int64_t buffer_size,
                                                  const dinput_shuffle_options_t* options);

/** map callback: computes *out from in. *out is owned by the library afterwards; in is
 * borrowed for the call only (take a handle with dinput_element_ref to keep it, or return
 * such a handle as *out). CUDA tensors in *out are copied to host memory, as a generator's
 * are (see dinput_generator_init_fn). With num_parallel_calls > 1 (dinput_map_options_t) it runs
 * concurrently on library threads. */
typedef dinput_status_t (*dinput_map_fn)(dinput_element_t** out, const dinput_element_t* in,
                                         void* user_data);
/** Applies fn to each element. options (NULL: defaults, a sequential map whose results have
 * the input's spec) give the results' spec, the parallelism and the order (see
 * dinput_map_options_t). */
DINPUT_API dinput_status_t dinput_dataset_map(dinput_dataset_t** out, const dinput_dataset_t* input,
                                              dinput_map_fn fn, void* user_data,
                                              dinput_free_fn free_user_data,
                                              const dinput_map_options_t* options);

/** map_many callback: computes one result per input for a run of count consecutive elements
 * (1 <= count <= max_count of dinput_dataset_map_many; only the last run of the input is
 * shorter): outs[i] from ins[i], for every i < count. outs arrives with count NULL slots; each
 * outs[i] set is owned by the library afterwards, also when the callback fails (the library
 * releases what was set). ins and its elements are borrowed for the call only
 * (dinput_element_ref keeps one longer, or returns it as an output). CUDA tensors in the
 * outputs are copied to host memory, as a map callback's are. With num_parallel_calls > 1 it
 * runs concurrently on library threads, one run per call. */
typedef dinput_status_t (*dinput_map_many_fn)(dinput_element_t** outs,
                                              const dinput_element_t* const* ins, size_t count,
                                              void* user_data);
/** The map of dinput_dataset_map, computed by a callback that serves up to max_count (>= 1)
 * consecutive elements per call: the results, their order and the options (out_spec,
 * num_parallel_calls, deterministic; NULL: defaults) mean what they mean for
 * dinput_dataset_map, and with num_parallel_calls > 1 each run is one task on the pool. The
 * input is read a run at a time: the first get_next of a run reads up to max_count input
 * elements before the callback runs. A failing callback fails get_next at the first element
 * of its run (every element of earlier runs is delivered first); DINPUT_OUT_OF_RANGE from it
 * becomes DINPUT_INVALID_ARGUMENT. A DINPUT_OK return that leaves some outs[i] NULL, or an
 * output that does not match the spec, fails the same way with DINPUT_INVALID_ARGUMENT naming
 * the index i. max_count 0 is DINPUT_INVALID_ARGUMENT. user_data is released with
 * free_user_data exactly once, as for dinput_dataset_map (also when this call fails). */
DINPUT_API dinput_status_t dinput_dataset_map_many(dinput_dataset_t** out,
                                                   const dinput_dataset_t* input, size_t max_count,
                                                   dinput_map_many_fn fn, void* user_data,
                                                   dinput_free_fn free_user_data,
                                                   const dinput_map_options_t* options);

/** filter callback: sets *keep to non-zero to keep the element. in is borrowed for the call
 * only (dinput_element_ref keeps it longer). */
typedef dinput_status_t (*dinput_filter_fn)(int* keep, const dinput_element_t* in, void* user_data);
/** Keeps the elements for which fn sets *keep to non-zero, in order. fn runs on the thread
 * that asks for the next element (the caller of get_next, or a library thread upstream of a
 * prefetch). A failing status from fn fails get_next; DINPUT_OUT_OF_RANGE from fn is
 * reported as INVALID_ARGUMENT naming the filter callback. */
DINPUT_API dinput_status_t dinput_dataset_filter(dinput_dataset_t** out,
                                                 const dinput_dataset_t* input, dinput_filter_fn fn,
                                                 void* user_data, dinput_free_fn free_user_data);
/** interleave callback: the dataset to read for one input element (for example a record
 * reader for one file name). *out is owned by the library afterwards; in is borrowed for the
 * call only (dinput_element_ref keeps it longer, for example for a dataset made from it). */
typedef dinput_status_t (*dinput_interleave_fn)(dinput_dataset_t** out, const dinput_element_t* in,
                                                void* user_data);
/** For each input element, fn gives a dataset; up to cycle_length of them are read at once,
 * taking block_length consecutive elements from each in turn (as tf.data's interleave).
 * out_spec is the spec of the datasets fn returns; it is a required argument rather than an
 * option because interleave cannot infer it. fn itself is called on the consumer's thread.
 * options (NULL: defaults, see dinput_interleave_options_t) give cycle_length, block_length,
 * num_parallel_calls and deterministic. */
DINPUT_API dinput_status_t dinput_dataset_interleave(dinput_dataset_t** out,
                                                     const dinput_dataset_t* input,
                                                     dinput_interleave_fn fn,
                                                     const dinput_spec_t* out_spec, void* user_data,
                                                     dinput_free_fn free_user_data,
                                                     const dinput_interleave_options_t* options);

/** Pairs each element with its int64 index: the result has 1 + n components (index first). */
DINPUT_API dinput_status_t dinput_dataset_enumerate(dinput_dataset_t** out,
                                                    const dinput_dataset_t* input, int64_t start);
/** Produces up to buffer_size elements ahead on a background thread (DINPUT_AUTOTUNE: from 2,
 * as many as the autotuner sets, docs/autotune.md; 0: no prefetch). */
DINPUT_API dinput_status_t dinput_dataset_prefetch(dinput_dataset_t** out,
                                                   const dinput_dataset_t* input,
                                                   int64_t buffer_size);
/** Regroups the rows of batched input into batches whose sizes cycle through sizes[0..n),
 * like unbatch().batch(k) with k cycling. Sizes may be 0 (an empty batch); at least one must
 * be positive. */
DINPUT_API dinput_status_t dinput_dataset_rebatch(dinput_dataset_t** out,
                                                  const dinput_dataset_t* input,
                                                  const int64_t* sizes, size_t num_sizes,
                                                  int drop_remainder);
/** The same data with the given options (copied). */
DINPUT_API dinput_status_t dinput_dataset_with_options(dinput_dataset_t** out,
                                                       const dinput_dataset_t* input,
                                                       const dinput_options_t* options);

/* Several datasets, cache and ignore_errors (docs/combine.md). */

/** Elements made of one element of each dataset, their components one after the other in a
 * single flat tuple (datasets[0]'s first). Ends with the shortest dataset. num_datasets >= 1;
 * the datasets are referenced, not consumed. */
DINPUT_API dinput_status_t dinput_dataset_zip(dinput_dataset_t** out,
                                              const dinput_dataset_t* const* datasets,
                                              size_t num_datasets);
/** input's elements, then other's. The two specs must have the same number of components,
 * dtypes and ranks (INVALID_ARGUMENT otherwise); dimensions that differ become unknown. */
DINPUT_API dinput_status_t dinput_dataset_concatenate(dinput_dataset_t** out,
                                                      const dinput_dataset_t* input,
                                                      const dinput_dataset_t* other);
/** Each element from one of the datasets, picked at random with probabilities proportional to
 * weights (NULL: equal; each finite and >= 0, their sum > 0). seed >= 0 gives the same picks
 * on every run and iterator; a negative seed draws one at random per dataset. With
 * stop_on_empty_dataset nonzero, the first pick of an exhausted dataset ends the result;
 * with 0, picks go on among the others until all are exhausted. A dataset of weight 0 is
 * never read. Specs as for dinput_dataset_concatenate. */
DINPUT_API dinput_status_t dinput_dataset_sample_from_datasets(
    dinput_dataset_t** out, const dinput_dataset_t* const* datasets, size_t num_datasets,
    const double* weights, int64_t seed, int stop_on_empty_dataset);
/** Each element from datasets[i], i being the next element of selector (int64 scalars, else
 * INVALID_ARGUMENT). An index outside [0, num_datasets) fails get_next with INVALID_ARGUMENT
 * naming it. Ends with the selector; stop_on_empty_dataset as for
 * dinput_dataset_sample_from_datasets (tf.data's default for choose is 1). */
DINPUT_API dinput_status_t dinput_dataset_choose_from_datasets(
    dinput_dataset_t** out, const dinput_dataset_t* const* datasets, size_t num_datasets,
    const dinput_dataset_t* selector, int stop_on_empty_dataset);
/** Keeps the elements of the first complete pass over input and delivers them to later
 * passes. filename NULL or "": in memory, shared by every iterator of the returned dataset; a
 * pass stopped early keeps nothing. Otherwise the file filename: written (beside it, renamed
 * into place at the end of the pass) when it does not exist, read back, never the input,
 * when it does. A file written by another pipeline is FAILED_PRECONDITION naming it; a
 * damaged one is DATA_LOSS naming it and the byte offset. */
DINPUT_API dinput_status_t dinput_dataset_cache(dinput_dataset_t** out,
                                                const dinput_dataset_t* input,
                                                const char* filename);
/** Drops the elements whose making failed with INVALID_ARGUMENT or DATA_LOSS (a malformed or
 * damaged element) and goes on; they are counted in the iterator statistic
 * "errors_ignored". Other errors (CANCELLED, NOT_FOUND, ...) are returned as usual, and so is
 * an error repeated with the same message (an input that cannot move past it, such as a
 * prefetch, which stops at an error: put ignore_errors right after the stage that fails).
 * log_warning nonzero: each dropped error is logged as a warning. */
DINPUT_API dinput_status_t dinput_dataset_ignore_errors(dinput_dataset_t** out,
                                                        const dinput_dataset_t* input,
                                                        int log_warning);

/* ------------------------------------------------------------------------------------- */
/* tf.train.Example parsing (docs/examples.md)                                            */
/* ------------------------------------------------------------------------------------- */

/** The features a parse extracts from each serialized tf.train.Example (or the context or
 * feature lists of a SequenceExample), one per key, as tf.io's FixedLenFeature,
 * VarLenFeature and FixedLenSequenceFeature describe them. Dtypes are DINPUT_DTYPE_INT64,
 * DINPUT_DTYPE_FLOAT32 or DINPUT_DTYPE_BYTES; shapes are fully known. The output components
 * come in the order of the keys (sorted bytewise). Mutable until a parse uses it, then
 * frozen (like dinput_spec_t: a later add fails with FAILED_PRECONDITION). */
typedef struct dinput_feature_spec dinput_feature_spec_t;
/** An empty feature spec; release it with dinput_feature_spec_free. */
DINPUT_API dinput_status_t dinput_feature_spec_new(dinput_feature_spec_t** out);
/** Releases the spec (NULL is accepted). */
DINPUT_API void dinput_feature_spec_free(dinput_feature_spec_t* spec);
/** Adds FixedLenFeature(shape, dtype, default_value): every record gives exactly the shape's
 * number of values. default_value (copied; NULL: none) is used for a record that lacks the
 * key; it holds the shape's number of values of `dtype`, or one value that is repeated. A key
 * given twice, a bad dtype, dimension or default is INVALID_ARGUMENT naming the key. */
DINPUT_API dinput_status_t dinput_feature_spec_add_fixed_len(dinput_feature_spec_t* spec,
                                                             const char* key, dinput_dtype_t dtype,
                                                             const int64_t* shape, int rank,
                                                             const dinput_tensor_t* default_value);
/** Adds VarLenFeature(dtype): any number of values per record, given as ragged components
 * (docs/examples.md). */
DINPUT_API dinput_status_t dinput_feature_spec_add_var_len(dinput_feature_spec_t* spec,
                                                           const char* key, dinput_dtype_t dtype);
/** Adds FixedLenSequenceFeature(shape, dtype, allow_missing, default_value): a sequence of
 * values of `shape` per record, padded to the longest in a batch with default_value (one
 * value, copied; NULL: zero or empty bytes). allow_missing: a record that lacks the key gives
 * an empty sequence, else INVALID_ARGUMENT. */
DINPUT_API dinput_status_t dinput_feature_spec_add_fixed_len_sequence(
    dinput_feature_spec_t* spec, const char* key, dinput_dtype_t dtype, const int64_t* shape,
    int rank, int allow_missing, const dinput_tensor_t* default_value);

/** Parses serialized Examples in batches, as tf.data's `batch(...).map(parse_example)`:
 * component `component` of each input element must be a bytes vector (one record per row);
 * the parsed components take its place and the other components pass through. A record that
 * is malformed, lacks a feature without a default, or holds values of the wrong type or
 * number fails get_next with INVALID_ARGUMENT naming the record and the key. */
DINPUT_API dinput_status_t dinput_dataset_parse_example(dinput_dataset_t** out,
                                                        const dinput_dataset_t* input,
                                                        const dinput_feature_spec_t* features,
                                                        int64_t component);
/** As dinput_dataset_parse_example for one record per element: component `component` is a
 * bytes scalar, and the components have no batch dimension. */
DINPUT_API dinput_status_t
dinput_dataset_parse_single_example(dinput_dataset_t** out, const dinput_dataset_t* input,
                                    const dinput_feature_spec_t* features, int64_t component);
/** Parses serialized SequenceExamples: `context_features` (NULL: none) from the context,
 * `sequence_features` (NULL: none; var-len and fixed-len-sequence features only) from the
 * feature lists. Component `component` is a bytes scalar (one record) or vector (a batch);
 * the context components come first, then the feature lists'. */
DINPUT_API dinput_status_t dinput_dataset_parse_sequence_example(
    dinput_dataset_t** out, const dinput_dataset_t* input,
    const dinput_feature_spec_t* context_features, const dinput_feature_spec_t* sequence_features,
    int64_t component);

/* ------------------------------------------------------------------------------------- */
/* Images: decoding and augmentation as built-in map stages                              */
/* ------------------------------------------------------------------------------------- */

/* Each image operation maps one component of every element (dinput_image_options_set_component,
 * default 0); the other components pass through. An image is a uint8, float16 or float32
 * tensor of shape [height, width, channels]. The operations run like dinput_dataset_map:
 * sequentially, or on a pool of num_parallel_calls threads, with the same results either way.
 * A failure (a damaged image, an image smaller than a crop) is DINPUT_INVALID_ARGUMENT naming
 * the operation and the element's position in its input. The random operations draw from
 * their seed, the element's position and the epoch (each new iterator of the dataset is a
 * new epoch, as for a reshuffling shuffle): never from thread timing, so a saved iterator
 * state resumes with the same draws. docs/images.md describes each operation. */

/** Options of the image operations (dinput_dataset_decode_jpeg and the others below). The
 * handle follows the rules of the transformation options above: NULL means the defaults, the
 * operation copies the settings, and a handle once used is frozen. */
typedef struct dinput_image_options dinput_image_options_t;
/** A new handle with every setting at its default; release it with dinput_image_options_free. */
DINPUT_API dinput_status_t dinput_image_options_new(dinput_image_options_t** out);
/** Releases the handle (NULL is accepted). */
DINPUT_API void dinput_image_options_free(dinput_image_options_t* options);
/** The component that holds the image (or, for the decoders, its encoded bytes); default 0.
 * A component the input does not have is DINPUT_INVALID_ARGUMENT when the operation is
 * built. */
DINPUT_API dinput_status_t dinput_image_options_set_component(dinput_image_options_t* options,
                                                              int64_t component);
/** The component in effect (0 when options is NULL). */
DINPUT_API int64_t dinput_image_options_component(const dinput_image_options_t* options);
/** 1 (the default) or 0: sequential; 2..1024 or DINPUT_AUTOTUNE: on a thread pool, as
 * dinput_map_options_set_num_parallel_calls. */
DINPUT_API dinput_status_t dinput_image_options_set_num_parallel_calls(
    dinput_image_options_t* options, int64_t num_parallel_calls);
/** The num parallel calls in effect (the default when options is NULL). */
DINPUT_API int64_t dinput_image_options_num_parallel_calls(const dinput_image_options_t* options);
/** As dinput_map_options_set_deterministic (default UNSET). */
DINPUT_API dinput_status_t dinput_image_options_set_deterministic(
    dinput_image_options_t* options, dinput_deterministic_t deterministic);
/** The deterministic in effect (the default when options is NULL). */
DINPUT_API dinput_deterministic_t
dinput_image_options_deterministic(const dinput_image_options_t* options);

/** JPEG bytes (a scalar bytes component) to uint8 [height, width, channels]. channels: 0 (as
 * stored: 1 for grayscale, else 3), 1 or 3. libjpeg-turbo's accurate integer DCT and smooth
 * chroma upsampling (djpeg's defaults). options may be NULL. */
DINPUT_API dinput_status_t dinput_dataset_decode_jpeg(dinput_dataset_t** out,
                                                      const dinput_dataset_t* input,
                                                      int64_t channels,
                                                      const dinput_image_options_t* options);
/** PNG bytes to uint8 [height, width, channels] (16-bit samples keep their high byte).
 * channels: 0 (as stored: 1 to 4), 1, 3 or 4. options may be NULL. */
DINPUT_API dinput_status_t dinput_dataset_decode_png(dinput_dataset_t** out,
                                                     const dinput_dataset_t* input,
                                                     int64_t channels,
                                                     const dinput_image_options_t* options);
/** Bilinear resizing to height x width with half-pixel centres (tf.image.resize's
 * "bilinear" without antialiasing); float32 out. options may be NULL. */
DINPUT_API dinput_status_t dinput_dataset_resize(dinput_dataset_t** out,
                                                 const dinput_dataset_t* input, int64_t height,
                                                 int64_t width,
                                                 const dinput_image_options_t* options);
/** The centred height x width region (rounded towards the top left), same dtype; a smaller
 * image is an error. options may be NULL. */
DINPUT_API dinput_status_t dinput_dataset_center_crop(dinput_dataset_t** out,
                                                      const dinput_dataset_t* input, int64_t height,
                                                      int64_t width,
                                                      const dinput_image_options_t* options);
/** A height x width region at a random place, same dtype; a smaller image is an error. seed
 * < 0: drawn at random when the dataset is built. options may be NULL. */
DINPUT_API dinput_status_t dinput_dataset_random_crop(dinput_dataset_t** out,
                                                      const dinput_dataset_t* input, int64_t height,
                                                      int64_t width, int64_t seed,
                                                      const dinput_image_options_t* options);
/** A region of random area (scale_min..scale_max of the image's) and aspect ratio
 * (log-uniform in ratio_min..ratio_max) resized to height x width, float32 out (as
 * torchvision's RandomResizedCrop, whose defaults are 0.08, 1, 3/4, 4/3). Directly after
 * dinput_dataset_decode_jpeg of the same component, only the region is decoded. seed < 0:
 * drawn at random. options may be NULL. */
DINPUT_API dinput_status_t dinput_dataset_random_resized_crop(
    dinput_dataset_t** out, const dinput_dataset_t* input, int64_t height, int64_t width,
    double scale_min, double scale_max, double ratio_min, double ratio_max, int64_t seed,
    const dinput_image_options_t* options);
/** Mirrors each image left to right with probability 1/2. seed < 0: drawn at random.
 * options may be NULL. */
DINPUT_API dinput_status_t
dinput_dataset_random_flip_left_right(dinput_dataset_t** out, const dinput_dataset_t* input,
                                      int64_t seed, const dinput_image_options_t* options);
/** Converts the image to dtype (DINPUT_FLOAT32 or DINPUT_FLOAT16), values unchanged.
 * options may be NULL. */
DINPUT_API dinput_status_t dinput_dataset_cast_image(dinput_dataset_t** out,
                                                     const dinput_dataset_t* input,
                                                     dinput_dtype_t dtype,
                                                     const dinput_image_options_t* options);
/** (value - mean[c]) / stddev[c] for each channel c, as dtype (DINPUT_FLOAT32 or
 * DINPUT_FLOAT16). mean and stddev hold count values: one per channel, or one for all.
 * options may be NULL. */
DINPUT_API dinput_status_t dinput_dataset_normalize(dinput_dataset_t** out,
                                                    const dinput_dataset_t* input,
                                                    const float* mean, const float* stddev,
                                                    size_t count, dinput_dtype_t dtype,
                                                    const dinput_image_options_t* options);

/* -- padded batches, buckets, windows, flat_map, and readers as values -- */

/** Options of dinput_dataset_padded_batch and dinput_dataset_bucket_by_sequence_length (see
 * "Transformation options" for how option handles work). */
typedef struct dinput_padded_batch_options dinput_padded_batch_options_t;
/** A new handle with every setting at its default (released by
 * dinput_padded_batch_options_free). */
DINPUT_API dinput_status_t dinput_padded_batch_options_new(dinput_padded_batch_options_t** out);
/** Releases the handle (NULL is accepted). */
DINPUT_API void dinput_padded_batch_options_free(dinput_padded_batch_options_t* options);
/** Non-zero: a last batch shorter than batch_size is dropped (default 0: it is kept). For
 * bucket_by_sequence_length: the partly filled buckets at the end of the input are dropped. */
DINPUT_API dinput_status_t dinput_padded_batch_options_set_drop_remainder(
    dinput_padded_batch_options_t* options, int drop_remainder);
/** 1 when the remainder is dropped, else 0. */
DINPUT_API int dinput_padded_batch_options_drop_remainder(
    const dinput_padded_batch_options_t* options);
/** The shape each component is padded to, as the shapes of a spec with one entry per
 * component of the input (its dtypes are not used): a dimension of -1 pads to the longest
 * row of the batch in that dimension, a known one to that size. NULL (the default): every
 * dimension the input's spec leaves unknown pads to the batch's longest. The spec is copied.
 * Checked when the dataset is built: one shape per component, each of the component's rank
 * and no smaller than a dimension the component's spec knows (INVALID_ARGUMENT). */
DINPUT_API dinput_status_t dinput_padded_batch_options_set_padded_shapes(
    dinput_padded_batch_options_t* options, const dinput_spec_t* shapes);
/** A copy of the padded shapes set, or *out = NULL when none are (DINPUT_OK either way). */
DINPUT_API dinput_status_t dinput_padded_batch_options_padded_shapes(
    dinput_spec_t** out, const dinput_padded_batch_options_t* options);
/** The values that fill the padding: an element of one scalar per component, of the
 * component's dtype (checked when the dataset is built). NULL (the default): 0, false, or
 * the empty string for DINPUT_BYTES. The element is referenced, not copied (elements are
 * immutable). */
DINPUT_API dinput_status_t dinput_padded_batch_options_set_padding_values(
    dinput_padded_batch_options_t* options, const dinput_element_t* values);
/** A new handle to the padding values set, or *out = NULL when none are (DINPUT_OK either
 * way). */
DINPUT_API dinput_status_t dinput_padded_batch_options_padding_values(
    dinput_element_t** out, const dinput_padded_batch_options_t* options);

/** Combines batch_size (>= 1) consecutive elements into one, as dinput_dataset_batch, but
 * the elements may differ in shape: each component is padded to its padded shape (see
 * dinput_padded_batch_options_set_padded_shapes) with its padding value, then stacked. An
 * element larger than its padded shape fails get_next with INVALID_ARGUMENT naming the
 * component and the element's index in the input. distribute_dataset treats it as a batch:
 * batch_size is the global batch size, and a replica's piece that joins rows of two batches
 * of different widths is padded to the wider with the same values. options: NULL for the
 * defaults. tf.data: padded_batch. */
DINPUT_API dinput_status_t
dinput_dataset_padded_batch(dinput_dataset_t** out, const dinput_dataset_t* input,
                            int64_t batch_size, const dinput_padded_batch_options_t* options);

/** Groups elements by length into padded batches (tf.data's bucket_by_sequence_length, with
 * the length taken from a component rather than a function): an element's length is the
 * first dimension of component length_component, and it goes to bucket i when
 * boundaries[i-1] <= length < boundaries[i] (bucket 0 below boundaries[0], bucket
 * num_boundaries from the last boundary up). boundaries: num_boundaries >= 1 increasing
 * values >= 1; batch_sizes: one per bucket (num_batch_sizes = num_boundaries + 1), each >= 1.
 * Order (deterministic): a bucket that holds its batch size goes out at once, as one padded
 * batch; at the end of the input the partly filled buckets go out in bucket order, unless
 * the options drop the remainder. options give padded shapes, padding values and
 * drop_remainder as for dinput_dataset_padded_batch (NULL: defaults). pad_to_bucket_boundary
 * non-zero pads the dimensions the padded shapes leave unknown to the bucket's boundary - 1
 * instead of the batch's longest; an element whose length is at or past the last boundary
 * then fails get_next with INVALID_ARGUMENT. */
DINPUT_API dinput_status_t dinput_dataset_bucket_by_sequence_length(
    dinput_dataset_t** out, const dinput_dataset_t* input, size_t length_component,
    const int64_t* boundaries, size_t num_boundaries, const int64_t* batch_sizes,
    size_t num_batch_sizes, int pad_to_bucket_boundary,
    const dinput_padded_batch_options_t* options);

/** bucket_by_sequence_length's length callback (tf.data's element_length_func): sets *length
 * to the element's length, >= 0. in is borrowed for the call only. */
typedef dinput_status_t (*dinput_length_fn)(int64_t* length, const dinput_element_t* in,
                                            void* user_data);
/** As dinput_dataset_bucket_by_sequence_length, with an element's length given by fn rather
 * than taken from a component. fn runs on the thread that asks for the next element (the
 * caller of get_next, or a library thread upstream of a prefetch), and again for the elements
 * that restoring a saved iterator state reads again. A failing status from fn fails get_next
 * (DINPUT_OUT_OF_RANGE is reported as INVALID_ARGUMENT); a negative length is INVALID_ARGUMENT
 * naming the element. user_data is released with free_user_data exactly once, as for
 * dinput_dataset_map (also when this call fails). */
DINPUT_API dinput_status_t dinput_dataset_bucket_by_sequence_length_fn(
    dinput_dataset_t** out, const dinput_dataset_t* input, dinput_length_fn fn, void* user_data,
    dinput_free_fn free_user_data, const int64_t* boundaries, size_t num_boundaries,
    const int64_t* batch_sizes, size_t num_batch_sizes, int pad_to_bucket_boundary,
    const dinput_padded_batch_options_t* options);

/** Sliding windows: output element i stacks input elements i*shift + k*stride, for k from 0
 * up to size - 1, along a new first dimension (size, shift, stride >= 1). Windows at the
 * end hold fewer elements (down to one), unless drop_remainder is non-zero, which ends the
 * output at the first short window. tf.data's window yields each window as a dataset; this is
 * window(size, shift, stride, drop_remainder).flat_map(lambda *w: zip(w).batch(size)) in
 * one step (tf.data's shift defaults to size: pass size for it). */
DINPUT_API dinput_status_t dinput_dataset_window(dinput_dataset_t** out,
                                                 const dinput_dataset_t* input, int64_t size,
                                                 int64_t shift, int64_t stride, int drop_remainder);

/** For each input element fn gives a dataset, read to its end before the next element's:
 * dinput_dataset_interleave with cycle_length 1 and block_length 1 (tf.data's flat_map).
 * out_spec, fn and user_data as for dinput_dataset_interleave. */
DINPUT_API dinput_status_t dinput_dataset_flat_map(dinput_dataset_t** out,
                                                   const dinput_dataset_t* input,
                                                   dinput_interleave_fn fn,
                                                   const dinput_spec_t* out_spec, void* user_data,
                                                   dinput_free_fn free_user_data);

/** A file reader as a value: what dinput_dataset_interleave_reader and
 * dinput_dataset_flat_map_reader run on each file name of their input, in place of a
 * callback. Immutable; the datasets made with it keep what they need. */
typedef struct dinput_reader dinput_reader_t;
/** The reader of dinput_dataset_records, with its options (NULL: defaults; the handle is
 * frozen as by dinput_dataset_records). */
DINPUT_API dinput_status_t dinput_reader_records(dinput_reader_t** out,
                                                 const dinput_records_options_t* options);
/** The reader of dinput_dataset_text_lines. */
DINPUT_API dinput_status_t dinput_reader_text_lines(dinput_reader_t** out);
/** The reader of dinput_dataset_fixed_length_records, with its arguments (checked now). */
DINPUT_API dinput_status_t dinput_reader_fixed_length_records(dinput_reader_t** out,
                                                              int64_t record_bytes,
                                                              int64_t header_bytes,
                                                              int64_t footer_bytes);
/** Releases the reader (NULL is accepted). */
DINPUT_API void dinput_reader_free(dinput_reader_t* reader);
/** dinput_dataset_interleave where each input element, a file name (the input must yield
 * DINPUT_BYTES scalars, e.g. dinput_dataset_list_files), is read by `reader`; no callback
 * runs. The elements are DINPUT_BYTES scalars. FILE auto-sharding splits the file list of
 * the input's file source, as for an interleave callback. options: as for
 * dinput_dataset_interleave (NULL: defaults). */
DINPUT_API dinput_status_t dinput_dataset_interleave_reader(
    dinput_dataset_t** out, const dinput_dataset_t* input, const dinput_reader_t* reader,
    const dinput_interleave_options_t* options);
/** dinput_dataset_flat_map over file names read by `reader`: each file read whole, in the
 * input's order (dinput_dataset_interleave_reader with cycle_length 1). */
DINPUT_API dinput_status_t dinput_dataset_flat_map_reader(dinput_dataset_t** out,
                                                          const dinput_dataset_t* input,
                                                          const dinput_reader_t* reader);

/* ------------------------------------------------------------------------------------- */
/* Iterators and optionals                                                                */
/* ------------------------------------------------------------------------------------- */

/** An iterator over a dataset: one pass (epoch). Used by one thread at a time, except for
 * dinput_iterator_cancel. */
typedef struct dinput_iterator dinput_iterator_t;
/** An optional value: holds an element (from dinput_iterator_get_next_as_optional) or a
 * per-replica value (from dinput_dist_iterator_get_next_as_optional), or nothing. */
typedef struct dinput_optional dinput_optional_t;

/** Starts iterating the dataset from its beginning (a new epoch). */
DINPUT_API dinput_status_t dinput_dataset_iterator(dinput_iterator_t** out,
                                                   const dinput_dataset_t* dataset);
/** Frees the iterator. Its background threads are stopped; one that is inside a callback
 * (a slow map function, a blocked generator) is not waited for: it finishes that call after
 * free has returned, touching nothing the caller freed, and then the user_data of its
 * callback is released (when no dataset holds it any more). Must not overlap another call on
 * the iterator, dinput_iterator_cancel included. */
DINPUT_API void dinput_iterator_free(dinput_iterator_t* iterator);
/** Cancels the iterator, from any thread, also while another thread is in get_next or
 * get_next_as_optional on it: a call waiting for data produced on library threads returns
 * DINPUT_CANCELLED within about 10 ms; one running a callback on its own thread (a
 * sequential map, a generator without prefetch) returns DINPUT_CANCELLED when that callback
 * returns. Every later get_next returns DINPUT_CANCELLED ("the iterator was cancelled").
 * Idempotent; INVALID_ARGUMENT for NULL. The iterator must still be freed. */
DINPUT_API dinput_status_t dinput_iterator_cancel(dinput_iterator_t* iterator);
/** The next element; DINPUT_OUT_OF_RANGE at the end (and on every later call), and only
 * then. After any other error the iterator is finished: later calls repeat the error. */
DINPUT_API dinput_status_t dinput_iterator_get_next(dinput_element_t** out,
                                                    dinput_iterator_t* iterator);
/** The next element as an optional (empty at the end); errors as for get_next. */
DINPUT_API dinput_status_t dinput_iterator_get_next_as_optional(dinput_optional_t** out,
                                                                dinput_iterator_t* iterator);
/** The spec of the elements the iterator yields (a new spec, owned by the caller). */
DINPUT_API dinput_status_t dinput_iterator_element_spec(dinput_spec_t** out,
                                                        const dinput_iterator_t* iterator);
/** A counter of the iterator's work so far: "records" (records read by file readers),
 * "record_bytes" (their payload bytes), "corrupt_records_skipped" and
 * "corrupt_bytes_skipped" (see dinput_options_set_skip_corrupt_records), "errors_ignored"
 * (see dinput_dataset_ignore_errors). NOT_FOUND for other names. */
DINPUT_API dinput_status_t dinput_iterator_statistic(int64_t* out,
                                                     const dinput_iterator_t* iterator,
                                                     const char* name);

/* Checkpoints: an iterator's state as a few bytes (docs/checkpoint.md). The elements
 * delivered before a save, followed by those of the iterator made from that state, are the
 * elements one uninterrupted iterator delivers; elements read ahead but not yet delivered
 * are read again. A state holds positions and seeds, never elements. */

/** A saved iterator state: bytes owned by the handle, released with dinput_state_free. */
typedef struct dinput_state dinput_state_t;

/** Saves where the iterator is: a new state owned by the caller. Allowed between get_next
 * calls (before the first and after the end too), never during one: an overlapping call on
 * the same iterator is refused with DINPUT_FAILED_PRECONDITION, like two overlapping
 * get_next calls. Saving does not wait for the iterator's background threads.
 * DINPUT_UNIMPLEMENTED naming the operation for a pipeline with an operation that cannot
 * save its state yet (docs/checkpoint.md lists those that can); DINPUT_FAILED_PRECONDITION
 * for an iterator that has failed. */
DINPUT_API dinput_status_t dinput_iterator_save(dinput_state_t** out, dinput_iterator_t* iterator);
/** The state's bytes (borrowed: valid until the state is freed); NULL for NULL. Write them
 * anywhere; dinput_dataset_iterator_from_state reads them back. */
DINPUT_API const void* dinput_state_data(const dinput_state_t* state);
/** The number of bytes at dinput_state_data; 0 for NULL. */
DINPUT_API size_t dinput_state_size(const dinput_state_t* state);
/** Frees the state. NULL is ignored. */
DINPUT_API void dinput_state_free(dinput_state_t* state);
/** An iterator over `dataset` that continues where the iterator whose state this is stopped.
 * The `size` bytes at `state` are read during the call only. `dataset` must be built the
 * same way as the saved iterator's (the same operations with the same arguments over the
 * same files): otherwise DINPUT_FAILED_PRECONDITION naming the first operation that differs.
 * A truncated or damaged state is DINPUT_DATA_LOSS saying where; so is a file that changed
 * since the save. Random seeds and the epochs of reshuffling operations come from the
 * state. */
DINPUT_API dinput_status_t dinput_dataset_iterator_from_state(dinput_iterator_t** out,
                                                              const dinput_dataset_t* dataset,
                                                              const void* state, size_t size);

/** Frees the optional (and its handle to the value it holds). NULL is ignored. */
DINPUT_API void dinput_optional_free(dinput_optional_t* optional);
/** 1 when the optional holds a value, 0 when empty or NULL. */
DINPUT_API int dinput_optional_has_value(const dinput_optional_t* optional);
/** The element held by the optional (a new handle). INVALID_ARGUMENT when empty or when it
 * holds a per-replica value. */
DINPUT_API dinput_status_t dinput_optional_get_value(dinput_element_t** out,
                                                     const dinput_optional_t* optional);

/* ------------------------------------------------------------------------------------- */
/* Record files: writing                                                                  */
/* ------------------------------------------------------------------------------------- */

/** Writes TFRecord-framed files that TensorFlow and dinput_dataset_records read. Not
 * thread-safe: one writer is used by one thread at a time. */
typedef struct dinput_record_writer dinput_record_writer_t;

/** Options of dinput_record_writer_open (see "Transformation options" for how option handles
 * work). */
typedef struct dinput_record_writer_options dinput_record_writer_options_t;
/** A new handle with every setting at its default (released by
 * dinput_record_writer_options_free). */
DINPUT_API dinput_status_t dinput_record_writer_options_new(dinput_record_writer_options_t** out);
/** Releases the handle (NULL is accepted). */
DINPUT_API void dinput_record_writer_options_free(dinput_record_writer_options_t* options);
/** The compression of the file (default DINPUT_COMPRESSION_NONE). */
DINPUT_API dinput_status_t dinput_record_writer_options_set_compression(
    dinput_record_writer_options_t* options, dinput_compression_t compression);
/** The compression in effect (the default when options is NULL). */
DINPUT_API dinput_compression_t
dinput_record_writer_options_compression(const dinput_record_writer_options_t* options);
/** The compression level: 0 (the default) picks the codec's default (zstd 3, gzip 6); else
 * 1..19 for zstd, 1..9 for gzip (checked by dinput_record_writer_open, which knows the
 * codec); ignored for NONE. INVALID_ARGUMENT outside 0..19. */
DINPUT_API dinput_status_t
dinput_record_writer_options_set_level(dinput_record_writer_options_t* options, int level);
/** The level in effect (the default when options is NULL). */
DINPUT_API int dinput_record_writer_options_level(const dinput_record_writer_options_t* options);
/** zstd only: the log2 of the window, 10..31, with long-distance matching, as
 * `zstd --long=N` writes: repeats further apart are found, and readers need a window of
 * that size (dinput_dataset_records accepts up to 2^31, 2^30 on 32-bit hosts; open refuses
 * more with INVALID_ARGUMENT). 0 (the default): the level's window. Ignored unless the
 * compression is ZSTD. */
DINPUT_API dinput_status_t dinput_record_writer_options_set_zstd_window_log(
    dinput_record_writer_options_t* options, int window_log);
/** The zstd window log in effect (0 when options is NULL). */
DINPUT_API int dinput_record_writer_options_zstd_window_log(
    const dinput_record_writer_options_t* options);

/** Starts a record file at `path`. The records go to a temporary file in the same directory
 * (named ".NAME.tmp-..."), which dinput_record_writer_close syncs and renames over `path`:
 * a file already at `path` keeps its old contents until close succeeds, and after any
 * failure (a failed write or close, dinput_record_writer_discard) the temporary is removed
 * and `path` is unchanged. A symbolic link to a file is followed (the file is replaced, the
 * link stays); the replacement keeps the replaced file's permission bits. A path that is not
 * a regular file (a device, a FIFO) is written directly. options (NULL: an uncompressed
 * file): the compression, its level and the zstd window; INVALID_ARGUMENT for a level the
 * codec does not have. File errors name `path`:
 * NOT_FOUND for a missing directory, PERMISSION_DENIED for a directory that cannot be
 * written to, FAILED_PRECONDITION for a directory. */
DINPUT_API dinput_status_t dinput_record_writer_open(dinput_record_writer_t** out, const char* path,
                                                     const dinput_record_writer_options_t* options);
/** Appends one record of `size` bytes of host memory (data may be NULL when size is 0; the
 * dinput_tensor_data of a CUDA tensor is a device pointer: dinput_tensor_to_host first). */
DINPUT_API dinput_status_t dinput_record_writer_write(dinput_record_writer_t* writer,
                                                      const void* data, size_t size);
/** Pushes buffered records to the (temporary) file; a flushed zstd/gzip stream stays open for
 * more. The records appear at `path` only at close. */
DINPUT_API dinput_status_t dinput_record_writer_flush(dinput_record_writer_t* writer);
/** Finishes the stream, syncs and closes the file and puts it at `path`, reporting any error
 * (then `path` is unchanged); later writes fail with FAILED_PRECONDITION. Closing twice is
 * OK. */
DINPUT_API dinput_status_t dinput_record_writer_close(dinput_record_writer_t* writer);
/** Abandons the file: the temporary is removed and `path` keeps what it held before. For
 * when the records turn out to be wrong (say, their source is damaged). The writer is then
 * closed: later writes fail with FAILED_PRECONDITION, close does nothing. Never fails for
 * a non-NULL writer (INVALID_ARGUMENT for NULL). */
DINPUT_API dinput_status_t dinput_record_writer_discard(dinput_record_writer_t* writer);
/** Closes (if still open; what was written then replaces `path`, and an error is lost — call
 * close first to see it) and frees. */
DINPUT_API void dinput_record_writer_free(dinput_record_writer_t* writer);

/* ------------------------------------------------------------------------------------- */
/* Clusters: a worker process's place in a multi-process job                              */
/* ------------------------------------------------------------------------------------- */

/* A cluster handle says which worker this process is in a job of several processes (its
 * rank and the number of workers), where the workers meet (the rendezvous URL) and what the
 * launcher called the job. It is read from the variables a launcher sets (TF_CONFIG,
 * SLURM's srun, torchrun, Open MPI's mpirun, or dinput's own DINPUT_RANK, DINPUT_WORLD_SIZE
 * and DINPUT_RDZV_URL) or given explicitly. docs/multi-process.md lists every variable each
 * source reads. The handle is immutable: it may be read from several threads at once, and
 * its strings are borrowed for as long as the handle lives. */

/** A worker process's place in a job; immutable. */
typedef struct dinput_cluster dinput_cluster_t;

/** Resolves the cluster from this process's environment. source: "tf_config", "slurm",
 * "torchrun", "mpi", "explicit" (the DINPUT_* variables), or "auto" (or NULL): the first of
 * explicit, tf_config, torchrun, mpi, slurm whose variables are present (an inner launcher
 * before the SLURM allocation it may run in). DINPUT_RDZV_URL, when set, replaces the
 * launcher's rendezvous and DINPUT_JOB_ID its job id, whatever the source. A malformed or
 * missing variable is INVALID_ARGUMENT naming the variable and its value (a rank not below
 * the world size, a non-number, TF_CONFIG that is not JSON with the offset, a task type the
 * cluster lacks, a SLURM node list that does not parse, ...); so is an unknown source.
 * "auto" finding no source at all is NOT_FOUND, naming the variables it looked for. The
 * environment is read with getenv, so no other thread may change it during the call. */
DINPUT_API dinput_status_t dinput_cluster_resolve(dinput_cluster_t** out, const char* source);
/** A cluster given explicitly (source "explicit"): rank in 0..world_size-1, world_size >= 1,
 * and rdzv_url tcp://HOST:PORT, file://DIR, redis://HOST:PORT, or NULL or "" for none;
 * INVALID_ARGUMENT naming the argument otherwise. */
DINPUT_API dinput_status_t dinput_cluster_new(dinput_cluster_t** out, int rank, int world_size,
                                              const char* rdzv_url);
/** Releases the handle. NULL is ignored. */
DINPUT_API void dinput_cluster_free(dinput_cluster_t* cluster);
/** This process's worker index in 0..world_size-1; -1 for a TF_CONFIG ps or evaluator task
 * (see dinput_cluster_is_input_worker) and for NULL. */
DINPUT_API int dinput_cluster_rank(const dinput_cluster_t* cluster);
/** The number of workers that read input: for TF_CONFIG the chief and worker tasks (0 for
 * NULL). */
DINPUT_API int dinput_cluster_world_size(const dinput_cluster_t* cluster);
/** This process's index among the job's workers on its host; -1 when the launcher does not
 * say (and for NULL). */
DINPUT_API int dinput_cluster_local_rank(const dinput_cluster_t* cluster);
/** The number of the job's workers on this host; -1 when the launcher does not say (and for
 * NULL). */
DINPUT_API int dinput_cluster_local_world_size(const dinput_cluster_t* cluster);
/** The rendezvous URL (tcp://HOST:PORT, file://DIR or redis://HOST:PORT); "" when none is
 * known (a SLURM job without DINPUT_RDZV_PORT or MASTER_PORT, say) and for NULL. Borrowed:
 * valid while the handle lives. */
DINPUT_API const char* dinput_cluster_rdzv_url(const dinput_cluster_t* cluster);
/** The host of the worker of rank 0 (TF_CONFIG's chief or worker 0, SLURM's first node,
 * MASTER_ADDR, the host of a tcp:// URL), without brackets for IPv6; "" when unknown and for
 * NULL. Borrowed: valid while the handle lives. */
DINPUT_API const char* dinput_cluster_coordinator_host(const dinput_cluster_t* cluster);
/** The launcher's name of the job (DINPUT_JOB_ID, SLURM_JOB_ID.SLURM_STEP_ID,
 * TORCHELASTIC_RUN_ID, PMIX_NAMESPACE); "" when it gives none and for NULL. Borrowed: valid
 * while the handle lives. */
DINPUT_API const char* dinput_cluster_job_id(const dinput_cluster_t* cluster);
/** Where the cluster came from: "tf_config", "slurm", "torchrun", "mpi" or "explicit"; ""
 * for NULL. Borrowed: valid while the handle lives. */
DINPUT_API const char* dinput_cluster_source(const dinput_cluster_t* cluster);
/** TF_CONFIG's task.type ("chief", "worker", "ps", "evaluator"); "" for the other sources
 * and for NULL. Borrowed: valid while the handle lives. */
DINPUT_API const char* dinput_cluster_task_type(const dinput_cluster_t* cluster);
/** TF_CONFIG's task.index; -1 for the other sources and for NULL. */
DINPUT_API int dinput_cluster_task_index(const dinput_cluster_t* cluster);
/** 1 when this process reads input as one of the job's workers; 0 for a TF_CONFIG ps or
 * evaluator task (joining the input job from it fails with FAILED_PRECONDITION) and for
 * NULL. */
DINPUT_API int dinput_cluster_is_input_worker(const dinput_cluster_t* cluster);

/* ------------------------------------------------------------------------------------- */
/* Strategies and distribution                                                            */
/* ------------------------------------------------------------------------------------- */

/* REPLICA INDICES AND COUNTS are `int` throughout: worker and replica indices, the numbers
 * of workers, devices and replicas, and the size of and index into a per-replica value.
 * They are small (at most 4096 replicas per worker and 2^20 in sync, below), tf.distribute
 * itself uses Python ints that its C++ side keeps as int, and the contexts passed to
 * callbacks report them as int, so one type lets a caller pass what it reads back without
 * casts or sign-mismatch warnings. Negative counts are INVALID_ARGUMENT; negative indices
 * give NULL or -1 like any other index out of range. */

/** How workers exchange the small values the distributed iterator and reduce need. */
typedef struct dinput_collective dinput_collective_t;
/** A set of replica devices: W workers x R replicas; each handle is one worker's view. */
typedef struct dinput_strategy dinput_strategy_t;
/** Options of dinput_strategy_distribute_dataset and
 * dinput_strategy_distribute_datasets_from_function (as tf.distribute.InputOptions). */
typedef struct dinput_input_options dinput_input_options_t;
/** A dataset distributed over the replicas of a strategy: iterating it yields one element
 * per local replica per step. */
typedef struct dinput_dist_dataset dinput_dist_dataset_t;
/** An iterator over a distributed dataset (one epoch). Used by one thread at a time, except
 * for dinput_dist_iterator_cancel. */
typedef struct dinput_dist_iterator dinput_dist_iterator_t;
/** One value per local replica (an element each). */
typedef struct dinput_per_replica dinput_per_replica_t;
/** What a dataset_fn is told about its input pipeline (as tf.distribute.InputContext);
 * borrowed for the call only. */
typedef struct dinput_input_context dinput_input_context_t;
/** What a value_fn is told about its replica (as tf.distribute.experimental.ValueContext);
 * borrowed for the call only. */
typedef struct dinput_value_context dinput_value_context_t;
/** What a replica function of dinput_strategy_run is told about its replica (as
 * tf.distribute.ReplicaContext); borrowed for the call only. */
typedef struct dinput_replica_context dinput_replica_context_t;

/** An in-process collective joining num_workers workers that run as threads of this
 * process. Each worker's strategy uses the same collective with its own worker_index; the
 * handle is meant to be used by all those threads at once (and dinput_collective_abort may
 * be called from any thread), so it is passed non-const but is thread-safe.
 * timeout_ms bounds every collective wait (0: 60000); a worker that does not arrive in time
 * makes the wait fail with DEADLINE_EXCEEDED; a timeout_ms above 10^12 (about 31.7 years,
 * INT64_MAX included) waits without a deadline. num_workers is at most 65536
 * (INVALID_ARGUMENT otherwise). */
DINPUT_API dinput_status_t dinput_collective_new_in_process(dinput_collective_t** out,
                                                            int num_workers, int64_t timeout_ms);
/** Options of dinput_collective_new_from_cluster: the timeout, the job id, and the network
 * address the worker listens on. A plain value: the collective copies what it needs, so the
 * options may be changed or freed afterwards. */
typedef struct dinput_collective_options dinput_collective_options_t;

/** Creates collective options with every setting at its default (NULL passed to
 * dinput_collective_new_from_cluster means the same). */
DINPUT_API dinput_status_t dinput_collective_options_new(dinput_collective_options_t** out);
/** Frees the options. NULL is ignored. */
DINPUT_API void dinput_collective_options_free(dinput_collective_options_t* options);
/** How long the rendezvous and every later collective wait may take, in ms: >= 0 (0: the
 * default, 60000; above 10^12, about 31.7 years, no deadline); INVALID_ARGUMENT when
 * negative. */
DINPUT_API dinput_status_t
dinput_collective_options_set_timeout_ms(dinput_collective_options_t* options, int64_t timeout_ms);
/** The timeout in effect, in ms (60000 when unset or 0, and for NULL). */
DINPUT_API int64_t dinput_collective_options_timeout_ms(const dinput_collective_options_t* options);
/** The job id that namespaces the rendezvous keys, so that jobs sharing a store never mix;
 * NULL or "" (the default): the cluster's job id, else "dinput". Copied. */
DINPUT_API dinput_status_t
dinput_collective_options_set_job_id(dinput_collective_options_t* options, const char* job_id);
/** The job id set; "" when unset and for NULL. Borrowed: valid until the next set or free. */
DINPUT_API const char* dinput_collective_options_job_id(const dinput_collective_options_t* options);
/** The network interface (such as "eth0") whose address this worker listens on and gives the
 * other workers: its IPv4 address, else its first IPv6 address that is not link-local. NULL or
 * "" (the default): DINPUT_GLOO_IFACE, else the address (below). An interface without an
 * address makes dinput_collective_new_from_cluster fail with INVALID_ARGUMENT naming it and
 * listing this host's interfaces. Copied. */
DINPUT_API dinput_status_t
dinput_collective_options_set_interface(dinput_collective_options_t* options, const char* name);
/** The interface set; "" when unset and for NULL. Borrowed: valid until the next set or free. */
DINPUT_API const char* dinput_collective_options_interface(
    const dinput_collective_options_t* options);
/** A host name or address of this host to listen on, when no interface is set. NULL or ""
 * (the default): DINPUT_GLOO_ADDRESS, else the address this host's name resolves to. One that
 * does not resolve, or is not this host's, makes dinput_collective_new_from_cluster fail with
 * INVALID_ARGUMENT naming it; so do an interface and an address both set. Copied. */
DINPUT_API dinput_status_t
dinput_collective_options_set_address(dinput_collective_options_t* options, const char* address);
/** The address set; "" when unset and for NULL. Borrowed: valid until the next set or free. */
DINPUT_API const char* dinput_collective_options_address(
    const dinput_collective_options_t* options);
/** Non-zero: this worker may listen on a loopback address although the job has several
 * workers and nothing else shows that they all run on this host (see
 * dinput_collective_new_from_cluster); 0: it may not. Unset (the default): the environment
 * variable DINPUT_GLOO_ALLOW_LOOPBACK decides (1 allows, 0 or unset does not). */
DINPUT_API dinput_status_t
dinput_collective_options_set_allow_loopback(dinput_collective_options_t* options, int allow);
/** 1 when allow_loopback was set non-zero; 0 when set to 0, unset, and for NULL. */
DINPUT_API int dinput_collective_options_allow_loopback(const dinput_collective_options_t* options);

/** A collective joining the worker processes of a job, over TCP (Gloo): this process is worker
 * dinput_cluster_rank(cluster) of dinput_cluster_world_size(cluster), and the workers meet
 * through the cluster's rendezvous URL (tcp://HOST:PORT is served by the worker of rank 0;
 * file://DIR; redis://HOST:PORT). Returns once every worker has connected. Pass the handle to
 * dinput_strategy_new_multi_worker with worker_index = the cluster's rank. options may be NULL
 * (the defaults); their timeout bounds the rendezvous and every later wait: a worker that does
 * not arrive, or dies, makes the others fail within it with DEADLINE_EXCEEDED or UNAVAILABLE
 * naming the worker.
 * Loopback: the others reach this worker at the address it listens on, so with more than one
 * worker a loopback address (127.0.0.0/8, ::1; many Linux hosts resolve their own name to
 * one) is FAILED_PRECONDITION naming the host name and the address, unless the job is known
 * to run on this host: allow_loopback (or DINPUT_GLOO_ALLOW_LOOPBACK=1), a launcher that says
 * every worker is local (dinput_cluster_local_world_size equal to the world size), a
 * rendezvous host that is itself a loopback address (localhost, 127.0.0.1, ::1), or a file://
 * rendezvous on a file system that only this host mounts (ext4, xfs, btrfs, tmpfs, overlay,
 * ...; docs/multi-process.md lists them).
 * Errors: INVALID_ARGUMENT for a cluster without a rendezvous URL or a malformed one, or a
 * bad interface or address; FAILED_PRECONDITION for a TF_CONFIG task that reads no input
 * (ps, evaluator) and for the loopback rule above; UNIMPLEMENTED in a build without Gloo (see
 * dinput_build_info). */
DINPUT_API dinput_status_t
dinput_collective_new_from_cluster(dinput_collective_t** out, const dinput_cluster_t* cluster,
                                   const dinput_collective_options_t* options);
/** Releases this handle to the collective (strategies made with it keep it alive). NULL is
 * ignored. */
DINPUT_API void dinput_collective_free(dinput_collective_t* collective);
/** Fails every pending and future collective wait of every worker with `code` (not DINPUT_OK,
 * nor DINPUT_OUT_OF_RANGE, which get_next would report as end of data) and `message`: a worker that
 * cannot continue (say, its dataset failed to build) releases its peers at once instead of leaving
 * them to time out. Irreversible. */
DINPUT_API dinput_status_t dinput_collective_abort(dinput_collective_t* collective,
                                                   dinput_status_t code, const char* message);
/** Number of workers the collective joins (0 for NULL). */
DINPUT_API int dinput_collective_num_workers(const dinput_collective_t* collective);

/** A single-worker strategy over `num_devices` devices named "CPU:k" or "GPU:k" (also
 * "/cpu:0", "/job:worker/device:GPU:1" forms are accepted). num_devices 0 gives the default
 * strategy: one replica on CPU:0. Device names must be distinct. */
DINPUT_API dinput_status_t dinput_strategy_new(dinput_strategy_t** out, const char* const* devices,
                                               int num_devices);
/** Worker `worker_index` of a multi-worker strategy whose workers are joined by `collective`.
 * Every worker has the given local devices (R = num_devices; 0 means CPU:0). */
DINPUT_API dinput_status_t dinput_strategy_new_multi_worker(dinput_strategy_t** out,
                                                            dinput_collective_t* collective,
                                                            int worker_index,
                                                            const char* const* devices,
                                                            int num_devices);
/** Like dinput_strategy_new_multi_worker with num_replicas_in_sync CPU replicas in total:
 * INVALID_ARGUMENT when it is not divisible by the number of workers. Every strategy has at
 * most 4096 replicas per worker and 1048576 (2^20) replicas in sync: larger counts fail at
 * once with INVALID_ARGUMENT. */
DINPUT_API dinput_status_t dinput_strategy_new_multi_worker_cpu(dinput_strategy_t** out,
                                                                dinput_collective_t* collective,
                                                                int worker_index,
                                                                int num_replicas_in_sync);
/** Releases this handle to the strategy (distributed datasets keep it alive). NULL is
 * ignored. */
DINPUT_API void dinput_strategy_free(dinput_strategy_t* strategy);
/** N = W * R (0 for NULL). */
DINPUT_API int dinput_strategy_num_replicas_in_sync(const dinput_strategy_t* strategy);
/** R: the replicas of this worker (0 for NULL). */
DINPUT_API int dinput_strategy_num_local_replicas(const dinput_strategy_t* strategy);
/** W: the workers of the strategy, 1 for a single-worker strategy (0 for NULL). */
DINPUT_API int dinput_strategy_num_workers(const dinput_strategy_t* strategy);
/** This worker's index in 0..W-1 (0 for NULL). */
DINPUT_API int dinput_strategy_worker_index(const dinput_strategy_t* strategy);
/** Canonical name ("CPU:0", "GPU:1") of local replica i, borrowed: valid while the strategy
 * handle lives; NULL when out of range. */
DINPUT_API const char* dinput_strategy_device(const dinput_strategy_t* strategy, int i);

/** Replication of input pipelines (as tf.distribute.InputReplicationMode). */
/* clang-format off */
typedef DINPUT_ENUM(dinput_replication_mode_t) {
  DINPUT_REPLICATION_PER_WORKER = 0,
  DINPUT_REPLICATION_PER_REPLICA = 1,
  DINPUT_REPLICATION_MODE_FORCE_32BIT = 0x7FFFFFFF
} dinput_replication_mode_t;
/* clang-format on */

/** Input options (as tf.distribute.InputOptions). Defaults: fetch_to_device 1,
 * replication_mode PER_WORKER, place_dataset_on_device 0, per_replica_buffer_size 1. */
DINPUT_API dinput_status_t dinput_input_options_new(dinput_input_options_t** out);
/** Frees the input options. NULL is ignored. */
DINPUT_API void dinput_input_options_free(dinput_input_options_t* options);
/** Non-zero (the default): each replica's data is copied to its device (a GPU) ahead of
 * use; 0: data stays in host memory. */
DINPUT_API dinput_status_t dinput_input_options_set_fetch_to_device(dinput_input_options_t* o,
                                                                    int enable);
/** PER_WORKER (the default): one input pipeline per worker, split among its replicas;
 * PER_REPLICA: one pipeline per local replica (dinput_strategy_distribute_datasets_from_function
 * only). */
DINPUT_API dinput_status_t dinput_input_options_set_replication_mode(
    dinput_input_options_t* o, dinput_replication_mode_t mode);
/** Non-zero: the dataset function's pipeline is placed on the replica's device (PER_REPLICA
 * mode only, and not together with fetch_to_device); default 0. */
DINPUT_API dinput_status_t
dinput_input_options_set_place_dataset_on_device(dinput_input_options_t* o, int enable);
/** >= 0; 0 disables the per-replica buffer. */
DINPUT_API dinput_status_t
dinput_input_options_set_per_replica_buffer_size(dinput_input_options_t* o, int64_t size);
/** The getters give the value in effect: what was set, else the default above (also for a
 * NULL o, which the distribute functions read as the defaults).
 * fetch_to_device: 1 or 0. */
DINPUT_API int dinput_input_options_fetch_to_device(const dinput_input_options_t* o);
/** The replication mode in effect (default DINPUT_REPLICATION_PER_WORKER). */
DINPUT_API dinput_replication_mode_t
dinput_input_options_replication_mode(const dinput_input_options_t* o);
/** place_dataset_on_device in effect: 1 or 0 (default 0). */
DINPUT_API int dinput_input_options_place_dataset_on_device(const dinput_input_options_t* o);
/** The per-replica buffer size in effect (default 1). */
DINPUT_API int64_t dinput_input_options_per_replica_buffer_size(const dinput_input_options_t* o);

/** Distributes a dataset batched by the global batch size (experimental_distribute_dataset):
 * auto-shards it across workers by the dataset's auto_shard_policy, splits each global batch
 * among the replicas and prefetches. options may be NULL (defaults).
 * Random seeds: with several workers, a dataset containing a shuffle or list_files with a
 * random seed (no seed set) would be shuffled differently by each worker's copy, and sharding
 * would then lose and repeat elements. The workers agree on one random seed instead (worker
 * 0's, through the collective), so for such a dataset this call (and
 * dinput_strategy_distribute_datasets_from_function, for the datasets dataset_fn returns)
 * is collective: every worker must make it, in the same order as its other such calls, and
 * it waits for the others (DEADLINE_EXCEEDED after the collective's timeout). */
DINPUT_API dinput_status_t dinput_strategy_distribute_dataset(
    dinput_dist_dataset_t** out, const dinput_strategy_t* strategy, const dinput_dataset_t* dataset,
    const dinput_input_options_t* options);

/** dataset_fn: returns the (already sharded and per-replica batched) dataset of one input
 * pipeline. Called once per worker (PER_WORKER) or per local replica (PER_REPLICA), from the
 * calling thread of dinput_strategy_distribute_datasets_from_function. `context` is borrowed
 * for the call only; *out becomes the library's. */
typedef dinput_status_t (*dinput_dataset_fn)(dinput_dataset_t** out,
                                             const dinput_input_context_t* context,
                                             void* user_data);
/** Distributes the datasets that fn builds, one per input pipeline (see dinput_dataset_fn);
 * the datasets are not sharded or rebatched: each yields per-replica batches already.
 * fn is called only during this call, so user_data is released with free_user_data (may be
 * NULL) before it returns, also on failure. options may be NULL (defaults). */
DINPUT_API dinput_status_t dinput_strategy_distribute_datasets_from_function(
    dinput_dist_dataset_t** out, const dinput_strategy_t* strategy, dinput_dataset_fn fn,
    void* user_data, dinput_free_fn free_user_data, const dinput_input_options_t* options);

/** Number of input pipelines in the job (0 for NULL). */
DINPUT_API int dinput_input_context_num_input_pipelines(const dinput_input_context_t* c);
/** Index of this input pipeline, in 0..num_input_pipelines-1 (0 for NULL). */
DINPUT_API int dinput_input_context_input_pipeline_id(const dinput_input_context_t* c);
/** Number of replicas in sync in the job (0 for NULL). */
DINPUT_API int dinput_input_context_num_replicas_in_sync(const dinput_input_context_t* c);
/** global_batch_size / num_replicas_in_sync; INVALID_ARGUMENT when it does not divide. */
DINPUT_API dinput_status_t dinput_input_context_get_per_replica_batch_size(
    int64_t* out, const dinput_input_context_t* c, int64_t global_batch_size);

/** Releases this handle to the distributed dataset (its iterators keep it alive). NULL is
 * ignored. */
DINPUT_API void dinput_dist_dataset_free(dinput_dist_dataset_t* dataset);
/** How this worker's input is distributed, as static JSON text borrowed for the dataset's life:
 * {"policy":"DATA","split":"even","global_batch_size":4,"num_replicas_in_sync":2,
 *  "num_workers":1,"worker_index":0} — policy is the one applied (AUTO resolved; "NONE" for
 * distribute_datasets_from_function), split is "none", "even" or "balanced", and
 * global_batch_size is -1 when unknown. "" for NULL. */
DINPUT_API const char* dinput_dist_dataset_plan(const dinput_dist_dataset_t* dataset);
/** The per-replica element spec (batch dimension unknown when partial batches can occur). */
DINPUT_API dinput_status_t dinput_dist_dataset_element_spec(dinput_spec_t** out,
                                                            const dinput_dist_dataset_t* dataset);
/** A new iterator (a new epoch). In a multi-worker strategy every worker must create its
 * iterators in the same order, since their steps are matched through the collective. */
DINPUT_API dinput_status_t dinput_dist_dataset_iterator(dinput_dist_iterator_t** out,
                                                        const dinput_dist_dataset_t* dataset);
/** Frees the iterator without waiting for a slow upstream (see dinput_iterator_free). In a
 * multi-worker strategy, freeing an iterator that has not ended cancels it (see
 * dinput_dist_iterator_cancel), so the other workers' iterators fail at once instead of
 * waiting for this worker's steps until the collective's timeout. */
DINPUT_API void dinput_dist_iterator_free(dinput_dist_iterator_t* iterator);
/** Cancels the iterator as dinput_iterator_cancel does (any thread, also while another is in
 * get_next, which then returns DINPUT_CANCELLED within about 10 ms, as does every later
 * call). In a multi-worker strategy the iterators of this epoch on the other workers fail
 * too, promptly, with DINPUT_CANCELLED naming this worker, also when they are waiting for
 * this one in a step; the collective and later iterators are not affected. Idempotent;
 * INVALID_ARGUMENT for NULL. */
DINPUT_API dinput_status_t dinput_dist_iterator_cancel(dinput_dist_iterator_t* iterator);
/** One step: an element per local replica; replicas without data get an empty (0-row) batch;
 * DINPUT_OUT_OF_RANGE when no replica on any worker has data. */
DINPUT_API dinput_status_t dinput_dist_iterator_get_next(dinput_per_replica_t** out,
                                                         dinput_dist_iterator_t* iterator);
/** One step as an optional holding a per-replica value (empty at the end of data, on every
 * worker at the same step); errors as for dinput_dist_iterator_get_next. */
DINPUT_API dinput_status_t dinput_dist_iterator_get_next_as_optional(
    dinput_optional_t** out, dinput_dist_iterator_t* iterator);
/** Up to max_steps steps in one call, with their tensor infos, for bindings whose every foreign
 * call costs more than a small step (Python's ctypes): the steps, in order, that as many
 * dinput_dist_iterator_get_next calls would return, each waited for as get_next waits (so a
 * caller that works on each step as it comes overlaps less with the production of the next
 * ones: ask for several only where steps come fast). Sets steps[0 .. *num_steps) to owned
 * per-replica values (free each with dinput_per_replica_free) and, when infos is not NULL,
 * infos[s * infos_per_step ..] to step s's infos as dinput_per_replica_tensor_infos fills them
 * (borrowed from steps[s]).
 *  - infos_per_step must hold a step's replicas times components (the spec's), else
 *    INVALID_ARGUMENT before any step is taken; max_steps 0 is INVALID_ARGUMENT.
 *  - A step taken is never lost: DINPUT_OUT_OF_RANGE, or a failure, comes only with
 *    *num_steps 0. When the data ends, or an error comes, after some steps, the call returns
 *    DINPUT_OK with those, and the next call (or get_next) returns OUT_OF_RANGE, or that error.
 *  - Every step returned counts as taken: a save (dinput_dist_iterator_save) stands after the
 *    last of them, and a call that stopped at an error leaves the iterator failed, as
 *    get_next would have left it one call later. A caller that hands the steps out one by one
 *    and may save in between takes one step per call. */
DINPUT_API dinput_status_t dinput_dist_iterator_get_next_steps(
    size_t* num_steps, dinput_per_replica_t** steps, dinput_tensor_info_t* infos, size_t max_steps,
    size_t infos_per_step, dinput_dist_iterator_t* iterator);
/** Up to max_steps steps copied into one caller buffer, for bindings that pay for every foreign
 * call and every object made per piece (Python's ctypes and numpy) more than for copying a
 * small step: one array made per call replaces a view per piece. A step fits when each of its
 * tensors, T of them (the spec's components times the local replicas, in the order of
 * dinput_per_replica_tensor_infos), is of `dtype` (fixed-size), of shape shape[0 .. rank) and
 * in host memory (CPU or page-locked); its tensor t is copied to buffer + (s * T + t) * P for
 * the s-th step copied, P being product(shape) * dinput_dtype_size(dtype). Sets *num_steps to
 * the steps copied. Each step is waited for as get_next waits.
 *  - The first step that does not fit (a batch of another size, such as a last partial one; a
 *    CUDA tensor; a bytes component) ends the call: it is handed out whole in *unfit, an owned
 *    value as dinput_dist_iterator_get_next returns (free it with dinput_per_replica_free),
 *    and follows the *num_steps copied (which may be 0). Otherwise *unfit is NULL.
 *  - INVALID_ARGUMENT naming the argument, before any step is taken: max_steps 0; dtype
 *    DINPUT_BYTES or invalid; a negative rank or dimension; shape NULL with rank > 0;
 *    buffer_size under max_steps * T * P; buffer NULL when that is not 0.
 *  - A step taken is never lost: DINPUT_OUT_OF_RANGE, or a failure, comes only with
 *    *num_steps 0 and *unfit NULL. When the data ends, or an error comes, after some steps, the
 *    call returns DINPUT_OK with those, and the next call returns OUT_OF_RANGE, or that error.
 *  - Every step copied or handed out counts as taken: a save (dinput_dist_iterator_save)
 *    stands after the last of them, as after dinput_dist_iterator_get_next_steps. */
DINPUT_API dinput_status_t
dinput_dist_iterator_copy_steps(size_t* num_steps, dinput_per_replica_t** unfit, void* buffer,
                                size_t buffer_size, dinput_dtype_t dtype, const int64_t* shape,
                                int rank, size_t max_steps, dinput_dist_iterator_t* iterator);
/** The per-replica element spec of the iterator's steps (a new spec, owned by the caller). */
DINPUT_API dinput_status_t
dinput_dist_iterator_element_spec(dinput_spec_t** out, const dinput_dist_iterator_t* iterator);
/** The statistics of dinput_iterator_statistic for this worker's input pipelines. */
DINPUT_API dinput_status_t dinput_dist_iterator_statistic(int64_t* out,
                                                          const dinput_dist_iterator_t* iterator,
                                                          const char* name);

/* Per-stage statistics and traces (docs/statistics.md). Each operation of a pipeline is a
 * stage; its iterator counts the elements and bytes it produces, the time it spends making
 * them and waiting for its input, how full its buffer is (prefetch, shuffle, parallel map,
 * interleave) and the corrupt records it skipped; get_next counts the time the caller waits
 * against the time between calls. They are read as a JSON document. */

/** Frees a string the library returned (dinput_iterator_statistics and the other functions
 * of this section). NULL is ignored. */
DINPUT_API void dinput_string_free(char* string);
/** Per-stage statistics of the iterators of the pipeline upstream of the with_options node:
 * non-zero (the default) keeps them, 0 leaves the pipeline as it is (the statistics then list
 * no stages and no consumer figures). They cost about 1 to 3% of the CPU time of a pipeline
 * of 1 KiB records (docs/statistics.md, "Cost"). */
DINPUT_API dinput_status_t dinput_options_set_statistics(dinput_options_t* options, int enable);
/** Records a trace of the pipeline upstream of the with_options node (dinput_iterator_trace):
 * one slice per element each stage produces and per get_next wait, the newest max_events
 * kept (older ones are dropped and counted). 0 (the default): no trace. Tracing times every
 * call, which costs more than the statistics alone. INVALID_ARGUMENT when max_events is
 * negative or above 100,000,000. */
DINPUT_API dinput_status_t dinput_options_set_trace(dinput_options_t* options, int64_t max_events);
/** The iterator's statistics so far: a new JSON document (schema "dinput.statistics/1",
 * docs/statistics.md), freed with dinput_string_free. Any thread, also while get_next runs. */
DINPUT_API dinput_status_t dinput_iterator_statistics(char** out,
                                                      const dinput_iterator_t* iterator);
/** The iterator's trace in the Trace Event JSON format (Perfetto, chrome://tracing): one
 * track per stage and thread, freed with dinput_string_free. An empty trace when tracing is
 * off (dinput_options_set_trace). */
DINPUT_API dinput_status_t dinput_iterator_trace(char** out, const dinput_iterator_t* iterator);
/** The statistics of this worker's input pipelines and steps (schema
 * "dinput.dist_statistics/1"), or with all_workers non-zero those of every worker gathered
 * through the collective (schema "dinput.job_statistics/1", naming the slowest worker and
 * stage): then every worker calls it at the same point. Between get_next calls (an overlapping
 * call is DINPUT_FAILED_PRECONDITION). Freed with dinput_string_free. */
DINPUT_API dinput_status_t dinput_dist_iterator_statistics(char** out,
                                                           dinput_dist_iterator_t* iterator,
                                                           int all_workers);
/** This worker's trace (Trace Event JSON, its process id the worker's index): the stages of
 * its input pipelines and the waits of its get_next calls, freed with dinput_string_free. */
DINPUT_API dinput_status_t dinput_dist_iterator_trace(char** out,
                                                      const dinput_dist_iterator_t* iterator);

/* Autotuning (docs/autotune.md). DINPUT_AUTOTUNE given as a map's or batch's
 * num_parallel_calls or as a prefetch's buffer_size is a knob that starts low and rises while
 * the measured rates say that one more thread or buffered element would cut the time the
 * stage's consumer waits, within a memory budget per iterator. The statistics list each
 * knob's value under its stage. */

/** The most bytes the autotuned buffers of each iterator of the pipeline upstream of the
 * with_options node may hold (the elements waiting in AUTOTUNE prefetches, parallel maps and
 * batches, as estimated from the sizes measured): a knob is not raised past it. 0 (the
 * default): half of the machine's physical memory. INVALID_ARGUMENT naming 'bytes' when it is
 * negative. */
DINPUT_API dinput_status_t dinput_options_set_ram_budget(dinput_options_t* options, int64_t bytes);

/* Checkpoints of distributed iterators (docs/checkpoint.md, "Distributed iterators"). */

/** Saves where the whole job's distributed iterators are: every worker calls it at the same
 * step (between get_next calls), the workers' parts are gathered through the collective, and
 * every worker receives the same state (so one worker's copy is enough to write). Steps
 * produced ahead of the consumer (the per-replica buffer) are produced again after a
 * restore. DINPUT_FAILED_PRECONDITION naming the steps when the workers saved at different
 * steps, or for a failed iterator or a save overlapping a get_next; DINPUT_UNIMPLEMENTED
 * naming the operation of a pipeline that cannot save (on every worker alike). */
DINPUT_API dinput_status_t dinput_dist_iterator_save(dinput_state_t** out,
                                                     dinput_dist_iterator_t* iterator);
/** A distributed iterator over `dataset` that continues where the saved job's stopped. Every
 * worker calls it with the same state, at the same point (like dinput_dist_dataset_iterator),
 * and the workers check through the collective that they restored the same step
 * (DINPUT_FAILED_PRECONDITION naming the workers and steps otherwise). A state restores on
 * the same number of workers and replicas, or under DATA, FILE or OFF sharding on any other
 * number with the same global batch (DATA continues at the next global batch, OFF at the row
 * the saved workers had reached, on every new worker, FILE deals out what the saved workers had
 * not delivered: each element once, in another order). A different pipeline is
 * DINPUT_FAILED_PRECONDITION naming the first operation that differs; a damaged state is
 * DINPUT_DATA_LOSS. The `size` bytes at `state` are read during the call only. */
DINPUT_API dinput_status_t dinput_dist_dataset_iterator_from_state(
    dinput_dist_iterator_t** out, const dinput_dist_dataset_t* dataset, const void* state,
    size_t size);
/** What a saved state (of a dataset iterator or a distributed iterator) holds, as one JSON
 * object: its kind, size and format version, the pipeline's operations, the random seeds, and
 * for a distributed iterator the job's shape, step and each worker's pipelines
 * (docs/checkpoint.md, "Reading a state"). Returned as a new state handle whose bytes
 * (dinput_state_data, dinput_state_size; no terminating NUL) are the UTF-8 JSON text. The
 * state is checked as a restore checks it: a damaged or truncated one is DINPUT_DATA_LOSS. */
DINPUT_API dinput_status_t dinput_state_describe(dinput_state_t** out, const void* state,
                                                 size_t size);

/** The per-replica value held by an optional (a new handle). INVALID_ARGUMENT when empty or
 * when it holds a plain element. */
DINPUT_API dinput_status_t dinput_optional_get_per_replica(dinput_per_replica_t** out,
                                                           const dinput_optional_t* optional);

/** Releases this handle to the per-replica value. NULL is ignored. */
DINPUT_API void dinput_per_replica_free(dinput_per_replica_t* value);
/** A new handle to the same per-replica value (no copy of the data). */
DINPUT_API dinput_status_t dinput_per_replica_ref(dinput_per_replica_t** out,
                                                  const dinput_per_replica_t* value);
/** Number of local replicas in the value (0 for NULL). */
DINPUT_API int dinput_per_replica_size(const dinput_per_replica_t* value);
/** Borrowed element of local replica i (local_results order), valid while the value lives;
 * NULL when out of range (negative i included). */
DINPUT_API const dinput_element_t* dinput_per_replica_get(const dinput_per_replica_t* value, int i);
/** Every component of every local replica in one call: fills infos[0 .. min(capacity, n))
 * replica by replica (replica r's component c at r * components + c, where every replica has
 * the same number of components) and sets *count to n, the replicas times the components.
 * capacity 0 (infos may be NULL) asks for n. A value whose replicas differ in their number of
 * components is INVALID_ARGUMENT naming the replica. One call per step instead of several per
 * tensor: see dinput_tensor_info_t. */
DINPUT_API dinput_status_t dinput_per_replica_tensor_infos(size_t* count,
                                                           dinput_tensor_info_t* infos,
                                                           size_t capacity,
                                                           const dinput_per_replica_t* value);
/** Creates a per-replica value from one element per local replica. count: 0..4096 (the most
 * local replicas a strategy has), else INVALID_ARGUMENT. The elements may hold CUDA tensors,
 * as those of dinput_dist_iterator_get_next do; they are kept as they are (as are those that
 * value_fn and the run function return). */
DINPUT_API dinput_status_t dinput_per_replica_new(dinput_per_replica_t** out,
                                                  const dinput_element_t* const* elements,
                                                  int count);

/** value_fn: the value of one replica, called once per local replica in replica order, on the
 * thread that calls dinput_strategy_distribute_values_from_function, during that call only.
 * `context` is borrowed for the call only; *out becomes the library's. */
typedef dinput_status_t (*dinput_value_fn)(dinput_element_t** out,
                                           const dinput_value_context_t* context, void* user_data);
/** A per-replica value whose element for each local replica is computed by fn (see
 * dinput_value_fn). A failing status from fn fails the call, naming the replica. */
DINPUT_API dinput_status_t dinput_strategy_distribute_values_from_function(
    dinput_per_replica_t** out, const dinput_strategy_t* strategy, dinput_value_fn fn,
    void* user_data);
/** The replica's index among all replicas in sync, worker_index * R + local index (0 for
 * NULL). */
DINPUT_API int dinput_value_context_replica_id_in_sync_group(const dinput_value_context_t* c);
/** Number of replicas in sync (0 for NULL). */
DINPUT_API int dinput_value_context_num_replicas_in_sync(const dinput_value_context_t* c);

/** run callback: computes replica context's result from its slice of the arguments (args
 * is NULL when run was given no arguments). Called concurrently, once per local replica
 * (replica 0 on the calling thread). `context` and `args` are borrowed for the call only
 * (dinput_element_ref keeps args longer); *out becomes the library's. */
typedef dinput_status_t (*dinput_replica_fn)(dinput_element_t** out,
                                             const dinput_replica_context_t* context,
                                             const dinput_element_t* args, void* user_data);
/** Runs fn once per local replica, concurrently, each with its replica's element of args (may
 * be NULL), and returns the results as a per-replica value (as tf.distribute.Strategy.run).
 * A failing status from any replica fails the call, naming the replica. */
DINPUT_API dinput_status_t dinput_strategy_run(dinput_per_replica_t** out,
                                               const dinput_strategy_t* strategy,
                                               dinput_replica_fn fn,
                                               const dinput_per_replica_t* args, void* user_data);
/** The replica's index among all replicas in sync (0 for NULL). */
DINPUT_API int dinput_replica_context_replica_id_in_sync_group(const dinput_replica_context_t* c);
/** Number of replicas in sync (0 for NULL). */
DINPUT_API int dinput_replica_context_num_replicas_in_sync(const dinput_replica_context_t* c);
/** Canonical device name of the replica, e.g. "CPU:1"; borrowed like the context: valid during
 * the callback only. */
DINPUT_API const char* dinput_replica_context_device(const dinput_replica_context_t* c);

/** How dinput_strategy_reduce combines the replicas' values: their sum or their mean. */
/* clang-format off */
typedef DINPUT_ENUM(dinput_reduce_op_t) {
  DINPUT_REDUCE_SUM = 0,
  DINPUT_REDUCE_MEAN = 1,
  DINPUT_REDUCE_OP_FORCE_32BIT = 0x7FFFFFFF
} dinput_reduce_op_t;
/* clang-format on */
/** axis for dinput_strategy_reduce: element-wise across replicas only. */
#define DINPUT_AXIS_NONE (-1)

/** Reduces a per-replica value across all replicas of all workers, component by component.
 * axis DINPUT_AXIS_NONE: element-wise (shapes must match; MEAN divides by
 * num_replicas_in_sync); axis 0: also over the first dimension (MEAN divides by the total
 * number of rows). Result dtypes: SUM keeps the component's dtype (bool sums to int64; integer
 * sums are exact); MEAN keeps floating dtypes and gives float64 for integer and bool
 * components. Integer components are summed exactly in 128 bits: a SUM outside the range of
 * its dtype (signed or unsigned; nothing wraps) fails with DINPUT_INVALID_ARGUMENT naming
 * the op, the dtype and the exact sum, and an integer MEAN divides the exact sum, rounded
 * once to float64. Values on GPUs give bit for bit the result of the same values on the
 * host: NCCL (when available; one worker, element-wise) sums only floating components over
 * exactly two distinct GPUs, where its one rounding is the host's, and a component whose
 * NCCL sum is not finite or whose MEAN is subnormal is redone on the host; everything else
 * is copied to the host. A CUDA tensor whose GPU cannot be used in this process is
 * FAILED_PRECONDITION naming the replica and the device. The result is in host memory, and
 * every worker gets the same one. */
DINPUT_API dinput_status_t dinput_strategy_reduce(dinput_element_t** out,
                                                  const dinput_strategy_t* strategy,
                                                  dinput_reduce_op_t op,
                                                  const dinput_per_replica_t* value, int axis);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DINPUT_H */
