//! Strategies and distribution (the tf.distribute layer): collectives, strategies, input
//! options, distributed datasets, per-replica values, run and reduce.
//!
//! Integer types: counts and indices are `usize`, as for any Rust collection, whether given
//! ([`Strategy::cpu`], [`Strategy::multi_worker_cpu`], [`Collective::in_process`]) or
//! returned ([`Strategy::num_local_replicas`], [`ReplicaContext::replica_id_in_sync_group`],
//! [`PerReplica::len`], ...), so `0..strategy.num_local_replicas()` indexes a [`PerReplica`].
//! A count above what the C API's `int` holds is INVALID_ARGUMENT (the library refuses far
//! smaller ones anyway).

use std::ffi::{c_char, c_int, c_void, CString};
use std::fmt;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::Mutex;
use std::time::Duration;

use dinput_sys as sys;

use crate::callback::{call, deliver};
use crate::dataset::Dataset;
use crate::element::{tensors_from_infos, Element, ElementRef, Spec};
use crate::error::{
    borrowed_str, c_string, c_string_lossy, check, out_handle, to_c_int, to_i64, to_usize, Code, Error, Result,
};
use crate::iter::DistIterator;
use crate::tensor::TensorRef;

/// How the workers of a multi-worker strategy exchange the small values the distributed
/// iterator and reduce need.
///
/// `Send + Sync`: one collective is shared by all its workers' threads by design (each
/// worker's strategy is built from it, and [`Collective::abort`] is meant to be called by one
/// worker to release the others).
pub struct Collective {
    raw: NonNull<sys::dinput_collective_t>,
}

// SAFETY: the in-process collective joins workers that run as threads of this process: it is
// built to be used from all of them at once (dinput.h, dinput_collective_new_in_process).
unsafe impl Send for Collective {}
// SAFETY: as above.
unsafe impl Sync for Collective {}

impl Drop for Collective {
    fn drop(&mut self) {
        // SAFETY: self owns the handle; strategies made from it keep their own reference.
        unsafe { sys::dinput_collective_free(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for Collective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Collective").field("num_workers", &self.num_workers()).finish()
    }
}

impl Collective {
    /// An in-process collective joining `num_workers` workers that run as threads of this
    /// process. `timeout` bounds every collective wait (`None`: 60 s); a worker that does
    /// not arrive in time makes the wait fail with DEADLINE_EXCEEDED.
    pub fn in_process(num_workers: usize, timeout: Option<Duration>) -> Result<Collective> {
        let num_workers = to_c_int(num_workers, "num_workers")?;
        let timeout_ms = match timeout {
            None => 0,
            // A zero Duration would mean "default" to the library; the shortest wait it can
            // express is 1 ms.
            Some(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX).max(1),
        };
        // SAFETY: out is a valid out-parameter.
        let raw = out_handle(|out| unsafe { sys::dinput_collective_new_in_process(out, num_workers, timeout_ms) })?;
        Ok(Collective { raw })
    }

    /// A collective joining the worker processes of a job over TCP: this process is worker
    /// `cluster.rank()`, and the workers meet at the cluster's rendezvous URL. Returns once
    /// every worker has connected. `options` (`None`: the defaults) give the timeout, the job
    /// id and the address to listen on. With several workers, listening on a loopback address
    /// is FAILED_PRECONDITION unless the job shows it runs on one host (see
    /// [`crate::CollectiveOptions::set_allow_loopback`]). UNIMPLEMENTED in a build without Gloo.
    pub fn from_cluster(cluster: &crate::Cluster, options: Option<&crate::CollectiveOptions>) -> Result<Collective> {
        let options_ptr = options.map_or(std::ptr::null(), |o| o.as_ptr());
        // SAFETY: out is a valid out-parameter; cluster and options are live for the call.
        let raw =
            out_handle(|out| unsafe { sys::dinput_collective_new_from_cluster(out, cluster.as_ptr(), options_ptr) })?;
        Ok(Collective { raw })
    }

    /// Fails every pending and future collective wait of every worker with `code` and
    /// `message`, so that a worker that cannot go on releases its peers at once. Irreversible.
    pub fn abort(&self, code: Code, message: &str) -> Result<()> {
        let message = c_string_lossy(message);
        // SAFETY: self.raw is live; the collective is built for concurrent use by its workers;
        // message lives for the call.
        check(unsafe { sys::dinput_collective_abort(self.raw.as_ptr(), code.raw(), message.as_ptr()) })
    }

    pub fn num_workers(&self) -> usize {
        // SAFETY: self.raw is live.
        to_usize(unsafe { sys::dinput_collective_num_workers(self.raw.as_ptr()) })
    }
}

/// A set of replica devices: W workers x R replicas; each value is one worker's view.
/// `Send + Sync`: strategies are immutable.
pub struct Strategy {
    raw: NonNull<sys::dinput_strategy_t>,
}

// SAFETY: dinput.h lists strategies among the immutable objects that may be shared.
unsafe impl Send for Strategy {}
// SAFETY: as above.
unsafe impl Sync for Strategy {}

impl Drop for Strategy {
    fn drop(&mut self) {
        // SAFETY: self owns the handle.
        unsafe { sys::dinput_strategy_free(self.raw.as_ptr()) }
    }
}

fn device_names<S: AsRef<str>>(devices: &[S]) -> Result<(Vec<CString>, Vec<*const c_char>)> {
    let owned = devices.iter().map(|d| c_string(d.as_ref(), "device name")).collect::<Result<Vec<_>>>()?;
    let ptrs = owned.iter().map(|c| c.as_ptr()).collect();
    Ok((owned, ptrs))
}

/// dinput.h: "Every strategy has at most 4096 replicas per worker".
const MAX_REPLICAS_PER_WORKER: usize = 4096;

/// Reduction of [`Strategy::reduce`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum ReduceOp {
    Sum = sys::DINPUT_REDUCE_SUM,
    Mean = sys::DINPUT_REDUCE_MEAN,
}

impl Strategy {
    /// A single-worker strategy over the named devices ("CPU:k", "GPU:k", ...; distinct).
    pub fn new<S: AsRef<str>>(devices: &[S]) -> Result<Strategy> {
        let (_owned, ptrs) = device_names(devices)?;
        // SAFETY: ptrs holds len NUL-terminated names (kept alive by _owned) for the call.
        let n = to_c_int(ptrs.len(), "number of devices")?;
        let raw = out_handle(|out| unsafe { sys::dinput_strategy_new(out, ptrs.as_ptr(), n) })?;
        Ok(Strategy { raw })
    }

    /// The default strategy: one replica on CPU:0.
    pub fn default_strategy() -> Result<Strategy> {
        Strategy::new::<&str>(&[])
    }

    /// `num_replicas` CPU replicas: CPU:0 .. CPU:n-1 (INVALID_ARGUMENT when below 1 or above
    /// 4096, dinput.h's limit of replicas per worker).
    pub fn cpu(num_replicas: usize) -> Result<Strategy> {
        if num_replicas < 1 {
            // Strategy::new(&[]) would quietly be the default strategy's one replica.
            return Err(Error::invalid_argument(format!("num_replicas {num_replicas}: must be at least 1")));
        }
        if num_replicas > MAX_REPLICAS_PER_WORKER {
            // Checked here, before a name is made for each of them.
            return Err(Error::invalid_argument(format!(
                "num_replicas {num_replicas}: a worker has at most {MAX_REPLICAS_PER_WORKER} replicas"
            )));
        }
        let names: Vec<String> = (0..num_replicas).map(|i| format!("CPU:{i}")).collect();
        Strategy::new(&names)
    }

    /// Worker `worker_index` of a multi-worker strategy joined by `collective`, with the given
    /// local devices (empty: CPU:0).
    pub fn multi_worker<S: AsRef<str>>(
        collective: &Collective,
        worker_index: usize,
        devices: &[S],
    ) -> Result<Strategy> {
        let (_owned, ptrs) = device_names(devices)?;
        let worker_index = to_c_int(worker_index, "worker_index")?;
        let n = to_c_int(ptrs.len(), "number of devices")?;
        // SAFETY: the collective is live and built for concurrent use by its workers (so a
        // shared reference may be passed as the C API's non-const pointer); ptrs as in new.
        let raw = out_handle(|out| unsafe {
            sys::dinput_strategy_new_multi_worker(out, collective.raw.as_ptr(), worker_index, ptrs.as_ptr(), n)
        })?;
        Ok(Strategy { raw })
    }

    /// Worker `worker_index` of a multi-worker strategy with `num_replicas_in_sync` CPU
    /// replicas in total (INVALID_ARGUMENT when not divisible by the number of workers).
    pub fn multi_worker_cpu(
        collective: &Collective,
        worker_index: usize,
        num_replicas_in_sync: usize,
    ) -> Result<Strategy> {
        let worker_index = to_c_int(worker_index, "worker_index")?;
        let num_replicas_in_sync = to_c_int(num_replicas_in_sync, "num_replicas_in_sync")?;
        // SAFETY: as in multi_worker.
        let raw = out_handle(|out| unsafe {
            sys::dinput_strategy_new_multi_worker_cpu(out, collective.raw.as_ptr(), worker_index, num_replicas_in_sync)
        })?;
        Ok(Strategy { raw })
    }

    pub fn as_raw(&self) -> *const sys::dinput_strategy_t {
        self.raw.as_ptr()
    }

    /// N = W * R.
    pub fn num_replicas_in_sync(&self) -> usize {
        // SAFETY: self.raw is live.
        to_usize(unsafe { sys::dinput_strategy_num_replicas_in_sync(self.raw.as_ptr()) })
    }

    /// R.
    pub fn num_local_replicas(&self) -> usize {
        // SAFETY: self.raw is live.
        to_usize(unsafe { sys::dinput_strategy_num_local_replicas(self.raw.as_ptr()) })
    }

    /// W.
    pub fn num_workers(&self) -> usize {
        // SAFETY: self.raw is live.
        to_usize(unsafe { sys::dinput_strategy_num_workers(self.raw.as_ptr()) })
    }

    pub fn worker_index(&self) -> usize {
        // SAFETY: self.raw is live.
        to_usize(unsafe { sys::dinput_strategy_worker_index(self.raw.as_ptr()) })
    }

    /// Canonical name ("CPU:0", "GPU:1") of local replica `i`.
    pub fn device(&self, i: usize) -> Option<&str> {
        let i = c_int::try_from(i).ok()?;
        // SAFETY: self.raw is live; the name is static for the strategy's life, which the
        // returned borrow of &self cannot outlive.
        let p = unsafe { sys::dinput_strategy_device(self.raw.as_ptr(), i) };
        // SAFETY: as above.
        (!p.is_null()).then(|| unsafe { borrowed_str(p) })
    }

    /// The canonical names of all local replicas.
    pub fn devices(&self) -> Vec<&str> {
        (0..self.num_local_replicas()).filter_map(|i| self.device(i)).collect()
    }

    /// `experimental_distribute_dataset`: `dataset` is batched by the global batch size; it is
    /// auto-sharded across workers, each batch is split among the replicas, and prefetched.
    pub fn distribute_dataset(&self, dataset: &Dataset, options: Option<&InputOptions>) -> Result<DistDataset> {
        let options = options.map_or(std::ptr::null(), |o| o.raw.as_ptr() as *const _);
        // SAFETY: all handles are live for the call (options may be NULL); the result keeps
        // the strategy and dataset alive.
        let raw = out_handle(|out| unsafe {
            sys::dinput_strategy_distribute_dataset(out, self.raw.as_ptr(), dataset.as_raw(), options)
        })?;
        Ok(DistDataset { raw })
    }

    /// `distribute_datasets_from_function`: `dataset_fn` is called once per input pipeline
    /// (per worker, or per local replica in PER_REPLICA mode) and returns that pipeline's
    /// dataset, already sharded and batched by the per-replica batch size.
    ///
    /// dinput.h promises that `dataset_fn` is called only during this call and from this
    /// thread, so it needs neither `Send` nor `'static` and may be `FnMut`.
    pub fn distribute_datasets_from_function<F>(
        &self,
        options: Option<&InputOptions>,
        mut dataset_fn: F,
    ) -> Result<DistDataset>
    where
        F: FnMut(&InputContext<'_>) -> Result<Dataset>,
    {
        unsafe extern "C" fn tramp<F>(
            out: *mut *mut sys::dinput_dataset_t,
            context: *const sys::dinput_input_context_t,
            user_data: *mut c_void,
        ) -> sys::dinput_status_t
        where
            F: FnMut(&InputContext<'_>) -> Result<Dataset>,
        {
            // SAFETY: user_data is `&mut dataset_fn` below, alive for the whole call; calls
            // are sequential on the caller's thread (dinput.h), so this &mut is unique.
            // context is valid during the callback only, which InputContext's lifetime (local
            // to this frame) enforces.
            let f = unsafe { &mut *(user_data as *mut F) };
            let ctx = InputContext { raw: context, _call: PhantomData };
            let result = call("dataset_fn", || f(&ctx).map(Dataset::into_raw));
            // SAFETY: out is the library's valid out-parameter; it takes the dataset.
            unsafe { deliver(out, result) }
        }
        let options = options.map_or(std::ptr::null(), |o| o.raw.as_ptr() as *const _);
        let user_data = &mut dataset_fn as *mut F as *mut c_void;
        // SAFETY: the trampoline matches dinput_dataset_fn; user_data outlives the call and
        // is not freed by the library (free_user_data NULL).
        let raw = out_handle(|out| unsafe {
            sys::dinput_strategy_distribute_datasets_from_function(
                out,
                self.raw.as_ptr(),
                Some(tramp::<F>),
                user_data,
                None,
                options,
            )
        })?;
        Ok(DistDataset { raw })
    }

    /// `distribute_values_from_function`: `value_fn` gives the value of each local replica
    /// (called once per replica, in replica order, during this call).
    ///
    /// The header does not say on which thread `value_fn` runs, only that calls come one per
    /// replica in order; `FnMut + Send` behind a `Mutex` is sound whatever the thread and
    /// lets the closure keep state.
    pub fn distribute_values_from_function<F>(&self, value_fn: F) -> Result<PerReplica>
    where
        F: FnMut(&ValueContext<'_>) -> Result<Element> + Send,
    {
        unsafe extern "C" fn tramp<F>(
            out: *mut *mut sys::dinput_element_t,
            context: *const sys::dinput_value_context_t,
            user_data: *mut c_void,
        ) -> sys::dinput_status_t
        where
            F: FnMut(&ValueContext<'_>) -> Result<Element> + Send,
        {
            // SAFETY: user_data is `&mutex` below, alive for the whole call; Mutex<F> is Sync
            // because F: Send. context is valid during the callback only (see InputContext).
            let mutex = unsafe { &*(user_data as *const Mutex<F>) };
            let ctx = ValueContext { raw: context, _call: PhantomData };
            let result = call("value_fn", || {
                // A poisoned lock only means an earlier call panicked (and failed the call).
                let mut f = mutex.lock().unwrap_or_else(|p| p.into_inner());
                (*f)(&ctx).map(Element::into_raw)
            });
            // SAFETY: out is the library's valid out-parameter; it takes the element.
            unsafe { deliver(out, result) }
        }
        let mutex = Mutex::new(value_fn);
        let user_data = &mutex as *const Mutex<F> as *mut c_void;
        // SAFETY: the trampoline matches dinput_value_fn; user_data outlives the call (the
        // library uses it only during the call: there is no free_user_data).
        let raw = out_handle(|out| unsafe {
            sys::dinput_strategy_distribute_values_from_function(out, self.raw.as_ptr(), Some(tramp::<F>), user_data)
        })?;
        // SAFETY: a new per-replica handle we own.
        Ok(unsafe { PerReplica::from_owned(raw) })
    }

    /// `run`: calls `f` once per local replica, concurrently (replica 0 on this thread, the
    /// others on library threads), with that replica's element of `args` (`None` without
    /// args); the results form a per-replica value.
    ///
    /// `f` is shared by the concurrent calls, hence `Fn + Sync`; it is used only during this
    /// call, so it may borrow local data (no `'static`).
    pub fn run<F>(&self, args: Option<&PerReplica>, f: F) -> Result<PerReplica>
    where
        F: Fn(&ReplicaContext<'_>, Option<&Element>) -> Result<Element> + Sync,
    {
        unsafe extern "C" fn tramp<F>(
            out: *mut *mut sys::dinput_element_t,
            context: *const sys::dinput_replica_context_t,
            args: *const sys::dinput_element_t,
            user_data: *mut c_void,
        ) -> sys::dinput_status_t
        where
            F: Fn(&ReplicaContext<'_>, Option<&Element>) -> Result<Element> + Sync,
        {
            // SAFETY: user_data is `&f` below, alive for the whole call; F: Sync makes the
            // concurrent shared use sound. context and args are valid during the callback
            // only, which the local lifetimes enforce.
            let (f, args) = unsafe { (&*(user_data as *const F), ElementRef::new(args)) };
            let ctx = ReplicaContext { raw: context, _call: PhantomData };
            let result = call("the run closure", || f(&ctx, args.as_deref()).map(Element::into_raw));
            // SAFETY: out is the library's valid out-parameter; it takes the element.
            unsafe { deliver(out, result) }
        }
        let args = args.map_or(std::ptr::null(), |a| a.raw.as_ptr() as *const _);
        let user_data = &f as *const F as *mut c_void;
        // SAFETY: the trampoline matches dinput_replica_fn; user_data outlives the call (run
        // returns after every replica's call has finished); args is NULL or live.
        let raw = out_handle(|out| unsafe {
            sys::dinput_strategy_run(out, self.raw.as_ptr(), Some(tramp::<F>), args, user_data)
        })?;
        // SAFETY: a new per-replica handle we own.
        Ok(unsafe { PerReplica::from_owned(raw) })
    }

    /// Reduces a per-replica value across all replicas of all workers, component by
    /// component. `axis` `None`: element-wise; `Some(0)`: also over the first dimension.
    pub fn reduce(&self, op: ReduceOp, value: &PerReplica, axis: Option<usize>) -> Result<Element> {
        let axis = match axis {
            None => sys::DINPUT_AXIS_NONE,
            Some(a) => to_c_int(a, "axis")?,
        };
        // SAFETY: handles are live for the call; out is a valid out-parameter.
        let raw = out_handle(|out| unsafe {
            sys::dinput_strategy_reduce(out, self.raw.as_ptr(), op as c_int, value.raw.as_ptr(), axis)
        })?;
        // SAFETY: a new element handle we own.
        Ok(unsafe { Element::from_raw(raw.as_ptr()) }.expect("non-null"))
    }
}

impl fmt::Debug for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Strategy")
            .field("devices", &self.devices())
            .field("num_workers", &self.num_workers())
            .field("worker_index", &self.worker_index())
            .field("num_replicas_in_sync", &self.num_replicas_in_sync())
            .finish()
    }
}

/// Replication of input pipelines (tf.distribute.InputReplicationMode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum ReplicationMode {
    PerWorker = sys::DINPUT_REPLICATION_PER_WORKER,
    PerReplica = sys::DINPUT_REPLICATION_PER_REPLICA,
}

/// tf.distribute.InputOptions. Defaults: fetch_to_device true, PER_WORKER,
/// place_dataset_on_device false, per_replica_buffer_size 1.
pub struct InputOptions {
    raw: NonNull<sys::dinput_input_options_t>,
}

// SAFETY: mutable until used (distribute_dataset, distribute_datasets_from_function), then
// frozen (dinput.h); a setter must not overlap any other call, and setters take &mut self.
// Every other call only reads, and may overlap another read.
unsafe impl Send for InputOptions {}
// SAFETY: as above.
unsafe impl Sync for InputOptions {}

impl Drop for InputOptions {
    fn drop(&mut self) {
        // SAFETY: self owns the handle.
        unsafe { sys::dinput_input_options_free(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for InputOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InputOptions")
            .field("fetch_to_device", &self.fetch_to_device())
            .field("replication_mode", &self.replication_mode())
            .field("place_dataset_on_device", &self.place_dataset_on_device())
            .field("per_replica_buffer_size", &self.per_replica_buffer_size())
            .finish()
    }
}

impl InputOptions {
    pub fn new() -> Result<InputOptions> {
        // SAFETY: out is a valid out-parameter.
        let raw = out_handle(|out| unsafe { sys::dinput_input_options_new(out) })?;
        Ok(InputOptions { raw })
    }

    pub fn set_fetch_to_device(&mut self, enable: bool) -> Result<&mut InputOptions> {
        // SAFETY: self.raw is live and exclusively borrowed.
        check(unsafe { sys::dinput_input_options_set_fetch_to_device(self.raw.as_ptr(), enable as c_int) })?;
        Ok(self)
    }

    pub fn set_replication_mode(&mut self, mode: ReplicationMode) -> Result<&mut InputOptions> {
        // SAFETY: self.raw is live and exclusively borrowed.
        check(unsafe { sys::dinput_input_options_set_replication_mode(self.raw.as_ptr(), mode as c_int) })?;
        Ok(self)
    }

    pub fn set_place_dataset_on_device(&mut self, enable: bool) -> Result<&mut InputOptions> {
        // SAFETY: self.raw is live and exclusively borrowed.
        check(unsafe { sys::dinput_input_options_set_place_dataset_on_device(self.raw.as_ptr(), enable as c_int) })?;
        Ok(self)
    }

    /// 0 disables the per-replica buffer.
    pub fn set_per_replica_buffer_size(&mut self, size: usize) -> Result<&mut InputOptions> {
        let size = to_i64(size, "per_replica_buffer_size")?;
        // SAFETY: self.raw is live and exclusively borrowed.
        check(unsafe { sys::dinput_input_options_set_per_replica_buffer_size(self.raw.as_ptr(), size) })?;
        Ok(self)
    }

    // The getters give the value in effect: what was set, else the default.

    pub fn fetch_to_device(&self) -> bool {
        // SAFETY: self.raw is live.
        unsafe { sys::dinput_input_options_fetch_to_device(self.raw.as_ptr()) != 0 }
    }

    pub fn replication_mode(&self) -> ReplicationMode {
        // SAFETY: self.raw is live.
        match unsafe { sys::dinput_input_options_replication_mode(self.raw.as_ptr()) } {
            sys::DINPUT_REPLICATION_PER_REPLICA => ReplicationMode::PerReplica,
            _ => ReplicationMode::PerWorker,
        }
    }

    pub fn place_dataset_on_device(&self) -> bool {
        // SAFETY: self.raw is live.
        unsafe { sys::dinput_input_options_place_dataset_on_device(self.raw.as_ptr()) != 0 }
    }

    pub fn per_replica_buffer_size(&self) -> usize {
        // SAFETY: self.raw is live.
        to_usize(unsafe { sys::dinput_input_options_per_replica_buffer_size(self.raw.as_ptr()) })
    }
}

/// A dataset distributed over a strategy's replicas. `Send + Sync` (immutable).
pub struct DistDataset {
    raw: NonNull<sys::dinput_dist_dataset_t>,
}

// SAFETY: dinput.h lists distributed datasets among the immutable objects that may be shared.
unsafe impl Send for DistDataset {}
// SAFETY: as above.
unsafe impl Sync for DistDataset {}

impl Drop for DistDataset {
    fn drop(&mut self) {
        // SAFETY: self owns the handle.
        unsafe { sys::dinput_dist_dataset_free(self.raw.as_ptr()) }
    }
}

impl DistDataset {
    pub fn as_raw(&self) -> *const sys::dinput_dist_dataset_t {
        self.raw.as_ptr()
    }

    /// How this worker's input is distributed, as JSON: `{"policy":"DATA","split":"even",
    /// "global_batch_size":4,"num_replicas_in_sync":2,"num_workers":1,"worker_index":0}`.
    pub fn plan(&self) -> &str {
        // SAFETY: self.raw is live; the text is borrowed for the dataset's life, which the
        // returned borrow of &self cannot outlive.
        unsafe { borrowed_str(sys::dinput_dist_dataset_plan(self.raw.as_ptr())) }
    }

    /// The per-replica element spec.
    pub fn element_spec(&self) -> Result<Spec> {
        // SAFETY: self.raw is live; out is a valid out-parameter.
        let raw = out_handle(|out| unsafe { sys::dinput_dist_dataset_element_spec(out, self.raw.as_ptr()) })?;
        // SAFETY: a new spec handle we own.
        Ok(unsafe { Spec::from_owned(raw) })
    }

    /// A new iterator (a new epoch). With several workers, every worker must create its
    /// iterators in the same order.
    pub fn iter(&self) -> Result<DistIterator> {
        // SAFETY: self.raw is live; out is a valid out-parameter.
        let raw = out_handle(|out| unsafe { sys::dinput_dist_dataset_iterator(out, self.raw.as_ptr()) })?;
        // SAFETY: a new iterator handle we own.
        Ok(unsafe { DistIterator::from_owned(raw) })
    }

    /// A distributed iterator that continues where the saved job's stopped
    /// ([`DistIterator::save_state`]). Every worker calls it with the same state at the same
    /// point; they check through the collective that they restored the same step. A state
    /// restores on the same number of workers and replicas, or under DATA, FILE or OFF sharding
    /// on any other number with the same global batch. Another pipeline is
    /// [`crate::Code::FailedPrecondition`] naming the operation that differs; a damaged state
    /// is [`crate::Code::DataLoss`].
    pub fn iter_from_state(&self, state: &[u8]) -> Result<DistIterator> {
        // SAFETY: self.raw is live; state is read during the call only; out is valid.
        let raw = out_handle(|out| unsafe {
            sys::dinput_dist_dataset_iterator_from_state(out, self.raw.as_ptr(), state.as_ptr().cast(), state.len())
        })?;
        // SAFETY: a new iterator handle we own.
        Ok(unsafe { DistIterator::from_owned(raw) })
    }
}

impl fmt::Debug for DistDataset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DistDataset").field("plan", &self.plan()).finish()
    }
}

/// One element per local replica. `Send + Sync` (immutable).
pub struct PerReplica {
    raw: NonNull<sys::dinput_per_replica_t>,
}

// SAFETY: dinput.h lists per-replica values among the immutable objects that may be shared.
unsafe impl Send for PerReplica {}
// SAFETY: as above.
unsafe impl Sync for PerReplica {}

impl Drop for PerReplica {
    fn drop(&mut self) {
        // SAFETY: self owns the handle.
        unsafe { sys::dinput_per_replica_free(self.raw.as_ptr()) }
    }
}

impl PerReplica {
    /// # Safety
    /// `raw` must be a live per-replica handle that the caller owns and gives up.
    pub(crate) unsafe fn from_owned(raw: NonNull<sys::dinput_per_replica_t>) -> PerReplica {
        PerReplica { raw }
    }

    /// A per-replica value from one element per local replica.
    pub fn new(elements: &[&Element]) -> Result<PerReplica> {
        let ptrs: Vec<*const sys::dinput_element_t> = elements.iter().map(|e| e.as_raw()).collect();
        // SAFETY: ptrs holds len live element handles for the call; the value keeps its own
        // references.
        let n = to_c_int(ptrs.len(), "number of elements")?;
        let raw = out_handle(|out| unsafe { sys::dinput_per_replica_new(out, ptrs.as_ptr(), n) })?;
        Ok(PerReplica { raw })
    }

    pub fn as_raw(&self) -> *const sys::dinput_per_replica_t {
        self.raw.as_ptr()
    }

    /// Number of local replicas.
    pub fn len(&self) -> usize {
        // SAFETY: self.raw is live. The size is never negative.
        unsafe { sys::dinput_per_replica_size(self.raw.as_ptr()) as usize }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The element of local replica `i`, borrowed.
    pub fn get(&self, i: usize) -> Option<ElementRef<'_>> {
        // An index past the C API's int is past the end as well.
        let i = c_int::try_from(i).ok()?;
        // SAFETY: self.raw is live; the element stays valid while the value lives, which the
        // returned borrow of &self enforces.
        unsafe { ElementRef::new(sys::dinput_per_replica_get(self.raw.as_ptr(), i)) }
    }

    /// The elements of the local replicas in replica order (tf's `local_results`).
    pub fn local_results(&self) -> Vec<ElementRef<'_>> {
        self.iter().collect()
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = ElementRef<'_>> + '_ {
        (0..self.len()).map(move |i| self.get(i).expect("index below len"))
    }

    /// Every component of every local replica, replica by replica (replica `r`'s component
    /// `c` at `r * components + c`), in one call into the library
    /// (`dinput_per_replica_tensor_infos`). INVALID_ARGUMENT when the replicas' elements
    /// differ in their number of components.
    pub fn tensors(&self) -> Result<Vec<TensorRef<'_>>> {
        // SAFETY: self.raw is live; the tensors stay valid while the value lives, which the
        // borrow of &self enforces.
        unsafe {
            tensors_from_infos(|count, infos, cap| {
                sys::dinput_per_replica_tensor_infos(count, infos, cap, self.raw.as_ptr())
            })
        }
    }

    /// A new handle to the same value (no data copied). `Clone` does the same and panics
    /// only where this fails, which is when memory runs out.
    pub fn try_clone(&self) -> Result<PerReplica> {
        // SAFETY: self.raw is live; out is a valid out-parameter.
        let raw = out_handle(|out| unsafe { sys::dinput_per_replica_ref(out, self.raw.as_ptr()) })?;
        Ok(PerReplica { raw })
    }
}

impl Clone for PerReplica {
    fn clone(&self) -> PerReplica {
        self.try_clone().expect("dinput_per_replica_ref failed")
    }
}

impl fmt::Debug for PerReplica {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// What a `dataset_fn` is told (tf.distribute.InputContext). Valid during the call only.
pub struct InputContext<'a> {
    raw: *const sys::dinput_input_context_t,
    _call: PhantomData<&'a ()>,
}

impl fmt::Debug for InputContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InputContext")
            .field("num_input_pipelines", &self.num_input_pipelines())
            .field("input_pipeline_id", &self.input_pipeline_id())
            .field("num_replicas_in_sync", &self.num_replicas_in_sync())
            .finish()
    }
}

impl InputContext<'_> {
    pub fn num_input_pipelines(&self) -> usize {
        // SAFETY: raw is valid for the callback, which this borrow cannot outlive.
        to_usize(unsafe { sys::dinput_input_context_num_input_pipelines(self.raw) })
    }

    pub fn input_pipeline_id(&self) -> usize {
        // SAFETY: as above.
        to_usize(unsafe { sys::dinput_input_context_input_pipeline_id(self.raw) })
    }

    pub fn num_replicas_in_sync(&self) -> usize {
        // SAFETY: as above.
        to_usize(unsafe { sys::dinput_input_context_num_replicas_in_sync(self.raw) })
    }

    /// `global_batch_size / num_replicas_in_sync`; INVALID_ARGUMENT when it does not divide.
    pub fn per_replica_batch_size(&self, global_batch_size: usize) -> Result<usize> {
        let global_batch_size = to_i64(global_batch_size, "global_batch_size")?;
        let mut out = 0i64;
        // SAFETY: as above; out is a valid out-parameter.
        check(unsafe { sys::dinput_input_context_get_per_replica_batch_size(&mut out, self.raw, global_batch_size) })?;
        Ok(to_usize(out))
    }
}

/// What a `value_fn` is told. Valid during the call only.
pub struct ValueContext<'a> {
    raw: *const sys::dinput_value_context_t,
    _call: PhantomData<&'a ()>,
}

impl fmt::Debug for ValueContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ValueContext")
            .field("replica_id_in_sync_group", &self.replica_id_in_sync_group())
            .field("num_replicas_in_sync", &self.num_replicas_in_sync())
            .finish()
    }
}

impl ValueContext<'_> {
    pub fn replica_id_in_sync_group(&self) -> usize {
        // SAFETY: raw is valid for the callback, which this borrow cannot outlive.
        to_usize(unsafe { sys::dinput_value_context_replica_id_in_sync_group(self.raw) })
    }

    pub fn num_replicas_in_sync(&self) -> usize {
        // SAFETY: as above.
        to_usize(unsafe { sys::dinput_value_context_num_replicas_in_sync(self.raw) })
    }
}

/// What a `run` closure is told (tf.distribute.ReplicaContext). Valid during the call only.
pub struct ReplicaContext<'a> {
    raw: *const sys::dinput_replica_context_t,
    _call: PhantomData<&'a ()>,
}

impl fmt::Debug for ReplicaContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReplicaContext")
            .field("replica_id_in_sync_group", &self.replica_id_in_sync_group())
            .field("num_replicas_in_sync", &self.num_replicas_in_sync())
            .field("device", &self.device())
            .finish()
    }
}

impl ReplicaContext<'_> {
    pub fn replica_id_in_sync_group(&self) -> usize {
        // SAFETY: raw is valid for the callback, which this borrow cannot outlive.
        to_usize(unsafe { sys::dinput_replica_context_replica_id_in_sync_group(self.raw) })
    }

    pub fn num_replicas_in_sync(&self) -> usize {
        // SAFETY: as above.
        to_usize(unsafe { sys::dinput_replica_context_num_replicas_in_sync(self.raw) })
    }

    /// Canonical device name of the replica, e.g. "CPU:1".
    pub fn device(&self) -> &str {
        // SAFETY: as above; the name lives at least as long as the context.
        unsafe { borrowed_str(sys::dinput_replica_context_device(self.raw)) }
    }
}
