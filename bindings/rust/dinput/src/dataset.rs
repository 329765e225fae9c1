//! Datasets: sources, transforms and options (the tf.data layer), and record writing.

use std::ffi::{c_char, c_int, c_void, CString};
use std::fmt;
use std::path::Path;
use std::ptr::NonNull;

use dinput_sys as sys;

use crate::callback::{call, deliver, drop_boxed};
use crate::element::{Element, ElementRef, Spec};
use crate::error::{c_string, check, out_handle, static_str, to_i64, to_usize, Error, Result};
use crate::iter::DatasetIterator;

/// `buffer_size` / `num_parallel_calls` / `cycle_length` chosen by dinput.
pub const AUTOTUNE: i64 = sys::DINPUT_AUTOTUNE;

/// How `distribute_dataset` shards a dataset across workers (as tf.data's AutoShardPolicy).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[repr(i32)]
pub enum AutoShardPolicy {
    Off = sys::DINPUT_AUTO_SHARD_OFF,
    Auto = sys::DINPUT_AUTO_SHARD_AUTO,
    File = sys::DINPUT_AUTO_SHARD_FILE,
    Data = sys::DINPUT_AUTO_SHARD_DATA,
    Hint = sys::DINPUT_AUTO_SHARD_HINT,
}

impl AutoShardPolicy {
    fn from_raw(raw: sys::dinput_auto_shard_policy_t) -> AutoShardPolicy {
        match raw {
            sys::DINPUT_AUTO_SHARD_OFF => AutoShardPolicy::Off,
            sys::DINPUT_AUTO_SHARD_FILE => AutoShardPolicy::File,
            sys::DINPUT_AUTO_SHARD_DATA => AutoShardPolicy::Data,
            sys::DINPUT_AUTO_SHARD_HINT => AutoShardPolicy::Hint,
            _ => AutoShardPolicy::Auto,
        }
    }
}

/// Compression of a record file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
#[repr(i32)]
pub enum Compression {
    #[default]
    None = sys::DINPUT_COMPRESSION_NONE,
    /// The whole file is one zstd stream.
    Zstd = sys::DINPUT_COMPRESSION_ZSTD,
    /// The whole file is one gzip stream.
    Gzip = sys::DINPUT_COMPRESSION_GZIP,
}

/// Dataset options (`Dataset::with_options`).
pub struct Options {
    raw: NonNull<sys::dinput_options_t>,
}

// SAFETY: options are mutable until used (Dataset::with_options), then frozen (dinput.h);
// until then a setter must not overlap any other call on them, and setters take `&mut self`,
// so they never do. Every other call only reads, and may overlap another read.
unsafe impl Send for Options {}
// SAFETY: as above.
unsafe impl Sync for Options {}

impl Drop for Options {
    fn drop(&mut self) {
        // SAFETY: self owns the handle.
        unsafe { sys::dinput_options_free(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("auto_shard_policy", &self.auto_shard_policy())
            .field("skip_corrupt_records", &self.skip_corrupt_records())
            .field("max_record_bytes", &self.max_record_bytes())
            .field("map_files", &self.map_files())
            .field("allow_nonregular_files", &self.allow_nonregular_files())
            .field("deterministic", &self.deterministic())
            .finish()
    }
}

impl Options {
    /// Default options (auto-shard policy AUTO, corrupt records fail).
    pub fn new() -> Result<Options> {
        // SAFETY: out is a valid out-parameter.
        let raw = out_handle(|out| unsafe { sys::dinput_options_new(out) })?;
        Ok(Options { raw })
    }

    pub fn set_auto_shard_policy(&mut self, policy: AutoShardPolicy) -> Result<&mut Options> {
        // SAFETY: self.raw is live and exclusively borrowed.
        check(unsafe { sys::dinput_options_set_auto_shard_policy(self.raw.as_ptr(), policy as c_int) })?;
        Ok(self)
    }

    pub fn auto_shard_policy(&self) -> AutoShardPolicy {
        // SAFETY: self.raw is live.
        AutoShardPolicy::from_raw(unsafe { sys::dinput_options_auto_shard_policy(self.raw.as_ptr()) })
    }

    /// Skip corrupt records (counted in the iterator statistic "corrupt_records_skipped")
    /// instead of failing with DATA_LOSS.
    pub fn set_skip_corrupt_records(&mut self, enable: bool) -> Result<&mut Options> {
        // SAFETY: self.raw is live and exclusively borrowed.
        check(unsafe { sys::dinput_options_set_skip_corrupt_records(self.raw.as_ptr(), enable as c_int) })?;
        Ok(self)
    }

    pub fn skip_corrupt_records(&self) -> bool {
        // SAFETY: self.raw is live.
        unsafe { sys::dinput_options_skip_corrupt_records(self.raw.as_ptr()) != 0 }
    }

    /// The largest record (data bytes) the record readers accept (default 256 MiB, at most
    /// 2^56): a longer claim is DATA_LOSS before any memory is taken for it.
    pub fn set_max_record_bytes(&mut self, max_bytes: usize) -> Result<&mut Options> {
        let max_bytes = to_i64(max_bytes, "max_record_bytes")?;
        // SAFETY: self.raw is live and exclusively borrowed.
        check(unsafe { sys::dinput_options_set_max_record_bytes(self.raw.as_ptr(), max_bytes) })?;
        Ok(self)
    }

    pub fn max_record_bytes(&self) -> usize {
        // SAFETY: self.raw is live.
        to_usize(unsafe { sys::dinput_options_max_record_bytes(self.raw.as_ptr()) })
    }

    /// Memory-map regular files instead of reading them into the library's buffers. Only
    /// for files nobody truncates or rewrites while they are read: a mapped file truncated
    /// meanwhile kills the process with SIGBUS (see `dinput_options_set_map_files`).
    pub fn set_map_files(&mut self, enable: bool) -> Result<&mut Options> {
        // SAFETY: self.raw is live and exclusively borrowed.
        check(unsafe { sys::dinput_options_set_map_files(self.raw.as_ptr(), enable as c_int) })?;
        Ok(self)
    }

    pub fn map_files(&self) -> bool {
        // SAFETY: self.raw is live.
        unsafe { sys::dinput_options_map_files(self.raw.as_ptr()) != 0 }
    }

    /// Read FIFOs and devices, which the readers refuse otherwise (FAILED_PRECONDITION).
    pub fn set_allow_nonregular_files(&mut self, enable: bool) -> Result<&mut Options> {
        // SAFETY: self.raw is live and exclusively borrowed.
        check(unsafe { sys::dinput_options_set_allow_nonregular_files(self.raw.as_ptr(), enable as c_int) })?;
        Ok(self)
    }

    pub fn allow_nonregular_files(&self) -> bool {
        // SAFETY: self.raw is live.
        unsafe { sys::dinput_options_allow_nonregular_files(self.raw.as_ptr()) != 0 }
    }

    /// The order of the map, interleave and batch nodes upstream whose own `deterministic`
    /// is `None` (tf.data's `Options.deterministic`); default true.
    pub fn set_deterministic(&mut self, enable: bool) -> Result<&mut Options> {
        // SAFETY: self.raw is live and exclusively borrowed.
        check(unsafe { sys::dinput_options_set_deterministic(self.raw.as_ptr(), enable as c_int) })?;
        Ok(self)
    }

    pub fn deterministic(&self) -> bool {
        // SAFETY: self.raw is live.
        unsafe { sys::dinput_options_deterministic(self.raw.as_ptr()) != 0 }
    }
}

/// The number of elements of a dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cardinality {
    Finite(usize),
    Infinite,
    Unknown,
}

/// Options of [`Dataset::map_with`]: the defaults are a sequential map whose results have the
/// input's spec. Built field by field or with the builder methods:
/// `MapOptions::new().num_parallel_calls(4).deterministic(false)`.
#[derive(Debug, Clone, Copy)]
pub struct MapOptions<'a> {
    /// The spec of the closure's results; `None`: the same as the input's.
    pub out_spec: Option<&'a Spec>,
    /// 1 (or 0): sequential; > 1 or [`AUTOTUNE`]: a thread pool.
    pub num_parallel_calls: i64,
    /// Keep the input order (with parallel calls); `None`: the pipeline's
    /// [`Options::set_deterministic`], ordered by default (tf.data's three states).
    pub deterministic: Option<bool>,
}

impl Default for MapOptions<'_> {
    fn default() -> Self {
        MapOptions { out_spec: None, num_parallel_calls: 1, deterministic: None }
    }
}

impl<'a> MapOptions<'a> {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn out_spec(mut self, spec: &'a Spec) -> Self {
        self.out_spec = Some(spec);
        self
    }
    pub fn num_parallel_calls(mut self, n: i64) -> Self {
        self.num_parallel_calls = n;
        self
    }
    pub fn deterministic(mut self, deterministic: bool) -> Self {
        self.deterministic = Some(deterministic);
        self
    }
}

/// Options of [`Dataset::interleave`] (as tf.data's interleave).
#[derive(Debug, Clone, Copy)]
pub struct InterleaveOptions {
    /// Datasets read at once: >= 1 or [`AUTOTUNE`].
    pub cycle_length: i64,
    /// Consecutive elements taken from each: >= 1.
    pub block_length: usize,
    /// 1: read on the consumer's thread; > 1 or [`AUTOTUNE`]: each open dataset ahead on a
    /// library thread.
    pub num_parallel_calls: i64,
    /// With `Some(false)`, a reader with no element ready is passed over instead of waited
    /// for; `None`: the pipeline's setting (ordered by default).
    pub deterministic: Option<bool>,
}

impl Default for InterleaveOptions {
    fn default() -> Self {
        InterleaveOptions { cycle_length: AUTOTUNE, block_length: 1, num_parallel_calls: 1, deterministic: None }
    }
}

impl InterleaveOptions {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn cycle_length(mut self, n: i64) -> Self {
        self.cycle_length = n;
        self
    }
    pub fn block_length(mut self, n: usize) -> Self {
        self.block_length = n;
        self
    }
    pub fn num_parallel_calls(mut self, n: i64) -> Self {
        self.num_parallel_calls = n;
        self
    }
    pub fn deterministic(mut self, deterministic: bool) -> Self {
        self.deterministic = Some(deterministic);
        self
    }
}

/// Options of [`Dataset::batch_with`]: the defaults keep a short last batch and assemble
/// batches on the consumer's thread.
#[derive(Debug, Clone, Copy)]
pub struct BatchOptions {
    /// Drop a last batch shorter than the batch size.
    pub drop_remainder: bool,
    /// 1 (or 0): rows stacked on the consumer's thread; > 1 or [`AUTOTUNE`]: several batches
    /// stacked at once on library threads. The batches are the same either way.
    pub num_parallel_calls: i64,
    /// Accepted as in tf.data; batches currently always keep their order.
    pub deterministic: Option<bool>,
}

impl Default for BatchOptions {
    fn default() -> Self {
        BatchOptions { drop_remainder: false, num_parallel_calls: 1, deterministic: None }
    }
}

impl BatchOptions {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn drop_remainder(mut self, drop: bool) -> Self {
        self.drop_remainder = drop;
        self
    }
    pub fn num_parallel_calls(mut self, n: i64) -> Self {
        self.num_parallel_calls = n;
        self
    }
    pub fn deterministic(mut self, deterministic: bool) -> Self {
        self.deterministic = Some(deterministic);
        self
    }
}

/// Options of [`RecordWriter::create_with`]: the defaults write an uncompressed file.
#[derive(Debug, Clone, Copy, Default)]
pub struct RecordWriterOptions {
    pub compression: Compression,
    /// zstd 1..19 or gzip 1..9; 0: the codec's default.
    pub level: i32,
    /// zstd only: 10..31 for a window of 2^n bytes with long-distance matching (as
    /// `zstd --long=n`); 0: the level's window.
    pub zstd_window_log: i32,
}

impl RecordWriterOptions {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn compression(mut self, compression: Compression) -> Self {
        self.compression = compression;
        self
    }
    pub fn level(mut self, level: i32) -> Self {
        self.level = level;
        self
    }
    pub fn zstd_window_log(mut self, window_log: i32) -> Self {
        self.zstd_window_log = window_log;
        self
    }
}

/// Options of [`Dataset::shuffle_with`]: the defaults draw a random seed per dataset and use
/// a new order for every iterator.
#[derive(Debug, Clone, Copy)]
pub struct ShuffleOptions {
    /// The seed pair (seed, seed2), as tf.data's global and operation seeds, both >= 0: the
    /// same pair gives the same order everywhere. `None`: a random seed.
    pub seeds: Option<(i64, i64)>,
    /// A new (seed-derived) order for each iterator.
    pub reshuffle_each_iteration: bool,
}

impl Default for ShuffleOptions {
    fn default() -> Self {
        ShuffleOptions { seeds: None, reshuffle_each_iteration: true }
    }
}

impl ShuffleOptions {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn seeds(mut self, seed: i64, seed2: i64) -> Self {
        self.seeds = Some((seed, seed2));
        self
    }
    pub fn reshuffle_each_iteration(mut self, reshuffle: bool) -> Self {
        self.reshuffle_each_iteration = reshuffle;
        self
    }
}

pub(crate) fn deterministic_c(deterministic: Option<bool>) -> sys::dinput_deterministic_t {
    match deterministic {
        None => sys::DINPUT_DETERMINISTIC_UNSET,
        Some(true) => sys::DINPUT_DETERMINISTIC_TRUE,
        Some(false) => sys::DINPUT_DETERMINISTIC_FALSE,
    }
}

impl MapOptions<'_> {
    /// These options as a C options handle, for map_with and map_many_with.
    fn to_c(&self) -> Result<OptionHandle<sys::dinput_map_options_t>> {
        let out_spec = self.out_spec.map_or(std::ptr::null(), |s| s.as_raw());
        let o = OptionHandle::new(sys::dinput_map_options_new, sys::dinput_map_options_free)?;
        // SAFETY (setters): the handle is live and owned by `o`; out_spec is NULL or live (and
        // copied by the setter).
        o.set(|p| unsafe { sys::dinput_map_options_set_out_spec(p, out_spec) })?;
        o.set(|p| unsafe { sys::dinput_map_options_set_num_parallel_calls(p, self.num_parallel_calls) })?;
        o.set(|p| unsafe { sys::dinput_map_options_set_deterministic(p, deterministic_c(self.deterministic)) })?;
        Ok(o)
    }
}

/// An option handle of the C API (dinput_batch_options_t, ...), freed when dropped. The
/// safe layer's option structs are plain values; each call fills one of these for the
/// library, which copies it.
pub(crate) struct OptionHandle<T> {
    raw: NonNull<T>,
    free: unsafe extern "C" fn(*mut T),
}

impl<T> OptionHandle<T> {
    pub(crate) fn new(
        make: unsafe extern "C" fn(*mut *mut T) -> sys::dinput_status_t,
        free: unsafe extern "C" fn(*mut T),
    ) -> Result<Self> {
        // SAFETY: make is a dinput_*_options_new, which fills a valid out-parameter.
        let raw = out_handle(|out| unsafe { make(out) })?;
        Ok(OptionHandle { raw, free })
    }

    /// Runs a setter on the handle and checks its status.
    pub(crate) fn set(&self, setter: impl FnOnce(*mut T) -> sys::dinput_status_t) -> Result<()> {
        check(setter(self.raw.as_ptr()))
    }

    pub(crate) fn as_ptr(&self) -> *const T {
        self.raw.as_ptr()
    }
}

impl<T> Drop for OptionHandle<T> {
    fn drop(&mut self) {
        // SAFETY: self owns the handle; free is its dinput_*_options_free.
        unsafe { (self.free)(self.raw.as_ptr()) }
    }
}

fn c_strings<S: AsRef<str>>(items: &[S], what: &str) -> Result<(Vec<CString>, Vec<*const c_char>)> {
    let owned = items.iter().map(|s| c_string(s.as_ref(), what)).collect::<Result<Vec<_>>>()?;
    let ptrs = owned.iter().map(|c| c.as_ptr()).collect();
    Ok((owned, ptrs))
}

pub(crate) fn path_c_string(path: &Path) -> Result<CString> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        CString::new(path.as_os_str().as_bytes())
            .map_err(|_| Error::invalid_argument(format!("path {} contains a NUL byte", path.display())))
    }
    #[cfg(not(unix))]
    {
        let s =
            path.to_str().ok_or_else(|| Error::invalid_argument(format!("path {} is not UTF-8", path.display())))?;
        c_string(s, "path")
    }
}

fn path_c_strings<P: AsRef<Path>>(paths: &[P]) -> Result<(Vec<CString>, Vec<*const c_char>)> {
    let owned = paths.iter().map(|p| path_c_string(p.as_ref())).collect::<Result<Vec<_>>>()?;
    let ptrs = owned.iter().map(|c| c.as_ptr()).collect();
    Ok((owned, ptrs))
}

/// An immutable dataset: a node of a pipeline graph. Building one does no work; an
/// [`DatasetIterator`] runs it. `Send + Sync`: datasets may be shared between threads, and every
/// closure a dataset holds is `Send + Sync` for that reason.
pub struct Dataset {
    raw: NonNull<sys::dinput_dataset_t>,
}

// SAFETY: dinput.h: datasets are immutable and may be shared and read from several threads;
// handles may be freed on any thread. The closures they hold are Send + Sync (enforced by the
// bounds of the constructors below).
unsafe impl Send for Dataset {}
// SAFETY: as above.
unsafe impl Sync for Dataset {}

impl Drop for Dataset {
    fn drop(&mut self) {
        // SAFETY: self owns the handle.
        unsafe { sys::dinput_dataset_free(self.raw.as_ptr()) }
    }
}

/// A new handle to the same (immutable) dataset.
impl Clone for Dataset {
    fn clone(&self) -> Dataset {
        // SAFETY: self.raw is live; out is a valid out-parameter. dinput_dataset_ref only
        // fails for NULL or when memory runs out (where Rust would abort too).
        let raw = out_handle(|out| unsafe { sys::dinput_dataset_ref(out, self.raw.as_ptr()) })
            .expect("dinput_dataset_ref failed");
        Dataset { raw }
    }
}

impl fmt::Debug for Dataset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dataset").field("name", &self.name()).field("cardinality", &self.cardinality()).finish()
    }
}

impl Dataset {
    pub(crate) fn wrap(raw: NonNull<sys::dinput_dataset_t>) -> Dataset {
        Dataset { raw }
    }

    /// Takes ownership of a raw handle (NULL gives `None`).
    ///
    /// # Safety
    /// `raw` must be a live dataset handle that the caller owns and gives up.
    pub unsafe fn from_raw(raw: *mut sys::dinput_dataset_t) -> Option<Dataset> {
        NonNull::new(raw).map(Dataset::wrap)
    }

    pub fn as_raw(&self) -> *const sys::dinput_dataset_t {
        self.raw.as_ptr()
    }

    /// Gives up ownership of the handle.
    pub fn into_raw(self) -> *mut sys::dinput_dataset_t {
        std::mem::ManuallyDrop::new(self).raw.as_ptr()
    }

    /// A transform of `self`.
    pub(crate) fn derive(
        &self,
        make: impl FnOnce(*mut *mut sys::dinput_dataset_t, *const sys::dinput_dataset_t) -> sys::dinput_status_t,
    ) -> Result<Dataset> {
        out_handle(|out| make(out, self.raw.as_ptr())).map(Dataset::wrap)
    }

    // ---- properties ----

    /// Number of elements, infinite or unknown.
    pub fn cardinality(&self) -> Cardinality {
        // SAFETY: self.raw is live.
        match unsafe { sys::dinput_dataset_cardinality(self.raw.as_ptr()) } {
            // A count past usize (only on 32-bit hosts) reads as the largest one.
            n if n >= 0 => Cardinality::Finite(usize::try_from(n).unwrap_or(usize::MAX)),
            sys::DINPUT_INFINITE_CARDINALITY => Cardinality::Infinite,
            _ => Cardinality::Unknown,
        }
    }

    pub fn element_spec(&self) -> Result<Spec> {
        // SAFETY: self.raw is live; out is a valid out-parameter.
        let raw = out_handle(|out| unsafe { sys::dinput_dataset_element_spec(out, self.raw.as_ptr()) })?;
        // SAFETY: raw is a new spec handle we own.
        Ok(unsafe { Spec::from_owned(raw) })
    }

    /// Short name of the node ("range", "batch", ...).
    pub fn name(&self) -> &'static str {
        // SAFETY: self.raw is live; the name is static (dinput.h).
        unsafe { static_str(sys::dinput_dataset_name(self.raw.as_ptr())) }
    }

    /// Starts iterating from the beginning (a new epoch).
    pub fn iter(&self) -> Result<DatasetIterator> {
        // SAFETY: self.raw is live; out is a valid out-parameter.
        let raw = out_handle(|out| unsafe { sys::dinput_dataset_iterator(out, self.raw.as_ptr()) })?;
        // SAFETY: raw is a new iterator handle we own.
        Ok(unsafe { DatasetIterator::from_owned(raw) })
    }

    /// An iterator that continues where the iterator that saved `state`
    /// ([`DatasetIterator::save_state`]) stopped. This dataset must be built as the saved
    /// one was: otherwise [`crate::Code::FailedPrecondition`] names the first operation that
    /// differs. A damaged or truncated state is [`crate::Code::DataLoss`].
    pub fn iter_from_state(&self, state: &[u8]) -> Result<DatasetIterator> {
        // SAFETY: self.raw is live; state is read during the call only; out is valid.
        let raw = out_handle(|out| unsafe {
            sys::dinput_dataset_iterator_from_state(out, self.raw.as_ptr(), state.as_ptr().cast(), state.len())
        })?;
        // SAFETY: raw is a new iterator handle we own.
        Ok(unsafe { DatasetIterator::from_owned(raw) })
    }

    // ---- sources ----

    /// int64 scalars `start, start+step, ...` up to (excluding) `stop`; `step != 0`.
    pub fn range(start: i64, stop: i64, step: i64) -> Result<Dataset> {
        // SAFETY: out is a valid out-parameter.
        out_handle(|out| unsafe { sys::dinput_dataset_range(out, start, stop, step) }).map(Dataset::wrap)
    }

    /// One element: `element` itself.
    pub fn from_tensors(element: &Element) -> Result<Dataset> {
        // SAFETY: element is live for the call; the dataset keeps its own reference.
        out_handle(|out| unsafe { sys::dinput_dataset_from_tensors(out, element.as_raw()) }).map(Dataset::wrap)
    }

    /// The slices of `element` along its first dimension.
    pub fn from_tensor_slices(element: &Element) -> Result<Dataset> {
        // SAFETY: element is live for the call; the dataset keeps its own reference.
        out_handle(|out| unsafe { sys::dinput_dataset_from_tensor_slices(out, element.as_raw()) }).map(Dataset::wrap)
    }

    /// Elements produced by Rust code: for each new iterator, `make()` is called to get a
    /// fresh Rust iterator, whose items (which must match `spec`) are the elements; its end
    /// is the end of data, an `Err` item fails `get_next` with that error.
    ///
    /// Bounds: `make` may be called from several threads at once (one per dataset iterator,
    /// possibly library threads), hence `Fn + Send + Sync`; each Rust iterator is advanced by
    /// one thread at a time but not necessarily the one that made it, hence `Send`.
    pub fn from_generator<F, I>(spec: &Spec, make: F) -> Result<Dataset>
    where
        F: Fn() -> I + Send + Sync + 'static,
        I: IntoIterator<Item = Result<Element>>,
        I::IntoIter: Send + 'static,
    {
        unsafe extern "C" fn init<F, I>(state: *mut *mut c_void, user_data: *mut c_void) -> sys::dinput_status_t
        where
            F: Fn() -> I + Send + Sync + 'static,
            I: IntoIterator<Item = Result<Element>>,
            I::IntoIter: Send + 'static,
        {
            // SAFETY: user_data is the Box<F> given below, alive until free_user_data.
            let make = unsafe { &*(user_data as *const F) };
            match call("the generator", || Ok(make().into_iter())) {
                Ok(iter) => {
                    // SAFETY: state is the library's valid out-parameter.
                    unsafe { *state = Box::into_raw(Box::new(iter)) as *mut c_void };
                    sys::DINPUT_OK
                }
                Err(status) => status,
            }
        }
        unsafe extern "C" fn next<It>(out: *mut *mut sys::dinput_element_t, state: *mut c_void) -> sys::dinput_status_t
        where
            It: std::iter::Iterator<Item = Result<Element>> + Send + 'static,
        {
            // SAFETY: state is the Box<It> made by init; calls for one iterator never overlap
            // (dinput.h), so this is the only reference.
            let iter = unsafe { &mut *(state as *mut It) };
            match call("the generator", || iter.next().transpose()) {
                Ok(Some(element)) => {
                    // SAFETY: out is the library's valid out-parameter; it takes ownership.
                    unsafe { *out = element.into_raw() };
                    sys::DINPUT_OK
                }
                Ok(None) => sys::DINPUT_OUT_OF_RANGE,
                Err(status) => status,
            }
        }
        unsafe extern "C" fn finalize<It>(state: *mut c_void) {
            // SAFETY: state is the Box<It> made by init, finalized exactly once.
            unsafe { drop_boxed::<It>(state) }
        }

        let user_data = Box::into_raw(Box::new(make)) as *mut c_void;
        // SAFETY: the callbacks match the C signatures; user_data is a Box<F> released by
        // drop_boxed::<F> exactly once (also when this call fails, dinput.h); spec is live.
        out_handle(|out| unsafe {
            sys::dinput_dataset_from_generator(
                out,
                spec.as_raw(),
                Some(init::<F, I>),
                Some(next::<I::IntoIter>),
                Some(finalize::<I::IntoIter>),
                user_data,
                Some(drop_boxed::<F>),
            )
        })
        .map(Dataset::wrap)
    }

    /// [`Dataset::from_generator`] whose iterators can save their state
    /// ([`DatasetIterator::save_state`]): `save` returns bytes saying where a Rust iterator
    /// that `make` returned is; `restore` is given a new one and those bytes, and returns the
    /// iterator to continue with. Without them saving is [`crate::Code::Unimplemented`].
    pub fn from_generator_with_state<F, I, S, R>(spec: &Spec, make: F, save: S, restore: R) -> Result<Dataset>
    where
        F: Fn() -> I + Send + Sync + 'static,
        I: IntoIterator<Item = Result<Element>>,
        I::IntoIter: Send + 'static,
        S: Fn(&I::IntoIter) -> Result<Vec<u8>> + Send + Sync + 'static,
        R: Fn(I::IntoIter, &[u8]) -> Result<I::IntoIter> + Send + Sync + 'static,
    {
        struct Funcs<F, S, R> {
            make: F,
            save: S,
            restore: R,
        }
        // One dataset iterator's generator: the Rust iterator (None only during a restore)
        // and the functions, which the user data keeps alive longer than any iterator.
        struct State<It, F, S, R> {
            iter: Option<It>,
            funcs: *const Funcs<F, S, R>,
        }
        unsafe extern "C" fn init<F, I, S, R>(state: *mut *mut c_void, user_data: *mut c_void) -> sys::dinput_status_t
        where
            F: Fn() -> I + Send + Sync + 'static,
            I: IntoIterator<Item = Result<Element>>,
            I::IntoIter: Send + 'static,
        {
            // SAFETY: user_data is the Box<Funcs> given below, alive until free_user_data.
            let funcs = user_data as *const Funcs<F, S, R>;
            match call("the generator", || Ok(unsafe { ((*funcs).make)() }.into_iter())) {
                Ok(iter) => {
                    let boxed = Box::new(State { iter: Some(iter), funcs });
                    // SAFETY: state is the library's valid out-parameter.
                    unsafe { *state = Box::into_raw(boxed) as *mut c_void };
                    sys::DINPUT_OK
                }
                Err(status) => status,
            }
        }
        unsafe extern "C" fn next<It, F, S, R>(
            out: *mut *mut sys::dinput_element_t,
            state: *mut c_void,
        ) -> sys::dinput_status_t
        where
            It: std::iter::Iterator<Item = Result<Element>> + Send + 'static,
        {
            // SAFETY: state is the Box<State> made by init; calls never overlap (dinput.h).
            let state = unsafe { &mut *(state as *mut State<It, F, S, R>) };
            match call("the generator", || state.iter.as_mut().and_then(|it| it.next()).transpose()) {
                Ok(Some(element)) => {
                    // SAFETY: out is the library's valid out-parameter; it takes ownership.
                    unsafe { *out = element.into_raw() };
                    sys::DINPUT_OK
                }
                Ok(None) => sys::DINPUT_OUT_OF_RANGE,
                Err(status) => status,
            }
        }
        unsafe extern "C" fn save_cb<It, F, S, R>(
            state: *mut c_void,
            write: sys::dinput_state_write_fn,
            sink: *mut c_void,
        ) -> sys::dinput_status_t
        where
            S: Fn(&It) -> Result<Vec<u8>>,
        {
            // SAFETY: as for next; funcs outlives every iterator.
            let state = unsafe { &*(state as *const State<It, F, S, R>) };
            let saved = call("the generator's save", || match &state.iter {
                Some(it) => unsafe { ((*state.funcs).save)(it) },
                None => Err(Error::new(crate::Code::FailedPrecondition, "the generator has no iterator")),
            });
            match (saved, write) {
                (Ok(bytes), Some(write)) => {
                    // SAFETY: write and sink are the library's, valid during this call.
                    unsafe { write(sink, bytes.as_ptr().cast(), bytes.len()) };
                    sys::DINPUT_OK
                }
                (Ok(_), None) => sys::DINPUT_INTERNAL,
                (Err(status), _) => status,
            }
        }
        unsafe extern "C" fn restore_cb<It, F, S, R>(
            state: *mut c_void,
            data: *const c_void,
            size: usize,
        ) -> sys::dinput_status_t
        where
            R: Fn(It, &[u8]) -> Result<It>,
        {
            // SAFETY: as for next; data points at size bytes during this call.
            let state = unsafe { &mut *(state as *mut State<It, F, S, R>) };
            let bytes =
                if size == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(data as *const u8, size) } };
            let funcs = state.funcs;
            let taken = state.iter.take();
            match call("the generator's restore", || match taken {
                Some(it) => unsafe { ((*funcs).restore)(it, bytes) },
                None => Err(Error::new(crate::Code::FailedPrecondition, "the generator has no iterator")),
            }) {
                Ok(it) => {
                    state.iter = Some(it);
                    sys::DINPUT_OK
                }
                Err(status) => status,
            }
        }
        unsafe extern "C" fn finalize<It, F, S, R>(state: *mut c_void) {
            // SAFETY: state is the Box<State> made by init, finalized exactly once.
            unsafe { drop_boxed::<State<It, F, S, R>>(state) }
        }

        let user_data = Box::into_raw(Box::new(Funcs { make, save, restore })) as *mut c_void;
        // SAFETY: the callbacks match the C signatures; user_data is a Box<Funcs> released by
        // drop_boxed exactly once (also when this call fails, dinput.h); spec is live.
        out_handle(|out| unsafe {
            sys::dinput_dataset_from_generator_with_state(
                out,
                spec.as_raw(),
                Some(init::<F, I, S, R>),
                Some(next::<I::IntoIter, F, S, R>),
                Some(finalize::<I::IntoIter, F, S, R>),
                Some(save_cb::<I::IntoIter, F, S, R>),
                Some(restore_cb::<I::IntoIter, F, S, R>),
                user_data,
                Some(drop_boxed::<Funcs<F, S, R>>),
            )
        })
        .map(Dataset::wrap)
    }

    /// One `Bytes` scalar per line of each file, files read in order.
    pub fn text_lines<P: AsRef<Path>>(files: &[P]) -> Result<Dataset> {
        let (_owned, ptrs) = path_c_strings(files)?;
        // SAFETY: ptrs holds len NUL-terminated strings (kept alive by _owned) for the call.
        out_handle(|out| unsafe { sys::dinput_dataset_text_lines(out, ptrs.as_ptr(), ptrs.len()) }).map(Dataset::wrap)
    }

    /// One `Bytes` scalar per record of TFRecord-framed files (CRCs verified).
    /// `buffer_size` 0: a default read buffer.
    pub fn records<P: AsRef<Path>>(files: &[P], compression: Compression, buffer_size: usize) -> Result<Dataset> {
        let (_owned, ptrs) = path_c_strings(files)?;
        let buffer_size = to_i64(buffer_size, "buffer_size")?;
        let options = OptionHandle::new(sys::dinput_records_options_new, sys::dinput_records_options_free)?;
        // SAFETY (setters): the handle is live and owned by `options`.
        options.set(|o| unsafe { sys::dinput_records_options_set_compression(o, compression as c_int) })?;
        options.set(|o| unsafe { sys::dinput_records_options_set_buffer_size(o, buffer_size) })?;
        // SAFETY: as in text_lines; options is live for the call.
        out_handle(|out| unsafe { sys::dinput_dataset_records(out, ptrs.as_ptr(), ptrs.len(), options.as_ptr()) })
            .map(Dataset::wrap)
    }

    /// One `Bytes` scalar of `record_bytes` bytes per record, after skipping `header_bytes`
    /// and before the last `footer_bytes` of each file.
    pub fn fixed_length_records<P: AsRef<Path>>(
        files: &[P],
        record_bytes: usize,
        header_bytes: usize,
        footer_bytes: usize,
    ) -> Result<Dataset> {
        let (_owned, ptrs) = path_c_strings(files)?;
        let record_bytes = to_i64(record_bytes, "record_bytes")?;
        let header_bytes = to_i64(header_bytes, "header_bytes")?;
        let footer_bytes = to_i64(footer_bytes, "footer_bytes")?;
        // SAFETY: as in text_lines.
        out_handle(|out| unsafe {
            sys::dinput_dataset_fixed_length_records(
                out,
                ptrs.as_ptr(),
                ptrs.len(),
                record_bytes,
                header_bytes,
                footer_bytes,
            )
        })
        .map(Dataset::wrap)
    }

    /// The names of the files matching any of the glob patterns, sorted, or shuffled by
    /// `seed` (`None`: random) in a new order for each iterator when `shuffle`.
    pub fn list_files<S: AsRef<str>>(patterns: &[S], shuffle: bool, seed: Option<i64>) -> Result<Dataset> {
        let (_owned, ptrs) = c_strings(patterns, "glob pattern")?;
        let o = OptionHandle::new(sys::dinput_list_files_options_new, sys::dinput_list_files_options_free)?;
        // SAFETY (setters): the handle is live and owned by `o`.
        o.set(|p| unsafe { sys::dinput_list_files_options_set_shuffle(p, shuffle as c_int) })?;
        if let Some(seed) = seed {
            // The single seed is the pair (seed, 0), as for shuffle.
            o.set(|p| unsafe { sys::dinput_list_files_options_set_seed(p, seed, 0) })?;
        }
        // SAFETY: as in text_lines; the options handle is live for the call.
        out_handle(|out| unsafe { sys::dinput_dataset_list_files(out, ptrs.as_ptr(), ptrs.len(), o.as_ptr()) })
            .map(Dataset::wrap)
    }

    // ---- transforms ----

    /// Stacks `batch_size` consecutive elements; the last batch may be shorter unless
    /// `drop_remainder`.
    pub fn batch(&self, batch_size: usize, drop_remainder: bool) -> Result<Dataset> {
        self.batch_with(batch_size, &BatchOptions { drop_remainder, ..Default::default() })
    }

    /// Stacks `batch_size` consecutive elements, with the settings of `options`.
    pub fn batch_with(&self, batch_size: usize, options: &BatchOptions) -> Result<Dataset> {
        let batch_size = to_i64(batch_size, "batch_size")?;
        let o = OptionHandle::new(sys::dinput_batch_options_new, sys::dinput_batch_options_free)?;
        // SAFETY (setters): the handle is live and owned by `o`.
        o.set(|p| unsafe { sys::dinput_batch_options_set_drop_remainder(p, options.drop_remainder as c_int) })?;
        o.set(|p| unsafe { sys::dinput_batch_options_set_num_parallel_calls(p, options.num_parallel_calls) })?;
        o.set(|p| unsafe { sys::dinput_batch_options_set_deterministic(p, deterministic_c(options.deterministic)) })?;
        // SAFETY (all transforms): `input` is self's live handle, `out` a valid out-parameter;
        // the new dataset keeps its input alive. Option handles are live for the call.
        self.derive(|out, input| unsafe { sys::dinput_dataset_batch(out, input, batch_size, o.as_ptr()) })
    }

    pub fn unbatch(&self) -> Result<Dataset> {
        // SAFETY: see batch.
        self.derive(|out, input| unsafe { sys::dinput_dataset_unbatch(out, input) })
    }

    /// The input `count` times over (see [`Dataset::repeat_forever`] for no end).
    pub fn repeat(&self, count: usize) -> Result<Dataset> {
        let count = to_i64(count, "repeat count")?;
        // SAFETY: see batch.
        self.derive(|out, input| unsafe { sys::dinput_dataset_repeat(out, input, count) })
    }

    pub fn repeat_forever(&self) -> Result<Dataset> {
        // SAFETY: see batch.
        self.derive(|out, input| unsafe { sys::dinput_dataset_repeat(out, input, sys::DINPUT_REPEAT_FOREVER) })
    }

    /// The first `count` elements. (The C API's -1 for "all" has no counterpart: leave the
    /// take out.)
    pub fn take(&self, count: usize) -> Result<Dataset> {
        let count = to_i64(count, "take count")?;
        // SAFETY: see batch.
        self.derive(|out, input| unsafe { sys::dinput_dataset_take(out, input, count) })
    }

    /// All but the first `count` elements. (The C API's -1, "skip everything", is `take(0)`.)
    pub fn skip(&self, count: usize) -> Result<Dataset> {
        let count = to_i64(count, "skip count")?;
        // SAFETY: see batch.
        self.derive(|out, input| unsafe { sys::dinput_dataset_skip(out, input, count) })
    }

    /// Keeps elements `i` with `i % num_shards == index`.
    pub fn shard(&self, num_shards: usize, index: usize) -> Result<Dataset> {
        let (num_shards, index) = (to_i64(num_shards, "num_shards")?, to_i64(index, "shard index")?);
        // SAFETY: see batch.
        self.derive(|out, input| unsafe { sys::dinput_dataset_shard(out, input, num_shards, index) })
    }

    /// `shard(SHARD_HINT, SHARD_HINT)`: replaced by `shard(W, w)` under the HINT policy.
    pub fn shard_hint(&self) -> Result<Dataset> {
        let hint = sys::DINPUT_SHARD_HINT;
        // SAFETY: see batch.
        self.derive(|out, input| unsafe { sys::dinput_dataset_shard(out, input, hint, hint) })
    }

    /// Shuffles with a buffer of `buffer_size` elements; `seed` `None` is random, `Some(s)`
    /// the seed pair `(s, 0)`.
    pub fn shuffle(&self, buffer_size: usize, seed: Option<i64>, reshuffle_each_iteration: bool) -> Result<Dataset> {
        let options = ShuffleOptions { seeds: seed.map(|s| (s, 0)), reshuffle_each_iteration };
        self.shuffle_with(buffer_size, &options)
    }

    /// Shuffles with a buffer of `buffer_size` elements, with the settings of `options`.
    pub fn shuffle_with(&self, buffer_size: usize, options: &ShuffleOptions) -> Result<Dataset> {
        let buffer_size = to_i64(buffer_size, "buffer_size")?;
        let o = OptionHandle::new(sys::dinput_shuffle_options_new, sys::dinput_shuffle_options_free)?;
        if let Some((seed, seed2)) = options.seeds {
            // SAFETY: the handle is live and owned by `o`.
            o.set(|p| unsafe { sys::dinput_shuffle_options_set_seed(p, seed, seed2) })?;
        }
        // SAFETY: as above.
        o.set(|p| unsafe {
            sys::dinput_shuffle_options_set_reshuffle_each_iteration(p, options.reshuffle_each_iteration as c_int)
        })?;
        // SAFETY: see batch_with.
        self.derive(|out, input| unsafe { sys::dinput_dataset_shuffle(out, input, buffer_size, o.as_ptr()) })
    }

    /// Applies `f` to each element, sequentially, results with the input's spec.
    /// See [`Dataset::map_with`] for the bounds.
    pub fn map<F>(&self, f: F) -> Result<Dataset>
    where
        F: Fn(&Element) -> Result<Element> + Send + Sync + 'static,
    {
        self.map_with(&MapOptions::default(), f)
    }

    /// Applies `f` to each element. `f` runs on library threads, concurrently with parallel
    /// calls and whenever two iterators of the dataset run at once, hence `Fn + Send + Sync`
    /// (use a `Mutex` or atomics inside for state). An `Err` or a panic fails `get_next` with
    /// its message.
    pub fn map_with<F>(&self, options: &MapOptions<'_>, f: F) -> Result<Dataset>
    where
        F: Fn(&Element) -> Result<Element> + Send + Sync + 'static,
    {
        unsafe extern "C" fn tramp<F>(
            out: *mut *mut sys::dinput_element_t,
            input: *const sys::dinput_element_t,
            user_data: *mut c_void,
        ) -> sys::dinput_status_t
        where
            F: Fn(&Element) -> Result<Element> + Send + Sync + 'static,
        {
            // SAFETY: user_data is the Box<F> given below, alive until free_user_data; F is
            // Sync, so sharing it between concurrent calls is sound. `input` is borrowed for
            // the call, which the reference's lifetime (local to this frame) enforces.
            let (f, input) = unsafe { (&*(user_data as *const F), ElementRef::new(input)) };
            let result = call("the map closure", || {
                let input = input.ok_or_else(|| Error::invalid_argument("map: NULL input element"))?;
                f(&input).map(Element::into_raw)
            });
            // SAFETY: out is the library's valid out-parameter; it takes the element.
            unsafe { deliver(out, result) }
        }
        let o = options.to_c()?;
        // The closure is boxed only once the options are accepted: from the call on, the
        // library owns it.
        let user_data = Box::into_raw(Box::new(f)) as *mut c_void;
        // SAFETY: see batch_with; user_data is a Box<F> released by drop_boxed::<F> exactly
        // once (also when this call fails).
        self.derive(|out, input| unsafe {
            sys::dinput_dataset_map(out, input, Some(tramp::<F>), user_data, Some(drop_boxed::<F>), o.as_ptr())
        })
    }

    /// [`Dataset::map_many_with`] with the default options (sequential, the input's spec).
    pub fn map_many<F>(&self, max_count: usize, f: F) -> Result<Dataset>
    where
        F: Fn(&[Element]) -> Result<Vec<Element>> + Send + Sync + 'static,
    {
        self.map_many_with(max_count, &MapOptions::default(), f)
    }

    /// The map of [`Dataset::map_with`], computed by a closure that serves a run of up to
    /// `max_count` consecutive elements per call: it gets the run's inputs (lent for the call;
    /// `to_vec` or `try_clone` keeps one) and returns one result per input, in order. Only the
    /// last run of the input is shorter. The results move to the library without a copy. With
    /// parallel calls each run is one call on a library thread; an `Err`, a panic or a result
    /// count other than the input's fails `get_next` at the first element of the run. Bounds
    /// as for [`Dataset::map_with`].
    pub fn map_many_with<F>(&self, max_count: usize, options: &MapOptions<'_>, f: F) -> Result<Dataset>
    where
        F: Fn(&[Element]) -> Result<Vec<Element>> + Send + Sync + 'static,
    {
        unsafe extern "C" fn tramp<F>(
            outs: *mut *mut sys::dinput_element_t,
            ins: *const *const sys::dinput_element_t,
            count: usize,
            user_data: *mut c_void,
        ) -> sys::dinput_status_t
        where
            F: Fn(&[Element]) -> Result<Vec<Element>> + Send + Sync + 'static,
        {
            // SAFETY: user_data is the Box<F> given below, alive until free_user_data; F is Sync.
            let f = unsafe { &*(user_data as *const F) };
            let result = call("the map_many closure", || {
                // SAFETY: the library passes `count` live handles, borrowed for the call. Element
                // is a transparent non-null handle, so the array reads as a slice of Elements;
                // a shared slice never drops them, and it does not outlive this frame.
                let raw = unsafe { std::slice::from_raw_parts(ins, count) };
                if raw.iter().any(|p| p.is_null()) {
                    return Err(Error::invalid_argument("map_many: NULL input element"));
                }
                // SAFETY: as above, now that every handle is known to be non-null.
                let inputs = unsafe { std::slice::from_raw_parts(ins as *const Element, count) };
                let results = f(inputs)?;
                if results.len() != count {
                    return Err(Error::invalid_argument(format!(
                        "the map_many closure returned {} elements for a run of {count}",
                        results.len()
                    )));
                }
                Ok(results)
            });
            match result {
                Ok(results) => {
                    for (i, e) in results.into_iter().enumerate() {
                        // SAFETY: outs has `count` slots; the library takes each handle.
                        unsafe { *outs.add(i) = e.into_raw() };
                    }
                    sys::DINPUT_OK
                }
                Err(status) => status,
            }
        }
        let o = options.to_c()?;
        let user_data = Box::into_raw(Box::new(f)) as *mut c_void;
        // SAFETY: as in map_with; the library checks max_count (0 is INVALID_ARGUMENT).
        self.derive(|out, input| unsafe {
            sys::dinput_dataset_map_many(
                out,
                input,
                max_count,
                Some(tramp::<F>),
                user_data,
                Some(drop_boxed::<F>),
                o.as_ptr(),
            )
        })
    }

    /// Keeps the elements for which `predicate` returns true. Bounds as for
    /// [`Dataset::map_with`].
    pub fn filter<F>(&self, predicate: F) -> Result<Dataset>
    where
        F: Fn(&Element) -> Result<bool> + Send + Sync + 'static,
    {
        unsafe extern "C" fn tramp<F>(
            keep: *mut c_int,
            input: *const sys::dinput_element_t,
            user_data: *mut c_void,
        ) -> sys::dinput_status_t
        where
            F: Fn(&Element) -> Result<bool> + Send + Sync + 'static,
        {
            // SAFETY: as in map_with.
            let (f, input) = unsafe { (&*(user_data as *const F), ElementRef::new(input)) };
            match call("the filter closure", || {
                let input = input.ok_or_else(|| Error::invalid_argument("filter: NULL input element"))?;
                f(&input)
            }) {
                Ok(k) => {
                    // SAFETY: keep is the library's valid out-parameter.
                    unsafe { *keep = k as c_int };
                    sys::DINPUT_OK
                }
                Err(status) => status,
            }
        }
        let user_data = Box::into_raw(Box::new(predicate)) as *mut c_void;
        // SAFETY: as in map_with.
        self.derive(|out, input| unsafe {
            sys::dinput_dataset_filter(out, input, Some(tramp::<F>), user_data, Some(drop_boxed::<F>))
        })
    }

    /// For each input element, `f` gives a dataset (say, a record reader for one file name);
    /// their elements are interleaved as tf.data's interleave. `out_spec` is the spec of the
    /// datasets `f` returns. `f` runs on the consumer's thread of this node, which may be a
    /// library thread, and for several iterators at once: `Fn + Send + Sync`.
    pub fn interleave<F>(&self, out_spec: &Spec, options: &InterleaveOptions, f: F) -> Result<Dataset>
    where
        F: Fn(&Element) -> Result<Dataset> + Send + Sync + 'static,
    {
        let o = OptionHandle::new(sys::dinput_interleave_options_new, sys::dinput_interleave_options_free)?;
        // SAFETY (setters): the handle is live and owned by `o`.
        o.set(|p| unsafe { sys::dinput_interleave_options_set_cycle_length(p, options.cycle_length) })?;
        let block_length = to_i64(options.block_length, "block_length")?;
        o.set(|p| unsafe { sys::dinput_interleave_options_set_block_length(p, block_length) })?;
        o.set(|p| unsafe { sys::dinput_interleave_options_set_num_parallel_calls(p, options.num_parallel_calls) })?;
        o.set(|p| unsafe {
            sys::dinput_interleave_options_set_deterministic(p, deterministic_c(options.deterministic))
        })?;
        let user_data = DatasetFn::boxed("interleave", f);
        // SAFETY: as in map_with; out_spec is live for the call.
        self.derive(|out, input| unsafe {
            sys::dinput_dataset_interleave(
                out,
                input,
                Some(dataset_fn_tramp::<F>),
                out_spec.as_raw(),
                user_data,
                Some(drop_boxed::<DatasetFn<F>>),
                o.as_ptr(),
            )
        })
    }

    /// Pairs each element with its int64 index (index first).
    pub fn enumerate(&self, start: i64) -> Result<Dataset> {
        // SAFETY: see batch.
        self.derive(|out, input| unsafe { sys::dinput_dataset_enumerate(out, input, start) })
    }

    /// Produces up to `buffer_size` elements ahead on a background thread ([`AUTOTUNE`]: 2;
    /// 0: none).
    pub fn prefetch(&self, buffer_size: i64) -> Result<Dataset> {
        // SAFETY: see batch.
        self.derive(|out, input| unsafe { sys::dinput_dataset_prefetch(out, input, buffer_size) })
    }

    /// Regroups the rows of batched input into batches whose sizes cycle through `sizes`.
    pub fn rebatch(&self, sizes: &[usize], drop_remainder: bool) -> Result<Dataset> {
        let sizes = sizes.iter().map(|&n| to_i64(n, "rebatch size")).collect::<Result<Vec<i64>>>()?;
        // SAFETY: see batch; sizes holds len values read during the call.
        self.derive(|out, input| unsafe {
            sys::dinput_dataset_rebatch(out, input, sizes.as_ptr(), sizes.len(), drop_remainder as c_int)
        })
    }

    /// The same data with the given options (copied).
    pub fn with_options(&self, options: &Options) -> Result<Dataset> {
        // SAFETY: see batch; options is live for the call.
        self.derive(|out, input| unsafe { sys::dinput_dataset_with_options(out, input, options.raw.as_ptr()) })
    }
}

/// Writes TFRecord-framed files that [`Dataset::records`] (and TensorFlow) read. One thread
/// at a time: `Send`, not `Sync`, and every method takes `&mut self`.
pub struct RecordWriter {
    raw: NonNull<sys::dinput_record_writer_t>,
}

// SAFETY: dinput.h: a writer is used by one thread at a time, which `&mut self` guarantees;
// nothing ties it to the thread that opened it.
unsafe impl Send for RecordWriter {}

impl Drop for RecordWriter {
    fn drop(&mut self) {
        // SAFETY: self owns the handle. Closes first if needed (an error is then lost: call
        // close() to see it).
        unsafe { sys::dinput_record_writer_free(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for RecordWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordWriter").finish_non_exhaustive()
    }
}

impl RecordWriter {
    /// Starts a record file at `path`. The records go to a temporary file beside it, which
    /// [`close`](RecordWriter::close) (or dropping the writer) renames over `path`; until
    /// then, and after any failure or [`discard`](RecordWriter::discard), a file already at
    /// `path` keeps its contents. `level`: zstd 1..19 or gzip 1..9, 0 for the default.
    pub fn create<P: AsRef<Path>>(path: P, compression: Compression, level: i32) -> Result<RecordWriter> {
        Self::create_with(path, &RecordWriterOptions { compression, level, ..Default::default() })
    }

    /// [`create`](RecordWriter::create) with all the settings of `options`.
    pub fn create_with<P: AsRef<Path>>(path: P, options: &RecordWriterOptions) -> Result<RecordWriter> {
        let path = path_c_string(path.as_ref())?;
        let o = OptionHandle::new(sys::dinput_record_writer_options_new, sys::dinput_record_writer_options_free)?;
        // SAFETY (setters): the handle is live and owned by `o`.
        o.set(|p| unsafe { sys::dinput_record_writer_options_set_compression(p, options.compression as c_int) })?;
        o.set(|p| unsafe { sys::dinput_record_writer_options_set_level(p, options.level) })?;
        o.set(|p| unsafe { sys::dinput_record_writer_options_set_zstd_window_log(p, options.zstd_window_log) })?;
        // SAFETY: path is NUL-terminated and lives for the call, as does the options handle.
        let raw = out_handle(|out| unsafe { sys::dinput_record_writer_open(out, path.as_ptr(), o.as_ptr()) })?;
        Ok(RecordWriter { raw })
    }

    /// Appends one record.
    pub fn write(&mut self, record: &[u8]) -> Result<()> {
        // SAFETY: self.raw is live and exclusively borrowed; record is readable for its length
        // (an empty slice's pointer is valid for 0 bytes).
        check(unsafe {
            sys::dinput_record_writer_write(self.raw.as_ptr(), record.as_ptr() as *const c_void, record.len())
        })
    }

    /// Pushes buffered records to the file.
    pub fn flush(&mut self) -> Result<()> {
        // SAFETY: self.raw is live and exclusively borrowed.
        check(unsafe { sys::dinput_record_writer_flush(self.raw.as_ptr()) })
    }

    /// Finishes the stream, closes the file and puts it at `path`, reporting any error (then
    /// `path` is unchanged). Later writes fail.
    pub fn close(&mut self) -> Result<()> {
        // SAFETY: self.raw is live and exclusively borrowed.
        check(unsafe { sys::dinput_record_writer_close(self.raw.as_ptr()) })
    }

    /// Abandons the file: the temporary is removed and `path` keeps what it held before.
    /// Later writes fail; close and drop then do nothing.
    pub fn discard(&mut self) -> Result<()> {
        // SAFETY: self.raw is live and exclusively borrowed.
        check(unsafe { sys::dinput_record_writer_discard(self.raw.as_ptr()) })
    }
}

// ---- padded batches, buckets, windows, flat_map, and readers as values ----

/// Settings of [`Dataset::padded_batch`] and [`Dataset::bucket_by_sequence_length`]; the
/// default pads every unknown dimension to the batch's longest row with zeros (empty
/// strings for bytes) and keeps a short last batch.
#[derive(Debug, Clone, Default)]
pub struct PaddedBatchOptions {
    /// One shape per component ([`crate::UNKNOWN_DIM`]: the batch's longest); `None`: the
    /// input spec's shapes.
    pub padded_shapes: Option<Vec<Vec<i64>>>,
    /// One scalar per component, of its dtype; `None`: zeros.
    pub padding_values: Option<Element>,
    /// Drops a last batch shorter than the batch size (for buckets: the partly filled
    /// buckets at the end of the input).
    pub drop_remainder: bool,
}

/// A file reader as a value: what [`Dataset::interleave_reader`] and
/// [`Dataset::flat_map_reader`] run on each file name of their input, with no closure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reader {
    /// As [`Dataset::records`] (`buffer_size` 0: a default read buffer).
    Records { compression: Compression, buffer_size: usize },
    /// As [`Dataset::text_lines`].
    TextLines,
    /// As [`Dataset::fixed_length_records`].
    FixedLengthRecords { record_bytes: usize, header_bytes: usize, footer_bytes: usize },
}

/// An owned dinput_reader_t.
struct ReaderHandle(NonNull<sys::dinput_reader_t>);

impl Drop for ReaderHandle {
    fn drop(&mut self) {
        // SAFETY: self owns the handle.
        unsafe { sys::dinput_reader_free(self.0.as_ptr()) }
    }
}

impl Reader {
    fn to_c(self) -> Result<ReaderHandle> {
        let raw = match self {
            Reader::Records { compression, buffer_size } => {
                let buffer_size = to_i64(buffer_size, "buffer_size")?;
                let o = OptionHandle::new(sys::dinput_records_options_new, sys::dinput_records_options_free)?;
                // SAFETY (setters): the handle is live and owned by `o`.
                o.set(|p| unsafe { sys::dinput_records_options_set_compression(p, compression as c_int) })?;
                o.set(|p| unsafe { sys::dinput_records_options_set_buffer_size(p, buffer_size) })?;
                // SAFETY: out is a valid out-parameter; o is live for the call.
                out_handle(|out| unsafe { sys::dinput_reader_records(out, o.as_ptr()) })?
            }
            // SAFETY: out is a valid out-parameter.
            Reader::TextLines => out_handle(|out| unsafe { sys::dinput_reader_text_lines(out) })?,
            Reader::FixedLengthRecords { record_bytes, header_bytes, footer_bytes } => {
                let record_bytes = to_i64(record_bytes, "record_bytes")?;
                let header_bytes = to_i64(header_bytes, "header_bytes")?;
                let footer_bytes = to_i64(footer_bytes, "footer_bytes")?;
                // SAFETY: out is a valid out-parameter.
                out_handle(|out| unsafe {
                    sys::dinput_reader_fixed_length_records(out, record_bytes, header_bytes, footer_bytes)
                })?
            }
        };
        Ok(ReaderHandle(raw))
    }
}

impl Dataset {
    /// The C options of `options` for this dataset's elements.
    fn padded_options(&self, options: &PaddedBatchOptions) -> Result<OptionHandle<sys::dinput_padded_batch_options_t>> {
        let o = OptionHandle::new(sys::dinput_padded_batch_options_new, sys::dinput_padded_batch_options_free)?;
        // SAFETY (setters): the handle is live and owned by `o`; specs and elements are live
        // for the call (the library copies or references them).
        o.set(|p| unsafe { sys::dinput_padded_batch_options_set_drop_remainder(p, options.drop_remainder as c_int) })?;
        if let Some(shapes) = &options.padded_shapes {
            let spec = self.element_spec()?;
            if shapes.len() != spec.len() {
                return Err(Error::invalid_argument(format!(
                    "padded_shapes has {} shapes but the elements have {} components",
                    shapes.len(),
                    spec.len()
                )));
            }
            let mut padded = Spec::new()?;
            for (i, shape) in shapes.iter().enumerate() {
                let dtype = spec.dtype(i).ok_or_else(|| Error::invalid_argument("no dtype"))?;
                padded.add(dtype, shape)?;
            }
            o.set(|p| unsafe { sys::dinput_padded_batch_options_set_padded_shapes(p, padded.as_raw()) })?;
        }
        if let Some(values) = &options.padding_values {
            o.set(|p| unsafe { sys::dinput_padded_batch_options_set_padding_values(p, values.as_raw()) })?;
        }
        Ok(o)
    }

    /// Combines `batch_size` consecutive elements like [`Dataset::batch`], padding each
    /// component to one shape first (tf.data's padded_batch). An element larger than its
    /// padded shape fails the iteration naming the component and the element. A batch for
    /// distribution: `batch_size` is the global batch size.
    pub fn padded_batch(&self, batch_size: usize, options: &PaddedBatchOptions) -> Result<Dataset> {
        let batch_size = to_i64(batch_size, "batch_size")?;
        let o = self.padded_options(options)?;
        // SAFETY: see batch.
        self.derive(|out, input| unsafe { sys::dinput_dataset_padded_batch(out, input, batch_size, o.as_ptr()) })
    }

    /// Groups elements by the length (first dimension) of component `length_component` into
    /// padded batches: bucket `i` takes lengths in `[boundaries[i-1], boundaries[i])` and goes
    /// out once it holds `batch_sizes[i]` elements (one size per bucket); at the end of the
    /// input the partly filled buckets go out in bucket order. `pad_to_bucket_boundary` pads
    /// unknown dimensions to the bucket's boundary - 1.
    pub fn bucket_by_sequence_length(
        &self,
        length_component: usize,
        boundaries: &[i64],
        batch_sizes: &[i64],
        pad_to_bucket_boundary: bool,
        options: &PaddedBatchOptions,
    ) -> Result<Dataset> {
        let o = self.padded_options(options)?;
        // SAFETY: see batch; the slices hold len values read during the call.
        self.derive(|out, input| unsafe {
            sys::dinput_dataset_bucket_by_sequence_length(
                out,
                input,
                length_component,
                boundaries.as_ptr(),
                boundaries.len(),
                batch_sizes.as_ptr(),
                batch_sizes.len(),
                pad_to_bucket_boundary as c_int,
                o.as_ptr(),
            )
        })
    }

    /// As [`Dataset::bucket_by_sequence_length`], with each element's length given by `f`
    /// (tf.data's `element_length_func`) rather than taken from a component. A negative
    /// length, or an error from `f`, fails the iteration with INVALID_ARGUMENT naming the
    /// element. `f` runs on the consumer's thread of this node, which may be a library thread:
    /// `Fn + Send + Sync`.
    pub fn bucket_by_sequence_length_fn<F>(
        &self,
        f: F,
        boundaries: &[i64],
        batch_sizes: &[i64],
        pad_to_bucket_boundary: bool,
        options: &PaddedBatchOptions,
    ) -> Result<Dataset>
    where
        F: Fn(&Element) -> Result<i64> + Send + Sync + 'static,
    {
        unsafe extern "C" fn tramp<F>(
            length: *mut i64,
            input: *const sys::dinput_element_t,
            user_data: *mut c_void,
        ) -> sys::dinput_status_t
        where
            F: Fn(&Element) -> Result<i64> + Send + Sync + 'static,
        {
            // SAFETY: as in map_with.
            let (f, input) = unsafe { (&*(user_data as *const F), ElementRef::new(input)) };
            match call("the element length closure", || {
                let input =
                    input.ok_or_else(|| Error::invalid_argument("bucket_by_sequence_length: NULL input element"))?;
                f(&input)
            }) {
                Ok(n) => {
                    // SAFETY: length is the library's valid out-parameter.
                    unsafe { *length = n };
                    sys::DINPUT_OK
                }
                Err(status) => status,
            }
        }
        let o = self.padded_options(options)?;
        let user_data = Box::into_raw(Box::new(f)) as *mut c_void;
        // SAFETY: as in map_with; the slices hold len values read during the call.
        self.derive(|out, input| unsafe {
            sys::dinput_dataset_bucket_by_sequence_length_fn(
                out,
                input,
                Some(tramp::<F>),
                user_data,
                Some(drop_boxed::<F>),
                boundaries.as_ptr(),
                boundaries.len(),
                batch_sizes.as_ptr(),
                batch_sizes.len(),
                pad_to_bucket_boundary as c_int,
                o.as_ptr(),
            )
        })
    }

    /// Sliding windows, each one element stacking its rows: window `i` holds input elements
    /// `i*shift + k*stride`, `k < size` (fewer at the end unless `drop_remainder`). tf.data's
    /// window followed by `flat_map(lambda *w: zip(w).batch(size))`.
    pub fn window(&self, size: usize, shift: usize, stride: usize, drop_remainder: bool) -> Result<Dataset> {
        let size = to_i64(size, "size")?;
        let shift = to_i64(shift, "shift")?;
        let stride = to_i64(stride, "stride")?;
        // SAFETY: see batch.
        self.derive(|out, input| unsafe {
            sys::dinput_dataset_window(out, input, size, shift, stride, drop_remainder as c_int)
        })
    }

    /// Calls `f` for each element and reads the dataset it returns to its end before the
    /// next one (tf.data's flat_map). `out_spec` is the spec of those datasets.
    pub fn flat_map<F>(&self, out_spec: &Spec, f: F) -> Result<Dataset>
    where
        F: Fn(&Element) -> Result<Dataset> + Send + Sync + 'static,
    {
        let user_data = DatasetFn::boxed("flat_map", f);
        // SAFETY: as in map_with; out_spec is live for the call.
        self.derive(|out, input| unsafe {
            sys::dinput_dataset_flat_map(
                out,
                input,
                Some(dataset_fn_tramp::<F>),
                out_spec.as_raw(),
                user_data,
                Some(drop_boxed::<DatasetFn<F>>),
            )
        })
    }

    /// Interleave over file names (bytes scalars, e.g. from [`Dataset::list_files`]), each
    /// read by `reader`, with no closure. FILE auto-sharding splits the file list.
    pub fn interleave_reader(&self, reader: Reader, options: &InterleaveOptions) -> Result<Dataset> {
        let r = reader.to_c()?;
        let o = OptionHandle::new(sys::dinput_interleave_options_new, sys::dinput_interleave_options_free)?;
        // SAFETY (setters): the handle is live and owned by `o`.
        o.set(|p| unsafe { sys::dinput_interleave_options_set_cycle_length(p, options.cycle_length) })?;
        let block_length = to_i64(options.block_length, "block_length")?;
        o.set(|p| unsafe { sys::dinput_interleave_options_set_block_length(p, block_length) })?;
        o.set(|p| unsafe { sys::dinput_interleave_options_set_num_parallel_calls(p, options.num_parallel_calls) })?;
        o.set(|p| unsafe {
            sys::dinput_interleave_options_set_deterministic(p, deterministic_c(options.deterministic))
        })?;
        // SAFETY: see batch; the reader and options are live for the call.
        self.derive(|out, input| unsafe { sys::dinput_dataset_interleave_reader(out, input, r.0.as_ptr(), o.as_ptr()) })
    }

    /// Reads each file named by the input whole, in order, with `reader`.
    pub fn flat_map_reader(&self, reader: Reader) -> Result<Dataset> {
        let r = reader.to_c()?;
        // SAFETY: see batch; the reader is live for the call.
        self.derive(|out, input| unsafe { sys::dinput_dataset_flat_map_reader(out, input, r.0.as_ptr()) })
    }
}

/// The user data of the callbacks that make a dataset from an element (interleave, flat_map):
/// the closure and the operation's name, for the messages of a failing call.
struct DatasetFn<F> {
    operation: &'static str,
    closure: String, // "the <operation> closure", made once rather than per call
    f: F,
}

impl<F> DatasetFn<F> {
    /// Boxed for the library, which frees it with `drop_boxed::<DatasetFn<F>>`.
    fn boxed(operation: &'static str, f: F) -> *mut c_void {
        let closure = format!("the {operation} closure");
        Box::into_raw(Box::new(DatasetFn { operation, closure, f })) as *mut c_void
    }
}

unsafe extern "C" fn dataset_fn_tramp<F>(
    out: *mut *mut sys::dinput_dataset_t,
    input: *const sys::dinput_element_t,
    user_data: *mut c_void,
) -> sys::dinput_status_t
where
    F: Fn(&Element) -> Result<Dataset> + Send + Sync + 'static,
{
    // SAFETY: user_data is the DatasetFn<F> boxed by DatasetFn::boxed, alive until
    // free_user_data; F is Sync, so sharing it between concurrent calls is sound. `input` is
    // borrowed for the call, which the reference's lifetime (local to this frame) enforces.
    let (this, input) = unsafe { (&*(user_data as *const DatasetFn<F>), ElementRef::new(input)) };
    let result = call(&this.closure, || {
        let input = input.ok_or_else(|| Error::invalid_argument(format!("{}: NULL input element", this.operation)))?;
        (this.f)(&input).map(Dataset::into_raw)
    });
    // SAFETY: out is the library's valid out-parameter; it takes the dataset.
    unsafe { deliver(out, result) }
}

// -- per-stage statistics and traces (docs/statistics.md) --
impl Options {
    /// Per-stage statistics of the iterators upstream ([`DatasetIterator::statistics`]);
    /// on by default.
    pub fn set_statistics(&mut self, enable: bool) -> Result<&mut Options> {
        // SAFETY: self.raw is live and exclusively borrowed.
        check(unsafe { sys::dinput_options_set_statistics(self.raw.as_ptr(), enable as c_int) })?;
        Ok(self)
    }

    /// Records a trace of up to `max_events` events ([`DatasetIterator::trace`]); 0 (the
    /// default) records none. [`crate::Code::InvalidArgument`] when negative or too large.
    pub fn set_trace(&mut self, max_events: i64) -> Result<&mut Options> {
        // SAFETY: self.raw is live and exclusively borrowed.
        check(unsafe { sys::dinput_options_set_trace(self.raw.as_ptr(), max_events) })?;
        Ok(self)
    }
}

// -- autotuning (docs/autotune.md) --
impl Options {
    /// The most bytes the AUTOTUNE buffers of each iterator upstream may hold; 0 (the
    /// default) is half of the physical memory. [`crate::Code::InvalidArgument`] when
    /// negative.
    pub fn set_ram_budget(&mut self, bytes: i64) -> Result<&mut Options> {
        // SAFETY: self.raw is live and exclusively borrowed.
        check(unsafe { sys::dinput_options_set_ram_budget(self.raw.as_ptr(), bytes) })?;
        Ok(self)
    }
}
