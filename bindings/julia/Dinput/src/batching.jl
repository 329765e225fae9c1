# padded_batch, bucket_by_sequence_length, window, flat_map, and readers as values.

# Makes the C padded-batch options for `ds`'s elements and calls f(handle).
function _with_padded_options(f, ds::Dataset, padded_shapes, padding_values, drop_remainder::Bool)
    return _with_option_handle(LibDinput.dinput_padded_batch_options_new,
                               LibDinput.dinput_padded_batch_options_free) do opts
        check(LibDinput.dinput_padded_batch_options_set_drop_remainder(opts, drop_remainder))
        if padded_shapes !== nothing
            spec = element_spec(ds)
            length(padded_shapes) == length(spec) || throw(ArgumentError(
                "padded_shapes has $(length(padded_shapes)) shapes but the elements have " *
                "$(length(spec)) components"))
            shapes = [TensorSpec(spec[i].dtype, [d === nothing ? UNKNOWN_DIM : Int(d) for d in s])
                      for (i, s) in enumerate(padded_shapes)]
            _with_spec(shapes) do s
                check(LibDinput.dinput_padded_batch_options_set_padded_shapes(opts, s))
            end
        end
        if padding_values !== nothing
            values = Element(padding_values...)
            try
                check(LibDinput.dinput_padded_batch_options_set_padding_values(opts, values))
            finally
                close(values)
            end
        end
        return f(opts)
    end
end

"""
    padded_batch(ds, batch_size; padded_shapes=nothing, padding_values=nothing,
                 drop_remainder=false) -> Dataset

Combines `batch_size` consecutive elements like [`batch`](@ref), padding each component to
one shape first (`tf.data`'s `padded_batch`). `padded_shapes` gives one shape per
component (`nothing` in a shape: the batch's longest; default: every unknown dimension so);
`padding_values` one scalar per component (default zeros, empty strings for bytes). An
element larger than its padded shape fails the iteration naming the component and the
element. A batch for [`distribute_dataset`](@ref).
"""
function padded_batch(ds::Dataset, batch_size::Integer; padded_shapes=nothing,
                      padding_values=nothing, drop_remainder::Bool=false)
    return _with_padded_options(ds, padded_shapes, padding_values, drop_remainder) do opts
        _derive(o -> LibDinput.dinput_dataset_padded_batch(o, ds, batch_size, opts), ds)
    end
end

"""
    bucket_by_sequence_length(ds, length_component, bucket_boundaries, bucket_batch_sizes;
                              padded_shapes=nothing, padding_values=nothing,
                              pad_to_bucket_boundary=false, drop_remainder=false) -> Dataset

Groups elements by the length (first dimension) of component `length_component` (1-based)
into padded batches: bucket `i` takes lengths in `[boundaries[i-1], boundaries[i])` and goes
out once it holds `bucket_batch_sizes[i]` elements; at the end of the input the partly
filled buckets go out in bucket order. `pad_to_bucket_boundary` pads unknown dimensions to
the bucket's boundary - 1.
"""
function bucket_by_sequence_length(ds::Dataset, length_component::Integer,
                                   bucket_boundaries::AbstractVector{<:Integer},
                                   bucket_batch_sizes::AbstractVector{<:Integer};
                                   padded_shapes=nothing, padding_values=nothing,
                                   pad_to_bucket_boundary::Bool=false,
                                   drop_remainder::Bool=false)
    length_component >= 1 || throw(ArgumentError("length_component must be >= 1 (1-based)"))
    b = Int64[x for x in bucket_boundaries]
    s = Int64[x for x in bucket_batch_sizes]
    return _with_padded_options(ds, padded_shapes, padding_values, drop_remainder) do opts
        _derive(o -> LibDinput.dinput_dataset_bucket_by_sequence_length(
                    o, ds, length_component - 1, b, length(b), s, length(s),
                    pad_to_bucket_boundary, opts), ds)
    end
end

"""
    bucket_by_sequence_length(f, ds, bucket_boundaries, bucket_batch_sizes; padded_shapes=nothing,
                              padding_values=nothing, pad_to_bucket_boundary=false,
                              drop_remainder=false) -> Dataset

As `bucket_by_sequence_length(ds, length_component, ...)`, with the length of each element
`x` given by `f(x)` (an `Integer` >= 0; tf.data's `element_length_func`) rather than taken
from a component.
"""
function bucket_by_sequence_length(f, ds::Dataset,
                                   bucket_boundaries::AbstractVector{<:Integer},
                                   bucket_batch_sizes::AbstractVector{<:Integer};
                                   padded_shapes=nothing, padding_values=nothing,
                                   pad_to_bucket_boundary::Bool=false,
                                   drop_remainder::Bool=false)
    _ptr(ds)
    b = Int64[x for x in bucket_boundaries]
    s = Int64[x for x in bucket_batch_sizes]
    return _with_padded_options(ds, padded_shapes, padding_values, drop_remainder) do opts
        data = _register(Callback(f))
        _derive(o -> LibDinput.dinput_dataset_bucket_by_sequence_length_fn(
                    o, ds, _length_fn(), data, _free_fn(), b, length(b), s, length(s),
                    pad_to_bucket_boundary, opts), ds; callbacks=true)
    end
end

"""
    window(ds, size; shift=size, stride=1, drop_remainder=false) -> Dataset

Sliding windows, each one element whose components stack the window's elements: window
`i` holds input elements `i*shift + k*stride`, `k < size` (fewer at the end unless
`drop_remainder`). `tf.data`'s `window` followed by `flat_map(lambda *w: zip(w).batch(size))`.
"""
function window(ds::Dataset, size::Integer; shift::Integer=size, stride::Integer=1,
                drop_remainder::Bool=false)
    return _derive(o -> LibDinput.dinput_dataset_window(o, ds, size, shift, stride,
                                                        drop_remainder), ds)
end

"""
    flat_map(f, ds, spec) -> Dataset

For each element `x` of `ds`, reads the `Dataset` `f(x)` to its end before the next one
(`tf.data`'s `flat_map`); `spec` is the spec of those datasets' elements.
"""
function flat_map(f, ds::Dataset, spec)
    _ptr(ds)
    return _with_spec(spec) do s
        data = _register(InterleaveCallback(f, false))
        _derive(o -> LibDinput.dinput_dataset_flat_map(o, ds, _interleave_fn(), s, data,
                                                       _free_fn()),
                ds; callbacks=true)
    end
end

"""
    Reader

A file reader as a value, for [`interleave_reader`](@ref) and [`flat_map_reader`](@ref):
`records_reader(; compression=:none, buffer_size=0)`, `text_lines_reader()` or
`fixed_length_records_reader(record_bytes; header_bytes=0, footer_bytes=0)`.
"""
struct Reader
    kind::Symbol
    compression::Symbol
    buffer_size::Int64
    record_bytes::Int64
    header_bytes::Int64
    footer_bytes::Int64
end

function records_reader(; compression::Symbol=:none, buffer_size::Integer=0)
    return Reader(:records, compression, buffer_size, 0, 0, 0)
end

text_lines_reader() = Reader(:text_lines, :none, 0, 0, 0, 0)

function fixed_length_records_reader(record_bytes::Integer; header_bytes::Integer=0,
                                     footer_bytes::Integer=0)
    return Reader(:fixed_length_records, :none, 0, record_bytes, header_bytes, footer_bytes)
end

# Makes the C reader of `r`, calls f(handle) and frees it.
function _with_reader(f, r::Reader)
    p = if r.kind === :records
        code = _compression_code(r.compression)
        _with_option_handle(LibDinput.dinput_records_options_new,
                            LibDinput.dinput_records_options_free) do opts
            check(LibDinput.dinput_records_options_set_compression(opts, code))
            check(LibDinput.dinput_records_options_set_buffer_size(opts, r.buffer_size))
            _out(o -> LibDinput.dinput_reader_records(o, opts))
        end
    elseif r.kind === :text_lines
        _out(LibDinput.dinput_reader_text_lines)
    else
        _out(o -> LibDinput.dinput_reader_fixed_length_records(o, r.record_bytes, r.header_bytes,
                                                              r.footer_bytes))
    end
    try
        return f(p)
    finally
        LibDinput.dinput_reader_free(p)
    end
end

"""
    interleave_reader(ds, reader; cycle_length=Dinput.AUTOTUNE, block_length=1,
                      num_parallel_calls=1, deterministic=nothing) -> Dataset

[`interleave`](@ref) over file names (bytes scalars, e.g. from [`list_files`](@ref)), each
read by `reader`, with no Julia callback. FILE auto-sharding splits the file list.
"""
function interleave_reader(ds::Dataset, reader::Reader; cycle_length::Integer=AUTOTUNE,
                           block_length::Integer=1, num_parallel_calls::Integer=1,
                           deterministic::Union{Nothing,Bool}=nothing)
    return _with_reader(reader) do r
        _with_option_handle(LibDinput.dinput_interleave_options_new,
                            LibDinput.dinput_interleave_options_free) do opts
            check(LibDinput.dinput_interleave_options_set_cycle_length(opts, cycle_length))
            check(LibDinput.dinput_interleave_options_set_block_length(opts, block_length))
            check(LibDinput.dinput_interleave_options_set_num_parallel_calls(opts, num_parallel_calls))
            check(LibDinput.dinput_interleave_options_set_deterministic(
                opts, _deterministic_code(deterministic)))
            _derive(o -> LibDinput.dinput_dataset_interleave_reader(o, ds, r, opts), ds)
        end
    end
end

"""
    flat_map_reader(ds, reader) -> Dataset

Reads each file named by `ds` whole, in order, with `reader`.
"""
function flat_map_reader(ds::Dataset, reader::Reader)
    return _with_reader(reader) do r
        _derive(o -> LibDinput.dinput_dataset_flat_map_reader(o, ds, r), ds)
    end
end
