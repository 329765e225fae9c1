//! CUDA tensors: ordering GPU work after the copies that fill them, and the device memory
//! cache behind them (`dinput_cuda.h` and the "GPU memory" section of `dinput.h`).
//!
//! A distributed iterator whose replicas are GPUs delivers [`Tensor`](crate::Tensor)s in
//! device memory ([`Device::Cuda`](crate::Device::Cuda)), filled by an asynchronous copy on
//! a copy stream of dinput's. Before a kernel on your stream reads one, order the stream
//! after that copy with [`Tensor::cuda_wait`](crate::Tensor::cuda_wait) or
//! [`Element::cuda_wait`](crate::Element::cuda_wait); neither blocks the host. The wait also
//! records your stream as a reader of the tensor: once the last handle is dropped, the
//! tensor's memory goes back to dinput's cache, but it is handed to a later copy only after
//! the work queued on every recorded stream by then has run. So a tensor may be dropped as
//! soon as the kernels that read it are queued. A stream that reads the tensor without that
//! wait (it waited on [`Tensor::cuda_ready_event`](crate::Tensor::cuda_ready_event) itself,
//! or it is a second stream of yours) must be recorded with
//! [`Tensor::cuda_record_stream`](crate::Tensor::cuda_record_stream).
//!
//! Streams come from your CUDA library as raw handles and are passed as [`Stream`]. For host
//! tensors every call here is a no-op, and in a build of dinput without CUDA they all
//! succeed; this crate needs no CUDA toolkit.

use std::ffi::c_void;

use dinput_sys as sys;

use crate::error::{check, Result};

/// A CUDA stream handle (`cudaStream_t`, or the driver API's `CUstream`, which is the same
/// handle), passed to dinput as an opaque pointer.
///
/// dinput keeps a stream it is given and records an event on it when the last handle to the
/// tensor is dropped, possibly much later. So a `Stream` is made with the `unsafe`
/// [`Stream::from_raw`], whose caller promises that the stream stays valid that long; the
/// three special handles, which are always valid, are constants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Stream(*mut c_void);

// SAFETY: a stream handle is a value that CUDA accepts from any host thread; dinput only
// passes it to CUDA.
unsafe impl Send for Stream {}
// SAFETY: as above; a Stream is never dereferenced.
unsafe impl Sync for Stream {}

impl Stream {
    /// Handle 0: the legacy default stream of the tensor's GPU.
    pub const DEFAULT: Stream = Stream(std::ptr::null_mut());
    /// `cudaStreamLegacy`: the legacy default stream, whatever the thread's default is.
    pub const LEGACY: Stream = Stream(1 as *mut c_void);
    /// `cudaStreamPerThread`: the calling thread's per-thread default stream.
    pub const PER_THREAD: Stream = Stream(2 as *mut c_void);

    /// Wraps a raw stream handle of your CUDA library: a `cudaStream_t` of the runtime API,
    /// or a `CUstream` of the driver API (cudarc's streams hand theirs out), cast to
    /// `*mut c_void`.
    ///
    /// # Safety
    /// `stream` must be a stream of the CUDA context of the tensors it is used with (or one
    /// of the special handles 0, 1, 2), and it must not be destroyed until the last handle
    /// to every tensor it is passed to (through [`Tensor::cuda_wait`](crate::Tensor::cuda_wait),
    /// [`Element::cuda_wait`](crate::Element::cuda_wait) or
    /// [`Tensor::cuda_record_stream`](crate::Tensor::cuda_record_stream)) has been dropped,
    /// clones, elements and DLPack exports included: dinput records an event on it then.
    pub const unsafe fn from_raw(stream: *mut c_void) -> Stream {
        Stream(stream)
    }

    /// The raw handle.
    pub fn as_raw(self) -> *mut c_void {
        self.0
    }
}

/// Releases every cached block on every GPU, and the cached pinned host blocks, back to
/// CUDA; blocks that live tensors hold are kept. Blocks whose readers may still run on the
/// GPU are released after that work, so this may wait for the GPU. Call it before handing
/// the memory to another framework's allocator (PyTorch, JAX) in the same process. The cache
/// of a GPU is also emptied when the last distributed iterator feeding it is dropped.
pub fn empty_cache() -> Result<()> {
    // SAFETY: no preconditions.
    check(unsafe { sys::dinput_cuda_empty_cache() })
}

/// Sets how many bytes of free blocks the cache of each GPU may keep (default 1 GiB, or
/// `DINPUT_CUDA_CACHE_MB` from the environment); blocks freed beyond it go back to CUDA. 0
/// disables caching. Process-wide; takes effect at once.
pub fn set_cache_limit(bytes: usize) -> Result<()> {
    // SAFETY: no preconditions.
    check(unsafe { sys::dinput_cuda_set_cache_limit(bytes) })
}

/// The per-GPU cache limit in effect, in bytes (see [`set_cache_limit`]).
pub fn cache_limit() -> Result<usize> {
    let mut bytes = 0usize;
    // SAFETY: bytes is a valid out-parameter.
    check(unsafe { sys::dinput_cuda_cache_limit(&mut bytes) })?;
    Ok(bytes)
}

/// Device memory dinput holds on GPU `device`, as `(held, cached)`: `held` is every byte
/// allocated from CUDA and not yet returned (blocks of live tensors and cached ones),
/// `cached` the part that is free for reuse. A GPU dinput never used, or a build without
/// CUDA, gives `(0, 0)`.
pub fn pool_bytes(device: usize) -> Result<(usize, usize)> {
    let device = crate::error::to_c_int(device, "device")?;
    let (mut held, mut cached) = (0usize, 0usize);
    // SAFETY: both out-parameters are valid.
    check(unsafe { sys::dinput_cuda_pool_bytes(&mut held, &mut cached, device) })?;
    Ok((held, cached))
}
