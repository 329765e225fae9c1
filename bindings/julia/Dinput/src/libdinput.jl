# The raw C ABI: one Julia function per DINPUT_API function of include/dinput.h and
# include/dinput_cuda.h, with the same name and arguments, and the header's constants. Nothing here checks statuses or
# manages lifetimes; that is the job of the safe layer (the rest of src/). Handles are
# passed as `Ptr{Cvoid}`: any object with a `Base.unsafe_convert(Ptr{Cvoid}, x)` method can
# be given, and `ccall` keeps it rooted for the duration of the call.
#
# tools/check_abi.mjs checks every `ccall` below against the header (argument count, types,
# return type), so keep the literal `ccall((:name, libdinput), Ret, (Types...), args...)` form.
"""
    Dinput.LibDinput

Low-level `ccall` wrappers of the dinput C ABI (`include/dinput.h` and
`include/dinput_cuda.h`), one per function, with the headers' names. Statuses are returned as `Cint`; out-parameters are `Ref`s or arrays.
Prefer the safe API of [`Dinput`](@ref).
"""
module LibDinput

"""
    libdinput

The shared library that every `ccall` of this module binds to: `ENV["DINPUT_LIB"]` as it
was when Dinput was precompiled, else `"libdinput"` (found by the dynamic loader through
`LD_LIBRARY_PATH`, `DYLD_LIBRARY_PATH`, the system paths or `Libdl.DL_LOAD_PATH`).
`ccall` needs a constant library name, so it is fixed at precompile time;
`Dinput.__init__` refuses to load when `DINPUT_LIB` has changed since (see the README).
"""
const libdinput = get(ENV, "DINPUT_LIB", "libdinput")

"""
    @gcsafe_ccall((:name, libdinput), RetType, (ArgTypes...), args...)

A `ccall` during which the garbage collector may run on other threads.

A Julia thread blocked inside a plain `ccall` stays "GC-unsafe": a collection started by any
other thread waits for it. dinput calls that wait for other threads (a background producer,
replicas of `run`, the workers of a collective) would then deadlock as soon as one of those
threads runs Julia code that allocates. This macro converts the arguments first (which may
allocate), then switches the thread to GC-safe (`jl_gc_safe_enter`) around the call itself.
The callee may call back into Julia: the `@cfunction` wrapper switches back to GC-unsafe for
the duration of the callback. The function pointer is looked up with `cglobal` before the
switch, so no symbol resolution (which uses Julia locks) happens in the GC-safe region.
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
    push!(body.args, :($fptr = cglobal($target)))
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

dinput_status_name(code) = ccall((:dinput_status_name, libdinput), Ptr{UInt8}, (Cint,), code)
dinput_last_error_message() = ccall((:dinput_last_error_message, libdinput), Ptr{UInt8}, ())
dinput_last_error_code() = ccall((:dinput_last_error_code, libdinput), Cint, ())
dinput_error_set(code, message) =
    ccall((:dinput_error_set, libdinput), Cvoid, (Cint, Cstring), code, message)
dinput_error_clear() = ccall((:dinput_error_clear, libdinput), Cvoid, ())
dinput_version() = ccall((:dinput_version, libdinput), Ptr{UInt8}, ())
dinput_version_number() = ccall((:dinput_version_number, libdinput), Cint, ())
dinput_build_info() = ccall((:dinput_build_info, libdinput), Ptr{UInt8}, ())

# ---------------------------------------------------------------------------------------
# Data types and tensors
# ---------------------------------------------------------------------------------------

dinput_dtype_name(dtype) = ccall((:dinput_dtype_name, libdinput), Ptr{UInt8}, (Cint,), dtype)
dinput_dtype_size(dtype) = ccall((:dinput_dtype_size, libdinput), Csize_t, (Cint,), dtype)
dinput_dtype_from_name(name) =
    ccall((:dinput_dtype_from_name, libdinput), Cint, (Cstring,), name)
function dinput_tensor_new(out, dtype, shape, rank, data, nbytes)
    ccall((:dinput_tensor_new, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Cint, Ptr{Int64}, Cint, Ptr{Cvoid}, Csize_t),
        out, dtype, shape, rank, data, nbytes)
end
function dinput_tensor_new_bytes(out, shape, rank, strings, lengths)
    ccall((:dinput_tensor_new_bytes, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Int64}, Cint, Ptr{Ptr{UInt8}}, Ptr{Csize_t}),
        out, shape, rank, strings, lengths)
end
dinput_tensor_ref(out, tensor) =
    ccall((:dinput_tensor_ref, libdinput), Cint, (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}), out, tensor)
dinput_tensor_free(tensor) =
    ccall((:dinput_tensor_free, libdinput), Cvoid, (Ptr{Cvoid},), tensor)
dinput_tensor_dtype(tensor) =
    ccall((:dinput_tensor_dtype, libdinput), Cint, (Ptr{Cvoid},), tensor)
dinput_tensor_rank(tensor) =
    ccall((:dinput_tensor_rank, libdinput), Cint, (Ptr{Cvoid},), tensor)
dinput_tensor_shape(tensor) =
    ccall((:dinput_tensor_shape, libdinput), Ptr{Int64}, (Ptr{Cvoid},), tensor)
dinput_tensor_dim(tensor, i) =
    ccall((:dinput_tensor_dim, libdinput), Int64, (Ptr{Cvoid}, Cint), tensor, i)
dinput_tensor_num_elements(tensor) =
    ccall((:dinput_tensor_num_elements, libdinput), Int64, (Ptr{Cvoid},), tensor)
dinput_tensor_byte_size(tensor) =
    ccall((:dinput_tensor_byte_size, libdinput), Csize_t, (Ptr{Cvoid},), tensor)
dinput_tensor_data(tensor) =
    ccall((:dinput_tensor_data, libdinput), Ptr{Cvoid}, (Ptr{Cvoid},), tensor)
dinput_tensor_device_type(tensor) =
    ccall((:dinput_tensor_device_type, libdinput), Cint, (Ptr{Cvoid},), tensor)
dinput_tensor_device_index(tensor) =
    ccall((:dinput_tensor_device_index, libdinput), Cint, (Ptr{Cvoid},), tensor)
# Waits for the device-to-host copy of a CUDA tensor: GC-safe like the other waits.
function dinput_tensor_to_host(out, tensor)
    @gcsafe_ccall((:dinput_tensor_to_host, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}),
        out, tensor)
end
# cudaHostAlloc may wait for the GPU: GC-safe.
function dinput_tensor_new_pinned(out, dtype, shape, rank, data, nbytes)
    @gcsafe_ccall((:dinput_tensor_new_pinned, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Cint, Ptr{Int64}, Cint, Ptr{Cvoid}, Csize_t),
        out, dtype, shape, rank, data, nbytes)
end
function dinput_tensor_copy_to(out, out_bytes, tensor, expected)
    ccall((:dinput_tensor_copy_to, libdinput), Cint,
        (Ptr{Cvoid}, Csize_t, Ptr{Cvoid}, Cint),
        out, out_bytes, tensor, expected)
end
function dinput_tensor_string_view(out, out_len, tensor, index)
    ccall((:dinput_tensor_string_view, libdinput), Cint,
        (Ptr{Ptr{UInt8}}, Ptr{Csize_t}, Ptr{Cvoid}, Int64),
        out, out_len, tensor, index)
end
function dinput_tensor_to_dlpack(out, tensor)
    ccall((:dinput_tensor_to_dlpack, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}),
        out, tensor)
end

# ---------------------------------------------------------------------------------------
# GPU memory: the caches behind CUDA tensors
# ---------------------------------------------------------------------------------------

# May wait for GPU work, but never for a thread that runs Julia code: a plain ccall.
dinput_cuda_empty_cache() = ccall((:dinput_cuda_empty_cache, libdinput), Cint, ())
dinput_cuda_set_cache_limit(bytes) =
    ccall((:dinput_cuda_set_cache_limit, libdinput), Cint, (Csize_t,), bytes)
dinput_cuda_cache_limit(out) =
    ccall((:dinput_cuda_cache_limit, libdinput), Cint, (Ptr{Csize_t},), out)
function dinput_cuda_pool_bytes(out_held, out_cached, device)
    ccall((:dinput_cuda_pool_bytes, libdinput), Cint,
        (Ptr{Csize_t}, Ptr{Csize_t}, Cint),
        out_held, out_cached, device)
end

# ---------------------------------------------------------------------------------------
# Elements: tuples of tensors
# ---------------------------------------------------------------------------------------

function dinput_element_new(out, tensors, count)
    ccall((:dinput_element_new, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Ptr{Cvoid}}, Csize_t),
        out, tensors, count)
end
dinput_element_free(element) =
    ccall((:dinput_element_free, libdinput), Cvoid, (Ptr{Cvoid},), element)
dinput_element_ref(out, element) =
    ccall((:dinput_element_ref, libdinput), Cint, (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}), out, element)
dinput_element_size(element) =
    ccall((:dinput_element_size, libdinput), Csize_t, (Ptr{Cvoid},), element)
dinput_element_get(element, i) =
    ccall((:dinput_element_get, libdinput), Ptr{Cvoid}, (Ptr{Cvoid}, Csize_t), element, i)

# ---------------------------------------------------------------------------------------
# Element specs
# ---------------------------------------------------------------------------------------

dinput_spec_new(out) = ccall((:dinput_spec_new, libdinput), Cint, (Ptr{Ptr{Cvoid}},), out)
function dinput_spec_add(spec, dtype, shape, rank)
    ccall((:dinput_spec_add, libdinput), Cint,
        (Ptr{Cvoid}, Cint, Ptr{Int64}, Cint),
        spec, dtype, shape, rank)
end
dinput_spec_free(spec) = ccall((:dinput_spec_free, libdinput), Cvoid, (Ptr{Cvoid},), spec)
dinput_spec_size(spec) = ccall((:dinput_spec_size, libdinput), Csize_t, (Ptr{Cvoid},), spec)
dinput_spec_dtype(spec, i) =
    ccall((:dinput_spec_dtype, libdinput), Cint, (Ptr{Cvoid}, Csize_t), spec, i)
dinput_spec_rank(spec, i) =
    ccall((:dinput_spec_rank, libdinput), Cint, (Ptr{Cvoid}, Csize_t), spec, i)
dinput_spec_shape(spec, i) =
    ccall((:dinput_spec_shape, libdinput), Ptr{Int64}, (Ptr{Cvoid}, Csize_t), spec, i)

# ---------------------------------------------------------------------------------------
# Dataset options
# ---------------------------------------------------------------------------------------

dinput_options_new(out) = ccall((:dinput_options_new, libdinput), Cint, (Ptr{Ptr{Cvoid}},), out)
dinput_options_free(options) =
    ccall((:dinput_options_free, libdinput), Cvoid, (Ptr{Cvoid},), options)
function dinput_options_set_auto_shard_policy(options, policy)
    ccall((:dinput_options_set_auto_shard_policy, libdinput), Cint,
        (Ptr{Cvoid}, Cint),
        options, policy)
end
dinput_options_auto_shard_policy(options) =
    ccall((:dinput_options_auto_shard_policy, libdinput), Cint, (Ptr{Cvoid},), options)
function dinput_options_set_skip_corrupt_records(options, enable)
    ccall((:dinput_options_set_skip_corrupt_records, libdinput), Cint,
        (Ptr{Cvoid}, Cint),
        options, enable)
end

function dinput_options_skip_corrupt_records(options)
    ccall((:dinput_options_skip_corrupt_records, libdinput), Cint,
        (Ptr{Cvoid},),
        options)
end

function dinput_options_set_max_record_bytes(options, max_bytes)
    ccall((:dinput_options_set_max_record_bytes, libdinput), Cint,
        (Ptr{Cvoid}, Int64),
        options, max_bytes)
end

function dinput_options_max_record_bytes(options)
    ccall((:dinput_options_max_record_bytes, libdinput), Int64,
        (Ptr{Cvoid},),
        options)
end

function dinput_options_set_map_files(options, enable)
    ccall((:dinput_options_set_map_files, libdinput), Cint,
        (Ptr{Cvoid}, Cint),
        options, enable)
end

function dinput_options_map_files(options)
    ccall((:dinput_options_map_files, libdinput), Cint,
        (Ptr{Cvoid},),
        options)
end

function dinput_options_set_allow_nonregular_files(options, enable)
    ccall((:dinput_options_set_allow_nonregular_files, libdinput), Cint,
        (Ptr{Cvoid}, Cint),
        options, enable)
end

function dinput_options_allow_nonregular_files(options)
    ccall((:dinput_options_allow_nonregular_files, libdinput), Cint,
        (Ptr{Cvoid},),
        options)
end
function dinput_options_set_deterministic(options, enable)
    ccall((:dinput_options_set_deterministic, libdinput), Cint,
        (Ptr{Cvoid}, Cint),
        options, enable)
end
function dinput_options_deterministic(options)
    ccall((:dinput_options_deterministic, libdinput), Cint,
        (Ptr{Cvoid},),
        options)
end

# ---------------------------------------------------------------------------------------
# Transformation options
# ---------------------------------------------------------------------------------------

function dinput_map_options_new(out)
    ccall((:dinput_map_options_new, libdinput), Cint,
        (Ptr{Ptr{Cvoid}},),
        out)
end
function dinput_map_options_free(options)
    ccall((:dinput_map_options_free, libdinput), Cvoid,
        (Ptr{Cvoid},),
        options)
end
function dinput_map_options_set_out_spec(options, spec)
    ccall((:dinput_map_options_set_out_spec, libdinput), Cint,
        (Ptr{Cvoid}, Ptr{Cvoid}),
        options, spec)
end
function dinput_map_options_out_spec(out, options)
    ccall((:dinput_map_options_out_spec, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}),
        out, options)
end
function dinput_map_options_set_num_parallel_calls(options, num_parallel_calls)
    ccall((:dinput_map_options_set_num_parallel_calls, libdinput), Cint,
        (Ptr{Cvoid}, Int64),
        options, num_parallel_calls)
end
function dinput_map_options_num_parallel_calls(options)
    ccall((:dinput_map_options_num_parallel_calls, libdinput), Int64,
        (Ptr{Cvoid},),
        options)
end
function dinput_map_options_set_deterministic(options, deterministic)
    ccall((:dinput_map_options_set_deterministic, libdinput), Cint,
        (Ptr{Cvoid}, Cint),
        options, deterministic)
end
function dinput_map_options_deterministic(options)
    ccall((:dinput_map_options_deterministic, libdinput), Cint,
        (Ptr{Cvoid},),
        options)
end
function dinput_interleave_options_new(out)
    ccall((:dinput_interleave_options_new, libdinput), Cint,
        (Ptr{Ptr{Cvoid}},),
        out)
end
function dinput_interleave_options_free(options)
    ccall((:dinput_interleave_options_free, libdinput), Cvoid,
        (Ptr{Cvoid},),
        options)
end
function dinput_interleave_options_set_cycle_length(options, cycle_length)
    ccall((:dinput_interleave_options_set_cycle_length, libdinput), Cint,
        (Ptr{Cvoid}, Int64),
        options, cycle_length)
end
function dinput_interleave_options_cycle_length(options)
    ccall((:dinput_interleave_options_cycle_length, libdinput), Int64,
        (Ptr{Cvoid},),
        options)
end
function dinput_interleave_options_set_block_length(options, block_length)
    ccall((:dinput_interleave_options_set_block_length, libdinput), Cint,
        (Ptr{Cvoid}, Int64),
        options, block_length)
end
function dinput_interleave_options_block_length(options)
    ccall((:dinput_interleave_options_block_length, libdinput), Int64,
        (Ptr{Cvoid},),
        options)
end
function dinput_interleave_options_set_num_parallel_calls(options, num_parallel_calls)
    ccall((:dinput_interleave_options_set_num_parallel_calls, libdinput), Cint,
        (Ptr{Cvoid}, Int64),
        options, num_parallel_calls)
end
function dinput_interleave_options_num_parallel_calls(options)
    ccall((:dinput_interleave_options_num_parallel_calls, libdinput), Int64,
        (Ptr{Cvoid},),
        options)
end
function dinput_interleave_options_set_deterministic(options, deterministic)
    ccall((:dinput_interleave_options_set_deterministic, libdinput), Cint,
        (Ptr{Cvoid}, Cint),
        options, deterministic)
end
function dinput_interleave_options_deterministic(options)
    ccall((:dinput_interleave_options_deterministic, libdinput), Cint,
        (Ptr{Cvoid},),
        options)
end
function dinput_batch_options_new(out)
    ccall((:dinput_batch_options_new, libdinput), Cint,
        (Ptr{Ptr{Cvoid}},),
        out)
end
function dinput_batch_options_free(options)
    ccall((:dinput_batch_options_free, libdinput), Cvoid,
        (Ptr{Cvoid},),
        options)
end
function dinput_batch_options_set_drop_remainder(options, drop_remainder)
    ccall((:dinput_batch_options_set_drop_remainder, libdinput), Cint,
        (Ptr{Cvoid}, Cint),
        options, drop_remainder)
end
function dinput_batch_options_drop_remainder(options)
    ccall((:dinput_batch_options_drop_remainder, libdinput), Cint,
        (Ptr{Cvoid},),
        options)
end
function dinput_batch_options_set_num_parallel_calls(options, num_parallel_calls)
    ccall((:dinput_batch_options_set_num_parallel_calls, libdinput), Cint,
        (Ptr{Cvoid}, Int64),
        options, num_parallel_calls)
end
function dinput_batch_options_num_parallel_calls(options)
    ccall((:dinput_batch_options_num_parallel_calls, libdinput), Int64,
        (Ptr{Cvoid},),
        options)
end
function dinput_batch_options_set_deterministic(options, deterministic)
    ccall((:dinput_batch_options_set_deterministic, libdinput), Cint,
        (Ptr{Cvoid}, Cint),
        options, deterministic)
end
function dinput_batch_options_deterministic(options)
    ccall((:dinput_batch_options_deterministic, libdinput), Cint,
        (Ptr{Cvoid},),
        options)
end
function dinput_shuffle_options_new(out)
    ccall((:dinput_shuffle_options_new, libdinput), Cint,
        (Ptr{Ptr{Cvoid}},),
        out)
end
function dinput_shuffle_options_free(options)
    ccall((:dinput_shuffle_options_free, libdinput), Cvoid,
        (Ptr{Cvoid},),
        options)
end
function dinput_shuffle_options_set_seed(options, seed, seed2)
    ccall((:dinput_shuffle_options_set_seed, libdinput), Cint,
        (Ptr{Cvoid}, Int64, Int64),
        options, seed, seed2)
end
function dinput_shuffle_options_seed(options)
    ccall((:dinput_shuffle_options_seed, libdinput), Int64,
        (Ptr{Cvoid},),
        options)
end
function dinput_shuffle_options_seed2(options)
    ccall((:dinput_shuffle_options_seed2, libdinput), Int64,
        (Ptr{Cvoid},),
        options)
end
function dinput_shuffle_options_set_reshuffle_each_iteration(options, enable)
    ccall((:dinput_shuffle_options_set_reshuffle_each_iteration, libdinput), Cint,
        (Ptr{Cvoid}, Cint),
        options, enable)
end
function dinput_shuffle_options_reshuffle_each_iteration(options)
    ccall((:dinput_shuffle_options_reshuffle_each_iteration, libdinput), Cint,
        (Ptr{Cvoid},),
        options)
end
function dinput_list_files_options_new(out)
    ccall((:dinput_list_files_options_new, libdinput), Cint,
        (Ptr{Ptr{Cvoid}},),
        out)
end
function dinput_list_files_options_free(options)
    ccall((:dinput_list_files_options_free, libdinput), Cvoid,
        (Ptr{Cvoid},),
        options)
end
function dinput_list_files_options_set_shuffle(options, shuffle)
    ccall((:dinput_list_files_options_set_shuffle, libdinput), Cint,
        (Ptr{Cvoid}, Cint),
        options, shuffle)
end
function dinput_list_files_options_shuffle(options)
    ccall((:dinput_list_files_options_shuffle, libdinput), Cint,
        (Ptr{Cvoid},),
        options)
end
function dinput_list_files_options_set_seed(options, seed, seed2)
    ccall((:dinput_list_files_options_set_seed, libdinput), Cint,
        (Ptr{Cvoid}, Int64, Int64),
        options, seed, seed2)
end
function dinput_list_files_options_seed(options)
    ccall((:dinput_list_files_options_seed, libdinput), Int64,
        (Ptr{Cvoid},),
        options)
end
function dinput_list_files_options_seed2(options)
    ccall((:dinput_list_files_options_seed2, libdinput), Int64,
        (Ptr{Cvoid},),
        options)
end
function dinput_records_options_new(out)
    ccall((:dinput_records_options_new, libdinput), Cint,
        (Ptr{Ptr{Cvoid}},),
        out)
end
function dinput_records_options_free(options)
    ccall((:dinput_records_options_free, libdinput), Cvoid,
        (Ptr{Cvoid},),
        options)
end
function dinput_records_options_set_compression(options, compression)
    ccall((:dinput_records_options_set_compression, libdinput), Cint,
        (Ptr{Cvoid}, Cint),
        options, compression)
end
function dinput_records_options_compression(options)
    ccall((:dinput_records_options_compression, libdinput), Cint,
        (Ptr{Cvoid},),
        options)
end
function dinput_records_options_set_buffer_size(options, buffer_size)
    ccall((:dinput_records_options_set_buffer_size, libdinput), Cint,
        (Ptr{Cvoid}, Int64),
        options, buffer_size)
end
function dinput_records_options_buffer_size(options)
    ccall((:dinput_records_options_buffer_size, libdinput), Int64,
        (Ptr{Cvoid},),
        options)
end
function dinput_record_writer_options_new(out)
    ccall((:dinput_record_writer_options_new, libdinput), Cint,
        (Ptr{Ptr{Cvoid}},),
        out)
end
function dinput_record_writer_options_free(options)
    ccall((:dinput_record_writer_options_free, libdinput), Cvoid,
        (Ptr{Cvoid},),
        options)
end
function dinput_record_writer_options_set_compression(options, compression)
    ccall((:dinput_record_writer_options_set_compression, libdinput), Cint,
        (Ptr{Cvoid}, Cint),
        options, compression)
end
function dinput_record_writer_options_compression(options)
    ccall((:dinput_record_writer_options_compression, libdinput), Cint,
        (Ptr{Cvoid},),
        options)
end
function dinput_record_writer_options_set_level(options, level)
    ccall((:dinput_record_writer_options_set_level, libdinput), Cint,
        (Ptr{Cvoid}, Cint),
        options, level)
end
function dinput_record_writer_options_level(options)
    ccall((:dinput_record_writer_options_level, libdinput), Cint,
        (Ptr{Cvoid},),
        options)
end
function dinput_record_writer_options_set_zstd_window_log(options, window_log)
    ccall((:dinput_record_writer_options_set_zstd_window_log, libdinput), Cint,
        (Ptr{Cvoid}, Cint),
        options, window_log)
end
function dinput_record_writer_options_zstd_window_log(options)
    ccall((:dinput_record_writer_options_zstd_window_log, libdinput), Cint,
        (Ptr{Cvoid},),
        options)
end

# ---------------------------------------------------------------------------------------
# Datasets
# ---------------------------------------------------------------------------------------

dinput_dataset_free(dataset) =
    ccall((:dinput_dataset_free, libdinput), Cvoid, (Ptr{Cvoid},), dataset)
dinput_dataset_ref(out, dataset) =
    ccall((:dinput_dataset_ref, libdinput), Cint, (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}), out, dataset)
dinput_dataset_cardinality(dataset) =
    ccall((:dinput_dataset_cardinality, libdinput), Int64, (Ptr{Cvoid},), dataset)
function dinput_dataset_element_spec(out, dataset)
    ccall((:dinput_dataset_element_spec, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}),
        out, dataset)
end
dinput_dataset_name(dataset) =
    ccall((:dinput_dataset_name, libdinput), Ptr{UInt8}, (Ptr{Cvoid},), dataset)
function dinput_dataset_range(out, start, stop, step)
    ccall((:dinput_dataset_range, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Int64, Int64, Int64),
        out, start, stop, step)
end
function dinput_dataset_from_tensors(out, element)
    ccall((:dinput_dataset_from_tensors, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}),
        out, element)
end
function dinput_dataset_from_tensor_slices(out, element)
    ccall((:dinput_dataset_from_tensor_slices, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}),
        out, element)
end
function dinput_dataset_from_generator(out, spec, init, next_fn, finalize_fn, user_data,
                                       free_user_data)
    ccall((:dinput_dataset_from_generator, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid},
         Ptr{Cvoid}),
        out, spec, init, next_fn, finalize_fn, user_data, free_user_data)
end
function dinput_dataset_text_lines(out, files, num_files)
    ccall((:dinput_dataset_text_lines, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Ptr{UInt8}}, Csize_t),
        out, files, num_files)
end
function dinput_dataset_records(out, files, num_files, options)
    ccall((:dinput_dataset_records, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Ptr{UInt8}}, Csize_t, Ptr{Cvoid}),
        out, files, num_files, options)
end
function dinput_dataset_fixed_length_records(out, files, num_files, record_bytes, header_bytes,
                                             footer_bytes)
    ccall((:dinput_dataset_fixed_length_records, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Ptr{UInt8}}, Csize_t, Int64, Int64, Int64),
        out, files, num_files, record_bytes, header_bytes, footer_bytes)
end
function dinput_dataset_list_files(out, patterns, num_patterns, options)
    @gcsafe_ccall((:dinput_dataset_list_files, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Ptr{UInt8}}, Csize_t, Ptr{Cvoid}),
        out, patterns, num_patterns, options)
end
function dinput_dataset_batch(out, input, batch_size, options)
    ccall((:dinput_dataset_batch, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Int64, Ptr{Cvoid}),
        out, input, batch_size, options)
end
dinput_dataset_unbatch(out, input) =
    ccall((:dinput_dataset_unbatch, libdinput), Cint, (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}), out, input)
function dinput_dataset_repeat(out, input, count)
    ccall((:dinput_dataset_repeat, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Int64),
        out, input, count)
end
function dinput_dataset_take(out, input, count)
    ccall((:dinput_dataset_take, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Int64),
        out, input, count)
end
function dinput_dataset_skip(out, input, count)
    ccall((:dinput_dataset_skip, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Int64),
        out, input, count)
end
function dinput_dataset_shard(out, input, num_shards, index)
    ccall((:dinput_dataset_shard, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Int64, Int64),
        out, input, num_shards, index)
end
function dinput_dataset_shuffle(out, input, buffer_size, options)
    ccall((:dinput_dataset_shuffle, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Int64, Ptr{Cvoid}),
        out, input, buffer_size, options)
end
function dinput_dataset_map(out, input, fn, user_data, free_user_data, options)
    ccall((:dinput_dataset_map, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}),
        out, input, fn, user_data, free_user_data, options)
end
function dinput_dataset_filter(out, input, fn, user_data, free_user_data)
    ccall((:dinput_dataset_filter, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}),
        out, input, fn, user_data, free_user_data)
end
function dinput_dataset_interleave(out, input, fn, out_spec, user_data, free_user_data, options)
    ccall((:dinput_dataset_interleave, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}),
        out, input, fn, out_spec, user_data, free_user_data, options)
end
function dinput_dataset_enumerate(out, input, start)
    ccall((:dinput_dataset_enumerate, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Int64),
        out, input, start)
end
function dinput_dataset_prefetch(out, input, buffer_size)
    ccall((:dinput_dataset_prefetch, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Int64),
        out, input, buffer_size)
end
function dinput_dataset_rebatch(out, input, sizes, num_sizes, drop_remainder)
    ccall((:dinput_dataset_rebatch, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Int64}, Csize_t, Cint),
        out, input, sizes, num_sizes, drop_remainder)
end
function dinput_dataset_with_options(out, input, options)
    ccall((:dinput_dataset_with_options, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}),
        out, input, options)
end

# ---------------------------------------------------------------------------------------
# Iterators and optionals
# ---------------------------------------------------------------------------------------

function dinput_dataset_iterator(out, dataset)
    @gcsafe_ccall((:dinput_dataset_iterator, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}),
        out, dataset)
end
dinput_iterator_free(iterator) =
    @gcsafe_ccall((:dinput_iterator_free, libdinput), Cvoid, (Ptr{Cvoid},), iterator)
dinput_iterator_cancel(iterator) =
    ccall((:dinput_iterator_cancel, libdinput), Cint, (Ptr{Cvoid},), iterator)
function dinput_iterator_get_next(out, iterator)
    @gcsafe_ccall((:dinput_iterator_get_next, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}),
        out, iterator)
end
function dinput_iterator_get_next_as_optional(out, iterator)
    @gcsafe_ccall((:dinput_iterator_get_next_as_optional, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}),
        out, iterator)
end
function dinput_iterator_element_spec(out, iterator)
    ccall((:dinput_iterator_element_spec, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}),
        out, iterator)
end
function dinput_iterator_statistic(out, iterator, name)
    ccall((:dinput_iterator_statistic, libdinput), Cint,
        (Ptr{Int64}, Ptr{Cvoid}, Cstring),
        out, iterator, name)
end
dinput_optional_free(optional) =
    ccall((:dinput_optional_free, libdinput), Cvoid, (Ptr{Cvoid},), optional)
dinput_optional_has_value(optional) =
    ccall((:dinput_optional_has_value, libdinput), Cint, (Ptr{Cvoid},), optional)
function dinput_optional_get_value(out, optional)
    ccall((:dinput_optional_get_value, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}),
        out, optional)
end

# ---------------------------------------------------------------------------------------
# Record files: writing
# ---------------------------------------------------------------------------------------

function dinput_record_writer_open(out, path, options)
    ccall((:dinput_record_writer_open, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Cstring, Ptr{Cvoid}),
        out, path, options)
end
function dinput_record_writer_write(writer, data, size)
    ccall((:dinput_record_writer_write, libdinput), Cint,
        (Ptr{Cvoid}, Ptr{Cvoid}, Csize_t),
        writer, data, size)
end
dinput_record_writer_flush(writer) =
    @gcsafe_ccall((:dinput_record_writer_flush, libdinput), Cint, (Ptr{Cvoid},), writer)
dinput_record_writer_close(writer) =
    @gcsafe_ccall((:dinput_record_writer_close, libdinput), Cint, (Ptr{Cvoid},), writer)
dinput_record_writer_discard(writer) =
    @gcsafe_ccall((:dinput_record_writer_discard, libdinput), Cint, (Ptr{Cvoid},), writer)
dinput_record_writer_free(writer) =
    @gcsafe_ccall((:dinput_record_writer_free, libdinput), Cvoid, (Ptr{Cvoid},), writer)

# ---------------------------------------------------------------------------------------
# Clusters
# ---------------------------------------------------------------------------------------

function dinput_cluster_resolve(out, source)
    ccall((:dinput_cluster_resolve, libdinput), Cint, (Ptr{Ptr{Cvoid}}, Cstring), out, source)
end
function dinput_cluster_new(out, rank, world_size, rdzv_url)
    ccall((:dinput_cluster_new, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Cint, Cint, Cstring),
        out, rank, world_size, rdzv_url)
end
dinput_cluster_free(cluster) =
    ccall((:dinput_cluster_free, libdinput), Cvoid, (Ptr{Cvoid},), cluster)
dinput_cluster_rank(cluster) =
    ccall((:dinput_cluster_rank, libdinput), Cint, (Ptr{Cvoid},), cluster)
dinput_cluster_world_size(cluster) =
    ccall((:dinput_cluster_world_size, libdinput), Cint, (Ptr{Cvoid},), cluster)
dinput_cluster_local_rank(cluster) =
    ccall((:dinput_cluster_local_rank, libdinput), Cint, (Ptr{Cvoid},), cluster)
dinput_cluster_local_world_size(cluster) =
    ccall((:dinput_cluster_local_world_size, libdinput), Cint, (Ptr{Cvoid},), cluster)
dinput_cluster_rdzv_url(cluster) =
    ccall((:dinput_cluster_rdzv_url, libdinput), Ptr{UInt8}, (Ptr{Cvoid},), cluster)
dinput_cluster_coordinator_host(cluster) =
    ccall((:dinput_cluster_coordinator_host, libdinput), Ptr{UInt8}, (Ptr{Cvoid},), cluster)
dinput_cluster_job_id(cluster) =
    ccall((:dinput_cluster_job_id, libdinput), Ptr{UInt8}, (Ptr{Cvoid},), cluster)
dinput_cluster_source(cluster) =
    ccall((:dinput_cluster_source, libdinput), Ptr{UInt8}, (Ptr{Cvoid},), cluster)
dinput_cluster_task_type(cluster) =
    ccall((:dinput_cluster_task_type, libdinput), Ptr{UInt8}, (Ptr{Cvoid},), cluster)
dinput_cluster_task_index(cluster) =
    ccall((:dinput_cluster_task_index, libdinput), Cint, (Ptr{Cvoid},), cluster)
dinput_cluster_is_input_worker(cluster) =
    ccall((:dinput_cluster_is_input_worker, libdinput), Cint, (Ptr{Cvoid},), cluster)

# ---------------------------------------------------------------------------------------
# Strategies and distribution
# ---------------------------------------------------------------------------------------

function dinput_collective_new_in_process(out, num_workers, timeout_ms)
    ccall((:dinput_collective_new_in_process, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Cint, Int64),
        out, num_workers, timeout_ms)
end
dinput_collective_options_new(out) =
    ccall((:dinput_collective_options_new, libdinput), Cint, (Ptr{Ptr{Cvoid}},), out)
dinput_collective_options_free(options) =
    ccall((:dinput_collective_options_free, libdinput), Cvoid, (Ptr{Cvoid},), options)
function dinput_collective_options_set_timeout_ms(options, timeout_ms)
    ccall((:dinput_collective_options_set_timeout_ms, libdinput), Cint,
        (Ptr{Cvoid}, Int64), options, timeout_ms)
end
dinput_collective_options_timeout_ms(options) =
    ccall((:dinput_collective_options_timeout_ms, libdinput), Int64, (Ptr{Cvoid},), options)
function dinput_collective_options_set_job_id(options, job_id)
    ccall((:dinput_collective_options_set_job_id, libdinput), Cint,
        (Ptr{Cvoid}, Cstring), options, job_id)
end
dinput_collective_options_job_id(options) =
    ccall((:dinput_collective_options_job_id, libdinput), Ptr{UInt8}, (Ptr{Cvoid},), options)
function dinput_collective_options_set_interface(options, name)
    ccall((:dinput_collective_options_set_interface, libdinput), Cint,
        (Ptr{Cvoid}, Cstring), options, name)
end
dinput_collective_options_interface(options) =
    ccall((:dinput_collective_options_interface, libdinput), Ptr{UInt8}, (Ptr{Cvoid},), options)
function dinput_collective_options_set_address(options, address)
    ccall((:dinput_collective_options_set_address, libdinput), Cint,
        (Ptr{Cvoid}, Cstring), options, address)
end
dinput_collective_options_address(options) =
    ccall((:dinput_collective_options_address, libdinput), Ptr{UInt8}, (Ptr{Cvoid},), options)
function dinput_collective_options_set_allow_loopback(options, allow)
    ccall((:dinput_collective_options_set_allow_loopback, libdinput), Cint,
        (Ptr{Cvoid}, Cint), options, allow)
end
dinput_collective_options_allow_loopback(options) =
    ccall((:dinput_collective_options_allow_loopback, libdinput), Cint, (Ptr{Cvoid},), options)
function dinput_collective_new_from_cluster(out, cluster, options)
    @gcsafe_ccall((:dinput_collective_new_from_cluster, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}),
        out, cluster, options)
end
dinput_collective_free(collective) =
    ccall((:dinput_collective_free, libdinput), Cvoid, (Ptr{Cvoid},), collective)
function dinput_collective_abort(collective, code, message)
    ccall((:dinput_collective_abort, libdinput), Cint,
        (Ptr{Cvoid}, Cint, Cstring),
        collective, code, message)
end
dinput_collective_num_workers(collective) =
    ccall((:dinput_collective_num_workers, libdinput), Cint, (Ptr{Cvoid},), collective)
function dinput_strategy_new(out, devices, num_devices)
    ccall((:dinput_strategy_new, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Ptr{UInt8}}, Cint),
        out, devices, num_devices)
end
function dinput_strategy_new_multi_worker(out, collective, worker_index, devices, num_devices)
    ccall((:dinput_strategy_new_multi_worker, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Cint, Ptr{Ptr{UInt8}}, Cint),
        out, collective, worker_index, devices, num_devices)
end
function dinput_strategy_new_multi_worker_cpu(out, collective, worker_index,
                                              num_replicas_in_sync)
    ccall((:dinput_strategy_new_multi_worker_cpu, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Cint, Cint),
        out, collective, worker_index, num_replicas_in_sync)
end
dinput_strategy_free(strategy) =
    ccall((:dinput_strategy_free, libdinput), Cvoid, (Ptr{Cvoid},), strategy)
dinput_strategy_num_replicas_in_sync(strategy) =
    ccall((:dinput_strategy_num_replicas_in_sync, libdinput), Cint, (Ptr{Cvoid},), strategy)
dinput_strategy_num_local_replicas(strategy) =
    ccall((:dinput_strategy_num_local_replicas, libdinput), Cint, (Ptr{Cvoid},), strategy)
dinput_strategy_num_workers(strategy) =
    ccall((:dinput_strategy_num_workers, libdinput), Cint, (Ptr{Cvoid},), strategy)
dinput_strategy_worker_index(strategy) =
    ccall((:dinput_strategy_worker_index, libdinput), Cint, (Ptr{Cvoid},), strategy)
dinput_strategy_device(strategy, i) =
    ccall((:dinput_strategy_device, libdinput), Ptr{UInt8}, (Ptr{Cvoid}, Cint), strategy, i)
dinput_input_options_new(out) =
    ccall((:dinput_input_options_new, libdinput), Cint, (Ptr{Ptr{Cvoid}},), out)
dinput_input_options_free(options) =
    ccall((:dinput_input_options_free, libdinput), Cvoid, (Ptr{Cvoid},), options)
function dinput_input_options_set_fetch_to_device(o, enable)
    ccall((:dinput_input_options_set_fetch_to_device, libdinput), Cint,
        (Ptr{Cvoid}, Cint),
        o, enable)
end
function dinput_input_options_set_replication_mode(o, mode)
    ccall((:dinput_input_options_set_replication_mode, libdinput), Cint,
        (Ptr{Cvoid}, Cint),
        o, mode)
end
function dinput_input_options_set_place_dataset_on_device(o, enable)
    ccall((:dinput_input_options_set_place_dataset_on_device, libdinput), Cint,
        (Ptr{Cvoid}, Cint),
        o, enable)
end
function dinput_input_options_set_per_replica_buffer_size(o, size)
    ccall((:dinput_input_options_set_per_replica_buffer_size, libdinput), Cint,
        (Ptr{Cvoid}, Int64),
        o, size)
end
dinput_input_options_fetch_to_device(o) =
    ccall((:dinput_input_options_fetch_to_device, libdinput), Cint, (Ptr{Cvoid},), o)
dinput_input_options_replication_mode(o) =
    ccall((:dinput_input_options_replication_mode, libdinput), Cint, (Ptr{Cvoid},), o)
dinput_input_options_place_dataset_on_device(o) =
    ccall((:dinput_input_options_place_dataset_on_device, libdinput), Cint, (Ptr{Cvoid},), o)
dinput_input_options_per_replica_buffer_size(o) =
    ccall((:dinput_input_options_per_replica_buffer_size, libdinput), Int64, (Ptr{Cvoid},), o)
function dinput_strategy_distribute_dataset(out, strategy, dataset, options)
    @gcsafe_ccall((:dinput_strategy_distribute_dataset, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}),
        out, strategy, dataset, options)
end
function dinput_strategy_distribute_datasets_from_function(out, strategy, fn, user_data,
                                                           free_user_data, options)
    @gcsafe_ccall((:dinput_strategy_distribute_datasets_from_function, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}),
        out, strategy, fn, user_data, free_user_data, options)
end
dinput_input_context_num_input_pipelines(c) =
    ccall((:dinput_input_context_num_input_pipelines, libdinput), Cint, (Ptr{Cvoid},), c)
dinput_input_context_input_pipeline_id(c) =
    ccall((:dinput_input_context_input_pipeline_id, libdinput), Cint, (Ptr{Cvoid},), c)
dinput_input_context_num_replicas_in_sync(c) =
    ccall((:dinput_input_context_num_replicas_in_sync, libdinput), Cint, (Ptr{Cvoid},), c)
function dinput_input_context_get_per_replica_batch_size(out, c, global_batch_size)
    ccall((:dinput_input_context_get_per_replica_batch_size, libdinput), Cint,
        (Ptr{Int64}, Ptr{Cvoid}, Int64),
        out, c, global_batch_size)
end
dinput_dist_dataset_free(dataset) =
    ccall((:dinput_dist_dataset_free, libdinput), Cvoid, (Ptr{Cvoid},), dataset)
dinput_dist_dataset_plan(dataset) =
    ccall((:dinput_dist_dataset_plan, libdinput), Ptr{UInt8}, (Ptr{Cvoid},), dataset)
function dinput_dist_dataset_element_spec(out, dataset)
    ccall((:dinput_dist_dataset_element_spec, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}),
        out, dataset)
end
function dinput_dist_dataset_iterator(out, dataset)
    @gcsafe_ccall((:dinput_dist_dataset_iterator, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}),
        out, dataset)
end
dinput_dist_iterator_free(iterator) =
    @gcsafe_ccall((:dinput_dist_iterator_free, libdinput), Cvoid, (Ptr{Cvoid},), iterator)
dinput_dist_iterator_cancel(iterator) =
    ccall((:dinput_dist_iterator_cancel, libdinput), Cint, (Ptr{Cvoid},), iterator)
function dinput_dist_iterator_get_next(out, iterator)
    @gcsafe_ccall((:dinput_dist_iterator_get_next, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}),
        out, iterator)
end
function dinput_dist_iterator_get_next_as_optional(out, iterator)
    @gcsafe_ccall((:dinput_dist_iterator_get_next_as_optional, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}),
        out, iterator)
end
function dinput_dist_iterator_element_spec(out, iterator)
    ccall((:dinput_dist_iterator_element_spec, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}),
        out, iterator)
end
function dinput_dist_iterator_statistic(out, iterator, name)
    ccall((:dinput_dist_iterator_statistic, libdinput), Cint,
        (Ptr{Int64}, Ptr{Cvoid}, Cstring),
        out, iterator, name)
end
function dinput_optional_get_per_replica(out, optional)
    ccall((:dinput_optional_get_per_replica, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}),
        out, optional)
end
dinput_per_replica_free(value) =
    ccall((:dinput_per_replica_free, libdinput), Cvoid, (Ptr{Cvoid},), value)
dinput_per_replica_ref(out, value) =
    ccall((:dinput_per_replica_ref, libdinput), Cint, (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}), out, value)
dinput_per_replica_size(value) =
    ccall((:dinput_per_replica_size, libdinput), Cint, (Ptr{Cvoid},), value)
dinput_per_replica_get(value, i) =
    ccall((:dinput_per_replica_get, libdinput), Ptr{Cvoid}, (Ptr{Cvoid}, Cint), value, i)
function dinput_per_replica_new(out, elements, count)
    ccall((:dinput_per_replica_new, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Ptr{Cvoid}}, Cint),
        out, elements, count)
end
function dinput_strategy_distribute_values_from_function(out, strategy, fn, user_data)
    @gcsafe_ccall((:dinput_strategy_distribute_values_from_function, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}),
        out, strategy, fn, user_data)
end
dinput_value_context_replica_id_in_sync_group(c) =
    ccall((:dinput_value_context_replica_id_in_sync_group, libdinput), Cint, (Ptr{Cvoid},), c)
dinput_value_context_num_replicas_in_sync(c) =
    ccall((:dinput_value_context_num_replicas_in_sync, libdinput), Cint, (Ptr{Cvoid},), c)
function dinput_strategy_run(out, strategy, fn, args, user_data)
    @gcsafe_ccall((:dinput_strategy_run, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}),
        out, strategy, fn, args, user_data)
end
dinput_replica_context_replica_id_in_sync_group(c) =
    ccall((:dinput_replica_context_replica_id_in_sync_group, libdinput), Cint, (Ptr{Cvoid},), c)
dinput_replica_context_num_replicas_in_sync(c) =
    ccall((:dinput_replica_context_num_replicas_in_sync, libdinput), Cint, (Ptr{Cvoid},), c)
dinput_replica_context_device(c) =
    ccall((:dinput_replica_context_device, libdinput), Ptr{UInt8}, (Ptr{Cvoid},), c)
function dinput_strategy_reduce(out, strategy, op, value, axis)
    @gcsafe_ccall((:dinput_strategy_reduce, libdinput), Cint,
        (Ptr{Ptr{Cvoid}}, Ptr{Cvoid}, Cint, Ptr{Cvoid}, Cint),
        out, strategy, op, value, axis)
end

# ---------------------------------------------------------------------------------------
# dinput_cuda.h: ordering CUDA streams after the copies that fill tensors
# ---------------------------------------------------------------------------------------

# The header declares these with CUDA's cudaStream_t and cudaEvent_t, which are pointers to
# opaque structs: Ptr{Cvoid} here, so that no CUDA package is needed. None of them blocks.
dinput_tensor_cuda_wait(tensor, stream) =
    ccall((:dinput_tensor_cuda_wait, libdinput), Cint, (Ptr{Cvoid}, Ptr{Cvoid}), tensor, stream)
dinput_element_cuda_wait(element, stream) =
    ccall((:dinput_element_cuda_wait, libdinput), Cint, (Ptr{Cvoid}, Ptr{Cvoid}), element, stream)
function dinput_tensor_cuda_record_stream(tensor, stream)
    ccall((:dinput_tensor_cuda_record_stream, libdinput), Cint,
        (Ptr{Cvoid}, Ptr{Cvoid}),
        tensor, stream)
end
dinput_tensor_cuda_ready_event(tensor) =
    ccall((:dinput_tensor_cuda_ready_event, libdinput), Ptr{Cvoid}, (Ptr{Cvoid},), tensor)

end # module LibDinput
