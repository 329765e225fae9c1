# The Julia binding's test suite. Run with the library on JULIA_DINPUT_LIBRARY (or any other
# way the README's "Install" gives):
#   JULIA_DINPUT_LIBRARY=/path/to/libdinput.so.0 julia -t 2 --project=bindings/julia/Dinput \
#       -e 'using Pkg; Pkg.test()'
# With one Julia thread the multi-worker test is skipped; before Julia 1.9 the cases that
# need callbacks on dinput's threads check that the binding refuses them instead.
using Dinput
using Random
using Test

const CPU2 = ["CPU:0", "CPU:1"]

# Component `c` of every replica's element, as arrays.
replica_values(step::PerReplica, c::Int=1) = [Array(e[c]) for e in local_results(step)]

# The exception `f()` throws, or nothing.
caught(f) = try
    f()
    nothing
catch err
    err
end

is_error(err, code::Symbol) = err isa DinputError && err.code == code

@testset "Dinput" begin

@testset "library" begin
    @test Dinput.version() isa VersionNumber
    @test Dinput.version().major == Dinput.HEADER_VERSION.major
    @test occursin("\"version\"", Dinput.build_info())
    for (name, code) in Dinput.STATUS_CODES
        @test Dinput.status_name(code) == name
        @test Dinput.status_code(name) == code
    end
    @test_throws ArgumentError Dinput.status_code(:NOPE)

    # the library was chosen at load time, and the choice is reported
    @test isfile(Dinput.library_path())
    @test Dinput.library_source() in ("the environment variable JULIA_DINPUT_LIBRARY",
                                      "the environment variable DINPUT_LIB",
                                      "the preference \"libdinput\" of Dinput",
                                      "the default name")
    @test Dinput.LibDinput.LIBRARY_HANDLE[] != C_NULL
    # every wrapper's function pointer was resolved
    @test !isempty(Dinput.LibDinput.FUNCTION_NAMES)
    @test all(n -> getfield(Dinput.LibDinput, Symbol(n, :_ptr))[] != C_NULL,
              Dinput.LibDinput.FUNCTION_NAMES)
    # preferences are looked up under the package's own UUID
    @test Base.PkgId(Dinput).uuid == Dinput.LibDinput.PACKAGE_UUID
    # the order of the sources, read when asked (not when the package was precompiled)
    find = Dinput.LibDinput.find_library
    withenv("JULIA_DINPUT_LIBRARY" => "/a/libdinput.so.0", "DINPUT_LIB" => "/b/libdinput.so.0") do
        @test find() == ("/a/libdinput.so.0", "the environment variable JULIA_DINPUT_LIBRARY")
    end
    withenv("JULIA_DINPUT_LIBRARY" => "", "DINPUT_LIB" => "/b/libdinput.so.0") do
        @test find() == ("/b/libdinput.so.0", "the environment variable DINPUT_LIB")
    end
    withenv("JULIA_DINPUT_LIBRARY" => nothing, "DINPUT_LIB" => nothing) do
        library, source = find()
        @test source in ("the preference \"libdinput\" of Dinput", "the default name")
        source == "the default name" && @test library == Dinput.LibDinput.DEFAULT_LIBRARY
    end
end

@testset "tensors" begin
    t = Tensor([1 2 3; 4 5 6])
    @test dtype(t) == :int64
    @test eltype(t) == Int64
    @test size(t) == (2, 3)
    @test size(t, 1) == 2 && size(t, 3) == 1
    @test ndims(t) == 2
    @test length(t) == 6
    @test sizeof(t) == 48
    @test Array(t) == [1 2 3; 4 5 6]
    @test Array{Int64,2}(t) == [1 2 3; 4 5 6]
    # dinput's memory is row-major: C's t[0][1] (2) is the second value, and the zero-copy
    # view has the dimensions reversed.
    GC.@preserve t begin
        raw = unsafe_array(t)
        @test size(raw) == (3, 2)
        @test vec(raw) == [1, 2, 3, 4, 5, 6]
        @test raw[2, 1] == 2
    end
    @test is_error(caught(() -> Array{Float32}(t)), :INVALID_ARGUMENT)
    @test is_error(caught(() -> Array{String}(t)), :INVALID_ARGUMENT)
    @test_throws DimensionMismatch Array{Int64,1}(t)
    @test_throws ArgumentError Array{Int128}(t)

    cube = reshape(collect(Int32, 1:24), 2, 3, 4)
    @test Array(Tensor(cube)) == cube
    @test Array(Tensor(view(cube, :, 2, :))) == cube[:, 2, :]
    for T in (Bool, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64,
              Float16, Float32, Float64)
        v = T[zero(T), one(T)]
        tv = Tensor(v)
        @test eltype(tv) == T
        @test Array(tv) == v
        @test Array{T}(tv) == v
    end
    @test Array(Tensor(BitVector([true, false]))) == [true, false]

    s = Tensor(3.5)
    @test ndims(s) == 0 && size(s) == () && length(s) == 1
    @test s[] == 3.5
    @test_throws ArgumentError t[]

    bf = Tensor(UInt16[0x3f80, 0x4000]; dtype=:bfloat16)
    @test dtype(bf) == :bfloat16
    @test eltype(bf) == UInt16
    @test Array(bf) == UInt16[0x3f80, 0x4000]
    @test is_error(caught(() -> Array{Float32}(bf)), :INVALID_ARGUMENT)
    @test_throws ArgumentError Tensor(Int32[1]; dtype=:float32)
    @test_throws ArgumentError Tensor([1]; dtype=:no_such_dtype)

    strs = Tensor(["a", "bc", "", "d\0e"])
    @test dtype(strs) == :bytes
    @test eltype(strs) == String
    @test size(strs) == (4,)
    @test sizeof(strs) == 6
    @test Array(strs) == ["a", "bc", "", "d\0e"]
    @test Array{Vector{UInt8}}(strs) ==
          [Vector{UInt8}("a"), Vector{UInt8}("bc"), UInt8[], UInt8[0x64, 0x00, 0x65]]
    @test Array(Tensor(["a" "b"; "c" "d"])) == ["a" "b"; "c" "d"]
    @test Tensor("scalar")[] == "scalar"
    @test Array(Tensor([UInt8[1, 2], UInt8[]])) == [String(UInt8[1, 2]), ""]
    @test is_error(caught(() -> Array{Int64}(strs)), :INVALID_ARGUMENT)
    @test_throws ArgumentError unsafe_array(strs)
    @test_throws ArgumentError Tensor(Any[1, 2])

    @test Dinput.device_type(t) == :cpu
    @test Dinput.device_index(t) == -1
    @test Array(Dinput.to_host(t)) == Array(t)
    p = Dinput.unsafe_to_dlpack(Tensor(Float32[1, 2]))
    @test p != C_NULL
    Dinput.dlpack_delete(p)
    @test is_error(caught(() -> Dinput.unsafe_to_dlpack(strs)), :INVALID_ARGUMENT)
    @test occursin("int64", sprint(show, t))

    close(t)
    @test !isopen(t)
    close(t)                                   # idempotent
    @test is_error(caught(() -> size(t)), :FAILED_PRECONDITION)
    @test is_error(caught(() -> Array(t)), :FAILED_PRECONDITION)
    @test sprint(show, t) == "Tensor(<closed>)"
end

@testset "layouts: batch first and batch last" begin
    # three samples of two features, batch first as dinput (and C, TensorFlow) has it
    a = [1 2; 3 4; 5 6]
    t = Tensor(a)
    @test size(t) == (3, 2)
    @test Array(t) == a                                  # batch first, a permuting copy
    bl = batch_last(t)                                   # batch last, a plain copy
    @test bl isa Matrix{Int64}
    @test size(bl) == (2, 3) && bl == permutedims(a)
    @test batch_last(Int64, t) == bl
    @test is_error(caught(() -> batch_last(Float64, t)), :INVALID_ARGUMENT)
    GC.@preserve t begin
        raw = unsafe_array(t)                            # batch last, zero-copy
        @test raw == bl
        v = unsafe_batch_first(t)                        # batch first, zero-copy
        @test v isa PermutedDimsArray
        @test size(v) == size(t) && v == a
        @test v[3, 1] == 5 && v[1, 2] == 2
        @test pointer(parent(v)) == pointer(raw)         # the same memory: nothing copied
    end

    # rank 3: (batch, h, w) in dinput is (w, h, batch) batch last
    cube = reshape(collect(Float32, 1:24), 4, 3, 2)
    tc = Tensor(cube)
    @test size(batch_last(tc)) == (2, 3, 4)
    @test batch_last(tc) == permutedims(cube, (3, 2, 1))
    GC.@preserve tc begin
        @test unsafe_batch_first(tc) == cube
        @test unsafe_array(tc) == batch_last(tc)
    end

    # a tensor from batch-last data (Flux's features × samples): no permutation
    x = reshape(collect(Float32, 1:6), 2, 3)            # 2 features, 3 samples
    tx = Tensor(x; layout=:batch_last)
    @test size(tx) == (3, 2)
    @test batch_last(tx) == x
    @test Array(tx) == permutedims(x)
    @test size(Tensor(x; layout=:batch_first)) == (2, 3)
    @test_throws ArgumentError Tensor(x; layout=:rows)
    # sliced along the batch: one sample (a column of x) per element
    @test [Array(e[1]) for e in from_tensor_slices(tx)] == [x[:, j] for j in 1:3]

    # rank 0 and 1: both orders agree
    @test batch_last(Tensor([1, 2, 3])) == [1, 2, 3]
    @test batch_last(Tensor(7)) == fill(7)
    t1 = Tensor(Int32[4, 5])
    GC.@preserve t1 begin
        @test unsafe_batch_first(t1) == Int32[4, 5]
    end

    # bytes tensors: copies in both orders (no zero-copy view)
    s = Tensor(["a" "b" "c"; "d" "e" "f"])
    @test batch_last(s) == ["a" "d"; "b" "e"; "c" "f"]
    @test Array(Tensor(["a" "d"; "b" "e"; "c" "f"]; layout=:batch_last)) ==
          ["a" "b" "c"; "d" "e" "f"]
    @test_throws ArgumentError unsafe_batch_first(s)

    # a batch from a pipeline: rows of a, two per batch, then batch last for a model
    batches = [batch_last(x[1]) for x in batch(from_tensor_slices(a), 2)]
    @test batches == [[1 3; 2 4], reshape([5, 6], 2, 1)]
end

@testset "CUDA (what runs without a GPU)" begin
    has_gpu = occursin("\"cuda\":{\"compiled\":true,\"available\":true", Dinput.build_info())
    t = Tensor(Int32[1 2; 3 4])
    e = Element(t, 7)
    # On host tensors the waits and record_stream are no-ops, whatever the stream; a made-up
    # handle is never touched.
    for stream in (0, 1, 2, nothing, C_NULL, Ptr{Cvoid}(UInt(0x1234)), (handle=Ptr{Cvoid}(2),))
        @test Dinput.cuda_wait(t, stream) === nothing
        @test Dinput.cuda_record_stream(t, stream) === nothing
        @test Dinput.cuda_wait(e, stream) === nothing
    end
    @test_throws ArgumentError Dinput.cuda_wait(t, -1)
    @test_throws ArgumentError Dinput.cuda_wait(t, "stream")
    @test Dinput.cuda_ready_event(t) == C_NULL
    @test Array(t) == Int32[1 2; 3 4]

    # Pinned tensors need a usable GPU.
    if has_gpu
        p = Tensor(Float32[1.5, 2.5]; pinned=true)
        @test Dinput.device_type(p) == :cuda_host
        @test Array(p) == Float32[1.5, 2.5]
        @test Dinput.device_type(Tensor(3.0; pinned=true)) == :cuda_host
    else
        err = caught(() -> Tensor(Float32[1.5, 2.5]; pinned=true))
        @test is_error(err, :FAILED_PRECONDITION)
        @test occursin("pinned", err.message)
        @test is_error(caught(() -> Tensor(3.0; pinned=true)), :FAILED_PRECONDITION)
    end
    @test Dinput.device_type(Tensor(Float32[1.5]; pinned=false)) == :cpu

    # The device cache.
    before = Dinput.cuda_cache_limit()
    @test before > 0
    for limit in (12345, 0, before)
        @test Dinput.cuda_set_cache_limit(limit) === nothing
        @test Dinput.cuda_cache_limit() == limit
    end
    @test_throws ArgumentError Dinput.cuda_set_cache_limit(-1)
    @test Dinput.cuda_empty_cache() === nothing
    held, cached = Dinput.cuda_pool_bytes(0)
    @test has_gpu ? cached <= held : (held, cached) == (0, 0)
    err = caught(() -> Dinput.cuda_pool_bytes(-1))
    @test is_error(err, :INVALID_ARGUMENT)
    @test occursin("-1", err.message)

    close(t)
    @test is_error(caught(() -> Dinput.cuda_wait(t, 0)), :FAILED_PRECONDITION)
end

@testset "elements and specs" begin
    e = Element([1, 2, 3], 4.0f0, "x")
    @test length(e) == 3
    @test Array(e[1]) == [1, 2, 3]
    @test e[2][] == 4.0f0
    @test e[end][] == "x"
    a, b, c = e
    @test a isa Tensor && dtype(b) == :float32 && dtype(c) == :bytes
    @test_throws BoundsError e[4]
    @test length(Element()) == 0
    shared = Tensor([7])
    e2 = Element((shared, [8]))
    close(shared)                              # the element holds its own reference
    @test Array(e2[1]) == [7]
    e3 = copy(e2)
    close(e2)
    @test Array(e3[2]) == [8]
    @test occursin("Element(", sprint(show, e2))

    @test TensorSpec(Float32, (nothing, 3)) == TensorSpec(:float32, [-1, 3])
    @test TensorSpec(Float32, (nothing, 3)).shape == [Dinput.UNKNOWN_DIM, 3]
    @test TensorSpec(String, ()).dtype == :bytes
    @test TensorSpec(UInt16, (2,)) != TensorSpec(:bfloat16, (2,))
    @test_throws ArgumentError TensorSpec(:nope, ())
    @test sprint(show, TensorSpec(Int64, (nothing,))) == "TensorSpec(:int64, (nothing,))"
end

@testset "datasets" begin
    ds = Dataset(0:5)
    @test cardinality(ds) == 6
    @test element_spec(ds) == [TensorSpec(Int64, ())]
    @test Dinput.name(ds) == "range"
    @test [x[1][] for x in ds] == collect(0:5)
    @test [x[1][] for x in ds] == collect(0:5)                # every loop is a new epoch
    @test [x[1][] for x in Dataset(0:2:8)] == [0, 2, 4, 6, 8]
    @test [x[1][] for x in Dataset(8:-3:0)] == [8, 5, 2]
    @test isempty(collect(Dataset(3:2)))

    b = batch(Dataset(0:8), 4)                                 # range(9).batch(4)
    @test [Array(x[1]) for x in b] == [[0, 1, 2, 3], [4, 5, 6, 7], [8]]
    @test element_spec(b) == [TensorSpec(Int64, (nothing,))]
    @test element_spec(batch(Dataset(0:8), 4; drop_remainder=true)) == [TensorSpec(Int64, (4,))]
    @test [Array(x[1]) for x in batch(Dataset(0:8), 4; drop_remainder=true)] == [0:3, 4:7]
    # Parallel batch assembly gives the same batches; bad settings are :INVALID_ARGUMENT.
    @test [Array(x[1]) for x in batch(Dataset(0:8), 4; num_parallel_calls=3,
                                      deterministic=false)] == [[0, 1, 2, 3], [4, 5, 6, 7], [8]]
    @test_throws DinputError batch(Dataset(0:8), 4; num_parallel_calls=-5)
    # The seed pair: the same pair, the same order; seed2 changes it.
    order(s, s2) = [x[1][] for x in shuffle(Dataset(0:49), 50; seed=s, seed2=s2)]
    @test order(3, 9) == order(3, 9)
    @test order(3, 9) != order(3, 10)
    @test sort(order(3, 9)) == collect(0:49)
    @test [x[1][] for x in unbatch(b)] == collect(0:8)
    @test [Array(x[1]) for x in rebatch(b, [1, 3])] == [[0], [1, 2, 3], [4], [5, 6, 7], [8]]
    @test [x[1][] for x in take(Dinput.skip(Dataset(0:9), 2), 3)] == [2, 3, 4]
    @test [x[1][] for x in shard(Dataset(0:9), 3, 1)] == [1, 4, 7]
    @test [x[1][] for x in repeat(Dataset(0:1), 3)] == [0, 1, 0, 1, 0, 1]
    @test cardinality(repeat(Dataset(0:1))) == Dinput.INFINITE_CARDINALITY
    @test [x[1][] for x in take(repeat(Dataset(0:1)), 5)] == [0, 1, 0, 1, 0]
    @test [x[1][] for x in prefetch(Dataset(0:3), 2)] == [0, 1, 2, 3]

    shuffled = shuffle(Dataset(0:9), 10; seed=7, reshuffle_each_iteration=false)
    order = [x[1][] for x in shuffled]
    @test sort(order) == collect(0:9)
    @test [x[1][] for x in shuffled] == order

    en = Dinput.enumerate(Dataset(10:12); start=5)
    @test [(i[], x[]) for (i, x) in en] == [(5, 10), (6, 11), (7, 12)]
    # Base.enumerate keeps its meaning on datasets: (1, element), (2, element), ...
    @test [(i, x[1][]) for (i, x) in enumerate(Dataset(10:12))] == [(1, 10), (2, 11), (3, 12)]
    # tf.data's skip, enumerate, run and reduce are Dinput's own functions: no method of
    # Base's functions of those names (which mean other things) comes from Dinput
    for f in (Base.skip, Base.enumerate, Base.run, Base.reduce)
        @test !any(m -> m.module === Dinput, methods(f))
    end

    ft = from_tensors(Float32[1], Float32[1])                  # from_tensors(([1.], [1.]))
    @test cardinality(ft) == 1
    @test [(Array(x[1]), Array(x[2])) for x in ft] == [(Float32[1], Float32[1])]
    sl = from_tensor_slices([1 2; 3 4], ["a", "b"])            # rows, with a label each
    @test [(Array(x[1]), x[2][]) for x in sl] == [([1, 2], "a"), ([3, 4], "b")]
    @test [x[1][] for x in from_tensor_slices([1, 2, 3, 4])] == [1, 2, 3, 4]

    opts = Options(auto_shard_policy=:off)
    @test auto_shard_policy(opts) == :off
    @test auto_shard_policy(Options()) == :auto
    @test_throws ArgumentError Options(auto_shard_policy=:sideways)
    @test [x[1][] for x in with_options(Dataset(0:2); auto_shard_policy=:data)] == [0, 1, 2]
    @test occursin("batch", sprint(show, b))
end

@testset "iterators" begin
    ds = Dataset(0:1)
    iterator(ds) do it
        @test get_next(it)[1][] == 0
        @test get_next(it)[1][] == 1
        @test is_error(caught(() -> get_next(it)), :OUT_OF_RANGE)
        @test is_error(caught(() -> get_next(it)), :OUT_OF_RANGE)   # and on every later call
    end
    it = iterator(ds)
    o = get_next_as_optional(it)
    @test has_value(o)
    @test get_value(o)[1][] == 0
    @test [x[1][] for x in it] == [1]                          # the rest of this epoch
    o = get_next_as_optional(it)
    @test !has_value(o)
    @test is_error(caught(() -> get_value(o)), :INVALID_ARGUMENT)
    @test element_spec(it) == [TensorSpec(Int64, ())]
    @test statistic(it, "records") == 0
    @test is_error(caught(() -> statistic(it, "nope")), :NOT_FOUND)
    close(it)
    close(it)
    @test is_error(caught(() -> get_next(it)), :FAILED_PRECONDITION)

    # cancel: from another task while get_next waits on a slow prefetched map
    release = Threads.Atomic{Bool}(false)
    slow = prefetch(map(x -> (while !release[]; sleep(0.001); end; x), Dataset(0:9)), 1)
    it = iterator(slow)
    waiting = Threads.@spawn caught(() -> get_next(it))
    sleep(0.05)
    @test cancel(it) === it
    @test is_error(fetch(waiting), :CANCELLED)
    @test is_error(caught(() -> get_next(it)), :CANCELLED)    # and on every later call
    cancel(it)                                                  # idempotent
    close(it)                                                   # does not wait for the map
    release[] = true
    @test cancel(it) === it                                     # a closed iterator: nothing to do
end

@testset "checkpoints" begin
    pipeline(buffer) = batch(shuffle(Dataset(0:29), buffer; seed=3), 4)
    values(it, n) = [Array(x[1]) for x in Iterators.take(it, n)]
    want = values(iterator(pipeline(6)), 100)
    @test length(want) == 8
    for steps in 0:length(want)
        it = iterator(pipeline(6))
        got = values(it, steps)
        state = save_state(it)
        close(it)
        @test state isa Vector{UInt8}
        append!(got, values(iterator_from_state(pipeline(6), state), 100))
        @test got == want
    end
    it = iterator(pipeline(6))
    get_next(it)
    state = save_state(it)
    err = caught(() -> iterator_from_state(pipeline(60), state))
    @test is_error(err, :FAILED_PRECONDITION)
    @test occursin("shuffle(buffer_size=6", sprint(showerror, err))
    @test is_error(caught(() -> iterator_from_state(pipeline(6), state[1:end-1])), :DATA_LOSS)
    flipped = copy(state)
    flipped[30] ⊻= 0x10
    @test is_error(caught(() -> iterator_from_state(pipeline(6), flipped)), :DATA_LOSS)
    # A generator has no save and restore callbacks.
    generated = from_generator(() -> [Int64[1]], TensorSpec(Int64, (1,)))
    err = caught(() -> save_state(iterator(generated)))
    @test is_error(err, :UNIMPLEMENTED)
    @test occursin("from_generator", sprint(showerror, err))
end

@testset "generator with save and restore" begin
    # A range's iteration state is the last value returned.
    gen = from_generator(() -> 0:9, TensorSpec(Int64, ());
                         save=(it, s) -> Vector{UInt8}(string(s === nothing ? -1 : s)),
                         restore=(it, b) -> (v = parse(Int, String(b)); v < 0 ? nothing : v))
    ds = batch(gen, 3)
    want = [Array(x[1]) for x in iterator(ds)]
    for steps in 0:length(want)
        it = iterator(ds)
        got = [Array(get_next(it)[1]) for _ in 1:steps]
        state = save_state(it)
        append!(got, [Array(x[1]) for x in iterator_from_state(ds, state)])
        @test got == want
    end
    @test_throws ArgumentError from_generator(() -> 0:9, TensorSpec(Int64, ()); save=(i, s) -> UInt8[])
end

@testset "distributed checkpoints" begin
    dist(buffer) = distribute_dataset(Strategy(["CPU:0", "CPU:1"]),
                                      batch(shuffle(Dataset(0:29), buffer; seed=3), 4))
    steps(it) = [[Array(r[1]) for r in step] for step in it]
    for at in 0:8
        it = iterator(dist(6))
        for _ in 1:at
            get_next(it)
        end
        state = save_state(it)
        @test state isa Vector{UInt8}
        want = steps(it)
        @test steps(iterator_from_state(dist(6), state)) == want
    end
    it = iterator(dist(6))
    get_next(it)
    state = save_state(it)
    @test is_error(caught(() -> iterator_from_state(dist(60), state)), :FAILED_PRECONDITION)
    @test is_error(caught(() -> iterator_from_state(dist(6), state[1:end-1])), :DATA_LOSS)
    @test occursin("\"step\":1", describe_state(state))
    @test is_error(caught(() -> describe_state(state[1:10])), :DATA_LOSS)
end

@testset "from_generator" begin
    spec = TensorSpec(Float32, (4,))
    calls = Ref(0)
    ds = from_generator(spec) do
        calls[] += 1
        (fill(Float32(i), 4) for i in 1:3)
    end
    @test element_spec(ds) == [spec]
    @test [Array(x[1]) for x in ds] == [fill(Float32(i), 4) for i in 1:3]
    @test length(collect(ds)) == 3
    @test calls[] == 2                                         # once per epoch

    pairs = from_generator([(1, "one"), (2, "two")],
                           (TensorSpec(Int64, ()), TensorSpec(String, ())))
    @test [(x[1][], x[2][]) for x in pairs] == [(1, "one"), (2, "two")]

    wrong = from_generator(() -> [Float64[1, 2]], spec)       # float64 [2] against float32 [4]
    @test is_error(caught(() -> collect(wrong)), :INVALID_ARGUMENT)

    failing = from_generator(spec) do
        (i < 2 ? zeros(Float32, 4) : error("generator broke at $i") for i in 1:3)
    end
    err = caught(() -> collect(failing))
    @test err isa DinputError
    @test occursin("generator broke at 2", err.message)
end

@testset "map and filter" begin
    doubled = map(x -> 2 * x[1][], Dataset(0:4))
    @test [x[1][] for x in doubled] == [0, 2, 4, 6, 8]
    halves = map(x -> (x[1][], Float32(x[1][]) / 2), Dataset(1:2);
                 spec=(TensorSpec(Int64, ()), TensorSpec(Float32, ())))
    @test [(x[1][], x[2][]) for x in halves] == [(1, 0.5f0), (2, 1.0f0)]
    @test [x[1][] for x in map(identity, Dataset(0:2))] == [0, 1, 2]
    kept = filter(x -> iseven(x[1][]), Dataset(0:9))
    @test [x[1][] for x in kept] == [0, 2, 4, 6, 8]

    # a callback that throws: the pipeline fails with its message
    bad = map(x -> x[1][] < 1 ? x : error("boom at $(x[1][])"), Dataset(0:3))
    err = caught(() -> collect(bad))
    @test err isa DinputError
    @test err.code == :UNKNOWN
    @test occursin("boom at 1", err.message)
    @test is_error(caught(() -> collect(filter(x -> 1, Dataset(0:2)))), :INVALID_ARGUMENT)
    rethrown = map(x -> throw(DinputError(:DATA_LOSS, "custom failure")), Dataset(0:1))
    err = caught(() -> collect(rethrown))
    @test is_error(err, :DATA_LOSS) && occursin("custom failure", err.message)
    # OUT_OF_RANGE from a callback (an inner iterator that ran out) is an error, not the end
    ran_out = map(x -> x[1][] < 2 ? x : throw(DinputError(:OUT_OF_RANGE, "inner ran out")), Dataset(0:5))
    err = caught(() -> collect(ran_out))
    @test is_error(err, :INVALID_ARGUMENT)
    @test occursin("map callback returned OUT_OF_RANGE", err.message) && occursin("inner ran out", err.message)
    mismatch = map(x -> 1.5, Dataset(0:1); spec=TensorSpec(Int64, ()))
    @test is_error(caught(() -> collect(mismatch)), :INVALID_ARGUMENT)

    # map_many: runs of up to max_count, the same results as map
    runs = Int[]
    negated = map_many(xs -> (push!(runs, length(xs)); [-x[1][] for x in xs]), Dataset(0:39), 7)
    @test [x[1][] for x in negated] == [-i for i in 0:39]
    @test runs == [7, 7, 7, 7, 7, 5]
    @test [x[1][] for x in map_many(identity, Dataset(0:4), 2)] == collect(0:4)
    refused = map_many(xs -> any(x -> x[1][] == 20, xs) ? error("run refused") : xs, Dataset(0:39), 8)
    it = iterator(refused)
    @test all(_ -> get_next(it) !== nothing, 1:16)
    @test occursin("run refused", caught(() -> get_next(it)).message)
    @test is_error(caught(() -> collect(map_many(xs -> xs[2:end], Dataset(0:3), 4))), :INVALID_ARGUMENT)
    @test_throws ArgumentError map_many(identity, Dataset(0:3), 0)

    # the element passed to a callback is valid during the call only
    saved = Ref{Any}(nothing)
    kept = Ref{Any}(nothing)
    collect(map(x -> (saved[] = x; kept[] = copy(x); x), Dataset(5:5)))
    @test is_error(caught(() -> length(saved[])), :FAILED_PRECONDITION)
    @test kept[][1][] == 5                     # copy(x) is a handle of its own

    if Dinput.FOREIGN_THREAD_CALLBACKS
        parallel = map(x -> x[1][] + 1, Dataset(0:99); num_parallel_calls=4)
        @test [x[1][] for x in parallel] == collect(1:100)
        ahead = prefetch(map(x -> x[1][] * 3, Dataset(0:9)), 2)
        @test [x[1][] for x in ahead] == collect(0:3:27)
    else
        @test is_error(caught(() -> map(x -> x, Dataset(0:1); num_parallel_calls=2)),
                       :UNIMPLEMENTED)
        @test is_error(caught(() -> prefetch(map(x -> x, Dataset(0:1)))), :UNIMPLEMENTED)
    end
end

@testset "distribute_dataset" begin
    strategy = Strategy(CPU2)
    @test num_replicas_in_sync(strategy) == 2
    @test num_local_replicas(strategy) == 2
    @test num_workers(strategy) == 1
    @test worker_index(strategy) == 0
    @test devices(strategy) == CPU2
    @test devices(Strategy()) == ["CPU:0"]
    @test is_error(caught(() -> Strategy(["CPU:0", "CPU:0"])), :INVALID_ARGUMENT)

    # range(6).batch(4) on 2 replicas: [0,1] | [2,3] ; [4] | [5]
    dist = distribute_dataset(strategy, batch(Dataset(0:5), 4))
    @test [replica_values(step) for step in dist] == [[[0, 1], [2, 3]], [[4], [5]]]
    @test [replica_values(step) for step in dist] == [[[0, 1], [2, 3]], [[4], [5]]]

    # range(9).batch(4) with get_next_as_optional: the loop stops at the empty optional
    dist = distribute_dataset(strategy, batch(Dataset(0:8), 4))
    steps = []
    iterator(dist) do it
        for _ in 1:5
            optional = get_next_as_optional(it)
            has_value(optional) || break
            push!(steps, replica_values(get_value(optional)))
        end
        @test is_error(caught(() -> get_next(it)), :OUT_OF_RANGE)
    end
    @test steps == [[[0, 1], [2, 3]], [[4, 5], [6, 7]], [[8], Int[]]]
    @test occursin("\"policy\":\"DATA\"", plan(dist))

    # get_next_steps: several steps per call, then OUT_OF_RANGE alone; a save after a call
    # restores after its last step
    iterator(dist) do it
        @test [replica_values(s) for s in get_next_steps(it, 2)] == steps[1:2]
        state = save_state(it)
        @test [replica_values(s) for s in get_next_steps(it, 5)] == steps[3:3]
        @test is_error(caught(() -> get_next_steps(it, 5)), :OUT_OF_RANGE)
        again = iterator_from_state(dist, state)
        @test [replica_values(s) for s in get_next_steps(again, 5)] == steps[3:3]
    end

    # copy_steps!: the full steps copied into one buffer (2 replicas of Int64[2], dinput's
    # layout), the short last one handed out after them; a buffer too small takes no step
    iterator(dist) do it
        buf = fill(Int64(-1), 2 * 2 * 4)
        n, unfit = copy_steps!(buf, it, [2], 4)
        @test n == 2
        @test [[buf[1:2], buf[3:4]], [buf[5:6], buf[7:8]]] == steps[1:2]
        @test replica_values(unfit) == steps[3]
        @test is_error(caught(() -> copy_steps!(buf, it, [2], 4)), :OUT_OF_RANGE)
        @test is_error(caught(() -> copy_steps!(zeros(Int64, 3), iterator(dist), [2], 1)),
                       :INVALID_ARGUMENT)
    end

    # partial batches: range(9).batch(4) on 4 replicas
    dist4 = distribute_dataset(Strategy(["CPU:$i" for i in 0:3]), batch(Dataset(0:8), 4))
    steps = collect(dist4)
    @test length(steps) == 3
    @test replica_values(steps[2]) == [[4], [5], [6], [7]]
    @test replica_values(steps[3]) == [[8], Int[], Int[], Int[]]
    @test [size(e[1]) for e in local_results(steps[3])] == [(1,), (0,), (0,), (0,)]

    @test element_spec(distribute_dataset(strategy, batch(Dataset(0:9), 2))) ==
          [TensorSpec(Int64, (nothing,))]
    scalars = caught(() -> collect(distribute_dataset(strategy, Dataset(0:3))))
    @test is_error(scalars, :INVALID_ARGUMENT)

    # the balanced split of the OFF policy
    off = with_options(batch(Dataset(0:7), 4); auto_shard_policy=:off)
    dist3 = distribute_dataset(Strategy(["CPU:0", "CPU:1", "CPU:2"]), off)
    @test [replica_values(s) for s in dist3] == [[[0, 1], [2], [3]], [[4, 5], [6], [7]]]
    @test occursin("\"split\":\"balanced\"", plan(dist3))

    # two components: from_tensors(([1.], [1.])).repeat(100).batch(16) on 2 replicas
    pairs = batch(repeat(from_tensors(Float32[1], Float32[1]), 100), 16)
    shapes = [[(size(e[1]), size(e[2])) for e in local_results(s)]
              for s in distribute_dataset(strategy, pairs)]
    @test length(shapes) == 7
    @test shapes[1] == [((8, 1), (8, 1)), ((8, 1), (8, 1))]
    @test shapes[7] == [((2, 1), (2, 1)), ((2, 1), (2, 1))]

    # tensors: every component of every replica in one call, replica by replica
    flat = tensors(first(distribute_dataset(strategy, pairs)))
    @test [size(t) for t in flat] == [(8, 1), (8, 1), (8, 1), (8, 1)]
    wide = Element([Int64[i, 10i] for i in 1:10]...)   # more than the first call's room
    @test [Array(t) for t in tensors(wide)] == [Int64[i, 10i] for i in 1:10]
    ragged = PerReplica([Element(Int64[1], Int64[2]), Element(Int64[3])])
    @test is_error(caught(() -> tensors(ragged)), :INVALID_ARGUMENT)

    if Dinput.FOREIGN_THREAD_CALLBACKS
        mapped = batch(map(x -> x[1][] > 2 ? error("late failure") : x, Dataset(0:7)), 2)
        err = caught(() -> collect(distribute_dataset(strategy, mapped)))
        @test err isa DinputError && occursin("late failure", err.message)
        gen = from_generator(() -> ([i, i + 1] for i in 0:2:6), TensorSpec(Int64, (2,)))
        @test [replica_values(s) for s in distribute_dataset(strategy, gen)] ==
              [[[0], [1]], [[2], [3]], [[4], [5]], [[6], [7]]]
    else
        mapped = map(identity, Dataset(0:1))
        @test is_error(caught(() -> distribute_dataset(strategy, mapped)), :UNIMPLEMENTED)
    end
end

@testset "restore order" begin
    # range(24).enumerate().batch(6): strategy_run doubles the values, the index restores
    # the order
    strategy = Strategy(CPU2)
    dist = distribute_dataset(strategy, batch(Dinput.enumerate(Dataset(0:23)), 6))
    predict(x) = (Array(x[1]), 2 .* Array(x[2]))
    result = Dict{Int,Int}()
    for step in dist
        outputs = if Dinput.FOREIGN_THREAD_CALLBACKS
            strategy_run(predict, strategy, step)
        else
            PerReplica([predict(x) for x in local_results(step)])
        end
        for e in local_results(outputs)
            for (i, v) in zip(Array(e[1]), Array(e[2]))
                result[i] = v
            end
        end
    end
    @test result == Dict(i => 2i for i in 0:23)
end

@testset "distribute_datasets_from_function" begin
    strategy = Strategy(CPU2)
    contexts = InputContext[]
    dist = distribute_datasets_from_function(strategy) do ctx
        push!(contexts, ctx)
        per_replica = per_replica_batch_size(ctx, 16)
        ds = batch(repeat(from_tensors(Float32[1], Float32[1]), 64), 16)
        ds = shard(ds, ctx.num_input_pipelines, ctx.input_pipeline_id)
        prefetch(batch(ds, per_replica), 2)
    end
    @test length(contexts) == 1
    ctx = contexts[1]
    @test (ctx.num_input_pipelines, ctx.input_pipeline_id, ctx.num_replicas_in_sync) == (1, 0, 2)
    @test is_error(caught(() -> per_replica_batch_size(ctx, 16)), :FAILED_PRECONDITION)
    steps = collect(dist)
    @test length(steps) == 1
    @test [size(e[1]) for e in local_results(steps[1])] == [(4, 16, 1), (0, 0, 1)]
    @test occursin("\"policy\":\"NONE\"", plan(dist))

    indivisible(ctx) = batch(Dataset(0:1), per_replica_batch_size(ctx, 3))    # 3 over 2 replicas
    err = caught(() -> distribute_datasets_from_function(indivisible, strategy))
    @test is_error(err, :INVALID_ARGUMENT) && occursin("divisible", err.message)
    not_a_dataset = caught(() -> distribute_datasets_from_function(ctx -> 42, strategy))
    @test is_error(not_a_dataset, :INVALID_ARGUMENT)

    # per_replica_buffer_size=0 reads on the caller's thread: Julia generators work everywhere
    unbuffered = InputOptions(per_replica_buffer_size=0)
    @test unbuffered.per_replica_buffer_size == 0
    gen = distribute_datasets_from_function(strategy; options=unbuffered) do ctx
        from_generator(() -> ([i, i + 1] for i in 0:2:6), TensorSpec(Int64, (2,)))
    end
    @test [replica_values(s) for s in gen] == [[[0, 1], [2, 3]], [[4, 5], [6, 7]]]
    @test_throws ArgumentError InputOptions(replication_mode=:per_thread)
    @test is_error(caught(() -> InputOptions(per_replica_buffer_size=-1)), :INVALID_ARGUMENT)
end

@testset "distribute_values_from_function, strategy_run and strategy_reduce" begin
    strategy = Strategy(CPU2)
    ids = distribute_values_from_function(ctx -> Float32(ctx.replica_id_in_sync_group), strategy)
    @test [e[1][] for e in local_results(ids)] == [0.0f0, 1.0f0]
    sizes = distribute_values_from_function(ctx -> ctx.num_replicas_in_sync, strategy)
    @test [e[1][] for e in sizes] == [2, 2]
    one_each = distribute_values_from_function(_ -> 1.0f0, strategy)
    @test length(one_each) == 2

    @test strategy_reduce(:sum, strategy, one_each)[1][] == 2.0f0
    @test Float64(strategy_reduce(:mean, strategy, one_each)[1][]) ≈ 1.0
    @test is_error(caught(() -> strategy_reduce(:sum, strategy, one_each; dims=1)),
                   :INVALID_ARGUMENT)
    @test_throws ArgumentError strategy_reduce(:max, strategy, one_each)
    @test is_error(caught(replica_context), :FAILED_PRECONDITION)

    single = Strategy()
    doubled = strategy_run(x -> 2 * x[1][], single,
                           distribute_values_from_function(_ -> 21, single))
    @test [e[1][] for e in doubled] == [42]

    if Dinput.FOREIGN_THREAD_CALLBACKS
        for _ in 1:4
            @test [e[1][] for e in strategy_run(x -> x, strategy, one_each)] == [1.0f0, 1.0f0]
        end
        placed = strategy_run(strategy) do
            ctx = replica_context()
            (ctx.replica_id_in_sync_group, ctx.device)
        end
        @test [(e[1][], e[2][]) for e in placed] == [(0, "CPU:0"), (1, "CPU:1")]
        losses = strategy_run(() -> 0.1f0, strategy)           # 0.1 per replica, summed: 0.2
        @test strategy_reduce(:sum, strategy, losses)[1][] ≈ 0.2f0
        err = caught(() -> strategy_run(x -> error("replica failed"), strategy, one_each))
        @test err isa DinputError && occursin("replica failed", err.message)
    else
        @test is_error(caught(() -> strategy_run(x -> x, strategy, one_each)), :UNIMPLEMENTED)
    end
end

@testset "multi-worker" begin
    collective = Collective(2; timeout_ms=5000)
    @test num_workers(collective) == 2
    @test is_error(caught(() -> Strategy(collective, 0; num_replicas_in_sync=3)), :INVALID_ARGUMENT)
    if Threads.nthreads() >= 2
        # W=2, R=1, range(9).batch(2), DATA: w0 [0];[2];[4];[6];[8] || w1 [1];[3];[5];[7];[]
        tasks = map(0:1) do w
            Threads.@spawn begin
                s = Strategy(collective, w; num_replicas_in_sync=2)
                @assert num_workers(s) == 2 && worker_index(s) == w
                [replica_values(step) for step in distribute_dataset(s, batch(Dataset(0:8), 2))]
            end
        end
        results = fetch.(tasks)
        @test results[1] == [[[0]], [[2]], [[4]], [[6]], [[8]]]
        @test results[2] == [[[1]], [[3]], [[5]], [[7]], [Int[]]]
    else
        @info "multi-worker iteration skipped: it needs 2 Julia threads (julia -t 2)"
    end
    # a worker that cannot continue releases the others at once
    lonely = Collective(2; timeout_ms=5000)
    s0 = Strategy(lonely, 0; num_replicas_in_sync=2)
    abort!(lonely, :ABORTED, "worker 1 cannot continue")
    err = caught(() -> collect(distribute_dataset(s0, batch(Dataset(0:8), 2))))
    @test is_error(err, :ABORTED) && occursin("cannot continue", err.message)
end

@testset "clusters" begin
    c = Cluster(1, 4, "tcp://127.0.0.1:5000")
    @test Dinput.rank(c) == 1 && Dinput.world_size(c) == 4
    @test Dinput.rdzv_url(c) == "tcp://127.0.0.1:5000" && Dinput.coordinator_host(c) == "127.0.0.1"
    @test Dinput.source(c) == "explicit" && Dinput.local_rank(c) == -1 && Dinput.is_input_worker(c)
    @test is_error(caught(() -> Cluster(4, 4)), :INVALID_ARGUMENT)
    withenv("TF_CONFIG" => """{"cluster": {"chief": ["c:1"], "worker": ["w:1"], "ps": ["p:1"]},
                               "task": {"type": "ps", "index": 0}}""") do
        ps = resolve_cluster()
        @test Dinput.task_type(ps) == "ps" && Dinput.task_index(ps) == 0
        @test !Dinput.is_input_worker(ps) && Dinput.world_size(ps) == 2
    end
    # a worker of two on 127.0.0.1, meeting in a directory of this host's own file system:
    # allowed, it waits for worker 1, who never comes; an interface this host lacks is named
    mktempdir() do dir
        two = Cluster(0, 2, "file://" * dir)
        err = caught(() -> Collective(two; timeout_ms=300, address="127.0.0.1"))
        if occursin("\"gloo\":{\"compiled\":true", Dinput.build_info())
            @test is_error(err, :DEADLINE_EXCEEDED) && occursin("for worker 1", err.message)
            err = caught(() -> Collective(two; timeout_ms=300, interface="no-such-if0",
                                          allow_loopback=true))
            @test is_error(err, :INVALID_ARGUMENT) && occursin("no-such-if0", err.message)
        else
            @test is_error(err, :UNIMPLEMENTED)
        end
    end
end

@testset "record files" begin
    mktempdir() do dir
        path = joinpath(dir, "data.tfrecord")
        RecordWriter(path) do w
            @test write(w, "first record") == 12
            @test write(w, UInt8[1, 2, 3]) == 3
            write(w, "")
            flush(w)
        end
        ds = records(path)
        @test [x[1][] for x in ds] == ["first record", "\x01\x02\x03", ""]
        iterator(ds) do it
            @test length(collect(it)) == 3
            @test statistic(it, "records") == 3
        end
        # a failing do-block and discard leave the existing file as it was
        @test_throws ErrorException RecordWriter(path) do w
            write(w, "never seen")
            error("the source turned out to be damaged")
        end
        w = RecordWriter(path)
        write(w, "never seen either")
        discard(w)
        @test [x[1][] for x in records(path)] == ["first record", "\x01\x02\x03", ""]
        @test is_error(caught(() -> collect(with_options(records(path); max_record_bytes=11))),
                       :DATA_LOSS)
        w = RecordWriter(path)
        close(w)
        close(w)
        @test is_error(caught(() -> write(w, "late")), :FAILED_PRECONDITION)
        if occursin("\"zstd\":{\"compiled\":true,\"available\":true", Dinput.build_info())
            zpath = joinpath(dir, "data.tfrecord.zst")
            RecordWriter(w -> write(w, "compressed"), zpath; compression=:zstd)
            @test [x[1][] for x in records(zpath; compression=:zstd)] == ["compressed"]
        end

        text = joinpath(dir, "lines.txt")
        write(text, "alpha\r\nbeta\ngamma")
        @test [x[1][] for x in text_lines(text)] == ["alpha", "beta", "gamma"]
        @test is_error(caught(() -> collect(text_lines(joinpath(dir, "missing.txt")))), :NOT_FOUND)

        fixed = joinpath(dir, "fixed.bin")
        write(fixed, "HDRabcdefFT")
        @test [x[1][] for x in fixed_length_records(fixed, 3; header_bytes=3, footer_bytes=2)] ==
              ["abc", "def"]

        @test [basename(x[1][]) for x in list_files(joinpath(dir, "*.txt"))] == ["lines.txt"]
        @test is_error(caught(() -> list_files(joinpath(dir, "*.none"))), :NOT_FOUND)
        names = list_files(joinpath(dir, "*.txt"))
        lines = interleave(names, TensorSpec(String, ()); cycle_length=1) do x
            text_lines(x[1][])
        end
        @test [x[1][] for x in lines] == ["alpha", "beta", "gamma"]
    end
end

@testset "padded_batch, buckets, window, flat_map and readers" begin
    fills = map(Dataset(1:4); spec=TensorSpec(Int64, (nothing,))) do x
        v = x[1][]
        (fill(v, v),)
    end
    @test [Array(x[1]) for x in padded_batch(fills, 2)] == [[1 0; 2 2], [3 3 3 0; 4 4 4 4]]
    padded = padded_batch(fills, 2; padded_shapes=[(5,)], padding_values=(-1,))
    @test Array(first(padded)[1]) == [1 -1 -1 -1 -1; 2 2 -1 -1 -1]
    @test is_error(caught(() -> collect(padded_batch(fills, 2; padded_shapes=[(2,)]))),
                   :INVALID_ARGUMENT)
    buckets = bucket_by_sequence_length(fills, 1, [3], [2, 2])
    @test [Array(x[1]) for x in buckets] == [[1 0; 2 2], [3 3 3 0; 4 4 4 4]]
    by_mod3 = bucket_by_sequence_length(x -> x[1][] % 3, Dataset(0:7), [1, 2], [2, 2, 2])
    @test [Array(x[1]) for x in by_mod3] == [[0, 3], [1, 4], [2, 5], [6], [7]]
    @test is_error(caught(() -> collect(bucket_by_sequence_length(x -> -1, Dataset(0:1), [1],
                                                                   [1, 1]))), :INVALID_ARGUMENT)
    @test [Array(x[1]) for x in window(Dataset(0:6), 3; stride=2)] == [[0, 2, 4], [3, 5], [6]]
    flat = flat_map(Dataset(1:3), TensorSpec(Int64, ())) do x
        v = x[1][]
        Dataset((10v):(10v + v - 1))
    end
    @test [x[1][] for x in flat] == [10, 20, 21, 30, 31, 32]
    mktempdir() do dir
        write(joinpath(dir, "a.txt"), "ax\nay\n")
        write(joinpath(dir, "b.txt"), "bx\nby\n")
        names = list_files(joinpath(dir, "*.txt"))
        @test [x[1][] for x in interleave_reader(names, text_lines_reader(); cycle_length=2)] ==
              ["ax", "bx", "ay", "by"]
        @test [x[1][] for x in flat_map_reader(names, fixed_length_records_reader(3))] ==
              ["ax\n", "ay\n", "bx\n", "by\n"]
        @test is_error(caught(() -> flat_map_reader(names, fixed_length_records_reader(0))),
                       :INVALID_ARGUMENT)
        @test is_error(caught(() -> interleave_reader(Dataset(0:2), records_reader())),
                       :INVALID_ARGUMENT)
    end
end

@testset "errors and lifetimes" begin
    err = caught(() -> batch(Dataset(0:5), 0))
    @test err isa DinputError
    @test err.code == :INVALID_ARGUMENT
    @test occursin("batch", err.message)
    @test sprint(showerror, err) == "DinputError(:INVALID_ARGUMENT): " * err.message

    ds = Dataset(0:3)
    close(ds)
    @test !isopen(ds)
    close(ds)
    @test is_error(caught(() -> cardinality(ds)), :FAILED_PRECONDITION)
    @test is_error(caught(() -> batch(ds, 2)), :FAILED_PRECONDITION)
    @test is_error(caught(() -> collect(ds)), :FAILED_PRECONDITION)
    @test is_error(caught(() -> map(identity, ds)), :FAILED_PRECONDITION)
    @test sprint(show, ds) == "Dataset(<closed>)"

    base = Dataset(0:3)
    pairs = batch(base, 2)
    close(base)                                 # what was made from it stays valid
    @test [Array(x[1]) for x in pairs] == [[0, 1], [2, 3]]

    @test Dinput.with(s -> num_replicas_in_sync(s), Strategy(CPU2)) == 2
    kept = Strategy(CPU2)
    Dinput.with(kept) do s
        @test isopen(s)
    end
    @test !isopen(kept)

    # iterators left to the garbage collector are freed when the next one is made
    ahead = prefetch(Dataset(0:999), 8)
    for _ in 1:20
        for x in ahead
            break
        end
    end
    GC.gc()
    GC.gc()
    @test [x[1][] for x in take(ahead, 3)] == [0, 1, 2]
    @test isempty(Dinput.PENDING_FREES)
end

@testset "parse_example" begin
    # Example{features{feature{"id": int64_list{value: [v]}}}}, written by hand.
    field(n, payload) = vcat(UInt8[n << 3 | 2, length(payload)], payload)
    record(v) = field(1, field(1, vcat(field(1, Vector{UInt8}("id")),
                                       field(2, field(3, field(1, UInt8[v]))))))
    src = from_tensor_slices(Element(Tensor([String(record(v)) for v in (5, 6, 7)])))
    batched = parse_example(batch(src, 2), Dict("id" => FixedLenFeature((), Int64)))
    @test [Array(x[1]) for x in batched] == [[5, 6], [7]]
    single = parse_single_example(src, ["id" => VarLenFeature(Int64)])
    @test [Array(x[1]) for x in single] == [[5], [6], [7]]
    @test_throws DinputError parse_example(src, Dict("id" => FixedLenFeature((), Int64)))
end

@testset "images" begin
    img = fill(UInt8(6), 2, 3, 1)          # every pixel 6, so the layout does not matter
    norm = normalize(from_tensors(img), [2.0], [4.0]; num_parallel_calls=2)
    @test element_spec(norm) == [TensorSpec(Float32, (2, 3, 1))]
    @test all(Array(x[1]) == fill(1.0f0, 2, 3, 1) for x in norm)
    @test element_spec(resize(from_tensors(img), (4, 5))) == [TensorSpec(Float32, (4, 5, 1))]
    flips(s) = [Array(x[1]) for x in random_flip_left_right(repeat(from_tensors(img), 4); seed=s)]
    @test flips(3) == flips(3)
    @test_throws DinputError center_crop(from_tensors(img), (0, 1))
    @test_throws DinputError decode_jpeg(from_tensors(img))     # not a bytes component
    garbage = decode_jpeg(from_tensors("garbage"); channels=3)
    err = try
        collect(garbage)
        nothing
    catch e
        e
    end
    @test err isa DinputError && occursin("element 0", sprint(showerror, err))
end

@testset "several datasets, cache and ignore_errors" begin
    z = zip_datasets(Dataset(1:3), Dataset(4:6))
    @test cardinality(z) == 3
    @test [(x[1][], x[2][]) for x in z] == [(1, 4), (2, 5), (3, 6)]
    @test [x[1][] for x in concatenate(Dataset(1:3), Dataset(4:7))] == collect(1:7)
    a, b = Dataset(0:19), Dataset(100:119)
    picks(s) = [x[1][] for x in sample_from_datasets([a, b]; weights=[1, 1], seed=s)]
    @test picks(5) == picks(5)
    @test sort(picks(5)) == vcat(0:19, 100:119)
    @test_throws ArgumentError sample_from_datasets([a, b]; weights=[1])
    sel = from_tensor_slices(Element(Tensor(Int64[1, 0, 1])))
    @test [x[1][] for x in choose_from_datasets([a, b], sel)] == [100, 0, 101]
    calls = Ref(0)
    failing = map(Dataset(0:6)) do x
        calls[] += 1
        x[1][] % 3 == 0 && throw(DinputError(:INVALID_ARGUMENT, "a multiple of 3"))
        x
    end
    it = iterator(ignore_errors(failing))
    n = 0
    while has_value(get_next_as_optional(it))
        n += 1
    end
    @test n == 4
    @test statistic(it, "errors_ignored") == 3
    mktempdir() do dir
        file = joinpath(dir, "cache")
        calls[] = 0
        first_pass = [x[1][] for x in cache(ignore_errors(failing); filename=file)]
        @test calls[] == 7
        calls[] = 0
        @test [x[1][] for x in cache(ignore_errors(failing); filename=file)] == first_pass
        @test calls[] == 0
    end
    calls[] = 0
    counted = map(x -> (calls[] += 1; x), Dataset(0:4))
    @test length(collect(repeat(cache(counted), 3))) == 15
    @test calls[] == 5
end

@testset "statistics and traces" begin
    it = iterator(take(Dataset(0:999), 7))
    @test length(collect(it)) == 7
    doc = statistics(it)
    @test occursin("\"schema\":\"dinput.statistics/1\"", doc)
    @test occursin(r"\"name\":\"take\",[^}]*\"elements\":7,\"bytes\":56", doc)
    traced = iterator(with_options(Dataset(0:4), Options(trace_events=100)))
    @test length(collect(traced)) == 5
    @test occursin("get_next wait", trace(traced))
    quiet = iterator(with_options(Dataset(0:4), Options(statistics=false)))
    @test length(collect(quiet)) == 5
    @test occursin("\"stages\":[]", statistics(quiet))
    @test is_error(caught(() -> Options(trace_events=-1)), :INVALID_ARGUMENT)
end

@testset "autotune RAM budget" begin
    tuned = iterator(with_options(prefetch(Dataset(0:49)), Options(ram_budget=12345)))
    @test length(collect(tuned)) == 50
    doc = statistics(tuned)
    @test occursin("\"ram_budget\":12345", doc)
    @test occursin("\"knob\":\"buffer_size\"", doc)
    @test is_error(caught(() -> Options(ram_budget=-1)), :INVALID_ARGUMENT)
end

include("readme.jl")

end # @testset "Dinput"
