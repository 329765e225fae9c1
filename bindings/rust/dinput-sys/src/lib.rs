//! Raw FFI declarations of dinput's C ABI, `include/dinput.h` and `include/dinput_cuda.h`,
//! written by hand.
//!
//! Everything here mirrors the headers one to one: the opaque handle types, the enum values,
//! the macro constants, the callback typedefs and every `DINPUT_API` function, in the
//! headers' order and with their parameter names. The safe layer is the `dinput` crate; read
//! the header (or that crate) for what each function does, who owns what, and which
//! pointers are borrowed.
//!
//! How C types are written here:
//! - C enums are `c_int` type aliases with one `pub const` per value (as libgit2-sys does),
//!   never Rust enums: the library may return a value this crate does not know (the enums
//!   are append-only), and a Rust enum holding an undeclared value is undefined behaviour.
//!   Every enum of dinput.h fits in an `int`, which is how C compilers lay them out.
//! - Opaque handles are zero-sized `#[repr(C)]` structs that are `!Send`, `!Sync` and
//!   `!Unpin`, so that they can only be used behind pointers; the safe layer decides which
//!   wrappers may cross threads.
//! - Callback typedefs are `Option<unsafe extern "C" fn ...>` so that NULL is `None`.
//! - CUDA's `cudaStream_t` and `cudaEvent_t` (in dinput_cuda.h) are `*mut c_void`: they are
//!   pointers to opaque structs, and spelling them so keeps the CUDA toolkit out of the build.
//!
//! `tests/header.rs` parses both headers and this file and checks that they declare the same
//! functions with the same parameter and return types, and the same constants with the same
//! values.
#![no_std]
#![allow(non_camel_case_types, non_upper_case_globals)] // C names, kept as in the headers

use core::ffi::{c_char, c_int, c_void};
use core::marker::{PhantomData, PhantomPinned};

// ---------------------------------------------------------------------------------------
// Version macros
// ---------------------------------------------------------------------------------------

pub const DINPUT_VERSION_MAJOR: c_int = 0;
pub const DINPUT_VERSION_MINOR: c_int = 1;
pub const DINPUT_VERSION_PATCH: c_int = 0;
/// MAJOR*10000 + MINOR*100 + PATCH of the header these declarations were written from.
pub const DINPUT_VERSION_NUMBER: c_int =
    DINPUT_VERSION_MAJOR * 10000 + DINPUT_VERSION_MINOR * 100 + DINPUT_VERSION_PATCH;

// ---------------------------------------------------------------------------------------
// Status codes
// ---------------------------------------------------------------------------------------

pub type dinput_status_t = c_int;
pub const DINPUT_OK: dinput_status_t = 0;
pub const DINPUT_CANCELLED: dinput_status_t = 1;
pub const DINPUT_UNKNOWN: dinput_status_t = 2;
pub const DINPUT_INVALID_ARGUMENT: dinput_status_t = 3;
pub const DINPUT_DEADLINE_EXCEEDED: dinput_status_t = 4;
pub const DINPUT_NOT_FOUND: dinput_status_t = 5;
pub const DINPUT_ALREADY_EXISTS: dinput_status_t = 6;
pub const DINPUT_PERMISSION_DENIED: dinput_status_t = 7;
pub const DINPUT_RESOURCE_EXHAUSTED: dinput_status_t = 8;
pub const DINPUT_FAILED_PRECONDITION: dinput_status_t = 9;
pub const DINPUT_ABORTED: dinput_status_t = 10;
pub const DINPUT_OUT_OF_RANGE: dinput_status_t = 11;
pub const DINPUT_UNIMPLEMENTED: dinput_status_t = 12;
pub const DINPUT_INTERNAL: dinput_status_t = 13;
pub const DINPUT_UNAVAILABLE: dinput_status_t = 14;
pub const DINPUT_DATA_LOSS: dinput_status_t = 15;
pub const DINPUT_UNAUTHENTICATED: dinput_status_t = 16;
/// Not a status: keeps the C enum 4 bytes wide (as the sentinel of every enum below).
pub const DINPUT_STATUS_FORCE_32BIT: dinput_status_t = 0x7FFF_FFFF;

// ---------------------------------------------------------------------------------------
// Data types
// ---------------------------------------------------------------------------------------

pub type dinput_dtype_t = c_int;
pub const DINPUT_DTYPE_INVALID: dinput_dtype_t = 0;
pub const DINPUT_BOOL: dinput_dtype_t = 1;
pub const DINPUT_INT8: dinput_dtype_t = 2;
pub const DINPUT_INT16: dinput_dtype_t = 3;
pub const DINPUT_INT32: dinput_dtype_t = 4;
pub const DINPUT_INT64: dinput_dtype_t = 5;
pub const DINPUT_UINT8: dinput_dtype_t = 6;
pub const DINPUT_UINT16: dinput_dtype_t = 7;
pub const DINPUT_UINT32: dinput_dtype_t = 8;
pub const DINPUT_UINT64: dinput_dtype_t = 9;
pub const DINPUT_FLOAT16: dinput_dtype_t = 10;
pub const DINPUT_BFLOAT16: dinput_dtype_t = 11;
pub const DINPUT_FLOAT32: dinput_dtype_t = 12;
pub const DINPUT_FLOAT64: dinput_dtype_t = 13;
pub const DINPUT_BYTES: dinput_dtype_t = 14;
pub const DINPUT_DTYPE_FORCE_32BIT: dinput_dtype_t = 0x7FFF_FFFF;

/// An unknown dimension in a shape (in specs only; tensors have known shapes).
pub const DINPUT_UNKNOWN_DIM: i64 = -1;

/// Where a tensor's data lives (DLPack's device type numbers).
pub type dinput_device_type_t = c_int;
pub const DINPUT_DEVICE_CPU: dinput_device_type_t = 1;
pub const DINPUT_DEVICE_CUDA: dinput_device_type_t = 2;
/// Page-locked host memory.
pub const DINPUT_DEVICE_CUDA_HOST: dinput_device_type_t = 3;
pub const DINPUT_DEVICE_TYPE_FORCE_32BIT: dinput_device_type_t = 0x7FFF_FFFF;

// ---------------------------------------------------------------------------------------
// Other enums and macro constants
// ---------------------------------------------------------------------------------------

pub type dinput_auto_shard_policy_t = c_int;
pub const DINPUT_AUTO_SHARD_OFF: dinput_auto_shard_policy_t = -1;
pub const DINPUT_AUTO_SHARD_AUTO: dinput_auto_shard_policy_t = 0;
pub const DINPUT_AUTO_SHARD_FILE: dinput_auto_shard_policy_t = 1;
pub const DINPUT_AUTO_SHARD_DATA: dinput_auto_shard_policy_t = 2;
pub const DINPUT_AUTO_SHARD_HINT: dinput_auto_shard_policy_t = 3;
pub const DINPUT_AUTO_SHARD_POLICY_FORCE_32BIT: dinput_auto_shard_policy_t = 0x7FFF_FFFF;

pub const DINPUT_INFINITE_CARDINALITY: i64 = -1;
pub const DINPUT_UNKNOWN_CARDINALITY: i64 = -2;
pub const DINPUT_REPEAT_FOREVER: i64 = -1;
pub const DINPUT_SHARD_HINT: i64 = -1;
pub const DINPUT_AUTOTUNE: i64 = -1;

pub type dinput_replication_mode_t = c_int;
pub const DINPUT_REPLICATION_PER_WORKER: dinput_replication_mode_t = 0;
pub const DINPUT_REPLICATION_PER_REPLICA: dinput_replication_mode_t = 1;
pub const DINPUT_REPLICATION_MODE_FORCE_32BIT: dinput_replication_mode_t = 0x7FFF_FFFF;

pub type dinput_reduce_op_t = c_int;
pub const DINPUT_REDUCE_SUM: dinput_reduce_op_t = 0;
pub const DINPUT_REDUCE_MEAN: dinput_reduce_op_t = 1;
pub const DINPUT_REDUCE_OP_FORCE_32BIT: dinput_reduce_op_t = 0x7FFF_FFFF;

pub const DINPUT_AXIS_NONE: c_int = -1;

pub type dinput_compression_t = c_int;
pub const DINPUT_COMPRESSION_NONE: dinput_compression_t = 0;
pub const DINPUT_COMPRESSION_ZSTD: dinput_compression_t = 1;
pub const DINPUT_COMPRESSION_GZIP: dinput_compression_t = 2;
pub const DINPUT_COMPRESSION_FORCE_32BIT: dinput_compression_t = 0x7FFF_FFFF;

pub type dinput_deterministic_t = c_int;
pub const DINPUT_DETERMINISTIC_UNSET: dinput_deterministic_t = -1;
pub const DINPUT_DETERMINISTIC_FALSE: dinput_deterministic_t = 0;
pub const DINPUT_DETERMINISTIC_TRUE: dinput_deterministic_t = 1;
pub const DINPUT_DETERMINISTIC_FORCE_32BIT: dinput_deterministic_t = 0x7FFF_FFFF;

// ---------------------------------------------------------------------------------------
// Opaque handles
// ---------------------------------------------------------------------------------------

macro_rules! opaque {
    ($($(#[$doc:meta])* $name:ident => $alias:ident;)*) => {$(
        $(#[$doc])*
        #[repr(C)]
        pub struct $name {
            _data: [u8; 0],
            // Raw pointer: !Send + !Sync; PhantomPinned: !Unpin (the library owns the memory).
            _marker: PhantomData<(*mut u8, PhantomPinned)>,
        }
        pub type $alias = $name;
    )*};
}

opaque! {
    /// An immutable dense tensor.
    dinput_tensor => dinput_tensor_t;
    /// A tuple of tensors.
    dinput_element => dinput_element_t;
    /// Per component a dtype and a shape with possibly unknown dimensions.
    dinput_spec => dinput_spec_t;
    /// Dataset options (the auto-shard policy).
    dinput_options => dinput_options_t;
    /// An immutable node of a pipeline graph.
    dinput_dataset => dinput_dataset_t;
    /// Iterates a dataset; one consumer at a time.
    dinput_iterator => dinput_iterator_t;
    /// Holds an element, a per-replica value, or nothing.
    dinput_optional => dinput_optional_t;
    /// A saved iterator state: bytes owned by the handle.
    dinput_state => dinput_state_t;
    /// A worker process's place in a multi-process job; immutable.
    dinput_cluster => dinput_cluster_t;
    /// How workers exchange the values the distributed iterator and reduce need.
    dinput_collective => dinput_collective_t;
    /// Options of dinput_collective_new_from_cluster.
    dinput_collective_options => dinput_collective_options_t;
    /// One worker's view of W workers x R replica devices.
    dinput_strategy => dinput_strategy_t;
    /// tf.distribute.InputOptions.
    dinput_input_options => dinput_input_options_t;
    /// A dataset distributed over a strategy's replicas.
    dinput_dist_dataset => dinput_dist_dataset_t;
    /// Iterates a distributed dataset; one consumer at a time.
    dinput_dist_iterator => dinput_dist_iterator_t;
    /// One element per local replica.
    dinput_per_replica => dinput_per_replica_t;
    /// Passed to a dataset_fn, valid during the call.
    dinput_input_context => dinput_input_context_t;
    /// Passed to a value_fn, valid during the call.
    dinput_value_context => dinput_value_context_t;
    /// Passed to a run callback, valid during the call.
    dinput_replica_context => dinput_replica_context_t;
    /// Writes TFRecord-framed files; one thread at a time.
    dinput_record_writer => dinput_record_writer_t;
    /// Options of dinput_dataset_map.
    dinput_map_options => dinput_map_options_t;
    /// Options of dinput_dataset_interleave.
    dinput_interleave_options => dinput_interleave_options_t;
    /// Options of dinput_dataset_batch.
    dinput_batch_options => dinput_batch_options_t;
    /// Options of dinput_dataset_shuffle.
    dinput_shuffle_options => dinput_shuffle_options_t;
    /// Options of dinput_dataset_records.
    dinput_records_options => dinput_records_options_t;
    /// Options of dinput_dataset_list_files.
    dinput_list_files_options => dinput_list_files_options_t;
    /// Options of dinput_record_writer_open.
    dinput_record_writer_options => dinput_record_writer_options_t;
    /// The features a parse extracts from each record; frozen once a parse uses it.
    dinput_feature_spec => dinput_feature_spec_t;
    /// Options of the image operations (dinput_dataset_decode_jpeg, ...).
    dinput_image_options => dinput_image_options_t;
    /// Options of dinput_dataset_padded_batch and dinput_dataset_bucket_by_sequence_length.
    dinput_padded_batch_options => dinput_padded_batch_options_t;
    /// A file reader as a value, for dinput_dataset_interleave_reader and flat_map_reader.
    dinput_reader => dinput_reader_t;
}

// ---------------------------------------------------------------------------------------
// DLPack (dlpack/dlpack.h)
// ---------------------------------------------------------------------------------------
// dinput.h only forward-declares `struct DLManagedTensor`; the layout below is DLPack's
// (unchanged from DLPack 0.5 through 1.x for DLManagedTensor), written out so that a Rust
// caller can read the exported tensor and call its deleter.

/// DLPack device type (`kDLCPU` = 1, `kDLCUDA` = 2, ...).
pub type DLDeviceType = c_int;
pub const kDLCPU: DLDeviceType = 1;
pub const kDLCUDA: DLDeviceType = 2;
pub const kDLCUDAHost: DLDeviceType = 3;

/// DLPack data type codes (the `code` field of [`DLDataType`]).
pub const kDLInt: u8 = 0;
pub const kDLUInt: u8 = 1;
pub const kDLFloat: u8 = 2;
pub const kDLOpaqueHandle: u8 = 3;
pub const kDLBfloat: u8 = 4;
pub const kDLComplex: u8 = 5;
pub const kDLBool: u8 = 6;

#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct DLDevice {
    pub device_type: DLDeviceType,
    pub device_id: i32,
}

#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct DLDataType {
    pub code: u8,
    pub bits: u8,
    pub lanes: u16,
}

#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct DLTensor {
    pub data: *mut c_void,
    pub device: DLDevice,
    pub ndim: i32,
    pub dtype: DLDataType,
    pub shape: *mut i64,
    pub strides: *mut i64,
    pub byte_offset: u64,
}

/// `dinput_tensor_info_t`: every accessor of one tensor, filled for a whole element or step
/// by `dinput_element_tensor_infos` / `dinput_per_replica_tensor_infos`.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dinput_tensor_info {
    pub tensor: *const dinput_tensor_t,
    pub data: *const c_void,
    pub shape: *const i64,
    pub byte_size: usize,
    pub rank: i32,
    pub dtype: dinput_dtype_t,
    pub device_type: dinput_device_type_t,
    pub device_index: i32,
}
pub type dinput_tensor_info_t = dinput_tensor_info;

#[repr(C)]
#[derive(Debug)]
pub struct DLManagedTensor {
    pub dl_tensor: DLTensor,
    pub manager_ctx: *mut c_void,
    pub deleter: Option<unsafe extern "C" fn(self_: *mut DLManagedTensor)>,
}

// ---------------------------------------------------------------------------------------
// Callback typedefs
// ---------------------------------------------------------------------------------------

pub type dinput_free_fn = Option<unsafe extern "C" fn(user_data: *mut c_void)>;

pub type dinput_thread_body_fn = Option<unsafe extern "C" fn(arg: *mut c_void)>;
pub type dinput_thread_launcher_fn =
    Option<unsafe extern "C" fn(body: dinput_thread_body_fn, arg: *mut c_void, user_data: *mut c_void) -> c_int>;

pub type dinput_generator_init_fn =
    Option<unsafe extern "C" fn(state: *mut *mut c_void, user_data: *mut c_void) -> dinput_status_t>;
pub type dinput_generator_next_fn =
    Option<unsafe extern "C" fn(out: *mut *mut dinput_element_t, state: *mut c_void) -> dinput_status_t>;
pub type dinput_generator_finalize_fn = Option<unsafe extern "C" fn(state: *mut c_void)>;
pub type dinput_state_write_fn = Option<unsafe extern "C" fn(sink: *mut c_void, data: *const c_void, size: usize)>;
pub type dinput_generator_save_fn = Option<
    unsafe extern "C" fn(state: *mut c_void, write: dinput_state_write_fn, sink: *mut c_void) -> dinput_status_t,
>;
pub type dinput_generator_restore_fn =
    Option<unsafe extern "C" fn(state: *mut c_void, data: *const c_void, size: usize) -> dinput_status_t>;

pub type dinput_map_fn = Option<
    unsafe extern "C" fn(
        out: *mut *mut dinput_element_t,
        in_: *const dinput_element_t,
        user_data: *mut c_void,
    ) -> dinput_status_t,
>;

pub type dinput_map_many_fn = Option<
    unsafe extern "C" fn(
        outs: *mut *mut dinput_element_t,
        ins: *const *const dinput_element_t,
        count: usize,
        user_data: *mut c_void,
    ) -> dinput_status_t,
>;

pub type dinput_filter_fn = Option<
    unsafe extern "C" fn(keep: *mut c_int, in_: *const dinput_element_t, user_data: *mut c_void) -> dinput_status_t,
>;

pub type dinput_length_fn = Option<
    unsafe extern "C" fn(length: *mut i64, in_: *const dinput_element_t, user_data: *mut c_void) -> dinput_status_t,
>;

pub type dinput_interleave_fn = Option<
    unsafe extern "C" fn(
        out: *mut *mut dinput_dataset_t,
        in_: *const dinput_element_t,
        user_data: *mut c_void,
    ) -> dinput_status_t,
>;

pub type dinput_dataset_fn = Option<
    unsafe extern "C" fn(
        out: *mut *mut dinput_dataset_t,
        context: *const dinput_input_context_t,
        user_data: *mut c_void,
    ) -> dinput_status_t,
>;

pub type dinput_value_fn = Option<
    unsafe extern "C" fn(
        out: *mut *mut dinput_element_t,
        context: *const dinput_value_context_t,
        user_data: *mut c_void,
    ) -> dinput_status_t,
>;

pub type dinput_replica_fn = Option<
    unsafe extern "C" fn(
        out: *mut *mut dinput_element_t,
        context: *const dinput_replica_context_t,
        args: *const dinput_element_t,
        user_data: *mut c_void,
    ) -> dinput_status_t,
>;

// ---------------------------------------------------------------------------------------
// Functions, in the order of dinput.h
// ---------------------------------------------------------------------------------------

extern "C" {
    // -- status codes, errors, version --
    pub fn dinput_status_name(code: dinput_status_t) -> *const c_char;
    pub fn dinput_last_error_message() -> *const c_char;
    pub fn dinput_last_error_code() -> dinput_status_t;
    pub fn dinput_error_set(code: dinput_status_t, message: *const c_char);
    pub fn dinput_error_clear();
    pub fn dinput_version() -> *const c_char;
    pub fn dinput_version_number() -> c_int;
    pub fn dinput_build_info() -> *const c_char;
    pub fn dinput_set_thread_launcher(launcher: dinput_thread_launcher_fn, user_data: *mut c_void);

    // -- data types and tensors --
    pub fn dinput_dtype_name(dtype: dinput_dtype_t) -> *const c_char;
    pub fn dinput_dtype_size(dtype: dinput_dtype_t) -> usize;
    pub fn dinput_dtype_from_name(name: *const c_char) -> dinput_dtype_t;
    pub fn dinput_tensor_new(
        out: *mut *mut dinput_tensor_t,
        dtype: dinput_dtype_t,
        shape: *const i64,
        rank: c_int,
        data: *const c_void,
        nbytes: usize,
    ) -> dinput_status_t;
    pub fn dinput_tensor_new_bytes(
        out: *mut *mut dinput_tensor_t,
        shape: *const i64,
        rank: c_int,
        strings: *const *const c_char,
        lengths: *const usize,
    ) -> dinput_status_t;
    pub fn dinput_tensor_ref(out: *mut *mut dinput_tensor_t, tensor: *const dinput_tensor_t) -> dinput_status_t;
    pub fn dinput_tensor_free(tensor: *mut dinput_tensor_t);
    pub fn dinput_tensor_dtype(tensor: *const dinput_tensor_t) -> dinput_dtype_t;
    pub fn dinput_tensor_rank(tensor: *const dinput_tensor_t) -> c_int;
    pub fn dinput_tensor_shape(tensor: *const dinput_tensor_t) -> *const i64;
    pub fn dinput_tensor_dim(tensor: *const dinput_tensor_t, i: c_int) -> i64;
    pub fn dinput_tensor_num_elements(tensor: *const dinput_tensor_t) -> i64;
    pub fn dinput_tensor_byte_size(tensor: *const dinput_tensor_t) -> usize;
    pub fn dinput_tensor_data(tensor: *const dinput_tensor_t) -> *const c_void;
    pub fn dinput_tensor_device_type(tensor: *const dinput_tensor_t) -> dinput_device_type_t;
    pub fn dinput_tensor_device_index(tensor: *const dinput_tensor_t) -> c_int;
    pub fn dinput_tensor_to_host(out: *mut *mut dinput_tensor_t, tensor: *const dinput_tensor_t) -> dinput_status_t;
    pub fn dinput_tensor_new_pinned(
        out: *mut *mut dinput_tensor_t,
        dtype: dinput_dtype_t,
        shape: *const i64,
        rank: c_int,
        data: *const c_void,
        nbytes: usize,
    ) -> dinput_status_t;
    pub fn dinput_tensor_copy_to(
        out: *mut c_void,
        out_bytes: usize,
        tensor: *const dinput_tensor_t,
        expected: dinput_dtype_t,
    ) -> dinput_status_t;
    pub fn dinput_tensor_string_view(
        out: *mut *const c_char,
        out_len: *mut usize,
        tensor: *const dinput_tensor_t,
        index: i64,
    ) -> dinput_status_t;
    pub fn dinput_tensor_to_dlpack(out: *mut *mut DLManagedTensor, tensor: *const dinput_tensor_t) -> dinput_status_t;

    // -- GPU memory: the caches behind CUDA tensors --
    pub fn dinput_cuda_empty_cache() -> dinput_status_t;
    pub fn dinput_cuda_set_cache_limit(bytes: usize) -> dinput_status_t;
    pub fn dinput_cuda_cache_limit(out: *mut usize) -> dinput_status_t;
    pub fn dinput_cuda_pool_bytes(out_held: *mut usize, out_cached: *mut usize, device: c_int) -> dinput_status_t;

    // -- elements --
    pub fn dinput_element_new(
        out: *mut *mut dinput_element_t,
        tensors: *const *const dinput_tensor_t,
        count: usize,
    ) -> dinput_status_t;
    pub fn dinput_element_free(element: *mut dinput_element_t);
    pub fn dinput_element_ref(out: *mut *mut dinput_element_t, element: *const dinput_element_t) -> dinput_status_t;
    pub fn dinput_element_size(element: *const dinput_element_t) -> usize;
    pub fn dinput_element_get(element: *const dinput_element_t, i: usize) -> *const dinput_tensor_t;
    pub fn dinput_element_tensor_infos(
        count: *mut usize,
        infos: *mut dinput_tensor_info_t,
        capacity: usize,
        element: *const dinput_element_t,
    ) -> dinput_status_t;

    // -- element specs --
    pub fn dinput_spec_new(out: *mut *mut dinput_spec_t) -> dinput_status_t;
    pub fn dinput_spec_add(
        spec: *mut dinput_spec_t,
        dtype: dinput_dtype_t,
        shape: *const i64,
        rank: c_int,
    ) -> dinput_status_t;
    pub fn dinput_spec_free(spec: *mut dinput_spec_t);
    pub fn dinput_spec_size(spec: *const dinput_spec_t) -> usize;
    pub fn dinput_spec_dtype(spec: *const dinput_spec_t, i: usize) -> dinput_dtype_t;
    pub fn dinput_spec_rank(spec: *const dinput_spec_t, i: usize) -> c_int;
    pub fn dinput_spec_shape(spec: *const dinput_spec_t, i: usize) -> *const i64;

    // -- dataset options --
    pub fn dinput_options_new(out: *mut *mut dinput_options_t) -> dinput_status_t;
    pub fn dinput_options_free(options: *mut dinput_options_t);
    pub fn dinput_options_set_auto_shard_policy(
        options: *mut dinput_options_t,
        policy: dinput_auto_shard_policy_t,
    ) -> dinput_status_t;
    pub fn dinput_options_auto_shard_policy(options: *const dinput_options_t) -> dinput_auto_shard_policy_t;
    pub fn dinput_options_set_skip_corrupt_records(options: *mut dinput_options_t, enable: c_int) -> dinput_status_t;
    pub fn dinput_options_skip_corrupt_records(options: *const dinput_options_t) -> c_int;
    pub fn dinput_options_set_max_record_bytes(options: *mut dinput_options_t, max_bytes: i64) -> dinput_status_t;
    pub fn dinput_options_max_record_bytes(options: *const dinput_options_t) -> i64;
    pub fn dinput_options_set_map_files(options: *mut dinput_options_t, enable: c_int) -> dinput_status_t;
    pub fn dinput_options_map_files(options: *const dinput_options_t) -> c_int;
    pub fn dinput_options_set_allow_nonregular_files(options: *mut dinput_options_t, enable: c_int) -> dinput_status_t;
    pub fn dinput_options_allow_nonregular_files(options: *const dinput_options_t) -> c_int;
    pub fn dinput_options_set_deterministic(options: *mut dinput_options_t, enable: c_int) -> dinput_status_t;
    pub fn dinput_options_deterministic(options: *const dinput_options_t) -> c_int;

    // -- transformation options --
    pub fn dinput_map_options_new(out: *mut *mut dinput_map_options_t) -> dinput_status_t;
    pub fn dinput_map_options_free(options: *mut dinput_map_options_t);
    pub fn dinput_map_options_set_out_spec(
        options: *mut dinput_map_options_t,
        spec: *const dinput_spec_t,
    ) -> dinput_status_t;
    pub fn dinput_map_options_out_spec(
        out: *mut *mut dinput_spec_t,
        options: *const dinput_map_options_t,
    ) -> dinput_status_t;
    pub fn dinput_map_options_set_num_parallel_calls(
        options: *mut dinput_map_options_t,
        num_parallel_calls: i64,
    ) -> dinput_status_t;
    pub fn dinput_map_options_num_parallel_calls(options: *const dinput_map_options_t) -> i64;
    pub fn dinput_map_options_set_deterministic(
        options: *mut dinput_map_options_t,
        deterministic: dinput_deterministic_t,
    ) -> dinput_status_t;
    pub fn dinput_map_options_deterministic(options: *const dinput_map_options_t) -> dinput_deterministic_t;
    pub fn dinput_interleave_options_new(out: *mut *mut dinput_interleave_options_t) -> dinput_status_t;
    pub fn dinput_interleave_options_free(options: *mut dinput_interleave_options_t);
    pub fn dinput_interleave_options_set_cycle_length(
        options: *mut dinput_interleave_options_t,
        cycle_length: i64,
    ) -> dinput_status_t;
    pub fn dinput_interleave_options_cycle_length(options: *const dinput_interleave_options_t) -> i64;
    pub fn dinput_interleave_options_set_block_length(
        options: *mut dinput_interleave_options_t,
        block_length: i64,
    ) -> dinput_status_t;
    pub fn dinput_interleave_options_block_length(options: *const dinput_interleave_options_t) -> i64;
    pub fn dinput_interleave_options_set_num_parallel_calls(
        options: *mut dinput_interleave_options_t,
        num_parallel_calls: i64,
    ) -> dinput_status_t;
    pub fn dinput_interleave_options_num_parallel_calls(options: *const dinput_interleave_options_t) -> i64;
    pub fn dinput_interleave_options_set_deterministic(
        options: *mut dinput_interleave_options_t,
        deterministic: dinput_deterministic_t,
    ) -> dinput_status_t;
    pub fn dinput_interleave_options_deterministic(
        options: *const dinput_interleave_options_t,
    ) -> dinput_deterministic_t;
    pub fn dinput_batch_options_new(out: *mut *mut dinput_batch_options_t) -> dinput_status_t;
    pub fn dinput_batch_options_free(options: *mut dinput_batch_options_t);
    pub fn dinput_batch_options_set_drop_remainder(
        options: *mut dinput_batch_options_t,
        drop_remainder: c_int,
    ) -> dinput_status_t;
    pub fn dinput_batch_options_drop_remainder(options: *const dinput_batch_options_t) -> c_int;
    pub fn dinput_batch_options_set_num_parallel_calls(
        options: *mut dinput_batch_options_t,
        num_parallel_calls: i64,
    ) -> dinput_status_t;
    pub fn dinput_batch_options_num_parallel_calls(options: *const dinput_batch_options_t) -> i64;
    pub fn dinput_batch_options_set_deterministic(
        options: *mut dinput_batch_options_t,
        deterministic: dinput_deterministic_t,
    ) -> dinput_status_t;
    pub fn dinput_batch_options_deterministic(options: *const dinput_batch_options_t) -> dinput_deterministic_t;
    pub fn dinput_shuffle_options_new(out: *mut *mut dinput_shuffle_options_t) -> dinput_status_t;
    pub fn dinput_shuffle_options_free(options: *mut dinput_shuffle_options_t);
    pub fn dinput_shuffle_options_set_seed(
        options: *mut dinput_shuffle_options_t,
        seed: i64,
        seed2: i64,
    ) -> dinput_status_t;
    pub fn dinput_shuffle_options_seed(options: *const dinput_shuffle_options_t) -> i64;
    pub fn dinput_shuffle_options_seed2(options: *const dinput_shuffle_options_t) -> i64;
    pub fn dinput_shuffle_options_set_reshuffle_each_iteration(
        options: *mut dinput_shuffle_options_t,
        enable: c_int,
    ) -> dinput_status_t;
    pub fn dinput_shuffle_options_reshuffle_each_iteration(options: *const dinput_shuffle_options_t) -> c_int;
    pub fn dinput_list_files_options_new(out: *mut *mut dinput_list_files_options_t) -> dinput_status_t;
    pub fn dinput_list_files_options_free(options: *mut dinput_list_files_options_t);
    pub fn dinput_list_files_options_set_shuffle(
        options: *mut dinput_list_files_options_t,
        shuffle: c_int,
    ) -> dinput_status_t;
    pub fn dinput_list_files_options_shuffle(options: *const dinput_list_files_options_t) -> c_int;
    pub fn dinput_list_files_options_set_seed(
        options: *mut dinput_list_files_options_t,
        seed: i64,
        seed2: i64,
    ) -> dinput_status_t;
    pub fn dinput_list_files_options_seed(options: *const dinput_list_files_options_t) -> i64;
    pub fn dinput_list_files_options_seed2(options: *const dinput_list_files_options_t) -> i64;
    pub fn dinput_records_options_new(out: *mut *mut dinput_records_options_t) -> dinput_status_t;
    pub fn dinput_records_options_free(options: *mut dinput_records_options_t);
    pub fn dinput_records_options_set_compression(
        options: *mut dinput_records_options_t,
        compression: dinput_compression_t,
    ) -> dinput_status_t;
    pub fn dinput_records_options_compression(options: *const dinput_records_options_t) -> dinput_compression_t;
    pub fn dinput_records_options_set_buffer_size(
        options: *mut dinput_records_options_t,
        buffer_size: i64,
    ) -> dinput_status_t;
    pub fn dinput_records_options_buffer_size(options: *const dinput_records_options_t) -> i64;
    pub fn dinput_record_writer_options_new(out: *mut *mut dinput_record_writer_options_t) -> dinput_status_t;
    pub fn dinput_record_writer_options_free(options: *mut dinput_record_writer_options_t);
    pub fn dinput_record_writer_options_set_compression(
        options: *mut dinput_record_writer_options_t,
        compression: dinput_compression_t,
    ) -> dinput_status_t;
    pub fn dinput_record_writer_options_compression(
        options: *const dinput_record_writer_options_t,
    ) -> dinput_compression_t;
    pub fn dinput_record_writer_options_set_level(
        options: *mut dinput_record_writer_options_t,
        level: c_int,
    ) -> dinput_status_t;
    pub fn dinput_record_writer_options_level(options: *const dinput_record_writer_options_t) -> c_int;
    pub fn dinput_record_writer_options_set_zstd_window_log(
        options: *mut dinput_record_writer_options_t,
        window_log: c_int,
    ) -> dinput_status_t;
    pub fn dinput_record_writer_options_zstd_window_log(options: *const dinput_record_writer_options_t) -> c_int;

    // -- datasets --
    pub fn dinput_dataset_free(dataset: *mut dinput_dataset_t);
    pub fn dinput_dataset_ref(out: *mut *mut dinput_dataset_t, dataset: *const dinput_dataset_t) -> dinput_status_t;
    pub fn dinput_dataset_cardinality(dataset: *const dinput_dataset_t) -> i64;
    pub fn dinput_dataset_element_spec(
        out: *mut *mut dinput_spec_t,
        dataset: *const dinput_dataset_t,
    ) -> dinput_status_t;
    pub fn dinput_dataset_name(dataset: *const dinput_dataset_t) -> *const c_char;

    // sources
    pub fn dinput_dataset_range(out: *mut *mut dinput_dataset_t, start: i64, stop: i64, step: i64) -> dinput_status_t;
    pub fn dinput_dataset_from_tensors(
        out: *mut *mut dinput_dataset_t,
        element: *const dinput_element_t,
    ) -> dinput_status_t;
    pub fn dinput_dataset_from_tensor_slices(
        out: *mut *mut dinput_dataset_t,
        element: *const dinput_element_t,
    ) -> dinput_status_t;
    pub fn dinput_dataset_from_generator(
        out: *mut *mut dinput_dataset_t,
        spec: *const dinput_spec_t,
        init: dinput_generator_init_fn,
        next: dinput_generator_next_fn,
        finalize: dinput_generator_finalize_fn,
        user_data: *mut c_void,
        free_user_data: dinput_free_fn,
    ) -> dinput_status_t;
    pub fn dinput_dataset_from_generator_with_state(
        out: *mut *mut dinput_dataset_t,
        spec: *const dinput_spec_t,
        init: dinput_generator_init_fn,
        next: dinput_generator_next_fn,
        finalize: dinput_generator_finalize_fn,
        save: dinput_generator_save_fn,
        restore: dinput_generator_restore_fn,
        user_data: *mut c_void,
        free_user_data: dinput_free_fn,
    ) -> dinput_status_t;
    pub fn dinput_dataset_text_lines(
        out: *mut *mut dinput_dataset_t,
        files: *const *const c_char,
        num_files: usize,
    ) -> dinput_status_t;
    pub fn dinput_dataset_records(
        out: *mut *mut dinput_dataset_t,
        files: *const *const c_char,
        num_files: usize,
        options: *const dinput_records_options_t,
    ) -> dinput_status_t;
    pub fn dinput_dataset_fixed_length_records(
        out: *mut *mut dinput_dataset_t,
        files: *const *const c_char,
        num_files: usize,
        record_bytes: i64,
        header_bytes: i64,
        footer_bytes: i64,
    ) -> dinput_status_t;
    pub fn dinput_dataset_list_files(
        out: *mut *mut dinput_dataset_t,
        patterns: *const *const c_char,
        num_patterns: usize,
        options: *const dinput_list_files_options_t,
    ) -> dinput_status_t;

    // transforms
    pub fn dinput_dataset_batch(
        out: *mut *mut dinput_dataset_t,
        input: *const dinput_dataset_t,
        batch_size: i64,
        options: *const dinput_batch_options_t,
    ) -> dinput_status_t;
    pub fn dinput_dataset_unbatch(out: *mut *mut dinput_dataset_t, input: *const dinput_dataset_t) -> dinput_status_t;
    pub fn dinput_dataset_repeat(
        out: *mut *mut dinput_dataset_t,
        input: *const dinput_dataset_t,
        count: i64,
    ) -> dinput_status_t;
    pub fn dinput_dataset_take(
        out: *mut *mut dinput_dataset_t,
        input: *const dinput_dataset_t,
        count: i64,
    ) -> dinput_status_t;
    pub fn dinput_dataset_skip(
        out: *mut *mut dinput_dataset_t,
        input: *const dinput_dataset_t,
        count: i64,
    ) -> dinput_status_t;
    pub fn dinput_dataset_shard(
        out: *mut *mut dinput_dataset_t,
        input: *const dinput_dataset_t,
        num_shards: i64,
        index: i64,
    ) -> dinput_status_t;
    pub fn dinput_dataset_shuffle(
        out: *mut *mut dinput_dataset_t,
        input: *const dinput_dataset_t,
        buffer_size: i64,
        options: *const dinput_shuffle_options_t,
    ) -> dinput_status_t;
    pub fn dinput_dataset_map(
        out: *mut *mut dinput_dataset_t,
        input: *const dinput_dataset_t,
        fn_: dinput_map_fn,
        user_data: *mut c_void,
        free_user_data: dinput_free_fn,
        options: *const dinput_map_options_t,
    ) -> dinput_status_t;
    pub fn dinput_dataset_map_many(
        out: *mut *mut dinput_dataset_t,
        input: *const dinput_dataset_t,
        max_count: usize,
        fn_: dinput_map_many_fn,
        user_data: *mut c_void,
        free_user_data: dinput_free_fn,
        options: *const dinput_map_options_t,
    ) -> dinput_status_t;
    pub fn dinput_dataset_filter(
        out: *mut *mut dinput_dataset_t,
        input: *const dinput_dataset_t,
        fn_: dinput_filter_fn,
        user_data: *mut c_void,
        free_user_data: dinput_free_fn,
    ) -> dinput_status_t;
    pub fn dinput_dataset_interleave(
        out: *mut *mut dinput_dataset_t,
        input: *const dinput_dataset_t,
        fn_: dinput_interleave_fn,
        out_spec: *const dinput_spec_t,
        user_data: *mut c_void,
        free_user_data: dinput_free_fn,
        options: *const dinput_interleave_options_t,
    ) -> dinput_status_t;
    pub fn dinput_dataset_enumerate(
        out: *mut *mut dinput_dataset_t,
        input: *const dinput_dataset_t,
        start: i64,
    ) -> dinput_status_t;
    pub fn dinput_dataset_prefetch(
        out: *mut *mut dinput_dataset_t,
        input: *const dinput_dataset_t,
        buffer_size: i64,
    ) -> dinput_status_t;
    pub fn dinput_dataset_rebatch(
        out: *mut *mut dinput_dataset_t,
        input: *const dinput_dataset_t,
        sizes: *const i64,
        num_sizes: usize,
        drop_remainder: c_int,
    ) -> dinput_status_t;
    pub fn dinput_dataset_with_options(
        out: *mut *mut dinput_dataset_t,
        input: *const dinput_dataset_t,
        options: *const dinput_options_t,
    ) -> dinput_status_t;

    // -- images --
    pub fn dinput_image_options_new(out: *mut *mut dinput_image_options_t) -> dinput_status_t;
    pub fn dinput_image_options_free(options: *mut dinput_image_options_t);
    pub fn dinput_image_options_set_component(options: *mut dinput_image_options_t, component: i64) -> dinput_status_t;
    pub fn dinput_image_options_component(options: *const dinput_image_options_t) -> i64;
    pub fn dinput_image_options_set_num_parallel_calls(
        options: *mut dinput_image_options_t,
        num_parallel_calls: i64,
    ) -> dinput_status_t;
    pub fn dinput_image_options_num_parallel_calls(options: *const dinput_image_options_t) -> i64;
    pub fn dinput_image_options_set_deterministic(
        options: *mut dinput_image_options_t,
        deterministic: dinput_deterministic_t,
    ) -> dinput_status_t;
    pub fn dinput_image_options_deterministic(options: *const dinput_image_options_t) -> dinput_deterministic_t;
    pub fn dinput_dataset_decode_jpeg(
        out: *mut *mut dinput_dataset_t,
        input: *const dinput_dataset_t,
        channels: i64,
        options: *const dinput_image_options_t,
    ) -> dinput_status_t;
    pub fn dinput_dataset_decode_png(
        out: *mut *mut dinput_dataset_t,
        input: *const dinput_dataset_t,
        channels: i64,
        options: *const dinput_image_options_t,
    ) -> dinput_status_t;
    pub fn dinput_dataset_resize(
        out: *mut *mut dinput_dataset_t,
        input: *const dinput_dataset_t,
        height: i64,
        width: i64,
        options: *const dinput_image_options_t,
    ) -> dinput_status_t;
    pub fn dinput_dataset_center_crop(
        out: *mut *mut dinput_dataset_t,
        input: *const dinput_dataset_t,
        height: i64,
        width: i64,
        options: *const dinput_image_options_t,
    ) -> dinput_status_t;
    pub fn dinput_dataset_random_crop(
        out: *mut *mut dinput_dataset_t,
        input: *const dinput_dataset_t,
        height: i64,
        width: i64,
        seed: i64,
        options: *const dinput_image_options_t,
    ) -> dinput_status_t;
    pub fn dinput_dataset_random_resized_crop(
        out: *mut *mut dinput_dataset_t,
        input: *const dinput_dataset_t,
        height: i64,
        width: i64,
        scale_min: f64,
        scale_max: f64,
        ratio_min: f64,
        ratio_max: f64,
        seed: i64,
        options: *const dinput_image_options_t,
    ) -> dinput_status_t;
    pub fn dinput_dataset_random_flip_left_right(
        out: *mut *mut dinput_dataset_t,
        input: *const dinput_dataset_t,
        seed: i64,
        options: *const dinput_image_options_t,
    ) -> dinput_status_t;
    pub fn dinput_dataset_cast_image(
        out: *mut *mut dinput_dataset_t,
        input: *const dinput_dataset_t,
        dtype: dinput_dtype_t,
        options: *const dinput_image_options_t,
    ) -> dinput_status_t;
    pub fn dinput_dataset_normalize(
        out: *mut *mut dinput_dataset_t,
        input: *const dinput_dataset_t,
        mean: *const f32,
        stddev: *const f32,
        count: usize,
        dtype: dinput_dtype_t,
        options: *const dinput_image_options_t,
    ) -> dinput_status_t;

    // -- several datasets, cache and ignore_errors --
    pub fn dinput_dataset_zip(
        out: *mut *mut dinput_dataset_t,
        datasets: *const *const dinput_dataset_t,
        num_datasets: usize,
    ) -> dinput_status_t;
    pub fn dinput_dataset_concatenate(
        out: *mut *mut dinput_dataset_t,
        input: *const dinput_dataset_t,
        other: *const dinput_dataset_t,
    ) -> dinput_status_t;
    pub fn dinput_dataset_sample_from_datasets(
        out: *mut *mut dinput_dataset_t,
        datasets: *const *const dinput_dataset_t,
        num_datasets: usize,
        weights: *const f64,
        seed: i64,
        stop_on_empty_dataset: c_int,
    ) -> dinput_status_t;
    pub fn dinput_dataset_choose_from_datasets(
        out: *mut *mut dinput_dataset_t,
        datasets: *const *const dinput_dataset_t,
        num_datasets: usize,
        selector: *const dinput_dataset_t,
        stop_on_empty_dataset: c_int,
    ) -> dinput_status_t;
    pub fn dinput_dataset_cache(
        out: *mut *mut dinput_dataset_t,
        input: *const dinput_dataset_t,
        filename: *const c_char,
    ) -> dinput_status_t;
    pub fn dinput_dataset_ignore_errors(
        out: *mut *mut dinput_dataset_t,
        input: *const dinput_dataset_t,
        log_warning: c_int,
    ) -> dinput_status_t;

    // -- padded batches, buckets, windows, flat_map, and readers as values --
    pub fn dinput_padded_batch_options_new(out: *mut *mut dinput_padded_batch_options_t) -> dinput_status_t;
    pub fn dinput_padded_batch_options_free(options: *mut dinput_padded_batch_options_t);
    pub fn dinput_padded_batch_options_set_drop_remainder(
        options: *mut dinput_padded_batch_options_t,
        drop_remainder: c_int,
    ) -> dinput_status_t;
    pub fn dinput_padded_batch_options_drop_remainder(options: *const dinput_padded_batch_options_t) -> c_int;
    pub fn dinput_padded_batch_options_set_padded_shapes(
        options: *mut dinput_padded_batch_options_t,
        shapes: *const dinput_spec_t,
    ) -> dinput_status_t;
    pub fn dinput_padded_batch_options_padded_shapes(
        out: *mut *mut dinput_spec_t,
        options: *const dinput_padded_batch_options_t,
    ) -> dinput_status_t;
    pub fn dinput_padded_batch_options_set_padding_values(
        options: *mut dinput_padded_batch_options_t,
        values: *const dinput_element_t,
    ) -> dinput_status_t;
    pub fn dinput_padded_batch_options_padding_values(
        out: *mut *mut dinput_element_t,
        options: *const dinput_padded_batch_options_t,
    ) -> dinput_status_t;
    pub fn dinput_dataset_padded_batch(
        out: *mut *mut dinput_dataset_t,
        input: *const dinput_dataset_t,
        batch_size: i64,
        options: *const dinput_padded_batch_options_t,
    ) -> dinput_status_t;
    pub fn dinput_dataset_bucket_by_sequence_length(
        out: *mut *mut dinput_dataset_t,
        input: *const dinput_dataset_t,
        length_component: usize,
        boundaries: *const i64,
        num_boundaries: usize,
        batch_sizes: *const i64,
        num_batch_sizes: usize,
        pad_to_bucket_boundary: c_int,
        options: *const dinput_padded_batch_options_t,
    ) -> dinput_status_t;
    pub fn dinput_dataset_bucket_by_sequence_length_fn(
        out: *mut *mut dinput_dataset_t,
        input: *const dinput_dataset_t,
        fn_: dinput_length_fn,
        user_data: *mut c_void,
        free_user_data: dinput_free_fn,
        boundaries: *const i64,
        num_boundaries: usize,
        batch_sizes: *const i64,
        num_batch_sizes: usize,
        pad_to_bucket_boundary: c_int,
        options: *const dinput_padded_batch_options_t,
    ) -> dinput_status_t;
    pub fn dinput_dataset_window(
        out: *mut *mut dinput_dataset_t,
        input: *const dinput_dataset_t,
        size: i64,
        shift: i64,
        stride: i64,
        drop_remainder: c_int,
    ) -> dinput_status_t;
    pub fn dinput_dataset_flat_map(
        out: *mut *mut dinput_dataset_t,
        input: *const dinput_dataset_t,
        fn_: dinput_interleave_fn,
        out_spec: *const dinput_spec_t,
        user_data: *mut c_void,
        free_user_data: dinput_free_fn,
    ) -> dinput_status_t;
    pub fn dinput_reader_records(
        out: *mut *mut dinput_reader_t,
        options: *const dinput_records_options_t,
    ) -> dinput_status_t;
    pub fn dinput_reader_text_lines(out: *mut *mut dinput_reader_t) -> dinput_status_t;
    pub fn dinput_reader_fixed_length_records(
        out: *mut *mut dinput_reader_t,
        record_bytes: i64,
        header_bytes: i64,
        footer_bytes: i64,
    ) -> dinput_status_t;
    pub fn dinput_reader_free(reader: *mut dinput_reader_t);
    pub fn dinput_dataset_interleave_reader(
        out: *mut *mut dinput_dataset_t,
        input: *const dinput_dataset_t,
        reader: *const dinput_reader_t,
        options: *const dinput_interleave_options_t,
    ) -> dinput_status_t;
    pub fn dinput_dataset_flat_map_reader(
        out: *mut *mut dinput_dataset_t,
        input: *const dinput_dataset_t,
        reader: *const dinput_reader_t,
    ) -> dinput_status_t;

    // -- iterators and optionals --
    pub fn dinput_dataset_iterator(
        out: *mut *mut dinput_iterator_t,
        dataset: *const dinput_dataset_t,
    ) -> dinput_status_t;
    pub fn dinput_iterator_free(iterator: *mut dinput_iterator_t);
    pub fn dinput_iterator_cancel(iterator: *mut dinput_iterator_t) -> dinput_status_t;
    pub fn dinput_iterator_get_next(
        out: *mut *mut dinput_element_t,
        iterator: *mut dinput_iterator_t,
    ) -> dinput_status_t;
    pub fn dinput_iterator_get_next_as_optional(
        out: *mut *mut dinput_optional_t,
        iterator: *mut dinput_iterator_t,
    ) -> dinput_status_t;
    pub fn dinput_iterator_element_spec(
        out: *mut *mut dinput_spec_t,
        iterator: *const dinput_iterator_t,
    ) -> dinput_status_t;
    pub fn dinput_iterator_statistic(
        out: *mut i64,
        iterator: *const dinput_iterator_t,
        name: *const c_char,
    ) -> dinput_status_t;

    // -- checkpoints --
    pub fn dinput_iterator_save(out: *mut *mut dinput_state_t, iterator: *mut dinput_iterator_t) -> dinput_status_t;
    pub fn dinput_state_data(state: *const dinput_state_t) -> *const c_void;
    pub fn dinput_state_size(state: *const dinput_state_t) -> usize;
    pub fn dinput_state_free(state: *mut dinput_state_t);
    pub fn dinput_dataset_iterator_from_state(
        out: *mut *mut dinput_iterator_t,
        dataset: *const dinput_dataset_t,
        state: *const c_void,
        size: usize,
    ) -> dinput_status_t;
    pub fn dinput_dist_iterator_save(
        out: *mut *mut dinput_state_t,
        iterator: *mut dinput_dist_iterator_t,
    ) -> dinput_status_t;
    pub fn dinput_dist_dataset_iterator_from_state(
        out: *mut *mut dinput_dist_iterator_t,
        dataset: *const dinput_dist_dataset_t,
        state: *const c_void,
        size: usize,
    ) -> dinput_status_t;
    pub fn dinput_state_describe(out: *mut *mut dinput_state_t, state: *const c_void, size: usize) -> dinput_status_t;
    pub fn dinput_optional_free(optional: *mut dinput_optional_t);
    pub fn dinput_optional_has_value(optional: *const dinput_optional_t) -> c_int;
    pub fn dinput_optional_get_value(
        out: *mut *mut dinput_element_t,
        optional: *const dinput_optional_t,
    ) -> dinput_status_t;

    // -- record files: writing --
    pub fn dinput_record_writer_open(
        out: *mut *mut dinput_record_writer_t,
        path: *const c_char,
        options: *const dinput_record_writer_options_t,
    ) -> dinput_status_t;
    pub fn dinput_record_writer_write(
        writer: *mut dinput_record_writer_t,
        data: *const c_void,
        size: usize,
    ) -> dinput_status_t;
    pub fn dinput_record_writer_flush(writer: *mut dinput_record_writer_t) -> dinput_status_t;
    pub fn dinput_record_writer_close(writer: *mut dinput_record_writer_t) -> dinput_status_t;
    pub fn dinput_record_writer_discard(writer: *mut dinput_record_writer_t) -> dinput_status_t;
    pub fn dinput_record_writer_free(writer: *mut dinput_record_writer_t);

    // -- clusters --
    pub fn dinput_cluster_resolve(out: *mut *mut dinput_cluster_t, source: *const c_char) -> dinput_status_t;
    pub fn dinput_cluster_new(
        out: *mut *mut dinput_cluster_t,
        rank: c_int,
        world_size: c_int,
        rdzv_url: *const c_char,
    ) -> dinput_status_t;
    pub fn dinput_cluster_free(cluster: *mut dinput_cluster_t);
    pub fn dinput_cluster_rank(cluster: *const dinput_cluster_t) -> c_int;
    pub fn dinput_cluster_world_size(cluster: *const dinput_cluster_t) -> c_int;
    pub fn dinput_cluster_local_rank(cluster: *const dinput_cluster_t) -> c_int;
    pub fn dinput_cluster_local_world_size(cluster: *const dinput_cluster_t) -> c_int;
    pub fn dinput_cluster_rdzv_url(cluster: *const dinput_cluster_t) -> *const c_char;
    pub fn dinput_cluster_coordinator_host(cluster: *const dinput_cluster_t) -> *const c_char;
    pub fn dinput_cluster_job_id(cluster: *const dinput_cluster_t) -> *const c_char;
    pub fn dinput_cluster_source(cluster: *const dinput_cluster_t) -> *const c_char;
    pub fn dinput_cluster_task_type(cluster: *const dinput_cluster_t) -> *const c_char;
    pub fn dinput_cluster_task_index(cluster: *const dinput_cluster_t) -> c_int;
    pub fn dinput_cluster_is_input_worker(cluster: *const dinput_cluster_t) -> c_int;

    // -- strategies and distribution --
    pub fn dinput_collective_new_in_process(
        out: *mut *mut dinput_collective_t,
        num_workers: c_int,
        timeout_ms: i64,
    ) -> dinput_status_t;
    pub fn dinput_collective_options_new(out: *mut *mut dinput_collective_options_t) -> dinput_status_t;
    pub fn dinput_collective_options_free(options: *mut dinput_collective_options_t);
    pub fn dinput_collective_options_set_timeout_ms(
        options: *mut dinput_collective_options_t,
        timeout_ms: i64,
    ) -> dinput_status_t;
    pub fn dinput_collective_options_timeout_ms(options: *const dinput_collective_options_t) -> i64;
    pub fn dinput_collective_options_set_job_id(
        options: *mut dinput_collective_options_t,
        job_id: *const c_char,
    ) -> dinput_status_t;
    pub fn dinput_collective_options_job_id(options: *const dinput_collective_options_t) -> *const c_char;
    pub fn dinput_collective_options_set_interface(
        options: *mut dinput_collective_options_t,
        name: *const c_char,
    ) -> dinput_status_t;
    pub fn dinput_collective_options_interface(options: *const dinput_collective_options_t) -> *const c_char;
    pub fn dinput_collective_options_set_address(
        options: *mut dinput_collective_options_t,
        address: *const c_char,
    ) -> dinput_status_t;
    pub fn dinput_collective_options_address(options: *const dinput_collective_options_t) -> *const c_char;
    pub fn dinput_collective_options_set_allow_loopback(
        options: *mut dinput_collective_options_t,
        allow: c_int,
    ) -> dinput_status_t;
    pub fn dinput_collective_options_allow_loopback(options: *const dinput_collective_options_t) -> c_int;
    pub fn dinput_collective_new_from_cluster(
        out: *mut *mut dinput_collective_t,
        cluster: *const dinput_cluster_t,
        options: *const dinput_collective_options_t,
    ) -> dinput_status_t;
    pub fn dinput_collective_free(collective: *mut dinput_collective_t);
    pub fn dinput_collective_abort(
        collective: *mut dinput_collective_t,
        code: dinput_status_t,
        message: *const c_char,
    ) -> dinput_status_t;
    pub fn dinput_collective_num_workers(collective: *const dinput_collective_t) -> c_int;

    pub fn dinput_strategy_new(
        out: *mut *mut dinput_strategy_t,
        devices: *const *const c_char,
        num_devices: c_int,
    ) -> dinput_status_t;
    pub fn dinput_strategy_new_multi_worker(
        out: *mut *mut dinput_strategy_t,
        collective: *mut dinput_collective_t,
        worker_index: c_int,
        devices: *const *const c_char,
        num_devices: c_int,
    ) -> dinput_status_t;
    pub fn dinput_strategy_new_multi_worker_cpu(
        out: *mut *mut dinput_strategy_t,
        collective: *mut dinput_collective_t,
        worker_index: c_int,
        num_replicas_in_sync: c_int,
    ) -> dinput_status_t;
    pub fn dinput_strategy_free(strategy: *mut dinput_strategy_t);
    pub fn dinput_strategy_num_replicas_in_sync(strategy: *const dinput_strategy_t) -> c_int;
    pub fn dinput_strategy_num_local_replicas(strategy: *const dinput_strategy_t) -> c_int;
    pub fn dinput_strategy_num_workers(strategy: *const dinput_strategy_t) -> c_int;
    pub fn dinput_strategy_worker_index(strategy: *const dinput_strategy_t) -> c_int;
    pub fn dinput_strategy_device(strategy: *const dinput_strategy_t, i: c_int) -> *const c_char;

    pub fn dinput_input_options_new(out: *mut *mut dinput_input_options_t) -> dinput_status_t;
    pub fn dinput_input_options_free(options: *mut dinput_input_options_t);
    pub fn dinput_input_options_set_fetch_to_device(o: *mut dinput_input_options_t, enable: c_int) -> dinput_status_t;
    pub fn dinput_input_options_set_replication_mode(
        o: *mut dinput_input_options_t,
        mode: dinput_replication_mode_t,
    ) -> dinput_status_t;
    pub fn dinput_input_options_set_place_dataset_on_device(
        o: *mut dinput_input_options_t,
        enable: c_int,
    ) -> dinput_status_t;
    pub fn dinput_input_options_set_per_replica_buffer_size(
        o: *mut dinput_input_options_t,
        size: i64,
    ) -> dinput_status_t;
    pub fn dinput_input_options_fetch_to_device(o: *const dinput_input_options_t) -> c_int;
    pub fn dinput_input_options_replication_mode(o: *const dinput_input_options_t) -> dinput_replication_mode_t;
    pub fn dinput_input_options_place_dataset_on_device(o: *const dinput_input_options_t) -> c_int;
    pub fn dinput_input_options_per_replica_buffer_size(o: *const dinput_input_options_t) -> i64;

    pub fn dinput_strategy_distribute_dataset(
        out: *mut *mut dinput_dist_dataset_t,
        strategy: *const dinput_strategy_t,
        dataset: *const dinput_dataset_t,
        options: *const dinput_input_options_t,
    ) -> dinput_status_t;
    pub fn dinput_strategy_distribute_datasets_from_function(
        out: *mut *mut dinput_dist_dataset_t,
        strategy: *const dinput_strategy_t,
        fn_: dinput_dataset_fn,
        user_data: *mut c_void,
        free_user_data: dinput_free_fn,
        options: *const dinput_input_options_t,
    ) -> dinput_status_t;

    pub fn dinput_input_context_num_input_pipelines(c: *const dinput_input_context_t) -> c_int;
    pub fn dinput_input_context_input_pipeline_id(c: *const dinput_input_context_t) -> c_int;
    pub fn dinput_input_context_num_replicas_in_sync(c: *const dinput_input_context_t) -> c_int;
    pub fn dinput_input_context_get_per_replica_batch_size(
        out: *mut i64,
        c: *const dinput_input_context_t,
        global_batch_size: i64,
    ) -> dinput_status_t;

    pub fn dinput_dist_dataset_free(dataset: *mut dinput_dist_dataset_t);
    pub fn dinput_dist_dataset_plan(dataset: *const dinput_dist_dataset_t) -> *const c_char;
    pub fn dinput_dist_dataset_element_spec(
        out: *mut *mut dinput_spec_t,
        dataset: *const dinput_dist_dataset_t,
    ) -> dinput_status_t;
    pub fn dinput_dist_dataset_iterator(
        out: *mut *mut dinput_dist_iterator_t,
        dataset: *const dinput_dist_dataset_t,
    ) -> dinput_status_t;
    pub fn dinput_dist_iterator_free(iterator: *mut dinput_dist_iterator_t);
    pub fn dinput_dist_iterator_cancel(iterator: *mut dinput_dist_iterator_t) -> dinput_status_t;
    pub fn dinput_dist_iterator_get_next(
        out: *mut *mut dinput_per_replica_t,
        iterator: *mut dinput_dist_iterator_t,
    ) -> dinput_status_t;
    pub fn dinput_dist_iterator_get_next_as_optional(
        out: *mut *mut dinput_optional_t,
        iterator: *mut dinput_dist_iterator_t,
    ) -> dinput_status_t;
    pub fn dinput_dist_iterator_get_next_steps(
        num_steps: *mut usize,
        steps: *mut *mut dinput_per_replica_t,
        infos: *mut dinput_tensor_info_t,
        max_steps: usize,
        infos_per_step: usize,
        iterator: *mut dinput_dist_iterator_t,
    ) -> dinput_status_t;
    pub fn dinput_dist_iterator_copy_steps(
        num_steps: *mut usize,
        unfit: *mut *mut dinput_per_replica_t,
        buffer: *mut c_void,
        buffer_size: usize,
        dtype: dinput_dtype_t,
        shape: *const i64,
        rank: c_int,
        max_steps: usize,
        iterator: *mut dinput_dist_iterator_t,
    ) -> dinput_status_t;
    pub fn dinput_dist_iterator_element_spec(
        out: *mut *mut dinput_spec_t,
        iterator: *const dinput_dist_iterator_t,
    ) -> dinput_status_t;
    pub fn dinput_dist_iterator_statistic(
        out: *mut i64,
        iterator: *const dinput_dist_iterator_t,
        name: *const c_char,
    ) -> dinput_status_t;

    // -- per-stage statistics and traces --
    pub fn dinput_string_free(string: *mut c_char);
    pub fn dinput_options_set_statistics(options: *mut dinput_options_t, enable: c_int) -> dinput_status_t;
    pub fn dinput_options_set_trace(options: *mut dinput_options_t, max_events: i64) -> dinput_status_t;
    pub fn dinput_iterator_statistics(out: *mut *mut c_char, iterator: *const dinput_iterator_t) -> dinput_status_t;
    pub fn dinput_iterator_trace(out: *mut *mut c_char, iterator: *const dinput_iterator_t) -> dinput_status_t;
    pub fn dinput_dist_iterator_statistics(
        out: *mut *mut c_char,
        iterator: *mut dinput_dist_iterator_t,
        all_workers: c_int,
    ) -> dinput_status_t;
    pub fn dinput_dist_iterator_trace(
        out: *mut *mut c_char,
        iterator: *const dinput_dist_iterator_t,
    ) -> dinput_status_t;

    // -- autotuning --
    pub fn dinput_options_set_ram_budget(options: *mut dinput_options_t, bytes: i64) -> dinput_status_t;

    pub fn dinput_optional_get_per_replica(
        out: *mut *mut dinput_per_replica_t,
        optional: *const dinput_optional_t,
    ) -> dinput_status_t;

    pub fn dinput_per_replica_free(value: *mut dinput_per_replica_t);
    pub fn dinput_per_replica_ref(
        out: *mut *mut dinput_per_replica_t,
        value: *const dinput_per_replica_t,
    ) -> dinput_status_t;
    pub fn dinput_per_replica_size(value: *const dinput_per_replica_t) -> c_int;
    pub fn dinput_per_replica_get(value: *const dinput_per_replica_t, i: c_int) -> *const dinput_element_t;
    pub fn dinput_per_replica_tensor_infos(
        count: *mut usize,
        infos: *mut dinput_tensor_info_t,
        capacity: usize,
        value: *const dinput_per_replica_t,
    ) -> dinput_status_t;
    pub fn dinput_per_replica_new(
        out: *mut *mut dinput_per_replica_t,
        elements: *const *const dinput_element_t,
        count: c_int,
    ) -> dinput_status_t;

    pub fn dinput_strategy_distribute_values_from_function(
        out: *mut *mut dinput_per_replica_t,
        strategy: *const dinput_strategy_t,
        fn_: dinput_value_fn,
        user_data: *mut c_void,
    ) -> dinput_status_t;
    pub fn dinput_value_context_replica_id_in_sync_group(c: *const dinput_value_context_t) -> c_int;
    pub fn dinput_value_context_num_replicas_in_sync(c: *const dinput_value_context_t) -> c_int;

    pub fn dinput_strategy_run(
        out: *mut *mut dinput_per_replica_t,
        strategy: *const dinput_strategy_t,
        fn_: dinput_replica_fn,
        args: *const dinput_per_replica_t,
        user_data: *mut c_void,
    ) -> dinput_status_t;
    pub fn dinput_replica_context_replica_id_in_sync_group(c: *const dinput_replica_context_t) -> c_int;
    pub fn dinput_replica_context_num_replicas_in_sync(c: *const dinput_replica_context_t) -> c_int;
    pub fn dinput_replica_context_device(c: *const dinput_replica_context_t) -> *const c_char;

    pub fn dinput_strategy_reduce(
        out: *mut *mut dinput_element_t,
        strategy: *const dinput_strategy_t,
        op: dinput_reduce_op_t,
        value: *const dinput_per_replica_t,
        axis: c_int,
    ) -> dinput_status_t;
}

// ---------------------------------------------------------------------------------------
// tf.train.Example parsing
// ---------------------------------------------------------------------------------------

extern "C" {
    pub fn dinput_feature_spec_new(out: *mut *mut dinput_feature_spec_t) -> dinput_status_t;
    pub fn dinput_feature_spec_free(spec: *mut dinput_feature_spec_t);
    pub fn dinput_feature_spec_add_fixed_len(
        spec: *mut dinput_feature_spec_t,
        key: *const c_char,
        dtype: dinput_dtype_t,
        shape: *const i64,
        rank: c_int,
        default_value: *const dinput_tensor_t,
    ) -> dinput_status_t;
    pub fn dinput_feature_spec_add_var_len(
        spec: *mut dinput_feature_spec_t,
        key: *const c_char,
        dtype: dinput_dtype_t,
    ) -> dinput_status_t;
    pub fn dinput_feature_spec_add_fixed_len_sequence(
        spec: *mut dinput_feature_spec_t,
        key: *const c_char,
        dtype: dinput_dtype_t,
        shape: *const i64,
        rank: c_int,
        allow_missing: c_int,
        default_value: *const dinput_tensor_t,
    ) -> dinput_status_t;
    pub fn dinput_dataset_parse_example(
        out: *mut *mut dinput_dataset_t,
        input: *const dinput_dataset_t,
        features: *const dinput_feature_spec_t,
        component: i64,
    ) -> dinput_status_t;
    pub fn dinput_dataset_parse_single_example(
        out: *mut *mut dinput_dataset_t,
        input: *const dinput_dataset_t,
        features: *const dinput_feature_spec_t,
        component: i64,
    ) -> dinput_status_t;
    pub fn dinput_dataset_parse_sequence_example(
        out: *mut *mut dinput_dataset_t,
        input: *const dinput_dataset_t,
        context_features: *const dinput_feature_spec_t,
        sequence_features: *const dinput_feature_spec_t,
        component: i64,
    ) -> dinput_status_t;
}

// ---------------------------------------------------------------------------------------
// Functions of dinput_cuda.h, in its order
// ---------------------------------------------------------------------------------------

// dinput_cuda.h declares these with CUDA's handle types, cudaStream_t and cudaEvent_t. Both
// are pointers to opaque driver structs (`struct CUstream_st *`, `struct CUevent_st *`, the
// same handles as the driver API's CUstream and CUevent), so they are `*mut c_void` here and
// this crate needs no CUDA toolkit. A stream of 0 (NULL) is the legacy default stream;
// cudaStreamLegacy (1 as a pointer) and cudaStreamPerThread (2) are accepted too. Every
// build of libdinput exports these functions, with or without CUDA support.
extern "C" {
    pub fn dinput_tensor_cuda_wait(tensor: *const dinput_tensor_t, stream: *mut c_void) -> dinput_status_t;
    pub fn dinput_element_cuda_wait(element: *const dinput_element_t, stream: *mut c_void) -> dinput_status_t;
    pub fn dinput_tensor_cuda_record_stream(tensor: *const dinput_tensor_t, stream: *mut c_void) -> dinput_status_t;
    pub fn dinput_tensor_cuda_ready_event(tensor: *const dinput_tensor_t) -> *mut c_void;
}
