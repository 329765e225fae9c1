//! Dataset iterators, distributed iterators and optionals.
//!
//! Iterators have one consumer at a time (dinput.h): they are `Send` (a consumer may move to
//! another thread) but not `Sync`, and `get_next` takes `&mut self`. The library may produce
//! ahead on its own threads meanwhile.
//!
//! Both iterators implement [`std::iter::Iterator`]: items are `Ok(value)` until the end of
//! data (OUT_OF_RANGE), which ends the iteration; an error is yielded once as `Err`, after
//! which the iteration ends too (the C iterator would repeat the error forever, so a
//! `collect()` must not spin on it).
//!
//! Cancelling is the one call that may overlap `get_next` (dinput.h): [`DatasetIterator::canceller`]
//! gives a [`Canceller`] that is `Send + Sync` and may be used from any thread while the
//! consumer is blocked in `get_next`, which then fails with [`Code::Cancelled`]. The C handle
//! is shared between the iterator and its cancellers and freed when the last of them is
//! dropped, since freeing must never race with a cancel. Dropping the iterator itself
//! cancels it, so a canceller that outlives it keeps neither its background threads
//! producing nor (for a distributed iterator) the other workers waiting on it.

use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::Arc;

use dinput_sys as sys;

use crate::distribute::PerReplica;
use crate::element::{Element, Spec};
use crate::error::{c_string, check, out_handle, Code, Result};
use crate::tensor::Scalar;

/// An owned C iterator handle, shared by an iterator and its cancellers; freed with the
/// last of them.
struct RawIterator(NonNull<sys::dinput_iterator_t>);

impl RawIterator {
    fn as_ptr(&self) -> *mut sys::dinput_iterator_t {
        self.0.as_ptr()
    }
}

impl Drop for RawIterator {
    fn drop(&mut self) {
        // SAFETY: the last owner of the handle; nothing else can be calling into it.
        unsafe { sys::dinput_iterator_free(self.0.as_ptr()) }
    }
}

// SAFETY: the handle may move between threads. Shared (Sync) only between one DatasetIterator,
// whose consuming calls take &mut self, and Cancellers, which call dinput_iterator_cancel
// alone: dinput.h allows cancel to overlap any call but free, and the Arc makes free the
// last call.
unsafe impl Send for RawIterator {}
// SAFETY: as above.
unsafe impl Sync for RawIterator {}

/// Iterates a dataset ([`crate::Dataset::iter`]). Named `DatasetIterator`, not `Iterator`,
/// so that `use dinput::*` does not shadow [`std::iter::Iterator`], which it implements.
pub struct DatasetIterator {
    raw: Arc<RawIterator>,
    finished: bool,
    _not_sync: PhantomData<Cell<()>>,
}

// Send through RawIterator. Not Sync (the marker): calls through `&self` from two threads
// must not overlap with `get_next`; only a Canceller's may.

impl fmt::Debug for DatasetIterator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("dinput::DatasetIterator").field("finished", &self.finished).finish()
    }
}

fn statistic_name(name: &str) -> Result<std::ffi::CString> {
    c_string(name, "statistic name")
}

impl DatasetIterator {
    /// # Safety
    /// `raw` must be a live iterator handle that the caller owns and gives up.
    pub(crate) unsafe fn from_owned(raw: NonNull<sys::dinput_iterator_t>) -> DatasetIterator {
        DatasetIterator { raw: Arc::new(RawIterator(raw)), finished: false, _not_sync: PhantomData }
    }

    /// A handle that cancels this iterator from any thread (see [`Canceller`]).
    pub fn canceller(&self) -> Canceller {
        Canceller { target: CancelTarget::Plain(Arc::clone(&self.raw)) }
    }

    /// Cancels the iterator: this and every later `get_next` fail with [`Code::Cancelled`].
    /// From another thread, use [`DatasetIterator::canceller`].
    pub fn cancel(&self) -> Result<()> {
        self.canceller().cancel()
    }

    pub fn as_raw(&self) -> *mut sys::dinput_iterator_t {
        self.raw.as_ptr()
    }

    /// The next element; `Err` with [`Code::OutOfRange`] at the end (as TensorFlow's
    /// `get_next`), and on every later call.
    pub fn get_next(&mut self) -> Result<Element> {
        // SAFETY: self.raw is live and exclusively borrowed; out is a valid out-parameter.
        let raw = out_handle(|out| unsafe { sys::dinput_iterator_get_next(out, self.raw.as_ptr()) })?;
        // SAFETY: a new element handle we own.
        Ok(unsafe { Element::from_raw(raw.as_ptr()) }.expect("non-null"))
    }

    /// The next element as an optional, empty at the end.
    pub fn get_next_as_optional(&mut self) -> Result<Optional> {
        // SAFETY: as in get_next.
        let raw = out_handle(|out| unsafe { sys::dinput_iterator_get_next_as_optional(out, self.raw.as_ptr()) })?;
        Ok(Optional { raw })
    }

    pub fn element_spec(&self) -> Result<Spec> {
        // SAFETY: self.raw is live; only reads (and &self cannot overlap &mut self calls).
        let raw = out_handle(|out| unsafe { sys::dinput_iterator_element_spec(out, self.raw.as_ptr()) })?;
        // SAFETY: a new spec handle we own.
        Ok(unsafe { Spec::from_owned(raw) })
    }

    /// A counter of the iterator's work so far: "records", "record_bytes",
    /// "corrupt_records_skipped", "errors_ignored" (see [`Dataset::ignore_errors`]; NOT_FOUND
    /// for other names).
    ///
    /// `u64` rather than `usize`: these are running totals of a stream (as `std::io::copy`'s),
    /// which may pass 2^32 on a 32-bit host.
    pub fn statistic(&self, name: &str) -> Result<u64> {
        let name = statistic_name(name)?;
        let mut value = 0i64;
        // SAFETY: out and name are valid for the call; self.raw is live.
        check(unsafe { sys::dinput_iterator_statistic(&mut value, self.raw.as_ptr(), name.as_ptr()) })?;
        Ok(u64::try_from(value).unwrap_or(0))
    }

    /// Where the iterator is, as a few bytes holding positions and seeds, never elements
    /// (docs/checkpoint.md); [`crate::Dataset::iter_from_state`] continues from them.
    /// Elements read ahead but not yet returned are read again there. [`Code::Unimplemented`]
    /// names an operation that cannot save its state yet.
    pub fn save_state(&mut self) -> Result<Vec<u8>> {
        // SAFETY: self.raw is live and exclusively borrowed; out is a valid out-parameter.
        let state = out_handle(|out| unsafe { sys::dinput_iterator_save(out, self.raw.as_ptr()) })?;
        // SAFETY: a new state handle we own.
        Ok(unsafe { take_state_bytes(state) })
    }
}

impl Drop for DatasetIterator {
    fn drop(&mut self) {
        // Stop the pipeline now, not when the last Canceller goes: nobody can consume it any
        // more. SAFETY: self.raw is live; cancel may overlap any call but free, which only the
        // last owner of the Arc makes. Its status is ignored (nothing to report it to).
        unsafe { sys::dinput_iterator_cancel(self.raw.as_ptr()) };
    }
}

impl std::iter::Iterator for DatasetIterator {
    type Item = Result<Element>;

    fn next(&mut self) -> Option<Result<Element>> {
        if self.finished {
            return None;
        }
        match self.get_next() {
            Ok(element) => Some(Ok(element)),
            Err(e) => {
                self.finished = true;
                (e.code != Code::OutOfRange).then_some(Err(e))
            }
        }
    }
}

impl std::iter::FusedIterator for DatasetIterator {}

/// An owned C distributed iterator handle, shared as [`RawIterator`] is.
struct RawDistIterator(NonNull<sys::dinput_dist_iterator_t>);

impl RawDistIterator {
    fn as_ptr(&self) -> *mut sys::dinput_dist_iterator_t {
        self.0.as_ptr()
    }
}

impl Drop for RawDistIterator {
    fn drop(&mut self) {
        // SAFETY: the last owner of the handle; nothing else can be calling into it.
        unsafe { sys::dinput_dist_iterator_free(self.0.as_ptr()) }
    }
}

// SAFETY: as for RawIterator.
unsafe impl Send for RawDistIterator {}
// SAFETY: as for RawIterator.
unsafe impl Sync for RawDistIterator {}

/// The bytes of a state handle, which is freed.
///
/// # Safety
/// `state` must be a live state handle that the caller owns and gives up.
pub(crate) unsafe fn take_state_bytes(state: NonNull<sys::dinput_state_t>) -> Vec<u8> {
    // SAFETY: the state is live until freed below; data points at size bytes.
    unsafe {
        let data = sys::dinput_state_data(state.as_ptr()) as *const u8;
        let size = sys::dinput_state_size(state.as_ptr());
        let bytes = if size == 0 { Vec::new() } else { std::slice::from_raw_parts(data, size).to_vec() };
        sys::dinput_state_free(state.as_ptr());
        bytes
    }
}

/// Iterates a distributed dataset: one [`PerReplica`] value per step.
pub struct DistIterator {
    raw: Arc<RawDistIterator>,
    finished: bool,
    _not_sync: PhantomData<Cell<()>>,
}

#[derive(Clone)]
enum CancelTarget {
    Plain(Arc<RawIterator>),
    Dist(Arc<RawDistIterator>),
}

/// Cancels an iterator from any thread, also while another thread is blocked in its
/// `get_next`: that call returns [`Code::Cancelled`] promptly, and so does every later one.
/// For a distributed iterator the other workers' iterators of the epoch fail too. Cloning
/// is cheap; the iterator's C handle lives until the iterator and all its cancellers are
/// dropped, but dropping the iterator already cancels it (a canceller that outlives its
/// iterator only makes idempotent calls).
#[derive(Clone)]
pub struct Canceller {
    target: CancelTarget,
}

impl Canceller {
    /// Cancels the iterator; idempotent.
    pub fn cancel(&self) -> Result<()> {
        // SAFETY: the handle is live (this Arc keeps it); cancel may overlap any call but
        // free, which only the last owner makes.
        check(unsafe {
            match &self.target {
                CancelTarget::Plain(raw) => sys::dinput_iterator_cancel(raw.as_ptr()),
                CancelTarget::Dist(raw) => sys::dinput_dist_iterator_cancel(raw.as_ptr()),
            }
        })
    }
}

impl fmt::Debug for Canceller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Canceller").finish()
    }
}

impl fmt::Debug for DistIterator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DistIterator").field("finished", &self.finished).finish()
    }
}

impl DistIterator {
    /// # Safety
    /// `raw` must be a live distributed iterator handle that the caller owns and gives up.
    pub(crate) unsafe fn from_owned(raw: NonNull<sys::dinput_dist_iterator_t>) -> DistIterator {
        DistIterator { raw: Arc::new(RawDistIterator(raw)), finished: false, _not_sync: PhantomData }
    }

    /// A handle that cancels this iterator from any thread (see [`Canceller`]).
    pub fn canceller(&self) -> Canceller {
        Canceller { target: CancelTarget::Dist(Arc::clone(&self.raw)) }
    }

    /// Cancels the iterator (see [`Canceller::cancel`]).
    pub fn cancel(&self) -> Result<()> {
        self.canceller().cancel()
    }

    pub fn as_raw(&self) -> *mut sys::dinput_dist_iterator_t {
        self.raw.as_ptr()
    }

    /// Where the whole job's distributed iterators are, as a few bytes (docs/checkpoint.md,
    /// "Distributed iterators"). Every worker calls it at the same step; the workers' parts
    /// are gathered through the collective, so every worker receives the same bytes.
    /// [`crate::DistDataset::iter_from_state`] continues from them; steps produced ahead are
    /// produced again there. Workers saving at different steps get
    /// [`Code::FailedPrecondition`].
    pub fn save_state(&mut self) -> Result<Vec<u8>> {
        // SAFETY: self.raw is live and exclusively borrowed; out is a valid out-parameter.
        let state = out_handle(|out| unsafe { sys::dinput_dist_iterator_save(out, self.raw.as_ptr()) })?;
        // SAFETY: a new state handle we own.
        Ok(unsafe { take_state_bytes(state) })
    }

    /// One step: an element per local replica (an empty batch for replicas without data);
    /// `Err` with [`Code::OutOfRange`] when no replica on any worker has data.
    pub fn get_next(&mut self) -> Result<PerReplica> {
        // SAFETY: self.raw is live and exclusively borrowed; out is a valid out-parameter.
        let raw = out_handle(|out| unsafe { sys::dinput_dist_iterator_get_next(out, self.raw.as_ptr()) })?;
        // SAFETY: a new per-replica handle we own.
        Ok(unsafe { PerReplica::from_owned(raw) })
    }

    /// One step as an optional, empty at the end.
    pub fn get_next_as_optional(&mut self) -> Result<Optional> {
        // SAFETY: as in get_next.
        let raw = out_handle(|out| unsafe { sys::dinput_dist_iterator_get_next_as_optional(out, self.raw.as_ptr()) })?;
        Ok(Optional { raw })
    }

    /// Up to `max_steps` steps in one call into the library
    /// (`dinput_dist_iterator_get_next_steps`): the steps `max_steps` calls of
    /// [`get_next`](Self::get_next) would return, in order. Fewer without an error: the data
    /// ended, or an error came, after the last of them, and the next call returns that
    /// (`Err` with [`Code::OutOfRange`] at the end); a step taken is never lost. Every step
    /// returned counts as taken for [`save_state`](Self::save_state). `max_steps` 0 is
    /// [`Code::InvalidArgument`].
    pub fn get_next_steps(&mut self, max_steps: usize) -> Result<Vec<PerReplica>> {
        let mut raw: Vec<*mut sys::dinput_per_replica_t> = vec![std::ptr::null_mut(); max_steps.max(1)];
        let mut n = 0usize;
        // SAFETY: raw has room for max_steps handles (max_steps 0 is refused before any is
        // written); no infos are asked for; self.raw is live and exclusively borrowed.
        check(unsafe {
            sys::dinput_dist_iterator_get_next_steps(
                &mut n,
                raw.as_mut_ptr(),
                std::ptr::null_mut(),
                max_steps,
                0,
                self.raw.as_ptr(),
            )
        })?;
        Ok(raw[..n]
            .iter()
            // SAFETY: the first n entries are new per-replica handles we own, none null.
            .map(|&p| unsafe { PerReplica::from_owned(NonNull::new_unchecked(p)) })
            .collect())
    }

    /// Up to `max_steps` steps copied into `buf` (`dinput_dist_iterator_copy_steps`), for
    /// callers that want small steps as one block of memory: the tensor `t` (replica by
    /// replica, component by component) of the `s`-th step copied starts at element
    /// `(s * T + t) * P` of `buf`, `T` being the replicas times the components and `P` the
    /// product of `shape`. Returns the steps copied and, when a step did not fit (another
    /// shape, such as a short last batch, another dtype than `T`'s, a GPU tensor), that step
    /// after them; the next call goes on after it. `buf` shorter than `max_steps` steps, or
    /// `max_steps` 0, is [`Code::InvalidArgument`] before any step is taken; the end of data
    /// is `Err` with [`Code::OutOfRange`], alone. Every step copied or returned counts as taken
    /// for [`save_state`](Self::save_state).
    pub fn copy_steps<T: Scalar>(
        &mut self,
        buf: &mut [T],
        shape: &[i64],
        max_steps: usize,
    ) -> Result<(usize, Option<PerReplica>)> {
        let rank = std::ffi::c_int::try_from(shape.len())
            .map_err(|_| crate::Error::invalid_argument(format!("rank {} is too large", shape.len())))?;
        let mut n = 0usize;
        let mut unfit: *mut sys::dinput_per_replica_t = std::ptr::null_mut();
        // SAFETY: buf is valid for writes of its whole size in bytes and shape for reads of
        // rank values; the library checks that buf holds max_steps steps before it writes;
        // self.raw is live and exclusively borrowed.
        check(unsafe {
            sys::dinput_dist_iterator_copy_steps(
                &mut n,
                &mut unfit,
                buf.as_mut_ptr().cast(),
                std::mem::size_of_val(buf),
                T::DTYPE.raw(),
                shape.as_ptr(),
                rank,
                max_steps,
                self.raw.as_ptr(),
            )
        })?;
        // SAFETY: a non-null unfit is a new per-replica handle we own.
        Ok((n, NonNull::new(unfit).map(|p| unsafe { PerReplica::from_owned(p) })))
    }

    /// The per-replica element spec.
    pub fn element_spec(&self) -> Result<Spec> {
        // SAFETY: self.raw is live; only reads.
        let raw = out_handle(|out| unsafe { sys::dinput_dist_iterator_element_spec(out, self.raw.as_ptr()) })?;
        // SAFETY: a new spec handle we own.
        Ok(unsafe { Spec::from_owned(raw) })
    }

    /// The statistics of [`DatasetIterator::statistic`] for this worker's input pipelines.
    pub fn statistic(&self, name: &str) -> Result<u64> {
        let name = statistic_name(name)?;
        let mut value = 0i64;
        // SAFETY: out and name are valid for the call; self.raw is live.
        check(unsafe { sys::dinput_dist_iterator_statistic(&mut value, self.raw.as_ptr(), name.as_ptr()) })?;
        Ok(u64::try_from(value).unwrap_or(0))
    }
}

impl Drop for DistIterator {
    fn drop(&mut self) {
        // As for DatasetIterator, and more pressing: until cancelled, the other workers of the job
        // wait in their step for this one until the collective's timeout. SAFETY: as there.
        unsafe { sys::dinput_dist_iterator_cancel(self.raw.as_ptr()) };
    }
}

impl std::iter::Iterator for DistIterator {
    type Item = Result<PerReplica>;

    fn next(&mut self) -> Option<Result<PerReplica>> {
        if self.finished {
            return None;
        }
        match self.get_next() {
            Ok(value) => Some(Ok(value)),
            Err(e) => {
                self.finished = true;
                (e.code != Code::OutOfRange).then_some(Err(e))
            }
        }
    }
}

impl std::iter::FusedIterator for DistIterator {}

/// An optional value from `get_next_as_optional`: an element (dataset iterators), a
/// per-replica value (distributed iterators), or nothing at the end of data.
pub struct Optional {
    raw: NonNull<sys::dinput_optional_t>,
}

// SAFETY: dinput.h lists optionals among the immutable objects that may be shared.
unsafe impl Send for Optional {}
// SAFETY: as above.
unsafe impl Sync for Optional {}

impl Drop for Optional {
    fn drop(&mut self) {
        // SAFETY: self owns the handle.
        unsafe { sys::dinput_optional_free(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for Optional {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Optional").field("has_value", &self.has_value()).finish()
    }
}

impl Optional {
    pub fn has_value(&self) -> bool {
        // SAFETY: self.raw is live.
        unsafe { sys::dinput_optional_has_value(self.raw.as_ptr()) != 0 }
    }

    /// The element held (INVALID_ARGUMENT when empty or holding a per-replica value).
    pub fn value(&self) -> Result<Element> {
        // SAFETY: self.raw is live; out is a valid out-parameter.
        let raw = out_handle(|out| unsafe { sys::dinput_optional_get_value(out, self.raw.as_ptr()) })?;
        // SAFETY: a new element handle we own.
        Ok(unsafe { Element::from_raw(raw.as_ptr()) }.expect("non-null"))
    }

    /// The per-replica value held (INVALID_ARGUMENT when empty or holding an element).
    pub fn per_replica(&self) -> Result<PerReplica> {
        // SAFETY: self.raw is live; out is a valid out-parameter.
        let raw = out_handle(|out| unsafe { sys::dinput_optional_get_per_replica(out, self.raw.as_ptr()) })?;
        // SAFETY: a new per-replica handle we own.
        Ok(unsafe { PerReplica::from_owned(raw) })
    }

    /// `Some(element)`, or `None` when empty.
    pub fn into_value(self) -> Result<Option<Element>> {
        if self.has_value() {
            self.value().map(Some)
        } else {
            Ok(None)
        }
    }

    /// `Some(per-replica value)`, or `None` when empty.
    pub fn into_per_replica(self) -> Result<Option<PerReplica>> {
        if self.has_value() {
            self.per_replica().map(Some)
        } else {
            Ok(None)
        }
    }
}

// -- per-stage statistics and traces (docs/statistics.md) --

/// Copies a string the library returned and frees it.
///
/// # Safety
/// `p` is null or a string the library returned to the caller, not yet freed.
unsafe fn take_string(p: *mut std::ffi::c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: a NUL-terminated string owned by the caller until freed here.
    let text = unsafe { std::ffi::CStr::from_ptr(p) }.to_string_lossy().into_owned();
    // SAFETY: p came from the library and is freed once.
    unsafe { sys::dinput_string_free(p) };
    text
}

impl DatasetIterator {
    /// The per-stage statistics so far as a JSON document (schema "dinput.statistics/1").
    pub fn statistics(&self) -> Result<String> {
        let mut out = std::ptr::null_mut();
        // SAFETY: out is a valid out-parameter; self.raw is live.
        let status = unsafe { sys::dinput_iterator_statistics(&mut out, self.raw.as_ptr()) };
        // SAFETY: out is null or a string we now own.
        let text = unsafe { take_string(out) };
        check(status)?;
        Ok(text)
    }

    /// The trace in the Trace Event JSON format (Perfetto, chrome://tracing); no slices
    /// unless [`crate::Options::set_trace`] asked for them.
    pub fn trace(&self) -> Result<String> {
        let mut out = std::ptr::null_mut();
        // SAFETY: out is a valid out-parameter; self.raw is live.
        let status = unsafe { sys::dinput_iterator_trace(&mut out, self.raw.as_ptr()) };
        // SAFETY: out is null or a string we now own.
        let text = unsafe { take_string(out) };
        check(status)?;
        Ok(text)
    }
}

impl DistIterator {
    /// This worker's statistics (schema "dinput.dist_statistics/1"), or with `all_workers`
    /// every worker's gathered through the collective (schema "dinput.job_statistics/1"):
    /// then every worker calls it at the same point.
    pub fn statistics(&mut self, all_workers: bool) -> Result<String> {
        let mut out = std::ptr::null_mut();
        // SAFETY: out is a valid out-parameter; self.raw is live and exclusively borrowed.
        let status = unsafe {
            sys::dinput_dist_iterator_statistics(&mut out, self.raw.as_ptr(), all_workers as std::ffi::c_int)
        };
        // SAFETY: out is null or a string we now own.
        let text = unsafe { take_string(out) };
        check(status)?;
        Ok(text)
    }

    /// This worker's trace in the Trace Event JSON format.
    pub fn trace(&self) -> Result<String> {
        let mut out = std::ptr::null_mut();
        // SAFETY: out is a valid out-parameter; self.raw is live.
        let status = unsafe { sys::dinput_dist_iterator_trace(&mut out, self.raw.as_ptr()) };
        // SAFETY: out is null or a string we now own.
        let text = unsafe { take_string(out) };
        check(status)?;
        Ok(text)
    }
}
