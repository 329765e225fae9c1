#!/usr/bin/python3
"""io.example.protobuf: dinput's Example parser against protobuf's own encoder and decoder.

Records are written with protobuf's Python library, from message classes that protoc
generates at run time out of .proto files written here from tf.train.Example's public field
numbers: a proto3 schema (packed lists) and a proto2 one (unpacked lists) that also carries
fields the Example schema does not know. Each record is decoded by protobuf (the proto3
classes, which skip the unknown fields) and by dinput's parse_example and
parse_single_example (through the Python binding); the values must agree exactly. Covered:
every dtype, empty and missing features, features with no list set, a key given twice
(records concatenated: protobuf merges them), unknown fields, packed and unpacked lists,
large values, SequenceExamples, and the errors (wrong type, wrong count, missing feature,
malformed record).

    example_protobuf_test.py SOURCE_DIR     (DINPUT_LIBRARY names the library to test)
"""

import importlib
import math
import os
import random
import struct
import subprocess
import sys
import tempfile

PROTO3 = """
syntax = "proto3";
package t3;
message BytesList { repeated bytes value = 1; }
message FloatList { repeated float value = 1; }
message Int64List { repeated int64 value = 1; }
message Feature {
  oneof kind { BytesList bytes_list = 1; FloatList float_list = 2; Int64List int64_list = 3; }
}
message Features { map<string, Feature> feature = 1; }
message FeatureList { repeated Feature feature = 1; }
message FeatureLists { map<string, FeatureList> feature_list = 1; }
message Example { Features features = 1; }
message SequenceExample { Features context = 1; FeatureLists feature_lists = 2; }
"""

# The same numbers in proto2: repeated scalars are not packed. Every message has an extra
# field the Example schema lacks (of each wire type somewhere).
PROTO2 = """
syntax = "proto2";
package t2;
message BytesList { repeated bytes value = 1; optional fixed64 junk = 9; }
message FloatList { repeated float value = 1; optional string junk = 9; }
message Int64List { repeated int64 value = 1; optional fixed32 junk = 9; }
message Feature {
  oneof kind { BytesList bytes_list = 1; FloatList float_list = 2; Int64List int64_list = 3; }
  optional int64 junk = 15;
}
message Features { map<string, Feature> feature = 1; optional bytes junk = 2; }
message FeatureList { repeated Feature feature = 1; optional int32 junk = 5; }
message FeatureLists { map<string, FeatureList> feature_list = 1; optional double junk = 3; }
message Example { optional Features features = 1; optional bytes junk = 100; }
message SequenceExample {
  optional Features context = 1; optional FeatureLists feature_lists = 2; optional int64 junk = 7;
}
"""


def compile_protos(tmp):
    for name, text in (("t3.proto", PROTO3), ("t2.proto", PROTO2)):
        with open(os.path.join(tmp, name), "w") as f:
            f.write(text)
    subprocess.check_call(["protoc", "--proto_path=" + tmp, "--python_out=" + tmp,
                           "t3.proto", "t2.proto"])
    sys.path.insert(0, tmp)
    return importlib.import_module("t3_pb2"), importlib.import_module("t2_pb2")


FAILURES = []


def expect(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def same_float(a, b):
    return struct.pack("<f", a) == struct.pack("<f", b)


INT_EDGES = [0, 1, -1, 2**31, -2**31, 2**63 - 1, -2**63, 300, -300]
FLOAT_EDGES = [0.0, -0.0, 1.5, -2.25, 3.4e38, 1e-45, math.inf, -math.inf]


def rand_ints(rng, n):
    return [rng.choice(INT_EDGES) if rng.random() < 0.3 else rng.randint(-2**63, 2**63 - 1)
            for _ in range(n)]


def rand_floats(rng, n):
    return [rng.choice(FLOAT_EDGES) if rng.random() < 0.3 else f32(rng.uniform(-1e6, 1e6))
            for _ in range(n)]


def rand_bytes(rng, n):
    out = []
    for _ in range(n):
        size = rng.choice([0, 1, 5, 17, 200, 70000]) if rng.random() < 0.2 else rng.randint(0, 12)
        out.append(bytes(rng.getrandbits(8) for _ in range(min(size, 64))) * (size // 64 + 1))
    return [b[:max(0, len(b))] for b in out]


def set_feature(feature, kind, values):
    """kind: 'i', 'f', 'b', or None for a Feature with no list set."""
    if kind == "i":
        feature.int64_list.value.extend(values)
    elif kind == "f":
        feature.float_list.value.extend(values)
    elif kind == "b":
        feature.bytes_list.value.extend(values)


def feature_values(feature):
    kind = feature.WhichOneof("kind")
    if kind is None:
        return None, []
    return kind, list(getattr(feature, kind).value)


# The spec: key -> (kind, dtype letter, shape, default or None, allow_missing)
SPEC = {
    "fi": ("fixed", "i", [2], [7, -8], False),
    "ff": ("fixed", "f", [], None, False),
    "fb": ("fixed", "b", [], [b"dflt"], False),
    "vi": ("var", "i", [], None, False),
    "vf": ("var", "f", [], None, False),
    "vb": ("var", "b", [], None, False),
    "sq": ("seq", "f", [2], [0.5], True),
}
DTYPE = {"i": "int64", "f": "float32", "b": "bytes"}
LIST = {"i": "int64_list", "f": "float_list", "b": "bytes_list"}


def random_values(rng, letter, n):
    return {"i": rand_ints, "f": rand_floats, "b": rand_bytes}[letter](rng, n)


def random_example(rng, t2, t3):
    """A serialized Example that fits SPEC (with the variations the spec allows)."""
    packed = rng.random() < 0.5
    mod = t3 if packed else t2
    ex = mod.Example()
    fmap = ex.features.feature
    for key, (kind, letter, shape, default, allow_missing) in SPEC.items():
        n = 1
        for d in shape:
            n *= d
        if kind == "fixed":
            if default is not None and rng.random() < 0.3:
                continue  # missing: the default
            set_feature(fmap[key], letter, random_values(rng, letter, n))
        elif kind == "var":
            r = rng.random()
            if r < 0.15:
                continue  # missing: empty
            if r < 0.25:
                fmap[key].SetInParent()  # a Feature with no list: empty
                continue
            set_feature(fmap[key], letter, random_values(rng, letter, rng.choice([0, 1, 3, 40])))
        else:
            if rng.random() < 0.2:
                continue
            set_feature(fmap[key], letter, random_values(rng, letter, n * rng.randint(0, 4)))
    # Features the spec does not ask for.
    for k in range(rng.randint(0, 3)):
        letter = rng.choice("ifb")
        set_feature(fmap["other%d" % k], letter, random_values(rng, letter, 2))
    if mod is t2 and rng.random() < 0.7:
        ex.junk = b"unknown"
        ex.features.junk = b"\x01\x02"
        for key in list(fmap.keys())[:2]:
            fmap[key].junk = -5
            kind = fmap[key].WhichOneof("kind")
            if kind == "int64_list":
                fmap[key].int64_list.junk = 9
            elif kind == "float_list":
                fmap[key].float_list.junk = "s"
            elif kind == "bytes_list":
                fmap[key].bytes_list.junk = 3
    data = ex.SerializeToString()
    if rng.random() < 0.2:
        # A key given twice: an earlier Example with other values (and another list kind)
        # for keys the record has, concatenated in front; protobuf keeps the later entries.
        first = t3.Example()
        keys = sorted(ex.features.feature.keys())
        for key in rng.sample(keys, min(3, len(keys))):
            set_feature(first.features.feature[key], rng.choice("ifb"), [])
        data = first.SerializeToString() + data
    return data


def expected(t3, records, batched):
    """What parse_example (batched) or parse_single_example gives, from protobuf's decoding."""
    decoded = []
    for r in records:
        ex = t3.Example()
        ex.ParseFromString(r)
        decoded.append(ex)
    out = []
    for key in sorted(SPEC):
        kind, letter, shape, default, allow_missing = SPEC[key]
        n = 1
        for d in shape:
            n *= d
        rows = []
        for ex in decoded:
            if key in ex.features.feature:
                lk, vals = feature_values(ex.features.feature[key])
                assert lk in (None, LIST[letter]), (key, lk)
                rows.append(vals)
            else:
                rows.append(None)
        if kind == "fixed":
            flat = []
            for v in rows:
                flat.extend(v if v is not None else (default * n if len(default) == 1 else default))
            out.append(flat)
        elif kind == "var":
            flat, splits = [], [0]
            for v in rows:
                flat.extend(v or [])
                splits.append(len(flat))
            out.append(flat)
            if batched:
                out.append(splits)
        else:
            steps = max([len(v or []) // n for v in rows] + [0])
            flat = []
            for v in rows:
                v = v or []
                flat.extend(v + default * (steps * n - len(v)))
            out.append(flat)
    return out


def as_list(x):
    import numpy as np
    a = np.asarray(x)
    if a.dtype == object:
        return [bytes(v) for v in a.reshape(-1)]
    return a.reshape(-1).tolist()


def same(got, want):
    if len(got) != len(want):
        return False
    for g, w in zip(got, want):
        if isinstance(w, float):
            if not same_float(g, w):
                return False
        elif g != w:
            return False
    return True


def features(dinput):
    out = {}
    for key, (kind, letter, shape, default, allow_missing) in SPEC.items():
        if kind == "fixed":
            out[key] = dinput.FixedLenFeature(shape, DTYPE[letter], default_value=default)
        elif kind == "var":
            out[key] = dinput.VarLenFeature(DTYPE[letter])
        else:
            out[key] = dinput.FixedLenSequenceFeature(shape, DTYPE[letter], allow_missing,
                                                      default_value=default)
    return out


def check_examples(dinput, np, t2, t3, rng):
    records = [random_example(rng, t2, t3) for _ in range(120)]
    src = dinput.Dataset.from_tensor_slices(np.array(records, dtype=object))
    spec = features(dinput)
    for batch in (1, 7, 32):
        got = [[as_list(c) for c in e] for e in src.batch(batch).parse_example(spec)]
        expect(len(got) == -(-len(records) // batch), "batch size %d: %d batches" % (batch, len(got)))
        for b, elem in enumerate(got):
            want = expected(t3, records[b * batch:(b + 1) * batch], True)
            expect(len(elem) == len(want), "batch %d: %d components" % (b, len(elem)))
            for c, (g, w) in enumerate(zip(elem, want)):
                expect(same(g, w), "batch size %d, batch %d, component %d differs" % (batch, b, c))
    singles = list(src.parse_single_example(spec))
    expect(len(singles) == len(records), "%d single records" % len(singles))
    for i, elem in enumerate(singles):
        want = expected(t3, [records[i]], False)
        for c, (g, w) in enumerate(zip([as_list(x) for x in elem], want)):
            expect(same(g, w), "record %d, component %d differs" % (i, c))


def check_sequence_examples(dinput, np, t2, t3, rng):
    records, decoded = [], []
    for _ in range(40):
        mod = t3 if rng.random() < 0.5 else t2
        se = mod.SequenceExample()
        se.context.feature["len"].int64_list.value.append(rng.randint(0, 9))
        steps = rng.randint(0, 4)
        frames = se.feature_lists.feature_list["frames"]
        words = se.feature_lists.feature_list["words"]
        for _ in range(steps):
            frames.feature.add().float_list.value.extend(rand_floats(rng, 2))
            words.feature.add().bytes_list.value.extend(rand_bytes(rng, rng.randint(0, 3)))
        if mod is t2:
            se.junk = 4
            frames.junk = 1
        data = se.SerializeToString()
        records.append(data)
        d = t3.SequenceExample()
        d.ParseFromString(data)
        decoded.append(d)
    src = dinput.Dataset.from_tensor_slices(np.array(records, dtype=object))
    ctx = {"len": dinput.FixedLenFeature([], "int64")}
    seq = {"frames": dinput.FixedLenSequenceFeature([2], "float32"),
           "words": dinput.VarLenFeature("bytes")}
    for i, elem in enumerate(src.parse_sequence_example(ctx, seq)):
        d = decoded[i]
        fl = d.feature_lists.feature_list
        want_frames = [v for f in fl["frames"].feature for v in f.float_list.value]
        want_words = [v for f in fl["words"].feature for v in f.bytes_list.value]
        splits = [0]
        for f in fl["words"].feature:
            splits.append(splits[-1] + len(f.bytes_list.value))
        got = [as_list(x) for x in elem]
        expect(got[0] == [d.context.feature["len"].int64_list.value[0]], "seq %d len" % i)
        expect(same(got[1], want_frames), "seq %d frames" % i)
        expect(got[2] == want_words, "seq %d words" % i)
        expect(got[3] == splits, "seq %d word splits" % i)
    # Batches: frames padded to the longest sequence, words as values with nested row splits
    # (records -> steps, steps -> values).
    batch = 6
    elems = list(src.batch(batch).parse_sequence_example(ctx, seq))
    expect(len(elems) == -(-len(records) // batch), "%d sequence batches" % len(elems))
    for b, elem in enumerate(elems):
        part = decoded[b * batch:(b + 1) * batch]
        got = [as_list(x) for x in elem]
        lists = [d.feature_lists.feature_list for d in part]
        steps = max([len(fl["frames"].feature) for fl in lists] + [0])
        want_frames, want_words, outer, inner = [], [], [0], [0]
        for fl in lists:
            frames = [v for f in fl["frames"].feature for v in f.float_list.value]
            want_frames += frames + [0.0] * (steps * 2 - len(frames))
            for f in fl["words"].feature:
                want_words += list(f.bytes_list.value)
                inner.append(len(want_words))
            outer.append(outer[-1] + len(fl["words"].feature))
        expect(got[0] == [d.context.feature["len"].int64_list.value[0] for d in part],
               "sequence batch %d len" % b)
        expect(np.asarray(elem[1]).shape == (len(part), steps, 2), "sequence batch %d shape" % b)
        expect(same(got[1], want_frames), "sequence batch %d frames" % b)
        expect(got[2] == want_words, "sequence batch %d words" % b)
        expect(got[3] == outer, "sequence batch %d outer splits" % b)
        expect(got[4] == inner, "sequence batch %d inner splits" % b)


def check_errors(dinput, np, t3, rng):
    spec = {"x": dinput.FixedLenFeature([2], "int64")}

    def parse_error(record):
        src = dinput.Dataset.from_tensor_slices(np.array([record], dtype=object))
        try:
            list(src.parse_single_example(spec))
        except dinput.InvalidArgumentError as e:
            return str(e)
        return None

    good = t3.Example()
    good.features.feature["x"].int64_list.value.extend([1, 2])
    expect(parse_error(good.SerializeToString()) is None, "a good record fails")
    wrong_type = t3.Example()
    wrong_type.features.feature["x"].float_list.value.extend([1, 2])
    m = parse_error(wrong_type.SerializeToString())
    expect(m is not None and "'x'" in m and "float_list" in m, "wrong type: %r" % m)
    wrong_count = t3.Example()
    wrong_count.features.feature["x"].int64_list.value.extend([1, 2, 3])
    m = parse_error(wrong_count.SerializeToString())
    expect(m is not None and "has 3 values" in m, "wrong count: %r" % m)
    missing = t3.Example()
    missing.features.feature["y"].int64_list.value.append(1)
    m = parse_error(missing.SerializeToString())
    expect(m is not None and "missing" in m, "missing: %r" % m)
    # Every cut that protobuf refuses, dinput refuses too.
    big = t3.Example()
    big.features.feature["x"].int64_list.value.extend([2**40, -1])
    big.features.feature["s"].bytes_list.value.extend([b"abc", b"de"])
    data = big.SerializeToString()
    refused = 0
    for n in range(1, len(data)):
        try:
            t3.Example().ParseFromString(data[:n])
            continue
        except Exception:
            refused += 1
        m = parse_error(data[:n])
        expect(m is not None, "a cut at %d that protobuf refuses is accepted" % n)
    expect(refused > 0, "no cut was refused by protobuf")


def main():
    src_dir = sys.argv[1]
    sys.path.insert(0, os.path.join(src_dir, "bindings", "python"))
    import numpy as np
    import dinput
    with tempfile.TemporaryDirectory() as tmp:
        t3, t2 = compile_protos(tmp)
        rng = random.Random(20261126)
        check_examples(dinput, np, t2, t3, rng)
        check_sequence_examples(dinput, np, t2, t3, rng)
        check_errors(dinput, np, t3, rng)
    print("%d failures" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
