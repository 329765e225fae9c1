//! Datasets: sources, transforms and options (the tf.data layer), and record writing.

use std::ffi::{c_char, c_int, c_void, CString};
use std::fmt;
use std::path::Path;
use std::ptr::NonNull;

use dinput_sys as sys;

use crate::callback::{call, deliver, drop_boxed};
use crate::element::{Element, ElementRef, Spec};
use crate::error::{c_string, check, out_handle, static_str, Error, Result};
use crate::iter::Iterator;

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

// SAFETY: dinput.h lists options among the immutable objects that may be shared; setters take
// `&mut self`, so they never overlap a read.
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
        f.debug_struct("Options").field("auto_shard_policy", &self.auto_shard_policy()).finish()
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

    /// The largest record (data bytes) the record readers accept (default 256 MiB, at most
    /// 2^56): a longer claim is DATA_LOSS before any memory is taken for it.
    pub fn set_max_record_bytes(&mut self, max_bytes: i64) -> Result<&mut Options> {
        // SAFETY: self.raw is live and exclusively borrowed.
        check(unsafe { sys::dinput_options_set_max_record_bytes(self.raw.as_ptr(), max_bytes) })?;
        Ok(self)
    }

    pub fn max_record_bytes(&self) -> i64 {
        // SAFETY: self.raw is live.
        unsafe { sys::dinput_options_max_record_bytes(self.raw.as_ptr()) }
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
}

/// The number of elements of a dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cardinality {
    Finite(u64),
    Infinite,
    Unknown,
}

/// Options of [`Dataset::map_with`]: the defaults are a sequential map whose results have the
/// input's spec.
#[derive(Debug, Clone, Copy)]
pub struct MapOptions<'a> {
    /// The spec of the closure's results; `None`: the same as the input's.
    pub out_spec: Option<&'a Spec>,
    /// 1 (or 0): sequential; > 1 or [`AUTOTUNE`]: a thread pool.
    pub num_parallel_calls: i64,
    /// Keep the input order (with parallel calls).
    pub deterministic: bool,
}

impl Default for MapOptions<'_> {
    fn default() -> Self {
        MapOptions { out_spec: None, num_parallel_calls: 1, deterministic: true }
    }
}

/// Options of [`Dataset::interleave`] (as tf.data's interleave).
#[derive(Debug, Clone, Copy)]
pub struct InterleaveOptions {
    /// Datasets read at once: >= 1 or [`AUTOTUNE`].
    pub cycle_length: i64,
    /// Consecutive elements taken from each: >= 1.
    pub block_length: i64,
    /// 1: read on the consumer's thread; > 1 or [`AUTOTUNE`]: each open dataset ahead on a
    /// library thread.
    pub num_parallel_calls: i64,
    /// With false, a reader with no element ready is passed over instead of waited for.
    pub deterministic: bool,
}

impl Default for InterleaveOptions {
    fn default() -> Self {
        InterleaveOptions { cycle_length: AUTOTUNE, block_length: 1, num_parallel_calls: 1, deterministic: true }
    }
}

fn c_strings<S: AsRef<str>>(items: &[S], what: &str) -> Result<(Vec<CString>, Vec<*const c_char>)> {
    let owned = items.iter().map(|s| c_string(s.as_ref(), what)).collect::<Result<Vec<_>>>()?;
    let ptrs = owned.iter().map(|c| c.as_ptr()).collect();
    Ok((owned, ptrs))
}

fn path_c_string(path: &Path) -> Result<CString> {
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
/// [`Iterator`] runs it. `Send + Sync`: datasets may be shared between threads, and every
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
    fn wrap(raw: NonNull<sys::dinput_dataset_t>) -> Dataset {
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
    fn derive(
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
            n if n >= 0 => Cardinality::Finite(n as u64),
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
    pub fn iter(&self) -> Result<Iterator> {
        // SAFETY: self.raw is live; out is a valid out-parameter.
        let raw = out_handle(|out| unsafe { sys::dinput_dataset_iterator(out, self.raw.as_ptr()) })?;
        // SAFETY: raw is a new iterator handle we own.
        Ok(unsafe { Iterator::from_owned(raw) })
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

    /// One `Bytes` scalar per line of each file, files read in order.
    pub fn text_lines<P: AsRef<Path>>(files: &[P]) -> Result<Dataset> {
        let (_owned, ptrs) = path_c_strings(files)?;
        // SAFETY: ptrs holds len NUL-terminated strings (kept alive by _owned) for the call.
        out_handle(|out| unsafe { sys::dinput_dataset_text_lines(out, ptrs.as_ptr(), ptrs.len()) }).map(Dataset::wrap)
    }

    /// One `Bytes` scalar per record of TFRecord-framed files (CRCs verified).
    /// `buffer_size` 0: a default read buffer.
    pub fn records<P: AsRef<Path>>(files: &[P], compression: Compression, buffer_size: i64) -> Result<Dataset> {
        let (_owned, ptrs) = path_c_strings(files)?;
        // SAFETY: as in text_lines.
        out_handle(|out| unsafe {
            sys::dinput_dataset_records(out, ptrs.as_ptr(), ptrs.len(), compression as c_int, buffer_size)
        })
        .map(Dataset::wrap)
    }

    /// One `Bytes` scalar of `record_bytes` bytes per record, after skipping `header_bytes`
    /// and before the last `footer_bytes` of each file.
    pub fn fixed_length_records<P: AsRef<Path>>(
        files: &[P],
        record_bytes: i64,
        header_bytes: i64,
        footer_bytes: i64,
    ) -> Result<Dataset> {
        let (_owned, ptrs) = path_c_strings(files)?;
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
        // SAFETY: as in text_lines.
        out_handle(|out| unsafe {
            sys::dinput_dataset_list_files(out, ptrs.as_ptr(), ptrs.len(), shuffle as c_int, seed.unwrap_or(-1))
        })
        .map(Dataset::wrap)
    }

    // ---- transforms ----

    /// Stacks `batch_size` consecutive elements; the last batch may be shorter unless
    /// `drop_remainder`.
    pub fn batch(&self, batch_size: i64, drop_remainder: bool) -> Result<Dataset> {
        // SAFETY (all transforms): `input` is self's live handle, `out` a valid out-parameter;
        // the new dataset keeps its input alive.
        self.derive(|out, input| unsafe { sys::dinput_dataset_batch(out, input, batch_size, drop_remainder as c_int) })
    }

    pub fn unbatch(&self) -> Result<Dataset> {
        // SAFETY: see batch.
        self.derive(|out, input| unsafe { sys::dinput_dataset_unbatch(out, input) })
    }

    /// `count` times (-1: forever; see [`Dataset::repeat_forever`]).
    pub fn repeat(&self, count: i64) -> Result<Dataset> {
        // SAFETY: see batch.
        self.derive(|out, input| unsafe { sys::dinput_dataset_repeat(out, input, count) })
    }

    pub fn repeat_forever(&self) -> Result<Dataset> {
        self.repeat(sys::DINPUT_REPEAT_FOREVER)
    }

    /// The first `count` elements (-1: all).
    pub fn take(&self, count: i64) -> Result<Dataset> {
        // SAFETY: see batch.
        self.derive(|out, input| unsafe { sys::dinput_dataset_take(out, input, count) })
    }

    /// All but the first `count` elements (-1: skips everything).
    pub fn skip(&self, count: i64) -> Result<Dataset> {
        // SAFETY: see batch.
        self.derive(|out, input| unsafe { sys::dinput_dataset_skip(out, input, count) })
    }

    /// Keeps elements `i` with `i % num_shards == index`.
    pub fn shard(&self, num_shards: i64, index: i64) -> Result<Dataset> {
        // SAFETY: see batch.
        self.derive(|out, input| unsafe { sys::dinput_dataset_shard(out, input, num_shards, index) })
    }

    /// `shard(SHARD_HINT, SHARD_HINT)`: replaced by `shard(W, w)` under the HINT policy.
    pub fn shard_hint(&self) -> Result<Dataset> {
        self.shard(sys::DINPUT_SHARD_HINT, sys::DINPUT_SHARD_HINT)
    }

    /// Shuffles with a buffer of `buffer_size` elements; `seed` `None` is random.
    pub fn shuffle(&self, buffer_size: i64, seed: Option<i64>, reshuffle_each_iteration: bool) -> Result<Dataset> {
        let seed = seed.unwrap_or(-1);
        // SAFETY: see batch.
        self.derive(|out, input| unsafe {
            sys::dinput_dataset_shuffle(out, input, buffer_size, seed, reshuffle_each_iteration as c_int)
        })
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
        let out_spec = options.out_spec.map_or(std::ptr::null(), |s| s.as_raw());
        let user_data = Box::into_raw(Box::new(f)) as *mut c_void;
        // SAFETY: see batch; user_data is a Box<F> released by drop_boxed::<F> exactly once
        // (also when this call fails); out_spec is NULL or live for the call.
        self.derive(|out, input| unsafe {
            sys::dinput_dataset_map(
                out,
                input,
                Some(tramp::<F>),
                out_spec,
                options.num_parallel_calls,
                options.deterministic as c_int,
                user_data,
                Some(drop_boxed::<F>),
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
        unsafe extern "C" fn tramp<F>(
            out: *mut *mut sys::dinput_dataset_t,
            input: *const sys::dinput_element_t,
            user_data: *mut c_void,
        ) -> sys::dinput_status_t
        where
            F: Fn(&Element) -> Result<Dataset> + Send + Sync + 'static,
        {
            // SAFETY: as in map_with.
            let (f, input) = unsafe { (&*(user_data as *const F), ElementRef::new(input)) };
            let result = call("the interleave closure", || {
                let input = input.ok_or_else(|| Error::invalid_argument("interleave: NULL input element"))?;
                f(&input).map(Dataset::into_raw)
            });
            // SAFETY: out is the library's valid out-parameter; it takes the dataset.
            unsafe { deliver(out, result) }
        }
        let user_data = Box::into_raw(Box::new(f)) as *mut c_void;
        // SAFETY: as in map_with; out_spec is live for the call.
        self.derive(|out, input| unsafe {
            sys::dinput_dataset_interleave(
                out,
                input,
                Some(tramp::<F>),
                out_spec.as_raw(),
                options.cycle_length,
                options.block_length,
                options.num_parallel_calls,
                options.deterministic as c_int,
                user_data,
                Some(drop_boxed::<F>),
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
    pub fn rebatch(&self, sizes: &[i64], drop_remainder: bool) -> Result<Dataset> {
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
        let path = path_c_string(path.as_ref())?;
        // SAFETY: path is NUL-terminated and lives for the call.
        let raw = out_handle(|out| unsafe {
            sys::dinput_record_writer_open(out, path.as_ptr(), compression as c_int, level)
        })?;
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
