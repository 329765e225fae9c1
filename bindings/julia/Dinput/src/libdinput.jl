# The raw C ABI: one Julia function per DINPUT_API function of include/dinput.h and
# include/dinput_cuda.h, with the same name and arguments, and the header's constants.
# Nothing here checks statuses or manages lifetimes; that is the job of the safe layer (the
# rest of src/). Handles are passed as `Ptr{Cvoid}`: any object with a
# `Base.unsafe_convert(Ptr{Cvoid}, x)` method can be given, and `ccall` keeps it rooted for
# the duration of the call.
#
# How the library is found, and why every call goes through a function pointer:
# `ccall((:name, lib), ...)` needs `lib` to be a constant, and a constant is evaluated when
# the package is precompiled: the library would be whatever the environment said then, not
# what it says when the user loads Dinput (a non-constant `lib[]` there is rejected or, in
# newer Julia, looked up by name on every call). So `load!` (called by `Dinput.__init__`,
# i.e. at every `using Dinput`, never at precompile time) picks the library path (see
# `find_library`), `dlopen`s it, and resolves every function with `dlsym` into a slot of its
# own: one `const` `Ref{Ptr{Cvoid}}` per C function, named `<function>_ptr`. A wrapper then
# calls `ccall(@fptr(:name), Ret, (Types...), args...)`: `ccall` with a run-time function
# pointer, which costs one load more than a constant binding and nothing else.
#
# tools/check_abi.mjs checks every `ccall` below against the header (argument count, types,
# return type), so keep the literal `ccall(@fptr(:name), Ret, (Types...), args...)` form; it
# also rejects the `(:name, lib)` form, which would bring back the precompile-time library.
"""
    Dinput.LibDinput

Low-level `ccall` wrappers of the dinput C ABI (`include/dinput.h` and
`include/dinput_cuda.h`), one per function, with the headers' names. Statuses are returned as
`Cint`; out-parameters are `Ref`s or arrays. Prefer the safe API of [`Dinput`](@ref).
"""
module LibDinput

using Libdl

# Every C function a wrapper calls, in the order the wrappers appear: `@fptr` adds to it as
# it expands, and the loop at the end of this file gives each its slot.
const FUNCTION_NAMES = Symbol[]

_slot_name(name::Symbol) = Symbol(name, :_ptr)

"""
    @fptr(:dinput_name) -> Ptr{Cvoid}

The address of the C function `dinput_name` in the library loaded by [`load!`](@ref), read
from its slot (a `const` global, so the read is one load). Throws before `load!` has run
(during precompilation, say) instead of calling through a null pointer.
"""
macro fptr(name)
    (name isa QuoteNode && name.value isa Symbol) ||
        error("@fptr: expected @fptr(:dinput_name), got $(repr(name))")
    sym = name.value
    sym in FUNCTION_NAMES || push!(FUNCTION_NAMES, sym)
    return :(_loaded($(_slot_name(sym))[], $name))
end

@inline _loaded(p::Ptr{Cvoid}, name::Symbol) = p == C_NULL ? _not_loaded(name) : p
@noinline _not_loaded(name::Symbol) =
    error("Dinput: $name was called before the dinput library was loaded (by Dinput.__init__)")

# Where the library comes from, in order: an environment variable, the package's
# preference, the installed soname.
const ENV_VARIABLES = ("JULIA_DINPUT_LIBRARY", "DINPUT_LIB")
const PREFERENCE = "libdinput"
# Dinput's UUID (Project.toml): preferences are stored under the package's UUID.
const PACKAGE_UUID = Base.UUID("e9c8e14f-153c-4744-9b47-f95c70fb0a6c")
const DEFAULT_LIBRARY =
    Sys.isapple() ? "libdinput.0.dylib" : Sys.iswindows() ? "libdinput.dll" : "libdinput.so.0"

const LIBRARY_HANDLE = Ref{Ptr{Cvoid}}(C_NULL)
const LIBRARY_PATH = Ref{String}("")
const LIBRARY_SOURCE = Ref{String}("")

"""
    LibDinput.find_library() -> (library, source)

The dinput library to load and where that choice came from, decided when called (at
`using Dinput`), in this order:

1. the environment variable `JULIA_DINPUT_LIBRARY`, else `DINPUT_LIB` (a path, or a name for
   the dynamic loader), when set and not empty;
2. the preference `libdinput` of the Dinput package, as Preferences.jl stores it
   (`Preferences.set_preferences!(Dinput, "libdinput" => path)`, or by hand: a `[Dinput]`
   table with `libdinput = "/path/to/libdinput.so.0"` in `LocalPreferences.toml` next to the
   active project, or `[preferences.Dinput]` in its `Project.toml`);
3. `libdinput.so.0` (`libdinput.0.dylib` on macOS), found by the dynamic loader through
   `LD_LIBRARY_PATH`, the system paths or `Libdl.DL_LOAD_PATH`.
"""
function find_library()
    for var in ENV_VARIABLES
        value = get(ENV, var, "")
        isempty(value) || return (value, "the environment variable $var")
    end
    value = _preference()
    value === nothing || return (value, "the preference \"$PREFERENCE\" of Dinput")
    return (DEFAULT_LIBRARY, "the default name")
end

# The preference, read the way Preferences.jl reads it (Preferences.jl is a thin layer over
# `Base.get_preferences`, which merges the preferences of every project on the load path),
# so that Dinput needs no dependency for it: Preferences.jl stays optional, a tool for
# writing the setting. It is read at run time only, so changing it needs no recompilation.
function _preference()
    isdefined(Base, :get_preferences) || return nothing
    value = get(Base.get_preferences(PACKAGE_UUID), PREFERENCE, nothing)
    value === nothing && return nothing
    (value isa AbstractString && !isempty(value)) ||
        error("Dinput: the preference \"$PREFERENCE\" must be the library's path, " *
              "not $(repr(value))")
    return String(value)
end

"""
    LibDinput.load!() -> String

Opens the dinput library chosen by [`find_library`](@ref) and points every wrapper of this
module at it; returns its path. Called by `Dinput.__init__`, once per session: the library
stays loaded until Julia exits (dinput's threads make unloading it unsafe), so choosing
another one needs a new session.
"""
function load!()
    library, source = find_library()
    handle = try
        Libdl.dlopen(library)
    catch err
        error("""
            Dinput cannot load the dinput library "$library" (from $source):
            $(sprint(showerror, err))
            Set JULIA_DINPUT_LIBRARY to its path before `using Dinput` (for example
            JULIA_DINPUT_LIBRARY=/path/to/build/src/libdinput.so.0), set the preference
            "$PREFERENCE" (see the README), or put its directory on LD_LIBRARY_PATH
            (DYLD_LIBRARY_PATH on macOS).""")
    end
    pointers = [Libdl.dlsym_e(handle, name) for name in FUNCTION_NAMES]
    absent = FUNCTION_NAMES[pointers .== C_NULL]
    if !isempty(absent)
        error("Dinput: the dinput library \"$library\" (from $source) lacks $(length(absent)) " *
              "function(s) the binding calls, such as $(join(first(absent, 3), ", ")): " *
              "it is older than the binding")
    end
    for (name, p) in zip(FUNCTION_NAMES, pointers)
        getfield(@__MODULE__, _slot_name(name))[] = p
    end
    LIBRARY_HANDLE[] = handle
    LIBRARY_PATH[] = try
        Libdl.dlpath(handle)        # the file the loader chose, for messages and library_path
    catch
        library
    end
    LIBRARY_SOURCE[] = source
    return LIBRARY_PATH[]
end

"""
    @gcsafe_ccall(@fptr(:name), RetType, (ArgTypes...), args...)

A `ccall` during which the garbage collector may run on other threads.

A Julia thread blocked inside a plain `ccall` stays "GC-unsafe": a collection started by any
other thread waits for it. dinput calls that wait for other threads (a background producer,
replicas of `strategy_run`, the workers of a collective) would then deadlock as soon as one
of those threads runs Julia code that allocates. This macro converts the arguments first
(which may allocate), then switches the thread to GC-safe (`jl_gc_safe_enter`) around the
call itself. The callee may call back into Julia: the `@cfunction` wrapper switches back to
GC-unsafe for the duration of the callback. The function pointer is read from its slot
before the switch.
"""
macro gcsafe_ccall(target, rettype, argtypes, args...)
    Meta.isexpr(argtypes, :tuple) ||
        error("@gcsafe_ccall: the argument types must be a literal tuple")
    types = argtypes.args
    length(types) == length(args) ||
        error("@gcsafe_ccall: $(length(types)) argument types but $(length(args)) arguments")
    converted = [gensym("arg") for _ in args]
    raw = [gensym("raw") for _ in args]
    fptr, state, result = gensym("fptr"), gensym("state"), gensym("result")
    body = Expr(:block)
    for (c, T, a) in zip(converted, types, args)
        push!(body.args, :($c = Base.cconvert($T, $a)))
    end
    push!(body.args, :($fptr = $target))
    inner = Expr(:block)
    for (r, T, c) in zip(raw, types, converted)
        push!(inner.args, :($r = Base.unsafe_convert($T, $c)))
    end
    push!(inner.args, :($state = ccall(:jl_gc_safe_enter, Int8, ())))
    push!(inner.args, :($result = ccall($fptr, $rettype, ($(types...),), $(raw...))))
    push!(inner.args, :(ccall(:jl_gc_safe_leave, Cvoid, (Int8,), $state)))
    push!(inner.args, result)
    push!(body.args, :(Base.GC.@preserve $(converted...) $inner))
    # Everything, including the names of the caller's arguments and types, belongs to the
    # caller (this module): the generated locals are gensyms, so escaping the whole is safe.
    return esc(body)
end

# ---------------------------------------------------------------------------------------
# Constants (values checked against the header by tools/check_abi.mjs)
# ---------------------------------------------------------------------------------------

const DINPUT_VERSION_MAJOR = 0
const DINPUT_VERSION_MINOR = 1
const DINPUT_VERSION_PATCH = 0

# Special values of the header's #defines.
const DINPUT_UNKNOWN_DIM = -1
const DINPUT_INFINITE_CARDINALITY = -1
const DINPUT_UNKNOWN_CARDINALITY = -2
const DINPUT_REPEAT_FOREVER = -1
const DINPUT_SHARD_HINT = -1
const DINPUT_AUTOTUNE = -1
const DINPUT_AXIS_NONE = -1

# dinput_status_t
const DINPUT_OK = Cint(0)
const DINPUT_CANCELLED = Cint(1)
const DINPUT_UNKNOWN = Cint(2)
const DINPUT_INVALID_ARGUMENT = Cint(3)
const DINPUT_DEADLINE_EXCEEDED = Cint(4)
const DINPUT_NOT_FOUND = Cint(5)
const DINPUT_ALREADY_EXISTS = Cint(6)
const DINPUT_PERMISSION_DENIED = Cint(7)
const DINPUT_RESOURCE_EXHAUSTED = Cint(8)
const DINPUT_FAILED_PRECONDITION = Cint(9)
const DINPUT_ABORTED = Cint(10)
const DINPUT_OUT_OF_RANGE = Cint(11)
const DINPUT_UNIMPLEMENTED = Cint(12)
const DINPUT_INTERNAL = Cint(13)
const DINPUT_UNAVAILABLE = Cint(14)
const DINPUT_DATA_LOSS = Cint(15)
const DINPUT_UNAUTHENTICATED = Cint(16)
# Not a status: 0x7FFFFFFF keeps the C enum 4 bytes wide (as the sentinel of every enum below).
const DINPUT_STATUS_FORCE_32BIT = Cint(2147483647)

# dinput_dtype_t
const DINPUT_DTYPE_INVALID = Cint(0)
const DINPUT_BOOL = Cint(1)
const DINPUT_INT8 = Cint(2)
const DINPUT_INT16 = Cint(3)
const DINPUT_INT32 = Cint(4)
const DINPUT_INT64 = Cint(5)
const DINPUT_UINT8 = Cint(6)
const DINPUT_UINT16 = Cint(7)
const DINPUT_UINT32 = Cint(8)
const DINPUT_UINT64 = Cint(9)
const DINPUT_FLOAT16 = Cint(10)
const DINPUT_BFLOAT16 = Cint(11)
const DINPUT_FLOAT32 = Cint(12)
const DINPUT_FLOAT64 = Cint(13)
const DINPUT_BYTES = Cint(14)
const DINPUT_DTYPE_FORCE_32BIT = Cint(2147483647)

# dinput_device_type_t (DLPack's device types)
const DINPUT_DEVICE_CPU = Cint(1)
const DINPUT_DEVICE_CUDA = Cint(2)
const DINPUT_DEVICE_CUDA_HOST = Cint(3)
const DINPUT_DEVICE_TYPE_FORCE_32BIT = Cint(2147483647)

# dinput_auto_shard_policy_t
const DINPUT_AUTO_SHARD_OFF = Cint(-1)
const DINPUT_AUTO_SHARD_AUTO = Cint(0)
const DINPUT_AUTO_SHARD_FILE = Cint(1)
const DINPUT_AUTO_SHARD_DATA = Cint(2)
const DINPUT_AUTO_SHARD_HINT = Cint(3)
const DINPUT_AUTO_SHARD_POLICY_FORCE_32BIT = Cint(2147483647)

# dinput_compression_t
const DINPUT_COMPRESSION_NONE = Cint(0)
const DINPUT_COMPRESSION_ZSTD = Cint(1)
const DINPUT_COMPRESSION_GZIP = Cint(2)
const DINPUT_COMPRESSION_FORCE_32BIT = Cint(2147483647)

const DINPUT_DETERMINISTIC_UNSET = Cint(-1)
const DINPUT_DETERMINISTIC_FALSE = Cint(0)
const DINPUT_DETERMINISTIC_TRUE = Cint(1)
const DINPUT_DETERMINISTIC_FORCE_32BIT = Cint(2147483647)

# dinput_replication_mode_t
const DINPUT_REPLICATION_PER_WORKER = Cint(0)
const DINPUT_REPLICATION_PER_REPLICA = Cint(1)
const DINPUT_REPLICATION_MODE_FORCE_32BIT = Cint(2147483647)

# dinput_reduce_op_t
const DINPUT_REDUCE_SUM = Cint(0)
const DINPUT_REDUCE_MEAN = Cint(1)
const DINPUT_REDUCE_OP_FORCE_32BIT = Cint(2147483647)

# ---------------------------------------------------------------------------------------
# Status codes, errors, version
# ---------------------------------------------------------------------------------------

dinput_status_name(code) = ccall(@fptr(:dinput_status_name), Ptr{UInt8}, (Cint,), code)
dinput_last_error_message() = ccall(@fptr(:dinput_last_error_message), Ptr{UInt8}, ())
dinput_last_error_code() = ccall(@fptr(:dinput_last_error_code), Cint, ())
dinput_error_set(code, message) =
    ccall(@fptr(:dinput_error_set), Cvoid, (Cint, Cstring), code, message)
dinput_error_clear() = ccall(@fptr(:dinput_error_clear), Cvoid, ())
dinput_version() = ccall(@fptr(:dinput_version), Ptr{UInt8}, ())
dinput_version_number() = ccall(@fptr(:dinput_version_number), Cint, ())
dinput_build_info() = ccall(@fptr(:dinput_build_info), Ptr{UInt8}, ())
# The package installs no launcher (see check_abi.mjs's NOT_IMPLEMENTED); declared for parity.
dinput_set_thread_launcher(launcher, user_data) = ccall(
    @fptr(:dinput_set_thread_launcher), Cvoid, (Ptr{Cvoid}, Ptr{Cvoid}), launcher, user_data)

# ---------------------------------------------------------------------------------------
# Data types and tensors
# ---------------------------------------------------------------------------------------

dinput_dtype_name(dtype) = ccall(@fptr(:dinput_dtype_name), Ptr{UInt8}, (Cint,), dtype)
dinput_dtype_size(dtype) = ccall(@fptr(:dinput_dtype_size), Csize_t, (Cint,), dtype)
dinput_dtype_from_name(name) =
    ccall(@fptr(:dinput_dtype_from_name), Cint, (Cstring,), name)
function dinput_tensor_new(out, dtype, shape, rank, data, nbytes)
    ccall(@fptr(:dinput_tensor_new), Cint,
        (Ptr{Ptr{Cvoid}}, Cint, Ptr{Int64}, Cint, Ptr{Cvoid}, Csize_t),
        out, dtype, shape, rank, data, nbytes)
end
function dinput_tensor_new_bytes(out, shape, rank, strings, lengths)
    ccall(@fptr(:dinput_tensor_new_bytes), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Int64}, Cint, Ptr{Ptr{UInt8}}, Ptr{Csize_t}),
        out, shape, rank, strings, lengths)
end
dinput_tensor_ref(out, tensor) =
    ccall(@fptr(:dinput_tensor_ref), Cint, (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}), out, tensor)
dinput_tensor_free(tensor) =
    ccall(@fptr(:dinput_tensor_free), Cvoid, (Ptr{Cvoid},), tensor)
dinput_tensor_dtype(tensor) =
    ccall(@fptr(:dinput_tensor_dtype), Cint, (Ptr{Cvoid},), tensor)
dinput_tensor_rank(tensor) =
    ccall(@fptr(:dinput_tensor_rank), Cint, (Ptr{Cvoid},), tensor)
dinput_tensor_shape(tensor) =
    ccall(@fptr(:dinput_tensor_shape), Ptr{Int64}, (Ptr{Cvoid},), tensor)
dinput_tensor_dim(tensor, i) =
    ccall(@fptr(:dinput_tensor_dim), Int64, (Ptr{Cvoid}, Cint), tensor, i)
dinput_tensor_num_elements(tensor) =
    ccall(@fptr(:dinput_tensor_num_elements), Int64, (Ptr{Cvoid},), tensor)
dinput_tensor_byte_size(tensor) =
    ccall(@fptr(:dinput_tensor_byte_size), Csize_t, (Ptr{Cvoid},), tensor)
dinput_tensor_data(tensor) =
    ccall(@fptr(:dinput_tensor_data), Ptr{Cvoid}, (Ptr{Cvoid},), tensor)
dinput_tensor_device_type(tensor) =
    ccall(@fptr(:dinput_tensor_device_type), Cint, (Ptr{Cvoid},), tensor)
dinput_tensor_device_index(tensor) =
    ccall(@fptr(:dinput_tensor_device_index), Cint, (Ptr{Cvoid},), tensor)
# Waits for the device-to-host copy of a CUDA tensor: GC-safe like the other waits.
function dinput_tensor_to_host(out, tensor)
    @gcsafe_ccall(@fptr(:dinput_tensor_to_host), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}),
        out, tensor)
end
# cudaHostAlloc may wait for the GPU: GC-safe.
function dinput_tensor_new_pinned(out, dtype, shape, rank, data, nbytes)
    @gcsafe_ccall(@fptr(:dinput_tensor_new_pinned), Cint,
        (Ptr{Ptr{Cvoid}}, Cint, Ptr{Int64}, Cint, Ptr{Cvoid}, Csize_t),
        out, dtype, shape, rank, data, nbytes)
end
function dinput_tensor_copy_to(out, out_bytes, tensor, expected)
    ccall(@fptr(:dinput_tensor_copy_to), Cint,
        (Ptr{Cvoid}, Csize_t, Ptr{Cvoid}, Cint),
        out, out_bytes, tensor, expected)
end
function dinput_tensor_string_view(out, out_len, tensor, index)
    ccall(@fptr(:dinput_tensor_string_view), Cint,
        (Ptr{Ptr{UInt8}}, Ptr{Csize_t}, Ptr{Cvoid}, Int64),
        out, out_len, tensor, index)
end
function dinput_tensor_to_dlpack(out, tensor)
    ccall(@fptr(:dinput_tensor_to_dlpack), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}),
        out, tensor)
end

# ---------------------------------------------------------------------------------------
# GPU memory: the caches behind CUDA tensors
# ---------------------------------------------------------------------------------------

# May wait for GPU work, but never for a thread that runs Julia code: a plain ccall.
dinput_cuda_empty_cache() = ccall(@fptr(:dinput_cuda_empty_cache), Cint, ())
dinput_cuda_set_cache_limit(bytes) =
    ccall(@fptr(:dinput_cuda_set_cache_limit), Cint, (Csize_t,), bytes)
dinput_cuda_cache_limit(out) =
    ccall(@fptr(:dinput_cuda_cache_limit), Cint, (Ptr{Csize_t},), out)
function dinput_cuda_pool_bytes(out_held, out_cached, device)
    ccall(@fptr(:dinput_cuda_pool_bytes), Cint,
        (Ptr{Csize_t}, Ptr{Csize_t}, Cint),
        out_held, out_cached, device)
end

# ---------------------------------------------------------------------------------------
# Elements: tuples of tensors
# ---------------------------------------------------------------------------------------

function dinput_element_new(out, tensors, count)
    ccall(@fptr(:dinput_element_new), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Ptr{Cvoid}}, Csize_t),
        out, tensors, count)
end
dinput_element_free(element) =
    ccall(@fptr(:dinput_element_free), Cvoid, (Ptr{Cvoid},), element)
dinput_element_ref(out, element) =
    ccall(@fptr(:dinput_element_ref), Cint, (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}), out, element)
dinput_element_size(element) =
    ccall(@fptr(:dinput_element_size), Csize_t, (Ptr{Cvoid},), element)
dinput_element_get(element, i) =
    ccall(@fptr(:dinput_element_get), Ptr{Cvoid}, (Ptr{Cvoid}, Csize_t), element, i)

# dinput_tensor_info_t: what the accessors of one tensor return, filled for a whole element or
# step by one call (the layout of the C struct, field for field).
struct dinput_tensor_info_t
    tensor::Ptr{Cvoid}
    data::Ptr{Cvoid}
    shape::Ptr{Int64}
    byte_size::Csize_t
    rank::Int32
    dtype::Cint
    device_type::Cint
    device_index::Int32
end
dinput_element_tensor_infos(count, infos, capacity, element) =
    ccall(@fptr(:dinput_element_tensor_infos), Cint,
          (Ptr{Csize_t}, Ptr{dinput_tensor_info_t}, Csize_t, Ptr{Cvoid}),
          count, infos, capacity, element)

# ---------------------------------------------------------------------------------------
# Element specs
# ---------------------------------------------------------------------------------------

dinput_spec_new(out) = ccall(@fptr(:dinput_spec_new), Cint, (Ptr{Ptr{Cvoid}},), out)
function dinput_spec_add(spec, dtype, shape, rank)
    ccall(@fptr(:dinput_spec_add), Cint,
        (Ptr{Cvoid}, Cint, Ptr{Int64}, Cint),
        spec, dtype, shape, rank)
end
dinput_spec_free(spec) = ccall(@fptr(:dinput_spec_free), Cvoid, (Ptr{Cvoid},), spec)
dinput_spec_size(spec) = ccall(@fptr(:dinput_spec_size), Csize_t, (Ptr{Cvoid},), spec)
dinput_spec_dtype(spec, i) =
    ccall(@fptr(:dinput_spec_dtype), Cint, (Ptr{Cvoid}, Csize_t), spec, i)
dinput_spec_rank(spec, i) =
    ccall(@fptr(:dinput_spec_rank), Cint, (Ptr{Cvoid}, Csize_t), spec, i)
dinput_spec_shape(spec, i) =
    ccall(@fptr(:dinput_spec_shape), Ptr{Int64}, (Ptr{Cvoid}, Csize_t), spec, i)

# ---------------------------------------------------------------------------------------
# Dataset options
# ---------------------------------------------------------------------------------------

dinput_options_new(out) = ccall(@fptr(:dinput_options_new), Cint, (Ptr{Ptr{Cvoid}},), out)
dinput_options_free(options) =
    ccall(@fptr(:dinput_options_free), Cvoid, (Ptr{Cvoid},), options)
function dinput_options_set_auto_shard_policy(options, policy)
    ccall(@fptr(:dinput_options_set_auto_shard_policy), Cint,
        (Ptr{Cvoid}, Cint),
        options, policy)
end
dinput_options_auto_shard_policy(options) =
    ccall(@fptr(:dinput_options_auto_shard_policy), Cint, (Ptr{Cvoid},), options)
function dinput_options_set_skip_corrupt_records(options, enable)
    ccall(@fptr(:dinput_options_set_skip_corrupt_records), Cint,
        (Ptr{Cvoid}, Cint),
        options, enable)
end

function dinput_options_skip_corrupt_records(options)
    ccall(@fptr(:dinput_options_skip_corrupt_records), Cint,
        (Ptr{Cvoid},),
        options)
end

function dinput_options_set_max_record_bytes(options, max_bytes)
    ccall(@fptr(:dinput_options_set_max_record_bytes), Cint,
        (Ptr{Cvoid}, Int64),
        options, max_bytes)
end

function dinput_options_max_record_bytes(options)
    ccall(@fptr(:dinput_options_max_record_bytes), Int64,
        (Ptr{Cvoid},),
        options)
end

function dinput_options_set_map_files(options, enable)
    ccall(@fptr(:dinput_options_set_map_files), Cint,
        (Ptr{Cvoid}, Cint),
        options, enable)
end

function dinput_options_map_files(options)
    ccall(@fptr(:dinput_options_map_files), Cint,
        (Ptr{Cvoid},),
        options)
end

function dinput_options_set_allow_nonregular_files(options, enable)
    ccall(@fptr(:dinput_options_set_allow_nonregular_files), Cint,
        (Ptr{Cvoid}, Cint),
        options, enable)
end

function dinput_options_allow_nonregular_files(options)
    ccall(@fptr(:dinput_options_allow_nonregular_files), Cint,
        (Ptr{Cvoid},),
        options)
end
function dinput_options_set_deterministic(options, enable)
    ccall(@fptr(:dinput_options_set_deterministic), Cint,
        (Ptr{Cvoid}, Cint),
        options, enable)
end
function dinput_options_deterministic(options)
    ccall(@fptr(:dinput_options_deterministic), Cint,
        (Ptr{Cvoid},),
        options)
end

# ---------------------------------------------------------------------------------------
# Transformation options
# ---------------------------------------------------------------------------------------

function dinput_map_options_new(out)
    ccall(@fptr(:dinput_map_options_new), Cint,
        (Ptr{Ptr{Cvoid}},),
        out)
end
function dinput_map_options_free(options)
    ccall(@fptr(:dinput_map_options_free), Cvoid,
        (Ptr{Cvoid},),
        options)
end
function dinput_map_options_set_out_spec(options, spec)
    ccall(@fptr(:dinput_map_options_set_out_spec), Cint,
        (Ptr{Cvoid}, Ptr{Cvoid}),
        options, spec)
end
function dinput_map_options_out_spec(out, options)
    ccall(@fptr(:dinput_map_options_out_spec), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}),
        out, options)
end
function dinput_map_options_set_num_parallel_calls(options, num_parallel_calls)
    ccall(@fptr(:dinput_map_options_set_num_parallel_calls), Cint,
        (Ptr{Cvoid}, Int64),
        options, num_parallel_calls)
end
function dinput_map_options_num_parallel_calls(options)
    ccall(@fptr(:dinput_map_options_num_parallel_calls), Int64,
        (Ptr{Cvoid},),
        options)
end
function dinput_map_options_set_deterministic(options, deterministic)
    ccall(@fptr(:dinput_map_options_set_deterministic), Cint,
        (Ptr{Cvoid}, Cint),
        options, deterministic)
end
function dinput_map_options_deterministic(options)
    ccall(@fptr(:dinput_map_options_deterministic), Cint,
        (Ptr{Cvoid},),
        options)
end
function dinput_interleave_options_new(out)
    ccall(@fptr(:dinput_interleave_options_new), Cint,
        (Ptr{Ptr{Cvoid}},),
        out)
end
function dinput_interleave_options_free(options)
    ccall(@fptr(:dinput_interleave_options_free), Cvoid,
        (Ptr{Cvoid},),
        options)
end
function dinput_interleave_options_set_cycle_length(options, cycle_length)
    ccall(@fptr(:dinput_interleave_options_set_cycle_length), Cint,
        (Ptr{Cvoid}, Int64),
        options, cycle_length)
end
function dinput_interleave_options_cycle_length(options)
    ccall(@fptr(:dinput_interleave_options_cycle_length), Int64,
        (Ptr{Cvoid},),
        options)
end
function dinput_interleave_options_set_block_length(options, block_length)
    ccall(@fptr(:dinput_interleave_options_set_block_length), Cint,
        (Ptr{Cvoid}, Int64),
        options, block_length)
end
function dinput_interleave_options_block_length(options)
    ccall(@fptr(:dinput_interleave_options_block_length), Int64,
        (Ptr{Cvoid},),
        options)
end
function dinput_interleave_options_set_num_parallel_calls(options, num_parallel_calls)
    ccall(@fptr(:dinput_interleave_options_set_num_parallel_calls), Cint,
        (Ptr{Cvoid}, Int64),
        options, num_parallel_calls)
end
function dinput_interleave_options_num_parallel_calls(options)
    ccall(@fptr(:dinput_interleave_options_num_parallel_calls), Int64,
        (Ptr{Cvoid},),
        options)
end
function dinput_interleave_options_set_deterministic(options, deterministic)
    ccall(@fptr(:dinput_interleave_options_set_deterministic), Cint,
        (Ptr{Cvoid}, Cint),
        options, deterministic)
end
function dinput_interleave_options_deterministic(options)
    ccall(@fptr(:dinput_interleave_options_deterministic), Cint,
        (Ptr{Cvoid},),
        options)
end
function dinput_batch_options_new(out)
    ccall(@fptr(:dinput_batch_options_new), Cint,
        (Ptr{Ptr{Cvoid}},),
        out)
end
function dinput_batch_options_free(options)
    ccall(@fptr(:dinput_batch_options_free), Cvoid,
        (Ptr{Cvoid},),
        options)
end
function dinput_batch_options_set_drop_remainder(options, drop_remainder)
    ccall(@fptr(:dinput_batch_options_set_drop_remainder), Cint,
        (Ptr{Cvoid}, Cint),
        options, drop_remainder)
end
function dinput_batch_options_drop_remainder(options)
    ccall(@fptr(:dinput_batch_options_drop_remainder), Cint,
        (Ptr{Cvoid},),
        options)
end
function dinput_batch_options_set_num_parallel_calls(options, num_parallel_calls)
    ccall(@fptr(:dinput_batch_options_set_num_parallel_calls), Cint,
        (Ptr{Cvoid}, Int64),
        options, num_parallel_calls)
end
function dinput_batch_options_num_parallel_calls(options)
    ccall(@fptr(:dinput_batch_options_num_parallel_calls), Int64,
        (Ptr{Cvoid},),
        options)
end
function dinput_batch_options_set_deterministic(options, deterministic)
    ccall(@fptr(:dinput_batch_options_set_deterministic), Cint,
        (Ptr{Cvoid}, Cint),
        options, deterministic)
end
function dinput_batch_options_deterministic(options)
    ccall(@fptr(:dinput_batch_options_deterministic), Cint,
        (Ptr{Cvoid},),
        options)
end
function dinput_shuffle_options_new(out)
    ccall(@fptr(:dinput_shuffle_options_new), Cint,
        (Ptr{Ptr{Cvoid}},),
        out)
end
function dinput_shuffle_options_free(options)
    ccall(@fptr(:dinput_shuffle_options_free), Cvoid,
        (Ptr{Cvoid},),
        options)
end
function dinput_shuffle_options_set_seed(options, seed, seed2)
    ccall(@fptr(:dinput_shuffle_options_set_seed), Cint,
        (Ptr{Cvoid}, Int64, Int64),
        options, seed, seed2)
end
function dinput_shuffle_options_seed(options)
    ccall(@fptr(:dinput_shuffle_options_seed), Int64,
        (Ptr{Cvoid},),
        options)
end
function dinput_shuffle_options_seed2(options)
    ccall(@fptr(:dinput_shuffle_options_seed2), Int64,
        (Ptr{Cvoid},),
        options)
end
function dinput_shuffle_options_set_reshuffle_each_iteration(options, enable)
    ccall(@fptr(:dinput_shuffle_options_set_reshuffle_each_iteration), Cint,
        (Ptr{Cvoid}, Cint),
        options, enable)
end
function dinput_shuffle_options_reshuffle_each_iteration(options)
    ccall(@fptr(:dinput_shuffle_options_reshuffle_each_iteration), Cint,
        (Ptr{Cvoid},),
        options)
end
function dinput_list_files_options_new(out)
    ccall(@fptr(:dinput_list_files_options_new), Cint,
        (Ptr{Ptr{Cvoid}},),
        out)
end
function dinput_list_files_options_free(options)
    ccall(@fptr(:dinput_list_files_options_free), Cvoid,
        (Ptr{Cvoid},),
        options)
end
function dinput_list_files_options_set_shuffle(options, shuffle)
    ccall(@fptr(:dinput_list_files_options_set_shuffle), Cint,
        (Ptr{Cvoid}, Cint),
        options, shuffle)
end
function dinput_list_files_options_shuffle(options)
    ccall(@fptr(:dinput_list_files_options_shuffle), Cint,
        (Ptr{Cvoid},),
        options)
end
function dinput_list_files_options_set_seed(options, seed, seed2)
    ccall(@fptr(:dinput_list_files_options_set_seed), Cint,
        (Ptr{Cvoid}, Int64, Int64),
        options, seed, seed2)
end
function dinput_list_files_options_seed(options)
    ccall(@fptr(:dinput_list_files_options_seed), Int64,
        (Ptr{Cvoid},),
        options)
end
function dinput_list_files_options_seed2(options)
    ccall(@fptr(:dinput_list_files_options_seed2), Int64,
        (Ptr{Cvoid},),
        options)
end
function dinput_records_options_new(out)
    ccall(@fptr(:dinput_records_options_new), Cint,
        (Ptr{Ptr{Cvoid}},),
        out)
end
function dinput_records_options_free(options)
    ccall(@fptr(:dinput_records_options_free), Cvoid,
        (Ptr{Cvoid},),
        options)
end
function dinput_records_options_set_compression(options, compression)
    ccall(@fptr(:dinput_records_options_set_compression), Cint,
        (Ptr{Cvoid}, Cint),
        options, compression)
end
function dinput_records_options_compression(options)
    ccall(@fptr(:dinput_records_options_compression), Cint,
        (Ptr{Cvoid},),
        options)
end
function dinput_records_options_set_buffer_size(options, buffer_size)
    ccall(@fptr(:dinput_records_options_set_buffer_size), Cint,
        (Ptr{Cvoid}, Int64),
        options, buffer_size)
end
function dinput_records_options_buffer_size(options)
    ccall(@fptr(:dinput_records_options_buffer_size), Int64,
        (Ptr{Cvoid},),
        options)
end
function dinput_record_writer_options_new(out)
    ccall(@fptr(:dinput_record_writer_options_new), Cint,
        (Ptr{Ptr{Cvoid}},),
        out)
end
function dinput_record_writer_options_free(options)
    ccall(@fptr(:dinput_record_writer_options_free), Cvoid,
        (Ptr{Cvoid},),
        options)
end
function dinput_record_writer_options_set_compression(options, compression)
    ccall(@fptr(:dinput_record_writer_options_set_compression), Cint,
        (Ptr{Cvoid}, Cint),
        options, compression)
end
function dinput_record_writer_options_compression(options)
    ccall(@fptr(:dinput_record_writer_options_compression), Cint,
        (Ptr{Cvoid},),
        options)
end
function dinput_record_writer_options_set_level(options, level)
    ccall(@fptr(:dinput_record_writer_options_set_level), Cint,
        (Ptr{Cvoid}, Cint),
        options, level)
end
function dinput_record_writer_options_level(options)
    ccall(@fptr(:dinput_record_writer_options_level), Cint,
        (Ptr{Cvoid},),
        options)
end
function dinput_record_writer_options_set_zstd_window_log(options, window_log)
    ccall(@fptr(:dinput_record_writer_options_set_zstd_window_log), Cint,
        (Ptr{Cvoid}, Cint),
        options, window_log)
end
function dinput_record_writer_options_zstd_window_log(options)
    ccall(@fptr(:dinput_record_writer_options_zstd_window_log), Cint,
        (Ptr{Cvoid},),
        options)
end

# ---------------------------------------------------------------------------------------
# Datasets
# ---------------------------------------------------------------------------------------

dinput_dataset_free(dataset) =
    ccall(@fptr(:dinput_dataset_free), Cvoid, (Ptr{Cvoid},), dataset)
dinput_dataset_ref(out, dataset) =
    ccall(@fptr(:dinput_dataset_ref), Cint, (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}), out, dataset)
dinput_dataset_cardinality(dataset) =
    ccall(@fptr(:dinput_dataset_cardinality), Int64, (Ptr{Cvoid},), dataset)
function dinput_dataset_element_spec(out, dataset)
    ccall(@fptr(:dinput_dataset_element_spec), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}),
        out, dataset)
end
dinput_dataset_name(dataset) =
    ccall(@fptr(:dinput_dataset_name), Ptr{UInt8}, (Ptr{Cvoid},), dataset)
function dinput_dataset_range(out, start, stop, step)
    ccall(@fptr(:dinput_dataset_range), Cint,
        (Ptr{Ptr{Cvoid}}, Int64, Int64, Int64),
        out, start, stop, step)
end
function dinput_dataset_from_tensors(out, element)
    ccall(@fptr(:dinput_dataset_from_tensors), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}),
        out, element)
end
function dinput_dataset_from_tensor_slices(out, element)
    ccall(@fptr(:dinput_dataset_from_tensor_slices), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}),
        out, element)
end
function dinput_dataset_from_generator(out, spec, init, next_fn, finalize_fn, user_data,
                                       free_user_data)
    ccall(@fptr(:dinput_dataset_from_generator), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid},
         Ptr{Cvoid}),
        out, spec, init, next_fn, finalize_fn, user_data, free_user_data)
end
function dinput_dataset_from_generator_with_state(out, spec, init, next_fn, finalize_fn,
                                                  save_fn, restore_fn, user_data,
                                                  free_user_data)
    ccall(@fptr(:dinput_dataset_from_generator_with_state), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid},
         Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}),
        out, spec, init, next_fn, finalize_fn, save_fn, restore_fn, user_data, free_user_data)
end
function dinput_dataset_text_lines(out, files, num_files)
    ccall(@fptr(:dinput_dataset_text_lines), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Ptr{UInt8}}, Csize_t),
        out, files, num_files)
end
function dinput_dataset_records(out, files, num_files, options)
    ccall(@fptr(:dinput_dataset_records), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Ptr{UInt8}}, Csize_t, Ptr{Cvoid}),
        out, files, num_files, options)
end
function dinput_dataset_fixed_length_records(out, files, num_files, record_bytes, header_bytes,
                                             footer_bytes)
    ccall(@fptr(:dinput_dataset_fixed_length_records), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Ptr{UInt8}}, Csize_t, Int64, Int64, Int64),
        out, files, num_files, record_bytes, header_bytes, footer_bytes)
end
function dinput_dataset_list_files(out, patterns, num_patterns, options)
    @gcsafe_ccall(@fptr(:dinput_dataset_list_files), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Ptr{UInt8}}, Csize_t, Ptr{Cvoid}),
        out, patterns, num_patterns, options)
end
function dinput_dataset_batch(out, input, batch_size, options)
    ccall(@fptr(:dinput_dataset_batch), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Int64, Ptr{Cvoid}),
        out, input, batch_size, options)
end
dinput_dataset_unbatch(out, input) =
    ccall(@fptr(:dinput_dataset_unbatch), Cint, (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}), out, input)
function dinput_dataset_repeat(out, input, count)
    ccall(@fptr(:dinput_dataset_repeat), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Int64),
        out, input, count)
end
function dinput_dataset_take(out, input, count)
    ccall(@fptr(:dinput_dataset_take), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Int64),
        out, input, count)
end
function dinput_dataset_skip(out, input, count)
    ccall(@fptr(:dinput_dataset_skip), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Int64),
        out, input, count)
end
function dinput_dataset_shard(out, input, num_shards, index)
    ccall(@fptr(:dinput_dataset_shard), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Int64, Int64),
        out, input, num_shards, index)
end
function dinput_dataset_shuffle(out, input, buffer_size, options)
    ccall(@fptr(:dinput_dataset_shuffle), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Int64, Ptr{Cvoid}),
        out, input, buffer_size, options)
end
function dinput_dataset_map(out, input, fn, user_data, free_user_data, options)
    ccall(@fptr(:dinput_dataset_map), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}),
        out, input, fn, user_data, free_user_data, options)
end
function dinput_dataset_map_many(out, input, max_count, fn, user_data, free_user_data, options)
    ccall(@fptr(:dinput_dataset_map_many), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Csize_t, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}),
        out, input, max_count, fn, user_data, free_user_data, options)
end
function dinput_dataset_filter(out, input, fn, user_data, free_user_data)
    ccall(@fptr(:dinput_dataset_filter), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}),
        out, input, fn, user_data, free_user_data)
end
function dinput_dataset_interleave(out, input, fn, out_spec, user_data, free_user_data, options)
    ccall(@fptr(:dinput_dataset_interleave), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}),
        out, input, fn, out_spec, user_data, free_user_data, options)
end
function dinput_dataset_enumerate(out, input, start)
    ccall(@fptr(:dinput_dataset_enumerate), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Int64),
        out, input, start)
end
function dinput_dataset_prefetch(out, input, buffer_size)
    ccall(@fptr(:dinput_dataset_prefetch), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Int64),
        out, input, buffer_size)
end
function dinput_dataset_rebatch(out, input, sizes, num_sizes, drop_remainder)
    ccall(@fptr(:dinput_dataset_rebatch), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Int64}, Csize_t, Cint),
        out, input, sizes, num_sizes, drop_remainder)
end
# -- padded batches, buckets, windows, flat_map, and readers as values --
dinput_padded_batch_options_new(out) =
    ccall(@fptr(:dinput_padded_batch_options_new), Cint, (Ptr{Ptr{Cvoid}},), out)
dinput_padded_batch_options_free(options) =
    ccall(@fptr(:dinput_padded_batch_options_free), Cvoid, (Ptr{Cvoid},), options)
dinput_padded_batch_options_set_drop_remainder(options, drop_remainder) =
    ccall(@fptr(:dinput_padded_batch_options_set_drop_remainder), Cint, (Ptr{Cvoid}, Cint),
        options, drop_remainder)
dinput_padded_batch_options_drop_remainder(options) =
    ccall(@fptr(:dinput_padded_batch_options_drop_remainder), Cint, (Ptr{Cvoid},), options)
dinput_padded_batch_options_set_padded_shapes(options, shapes) =
    ccall(@fptr(:dinput_padded_batch_options_set_padded_shapes), Cint, (Ptr{Cvoid}, Ptr{Cvoid}),
        options, shapes)
dinput_padded_batch_options_padded_shapes(out, options) =
    ccall(@fptr(:dinput_padded_batch_options_padded_shapes), Cint, (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}),
        out, options)
dinput_padded_batch_options_set_padding_values(options, values) =
    ccall(@fptr(:dinput_padded_batch_options_set_padding_values), Cint, (Ptr{Cvoid}, Ptr{Cvoid}),
        options, values)
dinput_padded_batch_options_padding_values(out, options) =
    ccall(@fptr(:dinput_padded_batch_options_padding_values), Cint, (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}),
        out, options)
function dinput_dataset_padded_batch(out, input, batch_size, options)
    ccall(@fptr(:dinput_dataset_padded_batch), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Int64, Ptr{Cvoid}),
        out, input, batch_size, options)
end
function dinput_dataset_bucket_by_sequence_length(out, input, length_component, boundaries,
                                                  num_boundaries, batch_sizes, num_batch_sizes,
                                                  pad_to_bucket_boundary, options)
    ccall(@fptr(:dinput_dataset_bucket_by_sequence_length), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Csize_t, Ptr{Int64}, Csize_t, Ptr{Int64}, Csize_t, Cint,
         Ptr{Cvoid}),
        out, input, length_component, boundaries, num_boundaries, batch_sizes, num_batch_sizes,
        pad_to_bucket_boundary, options)
end
function dinput_dataset_bucket_by_sequence_length_fn(out, input, fn, user_data, free_user_data,
                                                     boundaries, num_boundaries, batch_sizes,
                                                     num_batch_sizes, pad_to_bucket_boundary,
                                                     options)
    ccall(@fptr(:dinput_dataset_bucket_by_sequence_length_fn), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Int64}, Csize_t,
         Ptr{Int64}, Csize_t, Cint, Ptr{Cvoid}),
        out, input, fn, user_data, free_user_data, boundaries, num_boundaries, batch_sizes,
        num_batch_sizes, pad_to_bucket_boundary, options)
end
function dinput_dataset_window(out, input, size, shift, stride, drop_remainder)
    ccall(@fptr(:dinput_dataset_window), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Int64, Int64, Int64, Cint),
        out, input, size, shift, stride, drop_remainder)
end
function dinput_dataset_flat_map(out, input, fn, out_spec, user_data, free_user_data)
    ccall(@fptr(:dinput_dataset_flat_map), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}),
        out, input, fn, out_spec, user_data, free_user_data)
end
dinput_reader_records(out, options) =
    ccall(@fptr(:dinput_reader_records), Cint, (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}), out, options)
dinput_reader_text_lines(out) =
    ccall(@fptr(:dinput_reader_text_lines), Cint, (Ptr{Ptr{Cvoid}},), out)
function dinput_reader_fixed_length_records(out, record_bytes, header_bytes, footer_bytes)
    ccall(@fptr(:dinput_reader_fixed_length_records), Cint,
        (Ptr{Ptr{Cvoid}}, Int64, Int64, Int64),
        out, record_bytes, header_bytes, footer_bytes)
end
dinput_reader_free(reader) = ccall(@fptr(:dinput_reader_free), Cvoid, (Ptr{Cvoid},), reader)
function dinput_dataset_interleave_reader(out, input, reader, options)
    ccall(@fptr(:dinput_dataset_interleave_reader), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}),
        out, input, reader, options)
end
function dinput_dataset_flat_map_reader(out, input, reader)
    ccall(@fptr(:dinput_dataset_flat_map_reader), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}),
        out, input, reader)
end
function dinput_dataset_with_options(out, input, options)
    ccall(@fptr(:dinput_dataset_with_options), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}),
        out, input, options)
end

# Several datasets, cache and ignore_errors
function dinput_dataset_zip(out, datasets, num_datasets)
    ccall(@fptr(:dinput_dataset_zip), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Ptr{Cvoid}}, Csize_t),
        out, datasets, num_datasets)
end
function dinput_dataset_concatenate(out, input, other)
    ccall(@fptr(:dinput_dataset_concatenate), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}),
        out, input, other)
end
function dinput_dataset_sample_from_datasets(out, datasets, num_datasets, weights, seed,
                                             stop_on_empty_dataset)
    ccall(@fptr(:dinput_dataset_sample_from_datasets), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Ptr{Cvoid}}, Csize_t, Ptr{Cdouble}, Int64, Cint),
        out, datasets, num_datasets, weights, seed, stop_on_empty_dataset)
end
function dinput_dataset_choose_from_datasets(out, datasets, num_datasets, selector,
                                             stop_on_empty_dataset)
    ccall(@fptr(:dinput_dataset_choose_from_datasets), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Ptr{Cvoid}}, Csize_t, Ptr{Cvoid}, Cint),
        out, datasets, num_datasets, selector, stop_on_empty_dataset)
end
function dinput_dataset_cache(out, input, filename)
    ccall(@fptr(:dinput_dataset_cache), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Cstring),
        out, input, filename)
end
function dinput_dataset_ignore_errors(out, input, log_warning)
    ccall(@fptr(:dinput_dataset_ignore_errors), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Cint),
        out, input, log_warning)
end

# ---------------------------------------------------------------------------------------
# Images
# ---------------------------------------------------------------------------------------

function dinput_image_options_new(out)
    ccall(@fptr(:dinput_image_options_new), Cint,
        (Ptr{Ptr{Cvoid}},),
        out)
end
function dinput_image_options_free(options)
    ccall(@fptr(:dinput_image_options_free), Cvoid,
        (Ptr{Cvoid},),
        options)
end
function dinput_image_options_set_component(options, component)
    ccall(@fptr(:dinput_image_options_set_component), Cint,
        (Ptr{Cvoid}, Int64),
        options, component)
end
function dinput_image_options_component(options)
    ccall(@fptr(:dinput_image_options_component), Int64,
        (Ptr{Cvoid},),
        options)
end
function dinput_image_options_set_num_parallel_calls(options, num_parallel_calls)
    ccall(@fptr(:dinput_image_options_set_num_parallel_calls), Cint,
        (Ptr{Cvoid}, Int64),
        options, num_parallel_calls)
end
function dinput_image_options_num_parallel_calls(options)
    ccall(@fptr(:dinput_image_options_num_parallel_calls), Int64,
        (Ptr{Cvoid},),
        options)
end
function dinput_image_options_set_deterministic(options, deterministic)
    ccall(@fptr(:dinput_image_options_set_deterministic), Cint,
        (Ptr{Cvoid}, Cint),
        options, deterministic)
end
function dinput_image_options_deterministic(options)
    ccall(@fptr(:dinput_image_options_deterministic), Cint,
        (Ptr{Cvoid},),
        options)
end
function dinput_dataset_decode_jpeg(out, input, channels, options)
    ccall(@fptr(:dinput_dataset_decode_jpeg), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Int64, Ptr{Cvoid}),
        out, input, channels, options)
end
function dinput_dataset_decode_png(out, input, channels, options)
    ccall(@fptr(:dinput_dataset_decode_png), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Int64, Ptr{Cvoid}),
        out, input, channels, options)
end
function dinput_dataset_resize(out, input, height, width, options)
    ccall(@fptr(:dinput_dataset_resize), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Int64, Int64, Ptr{Cvoid}),
        out, input, height, width, options)
end
function dinput_dataset_center_crop(out, input, height, width, options)
    ccall(@fptr(:dinput_dataset_center_crop), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Int64, Int64, Ptr{Cvoid}),
        out, input, height, width, options)
end
function dinput_dataset_random_crop(out, input, height, width, seed, options)
    ccall(@fptr(:dinput_dataset_random_crop), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Int64, Int64, Int64, Ptr{Cvoid}),
        out, input, height, width, seed, options)
end
function dinput_dataset_random_resized_crop(out, input, height, width, scale_min, scale_max, ratio_min, ratio_max, seed, options)
    ccall(@fptr(:dinput_dataset_random_resized_crop), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Int64, Int64, Cdouble, Cdouble, Cdouble, Cdouble, Int64, Ptr{Cvoid}),
        out, input, height, width, scale_min, scale_max, ratio_min, ratio_max, seed, options)
end
function dinput_dataset_random_flip_left_right(out, input, seed, options)
    ccall(@fptr(:dinput_dataset_random_flip_left_right), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Int64, Ptr{Cvoid}),
        out, input, seed, options)
end
function dinput_dataset_cast_image(out, input, dtype, options)
    ccall(@fptr(:dinput_dataset_cast_image), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Cint, Ptr{Cvoid}),
        out, input, dtype, options)
end
function dinput_dataset_normalize(out, input, mean, stddev, count, dtype, options)
    ccall(@fptr(:dinput_dataset_normalize), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cfloat}, Ptr{Cfloat}, Csize_t, Cint, Ptr{Cvoid}),
        out, input, mean, stddev, count, dtype, options)
end

# ---------------------------------------------------------------------------------------
# Iterators and optionals
# ---------------------------------------------------------------------------------------

function dinput_dataset_iterator(out, dataset)
    @gcsafe_ccall(@fptr(:dinput_dataset_iterator), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}),
        out, dataset)
end
dinput_iterator_free(iterator) =
    @gcsafe_ccall(@fptr(:dinput_iterator_free), Cvoid, (Ptr{Cvoid},), iterator)
dinput_iterator_cancel(iterator) =
    ccall(@fptr(:dinput_iterator_cancel), Cint, (Ptr{Cvoid},), iterator)
function dinput_iterator_get_next(out, iterator)
    @gcsafe_ccall(@fptr(:dinput_iterator_get_next), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}),
        out, iterator)
end
function dinput_iterator_get_next_as_optional(out, iterator)
    @gcsafe_ccall(@fptr(:dinput_iterator_get_next_as_optional), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}),
        out, iterator)
end
function dinput_iterator_element_spec(out, iterator)
    ccall(@fptr(:dinput_iterator_element_spec), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}),
        out, iterator)
end
function dinput_iterator_statistic(out, iterator, name)
    ccall(@fptr(:dinput_iterator_statistic), Cint,
        (Ptr{Int64}, Ptr{Cvoid}, Cstring),
        out, iterator, name)
end

# checkpoints
dinput_iterator_save(out, iterator) =
    ccall(@fptr(:dinput_iterator_save), Cint, (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}), out, iterator)
dinput_state_data(state) = ccall(@fptr(:dinput_state_data), Ptr{Cvoid}, (Ptr{Cvoid},), state)
dinput_state_size(state) = ccall(@fptr(:dinput_state_size), Csize_t, (Ptr{Cvoid},), state)
dinput_state_free(state) = ccall(@fptr(:dinput_state_free), Cvoid, (Ptr{Cvoid},), state)
function dinput_dataset_iterator_from_state(out, dataset, state, size)
    @gcsafe_ccall(@fptr(:dinput_dataset_iterator_from_state), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}, Csize_t),
        out, dataset, state, size)
end
dinput_dist_iterator_save(out, iterator) =
    ccall(@fptr(:dinput_dist_iterator_save), Cint, (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}), out, iterator)
function dinput_dist_dataset_iterator_from_state(out, dataset, state, size)
    @gcsafe_ccall(@fptr(:dinput_dist_dataset_iterator_from_state), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}, Csize_t),
        out, dataset, state, size)
end
dinput_state_describe(out, state, size) =
    ccall(@fptr(:dinput_state_describe), Cint, (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Csize_t),
        out, state, size)
dinput_optional_free(optional) =
    ccall(@fptr(:dinput_optional_free), Cvoid, (Ptr{Cvoid},), optional)
dinput_optional_has_value(optional) =
    ccall(@fptr(:dinput_optional_has_value), Cint, (Ptr{Cvoid},), optional)
function dinput_optional_get_value(out, optional)
    ccall(@fptr(:dinput_optional_get_value), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}),
        out, optional)
end

# ---------------------------------------------------------------------------------------
# Record files: writing
# ---------------------------------------------------------------------------------------

function dinput_record_writer_open(out, path, options)
    ccall(@fptr(:dinput_record_writer_open), Cint,
        (Ptr{Ptr{Cvoid}}, Cstring, Ptr{Cvoid}),
        out, path, options)
end
function dinput_record_writer_write(writer, data, size)
    ccall(@fptr(:dinput_record_writer_write), Cint,
        (Ptr{Cvoid}, Ptr{Cvoid}, Csize_t),
        writer, data, size)
end
dinput_record_writer_flush(writer) =
    @gcsafe_ccall(@fptr(:dinput_record_writer_flush), Cint, (Ptr{Cvoid},), writer)
dinput_record_writer_close(writer) =
    @gcsafe_ccall(@fptr(:dinput_record_writer_close), Cint, (Ptr{Cvoid},), writer)
dinput_record_writer_discard(writer) =
    @gcsafe_ccall(@fptr(:dinput_record_writer_discard), Cint, (Ptr{Cvoid},), writer)
dinput_record_writer_free(writer) =
    @gcsafe_ccall(@fptr(:dinput_record_writer_free), Cvoid, (Ptr{Cvoid},), writer)

# ---------------------------------------------------------------------------------------
# Clusters
# ---------------------------------------------------------------------------------------

function dinput_cluster_resolve(out, source)
    ccall(@fptr(:dinput_cluster_resolve), Cint, (Ptr{Ptr{Cvoid}}, Cstring), out, source)
end
function dinput_cluster_new(out, rank, world_size, rdzv_url)
    ccall(@fptr(:dinput_cluster_new), Cint,
        (Ptr{Ptr{Cvoid}}, Cint, Cint, Cstring),
        out, rank, world_size, rdzv_url)
end
dinput_cluster_free(cluster) =
    ccall(@fptr(:dinput_cluster_free), Cvoid, (Ptr{Cvoid},), cluster)
dinput_cluster_rank(cluster) =
    ccall(@fptr(:dinput_cluster_rank), Cint, (Ptr{Cvoid},), cluster)
dinput_cluster_world_size(cluster) =
    ccall(@fptr(:dinput_cluster_world_size), Cint, (Ptr{Cvoid},), cluster)
dinput_cluster_local_rank(cluster) =
    ccall(@fptr(:dinput_cluster_local_rank), Cint, (Ptr{Cvoid},), cluster)
dinput_cluster_local_world_size(cluster) =
    ccall(@fptr(:dinput_cluster_local_world_size), Cint, (Ptr{Cvoid},), cluster)
dinput_cluster_rdzv_url(cluster) =
    ccall(@fptr(:dinput_cluster_rdzv_url), Ptr{UInt8}, (Ptr{Cvoid},), cluster)
dinput_cluster_coordinator_host(cluster) =
    ccall(@fptr(:dinput_cluster_coordinator_host), Ptr{UInt8}, (Ptr{Cvoid},), cluster)
dinput_cluster_job_id(cluster) =
    ccall(@fptr(:dinput_cluster_job_id), Ptr{UInt8}, (Ptr{Cvoid},), cluster)
dinput_cluster_source(cluster) =
    ccall(@fptr(:dinput_cluster_source), Ptr{UInt8}, (Ptr{Cvoid},), cluster)
dinput_cluster_task_type(cluster) =
    ccall(@fptr(:dinput_cluster_task_type), Ptr{UInt8}, (Ptr{Cvoid},), cluster)
dinput_cluster_task_index(cluster) =
    ccall(@fptr(:dinput_cluster_task_index), Cint, (Ptr{Cvoid},), cluster)
dinput_cluster_is_input_worker(cluster) =
    ccall(@fptr(:dinput_cluster_is_input_worker), Cint, (Ptr{Cvoid},), cluster)

# ---------------------------------------------------------------------------------------
# Strategies and distribution
# ---------------------------------------------------------------------------------------

function dinput_collective_new_in_process(out, num_workers, timeout_ms)
    ccall(@fptr(:dinput_collective_new_in_process), Cint,
        (Ptr{Ptr{Cvoid}}, Cint, Int64),
        out, num_workers, timeout_ms)
end
dinput_collective_options_new(out) =
    ccall(@fptr(:dinput_collective_options_new), Cint, (Ptr{Ptr{Cvoid}},), out)
dinput_collective_options_free(options) =
    ccall(@fptr(:dinput_collective_options_free), Cvoid, (Ptr{Cvoid},), options)
function dinput_collective_options_set_timeout_ms(options, timeout_ms)
    ccall(@fptr(:dinput_collective_options_set_timeout_ms), Cint,
        (Ptr{Cvoid}, Int64), options, timeout_ms)
end
dinput_collective_options_timeout_ms(options) =
    ccall(@fptr(:dinput_collective_options_timeout_ms), Int64, (Ptr{Cvoid},), options)
function dinput_collective_options_set_job_id(options, job_id)
    ccall(@fptr(:dinput_collective_options_set_job_id), Cint,
        (Ptr{Cvoid}, Cstring), options, job_id)
end
dinput_collective_options_job_id(options) =
    ccall(@fptr(:dinput_collective_options_job_id), Ptr{UInt8}, (Ptr{Cvoid},), options)
function dinput_collective_options_set_interface(options, name)
    ccall(@fptr(:dinput_collective_options_set_interface), Cint,
        (Ptr{Cvoid}, Cstring), options, name)
end
dinput_collective_options_interface(options) =
    ccall(@fptr(:dinput_collective_options_interface), Ptr{UInt8}, (Ptr{Cvoid},), options)
function dinput_collective_options_set_address(options, address)
    ccall(@fptr(:dinput_collective_options_set_address), Cint,
        (Ptr{Cvoid}, Cstring), options, address)
end
dinput_collective_options_address(options) =
    ccall(@fptr(:dinput_collective_options_address), Ptr{UInt8}, (Ptr{Cvoid},), options)
function dinput_collective_options_set_allow_loopback(options, allow)
    ccall(@fptr(:dinput_collective_options_set_allow_loopback), Cint,
        (Ptr{Cvoid}, Cint), options, allow)
end
dinput_collective_options_allow_loopback(options) =
    ccall(@fptr(:dinput_collective_options_allow_loopback), Cint, (Ptr{Cvoid},), options)
function dinput_collective_new_from_cluster(out, cluster, options)
    @gcsafe_ccall(@fptr(:dinput_collective_new_from_cluster), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}),
        out, cluster, options)
end
dinput_collective_free(collective) =
    ccall(@fptr(:dinput_collective_free), Cvoid, (Ptr{Cvoid},), collective)
function dinput_collective_abort(collective, code, message)
    ccall(@fptr(:dinput_collective_abort), Cint,
        (Ptr{Cvoid}, Cint, Cstring),
        collective, code, message)
end
dinput_collective_num_workers(collective) =
    ccall(@fptr(:dinput_collective_num_workers), Cint, (Ptr{Cvoid},), collective)
function dinput_strategy_new(out, devices, num_devices)
    ccall(@fptr(:dinput_strategy_new), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Ptr{UInt8}}, Cint),
        out, devices, num_devices)
end
function dinput_strategy_new_multi_worker(out, collective, worker_index, devices, num_devices)
    ccall(@fptr(:dinput_strategy_new_multi_worker), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Cint, Ptr{Ptr{UInt8}}, Cint),
        out, collective, worker_index, devices, num_devices)
end
function dinput_strategy_new_multi_worker_cpu(out, collective, worker_index,
                                              num_replicas_in_sync)
    ccall(@fptr(:dinput_strategy_new_multi_worker_cpu), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Cint, Cint),
        out, collective, worker_index, num_replicas_in_sync)
end
dinput_strategy_free(strategy) =
    ccall(@fptr(:dinput_strategy_free), Cvoid, (Ptr{Cvoid},), strategy)
dinput_strategy_num_replicas_in_sync(strategy) =
    ccall(@fptr(:dinput_strategy_num_replicas_in_sync), Cint, (Ptr{Cvoid},), strategy)
dinput_strategy_num_local_replicas(strategy) =
    ccall(@fptr(:dinput_strategy_num_local_replicas), Cint, (Ptr{Cvoid},), strategy)
dinput_strategy_num_workers(strategy) =
    ccall(@fptr(:dinput_strategy_num_workers), Cint, (Ptr{Cvoid},), strategy)
dinput_strategy_worker_index(strategy) =
    ccall(@fptr(:dinput_strategy_worker_index), Cint, (Ptr{Cvoid},), strategy)
dinput_strategy_device(strategy, i) =
    ccall(@fptr(:dinput_strategy_device), Ptr{UInt8}, (Ptr{Cvoid}, Cint), strategy, i)
dinput_input_options_new(out) =
    ccall(@fptr(:dinput_input_options_new), Cint, (Ptr{Ptr{Cvoid}},), out)
dinput_input_options_free(options) =
    ccall(@fptr(:dinput_input_options_free), Cvoid, (Ptr{Cvoid},), options)
function dinput_input_options_set_fetch_to_device(o, enable)
    ccall(@fptr(:dinput_input_options_set_fetch_to_device), Cint,
        (Ptr{Cvoid}, Cint),
        o, enable)
end
function dinput_input_options_set_replication_mode(o, mode)
    ccall(@fptr(:dinput_input_options_set_replication_mode), Cint,
        (Ptr{Cvoid}, Cint),
        o, mode)
end
function dinput_input_options_set_place_dataset_on_device(o, enable)
    ccall(@fptr(:dinput_input_options_set_place_dataset_on_device), Cint,
        (Ptr{Cvoid}, Cint),
        o, enable)
end
function dinput_input_options_set_per_replica_buffer_size(o, size)
    ccall(@fptr(:dinput_input_options_set_per_replica_buffer_size), Cint,
        (Ptr{Cvoid}, Int64),
        o, size)
end
dinput_input_options_fetch_to_device(o) =
    ccall(@fptr(:dinput_input_options_fetch_to_device), Cint, (Ptr{Cvoid},), o)
dinput_input_options_replication_mode(o) =
    ccall(@fptr(:dinput_input_options_replication_mode), Cint, (Ptr{Cvoid},), o)
dinput_input_options_place_dataset_on_device(o) =
    ccall(@fptr(:dinput_input_options_place_dataset_on_device), Cint, (Ptr{Cvoid},), o)
dinput_input_options_per_replica_buffer_size(o) =
    ccall(@fptr(:dinput_input_options_per_replica_buffer_size), Int64, (Ptr{Cvoid},), o)
function dinput_strategy_distribute_dataset(out, strategy, dataset, options)
    @gcsafe_ccall(@fptr(:dinput_strategy_distribute_dataset), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}),
        out, strategy, dataset, options)
end
function dinput_strategy_distribute_datasets_from_function(out, strategy, fn, user_data,
                                                           free_user_data, options)
    @gcsafe_ccall(@fptr(:dinput_strategy_distribute_datasets_from_function), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}),
        out, strategy, fn, user_data, free_user_data, options)
end
dinput_input_context_num_input_pipelines(c) =
    ccall(@fptr(:dinput_input_context_num_input_pipelines), Cint, (Ptr{Cvoid},), c)
dinput_input_context_input_pipeline_id(c) =
    ccall(@fptr(:dinput_input_context_input_pipeline_id), Cint, (Ptr{Cvoid},), c)
dinput_input_context_num_replicas_in_sync(c) =
    ccall(@fptr(:dinput_input_context_num_replicas_in_sync), Cint, (Ptr{Cvoid},), c)
function dinput_input_context_get_per_replica_batch_size(out, c, global_batch_size)
    ccall(@fptr(:dinput_input_context_get_per_replica_batch_size), Cint,
        (Ptr{Int64}, Ptr{Cvoid}, Int64),
        out, c, global_batch_size)
end
dinput_dist_dataset_free(dataset) =
    ccall(@fptr(:dinput_dist_dataset_free), Cvoid, (Ptr{Cvoid},), dataset)
dinput_dist_dataset_plan(dataset) =
    ccall(@fptr(:dinput_dist_dataset_plan), Ptr{UInt8}, (Ptr{Cvoid},), dataset)
function dinput_dist_dataset_element_spec(out, dataset)
    ccall(@fptr(:dinput_dist_dataset_element_spec), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}),
        out, dataset)
end
function dinput_dist_dataset_iterator(out, dataset)
    @gcsafe_ccall(@fptr(:dinput_dist_dataset_iterator), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}),
        out, dataset)
end
dinput_dist_iterator_free(iterator) =
    @gcsafe_ccall(@fptr(:dinput_dist_iterator_free), Cvoid, (Ptr{Cvoid},), iterator)
dinput_dist_iterator_cancel(iterator) =
    ccall(@fptr(:dinput_dist_iterator_cancel), Cint, (Ptr{Cvoid},), iterator)
function dinput_dist_iterator_get_next(out, iterator)
    @gcsafe_ccall(@fptr(:dinput_dist_iterator_get_next), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}),
        out, iterator)
end
function dinput_dist_iterator_get_next_as_optional(out, iterator)
    @gcsafe_ccall(@fptr(:dinput_dist_iterator_get_next_as_optional), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}),
        out, iterator)
end
function dinput_dist_iterator_get_next_steps(num_steps, steps, infos, max_steps, infos_per_step,
                                             iterator)
    @gcsafe_ccall(@fptr(:dinput_dist_iterator_get_next_steps), Cint,
        (Ptr{Csize_t}, Ptr{Ptr{Cvoid}}, Ptr{dinput_tensor_info_t}, Csize_t, Csize_t, Ptr{Cvoid}),
        num_steps, steps, infos, max_steps, infos_per_step, iterator)
end
function dinput_dist_iterator_copy_steps(num_steps, unfit, buffer, buffer_size, dtype, shape,
                                         rank, max_steps, iterator)
    @gcsafe_ccall(@fptr(:dinput_dist_iterator_copy_steps), Cint,
        (Ptr{Csize_t}, Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Csize_t, Cint, Ptr{Int64}, Cint, Csize_t,
         Ptr{Cvoid}),
        num_steps, unfit, buffer, buffer_size, dtype, shape, rank, max_steps, iterator)
end
function dinput_dist_iterator_element_spec(out, iterator)
    ccall(@fptr(:dinput_dist_iterator_element_spec), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}),
        out, iterator)
end
function dinput_dist_iterator_statistic(out, iterator, name)
    ccall(@fptr(:dinput_dist_iterator_statistic), Cint,
        (Ptr{Int64}, Ptr{Cvoid}, Cstring),
        out, iterator, name)
end

# per-stage statistics and traces
dinput_string_free(string) = ccall(@fptr(:dinput_string_free), Cvoid, (Ptr{UInt8},), string)
dinput_options_set_statistics(options, enable) =
    ccall(@fptr(:dinput_options_set_statistics), Cint, (Ptr{Cvoid}, Cint), options, enable)
dinput_options_set_trace(options, max_events) =
    ccall(@fptr(:dinput_options_set_trace), Cint, (Ptr{Cvoid}, Int64), options, max_events)
dinput_options_set_ram_budget(options, bytes) =
    ccall(@fptr(:dinput_options_set_ram_budget), Cint, (Ptr{Cvoid}, Int64), options, bytes)
dinput_iterator_statistics(out, iterator) =
    ccall(@fptr(:dinput_iterator_statistics), Cint, (Ptr{Ptr{UInt8}}, Ptr{Cvoid}), out, iterator)
dinput_iterator_trace(out, iterator) =
    ccall(@fptr(:dinput_iterator_trace), Cint, (Ptr{Ptr{UInt8}}, Ptr{Cvoid}), out, iterator)
dinput_dist_iterator_statistics(out, iterator, all_workers) =
    ccall(@fptr(:dinput_dist_iterator_statistics), Cint, (Ptr{Ptr{UInt8}}, Ptr{Cvoid}, Cint),
        out, iterator, all_workers)
dinput_dist_iterator_trace(out, iterator) =
    ccall(@fptr(:dinput_dist_iterator_trace), Cint, (Ptr{Ptr{UInt8}}, Ptr{Cvoid}), out, iterator)
function dinput_optional_get_per_replica(out, optional)
    ccall(@fptr(:dinput_optional_get_per_replica), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}),
        out, optional)
end
dinput_per_replica_free(value) =
    ccall(@fptr(:dinput_per_replica_free), Cvoid, (Ptr{Cvoid},), value)
dinput_per_replica_ref(out, value) =
    ccall(@fptr(:dinput_per_replica_ref), Cint, (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}), out, value)
dinput_per_replica_size(value) =
    ccall(@fptr(:dinput_per_replica_size), Cint, (Ptr{Cvoid},), value)
dinput_per_replica_get(value, i) =
    ccall(@fptr(:dinput_per_replica_get), Ptr{Cvoid}, (Ptr{Cvoid}, Cint), value, i)
dinput_per_replica_tensor_infos(count, infos, capacity, value) =
    ccall(@fptr(:dinput_per_replica_tensor_infos), Cint,
          (Ptr{Csize_t}, Ptr{dinput_tensor_info_t}, Csize_t, Ptr{Cvoid}),
          count, infos, capacity, value)
function dinput_per_replica_new(out, elements, count)
    ccall(@fptr(:dinput_per_replica_new), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Ptr{Cvoid}}, Cint),
        out, elements, count)
end
function dinput_strategy_distribute_values_from_function(out, strategy, fn, user_data)
    @gcsafe_ccall(@fptr(:dinput_strategy_distribute_values_from_function), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}),
        out, strategy, fn, user_data)
end
dinput_value_context_replica_id_in_sync_group(c) =
    ccall(@fptr(:dinput_value_context_replica_id_in_sync_group), Cint, (Ptr{Cvoid},), c)
dinput_value_context_num_replicas_in_sync(c) =
    ccall(@fptr(:dinput_value_context_num_replicas_in_sync), Cint, (Ptr{Cvoid},), c)
function dinput_strategy_run(out, strategy, fn, args, user_data)
    @gcsafe_ccall(@fptr(:dinput_strategy_run), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}),
        out, strategy, fn, args, user_data)
end
dinput_replica_context_replica_id_in_sync_group(c) =
    ccall(@fptr(:dinput_replica_context_replica_id_in_sync_group), Cint, (Ptr{Cvoid},), c)
dinput_replica_context_num_replicas_in_sync(c) =
    ccall(@fptr(:dinput_replica_context_num_replicas_in_sync), Cint, (Ptr{Cvoid},), c)
dinput_replica_context_device(c) =
    ccall(@fptr(:dinput_replica_context_device), Ptr{UInt8}, (Ptr{Cvoid},), c)
function dinput_strategy_reduce(out, strategy, op, value, axis)
    @gcsafe_ccall(@fptr(:dinput_strategy_reduce), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Cint, Ptr{Cvoid}, Cint),
        out, strategy, op, value, axis)
end

# ---------------------------------------------------------------------------------------
# tf.train.Example parsing
# ---------------------------------------------------------------------------------------

dinput_feature_spec_new(out) = ccall(@fptr(:dinput_feature_spec_new), Cint, (Ptr{Ptr{Cvoid}},), out)
dinput_feature_spec_free(spec) =
    ccall(@fptr(:dinput_feature_spec_free), Cvoid, (Ptr{Cvoid},), spec)
function dinput_feature_spec_add_fixed_len(spec, key, dtype, shape, rank, default_value)
    ccall(@fptr(:dinput_feature_spec_add_fixed_len), Cint,
        (Ptr{Cvoid}, Cstring, Cint, Ptr{Int64}, Cint, Ptr{Cvoid}),
        spec, key, dtype, shape, rank, default_value)
end
function dinput_feature_spec_add_var_len(spec, key, dtype)
    ccall(@fptr(:dinput_feature_spec_add_var_len), Cint,
        (Ptr{Cvoid}, Cstring, Cint),
        spec, key, dtype)
end
function dinput_feature_spec_add_fixed_len_sequence(spec, key, dtype, shape, rank, allow_missing,
                                                    default_value)
    ccall(@fptr(:dinput_feature_spec_add_fixed_len_sequence), Cint,
        (Ptr{Cvoid}, Cstring, Cint, Ptr{Int64}, Cint, Cint, Ptr{Cvoid}),
        spec, key, dtype, shape, rank, allow_missing, default_value)
end
function dinput_dataset_parse_example(out, input, features, component)
    ccall(@fptr(:dinput_dataset_parse_example), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}, Int64),
        out, input, features, component)
end
function dinput_dataset_parse_single_example(out, input, features, component)
    ccall(@fptr(:dinput_dataset_parse_single_example), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}, Int64),
        out, input, features, component)
end
function dinput_dataset_parse_sequence_example(out, input, context_features, sequence_features,
                                               component)
    ccall(@fptr(:dinput_dataset_parse_sequence_example), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Int64),
        out, input, context_features, sequence_features, component)
end

# ---------------------------------------------------------------------------------------
# dinput_cuda.h: ordering CUDA streams after the copies that fill tensors
# ---------------------------------------------------------------------------------------

# The header declares these with CUDA's cudaStream_t and cudaEvent_t, which are pointers to
# opaque structs: Ptr{Cvoid} here, so that no CUDA package is needed. None of them blocks.
dinput_tensor_cuda_wait(tensor, stream) =
    ccall(@fptr(:dinput_tensor_cuda_wait), Cint, (Ptr{Cvoid}, Ptr{Cvoid}), tensor, stream)
dinput_element_cuda_wait(element, stream) =
    ccall(@fptr(:dinput_element_cuda_wait), Cint, (Ptr{Cvoid}, Ptr{Cvoid}), element, stream)
function dinput_tensor_cuda_record_stream(tensor, stream)
    ccall(@fptr(:dinput_tensor_cuda_record_stream), Cint,
        (Ptr{Cvoid}, Ptr{Cvoid}),
        tensor, stream)
end
dinput_tensor_cuda_ready_event(tensor) =
    ccall(@fptr(:dinput_tensor_cuda_ready_event), Ptr{Cvoid}, (Ptr{Cvoid},), tensor)

# ---------------------------------------------------------------------------------------
# The function-pointer slots, one per C function called above (see the top of this file)
# ---------------------------------------------------------------------------------------

# Defined after every wrapper so that FUNCTION_NAMES is complete; the wrappers' references
# to them are resolved when the wrappers are first compiled, by which time they exist.
for name in FUNCTION_NAMES
    @eval const $(_slot_name(name)) = Ref{Ptr{Cvoid}}(C_NULL)
end

end # module LibDinput
