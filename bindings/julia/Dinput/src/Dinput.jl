"""
    Dinput

Julia binding of dinput: distributed input pipelines for ML training with the semantics of
TensorFlow's `tf.data` and `tf.distribute` distributed input, over dinput's C ABI.

```julia
using Dinput
strategy = Strategy(["CPU:0", "CPU:1"])
dist = distribute_dataset(strategy, batch(Dataset(0:8), 4))   # range(9).batch(4)
for step in dist                                              # one epoch
    println([Array(replica[1]) for replica in step])          # [[0, 1], [2, 3]] ...
end
```

Conventions:

- Every dinput object is a Julia object owning one C handle. It is released by its finalizer,
  or at once with `close(x)` (idempotent; any later use throws a [`DinputError`](@ref) with
  code `:FAILED_PRECONDITION`).
- Failures throw [`DinputError`](@ref) with the status code as a `Symbol` and the library's
  message.
- Tensors keep dinput's dimensions, batch first: `size(Tensor(a)) == size(a)` and `t[i][j]`
  of the C row-major tensor is `Array(t)[i+1, j+1]`. [`batch_last`](@ref) (a copy) and
  [`unsafe_array`](@ref) (zero-copy) give the batch-last order Julia libraries use,
  [`unsafe_batch_first`](@ref) a zero-copy view in dinput's order (see [`Tensor`](@ref)).
- CUDA tensors (from GPU replicas) live in device memory: order a stream after the copy
  that fills them with [`Dinput.cuda_wait`](@ref) before reading them on the GPU (see the
  README, "CUDA tensors").
- Julia callbacks (generators, `map`, `filter`, `interleave`, dataset and value functions,
  `strategy_run`) may be called on dinput's own threads; this needs Julia ≥ 1.9. On older
  Julia the binding refuses the configurations that would do so (see the README, "Threads").

The dinput library is chosen at `using Dinput` (in `__init__`, never at precompile time):
`ENV["JULIA_DINPUT_LIBRARY"]` (or `ENV["DINPUT_LIB"]`), else the package preference
`libdinput`, else `libdinput.so.0`; [`Dinput.library_path`](@ref) says which was loaded.
The raw C functions are in the submodule `Dinput.LibDinput`.
"""
module Dinput

using Libdl
using Random

# tf.data's `skip` and `enumerate` are functions of this module, not methods of Base's (which
# mean other things): declared before anything can refer to Base's, so that every `skip` and
# `enumerate` in this module is Dinput's. Code here that needs Base's writes `Base.skip`.
function skip end
function enumerate end

include("libdinput.jl")

include("errors.jl")
include("handles.jl")
include("tensors.jl")
include("elements.jl")
include("cuda.jl")
include("callbacks.jl")
include("datasets.jl")
include("images.jl")
include("batching.jl")
include("iterators.jl")
include("cluster.jl")
include("distribute.jl")
include("records.jl")
include("examples.jl")
include("combine.jl")
include("statistics.jl")

export DinputError
export Tensor, dtype, unsafe_array, unsafe_batch_first, batch_last
export Element, TensorSpec, element_spec
export Options, auto_shard_policy
export Dataset, cardinality, from_tensors, from_tensor_slices, from_generator, text_lines,
    records, fixed_length_records, list_files, batch, unbatch, take, shard, interleave,
    prefetch, rebatch, with_options, map_many
export decode_jpeg, decode_png, resize, center_crop, random_crop, random_resized_crop,
    random_flip_left_right, cast_image, normalize
export DatasetIterator, DistributedIterator, Optional, iterator, get_next, get_next_as_optional,
    has_value, get_value, statistic, cancel, save_state, iterator_from_state, describe_state
export get_next_steps
export copy_steps!
export Collective, abort!, Strategy, InputOptions, DistributedDataset, PerReplica,
    InputContext, ValueContext, ReplicaContext, distribute_dataset,
    distribute_datasets_from_function, distribute_values_from_function, local_results, tensors,
    strategy_run, strategy_reduce,
    replica_context, per_replica_batch_size, num_replicas_in_sync, num_local_replicas,
    num_workers, worker_index, devices, plan
export RecordWriter, discard
export zip_datasets, concatenate, sample_from_datasets, choose_from_datasets, cache, ignore_errors
export padded_batch, bucket_by_sequence_length, window, flat_map, Reader, records_reader,
    text_lines_reader, fixed_length_records_reader, interleave_reader, flat_map_reader
export Cluster, resolve_cluster
export statistics, trace
export FixedLenFeature, VarLenFeature, FixedLenSequenceFeature, parse_example,
    parse_single_example, parse_sequence_example

"""
    Dinput.version() -> VersionNumber

The version of the loaded dinput library.
"""
version() = VersionNumber(_cstring(LibDinput.dinput_version()))

"""
    Dinput.build_info() -> String

JSON text describing the loaded library's build: version, compiler and, for each optional
component (cuda, nccl, gloo, zstd, zlib), whether it was compiled in and is usable.
"""
build_info() = _cstring(LibDinput.dinput_build_info())

# The binding is written against this version of include/dinput.h.
const HEADER_VERSION = VersionNumber(LibDinput.DINPUT_VERSION_MAJOR,
                                     LibDinput.DINPUT_VERSION_MINOR,
                                     LibDinput.DINPUT_VERSION_PATCH)

"""
    Dinput.library_path() -> String

The path of the dinput library this session uses, chosen when Dinput was loaded: from the
environment variable `JULIA_DINPUT_LIBRARY` (else `DINPUT_LIB`), else the package's
preference `libdinput`, else `libdinput.so.0` found by the dynamic loader (see the README,
"Install"). [`Dinput.library_source`](@ref) says which.
"""
library_path() = LibDinput.LIBRARY_PATH[]

"""
    Dinput.library_source() -> String

Where [`Dinput.library_path`](@ref) came from, in words: "the environment variable
JULIA_DINPUT_LIBRARY", "the preference \"libdinput\" of Dinput" or "the default name".
"""
library_source() = LibDinput.LIBRARY_SOURCE[]

# Loads the library (at `using Dinput`, never at precompile time: see the top of
# libdinput.jl) and refuses one whose version the binding cannot use.
function _load_library()
    lib = LibDinput.load!()
    v = version()
    # Same major version, and at least the minor version whose functions we call.
    if v.major != HEADER_VERSION.major || v.minor < HEADER_VERSION.minor
        error("Dinput $(HEADER_VERSION.major).$(HEADER_VERSION.minor) needs dinput " *
              "$(HEADER_VERSION.major).$(HEADER_VERSION.minor).x or a later minor version; " *
              "\"$lib\" (from $(library_source())) is $v")
    end
    return nothing
end

function __init__()
    _load_library()
    # Iterators may have producer threads that call Julia; stop them before Julia exits.
    atexit(_release_iterators_at_exit)
    return nothing
end

end # module Dinput
