# Callbacks: Julia functions that dinput calls through C function pointers.
#
# A Julia closure cannot portably be a C function pointer, so every C callback type has one
# top-level trampoline below, made into a pointer with `@cfunction`, and the Julia function
# travels as user_data: a pointer to a mutable object rooted in ROOTS (see handles.jl) until
# dinput releases it through `_free_user_data`. The comment after each `@cfunction` names the
# C typedef it implements; tools/check_abi.mjs checks the signatures against the header.
#
# Every trampoline
#   - switches the thread to GC-unsafe first: dinput may call it from inside a
#     `@gcsafe_ccall` (the `@cfunction` wrapper does this too since Julia 1.9; doing it
#     explicitly costs two calls and does not depend on the wrapper);
#   - never lets a Julia exception unwind into C (it would skip C++ destructors and locks):
#     `_guard` catches it, passes its message to `dinput_error_set` and returns a failing
#     status, which reaches the caller of get_next (or strategy_run, ...) as a DinputError;
#   - marks the task as inside a callback (`_in_callback`), so that deferred frees of
#     iterators never run on one of dinput's producer threads.

mutable struct Callback
    f::Any
end

# One per iterator of a generator dataset: the Julia iterable and where it is.
mutable struct GeneratorState
    iterable::Any
    state::Any
    started::Bool
    save::Any      # from_generator's save and restore functions, or nothing
    restore::Any
end
GeneratorState(iterable, state, started) = GeneratorState(iterable, state, started, nothing, nothing)

# from_generator's function with its save and restore functions.
mutable struct SavableCallback
    f::Any
    save::Any
    restore::Any
end

mutable struct InterleaveCallback
    f::Any
    parallel::Bool   # the datasets f returns are read on dinput's threads
end

mutable struct DatasetFnCallback
    f::Any
    per_replica_buffer_size::Int   # > 0: the datasets are read on a producer thread
end

@inline _gc_unsafe_enter() = ccall(:jl_gc_unsafe_enter, Int8, ())
@inline _gc_unsafe_leave(state::Int8) = ccall(:jl_gc_unsafe_leave, Cvoid, (Int8,), state)

# Runs body() (which returns a status) as a callback; any exception becomes a status.
function _guard(body, what::String)
    depth = -1
    status = LibDinput.DINPUT_UNKNOWN
    try
        depth = _enter_callback()
        status = Cint(body())
    catch err
        status = _report(err, what)
    end
    if depth >= 0
        try
            _leave_callback(depth)
        catch
            # task_local_storage cannot fail here short of running out of memory; the
            # status already says what matters.
        end
    end
    return status
end

# Records `err` as this thread's dinput error and returns its status code. Never throws.
function _report(err, what::String)
    try
        code = if err isa DinputError
            get(STATUS_CODES, err.code, LibDinput.DINPUT_UNKNOWN)
        elseif err isa InterruptException
            LibDinput.DINPUT_CANCELLED
        elseif err isa ArgumentError
            LibDinput.DINPUT_INVALID_ARGUMENT
        else
            LibDinput.DINPUT_UNKNOWN
        end
        code == LibDinput.DINPUT_OK && (code = LibDinput.DINPUT_UNKNOWN)
        message = err isa DinputError ? err.message :
                  string("Julia ", what, " threw: ", sprint(showerror, err))
        LibDinput.dinput_error_set(code, replace(message, '\0' => "\\0"))
        return code
    catch
        return LibDinput.DINPUT_UNKNOWN
    end
end

# ---------------------------------------------------------------------------------------
# Trampolines
# ---------------------------------------------------------------------------------------

function _free_user_data(data::Ptr{Cvoid})
    gc = _gc_unsafe_enter()
    try
        _release(data)
    catch
        # free callbacks return nothing; a failure here could only be running out of memory
    end
    _gc_unsafe_leave(gc)
    return nothing
end

function _generator_init(state::Ptr{Ptr{Cvoid}}, data::Ptr{Cvoid})
    gc = _gc_unsafe_enter()
    status = _guard("generator") do
        cb = _lookup(data)::Union{Callback,SavableCallback}
        f = cb.f
        # from_generator takes a function returning an iterable (called once per epoch, as
        # in TensorFlow), or an iterable that can be iterated again.
        iterable = applicable(f) ? f() : f
        g = cb isa SavableCallback ? GeneratorState(iterable, nothing, false, cb.save, cb.restore) :
            GeneratorState(iterable, nothing, false)
        unsafe_store!(state, _register(g))
        LibDinput.DINPUT_OK
    end
    _gc_unsafe_leave(gc)
    return status
end

function _generator_next(out::Ptr{Ptr{Cvoid}}, state::Ptr{Cvoid})
    gc = _gc_unsafe_enter()
    status = _guard("generator") do
        g = _lookup(state)::GeneratorState
        r = g.started ? iterate(g.iterable, g.state) : iterate(g.iterable)
        g.started = true
        r === nothing && return LibDinput.DINPUT_OUT_OF_RANGE   # end of data, not an error
        value, g.state = r
        unsafe_store!(out, _element_handle(value))
        LibDinput.DINPUT_OK
    end
    _gc_unsafe_leave(gc)
    return status
end

function _generator_save(state::Ptr{Cvoid}, write::Ptr{Cvoid}, sink::Ptr{Cvoid})
    gc = _gc_unsafe_enter()
    status = _guard("generator's save") do
        g = _lookup(state)::GeneratorState
        bytes = Vector{UInt8}(g.save(g.iterable, g.started ? g.state : nothing))
        GC.@preserve bytes ccall(write, Cvoid, (Ptr{Cvoid}, Ptr{UInt8}, Csize_t), sink,
                                 pointer(bytes), length(bytes))
        LibDinput.DINPUT_OK
    end
    _gc_unsafe_leave(gc)
    return status
end

function _generator_restore(state::Ptr{Cvoid}, data::Ptr{Cvoid}, size::Csize_t)
    gc = _gc_unsafe_enter()
    status = _guard("generator's restore") do
        g = _lookup(state)::GeneratorState
        bytes = size == 0 ? UInt8[] : copy(unsafe_wrap(Array, Ptr{UInt8}(data), Int(size)))
        # restore returns the iteration state to continue from, or nothing: from the start.
        s = g.restore(g.iterable, bytes)
        g.state, g.started = s, s !== nothing
        LibDinput.DINPUT_OK
    end
    _gc_unsafe_leave(gc)
    return status
end

function _generator_finalize(state::Ptr{Cvoid})
    gc = _gc_unsafe_enter()
    try
        _release(state)
    catch
        # as in _free_user_data
    end
    _gc_unsafe_leave(gc)
    return nothing
end

function _map_callback(out::Ptr{Ptr{Cvoid}}, input::Ptr{Cvoid}, data::Ptr{Cvoid})
    gc = _gc_unsafe_enter()
    status = _guard("map function") do
        f = (_lookup(data)::Callback).f
        # Converted before the borrowed input is invalidated: `x -> x` must work.
        result = _with_borrowed_element(x -> _element_handle(f(x)), input)
        unsafe_store!(out, result)
        LibDinput.DINPUT_OK
    end
    _gc_unsafe_leave(gc)
    return status
end

# One call for a run of `count` inputs; every output stored is the library's at once, so a
# failure part-way leaves nothing of it to Julia.
function _map_many_callback(outs::Ptr{Ptr{Cvoid}}, ins::Ptr{Ptr{Cvoid}}, count::Csize_t,
                            data::Ptr{Cvoid})
    gc = _gc_unsafe_enter()
    status = _guard("map_many function") do
        f = (_lookup(data)::Callback).f
        n = Int(count)
        xs = Element[Element(unsafe_load(ins, i); owned=false) for i in 1:n]
        try
            results = f(xs)
            length(results) == n || throw(ArgumentError(
                "the map_many function must return $n results (one per input), not $(length(results))"))
            # Converted before the borrowed inputs are invalidated: `xs -> xs` must work.
            for (i, r) in enumerate(results)
                unsafe_store!(outs, _element_handle(r), i)
            end
        finally
            for x in xs
                x.ptr = C_NULL
            end
        end
        LibDinput.DINPUT_OK
    end
    _gc_unsafe_leave(gc)
    return status
end

_keep(x::Bool) = x
_keep(t::Tensor) = _keep(t[])
_keep(x) = throw(ArgumentError("the filter predicate must return a Bool, not a $(typeof(x))"))

function _filter_callback(keep::Ptr{Cint}, input::Ptr{Cvoid}, data::Ptr{Cvoid})
    gc = _gc_unsafe_enter()
    status = _guard("filter predicate") do
        f = (_lookup(data)::Callback).f
        k = _with_borrowed_element(x -> _keep(f(x)), input)
        unsafe_store!(keep, Cint(k))
        LibDinput.DINPUT_OK
    end
    _gc_unsafe_leave(gc)
    return status
end

_length(x::Integer) = Int64(x)
_length(x) = throw(ArgumentError("the element length function must return an Integer, not a $(typeof(x))"))

function _length_callback(len::Ptr{Int64}, input::Ptr{Cvoid}, data::Ptr{Cvoid})
    gc = _gc_unsafe_enter()
    status = _guard("element length function") do
        f = (_lookup(data)::Callback).f
        n = _with_borrowed_element(x -> _length(f(x)), input)
        unsafe_store!(len, n)
        LibDinput.DINPUT_OK
    end
    _gc_unsafe_leave(gc)
    return status
end

function _returned_dataset(ds, what::String)
    ds isa Dataset || throw(ArgumentError("the $what must return a Dataset, not a $(typeof(ds))"))
    return _dataset_ref(ds)
end

function _interleave_callback(out::Ptr{Ptr{Cvoid}}, input::Ptr{Cvoid}, data::Ptr{Cvoid})
    gc = _gc_unsafe_enter()
    status = _guard("interleave function") do
        cb = _lookup(data)::InterleaveCallback
        ds = _with_borrowed_element(cb.f, input)
        if ds isa Dataset && ds.julia_callbacks && cb.parallel
            _require_foreign_threads("interleave with num_parallel_calls > 1 over datasets " *
                                     "with Julia callbacks")
        end
        unsafe_store!(out, _returned_dataset(ds, "interleave function"))
        LibDinput.DINPUT_OK
    end
    _gc_unsafe_leave(gc)
    return status
end

function _dataset_fn_callback(out::Ptr{Ptr{Cvoid}}, ctx::Ptr{Cvoid}, data::Ptr{Cvoid})
    gc = _gc_unsafe_enter()
    status = _guard("dataset function") do
        cb = _lookup(data)::DatasetFnCallback
        context = InputContext(ctx)
        ds = try
            cb.f(context)
        finally
            context.ptr = C_NULL    # the C context is only lent for this call
        end
        if ds isa Dataset && ds.julia_callbacks && cb.per_replica_buffer_size != 0
            _require_foreign_threads("reading a dataset with Julia callbacks ahead " *
                                     "(InputOptions(per_replica_buffer_size=0) avoids it)")
        end
        unsafe_store!(out, _returned_dataset(ds, "dataset function"))
        LibDinput.DINPUT_OK
    end
    _gc_unsafe_leave(gc)
    return status
end

function _value_fn_callback(out::Ptr{Ptr{Cvoid}}, ctx::Ptr{Cvoid}, data::Ptr{Cvoid})
    gc = _gc_unsafe_enter()
    status = _guard("value function") do
        f = (_lookup(data)::Callback).f
        unsafe_store!(out, _element_handle(f(ValueContext(ctx))))
        LibDinput.DINPUT_OK
    end
    _gc_unsafe_leave(gc)
    return status
end

const REPLICA_CONTEXT = :__dinput_replica_context

function _replica_fn_callback(out::Ptr{Ptr{Cvoid}}, ctx::Ptr{Cvoid}, args::Ptr{Cvoid},
                              data::Ptr{Cvoid})
    gc = _gc_unsafe_enter()
    status = _guard("replica function") do
        f = (_lookup(data)::Callback).f
        # replica_context() reads it; replica 0 runs on the caller's task, so restore it.
        tls = task_local_storage()
        previous = get(tls, REPLICA_CONTEXT, nothing)
        tls[REPLICA_CONTEXT] = ReplicaContext(ctx)
        try
            result = args == C_NULL ? _element_handle(f()) :
                     _with_borrowed_element(x -> _element_handle(f(x)), args)
            unsafe_store!(out, result)
        finally
            if previous === nothing
                delete!(tls, REPLICA_CONTEXT)
            else
                tls[REPLICA_CONTEXT] = previous
            end
        end
        LibDinput.DINPUT_OK
    end
    _gc_unsafe_leave(gc)
    return status
end

# ---------------------------------------------------------------------------------------
# The function pointers (made at run time: @cfunction pointers do not survive precompilation)
# ---------------------------------------------------------------------------------------

_free_fn() = @cfunction(_free_user_data, Cvoid, (Ptr{Cvoid},))  # dinput_free_fn
_generator_init_fn() =
    @cfunction(_generator_init, Cint, (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}))  # dinput_generator_init_fn
_generator_next_fn() =
    @cfunction(_generator_next, Cint, (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}))  # dinput_generator_next_fn
_generator_finalize_fn() =
    @cfunction(_generator_finalize, Cvoid, (Ptr{Cvoid},))  # dinput_generator_finalize_fn
_generator_save_fn() =
    @cfunction(_generator_save, Cint, (Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}))  # dinput_generator_save_fn
_generator_restore_fn() =
    @cfunction(_generator_restore, Cint, (Ptr{Cvoid}, Ptr{Cvoid}, Csize_t))  # dinput_generator_restore_fn
_map_fn() =
    @cfunction(_map_callback, Cint, (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}))  # dinput_map_fn
_map_many_fn() =
    @cfunction(_map_many_callback, Cint,
               (Ptr{Ptr{Cvoid}}, Ptr{Ptr{Cvoid}}, Csize_t, Ptr{Cvoid}))  # dinput_map_many_fn
_filter_fn() =
    @cfunction(_filter_callback, Cint, (Ptr{Cint}, Ptr{Cvoid}, Ptr{Cvoid}))  # dinput_filter_fn
_length_fn() =
    @cfunction(_length_callback, Cint, (Ptr{Int64}, Ptr{Cvoid}, Ptr{Cvoid}))  # dinput_length_fn
_interleave_fn() =
    @cfunction(_interleave_callback, Cint,
               (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}))  # dinput_interleave_fn
_dataset_fn() =
    @cfunction(_dataset_fn_callback, Cint,
               (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}))  # dinput_dataset_fn
_value_fn() =
    @cfunction(_value_fn_callback, Cint,
               (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}))  # dinput_value_fn
_replica_fn() =
    @cfunction(_replica_fn_callback, Cint,
               (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}))  # dinput_replica_fn
