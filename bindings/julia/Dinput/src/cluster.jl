# Clusters: a worker process's place in a multi-process job.

"""
    Cluster(rank, world_size, rdzv_url="")
    resolve_cluster(source="auto") -> Cluster

A worker process's place in a multi-process job: its rank, the number of workers, where they
meet (the rendezvous URL: `tcp://HOST:PORT`, `file://DIR`, `redis://HOST:PORT`) and the
launcher's name of the job. `resolve_cluster` reads it from the variables a launcher set
(`source`: `"auto"`, `"tf_config"`, `"slurm"`, `"torchrun"`, `"mpi"`, or `"explicit"` for
the `DINPUT_*` variables); `Cluster(rank, world_size, url)` gives it explicitly. A malformed
or missing variable throws `:INVALID_ARGUMENT` naming it and its value; `"auto"` finding no
launcher's variables throws `:NOT_FOUND`.

The fields are read with `Dinput.rank`, `Dinput.world_size`, `Dinput.local_rank`,
`Dinput.local_world_size` (`-1`: unknown), `Dinput.rdzv_url`, `Dinput.coordinator_host`,
`Dinput.job_id`, `Dinput.source`, `Dinput.task_type`, `Dinput.task_index` (TF_CONFIG only)
and `Dinput.is_input_worker` (`false` for a TF_CONFIG ps or evaluator task).
"""
mutable struct Cluster <: Handle
    ptr::Ptr{Cvoid}
    function Cluster(ptr::Ptr{Cvoid})
        c = new(ptr)
        finalizer(_finalize, c)
        return c
    end
end

_free(::Cluster, p::Ptr{Cvoid}) = LibDinput.dinput_cluster_free(p)

Cluster(rank::Integer, world_size::Integer, rdzv_url::AbstractString="") =
    Cluster(_out(o -> LibDinput.dinput_cluster_new(o, rank, world_size, rdzv_url)))

resolve_cluster(source::AbstractString="auto") =
    Cluster(_out(o -> LibDinput.dinput_cluster_resolve(o, source)))

rank(c::Cluster) = Int(LibDinput.dinput_cluster_rank(c))
world_size(c::Cluster) = Int(LibDinput.dinput_cluster_world_size(c))
local_rank(c::Cluster) = Int(LibDinput.dinput_cluster_local_rank(c))
local_world_size(c::Cluster) = Int(LibDinput.dinput_cluster_local_world_size(c))
rdzv_url(c::Cluster) = _cstring(LibDinput.dinput_cluster_rdzv_url(c))
coordinator_host(c::Cluster) = _cstring(LibDinput.dinput_cluster_coordinator_host(c))
job_id(c::Cluster) = _cstring(LibDinput.dinput_cluster_job_id(c))
source(c::Cluster) = _cstring(LibDinput.dinput_cluster_source(c))
task_type(c::Cluster) = _cstring(LibDinput.dinput_cluster_task_type(c))
task_index(c::Cluster) = Int(LibDinput.dinput_cluster_task_index(c))
is_input_worker(c::Cluster) = LibDinput.dinput_cluster_is_input_worker(c) != 0

function Base.show(io::IO, c::Cluster)
    if isopen(c)
        print(io, "Cluster(", source(c), ": rank ", rank(c), " of ", world_size(c), ", ",
            repr(rdzv_url(c)), ")")
    else
        print(io, "Cluster(closed)")
    end
end
