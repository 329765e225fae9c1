//! Elements (tuples of tensors) and element specs.

use std::fmt;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::ptr::NonNull;

use dinput_sys as sys;

use crate::cuda::Stream;
use crate::error::{check, out_handle, Error, Result};
use crate::tensor::{DType, Tensor, TensorRef};

/// An element: an ordered tuple of tensors (its components), owning one handle.
/// Immutable, hence `Send + Sync`.
// repr(transparent): an array of element handles lent by the library (a map_many run) is
// read as a `&[Element]` without building anything.
#[repr(transparent)]
pub struct Element {
    raw: NonNull<sys::dinput_element_t>,
}

// SAFETY: dinput.h: elements are immutable and may be shared and read from several threads;
// handles may be freed on any thread.
unsafe impl Send for Element {}
// SAFETY: as above; `&self` methods only read.
unsafe impl Sync for Element {}

impl Drop for Element {
    fn drop(&mut self) {
        // SAFETY: self owns the handle; it is freed exactly once.
        unsafe { sys::dinput_element_free(self.raw.as_ptr()) }
    }
}

impl Element {
    /// An element of the given components (the element keeps its own references).
    pub fn new(tensors: &[&Tensor]) -> Result<Element> {
        let ptrs: Vec<*const sys::dinput_tensor_t> = tensors.iter().map(|t| t.as_raw()).collect();
        // SAFETY: ptrs holds `len` live tensor handles for the duration of the call.
        let raw = out_handle(|out| unsafe { sys::dinput_element_new(out, ptrs.as_ptr(), ptrs.len()) })?;
        Ok(Element { raw })
    }

    /// An element of one component (a `Tensor`, `&Tensor` or `TensorRef`).
    pub fn single(tensor: impl AsRef<Tensor>) -> Result<Element> {
        Element::new(&[tensor.as_ref()])
    }

    /// Takes ownership of a raw handle (NULL gives `None`).
    ///
    /// # Safety
    /// `raw` must be a live element handle that the caller owns and gives up.
    pub unsafe fn from_raw(raw: *mut sys::dinput_element_t) -> Option<Element> {
        NonNull::new(raw).map(|raw| Element { raw })
    }

    pub fn as_raw(&self) -> *const sys::dinput_element_t {
        self.raw.as_ptr()
    }

    /// Gives up ownership of the handle.
    pub fn into_raw(self) -> *mut sys::dinput_element_t {
        ManuallyDrop::new(self).raw.as_ptr()
    }

    /// Number of components.
    pub fn len(&self) -> usize {
        // SAFETY: self.raw is live.
        unsafe { sys::dinput_element_size(self.raw.as_ptr()) }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Component `i`, borrowed from the element; `None` when out of range.
    pub fn get(&self, i: usize) -> Option<TensorRef<'_>> {
        // SAFETY: self.raw is live; the component stays valid while the element lives, which
        // the returned reference's lifetime ('_ = &self) enforces.
        unsafe { TensorRef::new(sys::dinput_element_get(self.raw.as_ptr(), i)) }
    }

    /// Component `i`, or INVALID_ARGUMENT when out of range (handy with `?` in callbacks).
    pub fn tensor(&self, i: usize) -> Result<TensorRef<'_>> {
        self.get(i).ok_or_else(|| {
            Error::invalid_argument(format!("component {i} of an element of {} component(s)", self.len()))
        })
    }

    /// The components in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = TensorRef<'_>> + '_ {
        (0..self.len()).map(move |i| self.get(i).expect("index below len"))
    }

    /// Every component in one call into the library (`dinput_element_tensor_infos`); the
    /// same as `iter().collect()`, which is as cheap from Rust.
    pub fn tensors(&self) -> Result<Vec<TensorRef<'_>>> {
        // SAFETY: self.raw is live; the components stay valid while the element lives, which
        // the borrow of &self enforces.
        unsafe {
            tensors_from_infos(|count, infos, cap| {
                sys::dinput_element_tensor_infos(count, infos, cap, self.raw.as_ptr())
            })
        }
    }

    /// [`Tensor::cuda_wait`] for every component: `stream` waits on the GPU for the copies
    /// that fill them and is recorded as their reader. A no-op for host tensors.
    pub fn cuda_wait(&self, stream: Stream) -> Result<()> {
        // SAFETY: self.raw is live; Stream::from_raw's caller vouched for the stream.
        check(unsafe { sys::dinput_element_cuda_wait(self.raw.as_ptr(), stream.as_raw()) })
    }

    /// A new handle to the same element (no data copied). `Clone` does the same and panics
    /// only where this fails, which is when memory runs out.
    pub fn try_clone(&self) -> Result<Element> {
        // SAFETY: self.raw is live; out is a valid out-parameter.
        let raw = out_handle(|out| unsafe { sys::dinput_element_ref(out, self.raw.as_ptr()) })?;
        Ok(Element { raw })
    }
}

/// The tensors a `dinput_*_tensor_infos` call describes (`fill(count, infos, capacity)`),
/// asking once with room for a typical element and again when there are more.
///
/// # Safety
/// `fill` must describe tensors that stay valid for `'a`.
pub(crate) unsafe fn tensors_from_infos<'a>(
    fill: impl Fn(*mut usize, *mut sys::dinput_tensor_info_t, usize) -> sys::dinput_status_t,
) -> Result<Vec<TensorRef<'a>>> {
    let mut infos: Vec<sys::dinput_tensor_info_t> = Vec::with_capacity(8);
    let mut count = 0usize;
    check(fill(&mut count, infos.as_mut_ptr(), infos.capacity()))?;
    if count > infos.capacity() {
        infos.reserve_exact(count);
        check(fill(&mut count, infos.as_mut_ptr(), infos.capacity()))?;
    }
    // SAFETY: the call filled the first `count` entries (count <= capacity here), and the
    // caller vouched that the tensors they name live for 'a.
    unsafe {
        infos.set_len(count);
        Ok(infos.iter().map(|info| TensorRef::new(info.tensor).expect("a component is never NULL")).collect())
    }
}

impl Clone for Element {
    fn clone(&self) -> Element {
        self.try_clone().expect("dinput_element_ref failed")
    }
}

impl fmt::Debug for Element {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// An element borrowed from a per-replica value or passed to a callback: dereferences to
/// [`Element`] and cannot outlive its owner.
pub struct ElementRef<'a> {
    // Never dropped: the handle belongs to the owner.
    element: ManuallyDrop<Element>,
    _owner: PhantomData<&'a Element>,
}

impl<'a> ElementRef<'a> {
    /// # Safety
    /// `raw` must be a live element handle that stays valid for `'a`.
    pub(crate) unsafe fn new(raw: *const sys::dinput_element_t) -> Option<ElementRef<'a>> {
        NonNull::new(raw as *mut sys::dinput_element_t)
            .map(|raw| ElementRef { element: ManuallyDrop::new(Element { raw }), _owner: PhantomData })
    }

    /// An owned element with the same components, which may outlive the owner.
    pub fn to_element(&self) -> Result<Element> {
        self.element.try_clone()
    }

    // As TensorRef's accessors: components borrowed for the owner's lifetime `'a`, so that
    // `value.get(0)?.tensor(0)?` can be kept in a variable.

    /// [`Element::get`], borrowed for `'a`.
    pub fn get(&self, i: usize) -> Option<TensorRef<'a>> {
        // SAFETY: the component lives as long as the element handle, which the owner keeps
        // alive for 'a.
        unsafe { TensorRef::new(sys::dinput_element_get(self.element.raw.as_ptr(), i)) }
    }

    /// [`Element::tensor`], borrowed for `'a`.
    pub fn tensor(&self, i: usize) -> Result<TensorRef<'a>> {
        self.get(i).ok_or_else(|| {
            Error::invalid_argument(format!("component {i} of an element of {} component(s)", self.element.len()))
        })
    }

    /// [`Element::iter`], borrowed for `'a`.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = TensorRef<'a>> + '_ {
        (0..self.element.len()).map(move |i| self.get(i).expect("index below len"))
    }
}

impl Deref for ElementRef<'_> {
    type Target = Element;
    fn deref(&self) -> &Element {
        &self.element
    }
}

impl AsRef<Element> for Element {
    fn as_ref(&self) -> &Element {
        self
    }
}

impl AsRef<Element> for ElementRef<'_> {
    fn as_ref(&self) -> &Element {
        &self.element
    }
}

impl fmt::Debug for ElementRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

/// The spec of an element: per component a dtype and a shape whose dimensions may be
/// unknown ([`UNKNOWN_DIM`], shown as `None`).
pub struct Spec {
    raw: NonNull<sys::dinput_spec_t>,
}

/// An unknown dimension in a spec's shape.
pub const UNKNOWN_DIM: i64 = sys::DINPUT_UNKNOWN_DIM;

// SAFETY: dinput.h: specs are immutable once built and may be shared between threads; the
// only mutation (`add`) takes `&mut self`, so it cannot overlap a read.
unsafe impl Send for Spec {}
// SAFETY: as above.
unsafe impl Sync for Spec {}

impl Drop for Spec {
    fn drop(&mut self) {
        // SAFETY: self owns the handle.
        unsafe { sys::dinput_spec_free(self.raw.as_ptr()) }
    }
}

impl Spec {
    /// An empty spec (no components).
    pub fn new() -> Result<Spec> {
        // SAFETY: out is a valid out-parameter.
        let raw = out_handle(|out| unsafe { sys::dinput_spec_new(out) })?;
        Ok(Spec { raw })
    }

    /// A spec of the given components, e.g. `Spec::of(&[(DType::Int64, &[UNKNOWN_DIM])])`.
    pub fn of(components: &[(DType, &[i64])]) -> Result<Spec> {
        let mut spec = Spec::new()?;
        for (dtype, shape) in components {
            spec.add(*dtype, shape)?;
        }
        Ok(spec)
    }

    /// # Safety
    /// `raw` must be a live spec handle that the caller owns and gives up.
    pub(crate) unsafe fn from_owned(raw: NonNull<sys::dinput_spec_t>) -> Spec {
        Spec { raw }
    }

    pub fn as_raw(&self) -> *const sys::dinput_spec_t {
        self.raw.as_ptr()
    }

    /// Appends a component. Dimensions must be >= 0 or [`UNKNOWN_DIM`].
    pub fn add(&mut self, dtype: DType, shape: &[i64]) -> Result<&mut Spec> {
        let rank = std::ffi::c_int::try_from(shape.len()).map_err(|_| Error::invalid_argument("rank too large"))?;
        let ptr = if shape.is_empty() { std::ptr::null() } else { shape.as_ptr() };
        // SAFETY: self.raw is live and exclusively borrowed; shape holds `rank` dimensions,
        // copied by the library.
        check(unsafe { sys::dinput_spec_add(self.raw.as_ptr(), dtype.raw(), ptr, rank) })?;
        Ok(self)
    }

    /// Number of components.
    pub fn len(&self) -> usize {
        // SAFETY: self.raw is live.
        unsafe { sys::dinput_spec_size(self.raw.as_ptr()) }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The dtype of component `i` (`None` when out of range).
    pub fn dtype(&self, i: usize) -> Option<DType> {
        // SAFETY: self.raw is live; out-of-range indices give DINPUT_DTYPE_INVALID.
        (i < self.len()).then(|| DType::from_raw(unsafe { sys::dinput_spec_dtype(self.raw.as_ptr(), i) }))
    }

    /// The rank of component `i` (`None` when out of range).
    pub fn rank(&self, i: usize) -> Option<usize> {
        // SAFETY: self.raw is live; out-of-range indices give -1.
        let r = unsafe { sys::dinput_spec_rank(self.raw.as_ptr(), i) };
        (r >= 0).then_some(r as usize)
    }

    /// The shape of component `i`, with [`UNKNOWN_DIM`] (-1) for unknown dimensions.
    pub fn shape(&self, i: usize) -> Option<&[i64]> {
        let rank = self.rank(i)?;
        // SAFETY: self.raw is live; the dimensions stay valid while the spec lives (&self).
        let p = unsafe { sys::dinput_spec_shape(self.raw.as_ptr(), i) };
        if rank == 0 || p.is_null() {
            return Some(&[]);
        }
        // SAFETY: p points at `rank` dimensions (see above).
        Some(unsafe { std::slice::from_raw_parts(p, rank) })
    }

    /// Every component as (dtype, shape).
    pub fn components(&self) -> Vec<(DType, Vec<i64>)> {
        (0..self.len())
            .map(|i| (self.dtype(i).unwrap_or(DType::Invalid), self.shape(i).unwrap_or(&[]).to_vec()))
            .collect()
    }
}

/// TensorFlow style: `(int64[None], float32[4, 1])`.
impl fmt::Display for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(")?;
        for (i, (dtype, shape)) in self.components().iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            let dims: Vec<String> =
                shape.iter().map(|&d| if d == UNKNOWN_DIM { "None".to_string() } else { d.to_string() }).collect();
            write!(f, "{dtype}[{}]", dims.join(", "))?;
        }
        f.write_str(")")
    }
}

impl fmt::Debug for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Spec{self}")
    }
}
