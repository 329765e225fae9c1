//! Data types, tensors and their DLPack export.

use std::ffi::{c_char, c_int, c_void};
use std::fmt;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::ptr::NonNull;

use dinput_sys as sys;

use crate::cuda::Stream;
use crate::error::{c_string, check, out_handle, static_str, to_usize, Code, Error, Result};

/// Element data types. `Bytes`: each scalar is a byte string. `Invalid` stands for
/// `DINPUT_DTYPE_INVALID` and for values this binding does not know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[repr(i32)]
pub enum DType {
    Invalid = sys::DINPUT_DTYPE_INVALID,
    Bool = sys::DINPUT_BOOL,
    Int8 = sys::DINPUT_INT8,
    Int16 = sys::DINPUT_INT16,
    Int32 = sys::DINPUT_INT32,
    Int64 = sys::DINPUT_INT64,
    UInt8 = sys::DINPUT_UINT8,
    UInt16 = sys::DINPUT_UINT16,
    UInt32 = sys::DINPUT_UINT32,
    UInt64 = sys::DINPUT_UINT64,
    Float16 = sys::DINPUT_FLOAT16,
    BFloat16 = sys::DINPUT_BFLOAT16,
    Float32 = sys::DINPUT_FLOAT32,
    Float64 = sys::DINPUT_FLOAT64,
    Bytes = sys::DINPUT_BYTES,
}

impl DType {
    pub fn from_raw(raw: sys::dinput_dtype_t) -> DType {
        match raw {
            sys::DINPUT_BOOL => DType::Bool,
            sys::DINPUT_INT8 => DType::Int8,
            sys::DINPUT_INT16 => DType::Int16,
            sys::DINPUT_INT32 => DType::Int32,
            sys::DINPUT_INT64 => DType::Int64,
            sys::DINPUT_UINT8 => DType::UInt8,
            sys::DINPUT_UINT16 => DType::UInt16,
            sys::DINPUT_UINT32 => DType::UInt32,
            sys::DINPUT_UINT64 => DType::UInt64,
            sys::DINPUT_FLOAT16 => DType::Float16,
            sys::DINPUT_BFLOAT16 => DType::BFloat16,
            sys::DINPUT_FLOAT32 => DType::Float32,
            sys::DINPUT_FLOAT64 => DType::Float64,
            sys::DINPUT_BYTES => DType::Bytes,
            _ => DType::Invalid,
        }
    }

    pub fn raw(self) -> sys::dinput_dtype_t {
        self as sys::dinput_dtype_t
    }

    /// The library's name: "int64", "float32", "bytes", ... ("invalid" for `Invalid`).
    pub fn name(self) -> &'static str {
        // SAFETY: accepts any value; returns a static string.
        unsafe { static_str(sys::dinput_dtype_name(self.raw())) }
    }

    /// Size of one scalar in bytes; 0 for `Bytes` and `Invalid`.
    pub fn size(self) -> usize {
        // SAFETY: accepts any value.
        unsafe { sys::dinput_dtype_size(self.raw()) }
    }

    /// Parses a name as printed by [`DType::name`]; `Invalid` when unknown.
    pub fn from_name(name: &str) -> DType {
        match c_string(name, "dtype name") {
            // SAFETY: name is NUL-terminated and lives for the call.
            Ok(c) => DType::from_raw(unsafe { sys::dinput_dtype_from_name(c.as_ptr()) }),
            Err(_) => DType::Invalid,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a tensor's data lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Device {
    /// Host memory.
    Cpu,
    /// Page-locked host memory: readable from the host like `Cpu`.
    CudaHost,
    /// Memory of the CUDA device with this ordinal: not readable from the host.
    Cuda(usize),
}

mod sealed {
    pub trait Sealed {}
}

/// Rust types whose values are laid out exactly like a fixed-size dtype, so that tensor data
/// can be borrowed as `&[T]`. `bool` is not one: the library does not promise that a bool
/// tensor holds only 0 and 1 (use [`Tensor::to_vec_bool`]); neither are float16/bfloat16,
/// which have no standard Rust type (use [`Tensor::as_bytes`]).
pub trait Scalar: Copy + Default + sealed::Sealed + Send + Sync + 'static {
    const DTYPE: DType;
}

macro_rules! scalars {
    ($($t:ty => $d:ident),*) => {$(
        impl sealed::Sealed for $t {}
        impl Scalar for $t { const DTYPE: DType = DType::$d; }
    )*};
}
scalars!(i8 => Int8, i16 => Int16, i32 => Int32, i64 => Int64, u8 => UInt8, u16 => UInt16, u32 => UInt32,
         u64 => UInt64, f32 => Float32, f64 => Float64);

fn rank_of(shape: &[i64]) -> Result<c_int> {
    c_int::try_from(shape.len()).map_err(|_| Error::invalid_argument(format!("rank {} is too large", shape.len())))
}

fn shape_ptr(shape: &[i64]) -> *const i64 {
    if shape.is_empty() {
        std::ptr::null()
    } else {
        shape.as_ptr()
    }
}

/// An immutable dense tensor (dtype, shape, data in host memory), owning one handle.
///
/// Tensors are immutable, so they are `Send + Sync`. Cloning makes a new handle to the same
/// data (no copy).
pub struct Tensor {
    raw: NonNull<sys::dinput_tensor_t>,
}

// SAFETY: dinput.h: tensors are immutable and may be shared and read from several threads at
// once; freeing a handle from another thread than the one that made it is allowed (handles
// are reference counted by the library).
unsafe impl Send for Tensor {}
// SAFETY: as above; every `&self` method only reads.
unsafe impl Sync for Tensor {}

impl Drop for Tensor {
    fn drop(&mut self) {
        // SAFETY: self owns the handle; it is freed exactly once.
        unsafe { sys::dinput_tensor_free(self.raw.as_ptr()) }
    }
}

impl Clone for Tensor {
    fn clone(&self) -> Tensor {
        // SAFETY: self.raw is a live handle. dinput_tensor_ref only fails for NULL (or when
        // memory runs out, where Rust would abort too).
        let raw = out_handle(|out| unsafe { sys::dinput_tensor_ref(out, self.raw.as_ptr()) })
            .expect("dinput_tensor_ref failed");
        Tensor { raw }
    }
}

impl Tensor {
    /// Takes ownership of a raw handle (NULL gives `None`).
    ///
    /// # Safety
    /// `raw` must be a live tensor handle that the caller owns and gives up.
    pub unsafe fn from_raw(raw: *mut sys::dinput_tensor_t) -> Option<Tensor> {
        NonNull::new(raw).map(|raw| Tensor { raw })
    }

    /// The raw handle, still owned by `self`.
    pub fn as_raw(&self) -> *const sys::dinput_tensor_t {
        self.raw.as_ptr()
    }

    /// Gives up ownership of the handle.
    pub fn into_raw(self) -> *mut sys::dinput_tensor_t {
        ManuallyDrop::new(self).raw.as_ptr()
    }

    fn from_parts(dtype: DType, shape: &[i64], data: *const c_void, nbytes: usize) -> Result<Tensor> {
        Tensor::from_parts_with(sys::dinput_tensor_new, dtype, shape, data, nbytes)
    }

    /// Calls `dinput_tensor_new` or `dinput_tensor_new_pinned`, which take the same arguments.
    fn from_parts_with(
        new: unsafe extern "C" fn(
            *mut *mut sys::dinput_tensor_t,
            sys::dinput_dtype_t,
            *const i64,
            c_int,
            *const c_void,
            usize,
        ) -> sys::dinput_status_t,
        dtype: DType,
        shape: &[i64],
        data: *const c_void,
        nbytes: usize,
    ) -> Result<Tensor> {
        let rank = rank_of(shape)?;
        // SAFETY: shape points at `rank` dimensions (or is NULL for rank 0); data points at
        // nbytes readable bytes or is NULL (zeros); the library copies both during the call.
        let raw = out_handle(|out| unsafe { new(out, dtype.raw(), shape_ptr(shape), rank, data, nbytes) })?;
        Ok(Tensor { raw })
    }

    /// A tensor of shape `shape` holding a copy of `data` (row-major), whose length must be
    /// the product of the shape.
    pub fn new<T: Scalar>(shape: &[i64], data: &[T]) -> Result<Tensor> {
        // An empty slice's pointer is dangling but never NULL, so the library checks the size
        // instead of taking NULL as "zeros".
        Tensor::from_parts(T::DTYPE, shape, data.as_ptr() as *const c_void, std::mem::size_of_val(data))
    }

    /// A rank-1 tensor holding a copy of `data`.
    pub fn from_slice<T: Scalar>(data: &[T]) -> Result<Tensor> {
        Tensor::new(&[data.len() as i64], data)
    }

    /// A rank-0 tensor.
    pub fn scalar<T: Scalar>(value: T) -> Result<Tensor> {
        Tensor::new(&[], std::slice::from_ref(&value))
    }

    /// A tensor of zeros of a fixed-size dtype.
    pub fn zeros(dtype: DType, shape: &[i64]) -> Result<Tensor> {
        Tensor::from_parts(dtype, shape, std::ptr::null(), 0)
    }

    /// A tensor of any fixed-size dtype (float16 and bfloat16 included) from its raw
    /// row-major bytes, in native byte order.
    pub fn from_raw_bytes(dtype: DType, shape: &[i64], bytes: &[u8]) -> Result<Tensor> {
        // As in `new`, an empty slice still gives a non-NULL pointer (NULL would mean zeros).
        Tensor::from_parts(dtype, shape, bytes.as_ptr() as *const c_void, bytes.len())
    }

    /// [`Tensor::new`] in page-locked (pinned) host memory ([`Device::CudaHost`]): copies of
    /// it to a GPU skip the staging copy that pageable memory needs. For data a distributed
    /// iterator sends to GPUs many times (`from_tensors` with `repeat`). FAILED_PRECONDITION
    /// without a usable CUDA driver and device (always in a build without CUDA),
    /// RESOURCE_EXHAUSTED when no page-locked memory is left.
    pub fn new_pinned<T: Scalar>(shape: &[i64], data: &[T]) -> Result<Tensor> {
        // As in `new`: never NULL, so that an empty slice is not taken for "zeros".
        let data_ptr = data.as_ptr() as *const c_void;
        Tensor::from_parts_with(sys::dinput_tensor_new_pinned, T::DTYPE, shape, data_ptr, std::mem::size_of_val(data))
    }

    /// [`Tensor::from_raw_bytes`] in page-locked host memory (see [`Tensor::new_pinned`]).
    pub fn from_raw_bytes_pinned(dtype: DType, shape: &[i64], bytes: &[u8]) -> Result<Tensor> {
        Tensor::from_parts_with(
            sys::dinput_tensor_new_pinned,
            dtype,
            shape,
            bytes.as_ptr() as *const c_void,
            bytes.len(),
        )
    }

    /// A bool tensor.
    pub fn from_bools(shape: &[i64], values: &[bool]) -> Result<Tensor> {
        // bool is one byte holding 0 or 1 in Rust, which is the library's bool layout.
        let bytes: Vec<u8> = values.iter().map(|&b| b as u8).collect();
        Tensor::from_raw_bytes(DType::Bool, shape, &bytes)
    }

    /// A `Bytes` tensor of `product(shape)` strings, copied.
    pub fn new_bytes<S: AsRef<[u8]>>(shape: &[i64], strings: &[S]) -> Result<Tensor> {
        let count: i64 = shape.iter().product();
        if count != strings.len() as i64 {
            return Err(Error::invalid_argument(format!(
                "a bytes tensor of shape {shape:?} needs {count} strings, got {}",
                strings.len()
            )));
        }
        let rank = rank_of(shape)?;
        let ptrs: Vec<*const c_char> = strings.iter().map(|s| s.as_ref().as_ptr() as *const c_char).collect();
        let lens: Vec<usize> = strings.iter().map(|s| s.as_ref().len()).collect();
        // SAFETY: ptrs[i] points at lens[i] readable bytes (explicit lengths: no NUL needed);
        // both arrays hold product(shape) entries; the library copies the strings.
        let raw = out_handle(|out| unsafe {
            sys::dinput_tensor_new_bytes(out, shape_ptr(shape), rank, ptrs.as_ptr(), lens.as_ptr())
        })?;
        Ok(Tensor { raw })
    }

    /// A rank-1 `Bytes` tensor.
    pub fn from_strings<S: AsRef<[u8]>>(strings: &[S]) -> Result<Tensor> {
        Tensor::new_bytes(&[strings.len() as i64], strings)
    }

    pub fn dtype(&self) -> DType {
        // SAFETY: self.raw is live.
        DType::from_raw(unsafe { sys::dinput_tensor_dtype(self.raw.as_ptr()) })
    }

    pub fn rank(&self) -> usize {
        // SAFETY: self.raw is live; the rank of a live tensor is >= 0.
        unsafe { sys::dinput_tensor_rank(self.raw.as_ptr()) }.max(0) as usize
    }

    /// The dimensions.
    pub fn shape(&self) -> &[i64] {
        let rank = self.rank();
        // SAFETY: the library returns `rank` dimensions valid while the handle lives (it lives
        // as long as &self).
        let p = unsafe { sys::dinput_tensor_shape(self.raw.as_ptr()) };
        if rank == 0 || p.is_null() {
            &[]
        } else {
            // SAFETY: see above.
            unsafe { std::slice::from_raw_parts(p, rank) }
        }
    }

    /// Dimension `i`, or `None` when `i >= rank`.
    pub fn dim(&self, i: usize) -> Option<i64> {
        let i = c_int::try_from(i).ok()?;
        // SAFETY: self.raw is live; out-of-range indices give -1.
        let d = unsafe { sys::dinput_tensor_dim(self.raw.as_ptr(), i) };
        (d >= 0).then_some(d)
    }

    /// Number of scalars: the product of the shape (1 for a scalar).
    pub fn num_elements(&self) -> usize {
        // SAFETY: self.raw is live.
        unsafe { sys::dinput_tensor_num_elements(self.raw.as_ptr()) }.max(0) as usize
    }

    /// Payload bytes (for `Bytes`, the sum of the string lengths).
    pub fn byte_size(&self) -> usize {
        // SAFETY: self.raw is live.
        unsafe { sys::dinput_tensor_byte_size(self.raw.as_ptr()) }
    }

    /// Where the data lives.
    pub fn device(&self) -> Device {
        // SAFETY: self.raw is live.
        match unsafe { sys::dinput_tensor_device_type(self.raw.as_ptr()) } {
            // SAFETY: self.raw is live.
            sys::DINPUT_DEVICE_CUDA => {
                Device::Cuda(to_usize(unsafe { sys::dinput_tensor_device_index(self.raw.as_ptr()) }))
            }
            sys::DINPUT_DEVICE_CUDA_HOST => Device::CudaHost,
            _ => Device::Cpu,
        }
    }

    /// A tensor in host memory with the same values: for a CUDA tensor a copy (made once the
    /// copy that fills it is done), for a host tensor a new handle to the same data.
    pub fn to_host(&self) -> Result<Tensor> {
        // SAFETY: self.raw is live; out is a valid out-parameter.
        let raw = out_handle(|out| unsafe { sys::dinput_tensor_to_host(out, self.raw.as_ptr()) })?;
        Ok(Tensor { raw })
    }

    /// Makes `stream` wait, on the GPU and without blocking the host, until the copy that
    /// fills this tensor has finished, and records `stream` as a reader of the tensor (as
    /// [`Tensor::cuda_record_stream`] does). Call it before queueing kernels that read the
    /// tensor's device pointer on `stream`; the tensor may be dropped as soon as they are
    /// queued. A no-op for host tensors. See the [`cuda`](crate::cuda) module.
    pub fn cuda_wait(&self, stream: Stream) -> Result<()> {
        // SAFETY: self.raw is live; Stream::from_raw's caller vouched for the stream.
        check(unsafe { sys::dinput_tensor_cuda_wait(self.raw.as_ptr(), stream.as_raw()) })
    }

    /// Tells dinput that GPU work on `stream` reads this tensor, so that its device memory is
    /// not handed to a later copy until the work queued on `stream` by the time the last
    /// handle is dropped has run. [`Tensor::cuda_wait`] does this already; use it for a
    /// stream that reads the data without that wait (one that waited on
    /// [`Tensor::cuda_ready_event`], or a second stream of yours), as PyTorch's
    /// `Tensor.record_stream`. A no-op for host tensors; never blocks.
    pub fn cuda_record_stream(&self, stream: Stream) -> Result<()> {
        // SAFETY: self.raw is live; Stream::from_raw's caller vouched for the stream.
        check(unsafe { sys::dinput_tensor_cuda_record_stream(self.raw.as_ptr(), stream.as_raw()) })
    }

    /// The CUDA event (`cudaEvent_t`) that completes with the copy filling this tensor; null
    /// for host tensors and for tensors whose data was ready at once. Borrowed: valid as long
    /// as this handle lives, never to be destroyed by the caller. For
    /// `cudaStreamWaitEvent` on a stream of yours (then call [`Tensor::cuda_record_stream`]
    /// for that stream) or `cudaEventQuery`; [`Tensor::cuda_wait`] is simpler.
    pub fn cuda_ready_event(&self) -> *mut c_void {
        // SAFETY: self.raw is live.
        unsafe { sys::dinput_tensor_cuda_ready_event(self.raw.as_ptr()) }
    }

    /// The borrowing accessors dereference `dinput_tensor_data`, which is a device pointer
    /// for CUDA tensors: reading it from the host would be undefined behaviour.
    fn check_host(&self) -> Result<()> {
        match self.device() {
            Device::Cuda(i) => Err(Error::new(
                Code::FailedPrecondition,
                format!("the tensor is in the memory of CUDA device {i}; use to_host() or to_vec() to read it"),
            )),
            _ => Ok(()),
        }
    }

    fn mismatch(&self, wanted: &str) -> Error {
        Error::invalid_argument(format!("expected a {wanted} tensor, found {} {:?}", self.dtype().name(), self.shape()))
    }

    /// The row-major data of a fixed-size dtype, borrowed (no copy). Err for `Bytes`, and
    /// FAILED_PRECONDITION for a tensor in CUDA device memory (see [`Tensor::to_host`]).
    pub fn as_bytes(&self) -> Result<&[u8]> {
        if self.dtype() == DType::Bytes {
            return Err(self.mismatch("fixed-size dtype"));
        }
        self.check_host()?;
        let len = self.byte_size();
        // SAFETY: self.raw is live; the data is immutable and valid while the handle lives.
        let p = unsafe { sys::dinput_tensor_data(self.raw.as_ptr()) } as *const u8;
        if len == 0 || p.is_null() {
            return Ok(&[]);
        }
        // SAFETY: p points at byte_size readable bytes that nobody modifies while &self lives.
        Ok(unsafe { std::slice::from_raw_parts(p, len) })
    }

    /// The data borrowed as `&[T]` (no copy) after checking that the dtype is `T`'s:
    /// INVALID_ARGUMENT on a mismatch; FAILED_PRECONDITION for a tensor in CUDA device
    /// memory (see [`Tensor::to_host`]).
    pub fn as_slice<T: Scalar>(&self) -> Result<&[T]> {
        if self.dtype() != T::DTYPE {
            return Err(self.mismatch(T::DTYPE.name()));
        }
        self.check_host()?;
        let n = self.num_elements();
        // SAFETY: self.raw is live; the data is valid while the handle lives.
        let p = unsafe { sys::dinput_tensor_data(self.raw.as_ptr()) } as *const T;
        if n == 0 || p.is_null() {
            return Ok(&[]);
        }
        if (p as usize) & (std::mem::align_of::<T>() - 1) != 0 {
            // Slices of a batch are views at multiples of the row size, so this does not
            // happen for data the library made; refuse rather than make a misaligned slice.
            return Err(Error::new(Code::FailedPrecondition, "tensor data is not aligned for this type; use to_vec"));
        }
        // SAFETY: dtype checked, so the buffer holds n values of T (num_elements * size);
        // aligned (checked); immutable and alive while &self lives.
        Ok(unsafe { std::slice::from_raw_parts(p, n) })
    }

    /// A copy of the data as `Vec<T>`, made by the library after checking the dtype
    /// (INVALID_ARGUMENT naming both dtypes on a mismatch); works for CUDA tensors too.
    pub fn to_vec<T: Scalar>(&self) -> Result<Vec<T>> {
        let n = self.num_elements();
        let mut v = vec![T::default(); n];
        // SAFETY: v has room for n values of T = size_of_val bytes; self.raw is live.
        check(unsafe {
            sys::dinput_tensor_copy_to(
                v.as_mut_ptr() as *mut c_void,
                std::mem::size_of_val(v.as_slice()),
                self.raw.as_ptr(),
                T::DTYPE.raw(),
            )
        })?;
        Ok(v)
    }

    /// `to_vec::<i64>()`.
    pub fn to_vec_i64(&self) -> Result<Vec<i64>> {
        self.to_vec()
    }

    /// `to_vec::<f32>()`.
    pub fn to_vec_f32(&self) -> Result<Vec<f32>> {
        self.to_vec()
    }

    /// The values of a bool tensor (any non-zero byte is true).
    pub fn to_vec_bool(&self) -> Result<Vec<bool>> {
        if self.dtype() != DType::Bool {
            return Err(self.mismatch("bool"));
        }
        Ok(self.as_bytes()?.iter().map(|&b| b != 0).collect())
    }

    /// The single value of a tensor with one element (a scalar, or shape `[1]`, ...).
    pub fn item<T: Scalar>(&self) -> Result<T> {
        match self.as_slice::<T>()? {
            [v] => Ok(*v),
            values => Err(Error::invalid_argument(format!("item() of a tensor of {} elements", values.len()))),
        }
    }

    /// String `index` (row-major) of a `Bytes` tensor, borrowed.
    pub fn string(&self, index: usize) -> Result<&[u8]> {
        let mut p: *const c_char = std::ptr::null();
        let mut len = 0usize;
        // SAFETY: out-params are valid; self.raw is live. On success p points at len bytes
        // inside the tensor, valid while the handle lives.
        check(unsafe { sys::dinput_tensor_string_view(&mut p, &mut len, self.raw.as_ptr(), index as i64) })?;
        if len == 0 || p.is_null() {
            return Ok(&[]);
        }
        // SAFETY: see above.
        Ok(unsafe { std::slice::from_raw_parts(p as *const u8, len) })
    }

    /// All strings of a `Bytes` tensor, borrowed.
    pub fn strings(&self) -> Result<Vec<&[u8]>> {
        if self.dtype() != DType::Bytes {
            return Err(self.mismatch("bytes"));
        }
        (0..self.num_elements()).map(|i| self.string(i)).collect()
    }

    /// All strings of a `Bytes` tensor as UTF-8 `String`s (INVALID_ARGUMENT if one is not
    /// UTF-8; use [`Tensor::strings`] for binary data).
    pub fn to_strings(&self) -> Result<Vec<String>> {
        self.strings()?
            .into_iter()
            .enumerate()
            .map(|(i, s)| {
                String::from_utf8(s.to_vec())
                    .map_err(|_| Error::invalid_argument(format!("string {i} of the tensor is not UTF-8")))
            })
            .collect()
    }

    /// Exports the tensor as DLPack without copying. Err (INVALID_ARGUMENT) for `Bytes`.
    pub fn to_dlpack(&self) -> Result<DlPackTensor> {
        // SAFETY: self.raw is live; on success *out is a DLManagedTensor the caller owns.
        let raw = out_handle(|out| unsafe { sys::dinput_tensor_to_dlpack(out, self.raw.as_ptr()) })?;
        Ok(DlPackTensor { raw })
    }
}

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Tensor");
        d.field("dtype", &self.dtype()).field("shape", &self.shape());
        macro_rules! values {
            ($($t:ty),*) => {
                match self.dtype() {
                    $(dt if dt == <$t>::DTYPE => { d.field("values", &self.as_slice::<$t>().unwrap_or(&[])); })*
                    DType::Bool => { d.field("values", &self.to_vec_bool().unwrap_or_default()); }
                    DType::Bytes => {
                        let s: Vec<String> = self.strings().unwrap_or_default().iter()
                            .map(|b| String::from_utf8_lossy(b).into_owned()).collect();
                        d.field("values", &s);
                    }
                    _ => {}
                }
            };
        }
        values!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);
        d.finish()
    }
}

/// A tensor borrowed from an element (or a callback's argument): dereferences to [`Tensor`]
/// and cannot outlive its owner. [`TensorRef::to_tensor`] makes an owned handle.
pub struct TensorRef<'a> {
    // Never dropped: the handle belongs to the owner this borrows from.
    tensor: ManuallyDrop<Tensor>,
    _owner: PhantomData<&'a Tensor>,
}

impl<'a> TensorRef<'a> {
    /// # Safety
    /// `raw` must be a live tensor handle that stays valid for `'a`.
    pub(crate) unsafe fn new(raw: *const sys::dinput_tensor_t) -> Option<TensorRef<'a>> {
        NonNull::new(raw as *mut sys::dinput_tensor_t)
            .map(|raw| TensorRef { tensor: ManuallyDrop::new(Tensor { raw }), _owner: PhantomData })
    }

    /// A new owned handle to the same tensor, which may outlive the owner.
    pub fn to_tensor(&self) -> Tensor {
        (*self.tensor).clone()
    }

    // The borrowing accessors again, returning borrows for the owner's lifetime `'a` rather
    // than for this TensorRef's, so that `element.tensor(0)?.as_slice::<i64>()?` can be kept
    // in a variable. (Method calls pick these over the Deref target's.)

    /// [`Tensor::shape`], borrowed for `'a`.
    pub fn shape(&self) -> &'a [i64] {
        // SAFETY: the dimensions live as long as the tensor handle, which the owner keeps
        // alive for 'a.
        unsafe { &*(self.tensor.shape() as *const [i64]) }
    }

    /// [`Tensor::as_bytes`], borrowed for `'a`.
    pub fn as_bytes(&self) -> Result<&'a [u8]> {
        // SAFETY: as in shape: the data lives as long as the handle.
        self.tensor.as_bytes().map(|b| unsafe { &*(b as *const [u8]) })
    }

    /// [`Tensor::as_slice`], borrowed for `'a`.
    pub fn as_slice<T: Scalar>(&self) -> Result<&'a [T]> {
        // SAFETY: as in shape.
        self.tensor.as_slice::<T>().map(|v| unsafe { &*(v as *const [T]) })
    }

    /// [`Tensor::string`], borrowed for `'a`.
    pub fn string(&self, index: usize) -> Result<&'a [u8]> {
        // SAFETY: as in shape.
        self.tensor.string(index).map(|b| unsafe { &*(b as *const [u8]) })
    }

    /// [`Tensor::strings`], borrowed for `'a`.
    pub fn strings(&self) -> Result<Vec<&'a [u8]>> {
        // SAFETY: as in shape.
        self.tensor.strings().map(|v| v.into_iter().map(|b| unsafe { &*(b as *const [u8]) }).collect())
    }
}

impl Deref for TensorRef<'_> {
    type Target = Tensor;
    fn deref(&self) -> &Tensor {
        &self.tensor
    }
}

impl AsRef<Tensor> for Tensor {
    fn as_ref(&self) -> &Tensor {
        self
    }
}

impl AsRef<Tensor> for TensorRef<'_> {
    fn as_ref(&self) -> &Tensor {
        &self.tensor
    }
}

impl fmt::Debug for TensorRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

/// A tensor exported through DLPack, owning its `DLManagedTensor`: dropping it calls the
/// deleter. The data stays valid until then whatever else is freed; it must be treated as
/// read-only. Bool tensors are exported as uint8 (DLPack < 0.8 has no bool code).
pub struct DlPackTensor {
    raw: NonNull<sys::DLManagedTensor>,
}

// SAFETY: the managed tensor keeps its (immutable) data alive by itself, and DLPack deleters
// may be called from any thread.
unsafe impl Send for DlPackTensor {}

impl fmt::Debug for DlPackTensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = self.dl_tensor();
        f.debug_struct("DlPackTensor")
            .field("device", &t.device)
            .field("dtype", &t.dtype)
            .field("shape", &self.shape())
            .finish()
    }
}

impl DlPackTensor {
    /// The DLPack description (data pointer, device, shape, dtype, ...).
    pub fn dl_tensor(&self) -> &sys::DLTensor {
        // SAFETY: raw is a live DLManagedTensor owned by self.
        unsafe { &self.raw.as_ref().dl_tensor }
    }

    /// The shape.
    pub fn shape(&self) -> &[i64] {
        let t = self.dl_tensor();
        if t.ndim <= 0 || t.shape.is_null() {
            return &[];
        }
        // SAFETY: DLPack: shape points at ndim dimensions valid while the managed tensor lives.
        unsafe { std::slice::from_raw_parts(t.shape, t.ndim as usize) }
    }

    /// The raw pointer, still owned by `self`.
    pub fn as_raw(&self) -> *mut sys::DLManagedTensor {
        self.raw.as_ptr()
    }

    /// Gives up ownership, e.g. to hand the tensor to another framework, which must call the
    /// deleter.
    pub fn into_raw(self) -> *mut sys::DLManagedTensor {
        ManuallyDrop::new(self).raw.as_ptr()
    }
}

impl Drop for DlPackTensor {
    fn drop(&mut self) {
        // SAFETY: self owns the managed tensor; DLPack says the owner calls deleter(self) once.
        unsafe {
            if let Some(deleter) = self.raw.as_ref().deleter {
                deleter(self.raw.as_ptr());
            }
        }
    }
}
