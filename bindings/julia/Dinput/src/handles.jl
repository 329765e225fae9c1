# Handles: Julia objects that own one C handle each, and the shared machinery for their
# lifetimes (finalizers, close, the registry that roots Julia callbacks while C holds them).

"""
    Dinput.Handle

Supertype of the Julia objects that own a dinput handle. Each has a field `ptr` (`C_NULL`
once closed), a finalizer that releases the handle, and `close(x)` to release it at once.
Passing one to a `LibDinput` function passes its handle (and roots the object for the call).
"""
abstract type Handle end

function _ptr(x::Handle)
    p = x.ptr
    p == C_NULL && _throw_closed(x)
    return p
end

@noinline function _throw_closed(x)
    throw(DinputError(:FAILED_PRECONDITION, "this $(nameof(typeof(x))) has been closed"))
end

# `ccall` converts its arguments with `unsafe_convert` and keeps the original object rooted
# until the call returns, so passing the Julia object (rather than `x.ptr`) to a LibDinput
# function cannot let its finalizer free the handle during the call.
Base.unsafe_convert(::Type{Ptr{Cvoid}}, x::Handle) = _ptr(x)

"""
    isopen(x::Dinput.Handle) -> Bool

Whether `x` still owns its handle, that is, has not been closed.
"""
Base.isopen(x::Handle) = x.ptr != C_NULL

# Releases the handle once: finalizers and `close` both come here.
function _finalize(x::Handle)
    p = x.ptr
    if p != C_NULL
        x.ptr = C_NULL
        _free(x, p)
    end
    return nothing
end

"""
    close(x::Dinput.Handle)

Releases `x`'s handle now instead of at garbage collection. Closing twice is allowed; any
other use of a closed object throws a `DinputError` with code `:FAILED_PRECONDITION`. Objects
made from `x` stay valid: dinput keeps what they need alive.
"""
Base.close(x::Handle) = _finalize(x)

"""
    Dinput.with(f, x::Dinput.Handle)

Calls `f(x)` and closes `x` afterwards, also when `f` throws; returns what `f` returns.

```julia
Dinput.with(Strategy(["CPU:0", "CPU:1"])) do strategy
    num_replicas_in_sync(strategy)
end
```
"""
function with(f, x::Handle)
    try
        return f(x)
    finally
        close(x)
    end
end

# Calls `f(out)` with a fresh out-parameter, throws on a failing status, returns the handle.
function _out(f)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(f(out))
    return out[]
end

# ---------------------------------------------------------------------------------------
# Locks usable from finalizers and from dinput's threads
# ---------------------------------------------------------------------------------------

# A SpinLock never yields (finalizers and foreign threads must not), and it spins through GC
# safepoints. Finalizers are disabled while it is held: freeing a dataset from a finalizer
# releases its callbacks, which takes the same lock, and must not run while we hold it.
function _locked(f, l::Threads.SpinLock)
    GC.enable_finalizers(false)
    lock(l)
    try
        return f()
    finally
        unlock(l)
        GC.enable_finalizers(true)
    end
end

# ---------------------------------------------------------------------------------------
# Rooting Julia objects handed to C as user_data
# ---------------------------------------------------------------------------------------

# C holds `pointer_from_objref(x)` as user_data; the object must stay alive (and, the GC not
# being a moving one, at the same address) until C releases it through free_user_data.
const ROOTS = IdDict{Any,Nothing}()
const ROOTS_LOCK = Threads.SpinLock()

function _register(x)
    _locked(ROOTS_LOCK) do
        ROOTS[x] = nothing
    end
    return pointer_from_objref(x)
end

_lookup(p::Ptr{Cvoid}) = unsafe_pointer_to_objref(p)

function _release(p::Ptr{Cvoid})
    x = unsafe_pointer_to_objref(p)
    _locked(ROOTS_LOCK) do
        delete!(ROOTS, x)
    end
    return nothing
end

# ---------------------------------------------------------------------------------------
# Callbacks on dinput's threads
# ---------------------------------------------------------------------------------------

"""
    Dinput.FOREIGN_THREAD_CALLBACKS

Whether Julia callbacks may run on threads that dinput starts (prefetch and parallel `map`
threads, the distributed iterator's producer thread, `strategy_run`'s replica threads). Julia adopts
such threads automatically from version 1.9; before, calling Julia from them crashes, so the
binding throws a `DinputError(:UNIMPLEMENTED, ...)` instead of building such a pipeline.
"""
const FOREIGN_THREAD_CALLBACKS = VERSION >= v"1.9"

function _require_foreign_threads(what::AbstractString)
    FOREIGN_THREAD_CALLBACKS && return nothing
    throw(DinputError(:UNIMPLEMENTED,
                      "$what would call Julia from a thread of dinput, which needs Julia 1.9 " *
                      "or later (this is Julia $VERSION); see the README of Dinput, \"Threads\""))
end

# How deeply the current task is inside Julia callbacks called by dinput (task-local, so it
# is right on dinput's threads and on the caller's thread alike).
const CALLBACK_DEPTH = :__dinput_callback_depth

function _enter_callback()
    tls = task_local_storage()
    depth = get(tls, CALLBACK_DEPTH, 0)::Int
    tls[CALLBACK_DEPTH] = depth + 1
    return depth
end

_leave_callback(depth::Int) = (task_local_storage()[CALLBACK_DEPTH] = depth; nothing)

_in_callback() = get(task_local_storage(), CALLBACK_DEPTH, 0)::Int > 0
