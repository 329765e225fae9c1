# Strategies and distribution (the tf.distribute layer).

# ---------------------------------------------------------------------------------------
# Collectives
# ---------------------------------------------------------------------------------------

"""
    Collective(num_workers; timeout_ms=0)

Joins the workers of a multi-worker [`Strategy`](@ref) that run as threads of this process
(dinput's in-process collective). Every collective wait is bounded by `timeout_ms`
(0: 60000); a worker that does not arrive in time makes it fail with `:DEADLINE_EXCEEDED`.

Each worker must run on its own Julia thread (`Threads.@spawn`, with `julia -t N`): a worker
waits for the others inside dinput, which blocks its thread.
"""
mutable struct Collective <: Handle
    ptr::Ptr{Cvoid}
    function Collective(ptr::Ptr{Cvoid})
        c = new(ptr)
        finalizer(_finalize, c)
        return c
    end
end

_free(::Collective, p::Ptr{Cvoid}) = LibDinput.dinput_collective_free(p)

Collective(num_workers::Integer; timeout_ms::Integer=0) =
    Collective(_out(o -> LibDinput.dinput_collective_new_in_process(o, num_workers, timeout_ms)))

"""
    Collective(cluster::Cluster; timeout_ms=0, job_id="", interface="", address="",
               allow_loopback=nothing)

A collective joining the worker processes of a job over TCP: this process is worker
`rank(cluster)`, and the workers meet at the cluster's rendezvous URL. Returns once every
worker has connected. `timeout_ms` bounds the rendezvous and every later wait (0: 60 s);
`job_id` ("": the cluster's) namespaces the rendezvous keys. `interface` (such as "eth0") or
`address` is where this worker listens ("": `DINPUT_GLOO_IFACE`, else `DINPUT_GLOO_ADDRESS`,
else the address this host's name resolves to). With several workers, a loopback address is
refused (`:FAILED_PRECONDITION`) unless the job shows it runs on one host (a launcher's local
world size equal to the world size, or a loopback rendezvous host) or `allow_loopback` is
`true` (`nothing`: `DINPUT_GLOO_ALLOW_LOOPBACK=1` allows it).
"""
function Collective(cluster::Cluster; timeout_ms::Integer=0, job_id::AbstractString="",
                    interface::AbstractString="", address::AbstractString="",
                    allow_loopback::Union{Bool,Nothing}=nothing)
    options = _out(LibDinput.dinput_collective_options_new)
    try
        check(LibDinput.dinput_collective_options_set_timeout_ms(options, timeout_ms))
        check(LibDinput.dinput_collective_options_set_job_id(options, job_id))
        check(LibDinput.dinput_collective_options_set_interface(options, interface))
        check(LibDinput.dinput_collective_options_set_address(options, address))
        if allow_loopback !== nothing
            check(LibDinput.dinput_collective_options_set_allow_loopback(options, allow_loopback))
        end
        return Collective(_out(o -> LibDinput.dinput_collective_new_from_cluster(o, cluster, options)))
    finally
        LibDinput.dinput_collective_options_free(options)
    end
end

num_workers(c::Collective) = Int(LibDinput.dinput_collective_num_workers(c))

"""
    abort!(c::Collective, code::Symbol, message) -> c

Fails every pending and future wait of every worker with `code` (not `:OK`) and `message`:
a worker that cannot continue releases its peers at once instead of leaving them to time
out. Irreversible.
"""
function abort!(c::Collective, code::Symbol, message::AbstractString)
    check(LibDinput.dinput_collective_abort(c, status_code(code), message))
    return c
end

# ---------------------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------------------

"""
    Strategy(devices=String[])
    Strategy(collective::Collective, worker_index; devices=nothing, num_replicas_in_sync=nothing)

A set of replica devices, as a `tf.distribute` strategy. `devices` are names like
`"CPU:0"`, `"GPU:1"` (also `"/cpu:0"`, `"/job:worker/device:GPU:1"`); none gives the default
strategy, one replica on `"CPU:0"`.

The second form is worker `worker_index` of a multi-worker strategy joined by `collective`:
every worker has the same local `devices`, or give `num_replicas_in_sync` for that many CPU
replicas in total (which must be divisible by the number of workers).
"""
mutable struct Strategy <: Handle
    ptr::Ptr{Cvoid}
    function Strategy(ptr::Ptr{Cvoid})
        s = new(ptr)
        finalizer(_finalize, s)
        return s
    end
end

_free(::Strategy, p::Ptr{Cvoid}) = LibDinput.dinput_strategy_free(p)

function Strategy(devices::AbstractVector{<:AbstractString}=String[])
    return _with_cstrings(devices) do p, n
        Strategy(_out(o -> LibDinput.dinput_strategy_new(o, p, n)))
    end
end

function Strategy(collective::Collective, worker_index::Integer;
                  devices::Union{Nothing,AbstractVector{<:AbstractString}}=nothing,
                  num_replicas_in_sync::Union{Nothing,Integer}=nothing)
    if num_replicas_in_sync !== nothing
        devices === nothing ||
            throw(ArgumentError("give the devices or num_replicas_in_sync, not both"))
        return Strategy(_out(o -> LibDinput.dinput_strategy_new_multi_worker_cpu(
            o, collective, worker_index, num_replicas_in_sync)))
    end
    return _with_cstrings(devices === nothing ? String[] : devices) do p, n
        Strategy(_out(o -> LibDinput.dinput_strategy_new_multi_worker(
            o, collective, worker_index, p, n)))
    end
end

"""
    num_replicas_in_sync(s::Strategy) -> Int

The number of replicas of all workers (workers × local replicas).
"""
num_replicas_in_sync(s::Strategy) = Int(LibDinput.dinput_strategy_num_replicas_in_sync(s))

"""
    num_local_replicas(s::Strategy) -> Int
"""
num_local_replicas(s::Strategy) = Int(LibDinput.dinput_strategy_num_local_replicas(s))

"""
    num_workers(s::Union{Strategy,Collective}) -> Int
"""
num_workers(s::Strategy) = Int(LibDinput.dinput_strategy_num_workers(s))

"""
    worker_index(s::Strategy) -> Int
"""
worker_index(s::Strategy) = Int(LibDinput.dinput_strategy_worker_index(s))

"""
    devices(s::Strategy) -> Vector{String}

The canonical names of the local replicas' devices, in replica order (`"CPU:0"`, ...).
"""
function devices(s::Strategy)
    GC.@preserve s begin    # the names live as long as the strategy
        return String[_cstring(LibDinput.dinput_strategy_device(s, i))
                      for i in 0:num_local_replicas(s)-1]
    end
end

function Base.show(io::IO, s::Strategy)
    isopen(s) || return print(io, "Strategy(<closed>)")
    print(io, "Strategy(", repr(devices(s)), "; worker ", worker_index(s), " of ",
          num_workers(s), ")")
end

# ---------------------------------------------------------------------------------------
# Input options
# ---------------------------------------------------------------------------------------

const REPLICATION_MODES = Dict{Symbol,Cint}(
    :per_worker => LibDinput.DINPUT_REPLICATION_PER_WORKER,
    :per_replica => LibDinput.DINPUT_REPLICATION_PER_REPLICA,
)

"""
    InputOptions(; fetch_to_device=true, replication_mode=:per_worker,
                 place_dataset_on_device=false, per_replica_buffer_size=1)

Options of distributed input (as `tf.distribute.InputOptions`). `replication_mode` is
`:per_worker` or `:per_replica` (the latter with [`distribute_datasets_from_function`](@ref)
only). `per_replica_buffer_size` batches are kept ready per replica, produced on a
background thread; 0 reads on the caller's thread (for `distribute_datasets_from_function`).
The values are kept in the fields of the same names.
"""
mutable struct InputOptions <: Handle
    ptr::Ptr{Cvoid}
    fetch_to_device::Bool
    replication_mode::Symbol
    place_dataset_on_device::Bool
    per_replica_buffer_size::Int
    function InputOptions(ptr::Ptr{Cvoid}, fetch::Bool, mode::Symbol, place::Bool, buffer::Int)
        o = new(ptr, fetch, mode, place, buffer)
        finalizer(_finalize, o)
        return o
    end
end

_free(::InputOptions, p::Ptr{Cvoid}) = LibDinput.dinput_input_options_free(p)

function InputOptions(; fetch_to_device::Bool=true, replication_mode::Symbol=:per_worker,
                      place_dataset_on_device::Bool=false, per_replica_buffer_size::Integer=1)
    mode = get(REPLICATION_MODES, replication_mode) do
        throw(ArgumentError("unknown replication mode :$replication_mode; " *
                            "expected :per_worker or :per_replica"))
    end
    o = InputOptions(_out(LibDinput.dinput_input_options_new), fetch_to_device,
                     replication_mode, place_dataset_on_device, Int(per_replica_buffer_size))
    check(LibDinput.dinput_input_options_set_fetch_to_device(o, fetch_to_device))
    check(LibDinput.dinput_input_options_set_replication_mode(o, mode))
    check(LibDinput.dinput_input_options_set_place_dataset_on_device(o, place_dataset_on_device))
    check(LibDinput.dinput_input_options_set_per_replica_buffer_size(o, per_replica_buffer_size))
    return o
end

_options_arg(o::Nothing) = C_NULL
_options_arg(o::InputOptions) = o

# ---------------------------------------------------------------------------------------
# Distributed datasets
# ---------------------------------------------------------------------------------------

"""
    DistributedDataset

A dataset distributed over the replicas of a strategy, from [`distribute_dataset`](@ref)
or [`distribute_datasets_from_function`](@ref). Iterating it yields one [`PerReplica`](@ref)
value per step; every `for` loop is a new iterator (a new epoch). Steps go on while any
replica of any worker has data; replicas without data get an empty (0-row) batch.
"""
mutable struct DistributedDataset <: Handle
    ptr::Ptr{Cvoid}
    function DistributedDataset(ptr::Ptr{Cvoid})
        d = new(ptr)
        finalizer(_finalize, d)
        return d
    end
end

_free(::DistributedDataset, p::Ptr{Cvoid}) = LibDinput.dinput_dist_dataset_free(p)

"""
    distribute_dataset(strategy, ds; options=nothing) -> DistributedDataset

`strategy.experimental_distribute_dataset(ds)`: `ds` is batched by the global batch size;
dinput auto-shards it across workers (by the dataset's auto-shard policy, see
[`Options`](@ref)), splits every batch among the replicas and prefetches.

The pipeline is read on dinput's producer thread, so a dataset with Julia callbacks
(`map`, `filter`, `from_generator`, ...) needs Julia ≥ 1.9 here.
"""
function distribute_dataset(strategy::Strategy, ds::Dataset;
                            options::Union{Nothing,InputOptions}=nothing)
    if ds.julia_callbacks
        _require_foreign_threads("distribute_dataset of a dataset with Julia callbacks")
    end
    return DistributedDataset(_out(o -> LibDinput.dinput_strategy_distribute_dataset(
        o, strategy, ds, _options_arg(options))))
end

"""
    distribute_datasets_from_function(f, strategy; options=nothing) -> DistributedDataset

`strategy.distribute_datasets_from_function(f)`: `f(ctx::InputContext)` returns the
`Dataset` of one input pipeline, already sharded (by `ctx.num_input_pipelines` and
`ctx.input_pipeline_id`) and batched by the per-replica batch size
([`per_replica_batch_size`](@ref)). It is called during this call, on this thread, once per
worker (or per local replica with `replication_mode=:per_replica`); dinput neither shards
nor rebatches.

```julia
dist = distribute_datasets_from_function(strategy) do ctx
    ds = shard(Dataset(0:63), ctx.num_input_pipelines, ctx.input_pipeline_id)
    batch(ds, per_replica_batch_size(ctx, 16))
end
```
"""
function distribute_datasets_from_function(f, strategy::Strategy;
                                           options::Union{Nothing,InputOptions}=nothing)
    _ptr(strategy)     # fail on closed handles before the callback is registered
    options === nothing || _ptr(options)
    buffer = options === nothing ? 1 : options.per_replica_buffer_size
    data = _register(DatasetFnCallback(f, buffer))
    return DistributedDataset(_out(o -> LibDinput.dinput_strategy_distribute_datasets_from_function(
        o, strategy, _dataset_fn(), data, _free_fn(), _options_arg(options))))
end

"""
    plan(dist::DistributedDataset) -> String

How this worker's input is distributed, as JSON text:
`{"policy":"DATA","split":"even","global_batch_size":4,"num_replicas_in_sync":2,...}`.
"""
plan(d::DistributedDataset) = _cstring(LibDinput.dinput_dist_dataset_plan(d))

"""
    element_spec(dist::DistributedDataset) -> Vector{TensorSpec}

The per-replica element spec; the batch dimension is unknown when partial batches can occur.
"""
element_spec(d::DistributedDataset) =
    _take_spec(_out(o -> LibDinput.dinput_dist_dataset_element_spec(o, d)))

function iterator(d::DistributedDataset)
    _drain_pending_frees()
    return DistributedIterator(_out(o -> LibDinput.dinput_dist_dataset_iterator(o, d)))
end

function _next_or_nothing(it::DistributedIterator)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    status = LibDinput.dinput_dist_iterator_get_next(out, it)
    status == LibDinput.DINPUT_OUT_OF_RANGE && return nothing
    check(status)
    return PerReplica(out[])
end

get_next(it::DistributedIterator) =
    PerReplica(_out(o -> LibDinput.dinput_dist_iterator_get_next(o, it)))

get_next_as_optional(it::DistributedIterator) =
    Optional(_out(o -> LibDinput.dinput_dist_iterator_get_next_as_optional(o, it)), true)

"""
    get_next_steps(it::DistributedIterator, max_steps::Integer) -> Vector{PerReplica}

Up to `max_steps` steps in one call into the library, the steps as many `get_next` calls
would return them, in order. Fewer without an error: the data ended, or an error came, after
the last of them, and the next call throws that (`OUT_OF_RANGE` at the end); a step taken is
never lost. Every step returned counts as taken for `save_state`.
"""
function get_next_steps(it::DistributedIterator, max_steps::Integer)
    max_steps > 0 || throw(ArgumentError("get_next_steps: max_steps must be positive"))
    raw = fill(C_NULL, Int(max_steps))
    n = Ref{Csize_t}(0)
    check(LibDinput.dinput_dist_iterator_get_next_steps(n, raw, C_NULL, max_steps, 0, it))
    return [PerReplica(raw[i]) for i in 1:Int(n[])]
end

"""
    copy_steps!(buf::DenseArray{T}, it::DistributedIterator, shape, max_steps::Integer)
        -> (n, unfit::Union{PerReplica,Nothing})

Up to `max_steps` steps copied into `buf` in one call into the library, for loops that want
small steps as one block of memory: every tensor of a step (replica by replica, component by
component) must be of element type `T` and of `shape` (dinput's order, batch first) to be
copied, one after another in dinput's row-major layout, so that
`reshape(buf, reverse(shape)..., tensors_per_step, max_steps)` views them batch-last (README,
"Batch first or batch last"). Returns the number of steps copied and, when a step did not fit
(another shape, such as a short last batch, another element type, a GPU tensor), that step
after them; the next call goes on after it. `buf` too small for `max_steps` steps throws
`INVALID_ARGUMENT` before any step is taken; the end of data throws `OUT_OF_RANGE`, alone.
Every step copied or returned counts as taken for `save_state`.
"""
function copy_steps!(buf::DenseArray{T}, it::DistributedIterator, shape,
                     max_steps::Integer) where {T}
    max_steps > 0 || throw(ArgumentError("copy_steps!: max_steps must be positive"))
    dims = Int64[d for d in shape]
    n = Ref{Csize_t}(0)
    unfit = Ref{Ptr{Cvoid}}(C_NULL)
    check(LibDinput.dinput_dist_iterator_copy_steps(n, unfit, buf, sizeof(buf), _dtype_code(T),
                                                    dims, length(dims), max_steps, it))
    return Int(n[]), unfit[] == C_NULL ? nothing : PerReplica(unfit[])
end

element_spec(it::DistributedIterator) =
    _take_spec(_out(o -> LibDinput.dinput_dist_iterator_element_spec(o, it)))

function statistic(it::DistributedIterator, name::AbstractString)
    out = Ref{Int64}(0)
    check(LibDinput.dinput_dist_iterator_statistic(out, it, name))
    return Int(out[])
end

"""
    save_state(it::DistributedIterator) -> Vector{UInt8}

Where the whole job's distributed iterators are, as a few bytes (docs/checkpoint.md). Every
worker calls it at the same step; the workers' parts are gathered through the collective, so
every worker receives the same bytes. Workers saving at different steps get
`:FAILED_PRECONDITION`.
"""
function save_state(it::DistributedIterator)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(LibDinput.dinput_dist_iterator_save(out, it))
    return _take_state_bytes(out[])
end

"""
    iterator_from_state(d::DistributedDataset, state::AbstractVector{UInt8}) -> DistributedIterator

A distributed iterator that continues where the saved job's stopped. Every worker calls it with
the same state at the same point; they check through the collective that they restored the
same step. The same number of workers and replicas, or under DATA, FILE or OFF sharding any
other number with the same global batch. Another pipeline is `:FAILED_PRECONDITION` naming the operation
that differs; a damaged state is `:DATA_LOSS`.
"""
function iterator_from_state(d::DistributedDataset, state::AbstractVector{UInt8})
    _drain_pending_frees()
    bytes = Vector{UInt8}(state)
    return DistributedIterator(_out(o -> GC.@preserve bytes LibDinput.dinput_dist_dataset_iterator_from_state(
        o, d, pointer(bytes), length(bytes))))
end

"""
    describe_state(state::AbstractVector{UInt8}) -> String

What a saved state (of a dataset iterator or a distributed iterator) holds, as JSON text: its
kind, the pipeline's operations, the random seeds, and for a distributed iterator the job's
shape, step and each worker's pipelines. A damaged state is `:DATA_LOSS`.
"""
function describe_state(state::AbstractVector{UInt8})
    bytes = Vector{UInt8}(state)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    GC.@preserve bytes check(LibDinput.dinput_state_describe(out, pointer(bytes), length(bytes)))
    return String(_take_state_bytes(out[]))
end

Base.eltype(::Type{DistributedIterator}) = PerReplica

function Base.iterate(it::DistributedIterator, ::Nothing=nothing)
    x = _next_or_nothing(it)
    return x === nothing ? nothing : (x, nothing)
end

Base.IteratorSize(::Type{DistributedDataset}) = Base.SizeUnknown()
Base.eltype(::Type{DistributedDataset}) = PerReplica

function Base.iterate(d::DistributedDataset, it::DistributedIterator=iterator(d))
    x = _next_or_nothing(it)
    if x === nothing
        close(it)
        return nothing
    end
    return x, it
end

# ---------------------------------------------------------------------------------------
# Per-replica values
# ---------------------------------------------------------------------------------------

"""
    PerReplica(elements)

One value per local replica: an [`Element`](@ref) each, in replica order. Index it from 1
(`x[r]` is replica `r-1`'s element), iterate it, or take [`local_results`](@ref).
"""
mutable struct PerReplica <: Handle
    ptr::Ptr{Cvoid}
    function PerReplica(ptr::Ptr{Cvoid})
        v = new(ptr)
        finalizer(_finalize, v)
        return v
    end
end

_free(::PerReplica, p::Ptr{Cvoid}) = LibDinput.dinput_per_replica_free(p)

function PerReplica(values::AbstractVector)
    made = Element[]
    elements = Element[]
    try
        for v in values
            e = v isa Element ? v : Element(v)
            v isa Element || push!(made, e)
            push!(elements, e)
        end
        GC.@preserve elements begin
            pointers = Ptr{Cvoid}[_ptr(e) for e in elements]
            return PerReplica(_out(o -> LibDinput.dinput_per_replica_new(o, pointers,
                                                                         length(pointers))))
        end
    finally
        foreach(close, made)
    end
end

Base.length(v::PerReplica) = Int(LibDinput.dinput_per_replica_size(v))
Base.firstindex(::PerReplica) = 1
Base.lastindex(v::PerReplica) = length(v)
Base.eltype(::Type{PerReplica}) = Element

function Base.getindex(v::PerReplica, i::Integer)
    1 <= i <= length(v) || throw(BoundsError(v, i))
    GC.@preserve v begin    # the element is borrowed from v: take a handle of our own
        return Element(_element_handle(LibDinput.dinput_per_replica_get(v, i - 1)))
    end
end

Base.copy(v::PerReplica) = PerReplica(_out(o -> LibDinput.dinput_per_replica_ref(o, v)))

Base.iterate(v::PerReplica, i::Int=1) = i > length(v) ? nothing : (v[i], i + 1)

"""
    local_results(v::PerReplica) -> Vector{Element}

The elements of this worker's replicas, in replica order.
"""
local_results(v::PerReplica) = collect(v)

"""
    tensors(e::Element) -> Vector{Tensor}
    tensors(v::PerReplica) -> Vector{Tensor}

Every component as a new `Tensor` handle, read in one call into the library. For a
`PerReplica` value the tensors come replica by replica (replica `r`'s component `c` at
`(r - 1) * components + c`), and replicas whose elements differ in their number of components
throw an `INVALID_ARGUMENT` `DinputError`.
"""
tensors(e::Element) = _tensors(LibDinput.dinput_element_tensor_infos, e)
tensors(v::PerReplica) = _tensors(LibDinput.dinput_per_replica_tensor_infos, v)

# `fill(count, infos, capacity, x)` describes x's tensors; room for 8 first, then for all.
function _tensors(fill, x)
    count = Ref{Csize_t}(0)
    infos = Vector{LibDinput.dinput_tensor_info_t}(undef, 8)
    GC.@preserve x infos begin
        check(fill(count, infos, length(infos), x))
        if count[] > length(infos)
            resize!(infos, count[])
            check(fill(count, infos, length(infos), x))
        end
        return [Tensor(_out(o -> LibDinput.dinput_tensor_ref(o, infos[i].tensor)))
                for i in 1:Int(count[])]
    end
end

function Base.show(io::IO, v::PerReplica)
    isopen(v) || return print(io, "PerReplica(<closed>)")
    print(io, "PerReplica(")
    join(io, collect(v), ", ")
    print(io, ")")
end

# ---------------------------------------------------------------------------------------
# Contexts
# ---------------------------------------------------------------------------------------

"""
    InputContext

What a dataset function of [`distribute_datasets_from_function`](@ref) is told about its
input pipeline: the fields `num_input_pipelines`, `input_pipeline_id` and
`num_replicas_in_sync`, and [`per_replica_batch_size`](@ref). Valid during the call only.
"""
mutable struct InputContext
    ptr::Ptr{Cvoid}     # lent by dinput for the call; C_NULL afterwards
    num_input_pipelines::Int
    input_pipeline_id::Int
    num_replicas_in_sync::Int
end

InputContext(p::Ptr{Cvoid}) =
    InputContext(p, Int(LibDinput.dinput_input_context_num_input_pipelines(p)),
                 Int(LibDinput.dinput_input_context_input_pipeline_id(p)),
                 Int(LibDinput.dinput_input_context_num_replicas_in_sync(p)))

"""
    per_replica_batch_size(ctx::InputContext, global_batch_size) -> Int

`global_batch_size ÷ num_replicas_in_sync`; `:INVALID_ARGUMENT` when it does not divide.
"""
function per_replica_batch_size(ctx::InputContext, global_batch_size::Integer)
    if ctx.ptr == C_NULL
        throw(DinputError(:FAILED_PRECONDITION,
                          "an InputContext is valid only during the dataset function call"))
    end
    out = Ref{Int64}(0)
    check(LibDinput.dinput_input_context_get_per_replica_batch_size(out, ctx.ptr,
                                                                   global_batch_size))
    return Int(out[])
end

"""
    ValueContext

What the function of [`distribute_values_from_function`](@ref) is told: the fields
`replica_id_in_sync_group` and `num_replicas_in_sync`.
"""
struct ValueContext
    replica_id_in_sync_group::Int
    num_replicas_in_sync::Int
end

ValueContext(p::Ptr{Cvoid}) =
    ValueContext(Int(LibDinput.dinput_value_context_replica_id_in_sync_group(p)),
                 Int(LibDinput.dinput_value_context_num_replicas_in_sync(p)))

"""
    ReplicaContext

The replica a function called by `strategy_run` computes for: the fields
`replica_id_in_sync_group`, `num_replicas_in_sync` and `device` (`"CPU:1"`). See
[`replica_context`](@ref).
"""
struct ReplicaContext
    replica_id_in_sync_group::Int
    num_replicas_in_sync::Int
    device::String
end

ReplicaContext(p::Ptr{Cvoid}) =
    ReplicaContext(Int(LibDinput.dinput_replica_context_replica_id_in_sync_group(p)),
                   Int(LibDinput.dinput_replica_context_num_replicas_in_sync(p)),
                   _cstring(LibDinput.dinput_replica_context_device(p)))

"""
    replica_context() -> ReplicaContext

Inside a function called by `strategy_run`: the replica it computes for (as
`tf.distribute.get_replica_context()`).
"""
function replica_context()
    ctx = get(task_local_storage(), REPLICA_CONTEXT, nothing)
    if ctx === nothing
        throw(DinputError(:FAILED_PRECONDITION, "replica_context() is available only " *
                                                "inside a function called by strategy_run"))
    end
    return ctx::ReplicaContext
end

# ---------------------------------------------------------------------------------------
# Per-replica computation
# ---------------------------------------------------------------------------------------

"""
    distribute_values_from_function(f, strategy) -> PerReplica

`f(ctx::ValueContext)` is called once per local replica, in replica order, on this thread;
its results (anything [`Element`](@ref) accepts) form the per-replica value.
"""
function distribute_values_from_function(f, strategy::Strategy)
    cb = Callback(f)
    GC.@preserve cb begin    # user_data is used during the call only
        p = _out(o -> LibDinput.dinput_strategy_distribute_values_from_function(
            o, strategy, _value_fn(), pointer_from_objref(cb)))
    end
    return PerReplica(p)
end

"""
    strategy_run(f, strategy::Strategy, args::PerReplica) -> PerReplica
    strategy_run(f, strategy::Strategy) -> PerReplica

`strategy.run(f, args)`: calls `f(x)` once per local replica with that replica's element of
`args` (or `f()` without `args`), and gathers the results (anything [`Element`](@ref)
accepts) into a per-replica value. Inside `f`, [`replica_context`](@ref) tells the replica.

The replicas run concurrently: replica 0 on this thread, the others on threads of dinput,
which needs Julia ≥ 1.9 (on older Julia, `strategy_run` on more than one local replica
throws). (A function of its own, not a method of `Base.run`, which runs commands.)
`f` must therefore be thread-safe, and `x` is valid only during the call.
"""
function strategy_run(f, strategy::Strategy, args::Union{Nothing,PerReplica}=nothing)
    n = num_local_replicas(strategy)
    n > 1 && _require_foreign_threads("strategy_run on $n local replicas (one thread each)")
    cb = Callback(f)
    GC.@preserve cb begin    # user_data is used during the call only
        p = _out(o -> LibDinput.dinput_strategy_run(
            o, strategy, _replica_fn(), args === nothing ? C_NULL : args, pointer_from_objref(cb)))
    end
    return PerReplica(p)
end

const REDUCE_OPS = Dict{Symbol,Cint}(
    :sum => LibDinput.DINPUT_REDUCE_SUM,
    :mean => LibDinput.DINPUT_REDUCE_MEAN,
)

"""
    strategy_reduce(op::Symbol, strategy::Strategy, value::PerReplica; dims=nothing) -> Element

`strategy.reduce(op, value, axis)` across all replicas of all workers, component by
component; `op` is `:sum` or `:mean`. `dims=nothing`: element-wise (shapes must match);
`dims=1` (TensorFlow's `axis=0`): also over the first dimension, the batch (`:mean` divides
by the total number of rows). Numeric components are reduced in float64 (dinput.h describes
the dtypes of the results). Every worker gets the same result. (A function of its own, not
a method of `Base.reduce`, which folds a collection with a binary function.)
"""
function strategy_reduce(op::Symbol, strategy::Strategy, value::PerReplica;
                     dims::Union{Nothing,Integer}=nothing)
    code = get(REDUCE_OPS, op) do
        throw(ArgumentError("unknown reduce op :$op; expected :sum or :mean"))
    end
    axis = dims === nothing ? LibDinput.DINPUT_AXIS_NONE : dims - 1
    return Element(_out(o -> LibDinput.dinput_strategy_reduce(o, strategy, code, value, axis)))
end
