//! Safe Rust binding of dinput: distributed input pipelines for ML training with
//! TensorFlow `tf.data` / `tf.distribute` semantics, over dinput's C ABI (`dinput.h`,
//! declared in the `dinput-sys` crate).
//!
//! ```no_run
//! use dinput::{Dataset, Strategy};
//!
//! # fn main() -> dinput::Result<()> {
//! let strategy = Strategy::new(&["CPU:0", "CPU:1"])?;
//! let dataset = Dataset::range(0, 9, 1)?.batch(4, false)?;   // global batch size 4
//! let dist = strategy.distribute_dataset(&dataset, None)?;
//! let mut it = dist.iter()?;
//! loop {
//!     let Some(step) = it.get_next_as_optional()?.into_per_replica()? else { break };
//!     let parts: Vec<Vec<i64>> =
//!         step.iter().map(|e| e.tensor(0)?.to_vec_i64()).collect::<dinput::Result<_>>()?;
//!     println!("{parts:?}");                 // [[0, 1], [2, 3]]  [[4, 5], [6, 7]]  [[8], []]
//! }
//! # Ok(())
//! # }
//! ```
//!
//! # Objects and ownership
//!
//! Every handle of the C API is a Rust value that frees it on `Drop`: [`Tensor`],
//! [`Element`], [`Spec`], [`Options`], [`Dataset`], [`DatasetIterator`], [`Optional`],
//! [`Collective`], [`Strategy`], [`InputOptions`], [`DistDataset`], [`DistIterator`],
//! [`PerReplica`], [`RecordWriter`]. The library keeps what an object was made from alive
//! (an iterator its dataset, a dataset its inputs), so values may be dropped in any order.
//! Pointers the C API lends are borrows here: [`TensorRef`] and [`ElementRef`] (which
//! dereference to [`Tensor`] and [`Element`]), `&[i64]` shapes, `&[T]` data, `&str` names.
//!
//! # Errors
//!
//! Every fallible call returns [`Result`]; an [`Error`] has a [`Code`] (TensorFlow's
//! canonical codes) and the library's message. The C library keeps the message of the last
//! failure per thread; the wrappers read it immediately after the failing call, on the same
//! thread, so it is never lost or mixed up between threads. The end of data is
//! [`Code::OutOfRange`]; the `std::iter::Iterator` impls turn it into the end of iteration.
//! Only the end of data is: a closure (other than a generator's) returning an `OutOfRange`
//! error fails the iteration with `InvalidArgument` naming the callback.
//!
//! # Threads
//!
//! dinput.h: "Immutable objects (tensors, elements, specs, datasets, options, strategies,
//! distributed datasets, per-replica values, optionals) may be shared and read from several
//! threads at once"; iterators have one consumer at a time. So:
//!
//! - `Send + Sync`: [`Tensor`], [`Element`], [`Spec`], [`Options`], [`Dataset`],
//!   [`Optional`], [`Strategy`], [`InputOptions`], [`DistDataset`], [`PerReplica`], and
//!   [`Collective`] (shared by its workers' threads by design). Setters take `&mut self`.
//! - `Send` only: [`DatasetIterator`], [`DistIterator`] (consuming calls take `&mut self`) and
//!   [`RecordWriter`].
//! - Contexts passed to callbacks ([`InputContext`], [`ValueContext`], [`ReplicaContext`])
//!   are borrowed for the call and cannot escape it.
//!
//! # CUDA tensors
//!
//! Tensors delivered to GPU replicas live in device memory, filled by an asynchronous copy:
//! order your stream after it with [`Tensor::cuda_wait`] before reading them on the GPU. The
//! [`cuda`] module explains the rules and bounds dinput's device memory cache.
//!
//! # Closures
//!
//! Callbacks are Rust closures. Which bounds each needs follows from where the library runs
//! it:
//!
//! | API | closure | why |
//! |---|---|---|
//! | [`Dataset::map`], [`Dataset::filter`], [`Dataset::interleave`] | `Fn + Send + Sync + 'static` | kept by the dataset; run on library threads, concurrently (parallel calls, or two iterators at once); freed on whatever thread drops the last reference |
//! | [`Dataset::from_generator`] | factory `Fn + Send + Sync + 'static`, returning an iterator that is `Send + 'static` | one Rust iterator per dataset iterator, advanced by one thread at a time |
//! | [`Strategy::distribute_datasets_from_function`] | `FnMut`, may borrow | called during the call, on the calling thread (dinput.h) |
//! | [`Strategy::distribute_values_from_function`] | `FnMut + Send`, may borrow | called during the call, once per replica in order; kept behind a `Mutex` since the thread is not specified |
//! | [`Strategy::run`] | `Fn + Sync`, may borrow | called concurrently, once per local replica, during the call |
//!
//! A closure reports failure by returning `Err(Error::new(code, message))`: `get_next` (or
//! the call) then fails with that code and message. A closure that **panics** is caught at
//! the boundary with `catch_unwind`: the panic never unwinds into the library (which would
//! abort the process); the pipeline fails with [`Code::Unknown`] and a message containing
//! the panic message, and the process goes on. (A program built with `panic = "abort"`
//! aborts at the panic, as it would anywhere else.)

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_debug_implementations)]

mod callback;
mod cluster;
mod combine;
pub mod cuda;
mod dataset;
mod distribute;
mod element;
mod error;
mod example;
mod image;
mod iter;
mod tensor;

pub use cluster::{Cluster, CollectiveOptions};
pub use dataset::{
    AutoShardPolicy, BatchOptions, Cardinality, Compression, Dataset, InterleaveOptions, MapOptions, Options,
    PaddedBatchOptions, Reader, RecordWriter, RecordWriterOptions, ShuffleOptions, AUTOTUNE,
};
pub use distribute::{
    Collective, DistDataset, InputContext, InputOptions, PerReplica, ReduceOp, ReplicaContext, ReplicationMode,
    Strategy, ValueContext,
};
pub use element::{Element, ElementRef, Spec, UNKNOWN_DIM};
pub use error::{clear_last_error, last_error, Code, Error, Result};
pub use example::Features;
pub use image::ImageOptions;
pub use iter::{Canceller, DatasetIterator, DistIterator, Optional};
pub use tensor::{DType, Device, DlPackTensor, Scalar, Tensor, TensorRef};

/// The raw declarations, for what the safe layer does not cover.
pub use dinput_sys as sys;

/// What a saved state (of a [`DatasetIterator`] or a [`DistIterator`]) holds, as JSON: its
/// kind, the pipeline's operations, the random seeds, and for a distributed iterator the job's
/// shape, step and each worker's pipelines. A damaged state is [`Code::DataLoss`].
pub fn describe_state(state: &[u8]) -> Result<String> {
    // SAFETY: state is read during the call only; out is a valid out-parameter.
    let json = error::out_handle(|out| unsafe { sys::dinput_state_describe(out, state.as_ptr().cast(), state.len()) })?;
    // SAFETY: a new state handle we own.
    Ok(String::from_utf8_lossy(&unsafe { iter::take_state_bytes(json) }).into_owned())
}

/// The run-time version of the library, "MAJOR.MINOR.PATCH".
pub fn version() -> &'static str {
    // SAFETY: returns a static string.
    unsafe { error::static_str(sys::dinput_version()) }
}

/// The run-time version number (MAJOR*10000 + MINOR*100 + PATCH).
pub fn version_number() -> i32 {
    // SAFETY: no preconditions.
    unsafe { sys::dinput_version_number() }
}

/// JSON describing the build: version, compiler, and which optional components (cuda, nccl,
/// gloo, zstd, zlib) were compiled in and are usable.
pub fn build_info() -> &'static str {
    // SAFETY: returns a static string.
    unsafe { error::static_str(sys::dinput_build_info()) }
}
