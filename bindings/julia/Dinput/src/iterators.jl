# Iterators of datasets and distributed datasets, optionals, and the iteration protocol.
#
# Iterators are the only handles whose release waits: freeing one stops its background
# threads and waits for those that are not inside a callback (one running a Julia callback
# is not waited for; it finishes later, touching nothing freed). The free may also release
# the callbacks' user data, which runs Julia code (`_free_user_data`, under ROOTS_LOCK). A
# finalizer may run in the middle of any code, one holding that lock included, and must not
# wait, so finalizers only queue the handle, and the queue is drained at the next safe
# point: when a new iterator is made, or when one is closed, outside callbacks.
# `close(it)` releases at once.

abstract type IteratorHandle <: Handle end

"""
    DatasetIterator

An iterator over a [`Dataset`](@ref) (one epoch), from [`iterator`](@ref). Used by one task
at a time. [`get_next`](@ref) and [`get_next_as_optional`](@ref) step it; iterating it with
`for` yields the remaining elements.
"""
mutable struct DatasetIterator <: IteratorHandle
    ptr::Ptr{Cvoid}
    function DatasetIterator(ptr::Ptr{Cvoid})
        return _track(new(ptr))
    end
end

"""
    DistributedIterator

An iterator over a [`DistributedDataset`](@ref) (one epoch): each step is a
[`PerReplica`](@ref) value with one element per local replica. In a multi-worker strategy
every worker must create its iterators in the same order.
"""
mutable struct DistributedIterator <: IteratorHandle
    ptr::Ptr{Cvoid}
    function DistributedIterator(ptr::Ptr{Cvoid})
        return _track(new(ptr))
    end
end

_free_iterator(p::Ptr{Cvoid}, distributed::Bool) =
    distributed ? LibDinput.dinput_dist_iterator_free(p) : LibDinput.dinput_iterator_free(p)

const ITERATORS_LOCK = Threads.SpinLock()
# Open iterators, to stop their threads before Julia exits (weak: they must still be
# collectable).
const LIVE_ITERATORS = Dict{Ptr{Cvoid},WeakRef}()
# Handles of unreachable iterators, queued by finalizers: (handle, distributed).
const PENDING_FREES = Tuple{Ptr{Cvoid},Bool}[]
# Set when Julia exits: finalizers then free at once, nobody being left to drain the queue.
const EXITING = Ref(false)

function _track(it::IteratorHandle)
    _locked(ITERATORS_LOCK) do
        LIVE_ITERATORS[it.ptr] = WeakRef(it)
    end
    finalizer(_finalize_iterator, it)
    return it
end

function _finalize_iterator(it::IteratorHandle)
    p = it.ptr
    p == C_NULL && return nothing
    it.ptr = C_NULL
    distributed = it isa DistributedIterator
    queued = _locked(ITERATORS_LOCK) do
        delete!(LIVE_ITERATORS, p)
        EXITING[] || push!(PENDING_FREES, (p, distributed))
        !EXITING[]
    end
    queued || _free_iterator(p, distributed)
    return nothing
end

"""
    close(it::Union{DatasetIterator,DistributedIterator})

Stops the iterator's background threads and releases it now. Idempotent.
"""
function Base.close(it::IteratorHandle)
    p = it.ptr
    p == C_NULL && return nothing
    it.ptr = C_NULL
    _locked(ITERATORS_LOCK) do
        delete!(LIVE_ITERATORS, p)
    end
    _free_iterator(p, it isa DistributedIterator)
    _drain_pending_frees()
    return nothing
end

"""
    cancel(it::Union{DatasetIterator,DistributedIterator})

Cancels the iterator from any task or thread, also while another one is blocked in
[`get_next`](@ref) on it: that call throws a `DinputError` with code `:CANCELLED` promptly,
and so does every later one. For a distributed iterator the other workers' iterators of this
epoch fail the same way instead of waiting for this worker. Idempotent; does nothing to a
closed iterator. The iterator must still be closed (not while the other call runs).
"""
function cancel(it::IteratorHandle)
    p = it.ptr
    p == C_NULL && return it
    check(it isa DistributedIterator ? LibDinput.dinput_dist_iterator_cancel(p) :
          LibDinput.dinput_iterator_cancel(p))
    return it
end

# Frees the iterators that finalizers queued. Not from inside a callback, which would then
# wait for another iterator's threads and run Julia code (releasing user data) while the
# library waits on the callback.
function _drain_pending_frees()
    _in_callback() && return nothing
    while true
        item = _locked(ITERATORS_LOCK) do
            isempty(PENDING_FREES) ? nothing : pop!(PENDING_FREES)
        end
        item === nothing && return nothing
        _free_iterator(item[1], item[2])
    end
end

function _release_iterators_at_exit()
    live = _locked(ITERATORS_LOCK) do
        EXITING[] = true
        collect(values(LIVE_ITERATORS))
    end
    _drain_pending_frees()
    for ref in live
        it = ref.value
        it === nothing || close(it)
    end
    return nothing
end

# ---------------------------------------------------------------------------------------
# Dataset iterators
# ---------------------------------------------------------------------------------------

"""
    iterator(ds::Dataset) -> DatasetIterator
    iterator(dist::DistributedDataset) -> DistributedIterator
    iterator(f, x)

A new iterator, from the beginning of the data (a new epoch). The form with `f` calls
`f(it)` and closes the iterator afterwards:

```julia
iterator(ds) do it
    first = get_next(it)
    ...
end
```
"""
function iterator(ds::Dataset)
    _drain_pending_frees()
    return DatasetIterator(_out(o -> LibDinput.dinput_dataset_iterator(o, ds)))
end

iterator(f, x) = with(f, iterator(x))

# The next element, or nothing at the end of data.
function _next_or_nothing(it::DatasetIterator)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    status = LibDinput.dinput_iterator_get_next(out, it)
    status == LibDinput.DINPUT_OUT_OF_RANGE && return nothing
    check(status)
    return Element(out[])
end

"""
    get_next(it) -> Element          (it::DatasetIterator)
    get_next(it) -> PerReplica       (it::DistributedIterator)

The next element (or step). At the end of data it throws a `DinputError` with code
`:OUT_OF_RANGE`, as TensorFlow's `get_next` raises `OutOfRangeError`; after another error the
iterator is finished and repeats the error.
"""
get_next(it::DatasetIterator) = Element(_out(o -> LibDinput.dinput_iterator_get_next(o, it)))

"""
    get_next_as_optional(it) -> Optional

The next element (or step) as an [`Optional`](@ref), empty at the end of data.
"""
get_next_as_optional(it::DatasetIterator) =
    Optional(_out(o -> LibDinput.dinput_iterator_get_next_as_optional(o, it)), false)

element_spec(it::DatasetIterator) =
    _take_spec(_out(o -> LibDinput.dinput_iterator_element_spec(o, it)))

"""
    statistic(it, name) -> Int

A counter of the iterator's work so far: `"records"` (records read by file readers),
`"record_bytes"` (their payload bytes) or `"corrupt_records_skipped"`; `:NOT_FOUND` for
other names. For a distributed iterator, the counters of this worker's input pipelines.
"""
function statistic(it::DatasetIterator, name::AbstractString)
    out = Ref{Int64}(0)
    check(LibDinput.dinput_iterator_statistic(out, it, name))
    return Int(out[])
end

"""
    save_state(it::DatasetIterator) -> Vector{UInt8}

Where the iterator is, as a few bytes holding positions and seeds, never elements (see
docs/checkpoint.md): [`iterator_from_state`](@ref) continues from them, reading again the
elements read ahead but not yet returned. Call it between `get_next` calls. `:UNIMPLEMENTED`
names an operation that cannot save its state yet.
"""
function save_state(it::DatasetIterator)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(LibDinput.dinput_iterator_save(out, it))
    return _take_state_bytes(out[])
end

# The bytes of a state handle, which is freed.
function _take_state_bytes(state::Ptr{Cvoid})
    try
        n = Int(LibDinput.dinput_state_size(state))
        bytes = Vector{UInt8}(undef, n)
        n > 0 && unsafe_copyto!(pointer(bytes), Ptr{UInt8}(LibDinput.dinput_state_data(state)), n)
        return bytes
    finally
        LibDinput.dinput_state_free(state)
    end
end

"""
    iterator_from_state(ds::Dataset, state::AbstractVector{UInt8}) -> DatasetIterator

An iterator over `ds` that continues where the iterator that saved `state` stopped. `ds`
must be built as the saved pipeline was, else `:FAILED_PRECONDITION` names the first
operation that differs; a damaged or truncated state is `:DATA_LOSS`.
"""
function iterator_from_state(ds::Dataset, state::AbstractVector{UInt8})
    _drain_pending_frees()
    bytes = Vector{UInt8}(state)
    return DatasetIterator(_out(o -> GC.@preserve bytes LibDinput.dinput_dataset_iterator_from_state(
        o, ds, pointer(bytes), length(bytes))))
end

Base.IteratorSize(::Type{<:IteratorHandle}) = Base.SizeUnknown()
Base.eltype(::Type{DatasetIterator}) = Element

# `for x in it` continues the iterator it is given (and leaves it open).
function Base.iterate(it::DatasetIterator, ::Nothing=nothing)
    x = _next_or_nothing(it)
    return x === nothing ? nothing : (x, nothing)
end

Base.IteratorSize(::Type{Dataset}) = Base.SizeUnknown()
Base.eltype(::Type{Dataset}) = Element

# `for x in ds` makes a new iterator (a new epoch), closed when the data ends. A loop left
# early leaves it to the garbage collector.
function Base.iterate(ds::Dataset, it::DatasetIterator=iterator(ds))
    x = _next_or_nothing(it)
    if x === nothing
        close(it)
        return nothing
    end
    return x, it
end

# ---------------------------------------------------------------------------------------
# Optionals
# ---------------------------------------------------------------------------------------

"""
    Optional

The result of [`get_next_as_optional`](@ref): holds an `Element` (from a dataset iterator),
a `PerReplica` value (from a distributed iterator), or nothing at the end of data. Test it
with [`has_value`](@ref), read it with [`get_value`](@ref).
"""
mutable struct Optional <: Handle
    ptr::Ptr{Cvoid}
    distributed::Bool
    function Optional(ptr::Ptr{Cvoid}, distributed::Bool)
        o = new(ptr, distributed)
        finalizer(_finalize, o)
        return o
    end
end

_free(::Optional, p::Ptr{Cvoid}) = LibDinput.dinput_optional_free(p)

"""
    has_value(o::Optional) -> Bool
"""
has_value(o::Optional) = LibDinput.dinput_optional_has_value(o) != 0

"""
    get_value(o::Optional) -> Union{Element,PerReplica}

The value held; a `DinputError` with code `:INVALID_ARGUMENT` when `o` is empty.
"""
function get_value(o::Optional)
    if o.distributed
        return PerReplica(_out(p -> LibDinput.dinput_optional_get_per_replica(p, o)))
    end
    return Element(_out(p -> LibDinput.dinput_optional_get_value(p, o)))
end

function Base.show(io::IO, o::Optional)
    isopen(o) || return print(io, "Optional(<closed>)")
    print(io, has_value(o) ? "Optional(<value>)" : "Optional(<empty>)")
end
