# Tensors: dtypes, construction from Julia values, conversion to Julia arrays.

# The Julia types with a dinput dtype of the same size and bit layout.
const FixedTypes = Union{Bool,Int8,Int16,Int32,Int64,UInt8,UInt16,UInt32,UInt64,Float16,
                         Float32,Float64}

# The Julia element type of each dtype, indexed by dtype code: bfloat16 is read as its raw
# UInt16 bits (Base has no bfloat16 type) and bytes as String.
const JULIA_TYPES = (Bool, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64, Float16,
                     UInt16, Float32, Float64, String)

_dtype_code(::Type{Bool}) = LibDinput.DINPUT_BOOL
_dtype_code(::Type{Int8}) = LibDinput.DINPUT_INT8
_dtype_code(::Type{Int16}) = LibDinput.DINPUT_INT16
_dtype_code(::Type{Int32}) = LibDinput.DINPUT_INT32
_dtype_code(::Type{Int64}) = LibDinput.DINPUT_INT64
_dtype_code(::Type{UInt8}) = LibDinput.DINPUT_UINT8
_dtype_code(::Type{UInt16}) = LibDinput.DINPUT_UINT16
_dtype_code(::Type{UInt32}) = LibDinput.DINPUT_UINT32
_dtype_code(::Type{UInt64}) = LibDinput.DINPUT_UINT64
_dtype_code(::Type{Float16}) = LibDinput.DINPUT_FLOAT16
_dtype_code(::Type{Float32}) = LibDinput.DINPUT_FLOAT32
_dtype_code(::Type{Float64}) = LibDinput.DINPUT_FLOAT64
_dtype_code(::Type{String}) = LibDinput.DINPUT_BYTES
_dtype_code(::Type{Vector{UInt8}}) = LibDinput.DINPUT_BYTES
function _dtype_code(::Type{T}) where {T}
    throw(ArgumentError("dinput has no dtype for Julia type $T; use Bool, Int8-Int64, " *
                        "UInt8-UInt64, Float16, Float32, Float64 or String"))
end

# A dtype name as dinput_dtype_name prints it: :int64, :float32, :bfloat16, :bytes, ...
function _dtype_code(name::Symbol)
    code = LibDinput.dinput_dtype_from_name(String(name))
    code == LibDinput.DINPUT_DTYPE_INVALID && throw(ArgumentError("unknown dinput dtype :$name"))
    return code
end

_dtype_symbol(code::Integer) = Symbol(_cstring(LibDinput.dinput_dtype_name(code)))

function _julia_type(code::Integer)
    1 <= code <= length(JULIA_TYPES) || throw(ArgumentError("dinput dtype $code has no Julia type"))
    return JULIA_TYPES[code]
end

"""
    Tensor(a::AbstractArray; dtype=nothing, pinned=false)
    Tensor(x::Number; dtype=nothing, pinned=false)
    Tensor(s::AbstractString)

An immutable dinput tensor holding a copy of `a` (a scalar for a number or string).

**Order of elements.** dinput stores tensors in row-major (C) order; Julia arrays are
column-major. The binding keeps the *dimensions* and the *indexing* the same on both sides
and moves the data instead: `size(Tensor(a)) == size(a)`, `Array(Tensor(a)) == a`, and the
element C reads as `t[i][j]` is `Array(t)[i+1, j+1]`. Both directions therefore copy
(`permutedims` for rank ≥ 2). [`unsafe_array`](@ref) gives the zero-copy view instead, with
the dimensions reversed.

**Batch first or batch last.** A batch from dinput has the batch dimension first (C's and
TensorFlow's order: `(batch, features...)`), and so do `size(t)` and `Array(t)`. Julia
libraries such as Flux put it last (`(features..., batch)`), which is exactly dinput's
memory read column-major: no data moves for that order. So each order has a copying and a
zero-copy form:

| | batch first, `size(t)` | batch last, `reverse(size(t))` |
|---|---|---|
| copy | `Array(t)` (permutes) | [`batch_last`](@ref)`(t)` (one memcpy) |
| zero-copy view | [`unsafe_batch_first`](@ref)`(t)` (a `PermutedDimsArray`) | [`unsafe_array`](@ref)`(t)` |

and `Tensor(a; layout=:batch_last)` makes a tensor of shape `reverse(size(a))` from an array
in batch-last order without permuting it, so `batch_last(Tensor(a; layout=:batch_last)) ==
a`.

**Element types.** `Bool`, `Int8`…`Int64`, `UInt8`…`UInt64`, `Float16`, `Float32` and
`Float64` map to the dtype of the same name. bfloat16 has no Julia type: its tensors are
read as their raw `UInt16` bits, and `Tensor(bits::AbstractArray{UInt16}; dtype=:bfloat16)`
makes one. Arrays of strings (or of `Vector{UInt8}`) make `bytes` tensors; note that a
`Vector{UInt8}` is a `uint8` tensor, not a byte string.

**Pinned memory.** With `pinned=true` the tensor is made in page-locked host memory
(`Dinput.device_type(t) == :cuda_host`), which copies to a GPU at the full speed of the bus,
without the staging copy that pageable memory needs: for data a distributed iterator sends
to GPUs many times (`from_tensors` with `repeat`). Without a usable CUDA driver and device
(always in a build without CUDA) it throws a `DinputError` with code `:FAILED_PRECONDITION`.

```julia
t = Tensor([1 2 3; 4 5 6])     # int64, shape (2, 3)
size(t), dtype(t)              # ((2, 3), :int64)
Array(t)                       # [1 2 3; 4 5 6]
Array{Float32}(t)              # throws DinputError(:INVALID_ARGUMENT): the dtype is int64
Tensor(["a", "bc"])            # bytes, shape (2,)
```
"""
mutable struct Tensor <: Handle
    ptr::Ptr{Cvoid}
    function Tensor(ptr::Ptr{Cvoid})
        t = new(ptr)
        finalizer(_finalize, t)
        return t
    end
end

_free(::Tensor, p::Ptr{Cvoid}) = LibDinput.dinput_tensor_free(p)

function Tensor(a::AbstractArray{T,N}; dtype::Union{Nothing,Symbol}=nothing,
                pinned::Bool=false, layout::Symbol=:batch_first) where {T<:FixedTypes,N}
    code = _array_dtype(T, dtype)
    batch_last = _batch_last_layout(layout)
    # batch last: a's column-major memory is already the row-major data of reverse(size(a)).
    data = batch_last ? _dense(a) : _row_major(a)
    shape = Int64[(batch_last ? reverse(size(a)) : size(a))...]
    # Both constructors take the same arguments; the pinned one copies into pinned memory.
    construct = pinned ? LibDinput.dinput_tensor_new_pinned : LibDinput.dinput_tensor_new
    return Tensor(_out(o -> construct(o, code, shape, N, data, sizeof(data))))
end

function _batch_last_layout(layout::Symbol)
    layout === :batch_first && return false
    layout === :batch_last && return true
    throw(ArgumentError("layout must be :batch_first or :batch_last, not :$layout"))
end

function Tensor(x::FixedTypes; dtype::Union{Nothing,Symbol}=nothing, pinned::Bool=false)
    return Tensor(fill(x); dtype=dtype, pinned=pinned)
end

function Tensor(a::AbstractArray{S,N};
                layout::Symbol=:batch_first) where {S<:Union{AbstractString,AbstractVector{UInt8}},N}
    batch_last = _batch_last_layout(layout)
    buffers = [_bytes_buffer(s) for s in vec(batch_last ? a : _row_major(a))]
    pointers = Ptr{UInt8}[pointer(b) for b in buffers]
    lengths = Csize_t[sizeof(b) for b in buffers]
    shape = Int64[(batch_last ? reverse(size(a)) : size(a))...]
    GC.@preserve buffers begin
        p = _out(o -> LibDinput.dinput_tensor_new_bytes(o, shape, N, pointers, lengths))
    end
    return Tensor(p)
end

Tensor(s::AbstractString) = Tensor(fill(String(s)))

Tensor(t::Tensor) = t

Base.copy(t::Tensor) = Tensor(_out(o -> LibDinput.dinput_tensor_ref(o, t)))

function Tensor(x; kwargs...)
    throw(ArgumentError("cannot make a Tensor from a $(typeof(x)); give an array or a scalar " *
                        "of Bool, Int8-Int64, UInt8-UInt64, Float16, Float32, Float64, or strings"))
end

_bytes_buffer(s::String) = s
_bytes_buffer(s::AbstractString) = String(s)
_bytes_buffer(v::Vector{UInt8}) = v
_bytes_buffer(v::AbstractVector{UInt8}) = Vector{UInt8}(v)

function _array_dtype(::Type{T}, dtype::Union{Nothing,Symbol}) where {T}
    code = _dtype_code(T)
    dtype === nothing && return code
    wanted = _dtype_code(dtype)
    (wanted == code || (T === UInt16 && wanted == LibDinput.DINPUT_BFLOAT16)) && return wanted
    throw(ArgumentError("cannot make a $dtype tensor from $T values " *
                        "(only UInt16 bits may be declared :bfloat16)"))
end

_dense(x::Array) = x
_dense(x::AbstractArray{T,N}) where {T,N} = Array{T,N}(x)

# A dense Array whose memory holds the elements of `a` in C order (last index fastest):
# for rank ≥ 2 that is `a` with its dimensions reversed.
function _row_major(a::AbstractArray{T,N}) where {T,N}
    N <= 1 && return _dense(a)
    return _dense(permutedims(a, ntuple(i -> N + 1 - i, N)))
end

# The inverse: `buf` holds C-ordered data under reversed dimensions.
function _from_row_major(buf::Array{T,N}) where {T,N}
    N <= 1 && return buf
    return permutedims(buf, ntuple(i -> N + 1 - i, N))
end

"""
    dtype(t::Tensor) -> Symbol

The dinput dtype of `t`: `:bool`, `:int8`, …, `:float16`, `:bfloat16`, `:float32`,
`:float64` or `:bytes`.
"""
dtype(t::Tensor) = _dtype_symbol(LibDinput.dinput_tensor_dtype(t))

"""
    eltype(t::Tensor) -> Type

The Julia type `Array(t)` has elements of (`UInt16` for bfloat16, `String` for bytes).
"""
Base.eltype(t::Tensor) = _julia_type(LibDinput.dinput_tensor_dtype(t))

Base.ndims(t::Tensor) = Int(LibDinput.dinput_tensor_rank(t))

function Base.size(t::Tensor)
    GC.@preserve t begin
        n = Int(LibDinput.dinput_tensor_rank(t))
        p = LibDinput.dinput_tensor_shape(t)     # borrowed from t
        return ntuple(i -> Int(unsafe_load(p, i)), n)
    end
end

function Base.size(t::Tensor, d::Integer)
    d >= 1 || throw(ArgumentError("dimension must be ≥ 1, got $d"))
    return d <= ndims(t) ? Int(LibDinput.dinput_tensor_dim(t, d - 1)) : 1
end

"""
    length(t::Tensor) -> Int

The number of elements (1 for a scalar).
"""
Base.length(t::Tensor) = Int(LibDinput.dinput_tensor_num_elements(t))

"""
    sizeof(t::Tensor) -> Int

The payload in bytes (for `bytes` tensors, the total length of the strings).
"""
Base.sizeof(t::Tensor) = Int(LibDinput.dinput_tensor_byte_size(t))

"""
    Array(t::Tensor)
    Array{T}(t::Tensor)
    Array{T,N}(t::Tensor)

A new Julia array with the dimensions and elements of `t` (see [`Tensor`](@ref) for the
order). With `T` given, `t`'s dtype must be `T`'s, else a `DinputError` with code
`:INVALID_ARGUMENT` is thrown: values are never converted. `UInt16` also reads bfloat16
tensors; `String` and `Vector{UInt8}` read bytes tensors.
"""
Base.Array(t::Tensor) = Array{eltype(t)}(t)

Base.Array{T}(t::Tensor) where {T} = _from_row_major(_read_reversed(T, t))

# t's elements as an Array{T} with the dimensions reversed, i.e. dinput's row-major memory
# read column-major: the batch-last order, with no permutation.
function _read_reversed(::Type{T}, t::Tensor) where {T}
    actual = LibDinput.dinput_tensor_dtype(t)
    if T === String || T === Vector{UInt8}
        actual == LibDinput.DINPUT_BYTES ||
            throw(DinputError(:INVALID_ARGUMENT, "cannot read a $(dtype(t)) tensor as $T: " *
                                                 "only bytes tensors hold strings"))
        return _read_bytes(T, t)
    end
    # dinput_tensor_copy_to checks the dtype and reports a mismatch naming both dtypes.
    expected = T === UInt16 && actual == LibDinput.DINPUT_BFLOAT16 ? actual : _dtype_code(T)
    buf = Array{T}(undef, reverse(size(t)))
    check(LibDinput.dinput_tensor_copy_to(buf, sizeof(buf), t, expected))
    return buf
end

"""
    batch_last(t::Tensor) -> Array
    batch_last(T, t::Tensor) -> Array{T}

A new Julia array of `t`'s elements with the dimensions reversed, `reverse(size(t))`: the
batch dimension (C's first) last, as Flux and most Julia code expect, and `batch_last(t)[j+1,
i+1]` is C's `t[i][j]`. It is a plain copy of dinput's memory (no permutation, unlike
[`Array`](@ref)`(t)`); [`unsafe_array`](@ref) is the same without the copy. `T` is checked
as by `Array{T}(t)`. Works for every tensor, bytes and CUDA ones included.
"""
batch_last(t::Tensor) = _read_reversed(eltype(t), t)
batch_last(::Type{T}, t::Tensor) where {T} = _read_reversed(T, t)

function Base.Array{T,N}(t::Tensor) where {T,N}
    ndims(t) == N ||
        throw(DimensionMismatch("cannot read a rank-$(ndims(t)) tensor as Array{$T,$N}"))
    return Array{T}(t)::Array{T,N}
end

Base.collect(t::Tensor) = Array(t)

# Bytes elements under reversed dimensions (C order), as _read_reversed.
function _read_bytes(::Type{S}, t::Tensor) where {S}
    buf = Array{S}(undef, reverse(size(t)))
    p = Ref{Ptr{UInt8}}(C_NULL)
    n = Ref{Csize_t}(0)
    GC.@preserve t begin    # the strings are borrowed from t
        for i in eachindex(buf)
            check(LibDinput.dinput_tensor_string_view(p, n, t, i - 1))
            buf[i] = _bytes_value(S, p[], Int(n[]))
        end
    end
    return buf
end

_bytes_value(::Type{String}, p::Ptr{UInt8}, n::Int) = n == 0 ? "" : unsafe_string(p, n)

function _bytes_value(::Type{Vector{UInt8}}, p::Ptr{UInt8}, n::Int)
    v = Vector{UInt8}(undef, n)
    n > 0 && unsafe_copyto!(pointer(v), p, n)
    return v
end

"""
    t[]

The only element of a one-element tensor (a scalar, typically).
"""
function Base.getindex(t::Tensor)
    length(t) == 1 ||
        throw(ArgumentError("t[] needs a tensor with one element; this one has shape $(size(t))"))
    return Array(t)[1]
end

"""
    unsafe_array(t::Tensor) -> Array

A zero-copy view of `t`'s data: a Julia array over dinput's row-major memory, so its
dimensions are `reverse(size(t))` and `unsafe_array(t)[j+1, i+1]` is C's `t[i][j]`: the
batch-last order ([`batch_last`](@ref) is the same as a copy). It is valid only while `t`
is open and reachable (use `GC.@preserve t`), and must not be written to. Not for bytes or
CUDA tensors.
"""
function unsafe_array(t::Tensor)
    T = eltype(t)
    T === String &&
        throw(ArgumentError("unsafe_array: bytes tensors have no fixed-size data; use Array(t)"))
    device_type(t) === :cuda &&
        throw(ArgumentError("unsafe_array: a CUDA tensor's data is in device memory; " *
                            "use Array(t) or Dinput.to_host(t)"))
    dims = reverse(size(t))
    prod(dims) == 0 && return Array{T}(undef, dims)
    return unsafe_wrap(Array, Ptr{T}(LibDinput.dinput_tensor_data(t)), dims; own=false)
end

"""
    unsafe_batch_first(t::Tensor) -> PermutedDimsArray

A zero-copy view of `t`'s data in dinput's order, batch first: `size(v) == size(t)` and
`v[i+1, j+1]` is C's `t[i][j]`, as with [`Array`](@ref)`(t)` but without the copy. It is
[`unsafe_array`](@ref)`(t)` with its dimensions permuted back by `PermutedDimsArray`, so
the same rules hold: valid only while `t` is open and reachable (`GC.@preserve t`), read
only, not for bytes or CUDA tensors. Reading it along the first dimension strides through
memory; for heavy use, `Array(t)` (one permuting copy) may be faster.
"""
function unsafe_batch_first(t::Tensor)
    raw = unsafe_array(t)
    N = ndims(raw)
    return PermutedDimsArray(raw, ntuple(i -> N + 1 - i, N))
end

const DEVICE_TYPES = Dict{Cint,Symbol}(
    LibDinput.DINPUT_DEVICE_CPU => :cpu,
    LibDinput.DINPUT_DEVICE_CUDA => :cuda,
    LibDinput.DINPUT_DEVICE_CUDA_HOST => :cuda_host,
)

"""
    Dinput.device_type(t::Tensor) -> Symbol

Where `t`'s data lives: `:cpu`, `:cuda` (GPU memory; `Array(t)` copies it to the host) or
`:cuda_host` (page-locked host memory).
"""
function device_type(t::Tensor)
    code = LibDinput.dinput_tensor_device_type(t)
    return get(DEVICE_TYPES, code, :unknown)
end

"""
    Dinput.device_index(t::Tensor) -> Int

The CUDA device ordinal of a `:cuda` tensor; -1 otherwise.
"""
device_index(t::Tensor) = Int(LibDinput.dinput_tensor_device_index(t))

"""
    Dinput.to_host(t::Tensor) -> Tensor

A tensor in host memory with `t`'s values: a copy of a CUDA tensor, or a new handle to the
same data.
"""
to_host(t::Tensor) = Tensor(_out(o -> LibDinput.dinput_tensor_to_host(o, t)))

# DLPack's DLManagedTensor (dlpack.h), to find the deleter of an exported tensor.
struct DLDevice
    device_type::Int32
    device_id::Int32
end

struct DLDataType
    code::UInt8
    bits::UInt8
    lanes::UInt16
end

struct DLTensor
    data::Ptr{Cvoid}
    device::DLDevice
    ndim::Int32
    dtype::DLDataType
    shape::Ptr{Int64}
    strides::Ptr{Int64}
    byte_offset::UInt64
end

struct DLManagedTensor
    dl_tensor::DLTensor
    manager_ctx::Ptr{Cvoid}
    deleter::Ptr{Cvoid}
end

"""
    Dinput.unsafe_to_dlpack(t::Tensor) -> Ptr{Cvoid}

Exports `t` without copying as a `DLManagedTensor*` (for DLPack consumers). The caller owns
it and must release it exactly once, with [`Dinput.dlpack_delete`](@ref) or by handing it
to a consumer that calls its deleter; the data stays valid until then and must not be
written to. bool is exported as uint8. Bytes tensors throw `:INVALID_ARGUMENT`.
"""
unsafe_to_dlpack(t::Tensor) = _out(o -> LibDinput.dinput_tensor_to_dlpack(o, t))

"""
    Dinput.dlpack_delete(p::Ptr{Cvoid})

Calls the deleter of a `DLManagedTensor*` from [`Dinput.unsafe_to_dlpack`](@ref).
"""
function dlpack_delete(p::Ptr{Cvoid})
    p == C_NULL && return nothing
    deleter = unsafe_load(Ptr{DLManagedTensor}(p)).deleter
    deleter == C_NULL || ccall(deleter, Cvoid, (Ptr{Cvoid},), p)
    return nothing
end

function Base.show(io::IO, t::Tensor)
    isopen(t) || return print(io, "Tensor(<closed>)")
    print(io, "Tensor{", dtype(t), "}(")
    show(IOContext(io, :limit => true, :compact => true), Array(t))
    print(io, ")")
end
