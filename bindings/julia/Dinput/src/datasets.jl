# Datasets: sources, transforms and options (the tf.data layer).

"""
    Dinput.AUTOTUNE

`buffer_size` for [`prefetch`](@ref), `num_parallel_calls` for `map` and `interleave`, or
`cycle_length` for `interleave`: chosen by dinput (-1).
"""
const AUTOTUNE = LibDinput.DINPUT_AUTOTUNE

"""
    Dinput.INFINITE_CARDINALITY, Dinput.UNKNOWN_CARDINALITY

What [`cardinality`](@ref) returns for infinite datasets (-1) and when it cannot tell (-2).
"""
const INFINITE_CARDINALITY = LibDinput.DINPUT_INFINITE_CARDINALITY
const UNKNOWN_CARDINALITY = LibDinput.DINPUT_UNKNOWN_CARDINALITY

"""
    Dinput.SHARD_HINT

Placeholder for both arguments of [`shard`](@ref), replaced by (number of workers, worker
index) when the dataset is distributed under the `:hint` auto-shard policy (-1).
"""
const SHARD_HINT = LibDinput.DINPUT_SHARD_HINT

"""
    Dinput.REPEAT_FOREVER

`count` for `repeat`: forever (-1), the default.
"""
const REPEAT_FOREVER = LibDinput.DINPUT_REPEAT_FOREVER

"""
    Dataset

An immutable dinput dataset: a node of an input pipeline graph, as `tf.data.Dataset`.
Building one does no work; iterating it runs the pipeline, and every `for` loop over it
starts a new iterator, that is, a new epoch:

```julia
ds = batch(Dataset(0:8), 4)          # range(9).batch(4)
for x in ds                          # x is an Element
    println(Array(x[1]))             # [0, 1, 2, 3], [4, 5, 6, 7], [8]
end
```

Sources: `Dataset(range)`, [`from_tensors`](@ref), [`from_tensor_slices`](@ref),
[`from_generator`](@ref), [`text_lines`](@ref), [`records`](@ref),
[`fixed_length_records`](@ref), [`list_files`](@ref). Transforms: [`batch`](@ref),
[`unbatch`](@ref), [`rebatch`](@ref), `repeat`, [`take`](@ref), [`Dinput.skip`](@ref),
[`shard`](@ref), `shuffle`, `map`, `filter`, [`interleave`](@ref),
[`Dinput.enumerate`](@ref), [`prefetch`](@ref), [`with_options`](@ref). `map`, `filter`,
`repeat` and `Random.shuffle` are methods of the Base and Random functions, with their
meaning (a transformed collection of the same kind, here a lazy `Dataset`); `skip` and
`enumerate` mean something else in Base (`skip(io, n)`, `(i, x)` pairs counted from 1), so
the dataset transforms are functions of this module, not exported: `Dinput.skip`,
`Dinput.enumerate`.
"""
mutable struct Dataset <: Handle
    ptr::Ptr{Cvoid}
    # Whether a Julia callback runs somewhere in this pipeline: such a pipeline must not be
    # read from dinput's threads before Julia 1.9 (see FOREIGN_THREAD_CALLBACKS).
    julia_callbacks::Bool
    function Dataset(ptr::Ptr{Cvoid}, julia_callbacks::Bool=false)
        ds = new(ptr, julia_callbacks)
        finalizer(_finalize, ds)
        return ds
    end
end

_free(::Dataset, p::Ptr{Cvoid}) = LibDinput.dinput_dataset_free(p)

# A transform of `input`: the new node has Julia callbacks if its input or itself has.
_derive(f, input::Dataset; callbacks::Bool=false) =
    Dataset(_out(f), input.julia_callbacks || callbacks)

# A second handle to `ds` (for the library to own when a callback returns it).
_dataset_ref(ds::Dataset) = _out(o -> LibDinput.dinput_dataset_ref(o, ds))

Base.copy(ds::Dataset) = Dataset(_dataset_ref(ds), ds.julia_callbacks)

"""
    cardinality(ds::Dataset) -> Int

The number of elements, or `Dinput.INFINITE_CARDINALITY` (-1), or
`Dinput.UNKNOWN_CARDINALITY` (-2).
"""
cardinality(ds::Dataset) = Int(LibDinput.dinput_dataset_cardinality(ds))

"""
    element_spec(ds::Dataset) -> Vector{TensorSpec}

The spec of the dataset's elements, one [`TensorSpec`](@ref) per component.
"""
element_spec(ds::Dataset) = _take_spec(_out(o -> LibDinput.dinput_dataset_element_spec(o, ds)))

"""
    Dinput.name(ds::Dataset) -> String

The short name of the dataset's last node: `"range"`, `"batch"`, ...
"""
name(ds::Dataset) = _cstring(LibDinput.dinput_dataset_name(ds))

function Base.show(io::IO, ds::Dataset)
    isopen(ds) || return print(io, "Dataset(<closed>)")
    print(io, "Dataset(", name(ds), ", cardinality=", cardinality(ds), ")")
end

# ---------------------------------------------------------------------------------------
# Options
# ---------------------------------------------------------------------------------------

const AUTO_SHARD_POLICIES = Dict{Symbol,Cint}(
    :off => LibDinput.DINPUT_AUTO_SHARD_OFF,
    :auto => LibDinput.DINPUT_AUTO_SHARD_AUTO,
    :file => LibDinput.DINPUT_AUTO_SHARD_FILE,
    :data => LibDinput.DINPUT_AUTO_SHARD_DATA,
    :hint => LibDinput.DINPUT_AUTO_SHARD_HINT,
)

function _policy_code(policy::Symbol)
    return get(AUTO_SHARD_POLICIES, policy) do
        throw(ArgumentError("unknown auto-shard policy :$policy; expected :off, :auto, " *
                            ":file, :data or :hint"))
    end
end

"""
    Options(; auto_shard_policy=nothing, skip_corrupt_records=nothing, max_record_bytes=nothing,
            map_files=nothing, allow_nonregular_files=nothing, deterministic=nothing)

Dataset options, applied with [`with_options`](@ref) (as `tf.data.Options`). Only the
options given are set; the others are inherited from upstream `with_options` nodes.

- `auto_shard_policy`: how [`distribute_dataset`](@ref) shards the data across workers:
  `:auto` (the default: `:file` if there is a file source, else `:data`), `:file`, `:data`,
  `:hint` or `:off`.
- `skip_corrupt_records`: `true` to skip records with a bad CRC instead of failing with
  `:DATA_LOSS`.
- `max_record_bytes`: the largest record (or text line) the readers accept, 256 MiB by
  default; a longer one fails before memory is taken for it.
- `map_files`: `true` to memory-map regular files instead of reading them into the
  library's buffers; only for files nobody truncates or rewrites while they are read (a
  mapped file truncated meanwhile kills the process with SIGBUS).
- `allow_nonregular_files`: `true` to read FIFOs and devices, which the readers refuse
  otherwise with `:FAILED_PRECONDITION`.
- `deterministic`: the order of the `map`, `interleave` and `batch` upstream whose own
  `deterministic` is `nothing` (`tf.data`'s `Options.deterministic`); `true` by default.
"""
mutable struct Options <: Handle
    ptr::Ptr{Cvoid}
    function Options(ptr::Ptr{Cvoid})
        o = new(ptr)
        finalizer(_finalize, o)
        return o
    end
end

_free(::Options, p::Ptr{Cvoid}) = LibDinput.dinput_options_free(p)

function Options(; auto_shard_policy::Union{Nothing,Symbol}=nothing,
                 skip_corrupt_records::Union{Nothing,Bool}=nothing,
                 max_record_bytes::Union{Nothing,Integer}=nothing,
                 map_files::Union{Nothing,Bool}=nothing,
                 allow_nonregular_files::Union{Nothing,Bool}=nothing,
                 deterministic::Union{Nothing,Bool}=nothing,
                 statistics::Union{Nothing,Bool}=nothing,
                 trace_events::Union{Nothing,Integer}=nothing,
                 ram_budget::Union{Nothing,Integer}=nothing)
    o = Options(_out(LibDinput.dinput_options_new))
    _set_statistics_options(o, statistics, trace_events)
    _set_autotune_options(o, ram_budget)
    if deterministic !== nothing
        check(LibDinput.dinput_options_set_deterministic(o, deterministic))
    end
    if auto_shard_policy !== nothing
        check(LibDinput.dinput_options_set_auto_shard_policy(o, _policy_code(auto_shard_policy)))
    end
    if skip_corrupt_records !== nothing
        check(LibDinput.dinput_options_set_skip_corrupt_records(o, skip_corrupt_records))
    end
    if max_record_bytes !== nothing
        check(LibDinput.dinput_options_set_max_record_bytes(o, max_record_bytes))
    end
    if map_files !== nothing
        check(LibDinput.dinput_options_set_map_files(o, map_files))
    end
    if allow_nonregular_files !== nothing
        check(LibDinput.dinput_options_set_allow_nonregular_files(o, allow_nonregular_files))
    end
    return o
end

"""
    auto_shard_policy(o::Options) -> Symbol

`:off`, `:auto`, `:file`, `:data` or `:hint`.
"""
function auto_shard_policy(o::Options)
    code = LibDinput.dinput_options_auto_shard_policy(o)
    for (name, c) in AUTO_SHARD_POLICIES
        c == code && return name
    end
    throw(DinputError(:INTERNAL, "unknown auto-shard policy $code"))
end

# ---------------------------------------------------------------------------------------
# Sources
# ---------------------------------------------------------------------------------------

"""
    Dataset(r::AbstractRange{<:Integer})

The int64 scalars of `r`: `Dataset(0:8)` is `tf.data.Dataset.range(9)`, `Dataset(0:2:8)` is
`range(0, 9, 2)`.
"""
function Dataset(r::AbstractRange{<:Integer})
    s = step(r)
    stop = isempty(r) ? first(r) : last(r) + s   # dinput's stop is exclusive
    return Dataset(_out(o -> LibDinput.dinput_dataset_range(o, first(r), stop, s)))
end

"""
    from_tensors(components...) -> Dataset
    from_tensors(e::Element) -> Dataset

A dataset of one element, made of the given components (see [`Element`](@ref)):
`from_tensors(Float32[1], Float32[1])` is `from_tensors(([1.], [1.]))`.
"""
from_tensors(e::Element) = Dataset(_out(o -> LibDinput.dinput_dataset_from_tensors(o, e)))
from_tensors(components...) = with(from_tensors, Element(components...))

"""
    from_tensor_slices(components...) -> Dataset
    from_tensor_slices(e::Element) -> Dataset

The slices of the components along their first dimension (Julia's first index, since
tensors keep Julia's dimensions): `from_tensor_slices([1, 2, 3, 4])` is four scalars,
`from_tensor_slices([1 2; 3 4])` the rows `[1, 2]` and `[3, 4]`.
"""
from_tensor_slices(e::Element) =
    Dataset(_out(o -> LibDinput.dinput_dataset_from_tensor_slices(o, e)))
from_tensor_slices(components...) = with(from_tensor_slices, Element(components...))

"""
    from_generator(f, spec) -> Dataset

A dataset whose elements come from Julia: for every new iterator (every epoch), `f()` is
called and must return an iterable; its values become the elements (anything
[`Element`](@ref) accepts: a tuple of components, an array, a number, ...). `f` may also
be an iterable itself, iterated again for each epoch. The elements must match `spec` (a
[`TensorSpec`](@ref) or a collection of them), else iteration fails with
`:INVALID_ARGUMENT`.

```julia
ds = from_generator(TensorSpec(Float32, (4,))) do
    (rand(Float32, 4) for _ in 1:10)
end
```

The generator runs on the thread that reads the dataset: the caller's, or a dinput thread
under `prefetch` or a distributed dataset (Julia ≥ 1.9, see the README, "Threads").

With `save` and `restore` (both or neither) its iterators can save their state
([`save_state`](@ref)): `save(iterable, state)` returns bytes saying where the iteration is
(`state` is the iteration state `iterate` returned last, `nothing` before the first
element); `restore(iterable, bytes)`, given a new iterable and those bytes, returns the
iteration state to continue from (`nothing`: from the start). Without them saving is
`:UNIMPLEMENTED` naming from_generator.
"""
function from_generator(f, spec; save=nothing, restore=nothing)
    (save === nothing) == (restore === nothing) ||
        throw(ArgumentError("from_generator takes save and restore together"))
    return _with_spec(spec) do s
        save === nothing || return Dataset(_out(o -> LibDinput.dinput_dataset_from_generator_with_state(
                    o, s, _generator_init_fn(), _generator_next_fn(), _generator_finalize_fn(),
                    _generator_save_fn(), _generator_restore_fn(),
                    _register(SavableCallback(f, save, restore)), _free_fn())), true)
        data = _register(Callback(f))
        Dataset(_out(o -> LibDinput.dinput_dataset_from_generator(
                    o, s, _generator_init_fn(), _generator_next_fn(), _generator_finalize_fn(),
                    data, _free_fn())), true)
    end
end

_strings(s::AbstractString) = String[s]
_strings(ss) = String[s for s in ss]

# Calls f(pointers, count) with a C array of NUL-terminated strings (Julia strings are).
function _with_cstrings(f, strings)
    strs = _strings(strings)
    for s in strs
        occursin('\0', s) &&
            throw(ArgumentError("a string given to dinput contains NUL: $(repr(s))"))
    end
    pointers = Ptr{UInt8}[pointer(s) for s in strs]
    GC.@preserve strs begin
        return f(pointers, length(pointers))
    end
end

"""
    text_lines(files) -> Dataset

One bytes scalar per line of each file (a path or a collection of paths), read in order;
`"\\n"` and `"\\r\\n"` end a line. A file source for `:file` auto-sharding.
"""
function text_lines(files)
    return _with_cstrings(files) do p, n
        Dataset(_out(o -> LibDinput.dinput_dataset_text_lines(o, p, n)))
    end
end

const COMPRESSIONS = Dict{Symbol,Cint}(
    :none => LibDinput.DINPUT_COMPRESSION_NONE,
    :zstd => LibDinput.DINPUT_COMPRESSION_ZSTD,
    :gzip => LibDinput.DINPUT_COMPRESSION_GZIP,
)

function _compression_code(c::Symbol)
    return get(COMPRESSIONS, c) do
        throw(ArgumentError("unknown compression :$c; expected :none, :zstd or :gzip"))
    end
end

"""
    records(files; compression=:none, buffer_size=0) -> Dataset

One bytes scalar per record of TFRecord files, both CRCs verified (`:DATA_LOSS` on a
corrupt record, see [`Options`](@ref)). `compression` is `:none`, `:zstd` or `:gzip`;
`buffer_size` is the read buffer in bytes (0: a default). A file source.
"""
function records(files; compression::Symbol=:none, buffer_size::Integer=0)
    code = _compression_code(compression)
    return _with_option_handle(LibDinput.dinput_records_options_new,
                               LibDinput.dinput_records_options_free) do opts
        check(LibDinput.dinput_records_options_set_compression(opts, code))
        check(LibDinput.dinput_records_options_set_buffer_size(opts, buffer_size))
        _with_cstrings(files) do p, n
            Dataset(_out(o -> LibDinput.dinput_dataset_records(o, p, n, opts)))
        end
    end
end

# Makes an option handle of the C API (`new` and `free` are its LibDinput functions), runs
# `f(handle)`, which sets it and calls the function taking it, and frees the handle: the
# function copies the settings.
function _with_option_handle(f, new, free)
    p = _out(new)
    try
        return f(p)
    finally
        free(p)
    end
end

# tf.data's three-state `deterministic`: `nothing` follows the pipeline's options.
_deterministic_code(d::Nothing) = LibDinput.DINPUT_DETERMINISTIC_UNSET
_deterministic_code(d::Bool) =
    d ? LibDinput.DINPUT_DETERMINISTIC_TRUE : LibDinput.DINPUT_DETERMINISTIC_FALSE

"""
    fixed_length_records(files, record_bytes; header_bytes=0, footer_bytes=0) -> Dataset

One bytes scalar of `record_bytes` bytes per record of each file, after skipping
`header_bytes` and before the last `footer_bytes`. A file source.
"""
function fixed_length_records(files, record_bytes::Integer; header_bytes::Integer=0,
                              footer_bytes::Integer=0)
    return _with_cstrings(files) do p, n
        Dataset(_out(o -> LibDinput.dinput_dataset_fixed_length_records(
            o, p, n, record_bytes, header_bytes, footer_bytes)))
    end
end

"""
    list_files(patterns; shuffle=false, seed=-1) -> Dataset

The names (bytes scalars) of the files matching any of the glob patterns, matched now;
sorted, or shuffled with `seed` (negative: random) in a new order for each iterator.
`:NOT_FOUND` when nothing matches. A file source: under `:file` auto-sharding each worker
gets its share of the list (use it with [`interleave`](@ref)).
"""
function list_files(patterns; shuffle::Bool=false, seed::Integer=-1)
    return _with_option_handle(LibDinput.dinput_list_files_options_new,
                               LibDinput.dinput_list_files_options_free) do opts
        check(LibDinput.dinput_list_files_options_set_shuffle(opts, shuffle))
        seed >= 0 && check(LibDinput.dinput_list_files_options_set_seed(opts, seed, 0))
        _with_cstrings(patterns) do p, n
            Dataset(_out(o -> LibDinput.dinput_dataset_list_files(o, p, n, opts)))
        end
    end
end

# ---------------------------------------------------------------------------------------
# Transforms
# ---------------------------------------------------------------------------------------

"""
    batch(ds, batch_size; drop_remainder=false, num_parallel_calls=1, deterministic=nothing) -> Dataset

Stacks `batch_size` consecutive elements along a new first dimension; the last batch may
be shorter unless `drop_remainder`. `batch_size` must be ≥ 1 (else `:INVALID_ARGUMENT`).
`num_parallel_calls` > 1 (or `Dinput.AUTOTUNE`) stacks several batches at once on
dinput's threads (the batches are the same); `deterministic` is accepted as in `tf.data`
(batches currently always keep their order).
"""
function batch(ds::Dataset, batch_size::Integer; drop_remainder::Bool=false,
               num_parallel_calls::Integer=1, deterministic::Union{Nothing,Bool}=nothing)
    return _with_option_handle(LibDinput.dinput_batch_options_new,
                               LibDinput.dinput_batch_options_free) do opts
        check(LibDinput.dinput_batch_options_set_drop_remainder(opts, drop_remainder))
        check(LibDinput.dinput_batch_options_set_num_parallel_calls(opts, num_parallel_calls))
        check(LibDinput.dinput_batch_options_set_deterministic(opts, _deterministic_code(deterministic)))
        _derive(o -> LibDinput.dinput_dataset_batch(o, ds, batch_size, opts), ds)
    end
end

"""
    unbatch(ds) -> Dataset

Splits each element along its first dimension into rows.
"""
unbatch(ds::Dataset) = _derive(o -> LibDinput.dinput_dataset_unbatch(o, ds), ds)

"""
    rebatch(ds, sizes; drop_remainder=false) -> Dataset

Regroups the rows of a batched dataset into batches whose sizes cycle through `sizes`
(as `unbatch` then `batch(k)` with `k` cycling).
"""
function rebatch(ds::Dataset, sizes::AbstractVector{<:Integer}; drop_remainder::Bool=false)
    s = Int64[k for k in sizes]
    return _derive(o -> LibDinput.dinput_dataset_rebatch(o, ds, s, length(s), drop_remainder), ds)
end

"""
    repeat(ds::Dataset, count=Dinput.REPEAT_FOREVER) -> Dataset

The dataset `count` times (forever by default).
"""
Base.repeat(ds::Dataset, count::Integer=REPEAT_FOREVER) =
    _derive(o -> LibDinput.dinput_dataset_repeat(o, ds, count), ds)

"""
    take(ds, count) -> Dataset

The first `count` elements (-1: all).
"""
take(ds::Dataset, count::Integer) = _derive(o -> LibDinput.dinput_dataset_take(o, ds, count), ds)

"""
    Dinput.skip(ds::Dataset, count) -> Dataset

All but the first `count` elements (-1: skips everything): `tf.data`'s `skip`. Not
`Base.skip`, which moves an IO stream; not exported, so that it does not hide it.
"""
skip(ds::Dataset, count::Integer) =
    _derive(o -> LibDinput.dinput_dataset_skip(o, ds, count), ds)

"""
    shard(ds, num_shards, index) -> Dataset

Keeps the elements `i` (counted from 0) with `i % num_shards == index`. Both may be
`Dinput.SHARD_HINT` (together) for the `:hint` auto-shard policy.
"""
shard(ds::Dataset, num_shards::Integer, index::Integer) =
    _derive(o -> LibDinput.dinput_dataset_shard(o, ds, num_shards, index), ds)

"""
    shuffle(ds::Dataset, buffer_size; seed=-1, seed2=0, reshuffle_each_iteration=true) -> Dataset

Shuffles with a buffer of `buffer_size` elements (`Random.shuffle`'s method for datasets).
A negative `seed` picks a random one; with a seed the order is the same run to run. The
pair (`seed`, `seed2`) is `tf.data`'s global and operation seed; `seed2` is used only with
a seed.
"""
function Random.shuffle(ds::Dataset, buffer_size::Integer; seed::Integer=-1,
                        seed2::Integer=0, reshuffle_each_iteration::Bool=true)
    return _with_option_handle(LibDinput.dinput_shuffle_options_new,
                               LibDinput.dinput_shuffle_options_free) do opts
        seed >= 0 && check(LibDinput.dinput_shuffle_options_set_seed(opts, seed, seed2))
        check(LibDinput.dinput_shuffle_options_set_reshuffle_each_iteration(
            opts, reshuffle_each_iteration))
        _derive(o -> LibDinput.dinput_dataset_shuffle(o, ds, buffer_size, opts), ds)
    end
end

"""
    Dinput.enumerate(ds::Dataset; start=0) -> Dataset

The dataset transform of `tf.data`: each element gets an int64 index (from `start`) as a
new first component. Unlike `Base.enumerate`, which this does not extend (and, unexported,
does not hide), the result is a `Dataset` and the index is a tensor: `for (i, x) in
Dinput.enumerate(ds)` destructures an element's components; `enumerate(ds)` is still
Base's `(1, element)`, `(2, element)`, ...
"""
enumerate(ds::Dataset; start::Integer=0) =
    _derive(o -> LibDinput.dinput_dataset_enumerate(o, ds, start), ds)

"""
    prefetch(ds, buffer_size=Dinput.AUTOTUNE) -> Dataset

Produces up to `buffer_size` elements ahead on a background thread (0: no prefetch).
Julia callbacks upstream then run on that thread: this needs Julia ≥ 1.9.
"""
function prefetch(ds::Dataset, buffer_size::Integer=AUTOTUNE)
    if ds.julia_callbacks && buffer_size != 0
        _require_foreign_threads("prefetch of a dataset with Julia callbacks")
    end
    return _derive(o -> LibDinput.dinput_dataset_prefetch(o, ds, buffer_size), ds)
end

"""
    with_options(ds, options::Options) -> Dataset
    with_options(ds; auto_shard_policy=nothing, skip_corrupt_records=nothing,
                 max_record_bytes=nothing, map_files=nothing, allow_nonregular_files=nothing,
                 deterministic=nothing) -> Dataset

The same data with the given [`Options`](@ref).
"""
with_options(ds::Dataset, options::Options) =
    _derive(o -> LibDinput.dinput_dataset_with_options(o, ds, options), ds)
with_options(ds::Dataset; kwargs...) = with(o -> with_options(ds, o), Options(; kwargs...))

"""
    map(f, ds::Dataset; spec=nothing, num_parallel_calls=1, deterministic=nothing) -> Dataset

Applies `f` to every element: `f(x::Element)` returns the new element (an `Element`, a
tuple of components, or one component). `spec` is the spec of the results when it differs
from the input's. `x` is valid only during the call.

`num_parallel_calls` > 1 (or `Dinput.AUTOTUNE`) runs `f` concurrently on dinput's threads
(Julia ≥ 1.9; `f` must then be thread-safe); results keep the input order unless
`deterministic` is false (`nothing`: the pipeline's [`Options`](@ref), ordered by default).
The default, 1, calls `f` on the thread that reads the dataset.
"""
function Base.map(f, ds::Dataset; spec=nothing, num_parallel_calls::Integer=1,
                  deterministic::Union{Nothing,Bool}=nothing)
    if !(num_parallel_calls in (0, 1))
        _require_foreign_threads("map with num_parallel_calls = $num_parallel_calls")
    end
    _ptr(ds)    # fail on a closed input before the callback is registered
    return _with_spec(spec) do s
        _with_option_handle(LibDinput.dinput_map_options_new,
                            LibDinput.dinput_map_options_free) do opts
            check(LibDinput.dinput_map_options_set_out_spec(opts, s))
            check(LibDinput.dinput_map_options_set_num_parallel_calls(opts, num_parallel_calls))
            check(LibDinput.dinput_map_options_set_deterministic(opts, _deterministic_code(deterministic)))
            # Registered only once the options are accepted: from the call on the library
            # owns it.
            data = _register(Callback(f))
            _derive(o -> LibDinput.dinput_dataset_map(o, ds, _map_fn(), data, _free_fn(), opts),
                    ds; callbacks=true)
        end
    end
end

"""
    map_many(f, ds::Dataset, max_count; spec=nothing, num_parallel_calls=1, deterministic=nothing) -> Dataset

The same as `map`, with a function that serves up to `max_count` consecutive elements per
call: `f(xs::Vector{Element})` returns as many results (each as `map`'s `f` returns one), in
order; only the last call of the input gets fewer. One crossing into Julia then serves a
whole run. An error from `f` fails the iteration at the first element of its run. The
elements of `xs` are valid only during the call; the keyword arguments are `map`'s.
"""
function map_many(f, ds::Dataset, max_count::Integer; spec=nothing, num_parallel_calls::Integer=1,
                  deterministic::Union{Nothing,Bool}=nothing)
    max_count >= 1 || throw(ArgumentError("map_many: max_count must be at least 1, got $max_count"))
    if !(num_parallel_calls in (0, 1))
        _require_foreign_threads("map_many with num_parallel_calls = $num_parallel_calls")
    end
    _ptr(ds)
    return _with_spec(spec) do s
        _with_option_handle(LibDinput.dinput_map_options_new,
                            LibDinput.dinput_map_options_free) do opts
            check(LibDinput.dinput_map_options_set_out_spec(opts, s))
            check(LibDinput.dinput_map_options_set_num_parallel_calls(opts, num_parallel_calls))
            check(LibDinput.dinput_map_options_set_deterministic(opts, _deterministic_code(deterministic)))
            data = _register(Callback(f))   # as in map: the library owns it from the call on
            _derive(o -> LibDinput.dinput_dataset_map_many(o, ds, max_count, _map_many_fn(), data,
                                                          _free_fn(), opts),
                    ds; callbacks=true)
        end
    end
end

"""
    filter(f, ds::Dataset) -> Dataset

The elements `x` for which `f(x)` is `true` (a `Bool`, or a scalar bool `Tensor`).
"""
function Base.filter(f, ds::Dataset)
    _ptr(ds)
    data = _register(Callback(f))
    return _derive(o -> LibDinput.dinput_dataset_filter(o, ds, _filter_fn(), data, _free_fn()),
                   ds; callbacks=true)
end

"""
    interleave(f, ds, spec; cycle_length=Dinput.AUTOTUNE, block_length=1,
               num_parallel_calls=1, deterministic=nothing) -> Dataset

For each element `x` of `ds`, `f(x)` returns a `Dataset` (for example
`records(x[1][])` for a file name); up to `cycle_length` of them are read at once,
`block_length` consecutive elements from each in turn, as `tf.data`'s `interleave`. `spec`
is the spec of those datasets' elements (required). `f` runs on the thread that reads the
result; `num_parallel_calls` > 1 reads each open dataset ahead on a dinput thread of its
own, which needs Julia ≥ 1.9 when those datasets have Julia callbacks.
"""
function interleave(f, ds::Dataset, spec; cycle_length::Integer=AUTOTUNE,
                    block_length::Integer=1, num_parallel_calls::Integer=1,
                    deterministic::Union{Nothing,Bool}=nothing)
    _ptr(ds)
    parallel = !(num_parallel_calls in (0, 1))
    return _with_spec(spec) do s
        _with_option_handle(LibDinput.dinput_interleave_options_new,
                            LibDinput.dinput_interleave_options_free) do opts
            check(LibDinput.dinput_interleave_options_set_cycle_length(opts, cycle_length))
            check(LibDinput.dinput_interleave_options_set_block_length(opts, block_length))
            check(LibDinput.dinput_interleave_options_set_num_parallel_calls(opts, num_parallel_calls))
            check(LibDinput.dinput_interleave_options_set_deterministic(
                opts, _deterministic_code(deterministic)))
            data = _register(InterleaveCallback(f, parallel))
            _derive(o -> LibDinput.dinput_dataset_interleave(
                        o, ds, _interleave_fn(), s, data, _free_fn(), opts),
                    ds; callbacks=true)
        end
    end
end
