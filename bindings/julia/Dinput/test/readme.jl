# The README's file pipeline, word for word: the test below fails when README.md shows another
# `read_records` (the CTest check bindings.julia.names compares them too, without Julia).

function read_records(pattern)
    files = list_files(pattern; shuffle=true)          # the names, shuffled each epoch
    ds = interleave(files, TensorSpec(String, ()); cycle_length=4, num_parallel_calls=4) do f
        records(f[1][])                                # f[1][] is the file's name
    end
    ds = batch(shuffle(ds, 10_000), 256)               # global batches: 128 per replica
    strategy = Strategy(["CPU:0", "CPU:1"])
    counts = zeros(Int, num_local_replicas(strategy))
    for step in distribute_dataset(strategy, ds)       # an epoch (workers: sharded by file)
        for (replica, e) in pairs(local_results(step))
            payloads = Array(e[1])                     # the batch's records, as Strings
            counts[replica] += length(payloads)
        end
    end
    return counts
end

@testset "README: the file pipeline" begin
    mktempdir() do dir
        for f in 0:2
            RecordWriter(joinpath(dir, "train-$f.tfrecord")) do w
                for r in 0:299
                    write(w, "file $f record $r")
                end
            end
        end
        pattern = joinpath(dir, "train-*.tfrecord")
        # 900 records: three global batches of 256 (128 per replica), then one of 132, which
        # fills replica 0's 128 rows first and leaves 4 to replica 1 (as tf.distribute does).
        # The interleave callback runs on dinput's threads, which needs Julia ≥ 1.9.
        if Dinput.FOREIGN_THREAD_CALLBACKS
            @test read_records(pattern) == [512, 388]
        else
            @test_skip read_records(pattern) == [512, 388]
        end
    end
    readme = read(joinpath(@__DIR__, "..", "..", "README.md"), String)
    shown = match(r"^function read_records\(.*?^end$"ms, readme)
    @test shown !== nothing && occursin(shown.match, read(@__FILE__, String))
end
