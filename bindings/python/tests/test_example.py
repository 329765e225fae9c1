import unittest

import numpy as np

import util  # noqa: F401 (puts the package of this checkout on sys.path)
import dinput


def _varint(v):
    out = bytearray()
    v &= (1 << 64) - 1
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _field(number, payload):
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def example(**features):
    """An Example of (kind, values) features: kind "bytes", "float" or "int64"."""
    entries = b""
    for key, (kind, values) in features.items():
        if kind == "bytes":
            feature = _field(1, b"".join(_field(1, v) for v in values))
        elif kind == "float":
            feature = _field(2, _field(1, np.asarray(values, "<f4").tobytes()))
        else:
            feature = _field(3, _field(1, b"".join(_varint(v) for v in values)))
        entries += _field(1, _field(1, key.encode()) + _field(2, feature))
    return _field(1, entries)


class ExampleTest(unittest.TestCase):
    def source(self):
        records = [example(id=("int64", [1]), tags=("bytes", [b"a"])),
                   example(tags=("bytes", [b"b", b"c"])),
                   example(id=("int64", [-3]), tags=("bytes", []))]
        return dinput.Dataset.from_tensor_slices(np.array(records, dtype=object))

    def test_parse_example_batches_and_ragged(self):
        features = {"id": dinput.FixedLenFeature([], "int64", default_value=0),
                    "tags": dinput.VarLenFeature("bytes")}
        ds = self.source().batch(2).parse_example(features)
        self.assertEqual(ds.element_spec,
                         [("int64", (None,)), ("bytes", (None,)), ("int64", (None,))])
        got = [[x.tolist() for x in e] for e in ds]
        self.assertEqual(got, [[[1, 0], [b"a", b"b", b"c"], [0, 1, 3]], [[-3], [], [0, 0]]])

    def test_single_and_errors(self):
        ds = self.source().parse_single_example({"id": dinput.FixedLenFeature([], "int64")})
        it = iter(ds)
        self.assertEqual(int(next(it)), 1)
        with self.assertRaises(dinput.InvalidArgumentError) as cm:
            next(it)
        self.assertIn("record 1 of the input", str(cm.exception))
        self.assertIn("'id'", str(cm.exception))
        with self.assertRaises(dinput.InvalidArgumentError):
            self.source().parse_example({"id": dinput.FixedLenFeature([], "int64")})
        seq = self.source().parse_sequence_example(
            sequence_features={"tags": dinput.FixedLenSequenceFeature([], "bytes", True)})
        self.assertEqual(seq.element_spec, [("bytes", (None,))])


if __name__ == "__main__":
    unittest.main()
