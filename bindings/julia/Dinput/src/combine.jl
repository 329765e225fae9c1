# The transforms over several datasets (zip, concatenate, sample_from_datasets,
# choose_from_datasets), cache and ignore_errors.

# A dataset made by `f(out, array, n)` from the handles of `datasets`, kept alive for the
# call; it runs Julia callbacks when any input does.
function _from_list(f, datasets::AbstractVector{Dataset})
    ptrs = Ptr{Cvoid}[_ptr(d) for d in datasets]
    out = GC.@preserve datasets ptrs _out(o -> f(o, ptrs, length(ptrs)))
    return Dataset(out, any(d -> d.julia_callbacks, datasets))
end

"""
    zip_datasets(datasets::Dataset...) -> Dataset

tf.data's `zip`: elements made of one element of each dataset, their components one after
the other in a single flat tuple. Ends with the shortest dataset. (`Base.zip` keeps its
meaning on datasets, tuples of elements iterated in Julia, hence another name.)
"""
zip_datasets(datasets::Dataset...) =
    _from_list((o, p, n) -> LibDinput.dinput_dataset_zip(o, p, n), collect(Dataset, datasets))

"""
    concatenate(ds, other) -> Dataset

The elements of `ds`, then those of `other`; their specs must have the same number of
components, dtypes and ranks.
"""
concatenate(ds::Dataset, other::Dataset) =
    _from_list((o, p, n) -> LibDinput.dinput_dataset_concatenate(o, p[1], p[2]), [ds, other])

"""
    sample_from_datasets(datasets; weights=nothing, seed=nothing,
                         stop_on_empty_dataset=false) -> Dataset

Each element from one of `datasets`, picked at random with probabilities proportional to
`weights` (equal by default). The same `seed` gives the same picks; `nothing` draws one per
dataset. With `stop_on_empty_dataset`, the first pick of an exhausted dataset ends the
result; otherwise picks go on among the others.
"""
function sample_from_datasets(datasets::AbstractVector{Dataset}; weights=nothing,
                              seed::Union{Integer,Nothing}=nothing,
                              stop_on_empty_dataset::Bool=false)
    w = weights === nothing ? nothing : Cdouble[x for x in weights]
    if w !== nothing && length(w) != length(datasets)
        throw(ArgumentError("sample_from_datasets: $(length(w)) weights for " *
                            "$(length(datasets)) datasets"))
    end
    s = seed === nothing ? Int64(-1) : Int64(seed)
    seed !== nothing && s < 0 && throw(ArgumentError("seed must be >= 0, got $seed"))
    wp = w === nothing ? Ptr{Cdouble}(C_NULL) : pointer(w)
    return GC.@preserve w _from_list(
        (o, p, n) -> LibDinput.dinput_dataset_sample_from_datasets(o, p, n, wp, s,
                                                                   stop_on_empty_dataset),
        datasets)
end

"""
    choose_from_datasets(datasets, selector; stop_on_empty_dataset=true) -> Dataset

Each element from `datasets[i + 1]`, `i` being the next element of `selector` (int64
scalars, counted from 0 as in tf.data). An index outside the datasets fails iteration with
:INVALID_ARGUMENT.
"""
function choose_from_datasets(datasets::AbstractVector{Dataset}, selector::Dataset;
                              stop_on_empty_dataset::Bool=true)
    return _from_list(
        (o, p, n) -> LibDinput.dinput_dataset_choose_from_datasets(o, pointer(p, 2), n - 1, p[1],
                                                                   stop_on_empty_dataset),
        vcat([selector], datasets))
end

"""
    cache(ds; filename="") -> Dataset

Keeps the elements of the first complete pass and delivers them to later passes: in memory
(`filename` empty), or in the file `filename`, which a later run reads back. A file written
by another pipeline is :FAILED_PRECONDITION; a damaged one :DATA_LOSS.
"""
cache(ds::Dataset; filename::AbstractString="") =
    _derive(o -> LibDinput.dinput_dataset_cache(o, ds, filename), ds)

"""
    ignore_errors(ds; log_warning=false) -> Dataset

Drops the elements whose making failed with :INVALID_ARGUMENT or :DATA_LOSS and goes on;
`statistic(it, "errors_ignored")` counts them. Other errors pass.
"""
ignore_errors(ds::Dataset; log_warning::Bool=false) =
    _derive(o -> LibDinput.dinput_dataset_ignore_errors(o, ds, log_warning), ds)
