# CUDA tensors: ordering the caller's CUDA streams after the copies that fill tensors
# (dinput_cuda.h), and dinput's cache of device memory. Pinned tensors are made with
# `Tensor(a; pinned=true)` (tensors.jl).
#
# No CUDA package is needed: streams and events are passed as pointers. Every function here
# works with any build of the library, as a no-op for host tensors.

# A stream argument as the `cudaStream_t` the C API takes.
_stream_ptr(p::Ptr) = Ptr{Cvoid}(p)
_stream_ptr(::Nothing) = C_NULL
function _stream_ptr(h::Integer)
    h >= 0 || throw(ArgumentError("a CUDA stream handle cannot be negative, got $h"))
    return Ptr{Cvoid}(UInt(h))
end
function _stream_ptr(s)
    # CUDA.jl's CuStream keeps its CUstream (the same handle as a cudaStream_t) in `handle`.
    hasproperty(s, :handle) && return _stream_ptr(getproperty(s, :handle))
    throw(ArgumentError("expected a CUDA stream: a pointer (cudaStream_t or CUstream), an " *
                        "integer handle (0, 1 or 2 for the special streams), or an object " *
                        "with a `handle` field such as CUDA.jl's CuStream; got $(typeof(s))"))
end

"""
    Dinput.cuda_wait(t::Tensor, stream) -> nothing
    Dinput.cuda_wait(e::Element, stream) -> nothing

Makes `stream` wait, on the GPU and without blocking the host, until the copy that fills `t`
(every component of `e`) has finished, and records `stream` as a reader of the tensors (as
[`Dinput.cuda_record_stream`](@ref) does). Call it before queueing kernels that read a
`:cuda` tensor's device memory on `stream`. No-op for host tensors.

`stream` is a CUDA.jl `CuStream` (for example `CUDA.stream()`, the task's stream), a raw
`cudaStream_t`/`CUstream` pointer, or an integer handle: `0` (`nothing` too) is the legacy
default stream of the tensor's GPU, `1` `cudaStreamLegacy` and `2` `cudaStreamPerThread`.

Once the last handle to the tensor is closed (or finalized), its memory goes back to
dinput's cache, and is handed to a later copy only after the work queued on every recorded
stream by then has run: the tensor may be closed as soon as the kernels that read it are
queued. dinput records an event on the stream at that moment, so **the stream must stay
valid until then**: keep a `CuStream` object referenced (its finalizer destroys the stream)
until every handle to the tensor, copies and elements included, is closed.
"""
function cuda_wait(t::Tensor, stream)
    check(LibDinput.dinput_tensor_cuda_wait(t, _stream_ptr(stream)))
    return nothing
end

function cuda_wait(e::Element, stream)
    check(LibDinput.dinput_element_cuda_wait(e, _stream_ptr(stream)))
    return nothing
end

"""
    Dinput.cuda_record_stream(t::Tensor, stream) -> nothing

Tells dinput that GPU work on `stream` reads `t`, so that its device memory is not handed to
a later copy until the work queued on `stream` by the time the last handle to `t` is closed
has run. [`Dinput.cuda_wait`](@ref) does this already; call it for a stream that reads the
data without that wait (one that waited on [`Dinput.cuda_ready_event`](@ref) itself, or a
second stream), as PyTorch's `record_stream`. The stream must stay valid until `t`'s last
handle is closed (see `cuda_wait` for the accepted stream arguments). No-op for host
tensors; never blocks.
"""
function cuda_record_stream(t::Tensor, stream)
    check(LibDinput.dinput_tensor_cuda_record_stream(t, _stream_ptr(stream)))
    return nothing
end

"""
    Dinput.cuda_ready_event(t::Tensor) -> Ptr{Cvoid}

The CUDA event (`cudaEvent_t`, a `CUevent`) that completes with the copy filling `t`;
`C_NULL` for host tensors and for tensors whose data was ready at once. Borrowed: valid only
while `t` is open and reachable (`GC.@preserve t`), and never to be destroyed. For
`cuStreamWaitEvent` on a stream of your own (then call [`Dinput.cuda_record_stream`](@ref)
for that stream) or `cuEventQuery`; [`Dinput.cuda_wait`](@ref) is simpler.
"""
cuda_ready_event(t::Tensor) = LibDinput.dinput_tensor_cuda_ready_event(t)

"""
    Dinput.cuda_empty_cache() -> nothing

Releases every cached block on every GPU, and the cached pinned host blocks, back to CUDA;
blocks that live tensors hold are kept. Blocks whose readers may still run on the GPU are
released after that work, so this may wait for the GPU. Call it before another framework in
the process (CUDA.jl's own allocator, say) needs the memory. The cache of a GPU is also
emptied when the last distributed iterator feeding it is closed.
"""
function cuda_empty_cache()
    check(LibDinput.dinput_cuda_empty_cache())
    return nothing
end

"""
    Dinput.cuda_set_cache_limit(bytes::Integer) -> nothing

Sets how many bytes of free blocks the cache of each GPU may keep (default 1 GiB, or
`DINPUT_CUDA_CACHE_MB` from the environment); blocks freed beyond it go back to CUDA. `0`
disables caching. Process-wide; takes effect at once. See [`Dinput.cuda_cache_limit`](@ref).
"""
function cuda_set_cache_limit(bytes::Integer)
    bytes >= 0 || throw(ArgumentError("the cache limit cannot be negative, got $bytes"))
    check(LibDinput.dinput_cuda_set_cache_limit(bytes))
    return nothing
end

"""
    Dinput.cuda_cache_limit() -> Int

The per-GPU cache limit in effect, in bytes (see [`Dinput.cuda_set_cache_limit`](@ref)).
"""
function cuda_cache_limit()
    out = Ref{Csize_t}(0)
    check(LibDinput.dinput_cuda_cache_limit(out))
    return Int(out[])
end

"""
    Dinput.cuda_pool_bytes(device::Integer) -> (held, cached)

The device memory dinput holds on GPU `device` (0-based, as CUDA numbers them): `held` is
every byte allocated from CUDA and not yet returned (blocks of live tensors and cached
ones), `cached` the part that is free for reuse. A GPU dinput never used, or a build without
CUDA, gives `(0, 0)`; a negative device throws a [`DinputError`](@ref) with code
`:INVALID_ARGUMENT`.
"""
function cuda_pool_bytes(device::Integer)
    held = Ref{Csize_t}(0)
    cached = Ref{Csize_t}(0)
    check(LibDinput.dinput_cuda_pool_bytes(held, cached, device))
    return (Int(held[]), Int(cached[]))
end
