# Elements (tuples of tensors) and element specs.

"""
    Element(components...)
    Element(components::Tuple)

One element of a dataset: an ordered tuple of tensors (its components). Components may be
given as `Tensor`s or as anything `Tensor` accepts (arrays, numbers, strings).

An element is indexed from 1 and iterates over its components as `Tensor`s:

```julia
e = Element([1, 2, 3], 4.0f0)
length(e)             # 2
Array(e[1])           # [1, 2, 3]
e[2][]                # 4.0f0
features, label = e   # destructuring
```

Elements passed to callbacks (`map`, `filter`, `strategy_run`, ...) are valid only during the call;
`copy(x)`, `x[i]` (a tensor of its own) and arrays made from it stay valid.
"""
mutable struct Element <: Handle
    ptr::Ptr{Cvoid}
    owned::Bool   # false for the borrowed input of a callback (see _with_borrowed_element)
    function Element(ptr::Ptr{Cvoid}; owned::Bool=true)
        e = new(ptr, owned)
        owned && finalizer(_finalize, e)
        return e
    end
end

_free(e::Element, p::Ptr{Cvoid}) = e.owned ? LibDinput.dinput_element_free(p) : nothing

Element(components...) = Element(_element_handle(components))
Element(components::Tuple) = Element(_element_handle(components))
Element(e::Element) = e

Base.length(e::Element) = Int(LibDinput.dinput_element_size(e))
Base.firstindex(::Element) = 1
Base.lastindex(e::Element) = length(e)
Base.eltype(::Type{Element}) = Tensor

function Base.getindex(e::Element, i::Integer)
    1 <= i <= length(e) || throw(BoundsError(e, i))
    GC.@preserve e begin
        borrowed = LibDinput.dinput_element_get(e, i - 1)
        return Tensor(_out(o -> LibDinput.dinput_tensor_ref(o, borrowed)))
    end
end

Base.iterate(e::Element, i::Int=1) = i > length(e) ? nothing : (e[i], i + 1)

"""
    copy(x::Union{Tensor,Element,Dataset,PerReplica})

A second handle to the same immutable object (no data is copied), owned independently of
`x`: it stays valid when `x` is closed, for example after the callback `x` was passed to.
"""
Base.copy(e::Element) = Element(_element_handle(e))

function Base.show(io::IO, e::Element)
    isopen(e) || return print(io, "Element(<closed>)")
    print(io, "Element(")
    join(io, collect(e), ", ")
    print(io, ")")
end

# ---------------------------------------------------------------------------------------
# New element handles (owned by whoever receives them: a Julia Element, or the library when
# a callback returns one)
# ---------------------------------------------------------------------------------------

# A new handle to the same element (e may be borrowed, or a raw borrowed handle).
_element_handle(e::Union{Element,Ptr{Cvoid}}) = _out(o -> LibDinput.dinput_element_ref(o, e))
_element_handle(t::Tensor) = _element_handle((t,))
_element_handle(parts::AbstractVector{Tensor}) = _element_handle(Tuple(parts))
_element_handle(::Nothing) = throw(ArgumentError("expected an element's components, got nothing"))

# Components given as tensors are shared; other values become temporary tensors, closed
# once the element holds its own references.
function _element_handle(parts::Tuple)
    tensors = Tensor[]
    temporaries = Tensor[]
    try
        for part in parts
            if part isa Tensor
                push!(tensors, part)
            else
                t = Tensor(part)
                push!(temporaries, t)
                push!(tensors, t)
            end
        end
        GC.@preserve tensors begin
            pointers = Ptr{Cvoid}[_ptr(t) for t in tensors]
            return _out(o -> LibDinput.dinput_element_new(o, pointers, length(pointers)))
        end
    finally
        foreach(close, temporaries)
    end
end

# Anything else is a single component.
_element_handle(x) = _element_handle((x,))

# Calls f(e) with an Element over a handle the library lends for the duration of a callback;
# afterwards the Element is marked closed, so that a copy kept by the callback fails cleanly
# instead of reading freed memory.
function _with_borrowed_element(f, p::Ptr{Cvoid})
    e = Element(p; owned=false)
    try
        return f(e)
    finally
        e.ptr = C_NULL
    end
end

# ---------------------------------------------------------------------------------------
# Specs
# ---------------------------------------------------------------------------------------

"""
    TensorSpec(dtype, shape)

The spec of one component of an element: a dtype (a `Symbol` such as `:float32`, or a Julia
type such as `Float32`) and a shape whose unknown dimensions are `nothing` (stored as
`Dinput.UNKNOWN_DIM`, -1).

```julia
TensorSpec(Float32, (4,))
TensorSpec(:int64, (nothing,))   # a vector of unknown length
TensorSpec(String, ())           # a bytes scalar
```
"""
struct TensorSpec
    dtype::Symbol
    shape::Vector{Int}
    function TensorSpec(dtype::Union{Symbol,Type}, shape=())
        code = _dtype_code(dtype)
        dims = Int[d === nothing ? UNKNOWN_DIM : Int(d) for d in shape]
        return new(_dtype_symbol(code), dims)
    end
end

"""
    Dinput.UNKNOWN_DIM

An unknown dimension in a [`TensorSpec`](@ref)'s shape (-1).
"""
const UNKNOWN_DIM = LibDinput.DINPUT_UNKNOWN_DIM

Base.:(==)(a::TensorSpec, b::TensorSpec) = a.dtype == b.dtype && a.shape == b.shape
Base.hash(s::TensorSpec, h::UInt) = hash(s.shape, hash(s.dtype, hash(:TensorSpec, h)))

function Base.show(io::IO, s::TensorSpec)
    dims = [d == UNKNOWN_DIM ? "nothing" : string(d) for d in s.shape]
    print(io, "TensorSpec(:", s.dtype, ", (", join(dims, ", "), length(dims) == 1 ? ",))" : "))")
end

_specs(s::TensorSpec) = TensorSpec[s]
_specs(specs) = TensorSpec[s for s in specs]

# Calls f(p) with a C spec built from `spec` (nothing: NULL), freed afterwards.
function _with_spec(f, spec)
    spec === nothing && return f(C_NULL)
    p = _out(LibDinput.dinput_spec_new)
    try
        for s in _specs(spec)
            shape = Int64.(s.shape)
            check(LibDinput.dinput_spec_add(p, _dtype_code(s.dtype), shape, length(shape)))
        end
        return f(p)
    finally
        LibDinput.dinput_spec_free(p)
    end
end

# The Julia form of a C spec handle, which it frees.
function _take_spec(p::Ptr{Cvoid})
    try
        return TensorSpec[_spec_component(p, i - 1) for i in 1:Int(LibDinput.dinput_spec_size(p))]
    finally
        LibDinput.dinput_spec_free(p)
    end
end

function _spec_component(p::Ptr{Cvoid}, i::Int)
    rank = Int(LibDinput.dinput_spec_rank(p, i))
    dims = LibDinput.dinput_spec_shape(p, i)   # borrowed from the spec; UNKNOWN_DIM stays -1
    shape = Int[unsafe_load(dims, k) for k in 1:rank]
    return TensorSpec(_dtype_symbol(LibDinput.dinput_spec_dtype(p, i)), shape)
end
