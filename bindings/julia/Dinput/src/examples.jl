# Parsing serialized tf.train.Example and SequenceExample records (docs/examples.md).

"""
    FixedLenFeature(shape, dtype; default=nothing)

`tf.io.FixedLenFeature`: every record gives exactly `prod(shape)` values of `dtype`
(`Int64`, `Float32` or `String`). `shape` is in the C order of dinput's shapes (`()` for a
scalar). `default` (that many values, or one to repeat) stands in for a record that lacks
the key; without one such a record is an error.
"""
struct FixedLenFeature
    shape::Vector{Int64}
    dtype::Type
    default::Any
end
FixedLenFeature(shape, dtype::Type; default=nothing) =
    FixedLenFeature(Int64[d for d in shape], dtype, default)

"""
    VarLenFeature(dtype)

`tf.io.VarLenFeature`: any number of values per record. `parse_example` gives two
components for it, the values of the whole batch and their `Int64` row splits (TensorFlow's
RaggedTensor encoding); `parse_single_example` gives the values.
"""
struct VarLenFeature
    dtype::Type
end

"""
    FixedLenSequenceFeature(shape, dtype; allow_missing=false, default=nothing)

`tf.io.FixedLenSequenceFeature`: a sequence of values of `shape` per record, padded in a
batch with `default` (one value; `nothing`: zero or empty).
"""
struct FixedLenSequenceFeature
    shape::Vector{Int64}
    dtype::Type
    allow_missing::Bool
    default::Any
end
FixedLenSequenceFeature(shape, dtype::Type; allow_missing::Bool=false, default=nothing) =
    FixedLenSequenceFeature(Int64[d for d in shape], dtype, allow_missing, default)

_default_tensor(x) = x === nothing ? C_NULL : Tensor(x)

function _add_feature(p::Ptr{Cvoid}, key::String, f::FixedLenFeature)
    def = _default_tensor(f.default)
    check(LibDinput.dinput_feature_spec_add_fixed_len(p, key, _dtype_code(f.dtype), f.shape,
                                                      length(f.shape), def))
end
_add_feature(p::Ptr{Cvoid}, key::String, f::VarLenFeature) =
    check(LibDinput.dinput_feature_spec_add_var_len(p, key, _dtype_code(f.dtype)))
function _add_feature(p::Ptr{Cvoid}, key::String, f::FixedLenSequenceFeature)
    def = _default_tensor(f.default)
    check(LibDinput.dinput_feature_spec_add_fixed_len_sequence(p, key, _dtype_code(f.dtype),
                                                               f.shape, length(f.shape),
                                                               f.allow_missing, def))
end

# Calls f(p) with a C feature spec built from `features` (key => feature pairs; nothing:
# NULL), freed afterwards.
function _with_features(f, features)
    features === nothing && return f(C_NULL)
    p = _out(LibDinput.dinput_feature_spec_new)
    try
        for (key, feature) in features
            _add_feature(p, String(key), feature)
        end
        return f(p)
    finally
        LibDinput.dinput_feature_spec_free(p)
    end
end

"""
    parse_example(ds, features; component=0) -> Dataset

Parses batches of serialized `tf.train.Example`s: component `component` (0-based, as in the
C API) of each element is a bytes vector; the parsed components, in the order of the keys
of `features` (a `Dict` or pairs of key => feature), take its place.
"""
parse_example(ds::Dataset, features; component::Integer=0) =
    _with_features(features) do p
        _derive(o -> LibDinput.dinput_dataset_parse_example(o, ds, p, component), ds)
    end

"""
    parse_single_example(ds, features; component=0) -> Dataset

As [`parse_example`](@ref) for one serialized record (a bytes scalar) per element.
"""
parse_single_example(ds::Dataset, features; component::Integer=0) =
    _with_features(features) do p
        _derive(o -> LibDinput.dinput_dataset_parse_single_example(o, ds, p, component), ds)
    end

"""
    parse_sequence_example(ds; context=nothing, sequence=nothing, component=0) -> Dataset

Parses serialized `tf.train.SequenceExample`s (a bytes scalar, or a vector for a batch):
the `context` features, then the `sequence` feature lists (`VarLenFeature` or
`FixedLenSequenceFeature`).
"""
parse_sequence_example(ds::Dataset; context=nothing, sequence=nothing, component::Integer=0) =
    _with_features(context) do c
        _with_features(sequence) do s
            _derive(o -> LibDinput.dinput_dataset_parse_sequence_example(o, ds, c, s, component),
                    ds)
        end
    end
