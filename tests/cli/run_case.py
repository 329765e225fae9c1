#!/usr/bin/env python3
"""Conformance tests of the `dinput` command-line tool (docs/cli.md).

Each case runs the tool once and compares every stdout line, parsed as JSON, with the value
docs/semantics.md prescribes (ints, floats and bools must match in type too, so an int64 printed as
1.0 fails). Failures must exit with status 1, print nothing on stdout and exactly one stderr
line "<STATUS_NAME>: <message>".

  run_case.py --list                      print the case names (CMake registers one test each)
  run_case.py --tool PATH --version V NAME   run one case; exit 0 pass, 1 fail, 77 skipped
"""

import argparse
import gzip
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

SKIP = 77
CASES = {}


def case(name, args, pipeline, **expect):
    """Registers a case. expect keys:
    lines=[obj, ...]     exact stdout, one JSON value per line
    raw=text             exact stdout text
    check=fn(lines)      custom check of the parsed stdout lines; returns an error or None
    error=(STATUS, text) failure whose stderr line is "STATUS: text" exactly
    error_prefix=(STATUS, text)   ... starts with "STATUS: text"
    error_contains=(STATUS, text) ... starts with "STATUS: " and contains text
    partial_lines=[obj, ...]  with an error: `run` streams its steps, so a failure after some
                         steps leaves exactly these step lines on stdout (and no end line)
    needs_gpu=True       skipped unless the build info says a CUDA device is usable
    command=NAME         subcommand (default "run"); pipeline None: no pipeline argument
    script=fn(ctx)       a case of several commands (see Script): fn runs them in a temporary
                         directory and raises CaseFailure; args and pipeline are unused
    """
    assert name not in CASES, name
    CASES[name] = dict(args=args, pipeline=pipeline, **expect)


# ---- helpers to write expected output -------------------------------------------------------


def r(*pieces):
    """Replicas of one step whose elements have a single component."""
    return [[p] for p in pieces]


def single_worker(steps, end="OUT_OF_RANGE"):
    lines = [{"worker": 0, "step": s, "replicas": reps} for s, reps in enumerate(steps)]
    lines.append({"worker": 0, "end": end, "steps": len(steps)})
    return lines


def multi_worker(per_worker_steps, end="OUT_OF_RANGE"):
    """per_worker_steps[w] = list of steps; lines go step by step, workers in order."""
    lines = []
    for s in range(max(len(w) for w in per_worker_steps)):
        for w, steps in enumerate(per_worker_steps):
            if s < len(steps):
                lines.append({"worker": w, "step": s, "replicas": steps[s]})
    for w, steps in enumerate(per_worker_steps):
        lines.append({"worker": w, "end": end, "steps": len(steps)})
    return lines


def strs(*values):
    return [str(v) for v in values]


# ---- docs/semantics.md, "The even split" (single worker, default policy AUTO -> DATA) ------

case("table.range6_batch4_n2", ["--replicas", "2"], "range(6).batch(4)",
     lines=single_worker([r([0, 1], [2, 3]), r([4], [5])]))
case("table.range4_batch4_n5", ["--replicas", "5"], "range(4).batch(4)",
     lines=single_worker([r([0], [1], [2], [3], [])]))
case("table.range8_batch4_n3", ["--replicas", "3"], "range(8).batch(4)",
     lines=single_worker([r([0, 1], [2, 3], []), r([4, 5], [6, 7], [])]))
# 100 = 6*16 + 4: six steps of [4,1] pairs per replica, then one of [1,1] pairs.
case("table.pairs_repeat100_batch16_n4_shapes", ["--replicas", "4", "--shapes"],
     "from_tensors(([1.],[1.])).repeat(100).batch(16)",
     lines=single_worker([[[[4, 1], [4, 1]]] * 4] * 6 + [[[[1, 1], [1, 1]]] * 4]))
case("table.pairs_repeat100_batch16_n4_values", ["--replicas", "4"],
     "from_tensors(([1.],[1.])).repeat(100).batch(16)",
     lines=single_worker([[[[[1.0]] * 4, [[1.0]] * 4]] * 4] * 6 +
                         [[[[[1.0]], [[1.0]]]] * 4]))
case("table.slices_repeat_forever_n2", ["--replicas", "2", "--steps", "5"],
     "from_tensor_slices([1,2,3,4]).repeat().batch(4)",
     lines=single_worker([r([1, 2], [3, 4])] * 5, end="STEPS_LIMIT"))
case("table.range9_batch4_gpu0_cpu0", ["--devices", "GPU:0,CPU:0"], "range(9).batch(4)",
     needs_gpu=True,
     lines=single_worker([r([0, 1], [2, 3]), r([4, 5], [6, 7]), r([8], [])]))
# The same device list with the values kept in host memory, which needs no usable GPU.
case("table.range9_batch4_gpu0_cpu0_host_values",
     ["--devices", "GPU:0,CPU:0", "--no-fetch-to-device"], "range(9).batch(4)",
     lines=single_worker([r([0, 1], [2, 3]), r([4, 5], [6, 7]), r([8], [])]))
# The same split on two CPU devices.
case("table.range9_batch4_cpu0_cpu1", ["--devices", "CPU:0,CPU:1"], "range(9).batch(4)",
     lines=single_worker([r([0, 1], [2, 3]), r([4, 5], [6, 7]), r([8], [])]))
case("table.range9_batch4_n4", ["--replicas", "4"], "range(9).batch(4)",
     lines=single_worker([r([0], [1], [2], [3]), r([4], [5], [6], [7]), r([8], [], [], [])]))

# ---- docs/semantics.md, "The balanced split" (policy OFF) -----------------------------------

case("balanced.range8_batch4_n2", ["--replicas", "2", "--policy", "OFF"], "range(8).batch(4)",
     lines=single_worker([r([0, 1], [2, 3]), r([4, 5], [6, 7])]))
case("balanced.range5_batch4_n2", ["--replicas", "2", "--policy", "OFF"], "range(5).batch(4)",
     lines=single_worker([r([0, 1], [2, 3]), r([4], [])]))
case("balanced.range8_batch4_n3", ["--replicas", "3", "--policy", "OFF"], "range(8).batch(4)",
     lines=single_worker([r([0, 1], [2], [3]), r([4, 5], [6], [7])]))
case("balanced.with_options_in_chain", ["--replicas", "3"],
     "range(8).batch(4).with_options(auto_shard_policy=OFF)",
     lines=single_worker([r([0, 1], [2], [3]), r([4, 5], [6], [7])]))
case("balanced.off_w2_r1_range12_batch8", ["--workers", "2", "--replicas", "2", "--policy", "OFF"],
     "range(12).batch(8)",
     lines=multi_worker([[r([0, 1, 2, 3]), r([4, 5, 6, 7]), r([8, 9, 10, 11])]] * 2))
# FILE with a single worker shards nothing (and needs no file source); G is known, so the
# balanced split applies.
case("balanced.file_single_worker_is_noop", ["--replicas", "2", "--policy", "FILE"],
     "range(4).batch(2)", lines=single_worker([r([0], [1]), r([2], [3])]))

# ---- docs/semantics.md, "Sharding policies" (W=2, R=1) -------------------------------------

W2 = ["--workers", "2", "--replicas", "2"]
case("shard.data_w2_range12_batch4", W2 + ["--policy", "DATA"], "range(12).batch(4)",
     lines=multi_worker([[r([0, 1]), r([4, 5]), r([8, 9])],
                         [r([2, 3]), r([6, 7]), r([10, 11])]]))
case("shard.auto_without_file_source_is_data", W2, "range(12).batch(4)",
     lines=multi_worker([[r([0, 1]), r([4, 5]), r([8, 9])],
                         [r([2, 3]), r([6, 7]), r([10, 11])]]))
case("shard.data_w2_one_file", W2 + ["--policy", "DATA"], "text_lines([{ALL}]).batch(4)",
     lines=multi_worker([[r(strs(0, 1)), r(strs(4, 5)), r(strs(8, 9))],
                         [r(strs(2, 3)), r(strs(6, 7)), r(strs(10, 11))]]))
# [dinput] AUTO falls back to DATA when there are fewer files than workers.
case("shard.auto_w2_one_file_falls_back_to_data", W2, "text_lines([{ALL}]).batch(4)",
     lines=multi_worker([[r(strs(0, 1)), r(strs(4, 5)), r(strs(8, 9))],
                         [r(strs(2, 3)), r(strs(6, 7)), r(strs(10, 11))]]))
case("shard.off_w2_one_file", W2 + ["--policy", "OFF"], "text_lines([{ALL}]).batch(4)",
     lines=multi_worker([[r(strs(2 * i, 2 * i + 1)) for i in range(6)]] * 2))
case("shard.file_w2_two_files", W2 + ["--policy", "FILE"], "text_lines([{A},{B}]).batch(4)",
     lines=multi_worker([[r(strs(0, 1)), r(strs(2, 3)), r(strs(4, 5))],
                         [r(strs(6, 7)), r(strs(8, 9)), r(strs(10, 11))]]))
case("shard.auto_w2_two_files_is_file", W2, "text_lines([{A},{B}]).batch(4)",
     lines=multi_worker([[r(strs(0, 1)), r(strs(2, 3)), r(strs(4, 5))],
                         [r(strs(6, 7)), r(strs(8, 9)), r(strs(10, 11))]]))
case("shard.file_w2_too_few_files", W2 + ["--policy", "FILE"], "text_lines([{ALL}]).batch(4)",
     error_prefix=("INVALID_ARGUMENT",
                   "Could not apply FILE based sharding: the dataset only has 1 file(s), which "
                   "is not enough for the required 2 shards/workers."))
case("shard.file_without_file_source", W2 + ["--policy", "FILE"], "range(8).batch(4)",
     error_prefix=("NOT_FOUND", "Found an unshardable source dataset: "))
case("shard.hint_w2", W2 + ["--policy", "HINT"], "range(8).shard(SHARD_HINT, SHARD_HINT).batch(2)",
     lines=multi_worker([[r([0]), r([2]), r([4]), r([6])], [r([1]), r([3]), r([5]), r([7])]]))
# DATA with R=2: worker w keeps the even-split pieces w and w+W.
case("shard.data_w2_r2_pieces", ["--workers", "2", "--replicas", "4", "--policy", "DATA"],
     "range(8).batch(4)",
     lines=multi_worker([[r([0], [2]), r([4], [6])], [r([1], [3]), r([5], [7])]]))
case("shard.workers_not_dividing_replicas", ["--workers", "2", "--replicas", "3"],
     "range(8).batch(4)",
     error_contains=("INVALID_ARGUMENT",
                     "tf.distribute expects every worker to have the same number of replicas"))

# ---- docs/semantics.md, "Partial batches and the end of data", across workers ---------------

case("partial.data_w2_range9_batch2", W2 + ["--policy", "DATA"], "range(9).batch(2)",
     lines=multi_worker([[r([0]), r([2]), r([4]), r([6]), r([8])],
                         [r([1]), r([3]), r([5]), r([7]), r([])]]))
case("partial.auto_w2_range9_batch2_optional", W2 + ["--optional"], "range(9).batch(2)",
     lines=multi_worker([[r([0]), r([2]), r([4]), r([6]), r([8])],
                         [r([1]), r([3]), r([5]), r([7]), r([])]]))
# A dummy batch keeps the other known dimensions: (None,3) becomes (0,3).
case("partial.dummy_keeps_dims_shapes", ["--replicas", "2", "--shapes"],
     "from_tensor_slices([[1,2,3],[4,5,6],[7,8,9]]).batch(2)",
     lines=single_worker([r([1, 3], [1, 3]), r([1, 3], [0, 3])]))
case("partial.dummy_keeps_dims_values", ["--replicas", "2"],
     "from_tensor_slices([[1,2,3],[4,5,6],[7,8,9]]).batch(2)",
     lines=single_worker([r([[1, 2, 3]], [[4, 5, 6]]), r([[7, 8, 9]], [])]))
case("partial.shapes_range9_batch4_n4", ["--replicas", "4", "--shapes"], "range(9).batch(4)",
     lines=single_worker([r([1], [1], [1], [1])] * 2 + [r([1], [0], [0], [0])]))

# ---- element specs --------------------------------------------------------------------------

case("spec.range10_batch2_n2", ["--replicas", "2"], "range(10).batch(2)", command="spec",
     lines=[{"num_replicas_in_sync": 2, "components": [{"dtype": "int64", "shape": [None]}]}])
case("spec.multi_worker", W2, "range(10).batch(2)", command="spec",
     lines=[{"num_replicas_in_sync": 2, "components": [{"dtype": "int64", "shape": [None]}]}])
case("spec.pairs_n4", ["--replicas", "4"], "from_tensors(([1.],[1.])).repeat(100).batch(16)",
     command="spec",
     lines=[{"num_replicas_in_sync": 4,
             "components": [{"dtype": "float32", "shape": [None, 1]}] * 2}])
case("spec.text_lines_bytes", ["--replicas", "2"], "text_lines([{ALL}]).batch(4)",
     command="spec",
     lines=[{"num_replicas_in_sync": 2, "components": [{"dtype": "bytes", "shape": [None]}]}])
# One replica: nothing is rebatched and no partial batch can occur, so the spec is the
# dataset's own.
case("spec.single_replica_drop_remainder", [], "range(8).batch(4, drop_remainder=True)",
     command="spec",
     lines=[{"num_replicas_in_sync": 1, "components": [{"dtype": "int64", "shape": [4]}]}])

# ---- iteration options ----------------------------------------------------------------------

case("options.shapes", ["--replicas", "2", "--shapes"], "range(6).batch(4)",
     lines=single_worker([r([2], [2]), r([1], [1])]))
case("options.optional", ["--replicas", "2", "--optional"], "range(6).batch(4)",
     lines=single_worker([r([0, 1], [2, 3]), r([4], [5])]))
case("options.steps_limit", ["--replicas", "2", "--steps", "1"], "range(6).batch(4)",
     lines=single_worker([r([0, 1], [2, 3])], end="STEPS_LIMIT"))
case("options.steps_beyond_end", ["--replicas", "2", "--steps", "10"], "range(6).batch(4)",
     lines=single_worker([r([0, 1], [2, 3]), r([4], [5])]))
case("options.steps_zero", ["--replicas", "2", "--steps", "0"], "range(6).batch(4)",
     lines=single_worker([], end="STEPS_LIMIT"))
case("options.no_fetch_to_device", ["--replicas", "2", "--no-fetch-to-device"],
     "range(6).batch(4)", lines=single_worker([r([0, 1], [2, 3]), r([4], [5])]))
case("options.multi_worker_steps_limit", W2 + ["--steps", "2"], "range(9).batch(2)",
     lines=multi_worker([[r([0]), r([2])], [r([1]), r([3])]], end="STEPS_LIMIT"))
case("options.infinite_needs_steps", ["--replicas", "2"],
     "from_tensor_slices([1,2,3,4]).repeat().batch(4)",
     error=("INVALID_ARGUMENT", "the pipeline is infinite; pass --steps K to stop after K steps"))
# tf.data's rule: repeat() of an input of UNKNOWN size (a file source) is infinite too.
case("options.infinite_unknown_input_needs_steps", [], "text_lines([{ALL}]).repeat()",
     error=("INVALID_ARGUMENT", "the pipeline is infinite; pass --steps K to stop after K steps"))
case("options.infinite_unknown_input_with_steps", ["--steps", "2"], "text_lines([{ALL}]).repeat()",
     lines=single_worker([[["0"]], [["1"]]], end="STEPS_LIMIT"))
# enumerate's index never wraps: the element after INT64_MAX is an error, not INT64_MIN.
case("options.enumerate_overflow", [], "range(2).enumerate(9223372036854775807)",
     partial_lines=[{"worker": 0, "step": 0, "replicas": [[9223372036854775807, 0]]}],
     error=("INVALID_ARGUMENT", "enumerate: the index of element 1 (counting from 0) would be "
            "9223372036854775807 + 1, which overflows int64 (start=9223372036854775807)"))


def close_reader_and_wait(proc):
    """Closes the tool's stdout as `| head` does, then waits for it to end (30 s at most);
    returns its exit status and stderr."""
    proc.stdout.close()
    try:
        code = proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise CaseFailure("the tool kept running after its reader closed the pipe")
    err = proc.stderr.read().decode("utf-8", "surrogateescape")
    proc.stderr.close()
    return code, err


def streaming_head_case(ctx):
    """`run` streams: the first line of an endless-looking pipeline arrives at once, and the
    tool exits quietly with status 0 when its reader closes the pipe."""
    import time
    proc = subprocess.Popen([ctx.tool, "run", "range(100000000)"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=ctx.dir)
    started = time.monotonic()
    first = proc.stdout.readline()
    waited = time.monotonic() - started
    code, err = close_reader_and_wait(proc)
    print("first line %r after %.2f s; exit status %d; stderr %r" % (first, waited, code, err))
    expect_equal("first line", json.loads(first), {"worker": 0, "step": 0, "replicas": [[0]]})
    if waited > 10:
        raise CaseFailure("the first line took %.1f s: the output is not streamed" % waited)
    if code != 0 or err:
        raise CaseFailure("a closed pipe must end the run quietly with status 0; got %d, %r"
                          % (code, err))


def streaming_multi_worker_head_case(ctx):
    """The same with two workers: the closed pipe stops both (through the collective)."""
    proc = subprocess.Popen([ctx.tool, "run", "--workers", "2", "--replicas", "2",
                             "range(100000000).batch(2)"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=ctx.dir)
    lines = [json.loads(proc.stdout.readline()) for _ in range(3)]
    code, err = close_reader_and_wait(proc)
    expect_equal("first lines", lines, [{"worker": 0, "step": 0, "replicas": [[[0]]]},
                                        {"worker": 1, "step": 0, "replicas": [[[1]]]},
                                        {"worker": 0, "step": 1, "replicas": [[[2]]]}])
    if code != 0 or err:
        raise CaseFailure("a closed pipe must end the run quietly with status 0; got %d, %r"
                          % (code, err))


# The default strategy has one replica: nothing is rebatched, so scalars are fine.
case("options.default_strategy_scalars", [], "range(3)",
     lines=single_worker([[[0]], [[1]], [[2]]]))
case("options.scalars_need_batch", ["--replicas", "2"], "range(8)",
     error_prefix=("INVALID_ARGUMENT",
                   "Expected a dataset whose elements have rank >= 1 but found a dataset whose "
                   "elements are scalars. Fix the issue by adding the `batch` transformation to "
                   "the dataset."))

# ---- distribute_datasets_from_function ------------------------------------------------------

case("function.per_replica_batch_size", ["--replicas", "2", "--from-function"],
     "range(8).batch($per_replica_batch_size(4))",
     lines=single_worker([r([0, 1], [2, 3]), r([4, 5], [6, 7])]))
case("function.multi_worker_shard", W2 + ["--from-function"],
     "range(8).shard($num_input_pipelines, $input_pipeline_id)"
     ".batch($per_replica_batch_size(4))",
     lines=multi_worker([[r([0, 2]), r([4, 6])], [r([1, 3]), r([5, 7])]]))
case("function.context_values", ["--workers", "2", "--replicas", "4", "--from-function"],
     "from_tensors([$num_replicas_in_sync, $input_pipeline_id, $num_input_pipelines]).repeat(2)",
     lines=multi_worker([[r([4, 0, 2], [4, 0, 2])], [r([4, 1, 2], [4, 1, 2])]]))
case("function.not_divisible", ["--replicas", "2", "--from-function"],
     "range(8).batch($per_replica_batch_size(5))",
     error_prefix=("INVALID_ARGUMENT",
                   "The `global_batch_size` 5 is not divisible by `num_replicas_in_sync` 2"))
case("function.placeholder_needs_flag", ["--replicas", "2"],
     "range(8).batch($per_replica_batch_size(4))",
     error=("INVALID_ARGUMENT", "the placeholder $per_replica_batch_size at position 15 is only "
                                "available with --from-function"))
case("function.unknown_placeholder", ["--from-function"], "range($foo)",
     error=("INVALID_ARGUMENT", "unknown placeholder $foo at position 6; known: "
                                "$num_input_pipelines, $input_pipeline_id, $num_replicas_in_sync, "
                                "$per_replica_batch_size(G)"))

# ---- literals and the other transformations (one replica: the dataset as it is) -------------

case("literal.floats", [], "from_tensors([1., 0.5, 1e16, 0.1, -2.5e-05])",
     raw='{"worker":0,"step":0,"replicas":[[[1.0,0.5,1e+16,0.1,-2.5e-05]]]}\n'
         '{"worker":0,"end":"OUT_OF_RANGE","steps":1}\n')
case("literal.ints_and_floats_are_float32", [], "from_tensors([1, 2.5])", command="spec",
     lines=[{"num_replicas_in_sync": 1, "components": [{"dtype": "float32", "shape": [2]}]}])
case("literal.bools", [], "from_tensors([[True, False]])",
     lines=single_worker([[[[[True, False]]]]]))
case("literal.bytes_escaping", [], r"""from_tensor_slices(["a", 'b"c', "\xff\n"]).batch(3)""",
     lines=single_worker([[[["a", 'b"c', "\udcff\n"]]]]))
case("literal.negative_and_nested", [], "from_tensor_slices([[-1, 2], [3, -4]])",
     lines=single_worker([[[[-1, 2]]], [[[3, -4]]]]))
case("literal.ragged", [], "from_tensor_slices([[1,2],[3]])",
     error_prefix=("INVALID_ARGUMENT", "from_tensor_slices(): ragged nested list at position 19"))
case("transform.skip_take_enumerate", [], "range(10).skip(2).take(6).enumerate().batch(3)",
     lines=single_worker([[[[0, 1, 2], [2, 3, 4]]], [[[3, 4, 5], [5, 6, 7]]]]))
case("transform.unbatch_rebatch", [], "range(6).batch(4).unbatch().batch(5).rebatch([1, 2])",
     lines=single_worker([r([0]), r([1, 2]), r([3]), r([4, 5])]))
case("transform.batch_parallel", [],
     "range(10).batch(3, num_parallel_calls=4, deterministic=False)",
     lines=single_worker([r([0, 1, 2]), r([3, 4, 5]), r([6, 7, 8]), r([9])]))
case("transform.batch_parallel_drop_remainder", [],
     "range(10).batch(3, drop_remainder=True, num_parallel_calls=AUTOTUNE)",
     lines=single_worker([r([0, 1, 2]), r([3, 4, 5]), r([6, 7, 8])]))
case("transform.batch_bad_parallel", [], "range(10).batch(3, num_parallel_calls=-5)",
     error_contains=("INVALID_ARGUMENT", "num_parallel_calls must be 0..1024 or DINPUT_AUTOTUNE (-1), got -5"))
case("transform.with_options_deterministic", [],
     "range(10).batch(3, num_parallel_calls=2).with_options(deterministic=False)",
     lines=single_worker([r([0, 1, 2]), r([3, 4, 5]), r([6, 7, 8]), r([9])]))
case("transform.with_options_bad_deterministic", [], "range(10).with_options(deterministic=3)",
     error_contains=("INVALID_ARGUMENT", "argument 'deterministic' must be True or False"))
# ---- autotuning (docs/autotune.md) ----------------------------------------------------------


def check_autotune_stats(lines):
    """run --stats: the prefetch(AUTOTUNE) and batch(num_parallel_calls=AUTOTUNE) stages list
    their knobs, within their bounds, and the pipeline its RAM budget."""
    if lines[:-1] != single_worker([r([0, 1, 2]), r([3, 4, 5]), r([6, 7, 8]), r([9])]):
        return "unexpected steps: %r" % lines[:-1]
    pipeline = lines[-1]["stats"][0]["pipelines"][0]
    if pipeline.get("autotune", {}).get("ram_budget") != 4096:
        return "no ram_budget 4096 in %r" % pipeline.get("autotune")
    knobs = {s["name"]: s["autotune"] for s in pipeline["stages"] if s.get("autotune")}
    if sorted(knobs) != ["batch", "prefetch"]:
        return "expected knobs on batch and prefetch, got %r" % knobs
    for name, expected in (("batch", "parallelism"), ("prefetch", "buffer_size")):
        k = knobs[name][0]
        if k["knob"] != expected or not k["min"] <= k["value"] <= k["max"]:
            return "bad %s knob %r" % (name, k)
    return None


case("autotune.stats", ["--stats"],
     "range(10).batch(3, num_parallel_calls=AUTOTUNE).prefetch(AUTOTUNE)"
     ".with_options(ram_budget=4096)",
     check=check_autotune_stats)
case("autotune.tiny_budget", [],
     "range(10).batch(3, num_parallel_calls=AUTOTUNE).prefetch(AUTOTUNE)"
     ".with_options(ram_budget=1)",
     lines=single_worker([r([0, 1, 2]), r([3, 4, 5]), r([6, 7, 8]), r([9])]))
case("autotune.bad_budget", [], "range(3).with_options(ram_budget=-1)",
     error_contains=("INVALID_ARGUMENT", "argument 'bytes' must be 0"))


def autotune_bench_stats(ctx):
    """bench --stats: a line names each autotuned stage's knob and its value; a pipeline
    without AUTOTUNE has no such line."""
    code, out, err = ctx.call("bench", "--stats",
                              "range(200).batch(5, num_parallel_calls=AUTOTUNE).prefetch(AUTOTUNE)")
    if code != 0 or err:
        raise CaseFailure("bench --stats: exit status %d, stderr %r" % (code, err))
    line = [l for l in out.splitlines() if l.startswith("worker 0 pipeline 0: autotuned ")]
    if len(line) != 1 or " (batch) parallelism " not in line[0] or \
            " (prefetch) buffer_size " not in line[0]:
        raise CaseFailure("bench --stats: no autotuned line naming both knobs: %r" % out)
    code, out, err = ctx.call("bench", "--stats", "range(200).batch(5).prefetch(3)")
    if code != 0 or "autotuned" in out:
        raise CaseFailure("bench --stats without AUTOTUNE: %r" % out)

case("transform.repeat_prefetch_shard", [], "range(4).repeat(2).prefetch(AUTOTUNE).shard(3, 1)",
     lines=single_worker([[[1]], [[0]], [[3]]]))


def check_shuffle(lines):
    values = [x for line in lines[:-1] for x in line["replicas"][0][0]]
    if sorted(values) != list(range(10)):
        return "shuffle did not produce a permutation of 0..9: %r" % values
    return None


case("transform.shuffle_seeded", [], "range(10).shuffle(10, seed=7).batch(10)", check=check_shuffle,
     deterministic=True)

# ---- bench ----------------------------------------------------------------------------------


def bench_check(rows, nbytes):
    def check(lines):
        if len(lines) != 1:
            return "expected one line, got %d" % len(lines)
        out = lines[0]
        keys = ["rows", "bytes", "seconds", "rows_per_s", "bytes_per_s"]
        if sorted(out) != sorted(keys):
            return "keys %r, expected %r" % (sorted(out), sorted(keys))
        if out["rows"] != rows or out["bytes"] != nbytes:
            return "rows/bytes %r/%r, expected %r/%r" % (out["rows"], out["bytes"], rows, nbytes)
        for k in keys[2:]:
            if not isinstance(out[k], (int, float)) or isinstance(out[k], bool) or out[k] < 0:
                return "%s is not a non-negative number: %r" % (k, out[k])
        return None
    return check


case("bench.one_epoch", ["--replicas", "2"], "range(100).batch(10)", command="bench",
     check=bench_check(100, 800))
case("bench.steps", ["--replicas", "2", "--steps", "3"],
     "from_tensor_slices([1,2,3,4]).repeat().batch(4)", command="bench", check=bench_check(12, 96))
case("bench.multi_worker", W2, "range(9).batch(2)", command="bench", check=bench_check(9, 72))
case("bench.infinite_needs_steps", [], "range(4).repeat()", command="bench",
     error=("INVALID_ARGUMENT", "the pipeline is infinite; pass --steps K to stop after K steps"))

# ---- version, help, usage errors ------------------------------------------------------------

case("version", [], None, command="--version", version=True)
case("help", [], None, command="help", text_contains="usage: dinput")
case("usage.unknown_option", ["--frobnicate"], "range(3)",
     error=("INVALID_ARGUMENT", "unknown option --frobnicate for 'run'; see dinput run --help"))
case("usage.misspelt_option", ["--replics", "2"], "range(3)",
     error=("INVALID_ARGUMENT", "unknown option --replics for 'run' (did you mean '--replicas'?); "
                                "see dinput run --help"))
case("usage.misspelt_record_option", ["--compresion", "ZSTD"], None, command="inspect",
     error=("INVALID_ARGUMENT", "unknown option --compresion for 'inspect' (did you mean "
                                "'--compression'?); see dinput inspect --help"))
case("usage.option_prefix", ["--rep", "2"], "range(2).batch(2)",
     lines=single_worker([r([0], [1])]))
case("usage.ambiguous_option_prefix", ["--s"], "range(3)",
     error=("INVALID_ARGUMENT",
            "ambiguous option --s for 'run': --steps, --shapes, --stats, --save-state"))
case("usage.value_for_a_flag", ["--shapes=1"], "range(3)",
     error=("INVALID_ARGUMENT", "--shapes takes no value"))
case("usage.missing_value", ["--steps"], None,
     error=("INVALID_ARGUMENT", "--steps needs a value"))
case("usage.option_for_another_command", ["--shapes"], "range(3)", command="spec",
     error=("INVALID_ARGUMENT", "option --shapes is not valid for 'spec'"))
case("usage.misspelt_command", [], None, command="inpsect",
     error=("INVALID_ARGUMENT", "unknown command 'inpsect' (did you mean 'inspect'?); run "
                                "'dinput help' for usage"))
case("usage.operands_after_double_dash", ["--"], "range(2)",
     lines=single_worker([r(0), r(1)]))
case("usage.bad_policy", ["--policy", "SOMETIMES"], "range(3)",
     error=("INVALID_ARGUMENT", "--policy expects OFF, AUTO, FILE, DATA or HINT, got 'SOMETIMES'"))
case("usage.missing_pipeline", ["--replicas", "2"], None,
     error=("INVALID_ARGUMENT", "missing PIPELINE; usage: dinput run [options] PIPELINE"))
case("usage.unknown_command", [], None, command="frobnicate",
     error=("INVALID_ARGUMENT", "unknown command 'frobnicate'; run 'dinput help' for usage"))
case("usage.bad_replicas", ["--replicas", "0"], "range(3)",
     error=("INVALID_ARGUMENT", "--replicas expects an integer from 1 to 65536, got '0'"))

# ---- syntax and pipeline errors -------------------------------------------------------------

SYNTAX = "INVALID_ARGUMENT"
case("syntax.unclosed_call", [], "range(6).batch(4",
     error=(SYNTAX, "syntax error at position 16: expected ',' or ')', found end of input"))
case("syntax.empty", [], "",
     error=(SYNTAX, "syntax error at position 0: expected a function name, found end of input"))
case("syntax.double_dot", [], "range(6)..batch(4)",
     error=(SYNTAX, "syntax error at position 9: expected a function name, found '.'"))
case("syntax.missing_dot", [], "range(6) batch(4)",
     error=(SYNTAX, "syntax error at position 9: expected '.' or end of input, found 'batch'"))
case("syntax.extra_paren", [], "range(6)).batch(2)",
     error=(SYNTAX, "syntax error at position 8: expected '.' or end of input, found ')'"))
case("syntax.bad_character", [], "range(6).batch(4) @",
     error=(SYNTAX, "syntax error at position 18: expected '.' or end of input, found '@'"))
case("syntax.unterminated_string", [], 'text_lines("abc',
     error=(SYNTAX, 'syntax error at position 15: expected closing ", found end of input'))
case("syntax.positional_after_keyword", [], "range(8).batch(drop_remainder=True, 4)",
     error=(SYNTAX, "syntax error at position 36: expected a keyword argument (positional "
                    "arguments cannot follow keyword arguments) or ')', found '4'"))
case("syntax.int_overflow", [], "range(99999999999999999999)",
     error=(SYNTAX, "integer literal '99999999999999999999' at position 6 is out of the int64 "
                    "range"))
# A float literal that is infinite as a float32 is refused instead of printing Infinity.
case("syntax.float32_overflow", [], "from_tensors([1e39])",
     error=(SYNTAX, "float literal '1e39' at position 14 is out of the float32 range "
                    "(largest magnitude about 3.4028235e38)"))
case("syntax.float32_largest_and_underflow", [], "from_tensors([3.4028235e38, -1e-50])",
     lines=single_worker([[[[3.4028235e+38, -0.0]]]]))
case("pipeline.unknown_function", [], "range(6).foo(1)",
     error_prefix=("INVALID_ARGUMENT", "unknown function 'foo' at position 9"))
case("pipeline.misspelt_function", [], "range(6).shufle(4)",
     error_prefix=("INVALID_ARGUMENT", "unknown function 'shufle' at position 9 (did you mean "
                                       "'shuffle'?); transformations: "))
case("pipeline.misspelt_source", [], "rnage(6)",
     error_prefix=("INVALID_ARGUMENT", "unknown function 'rnage' at position 0 (did you mean "
                                       "'range'?); sources: "))
case("pipeline.misspelt_keyword", [], "range(6).batch(4, drop_remaindr=True)",
     error_prefix=("INVALID_ARGUMENT", "batch(): unexpected keyword argument 'drop_remaindr' at "
                                       "position 18 (did you mean 'drop_remainder'?); usage: "))
case("pipeline.unknown_source", [], "foo(1)",
     error_prefix=("INVALID_ARGUMENT", "unknown function 'foo' at position 0"))
case("pipeline.source_as_transformation", [], "range(3).range(2)",
     error_prefix=("INVALID_ARGUMENT", "range() at position 9 is a source"))
case("pipeline.transformation_as_source", [], "batch(2)",
     error_prefix=("INVALID_ARGUMENT", "batch() at position 0 is a transformation"))
case("pipeline.wrong_argument_type", [], 'range(6).batch("4")',
     error_prefix=("INVALID_ARGUMENT",
                   "batch(): argument 'batch_size' must be an integer, got a string at "
                   "position 15"))
case("pipeline.too_many_arguments", [], "range(6).batch(4, True, 1, True, 5)",
     error_prefix=("INVALID_ARGUMENT", "batch(): takes at most 4 positional arguments, got 5"))
case("pipeline.missing_argument", [], "range(6).batch()",
     error_prefix=("INVALID_ARGUMENT", "batch(): missing required argument 'batch_size'"))
case("pipeline.unexpected_keyword", [], "range(6).batch(4, foo=1)",
     error_prefix=("INVALID_ARGUMENT", "batch(): unexpected keyword argument 'foo' at position 18"))
case("pipeline.range_without_arguments", [], "range()",
     error_prefix=("INVALID_ARGUMENT", "range(): missing required argument"))
case("pipeline.library_rejects_batch_size", [], "range(6).batch(0)",
     error_prefix=("INVALID_ARGUMENT", ""))


# ---- record files (docs/records.md) ---------------------------------------------------------
#
# Reference files are framed here, independently of the library, so that the cases also check
# that dinput reads and writes TFRecord framing byte for byte: u64 length, masked CRC32C of the
# length, data, masked CRC32C of the data, little-endian.


class CaseFailure(Exception):
    pass


def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


CRC32C_TABLE = _crc32c_table()


def masked_crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = CRC32C_TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    c ^= 0xFFFFFFFF
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def tfrecord_bytes(records):
    out = bytearray()
    for record in records:
        length = struct.pack("<Q", len(record))
        out += length + struct.pack("<I", masked_crc32c(length))
        out += record + struct.pack("<I", masked_crc32c(record))
    return bytes(out)


def record_offsets(records):
    """Byte offset of each record's header in a plain file."""
    offsets, at = [], 0
    for record in records:
        offsets.append(at)
        at += 16 + len(record)
    return offsets


class Script:
    """Runs the tool several times in one temporary directory, checking the CLI contract of
    every run; the case fails with the first CaseFailure."""

    def __init__(self, tool, directory):
        self.tool = tool
        self.dir = directory

    def path(self, name):
        return os.path.join(self.dir, name)

    def write_file(self, name, data):
        with open(self.path(name), "wb") as f:
            f.write(data)
        return self.path(name)

    def read_file(self, name):
        with open(self.path(name), "rb") as f:
            return f.read()

    def call(self, *args, stdin=None):
        argv = [self.tool] + list(args)
        proc = subprocess.run(argv, input=stdin, capture_output=True, timeout=60, cwd=self.dir)
        out = proc.stdout.decode("utf-8", "surrogateescape")
        err = proc.stderr.decode("utf-8", "surrogateescape")
        print("$ " + " ".join(argv))
        print("exit status %d\nstdout:\n%sstderr:\n%s" % (proc.returncode, out, err))
        return proc.returncode, out, err

    def ok(self, *args, stdin=None, stderr=""):
        """Runs a command that must succeed, printing `stderr` (by default nothing) on
        stderr; returns its stdout lines parsed as JSON."""
        code, out, err = self.call(*args, stdin=stdin)
        if code != 0 or err != stderr:
            raise CaseFailure("%s: exit status %d, stderr %r; expected success with stderr %r"
                              % (args[0], code, err, stderr))
        try:
            return [json.loads(line) for line in out.splitlines()]
        except ValueError as e:
            raise CaseFailure("%s: stdout is not one JSON value per line: %s" % (args[0], e))

    def fails(self, status, *args):
        """Runs a command that must fail with `status`; returns its one stderr line."""
        code, out, err = self.call(*args)
        lines = err.splitlines()
        if code != 1 or out or len(lines) != 1 or not lines[0].startswith(status + ": "):
            raise CaseFailure("%s: expected exit status 1, empty stdout and one stderr line "
                              "'%s: ...'; got %d, %r, %r" % (args[0], status, code, out, err))
        return lines[0]

    def records(self, pipeline, *options, stderr=""):
        """The bytes records of a single-worker `run` of pipeline, in order."""
        lines = self.ok("run", *options, pipeline, stderr=stderr)
        values = []
        for line in lines[:-1]:
            for replica in line["replicas"]:
                component = replica[0]
                for value in component if isinstance(component, list) else [component]:
                    values.append(value.encode("utf-8", "surrogateescape"))
        return values


def reader_counts(line):
    """A `run --stats` line without its per-stage parts (docs/statistics.md), which hold
    timings no test can predict."""
    if not isinstance(line, dict) or "stats" not in line:
        return line
    return {"stats": [{k: v for k, v in w.items() if k not in ("consumer", "pipelines")}
                      for w in line["stats"]]}


def expect_equal(what, got, expected):
    if not strict_equal(got, expected):
        raise CaseFailure("%s: got %r, expected %r" % (what, got, expected))


def q(text):
    """A string literal of the chain syntax."""
    return json.dumps(text)


def script_case(name, fn, **extra):
    case(name, [], None, script=fn, **extra)


# Lines as `write --lines` sees them: an empty line, a "\r\n" end, UTF-8, a long line, and a
# last line without its newline.
LINES_TEXT = "alpha\n\nbeta\r\ngr\u00fc\u00df\n" + "x" * 3000 + "\nlast"
LINES = [b"alpha", b"", b"beta", "gr\u00fc\u00df".encode(), b"x" * 3000, b"last"]


def make_write_inspect(compression):
    def run(ctx):
        text = ctx.write_file("in.txt", LINES_TEXT.encode())
        out = ctx.path("out.rec")
        payload = sum(len(x) for x in LINES)
        expect_equal("write", ctx.ok("write", "--compression", compression, "--lines", text, out),
                     [{"records": len(LINES), "bytes": payload, "output": out}])
        expect_equal("inspect", ctx.ok("inspect", out),
                     [{"file": out, "compression": compression, "records": len(LINES),
                       "payload_bytes": payload, "smallest": 0, "largest": 3000}])
        expect_equal("run", ctx.records("records(%s, compression=%s).batch(4)"
                                         % (q(out), q(compression.lower()))), LINES)
        data = ctx.read_file("out.rec")
        if compression == "NONE":
            expect_equal("the bytes of the NONE file", data, tfrecord_bytes(LINES))
        elif compression == "GZIP":
            expect_equal("gunzip of the GZIP file", gzip.decompress(data), tfrecord_bytes(LINES))
        else:
            expect_equal("first bytes of the ZSTD file", data[:4], b"\x28\xb5\x2f\xfd")
    return run


for _c in ("NONE", "ZSTD", "GZIP"):
    script_case("records.write_inspect_" + _c.lower(), make_write_inspect(_c))


def write_lines_from_stdin(ctx):
    out = ctx.path("out.rec")
    expect_equal("write", ctx.ok("write", "--lines", "-", out, stdin=b"a\nbb\n"),
                 [{"records": 2, "bytes": 3, "output": out}])
    expect_equal("run", ctx.records("records(%s)" % q(out)), [b"a", b"bb"])


script_case("records.write_lines_stdin", write_lines_from_stdin)


def write_chunks(ctx):
    data = bytes(range(48, 58))  # "0123456789": 10 bytes in chunks of 4
    src = ctx.write_file("in.bin", data)
    out = ctx.path("out.rec")
    expect_equal("write", ctx.ok("write", "--compression", "GZIP", "--level", "9",
                                 "--chunk-size", "4", src, out),
                 [{"records": 3, "bytes": 10, "output": out}])
    expect_equal("inspect", ctx.ok("inspect", out),
                 [{"file": out, "compression": "GZIP", "records": 3, "payload_bytes": 10,
                   "smallest": 2, "largest": 4}])
    expect_equal("run", ctx.records("records(%s, %s)" % (q(out), q("GZIP"))),
                 [b"0123", b"4567", b"89"])


script_case("records.write_chunks", write_chunks)


def inspect_empty_and_several(ctx):
    empty = ctx.write_file("empty.rec", b"")
    plain = ctx.write_file("plain.rec", tfrecord_bytes([b"abc", b"de"]))
    expect_equal("inspect", ctx.ok("inspect", empty, plain),
                 [{"file": empty, "compression": "NONE", "records": 0, "payload_bytes": 0,
                   "smallest": None, "largest": None},
                  {"file": plain, "compression": "NONE", "records": 2, "payload_bytes": 5,
                   "smallest": 2, "largest": 3}])


script_case("records.inspect_empty_and_several", inspect_empty_and_several)


def convert_chain(ctx):
    records = [b"r%d" % i * (i + 1) for i in range(20)]
    original = ctx.write_file("a.rec", tfrecord_bytes(records))
    steps = [("a.rec", "b.zst", "NONE", "ZSTD"), ("b.zst", "c.gz", "ZSTD", "GZIP"),
             ("c.gz", "d.rec", "GZIP", "NONE")]
    payload = sum(len(r) for r in records)
    expected_run = ctx.records("records(%s).batch(8)" % q(original))
    expect_equal("run over the original", expected_run, records)
    for src, dst, was, becomes in steps:
        expect_equal("convert " + src, ctx.ok("convert", "--compression", becomes,
                                              ctx.path(src), ctx.path(dst)),
                     [{"records": len(records), "bytes": payload, "output": ctx.path(dst),
                       "input_compression": was, "compression": becomes}])
        expect_equal("run over " + dst,
                     ctx.records("records(%s, compression=%s).batch(8)" % (q(ctx.path(dst)),
                                                                           q(becomes))),
                     expected_run)
    expect_equal("the bytes after NONE->ZSTD->GZIP->NONE", ctx.read_file("d.rec"),
                 ctx.read_file("a.rec"))
    expect_equal("inspect --compression", ctx.ok("inspect", "--compression", "gzip",
                                                  ctx.path("c.gz"))[0]["compression"], "GZIP")
    # --input-compression overrides the detection.
    expect_equal("convert --input-compression",
                 ctx.ok("convert", "--input-compression", "gzip", ctx.path("c.gz"),
                        ctx.path("e.rec"))[0]["input_compression"], "GZIP")


script_case("records.convert_chain", convert_chain)


def zstd_d_gives_plain_file(ctx):
    if shutil.which("zstd") is None:
        print("skipped: the zstd command is not installed")
        raise SkipCase()
    text = ctx.write_file("in.txt", LINES_TEXT.encode())
    ctx.ok("write", "--compression", "ZSTD", "--level", "19", "--lines", text, ctx.path("a.zst"))
    proc = subprocess.run(["zstd", "-d", "-q", ctx.path("a.zst"), "-o", ctx.path("plain.rec")],
                          capture_output=True, timeout=60)
    if proc.returncode != 0:
        raise CaseFailure("zstd -d failed: %r" % proc.stderr)
    plain = ctx.path("plain.rec")
    expect_equal("inspect", ctx.ok("inspect", plain),
                 [{"file": plain, "compression": "NONE", "records": len(LINES),
                   "payload_bytes": sum(len(x) for x in LINES), "smallest": 0, "largest": 3000}])
    expect_equal("run", ctx.records("records(%s).batch(10)" % q(plain)), LINES)
    expect_equal("the bytes of zstd -d's output", ctx.read_file("plain.rec"),
                 tfrecord_bytes(LINES))


script_case("records.zstd_d_gives_plain_file", zstd_d_gives_plain_file)


def corrupt_file(ctx, name, records, index):
    """A plain file of `records` whose record `index` has one flipped data byte; returns its
    path, the record's offset and the flipped byte's offset."""
    data = bytearray(tfrecord_bytes(records))
    start = record_offsets(records)[index]
    flipped = start + 12 + len(records[index]) // 2
    data[flipped] ^= 0x40
    return ctx.write_file(name, bytes(data)), start, flipped


def expect_names_offset(line, path, first, last):
    if path not in line:
        raise CaseFailure("the DATA_LOSS line does not name %s: %s" % (path, line))
    if not any(first <= int(n) <= last for n in re.findall(r"\d+", line.replace(path, ""))):
        raise CaseFailure("the DATA_LOSS line names no offset from %d to %d: %s"
                          % (first, last, line))


def inspect_corrupt(ctx):
    records = [b"first", b"second record", b"third"]
    good = ctx.write_file("good.rec", tfrecord_bytes(records))
    bad, start, flipped = corrupt_file(ctx, "bad.rec", records, 1)
    # The good file's line is not printed either: a failed run prints nothing on stdout.
    line = ctx.fails("DATA_LOSS", "inspect", good, bad)
    expect_names_offset(line, bad, start, flipped)
    # convert reads with the same checks, and leaves no partial output behind.
    ctx.fails("DATA_LOSS", "convert", "--compression", "ZSTD", bad, ctx.path("out.zst"))
    if os.path.exists(ctx.path("out.zst")):
        raise CaseFailure("convert left a partial output file after DATA_LOSS")


script_case("records.inspect_corrupt", inspect_corrupt)


def command_help(ctx):
    """`dinput COMMAND --help` (and `dinput help COMMAND`) print that command's help: its
    own options and output, not the other commands'."""
    expected = {
        "run": (["--shapes", "--steps", "--replicas", "Output of run", "PIPELINE is written"],
                ["--chunk-size", "Output of spec"]),
        "spec": (["--replicas", "Output of spec"], ["--shapes", "--steps", "--chunk-size"]),
        "bench": (["--steps", "Output of bench"], ["--shapes", "--level"]),
        "write": (["--chunk-size", "--level", "Output of write"], ["--replicas", "--skip-corrupt"]),
        "convert": (["--input-compression", "--skip-corrupt", "Output of convert"], ["--replicas"]),
        "inspect": (["--skip-corrupt", "Output of inspect"], ["--level", "--replicas"]),
    }
    for command, (present, absent) in expected.items():
        for argv in ([command, "--help"], [command, "-h"], ["help", command]):
            code, out, err = ctx.call(*argv)
            if code != 0 or err:
                raise CaseFailure("%s: exit status %d, stderr %r" % (argv, code, err))
            if not out.startswith("dinput %s:" % command):
                raise CaseFailure("%s: not the help of %s: %r" % (argv, command, out[:80]))
            for text in present:
                if text not in out:
                    raise CaseFailure("%s: %r missing from the help" % (argv, text))
            for text in absent:
                if text in out:
                    raise CaseFailure("%s: %r is not an option of %s" % (argv, text, command))
    code, out, err = ctx.call("help")
    if code != 0 or not out.startswith("usage: dinput COMMAND") or "--chunk-size" not in out:
        raise CaseFailure("dinput help: not the full usage text")


script_case("usage.command_help", command_help)


def bench_progress_on_a_terminal(ctx):
    """With stderr a terminal, bench's progress line shows the percentage done and the time
    left when the steps are known; stdout keeps its one JSON line. The run must last past the
    first update (0.5 s), so the steps grow until a progress line appears."""
    import pty
    for steps in (100000, 1000000, 10000000):
        master, slave = pty.openpty()
        argv = [ctx.tool, "bench", "--steps", str(steps), "range(1000000000).batch(1)"]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=slave)
        os.close(slave)
        err = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the terminal's other end is closed
                break
            if not chunk:
                break
            err += chunk
        out = proc.stdout.read()
        proc.wait()
        os.close(master)
        if proc.returncode != 0:
            raise CaseFailure("bench failed: %r %r" % (out, err))
        result = json.loads(out)
        if result["rows"] != steps:
            raise CaseFailure("bench: %r" % result)
        text = err.decode("utf-8", "replace")
        if "bench: " not in text:
            continue  # finished before the first update: try a longer run
        if not re.search(r"bench: \d+/%d steps \(\d+\.\d%%\), ETA (\d+[smh]|unknown)" % steps, text):
            raise CaseFailure("no percentage and ETA in the progress line: %r" % text)
        return
    raise CaseFailure("bench never showed a progress line")


script_case("bench.progress_percent_and_eta", bench_progress_on_a_terminal)


def compressed_or_text_read_as_records(ctx):
    """A compressed record file read without compression names the compression and the
    option; a text file is "not a TFRecord file" rather than a CRC mismatch."""
    gz = ctx.write_file("x.gz", gzip.compress(tfrecord_bytes([b"a", b"b"])))
    line = ctx.fails("DATA_LOSS", "run", "records(%s)" % q(gz))
    for part in ("starts with the gzip magic bytes", 'compression="GZIP"'):
        if part not in line:
            raise CaseFailure("expected %r in %r" % (part, line))
    zst = ctx.write_file("x.zst", b"\x28\xb5\x2f\xfd" + b"\0" * 20)
    line = ctx.fails("DATA_LOSS", "inspect", "--compression", "NONE", zst)
    if "starts with the zstd magic bytes" not in line or 'compression="ZSTD"' not in line:
        raise CaseFailure("zstd magic not named: %r" % line)
    text = ctx.write_file("notes.txt", b"just some text\nand more\n")
    line = ctx.fails("DATA_LOSS", "inspect", text)
    if "is not a TFRecord file" not in line or "CRC" in line:
        raise CaseFailure("inspect of a text file: %r" % line)


script_case("records.compressed_or_text_read_as_records", compressed_or_text_read_as_records)


def leftovers(ctx):
    """Hidden temporary files the writer left in the case's directory."""
    return sorted(n for n in os.listdir(ctx.dir) if ".tmp-" in n)


def existing_output_survives(ctx):
    """A failed convert or write leaves an existing OUTPUT byte for byte as it was, and no
    temporary file: the output is replaced only when the new file is complete."""
    records = [b"first", b"second record", b"third"]
    bad, _, _ = corrupt_file(ctx, "bad.rec", records, 2)
    important = ctx.write_file("important.rec", tfrecord_bytes([b"keep", b"me"]))
    before = ctx.read_file("important.rec")
    for compression in ("NONE", "ZSTD", "GZIP"):
        ctx.fails("DATA_LOSS", "convert", "--compression", compression, bad, important)
        expect_equal("important.rec after convert --compression %s of a damaged file"
                     % compression, ctx.read_file("important.rec"), before)
    # A damaged compressed input: the good records before the damage are not written over it.
    packed = ctx.path("packed.zst")
    ctx.ok("convert", "--compression", "ZSTD", ctx.write_file(
        "good.rec", tfrecord_bytes(records)), packed)
    data = bytearray(ctx.read_file("packed.zst"))
    ctx.write_file("cut.zst", bytes(data[:len(data) - 6]))
    ctx.fails("DATA_LOSS", "convert", ctx.path("cut.zst"), important)
    expect_equal("important.rec after convert of a truncated zstd file",
                 ctx.read_file("important.rec"), before)
    # write: an input that fails while being read (a directory) after OUTPUT was opened.
    ctx.fails("FAILED_PRECONDITION", "write", "--lines", ctx.dir, important)
    expect_equal("important.rec after a failed write", ctx.read_file("important.rec"), before)
    expect_equal("temporary files left", leftovers(ctx), [])
    # A successful convert replaces it, keeps its permission bits, and follows a symlink.
    os.chmod(important, 0o640)
    os.symlink("important.rec", ctx.path("link.rec"))
    ctx.ok("convert", ctx.path("good.rec"), ctx.path("link.rec"))
    expect_equal("important.rec after a good convert", ctx.read_file("important.rec"),
                 tfrecord_bytes(records))
    if not os.path.islink(ctx.path("link.rec")):
        raise CaseFailure("convert replaced the symbolic link instead of its target")
    expect_equal("mode", oct(os.stat(important).st_mode & 0o777), oct(0o640))
    expect_equal("temporary files left", leftovers(ctx), [])


script_case("records.existing_output_survives_failure", existing_output_survives)


def skip_corrupt_records(ctx):
    records = [b"r%d" % i for i in range(6)]
    bad, start, flipped = corrupt_file(ctx, "bad.rec", records, 2)
    # run reports what was skipped on stderr, after the output.
    expect_equal("run with skip_corrupt_records",
                 ctx.records("records(%s).with_options(skip_corrupt_records=True).batch(10)"
                             % q(bad), stderr="warning: worker 0 skipped 1 corrupt record "
                             "(18 bytes)\n"),
                 [b"r0", b"r1", b"r3", b"r4", b"r5"])
    line = ctx.fails("DATA_LOSS", "run", "records(%s).batch(10)" % q(bad))
    expect_names_offset(line, bad, start, flipped)
    # The option also reaches the readers that interleave() makes, and only the bad record
    # is lost: the good file beside it is read whole.
    ctx.write_file("good.rec", tfrecord_bytes([b"g0", b"g1"]))
    expect_equal("interleave with skip_corrupt_records",
                 ctx.records("list_files(%s).interleave(records, cycle_length=2)"
                             ".with_options(skip_corrupt_records=True).batch(10)"
                             % q(ctx.dir + "/*.rec"), stderr="warning: worker 0 skipped 1 "
                             "corrupt record (18 bytes)\n"),
                 [b"r0", b"g0", b"r1", b"g1", b"r3", b"r4", b"r5"])


script_case("records.skip_corrupt_records", skip_corrupt_records)


def skip_corrupt_counts(ctx):
    """One flipped bit in a length field loses exactly that record, and inspect/convert
    --skip-corrupt count it (records and bytes) on stdout and warn on stderr."""
    records = [b"r%d" % i for i in range(6)]
    data = bytearray(tfrecord_bytes(records))
    data[record_offsets(records)[2] + 3] ^= 0x10  # a bit of r2's length field
    bad = ctx.write_file("bad.rec", bytes(data))
    expect_names_offset(ctx.fails("DATA_LOSS", "inspect", bad), bad, 36, 48)
    code, out, err = ctx.call("inspect", "--skip-corrupt", bad)
    expect_equal("inspect --skip-corrupt exit status", code, 0)
    expect_equal("inspect --skip-corrupt", [json.loads(line) for line in out.splitlines()],
                 [{"file": bad, "compression": "NONE", "records": 5, "payload_bytes": 10,
                   "smallest": 2, "largest": 2, "corrupt_records_skipped": 1,
                   "corrupt_bytes_skipped": 18}])
    expect_equal("inspect --skip-corrupt stderr", err,
                 'warning: skipped 1 corrupt record (18 bytes) in "%s"\n' % bad)
    out_path = ctx.path("out.rec")
    code, out, err = ctx.call("convert", "--skip-corrupt", bad, out_path)
    expect_equal("convert --skip-corrupt exit status", code, 0)
    expect_equal("convert --skip-corrupt", json.loads(out),
                 {"records": 5, "bytes": 10, "output": out_path, "input_compression": "NONE",
                  "compression": "NONE", "corrupt_records_skipped": 1,
                  "corrupt_bytes_skipped": 18})
    expect_equal("convert --skip-corrupt output", ctx.read_file("out.rec"),
                 tfrecord_bytes([r for i, r in enumerate(records) if i != 2]))
    if "bad.rec" not in err:
        raise CaseFailure("convert --skip-corrupt printed no warning naming the file: %r" % err)
    # run --stats: a last line with each worker's counts (2 workers, the bad file read by
    # worker 0 under FILE sharding, the clean one by worker 1).
    lines = ctx.ok("run", "--stats", "--workers", "2", "--policy", "FILE",
                   "list_files(%s, shuffle=False).interleave(records)"
                   ".with_options(skip_corrupt_records=True).batch(2)"
                   % q(ctx.dir + "/*.rec"),
                   stderr="warning: worker 0 skipped 1 corrupt record (18 bytes)\n")
    expect_equal("run --stats", reader_counts(lines[-1]),
                 {"stats": [{"worker": 0, "records": 5, "record_bytes": 10,
                             "corrupt_records_skipped": 1, "corrupt_bytes_skipped": 18,
                             "errors_ignored": 0},
                            {"worker": 1, "records": 5, "record_bytes": 10,
                             "corrupt_records_skipped": 0, "corrupt_bytes_skipped": 0,
                             "errors_ignored": 0}]})
    expect_equal("run --stats: the line before is an end line", "end" in lines[-2], True)
    # A clean file: the counts are 0 and nothing is printed on stderr.
    expect_equal("inspect --skip-corrupt of a good file", ctx.ok("inspect", "--skip-corrupt", out_path),
                 [{"file": out_path, "compression": "NONE", "records": 5, "payload_bytes": 10,
                   "smallest": 2, "largest": 2, "corrupt_records_skipped": 0,
                   "corrupt_bytes_skipped": 0}])


script_case("records.skip_corrupt_counts", skip_corrupt_counts)


def max_record_bytes_option(ctx):
    """with_options(max_record_bytes=N): a record longer than N is DATA_LOSS naming the file,
    offset and claim; with skip_corrupt_records it is skipped."""
    path = ctx.write_file("sizes.rec", tfrecord_bytes([b"a", b"b" * 100, b"c"]))
    line = ctx.fails("DATA_LOSS", "run",
                     "records(%s).with_options(max_record_bytes=99).batch(4)" % q(path))
    if "claims 100 data bytes, more than the limit of 99" not in line or path not in line:
        raise CaseFailure("the DATA_LOSS line lacks the claim, limit or file: " + line)
    expect_names_offset(line, path, 17, 17)
    expect_equal("skipping the large record",
                 ctx.records("records(%s).with_options(max_record_bytes=99, "
                             "skip_corrupt_records=True).batch(4)" % q(path),
                             stderr="warning: worker 0 skipped 1 corrupt record (116 bytes)\n"),
                 [b"a", b"c"])
    expect_equal("at the limit", ctx.records(
        "records(%s).with_options(max_record_bytes=100).batch(4)" % q(path)),
        [b"a", b"b" * 100, b"c"])
    ctx.fails("INVALID_ARGUMENT", "run", "records(%s).with_options(max_record_bytes=0)" % q(path))


script_case("records.max_record_bytes_option", max_record_bytes_option)


def nonregular_files(ctx):
    """A FIFO is refused at once, without waiting for a writer, by inspect, by a reader and
    by a reader fed by list_files: FAILED_PRECONDITION naming it and the option that allows
    it. With allow_nonregular_files=True, /dev/zero meets the line limit instead of taking
    memory without bound."""
    fifo = ctx.path("pipe")
    os.mkfifo(fifo)
    for args in (("inspect", fifo),
                 ("run", "records(%s).batch(2)" % q(fifo)),
                 ("run", "list_files(%s).interleave(records).batch(2)" % q(ctx.path("pi*")))):
        line = ctx.fails("FAILED_PRECONDITION", *args)
        if ("'%s' is not a regular file (it is a FIFO" % fifo) not in line or \
                "allow_nonregular_files" not in line:
            raise CaseFailure("%s: the line lacks the file or the option: %s" % (args[0], line))
    line = ctx.fails("RESOURCE_EXHAUSTED", "run", "text_lines(\"/dev/zero\").with_options("
                     "allow_nonregular_files=True, max_record_bytes=4096).batch(2)")
    if "the line at byte offset 0 of '/dev/zero' is longer than 4096 bytes" not in line:
        raise CaseFailure("the RESOURCE_EXHAUSTED line lacks the file, offset or limit: " + line)
    ctx.fails("FAILED_PRECONDITION", "run", "text_lines(\"/dev/zero\").batch(2)")


script_case("records.nonregular_files", nonregular_files)


def skippable_zstd_frames(ctx):
    """A zstd file may hold skippable frames (user data; the first frame too): inspect detects
    the file as ZSTD, reads its records and reports the frames instead of calling it corrupt."""
    records = [b"alpha", b"beta", b"gamma"]
    plain = ctx.write_file("plain.rec", tfrecord_bytes(records))
    ctx.ok("convert", "--compression", "ZSTD", plain, ctx.path("z.zst"))
    def skippable(nibble, payload):
        return struct.pack("<II", 0x184D2A50 + nibble, len(payload)) + payload
    data = (skippable(0, b"metadata") + ctx.read_file("z.zst") + skippable(15, b"")
            + ctx.read_file("z.zst"))
    path = ctx.write_file("framed.zst", data)
    expect_equal("inspect", ctx.ok("inspect", path),
                 [{"file": path, "compression": "ZSTD", "records": 6, "payload_bytes": 28,
                   "smallest": 4, "largest": 5, "skippable_frames": 2, "skippable_bytes": 24}])
    expect_equal("run", ctx.records('records(%s, compression="ZSTD").batch(8)' % q(path)),
                 records + records)


script_case("records.skippable_zstd_frames", skippable_zstd_frames)


def file_policy_interleave(ctx):
    # Four files of three records each: with FILE sharding worker w reads files w and w+2,
    # interleaved one record at a time.
    for i in range(4):
        ctx.write_file("f%d.rec" % i, tfrecord_bytes([b"f%d-%d" % (i, j) for j in range(3)]))
    pipeline = "list_files(%s).interleave(records, cycle_length=2).batch(4)" % q(
        ctx.dir + "/*.rec")
    lines = ctx.ok("run", "--workers", "2", "--policy", "FILE", pipeline)
    expect_equal("run", lines, multi_worker([
        [r(["f0-%d" % j, "f2-%d" % j]) for j in range(3)],
        [r(["f1-%d" % j, "f3-%d" % j]) for j in range(3)]]))


script_case("records.list_files_interleave_file_policy", file_policy_interleave)


def interleave_reader_options(ctx):
    # ZSTD files read through interleave(records(compression=...)): the order of tf.data's
    # interleave with cycle_length=3, block_length=2 (a finished file's slot takes the next
    # file when the cycle comes back to it).
    for i in range(4):
        src = ctx.write_file("f%d.txt" % i, b"".join(b"f%d-%d\n" % (i, j) for j in range(3)))
        ctx.ok("write", "--compression", "ZSTD", "--lines", src, ctx.path("f%d.zst" % i))
    got = ctx.records("list_files(%s).interleave(records(compression=%s), cycle_length=3, "
                      "block_length=2).batch(20)" % (q(ctx.dir + "/*.zst"), q("ZSTD")))
    expect_equal("run", got, [b"f0-0", b"f0-1", b"f1-0", b"f1-1", b"f2-0", b"f2-1", b"f0-2",
                              b"f1-2", b"f2-2", b"f3-0", b"f3-1", b"f3-2"])
    # A list of patterns, text_lines as the reader, parallel reading kept deterministic.
    got = ctx.records("list_files([%s, %s]).interleave(text_lines, cycle_length=2, "
                      "num_parallel_calls=AUTOTUNE).batch(20)"
                      % (q(ctx.path("f1.txt")), q(ctx.path("f0.txt"))))
    expect_equal("text_lines", got, [b"f0-0", b"f1-0", b"f0-1", b"f1-1", b"f0-2", b"f1-2"])


script_case("records.interleave_reader_options", interleave_reader_options)


def fixed_length(ctx):
    path = ctx.write_file("fl.bin", b"HDR" + b"abcdefgh" + b"F")
    expect_equal("fixed_length_records",
                 ctx.records("fixed_length_records(%s, 2, header_bytes=3, footer_bytes=1)"
                             ".batch(8)" % q(path)),
                 [b"ab", b"cd", b"ef", b"gh"])
    expect_equal("through interleave",
                 ctx.records("from_tensor_slices([%s, %s]).interleave(fixed_length_records("
                             "record_bytes=4, header_bytes=3, footer_bytes=1), cycle_length=2)"
                             ".batch(8)" % (q(path), q(path))),
                 [b"abcd", b"abcd", b"efgh", b"efgh"])
    line = ctx.fails("DATA_LOSS", "run",
                     "fixed_length_records(%s, record_bytes=3, header_bytes=3, footer_bytes=1)"
                     % q(path))
    if path not in line:
        raise CaseFailure("the DATA_LOSS line does not name the file: " + line)


script_case("records.fixed_length_header_footer", fixed_length)


def write_convert_refusals(ctx):
    text = ctx.write_file("in.txt", b"a\nb\n")
    rec = ctx.path("a.rec")
    ctx.ok("write", "--lines", text, rec)
    before = ctx.read_file("a.rec")
    # An OUTPUT that is the input would be truncated before it is read.
    ctx.fails("INVALID_ARGUMENT", "convert", "--compression", "GZIP", rec, rec)
    ctx.fails("INVALID_ARGUMENT", "write", "--lines", text, text)
    expect_equal("a.rec after the refusals", ctx.read_file("a.rec"), before)
    # A missing input leaves OUTPUT alone.
    ctx.fails("NOT_FOUND", "write", "--lines", ctx.path("missing.txt"), rec)
    ctx.fails("NOT_FOUND", "convert", ctx.path("missing.rec"), ctx.path("b.rec"))
    ctx.fails("NOT_FOUND", "inspect", ctx.path("missing.rec"))
    expect_equal("a.rec after a missing input", ctx.read_file("a.rec"), before)
    # The tool codes its own file errors as the library does (one errno mapping): a symbolic
    # link loop is FAILED_PRECONDITION, not DATA_LOSS.
    os.symlink("loop.txt", ctx.path("loop.txt"))
    line = ctx.fails("FAILED_PRECONDITION", "write", "--lines", ctx.path("loop.txt"), rec)
    if "loop.txt" not in line:
        raise CaseFailure("the error must name the file: " + line)
    # The writer checks the level before it creates the file.
    line = ctx.fails("INVALID_ARGUMENT", "write", "--compression", "ZSTD", "--level", "99",
                     "--lines", text, ctx.path("c.rec"))
    if "99" not in line or os.path.exists(ctx.path("c.rec")):
        raise CaseFailure("a bad --level must be named and create no file: " + line)


script_case("records.write_convert_refusals", write_convert_refusals)

case("records.missing_file", [], 'records("no_such_dir/missing.rec").batch(2)',
     error_contains=("NOT_FOUND", "no_such_dir/missing.rec"))
case("records.list_files_no_match", [], 'list_files("no_such_dir/*.rec")',
     error_contains=("NOT_FOUND", "no_such_dir/*.rec"))
case("records.bad_compression", [], 'records("a.rec", compression="LZ4")',
     error=("INVALID_ARGUMENT",
            'records(): argument \'compression\' must be one of "NONE", "ZSTD", "GZIP" (any '
            'case), "" or None, got "LZ4"; usage: records(filenames, compression=None, '
            'buffer_size=None)'))
case("records.interleave_needs_file_names", [], "range(3).interleave(records)",
     error_prefix=("INVALID_ARGUMENT",
                   "interleave(): the input must be a dataset of file names (bytes scalars)"))
case("records.interleave_reader_takes_no_files", [],
     'from_tensor_slices(["a.rec"]).interleave(records(["a.rec"]))',
     error=("INVALID_ARGUMENT",
            "records() inside interleave() at position 41 takes no files: interleave reads "
            "each file name of its input with its own records()"))
# A file name the reader cannot open (here one with a NUL byte) fails in the library's reader
# interleave, on the consumer's thread and on the library's own threads alike.
case("records.interleave_callback_failure", [],
     'from_tensor_slices(["a\\x00b"]).interleave(records)',
     error=("INVALID_ARGUMENT", "interleave: a file name of the input contains a NUL byte"))
case("records.interleave_callback_failure_parallel", [],
     'from_tensor_slices(["a\\x00b"]).interleave(records, num_parallel_calls=2)',
     error=("INVALID_ARGUMENT", "interleave: a file name of the input contains a NUL byte"))
case("records.interleave_unknown_reader", [], 'from_tensor_slices(["a"]).interleave(range)',
     error_prefix=("INVALID_ARGUMENT", "interleave(): argument 'map_func' must be a reader"))
case("records.interleave_fixed_length_needs_record_bytes", [],
     'from_tensor_slices(["a"]).interleave(fixed_length_records)',
     error_prefix=("INVALID_ARGUMENT",
                   "fixed_length_records(): missing required argument 'record_bytes'"))

# ---- padded_batch, bucket_by_sequence_length, window, flat_map ------------------------------

# tf.data's padded_batch examples, with fill([x], x) made by window(x) over a repeat.
case("batching.padded_batch_longest", [],
     "range(1, 5).window(2, shift=1).padded_batch(2)",
     lines=single_worker([r([[1, 2], [2, 3]]), r([[3, 4], [4, 0]])]))
case("batching.padded_batch_shapes_values", [],
     "range(1, 4).window(2, shift=1).padded_batch(2, padded_shapes=[4], padding_values=-1, "
     "drop_remainder=True)",
     lines=single_worker([r([[1, 2, -1, -1], [2, 3, -1, -1]])]))
case("batching.padded_batch_per_component", [],
     'from_tensor_slices(([1, 2, 3], ["a", "b", "c"])).window(2).padded_batch(2, '
     'padded_shapes=([3], [None]), padding_values=(-1, "-"))',
     lines=single_worker([[[[[1, 2, -1], [3, -1, -1]], [["a", "b"], ["c", "-"]]]]]))
case("batching.padded_batch_spec", [],
     "range(6).window(3).padded_batch(2, padded_shapes=[5], drop_remainder=True)",
     command="spec",
     lines=[{"num_replicas_in_sync": 1, "components": [{"dtype": "int64", "shape": [2, 5]}]}])
case("batching.padded_batch_too_small", [],
     "range(6).window(3).padded_batch(2, padded_shapes=[2])",
     error_contains=("INVALID_ARGUMENT", "component 0 of input element 0"))
# Split over two workers, the last global batch partial: each worker's piece keeps the
# batch's width.
case("batching.padded_batch_two_workers", W2,
     "range(0, 10).window(3).padded_batch(2)",
     lines=multi_worker([[r([[0, 1, 2]]), r([[6, 7, 8]])], [r([[3, 4, 5]]), r([[9, 0, 0]])]]))
case("batching.bucket_by_sequence_length", [],
     "range(1, 9).window(3, shift=1, stride=2).bucket_by_sequence_length(0, [3], [2, 1])",
     lines=single_worker([r([[1, 3, 5]]), r([[2, 4, 6]]), r([[3, 5, 7]]), r([[4, 6, 8]]),
                          r([[5, 7], [6, 8]]), r([[7], [8]])]))
case("batching.bucket_pad_to_boundary", [],
     "range(1, 6).window(3, shift=2).bucket_by_sequence_length(0, [3, 5], [2, 2, 2], "
     "pad_to_bucket_boundary=True, padding_values=-1)",
     lines=single_worker([r([[1, 2, 3, -1], [3, 4, 5, -1]]), r([[5, -1]])]))
case("batching.bucket_sizes_checked", [],
     "range(6).window(2).bucket_by_sequence_length(0, [2], [1])",
     error_contains=("INVALID_ARGUMENT", "bucket_batch_sizes"))
case("batching.window_tf_examples", [], "range(7).window(3, stride=2)",
     lines=single_worker([r([0, 2, 4]), r([3, 5]), r([6])]))
case("batching.window_drop_remainder", [], "range(7).window(3, shift=2, drop_remainder=True)",
     lines=single_worker([r([0, 1, 2]), r([2, 3, 4]), r([4, 5, 6])]))
case("batching.window_spec", [], "range(7).window(3, shift=2, drop_remainder=True)",
     command="spec",
     lines=[{"num_replicas_in_sync": 1, "components": [{"dtype": "int64", "shape": [3]}]}])
case("batching.flat_map_needs_file_names", [], "range(3).flat_map(text_lines)",
     error_prefix=("INVALID_ARGUMENT",
                   "flat_map(): the input must be a dataset of file names (bytes scalars)"))


def flat_map_reader(ctx):
    # flat_map reads each file whole, in list order; FILE sharding over the reader gives each
    # worker its own files.
    for i in range(4):
        ctx.write_file("f%d.rec" % i, tfrecord_bytes([b"f%d-%d" % (i, j) for j in range(2)]))
    pattern = q(ctx.dir + "/*.rec")
    got = ctx.records("list_files(%s).flat_map(records).batch(20)" % pattern)
    expect_equal("flat_map", got, [b"f%d-%d" % (i, j) for i in range(4) for j in range(2)])
    lines = ctx.ok("run", "--workers", "2", "--policy", "FILE",
                   "list_files(%s).flat_map(records(buffer_size=4096)).batch(2)" % pattern)
    expect_equal("run", lines, multi_worker([
        [r([name]) for name in ("f0-0", "f0-1", "f2-0", "f2-1")],
        [r([name]) for name in ("f1-0", "f1-1", "f3-0", "f3-1")]]))


script_case("batching.flat_map_reader", flat_map_reader)


def shuffle_copies_in_stats(ctx):
    """bench --stats: a shuffle that copies records out of its oldest read buffers says how
    many bytes it copied (docs/records.md, "Memory behind a shuffle"); one over integers,
    which view no read buffer, says nothing of copies."""
    framed = [tfrecord_bytes([bytes([97 + i]) * 100]) for i in range(26)]
    path = ctx.write_file("many.rec", b"".join(framed[i % 26] for i in range(20000)))
    code, out, err = ctx.call("bench", "--stats", "records(%s).shuffle(3000, seed=1)" % q(path))
    rows = [line for line in out.splitlines() if " shuffle " in line]
    copied = re.search(r", copied (\d+) B$", rows[0]) if len(rows) == 1 else None
    if code != 0 or err or not copied or int(copied.group(1)) % 100 or \
            not 100000 <= int(copied.group(1)) <= 500000:
        raise CaseFailure("bench --stats: no shuffle row with 1,000 to 5,000 records' bytes "
                          "copied: %r" % out)
    code, out, err = ctx.call("bench", "--stats", "range(100).shuffle(10)")
    if code != 0 or err or "copied" in out:
        raise CaseFailure("bench --stats over integers: %r" % out)


script_case("stats.shuffle_copies", shuffle_copies_in_stats)


def reader_names_file_policy(ctx):
    # File names given as a tensor: FILE sharding shards the names that interleave's reader
    # opens, so worker w reads files w and w+2.
    names = []
    for i in range(4):
        names.append(ctx.write_file("f%d.txt" % i, b"".join(b"f%d-%d\n" % (i, j) for j in range(2))))
    pipeline = "from_tensor_slices([%s]).interleave(text_lines, cycle_length=1).batch(2)" % (
        ", ".join(q(n) for n in names))
    lines = ctx.ok("run", "--workers", "2", "--policy", "FILE", pipeline)
    expect_equal("run", lines, multi_worker([
        [r([name]) for name in ("f0-0", "f0-1", "f2-0", "f2-1")],
        [r([name]) for name in ("f1-0", "f1-1", "f3-0", "f3-1")]]))


script_case("batching.reader_names_file_policy", reader_names_file_policy)

case("records.with_options_empty", [], "range(3).with_options()",
     error_prefix=("INVALID_ARGUMENT", "with_options(): give at least one option"))
case("records.write_needs_input", [], None, command="write",
     error=("INVALID_ARGUMENT",
            "write needs --lines FILE or --chunk-size N FILE; usage: dinput write "
            "[--compression NONE|ZSTD|GZIP] [--level N] (--lines FILE | --chunk-size N FILE) "
            "OUTPUT"))
case("records.write_level_needs_compression", ["--level", "3", "--lines", "-", "out.rec"], None,
     command="write",
     error=("INVALID_ARGUMENT", "--level applies to --compression ZSTD or GZIP only"))
case("records.convert_bad_compression", ["--compression", "lz4", "a", "b"], None,
     command="convert",
     error=("INVALID_ARGUMENT", "--compression expects NONE, ZSTD or GZIP, got 'lz4'"))
case("records.inspect_needs_file", [], None, command="inspect",
     error=("INVALID_ARGUMENT",
            "missing FILE; usage: dinput inspect [--compression NONE|ZSTD|GZIP] [--skip-corrupt] "
            "FILE..."))


# ---- images (docs/images.md) ----------------------------------------------------------------

IMG_2x3 = "from_tensors([[[0.],[1.],[2.]],[[10.],[11.],[12.]]])"
case("images.resize_by_hand", [], IMG_2x3 + ".resize([2,1])",
     lines=single_worker([r([[[1.0]], [[11.0]]])]))
case("images.center_crop_normalize", [], IMG_2x3 + ".center_crop(1).normalize([2.0], [4.0])",
     lines=single_worker([r([[[-0.25]]])]))
case("images.spec", [], 'from_tensors("x").decode_jpeg(channels=3)'
     '.random_resized_crop(224, seed=1).random_flip_left_right(seed=2)'
     '.normalize([0.5,0.5,0.5],[0.25,0.25,0.25], dtype=float16).batch(4)', command="spec",
     lines=[{"num_replicas_in_sync": 1,
             "components": [{"dtype": "float16", "shape": [None, 224, 224, 3]}]}])
# Seed 3 flips the last three of six; the draws do not depend on num_parallel_calls.
_ROW, _FLIPPED = [[[0.0], [1.0], [2.0]]], [[[2.0], [1.0], [0.0]]]
case("images.flip_seeded_parallel", [],
     "from_tensors([[[0.],[1.],[2.]]]).repeat(6).random_flip_left_right(seed=3, "
     "num_parallel_calls=2)",
     lines=single_worker([r(_ROW)] * 3 + [r(_FLIPPED)] * 3))
case("images.corrupt_jpeg", [], 'from_tensors("garbage").decode_jpeg(channels=3)',
     error_contains=("INVALID_ARGUMENT",
                     "decode_jpeg: element 0 (component 0): not a valid JPEG image"))
case("images.bad_size", [], IMG_2x3 + ".resize([1,2,3])",
     error_contains=("INVALID_ARGUMENT", "resize(): argument 'size' must be [height, width]"))
case("images.bad_dtype", [], IMG_2x3 + ".cast(int8)",
     error_contains=("INVALID_ARGUMENT", "must be float32 or float16, got 'int8'"))
# ---- checkpoints: run --save-state / --restore-state, and state FILE ---------------------------

STATE_PIPELINE = "range(23).shuffle(5, seed=3).batch(4)"


def step_values(lines):
    """Every value of the step lines, in order."""
    values = []
    for line in lines:
        for replica in line.get("replicas", []):
            values.extend(replica[0])
    return values


def state_save_and_restore(ctx):
    full = ctx.ok("run", "--replicas", "2", STATE_PIPELINE)
    for k in (0, 2, 6):
        before = ctx.ok("run", "--replicas", "2", "--steps", str(k), "--save-state", "s",
                        STATE_PIPELINE)
        expect_equal("the end line before the save", before[-1],
                     {"worker": 0, "end": "STEPS_LIMIT", "steps": k})
        after = ctx.ok("run", "--replicas", "2", "--restore-state", "s", STATE_PIPELINE)
        # Steps are numbered on from the saved one: together, the uninterrupted run.
        expect_equal("saved after %d steps, then restored" % k, before[:-1] + after[:-1],
                     full[:-1])
        expect_equal("the end line after the restore", after[-1],
                     {"worker": 0, "end": "OUT_OF_RANGE", "steps": 6 - k})


script_case("state.save_and_restore", state_save_and_restore)


def state_other_worker_count(ctx):
    # Under DATA (range is not a file source) a state saved by 2 workers continues on 3, 1 or
    # 2: each element of the epoch once.
    before = ctx.ok("run", "--workers", "2", "--steps", "2", "--save-state", "s",
                    STATE_PIPELINE)
    for workers in ("3", "1", "2"):
        after = ctx.ok("run", "--workers", workers, "--restore-state", "s", STATE_PIPELINE)
        expect_equal("the values with %s workers after the restore" % workers,
                     sorted(step_values(before) + step_values(after)), list(range(23)))
        expect_equal("the first restored step's number", after[0]["step"], 2)


script_case("state.other_worker_count", state_other_worker_count)


def state_other_worker_count_file(ctx):
    # Under FILE each worker reads its own files: a state saved by 2 workers (inside the
    # epoch, with a shuffle holding elements) continues on 3 or 1, the rest of the files and
    # the held elements dealt out again, each element of the epoch once.
    values = []
    for f in range(6):
        lines = [str(100 * f + i) for i in range(3 + 2 * f)]
        values.extend(int(v) for v in lines)
        ctx.write_file("f%d.txt" % f, ("\n".join(lines) + "\n").encode())
    pipeline = ("list_files(%s, shuffle=False).interleave(text_lines, cycle_length=2)"
                ".shuffle(4, seed=1).batch(4)" % q(ctx.dir + "/*.txt"))
    before = ctx.ok("run", "--workers", "2", "--policy", "FILE", "--steps", "3",
                    "--save-state", "s", pipeline)
    for workers in ("3", "1", "2"):
        after = ctx.ok("run", "--workers", workers, "--policy", "FILE", "--restore-state", "s",
                       pipeline)
        expect_equal("the values with %s workers after the restore" % workers,
                     sorted(int(v) for v in step_values(before) + step_values(after)),
                     sorted(values))


script_case("state.other_worker_count_file", state_other_worker_count_file)


def state_describe(ctx):
    ctx.ok("run", "--workers", "2", "--steps", "1", "--save-state", "s", STATE_PIPELINE)
    lines = ctx.ok("state", "s")
    expect_equal("lines", len(lines), 1)
    d = lines[0]
    expect_equal("kind", d["kind"], "distributed_iterator")
    expect_equal("shape", (d["workers"], d["replicas_per_worker"], d["policy"], d["step"]),
                 (2, 1, "DATA", 1))
    expect_equal("bytes", d["bytes"], len(ctx.read_file("s")))
    expect_equal("the pipeline", d["parts"][0]["pipelines"][0]["state"]["pipeline"][1:],
                 ["batch(batch_size=4, drop_remainder=0)",
                  "shuffle(buffer_size=5, seed=3, reshuffle_each_iteration=1)",
                  "range(start=0, stop=23, step=1)"])


script_case("state.describe", state_describe)


def state_refusals(ctx):
    ctx.ok("run", "--steps", "1", "--save-state", "s", STATE_PIPELINE)
    err = ctx.fails("FAILED_PRECONDITION", "run", "--restore-state", "s",
                    "range(24).shuffle(5, seed=3).batch(4)")
    if "range(start=0, stop=23, step=1)" not in err:
        raise CaseFailure("the error does not name the operation that differs: " + err)
    ctx.fails("NOT_FOUND", "run", "--restore-state", "missing", STATE_PIPELINE)
    ctx.fails("NOT_FOUND", "state", "missing")
    data = bytearray(ctx.read_file("s"))
    data[len(data) // 2] ^= 0x20
    ctx.write_file("damaged", bytes(data))
    ctx.fails("DATA_LOSS", "state", "damaged")
    ctx.fails("DATA_LOSS", "run", "--restore-state", "damaged", STATE_PIPELINE)
    ctx.write_file("short", ctx.read_file("s")[:30])
    ctx.fails("DATA_LOSS", "state", "short")
    ctx.fails("INVALID_ARGUMENT", "spec", "--save-state", "s", STATE_PIPELINE)


script_case("state.refusals", state_refusals)


# ---- the runner -----------------------------------------------------------------------------


def strict_equal(a, b):
    """JSON equality that also tells ints, floats and bools apart."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(strict_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(strict_equal(a[k], b[k]) for k in a)
    return a == b


def make_files(directory):
    paths = {}
    for name, values in (("A", range(0, 6)), ("B", range(6, 12)), ("ALL", range(0, 12))):
        path = os.path.join(directory, name + ".txt")
        with open(path, "w") as f:
            f.write("".join("%d\n" % v for v in values))
        paths[name] = path
    return paths


def gpu_available(tool):
    proc = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=60)
    try:
        info = json.loads(proc.stdout.splitlines()[1])
        cuda = info.get("cuda", {})
        devices = cuda.get("devices")
        return bool(cuda.get("available")) and (devices is None or devices > 0)
    except (IndexError, ValueError, AttributeError):
        return False


def launchable(spec):
    """Whether a case runs `run --workers W` (W > 1): launch_case.py reruns it as W worker
    processes of `dinput launch`, expecting the same output."""
    args = spec["args"]
    return (spec.get("command", "run") == "run" and "script" not in spec and "--workers" in args
            and int(args[args.index("--workers") + 1]) > 1)


def run_tool(tool, spec, files, launch=False):
    command = spec.get("command", "run")
    args = list(spec["args"])
    if launch:
        # `run --workers W ARGS` becomes `launch -n W -- dinput run ARGS`.
        i = args.index("--workers")
        workers = args[i + 1]
        del args[i:i + 2]
        argv = [tool, "launch", "-n", workers, "--", tool, command] + args
    else:
        argv = [tool, command] + args
    if spec["pipeline"] is not None:
        pipeline = spec["pipeline"]
        for name, path in files.items():
            pipeline = pipeline.replace("{%s}" % name, json.dumps(path))
        argv.append(pipeline)
    proc = subprocess.run(argv, capture_output=True, timeout=120)
    return argv, proc


class SkipCase(Exception):
    pass


def check_script(spec, tool):
    with tempfile.TemporaryDirectory() as directory:
        try:
            spec["script"](Script(tool, directory))
        except SkipCase:
            return SKIP
        except CaseFailure as e:
            print("FAILED:\n- %s" % e)
            return 1
    print("passed")
    return 0


def check_case(name, tool, version, launch=False):
    spec = CASES[name]
    if "script" in spec:
        return check_script(spec, tool)
    if spec.get("needs_gpu") and not gpu_available(tool):
        print("skipped: no usable CUDA device in the build info")
        return SKIP
    with tempfile.TemporaryDirectory() as directory:
        files = make_files(directory)
        argv, proc = run_tool(tool, spec, files, launch)
        second = run_tool(tool, spec, files, launch)[1] if spec.get("deterministic") else None
    stdout = proc.stdout.decode("utf-8", "surrogateescape")
    stderr = proc.stderr.decode("utf-8", "surrogateescape")
    print("command:", " ".join(argv))
    print("exit status:", proc.returncode)
    print("stdout:\n" + stdout + "stderr:\n" + stderr)

    failures = []
    expected_error = spec.get("error") or spec.get("error_prefix") or spec.get("error_contains")
    if expected_error:
        status, text = expected_error
        if proc.returncode != 1:
            failures.append("exit status %d, expected 1" % proc.returncode)
        if "partial_lines" in spec:
            try:
                got = [json.loads(line) for line in stdout.splitlines()]
            except ValueError as e:
                got = None
                failures.append("stdout is not one JSON value per line: %s" % e)
            if got is not None and not strict_equal(got, spec["partial_lines"]):
                failures.append("stdout before the failure differs; expected %s" %
                                json.dumps(spec["partial_lines"]))
        elif stdout:
            failures.append("stdout must be empty on failure")
        lines = stderr.splitlines()
        if len(lines) != 1:
            failures.append("expected exactly one stderr line, got %d" % len(lines))
        line = lines[0] if lines else ""
        head = status + ": "
        if spec.get("error") and line != head + text:
            failures.append("stderr line differs; expected:\n  " + head + text)
        if spec.get("error_prefix") and not line.startswith(head + text):
            failures.append("stderr line must start with:\n  " + head + text)
        if spec.get("error_contains") and not (line.startswith(head) and text in line):
            failures.append("stderr line must start with %r and contain %r" % (head, text))
    else:
        if proc.returncode != 0:
            failures.append("exit status %d, expected 0" % proc.returncode)
        if stderr:
            failures.append("stderr must be empty on success")
        if spec.get("version"):
            expected_first = "dinput " + version
            out_lines = stdout.splitlines()
            if len(out_lines) != 2 or out_lines[0] != expected_first:
                failures.append("expected %r and a JSON line" % expected_first)
            else:
                try:
                    info = json.loads(out_lines[1])
                    if not isinstance(info, dict) or info.get("version") != version:
                        failures.append("build info must be an object with version %r" % version)
                except ValueError as e:
                    failures.append("build info is not JSON: %s" % e)
        elif "text_contains" in spec:
            if spec["text_contains"] not in stdout:
                failures.append("stdout must contain %r" % spec["text_contains"])
        elif "raw" in spec:
            if stdout != spec["raw"]:
                failures.append("stdout differs; expected exactly:\n" + spec["raw"])
        else:
            try:
                got = [json.loads(line) for line in stdout.splitlines()]
            except ValueError as e:
                got = None
                failures.append("stdout is not one JSON value per line: %s" % e)
            if got is not None and "lines" in spec:
                expected = spec["lines"]
                for i in range(max(len(got), len(expected))):
                    g = got[i] if i < len(got) else "<missing>"
                    e = expected[i] if i < len(expected) else "<none>"
                    if not strict_equal(g, e):
                        failures.append("line %d: got %s, expected %s" %
                                        (i + 1, json.dumps(g), json.dumps(e)))
                        break
            if got is not None and "check" in spec:
                problem = spec["check"](got)
                if problem:
                    failures.append(problem)
        if second is not None and second.stdout != proc.stdout:
            failures.append("a second run with the same seed printed different output")
    if failures:
        print("FAILED:\n- " + "\n- ".join(failures))
        return 1
    print("passed")
    return 0


script_case("stream.head_closes_pipe", streaming_head_case)
script_case("stream.multi_worker_head_closes_pipe", streaming_multi_worker_head_case)


# ---- tf.train.Example parsing ---------------------------------------------------------------


def _pb_varint(v):
    out = b""
    while v >= 0x80:
        out += bytes([v & 0x7F | 0x80])
        v >>= 7
    return out + bytes([v])


def _pb_field(number, payload):
    return _pb_varint(number << 3 | 2) + _pb_varint(len(payload)) + payload


def example_literal(i):
    """A chain-syntax string literal of an Example {id: [i], tags: i * ["x"]}."""
    entry = lambda key, feature: _pb_field(1, _pb_field(1, key) + _pb_field(2, feature))
    ex = _pb_field(1, entry(b"id", _pb_field(3, _pb_field(1, _pb_varint(i)))) +
                   entry(b"tags", _pb_field(1, b"".join(_pb_field(1, b"x") for _ in range(i)))))
    return '"' + "".join("\\x%02x" % c for c in ex) + '"'


EXAMPLES = "from_tensor_slices([%s])" % ", ".join(example_literal(i) for i in range(3))
ID_TAGS = '{"id": FixedLenFeature([], int64), "tags": VarLenFeature(bytes)}'

case("example.parse_example_ragged", [], EXAMPLES + ".batch(2).parse_example(" + ID_TAGS + ")",
     lines=[{"worker": 0, "step": 0, "replicas": [[[0, 1], ["x"], [0, 0, 1]]]},
            {"worker": 0, "step": 1, "replicas": [[[2], ["x", "x"], [0, 2]]]},
            {"worker": 0, "end": "OUT_OF_RANGE", "steps": 2}])
case("example.spec", [], EXAMPLES + ".batch(2).parse_example(" + ID_TAGS + ")", command="spec",
     lines=[{"num_replicas_in_sync": 1,
             "components": [{"dtype": "int64", "shape": [None]},
                            {"dtype": "bytes", "shape": [None]},
                            {"dtype": "int64", "shape": [None]}]}])
case("example.single_default_and_tf_names", [],
     EXAMPLES + '.take(1).parse_single_example({"id": tf.io.FixedLenFeature([], tf.int64), '
     '"w": FixedLenFeature([2], tf.float32, default_value=0.5)})',
     lines=[{"worker": 0, "step": 0, "replicas": [[0, [0.5, 0.5]]]},
            {"worker": 0, "end": "OUT_OF_RANGE", "steps": 1}])
case("example.sequence_spec", [],
     EXAMPLES + '.parse_sequence_example(context_features={"id": FixedLenFeature([], int64)}, '
     'sequence_features={"s": FixedLenSequenceFeature([2], float32, allow_missing=True)})',
     command="spec",
     lines=[{"num_replicas_in_sync": 1,
             "components": [{"dtype": "int64", "shape": []},
                            {"dtype": "float32", "shape": [None, 2]}]}])
case("example.missing_feature_names_record_and_key", [],
     EXAMPLES + '.parse_single_example({"w": FixedLenFeature([], float32)})',
     error_contains=("INVALID_ARGUMENT", "record 0 of the input, feature 'w'"))
case("example.unbatched_input_refused", [], EXAMPLES + ".parse_example(" + ID_TAGS + ")",
     error_contains=("INVALID_ARGUMENT", "bytes vector"))
case("example.unknown_feature_kind", [], EXAMPLES + '.parse_example({"id": Foo(int64)})',
     error_contains=("INVALID_ARGUMENT", "(feature 'id') must be FixedLenFeature"))
case("example.bad_dict_syntax", [], EXAMPLES + '.parse_example({"id" FixedLenFeature([], int64)})',
     error_contains=("INVALID_ARGUMENT", "expected ':'"))


def sequence_literal(steps):
    """A chain-syntax string literal of a SequenceExample whose feature list "s" has these
    steps (int64 lists)."""
    feature = lambda vs: _pb_field(3, _pb_field(1, b"".join(_pb_varint(v) for v in vs)))
    lst = b"".join(_pb_field(1, feature(step)) for step in steps)
    ex = _pb_field(2, _pb_field(1, _pb_field(1, b"s") + _pb_field(2, lst)))
    return '"' + "".join("\\x%02x" % c for c in ex) + '"'


# A feature list's VarLenFeature parsed one record at a time is values plus row splits:
# padded_batch batches it as a ragged value (docs/batching.md, "Ragged values").
SEQUENCES = "from_tensor_slices([%s])" % ", ".join(
    sequence_literal(s) for s in ([[1, 2], [3]], [[4]], []))
S_VARLEN = 'parse_sequence_example(sequence_features={"s": VarLenFeature(int64)})'
case("example.padded_batch_ragged", [], SEQUENCES + "." + S_VARLEN + ".padded_batch(2)",
     lines=[{"worker": 0, "step": 0, "replicas": [[[1, 2, 3, 4], [0, 2, 3], [0, 2, 3, 4]]]},
            {"worker": 0, "step": 1, "replicas": [[[], [0, 0], [0]]]},
            {"worker": 0, "end": "OUT_OF_RANGE", "steps": 2}])
case("example.padded_batch_ragged_spec", [], SEQUENCES + "." + S_VARLEN + ".padded_batch(2, drop_remainder=True)",
     command="spec",
     lines=[{"num_replicas_in_sync": 1,
             "components": [{"dtype": "int64", "shape": [None]},
                            {"dtype": "int64", "shape": [3]},
                            {"dtype": "int64", "shape": [None]}]}])
# ---- several datasets, cache and ignore_errors (docs/combine.md) ---------------------------

# zip's components form one flat tuple; the tuple form zip((a, b)) is the same.
case("combine.zip", [], "zip(range(3), range(10, 13))",
     lines=single_worker([[[0, 10]], [[1, 11]], [[2, 12]]]))
case("combine.zip_tuple_of_pipelines", [], "zip((range(2), range(5).batch(2)))",
     lines=single_worker([[[0, [0, 1]]], [[1, [2, 3]]]]))
case("combine.zip_spec", [], "zip(range(3), range(10).batch(2))", command="spec",
     lines=[{"num_replicas_in_sync": 1, "components": [{"dtype": "int64", "shape": []},
                                                       {"dtype": "int64", "shape": [None]}]}])
# Inputs batched alike: a batch of 4 split over 2 replicas, both components alike.
case("combine.zip_batched_n2", ["--replicas", "2"], "zip(range(8).batch(4), range(10, 18).batch(4))",
     lines=single_worker([[[[0, 1], [10, 11]], [[2, 3], [12, 13]]],
                          [[[4, 5], [14, 15]], [[6, 7], [16, 17]]]]))
case("combine.zip_batched_unlike_n2", ["--replicas", "2"], "zip(range(8).batch(4), range(8).batch(2))",
     error_contains=("INVALID_ARGUMENT", "component 0 has 4 rows and component 1 has 2"))
case("combine.zip_not_a_dataset", [], "zip(range(3), 4)",
     error_prefix=("INVALID_ARGUMENT", "zip(): argument 'dataset_2' must be a dataset"))
# tf.data: range(1, 4).concatenate(range(4, 8)); batches span the two.
case("combine.concatenate", [], "range(1, 4).concatenate(range(4, 8)).batch(3)",
     lines=single_worker([r([1, 2, 3]), r([4, 5, 6]), r([7])]))
case("combine.concatenate_incompatible", [], "range(3).concatenate(from_tensors(\"a\"))",
     error_contains=("INVALID_ARGUMENT", "concatenate: the elements of input 1 (bytes[])"))
case("combine.concatenate_spec", [], "range(4).batch(2, drop_remainder=True)"
     ".concatenate(range(3).batch(3))", command="spec",
     lines=[{"num_replicas_in_sync": 1, "components": [{"dtype": "int64", "shape": [None]}]}])
# tf.data's choose_from_datasets example, with int64 scalars for the words.
case("combine.choose", [], "choose_from_datasets([from_tensors(0).repeat(), from_tensors(1)"
     ".repeat(), from_tensors(2).repeat()], range(3).repeat(2))",
     lines=single_worker([r(0), r(1), r(2), r(0), r(1), r(2)]))
case("combine.choose_out_of_range", [],
     "choose_from_datasets([range(3), range(100, 103)], from_tensor_slices([1, 5]))",
     partial_lines=[{"worker": 0, "step": 0, "replicas": [[100]]}],
     error=("INVALID_ARGUMENT", "choose_from_datasets: the selector gave index 5, outside "
            "[0, 2) (there are 2 datasets)"))
# ignore_errors drops the element whose making failed (the bad index) and goes on; --stats
# counts it.
def ignore_errors_stats(lines):
    expected = single_worker([r(100), r(0)]) + [
        {"stats": [{"worker": 0, "records": 0, "record_bytes": 0, "corrupt_records_skipped": 0,
                    "corrupt_bytes_skipped": 0, "errors_ignored": 1}]}]
    got = lines[:-1] + [reader_counts(lines[-1])] if lines else lines
    return None if strict_equal(got, expected) else "got %r, expected %r" % (got, expected)


case("combine.ignore_errors", ["--stats"],
     "choose_from_datasets([range(3), range(100, 103)], from_tensor_slices([1, 5, 0]))"
     ".ignore_errors()",
     check=ignore_errors_stats)


def sample_seeded(ctx):
    """The same seed gives the same picks on every run; every element of both inputs comes
    out once (not stopping on an empty input); another seed gives other picks."""
    pipeline = ("sample_from_datasets([range(30), range(100, 130)], weights=[0.5, 0.5], "
                "seed=%d)")
    def values(seed):
        return [line["replicas"][0][0] for line in ctx.ok("run", pipeline % seed)[:-1]]
    first = values(7)
    expect_equal("the same seed", values(7), first)
    expect_equal("every element once", sorted(first), list(range(30)) + list(range(100, 130)))
    if values(8) == first:
        raise CaseFailure("seeds 7 and 8 gave the same picks")
    ctx.fails("INVALID_ARGUMENT", "run", "sample_from_datasets([range(3)], weights=[1, 2])")


script_case("combine.sample_seeded", sample_seeded)


def cache_file(ctx):
    """cache("FILE"): the first run writes the file, a second run reads it back (the same
    elements), and another pipeline's file is refused naming it."""
    path = ctx.path("elements.cache")
    pipeline = "range(5).batch(2).cache(%s)" % q(path)
    first = ctx.ok("run", pipeline)
    if not os.path.exists(path):
        raise CaseFailure("the cache file was not written")
    expect_equal("the second run", ctx.ok("run", pipeline), first)
    line = ctx.fails("FAILED_PRECONDITION", "run", "range(6).batch(2).cache(%s)" % q(path))
    if path not in line:
        raise CaseFailure("the error does not name the file: " + line)


script_case("combine.cache_file", cache_file)


def cache_file_per_worker(ctx):
    """cache("FILE") with --workers 2 under FILE sharding: each worker reads other files, so
    each caches to its own FILE.worker-W-of-2; a second run reads both back."""
    for i in range(4):
        ctx.write_file("f%d.rec" % i, tfrecord_bytes([b"f%d-%d" % (i, j) for j in range(3)]))
    path = ctx.path("elements.cache")
    pipeline = "list_files(%s).interleave(records, cycle_length=2).cache(%s).batch(4)" % (
        q(ctx.dir + "/*.rec"), q(path))
    want = multi_worker([[r(["f0-%d" % j, "f2-%d" % j]) for j in range(3)],
                         [r(["f1-%d" % j, "f3-%d" % j]) for j in range(3)]])
    expect_equal("the first run", ctx.ok("run", "--workers", "2", "--policy", "FILE", pipeline),
                 want)
    files = [path + ".worker-%d-of-2" % w for w in range(2)]
    for f in files:
        if not os.path.exists(f):
            raise CaseFailure("no cache file %s" % f)
    if os.path.exists(path):
        raise CaseFailure("the workers wrote the shared name %s" % path)
    if ctx.read_file(files[0]) == ctx.read_file(files[1]):
        raise CaseFailure("both workers cached the same elements")
    # Read back: the record files now hold other records, so the elements the second run
    # gives can only come from the two caches.
    for i in range(4):
        ctx.write_file("f%d.rec" % i, tfrecord_bytes([b"other-%d" % j for j in range(3)]))
    expect_equal("the second run", ctx.ok("run", "--workers", "2", "--policy", "FILE", pipeline),
                 want)


script_case("combine.cache_file_per_worker", cache_file_per_worker)


# ---- per-stage statistics and traces (docs/statistics.md) ----------------------------------


def stage_of(pipeline, name):
    return next(s for s in pipeline["stages"] if s["name"] == name)


def stats_run(ctx):
    """run --stats: the last line gives each worker's stages, with exact element and byte
    counts, and its get_next calls."""
    lines = ctx.ok("run", "--stats", "range(100).take(7).batch(7)")
    worker = lines[-1]["stats"][0]
    pipeline = worker["pipelines"][0]
    expect_equal("take's elements", stage_of(pipeline, "take")["elements"], 7)
    expect_equal("take's bytes", stage_of(pipeline, "take")["bytes"], 56)
    expect_equal("batch's elements", stage_of(pipeline, "batch")["elements"], 1)
    expect_equal("get_next calls (a step and the end)", worker["consumer"]["calls"], 2)
    expect_equal("schema", pipeline["schema"], "dinput.statistics/1")


def stats_bench(ctx):
    """bench --stats: the result line, then a table naming every stage and the waits."""
    code, out, err = ctx.call("bench", "--stats", "range(50).take(20).batch(5)")
    if code != 0 or err:
        raise CaseFailure("bench --stats: exit status %d, stderr %r" % (code, err))
    lines = out.splitlines()
    expect_equal("the result line", json.loads(lines[0])["rows"], 20)
    rows = [line.split() for line in lines[1:]]
    expect_equal("the header", rows[0][:4], ["worker", "pipeline", "stage", "operation"])
    by_name = {row[3]: row for row in rows[1:] if len(row) >= 9 and row[0] == "0"}
    for name, elements in (("batch", "4"), ("take", "20"), ("range", "20")):
        if name not in by_name or by_name[name][4] != elements:
            raise CaseFailure("bench --stats: no row of %s with %s elements: %r" % (name, elements, out))
    if not any(line.startswith("worker 0: get_next waited") for line in lines):
        raise CaseFailure("bench --stats: no line of get_next waits: %r" % out)


def stats_trace(ctx):
    """bench --trace FILE: valid Trace Event JSON with a track per stage and thread, a
    slice per element each stage produced (and per end), and one per get_next wait."""
    path = ctx.path("trace.json")
    lines = ctx.ok("bench", "--trace", path, "range(30).take(12).batch(4)")
    expect_equal("rows", lines[0]["rows"], 12)
    with open(path) as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    tracks = {e["tid"]: e["args"]["name"] for e in events
              if e["ph"] == "M" and e["name"] == "thread_name"}
    slices = [e for e in events if e["ph"] == "X"]
    for e in slices:
        if e["tid"] not in tracks or e["dur"] < 0 or e["ts"] < 0:
            raise CaseFailure("a slice on no named track, or negative: %r" % e)
    def count(suffix):
        return sum(e["args"]["elements"] if "args" in e else 1
                   for e in slices if e["name"].endswith(suffix))
    # A slice per call, with the elements it produced (batch reads take's rows in one call).
    expect_equal("take's slices", count(" take"), 12)
    expect_equal("range's slices", count(" range"), 12)
    expect_equal("batch's slices", count(" batch"), 3)
    expect_equal("get_next waits (3 steps and the end)", count("get_next wait"), 4)
    names = sorted(set(n.split(" (thread")[0] for n in tracks.values()))
    for want in ("get_next", "range", "take", "batch"):
        if not any(n.endswith(want) for n in names):
            raise CaseFailure("no track of %s: %r" % (want, names))
    expect_equal("dropped events", trace["otherData"]["dropped_events"], 0)
    if not any(e["ph"] == "M" and e["name"] == "process_name" for e in events):
        raise CaseFailure("no process (worker) name")


script_case("stats.run", stats_run)
script_case("stats.bench", stats_bench)
script_case("autotune.bench_stats", autotune_bench_stats)
script_case("stats.trace", stats_trace)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--tool")
    parser.add_argument("--version", dest="project_version")
    parser.add_argument("case", nargs="?")
    args = parser.parse_args()
    if args.list:
        print(";".join(CASES))
        return 0
    if not args.tool or not args.case or args.case not in CASES:
        parser.error("need --tool, --version and a known case name")
    return check_case(args.case, args.tool, args.project_version or "")


if __name__ == "__main__":
    sys.exit(main())
