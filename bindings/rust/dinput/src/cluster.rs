//! Clusters: a worker process's place in a multi-process job (its rank, the number of
//! workers, where they meet), read from what the launcher set (TF_CONFIG, srun, torchrun,
//! mpirun, DINPUT_* variables) or given explicitly.

use std::ffi::c_int;
use std::fmt;
use std::ptr::NonNull;
use std::time::Duration;

use dinput_sys as sys;

use crate::error::{borrowed_str, c_string, check, out_handle, to_c_int, to_usize, Result};

/// A worker process's place in a multi-process job. Immutable, so `Send + Sync`.
pub struct Cluster {
    raw: NonNull<sys::dinput_cluster_t>,
}

// SAFETY: a cluster handle is immutable after it is made (dinput.h, "Clusters"): reading it
// from several threads at once is allowed, and so is freeing it from another thread.
unsafe impl Send for Cluster {}
// SAFETY: as above.
unsafe impl Sync for Cluster {}

impl Drop for Cluster {
    fn drop(&mut self) {
        // SAFETY: self.raw is live and owned by this value.
        unsafe { sys::dinput_cluster_free(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for Cluster {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cluster")
            .field("source", &self.source())
            .field("rank", &self.rank())
            .field("world_size", &self.world_size())
            .field("rdzv_url", &self.rdzv_url())
            .finish()
    }
}

impl Cluster {
    /// Resolves the cluster from this process's environment. `source`: "auto", "tf_config",
    /// "slurm", "torchrun", "mpi" or "explicit" (the DINPUT_* variables). A malformed or
    /// missing variable is INVALID_ARGUMENT naming it and its value; "auto" finding nothing
    /// is NOT_FOUND.
    pub fn resolve(source: &str) -> Result<Cluster> {
        let source = c_string(source, "source")?;
        // SAFETY: `source` is a NUL-terminated string that outlives the call.
        let raw = out_handle(|out| unsafe { sys::dinput_cluster_resolve(out, source.as_ptr()) })?;
        Ok(Cluster { raw })
    }

    /// A cluster given explicitly: `rank` in `0..world_size`, and the rendezvous URL
    /// (tcp://HOST:PORT, file://DIR, redis://HOST:PORT; "" for none).
    pub fn new(rank: usize, world_size: usize, rdzv_url: &str) -> Result<Cluster> {
        let url = c_string(rdzv_url, "rdzv_url")?;
        let (rank, world_size) = (to_c_int(rank, "rank")?, to_c_int(world_size, "world_size")?);
        // SAFETY: `url` is a NUL-terminated string that outlives the call.
        let raw = out_handle(|out| unsafe { sys::dinput_cluster_new(out, rank, world_size, url.as_ptr()) })?;
        Ok(Cluster { raw })
    }

    /// The raw handle, for the calls of [`crate::sys`]; valid while `self` lives.
    pub fn as_ptr(&self) -> *const sys::dinput_cluster_t {
        self.raw.as_ptr()
    }

    /// This process's worker index in `0..world_size()`; `None` for a TF_CONFIG ps or
    /// evaluator task, which reads no input.
    pub fn rank(&self) -> Option<usize> {
        // SAFETY: self.raw is live.
        usize::try_from(unsafe { sys::dinput_cluster_rank(self.raw.as_ptr()) }).ok()
    }
    /// The number of workers that read input.
    pub fn world_size(&self) -> usize {
        // SAFETY: self.raw is live.
        to_usize(unsafe { sys::dinput_cluster_world_size(self.raw.as_ptr()) })
    }
    /// The index among the job's workers on this host, when the launcher says.
    pub fn local_rank(&self) -> Option<usize> {
        // SAFETY: self.raw is live.
        usize::try_from(unsafe { sys::dinput_cluster_local_rank(self.raw.as_ptr()) }).ok()
    }
    /// The number of the job's workers on this host, when the launcher says.
    pub fn local_world_size(&self) -> Option<usize> {
        // SAFETY: self.raw is live.
        usize::try_from(unsafe { sys::dinput_cluster_local_world_size(self.raw.as_ptr()) }).ok()
    }
    /// The rendezvous URL; "" when none is known.
    pub fn rdzv_url(&self) -> &str {
        // SAFETY: the string lives as long as the handle, which `self` keeps.
        unsafe { borrowed_str(sys::dinput_cluster_rdzv_url(self.raw.as_ptr())) }
    }
    /// The host of the worker of rank 0; "" when unknown.
    pub fn coordinator_host(&self) -> &str {
        // SAFETY: as for rdzv_url.
        unsafe { borrowed_str(sys::dinput_cluster_coordinator_host(self.raw.as_ptr())) }
    }
    /// The launcher's name of the job; "" when it gives none.
    pub fn job_id(&self) -> &str {
        // SAFETY: as for rdzv_url.
        unsafe { borrowed_str(sys::dinput_cluster_job_id(self.raw.as_ptr())) }
    }
    /// "tf_config", "slurm", "torchrun", "mpi" or "explicit".
    pub fn source(&self) -> &str {
        // SAFETY: as for rdzv_url.
        unsafe { borrowed_str(sys::dinput_cluster_source(self.raw.as_ptr())) }
    }
    /// TF_CONFIG's task type and index; `None` for the other sources.
    pub fn task(&self) -> Option<(&str, usize)> {
        // SAFETY: as for rdzv_url.
        let kind = unsafe { borrowed_str(sys::dinput_cluster_task_type(self.raw.as_ptr())) };
        // SAFETY: self.raw is live.
        let index = unsafe { sys::dinput_cluster_task_index(self.raw.as_ptr()) };
        (!kind.is_empty()).then_some((kind, to_usize(index)))
    }
    /// false for a TF_CONFIG ps or evaluator task, which reads no input.
    pub fn is_input_worker(&self) -> bool {
        // SAFETY: self.raw is live.
        unsafe { sys::dinput_cluster_is_input_worker(self.raw.as_ptr()) != 0 }
    }
}

/// Options of [`crate::Collective::from_cluster`]: the timeout, the job id, and the network
/// address this worker listens on. The collective copies them, so they may be changed or
/// dropped afterwards.
pub struct CollectiveOptions {
    raw: NonNull<sys::dinput_collective_options_t>,
}

// SAFETY: a plain value; setters take &mut self, and the getters and from_cluster only read,
// so no call on it overlaps a write.
unsafe impl Send for CollectiveOptions {}
// SAFETY: as above.
unsafe impl Sync for CollectiveOptions {}

impl Drop for CollectiveOptions {
    fn drop(&mut self) {
        // SAFETY: self owns the handle.
        unsafe { sys::dinput_collective_options_free(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for CollectiveOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CollectiveOptions")
            .field("timeout", &self.timeout())
            .field("job_id", &self.job_id())
            .field("interface", &self.interface())
            .field("address", &self.address())
            .field("allow_loopback", &self.allow_loopback())
            .finish()
    }
}

impl CollectiveOptions {
    /// Every setting at its default.
    pub fn new() -> Result<CollectiveOptions> {
        // SAFETY: out is a valid out-parameter.
        let raw = out_handle(|out| unsafe { sys::dinput_collective_options_new(out) })?;
        Ok(CollectiveOptions { raw })
    }

    /// The raw handle, for the calls of [`crate::sys`]; valid while `self` lives.
    pub fn as_ptr(&self) -> *const sys::dinput_collective_options_t {
        self.raw.as_ptr()
    }

    /// How long the rendezvous and every later wait may take (`None`: the default, 60 s).
    pub fn set_timeout(&mut self, timeout: Option<Duration>) -> Result<&mut CollectiveOptions> {
        let ms = match timeout {
            None => 0,
            // A zero Duration would mean "default" to the library; the shortest wait it can
            // express is 1 ms.
            Some(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX).max(1),
        };
        // SAFETY: self.raw is live and exclusively borrowed.
        check(unsafe { sys::dinput_collective_options_set_timeout_ms(self.raw.as_ptr(), ms) })?;
        Ok(self)
    }

    /// Namespaces the rendezvous keys; "" (the default): the cluster's job id, else "dinput".
    pub fn set_job_id(&mut self, job_id: &str) -> Result<&mut CollectiveOptions> {
        let job_id = c_string(job_id, "job_id")?;
        // SAFETY: self.raw is live and exclusively borrowed; job_id outlives the call.
        check(unsafe { sys::dinput_collective_options_set_job_id(self.raw.as_ptr(), job_id.as_ptr()) })?;
        Ok(self)
    }

    /// The network interface (such as "eth0") whose address this worker listens on; ""
    /// (the default): DINPUT_GLOO_IFACE, else the address.
    pub fn set_interface(&mut self, name: &str) -> Result<&mut CollectiveOptions> {
        let name = c_string(name, "interface")?;
        // SAFETY: self.raw is live and exclusively borrowed; name outlives the call.
        check(unsafe { sys::dinput_collective_options_set_interface(self.raw.as_ptr(), name.as_ptr()) })?;
        Ok(self)
    }

    /// A host name or address of this host to listen on; "" (the default):
    /// DINPUT_GLOO_ADDRESS, else the address this host's name resolves to.
    pub fn set_address(&mut self, address: &str) -> Result<&mut CollectiveOptions> {
        let address = c_string(address, "address")?;
        // SAFETY: self.raw is live and exclusively borrowed; address outlives the call.
        check(unsafe { sys::dinput_collective_options_set_address(self.raw.as_ptr(), address.as_ptr()) })?;
        Ok(self)
    }

    /// Whether this worker may listen on a loopback address in a job of several workers that
    /// does not otherwise show it runs on one host (a launcher's local world size equal to
    /// the world size, or a loopback rendezvous host). Unset: DINPUT_GLOO_ALLOW_LOOPBACK=1
    /// allows it.
    pub fn set_allow_loopback(&mut self, allow: bool) -> Result<&mut CollectiveOptions> {
        // SAFETY: self.raw is live and exclusively borrowed.
        check(unsafe { sys::dinput_collective_options_set_allow_loopback(self.raw.as_ptr(), allow as c_int) })?;
        Ok(self)
    }

    /// The timeout in effect (60 s by default).
    pub fn timeout(&self) -> Duration {
        // SAFETY: self.raw is live.
        let ms = unsafe { sys::dinput_collective_options_timeout_ms(self.raw.as_ptr()) };
        Duration::from_millis(u64::try_from(ms).unwrap_or(0))
    }

    /// The job id set ("" when unset).
    pub fn job_id(&self) -> &str {
        // SAFETY: self.raw is live; the string lives until the next set, which needs &mut self.
        unsafe { borrowed_str(sys::dinput_collective_options_job_id(self.raw.as_ptr())) }
    }

    /// The interface set ("" when unset).
    pub fn interface(&self) -> &str {
        // SAFETY: as for job_id.
        unsafe { borrowed_str(sys::dinput_collective_options_interface(self.raw.as_ptr())) }
    }

    /// The address set ("" when unset).
    pub fn address(&self) -> &str {
        // SAFETY: as for job_id.
        unsafe { borrowed_str(sys::dinput_collective_options_address(self.raw.as_ptr())) }
    }

    /// Whether allow_loopback was set true.
    pub fn allow_loopback(&self) -> bool {
        // SAFETY: self.raw is live.
        unsafe { sys::dinput_collective_options_allow_loopback(self.raw.as_ptr()) != 0 }
    }
}
