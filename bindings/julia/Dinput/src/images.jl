# The image operations (docs/images.md): decoding and augmentation as built-in map stages.
# Every one takes the keywords `component` (the component holding the image, default 1 as
# Julia counts, i.e. the first), `num_parallel_calls` and `deterministic` (as for map).

function _image_op(f, ds::Dataset, component::Integer, num_parallel_calls::Integer,
                   deterministic::Union{Nothing,Bool})
    component >= 1 || throw(ArgumentError("component must be >= 1, got $component"))
    return _with_option_handle(LibDinput.dinput_image_options_new,
                               LibDinput.dinput_image_options_free) do opts
        check(LibDinput.dinput_image_options_set_component(opts, component - 1))
        check(LibDinput.dinput_image_options_set_num_parallel_calls(opts, num_parallel_calls))
        check(LibDinput.dinput_image_options_set_deterministic(opts, _deterministic_code(deterministic)))
        _derive(o -> f(o, opts), ds)
    end
end

"""
    decode_jpeg(ds; channels=0, component=1, num_parallel_calls=1, deterministic=nothing)

JPEG bytes to UInt8 images [height, width, channels] (row-major, as the C API gives them);
`channels` 0 (as stored), 1 or 3.
"""
function decode_jpeg(ds::Dataset; channels::Integer=0, component::Integer=1, num_parallel_calls::Integer=1,
                     deterministic::Union{Nothing,Bool}=nothing)
    return _image_op((o, opts) -> LibDinput.dinput_dataset_decode_jpeg(o, ds, channels, opts), ds,
                     component, num_parallel_calls, deterministic)
end

"""
    decode_png(ds; channels=0, component=1, num_parallel_calls=1, deterministic=nothing)

PNG bytes to UInt8 images; `channels` 0 (as stored), 1, 3 or 4.
"""
function decode_png(ds::Dataset; channels::Integer=0, component::Integer=1, num_parallel_calls::Integer=1,
                    deterministic::Union{Nothing,Bool}=nothing)
    return _image_op((o, opts) -> LibDinput.dinput_dataset_decode_png(o, ds, channels, opts), ds,
                     component, num_parallel_calls, deterministic)
end

"""
    resize(ds, (height, width); ...)

Bilinear resizing with half-pixel centres; Float32 out.
"""
function resize(ds::Dataset, size::Tuple{Integer,Integer}; component::Integer=1,
                num_parallel_calls::Integer=1, deterministic::Union{Nothing,Bool}=nothing)
    return _image_op((o, opts) -> LibDinput.dinput_dataset_resize(o, ds, size[1], size[2], opts), ds,
                     component, num_parallel_calls, deterministic)
end

"""
    center_crop(ds, (height, width); ...)
"""
function center_crop(ds::Dataset, size::Tuple{Integer,Integer}; component::Integer=1,
                     num_parallel_calls::Integer=1, deterministic::Union{Nothing,Bool}=nothing)
    return _image_op((o, opts) -> LibDinput.dinput_dataset_center_crop(o, ds, size[1], size[2], opts),
                     ds, component, num_parallel_calls, deterministic)
end

"""
    random_crop(ds, (height, width); seed=-1, ...)

A region at a place drawn from `seed` (negative: random) and the element's position.
"""
function random_crop(ds::Dataset, size::Tuple{Integer,Integer}; seed::Integer=-1, component::Integer=1,
                     num_parallel_calls::Integer=1, deterministic::Union{Nothing,Bool}=nothing)
    return _image_op((o, opts) -> LibDinput.dinput_dataset_random_crop(o, ds, size[1], size[2], seed,
                     opts),
                     ds, component, num_parallel_calls, deterministic)
end

"""
    random_resized_crop(ds, (height, width); scale=(0.08, 1.0), ratio=(3/4, 4/3), seed=-1, ...)

A region of random area and aspect ratio resized to (height, width); Float32 out.
"""
function random_resized_crop(ds::Dataset, size::Tuple{Integer,Integer}; scale=(0.08, 1.0),
                             ratio=(3 / 4, 4 / 3), seed::Integer=-1, component::Integer=1,
                             num_parallel_calls::Integer=1, deterministic::Union{Nothing,Bool}=nothing)
    return _image_op((o, opts) -> LibDinput.dinput_dataset_random_resized_crop(
                     o, ds, size[1], size[2], scale[1], scale[2], ratio[1], ratio[2], seed, opts),
                     ds, component, num_parallel_calls, deterministic)
end

"""
    random_flip_left_right(ds; seed=-1, ...)

Mirrors each image with probability 1/2.
"""
function random_flip_left_right(ds::Dataset; seed::Integer=-1, component::Integer=1,
                                num_parallel_calls::Integer=1, deterministic::Union{Nothing,Bool}=nothing)
    return _image_op((o, opts) -> LibDinput.dinput_dataset_random_flip_left_right(o, ds, seed, opts),
                     ds, component, num_parallel_calls, deterministic)
end

"""
    cast_image(ds, T=Float32; ...)

Converts images to `Float32` or `Float16`, values unchanged.
"""
function cast_image(ds::Dataset, ::Type{T}=Float32; component::Integer=1, num_parallel_calls::Integer=1,
                    deterministic::Union{Nothing,Bool}=nothing) where {T}
    return _image_op((o, opts) -> LibDinput.dinput_dataset_cast_image(o, ds, _dtype_code(T), opts), ds,
                     component, num_parallel_calls, deterministic)
end

"""
    normalize(ds, mean, stddev, T=Float32; ...)

`(x - mean[c]) / stddev[c]` per channel; one value per channel, or one for all.
"""
function normalize(ds::Dataset, mean::AbstractVector{<:Real}, stddev::AbstractVector{<:Real},
                   ::Type{T}=Float32; component::Integer=1, num_parallel_calls::Integer=1,
                   deterministic::Union{Nothing,Bool}=nothing) where {T}
    m = Vector{Cfloat}(mean)
    s = Vector{Cfloat}(stddev)
    return _image_op((o, opts) -> LibDinput.dinput_dataset_normalize(o, ds, m, s, length(m),
                                                                     _dtype_code(T), opts),
                     ds, component, num_parallel_calls, deterministic)
end
