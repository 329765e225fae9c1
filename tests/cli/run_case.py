#!/usr/bin/env python3
"""Conformance tests of the `dinput` command-line tool (DESIGN.md section 4).

Each case runs the tool once and compares every stdout line, parsed as JSON, with the value
SPEC.md prescribes (ints, floats and bools must match in type too, so an int64 printed as
1.0 fails). Failures must exit with status 1, print nothing on stdout and exactly one stderr
line "<STATUS_NAME>: <message>".

  run_case.py --list                      print the case names (CMake registers one test each)
  run_case.py --tool PATH --version V NAME   run one case; exit 0 pass, 1 fail, 77 skipped
"""

import argparse
import json
import os
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
    needs_gpu=True       skipped unless the build info says a CUDA device is usable
    command=NAME         subcommand (default "run"); pipeline None: no pipeline argument
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


# ---- SPEC 3.3: the example table (single worker, default policy AUTO -> DATA) ----------------

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

# ---- SPEC 3.3: balanced split (policy OFF) ---------------------------------------------------

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

# ---- SPEC 3.4: auto-sharding across workers (W=2, R=1) --------------------------------------

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

# ---- SPEC 6: partial batches and the end of data across workers -----------------------------

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
     error=("INVALID_ARGUMENT", "unknown option --frobnicate for 'run' (see dinput help)"))
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
case("pipeline.unknown_function", [], "range(6).foo(1)",
     error_prefix=("INVALID_ARGUMENT", "unknown function 'foo' at position 9"))
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
case("pipeline.too_many_arguments", [], "range(6).batch(4, True, 1)",
     error_prefix=("INVALID_ARGUMENT", "batch(): takes at most 2 positional arguments, got 3"))
case("pipeline.missing_argument", [], "range(6).batch()",
     error_prefix=("INVALID_ARGUMENT", "batch(): missing required argument 'batch_size'"))
case("pipeline.unexpected_keyword", [], "range(6).batch(4, foo=1)",
     error_prefix=("INVALID_ARGUMENT", "batch(): unexpected keyword argument 'foo' at position 18"))
case("pipeline.range_without_arguments", [], "range()",
     error_prefix=("INVALID_ARGUMENT", "range(): missing required argument"))
case("pipeline.records_unimplemented", [], 'records(["a.rec"]).batch(2)',
     error=("UNIMPLEMENTED", "records() is not implemented yet in the dinput tool"))
case("pipeline.interleave_unimplemented", [], 'list_files("*.rec").interleave(records)',
     error=("UNIMPLEMENTED", "list_files() is not implemented yet in the dinput tool"))
case("pipeline.library_rejects_batch_size", [], "range(6).batch(0)",
     error_prefix=("INVALID_ARGUMENT", ""))


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


def run_tool(tool, spec, files):
    command = spec.get("command", "run")
    argv = [tool, command] + list(spec["args"])
    if spec["pipeline"] is not None:
        pipeline = spec["pipeline"]
        for name, path in files.items():
            pipeline = pipeline.replace("{%s}" % name, json.dumps(path))
        argv.append(pipeline)
    proc = subprocess.run(argv, capture_output=True, timeout=120)
    return argv, proc


def check_case(name, tool, version):
    spec = CASES[name]
    if spec.get("needs_gpu") and not gpu_available(tool):
        print("skipped: no usable CUDA device in the build info")
        return SKIP
    with tempfile.TemporaryDirectory() as directory:
        files = make_files(directory)
        argv, proc = run_tool(tool, spec, files)
        second = run_tool(tool, spec, files)[1] if spec.get("deterministic") else None
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
        if stdout:
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
