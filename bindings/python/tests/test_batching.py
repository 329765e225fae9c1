import os
import tempfile
import unittest

import numpy as np

import util  # noqa: F401 (puts the package of this checkout on sys.path)
import dinput


def fills(lo, hi):
    """range(lo, hi) with each x made into x copies of x (tf.fill([x], x))."""
    return dinput.Dataset.range(lo, hi).map(lambda x: np.full(int(x), int(x), dtype=np.int64),
                                            element_spec=[("int64", [None])])


class BatchingTest(unittest.TestCase):
    def test_padded_batch(self):
        got = [x.tolist() for x in fills(1, 5).padded_batch(2)]
        self.assertEqual(got, [[[1, 0], [2, 2]], [[3, 3, 3, 0], [4, 4, 4, 4]]])
        got = [x.tolist() for x in fills(1, 5).padded_batch(2, padded_shapes=[5],
                                                            padding_values=-1)]
        self.assertEqual(got[0], [[1, -1, -1, -1, -1], [2, 2, -1, -1, -1]])
        with self.assertRaises(dinput.InvalidArgumentError) as cm:
            list(fills(1, 5).padded_batch(2, padded_shapes=[2]))
        self.assertIn("component 0 of input element 2", str(cm.exception))

    def test_bucket_and_window(self):
        got = [x.tolist() for x in fills(1, 7).bucket_by_sequence_length(0, [3, 5], [2, 2, 2])]
        self.assertEqual(got, [[[1, 0], [2, 2]], [[3, 3, 3, 0], [4, 4, 4, 4]],
                               [[5, 5, 5, 5, 5, 0], [6, 6, 6, 6, 6, 6]]])
        with self.assertRaises(dinput.InvalidArgumentError):
            fills(1, 7).bucket_by_sequence_length(0, [3, 5], [2])
        got = [x.tolist() for x in dinput.Dataset.range(7).window(3, stride=2)]
        self.assertEqual(got, [[0, 2, 4], [3, 5], [6]])

    def test_bucket_by_a_length_function(self):
        # range(8) by x % 3, boundaries [1, 2], two per bucket.
        ds = dinput.Dataset.range(8).bucket_by_sequence_length_fn(lambda x: int(x) % 3, [1, 2],
                                                                  [2, 2, 2])
        self.assertEqual([x.tolist() for x in ds], [[0, 3], [1, 4], [2, 5], [6], [7]])
        with self.assertRaises(dinput.InvalidArgumentError) as cm:
            list(dinput.Dataset.range(2).bucket_by_sequence_length_fn(lambda x: -1, [1], [1, 1]))
        self.assertIn("gave -1", str(cm.exception))
        with self.assertRaises(dinput.InvalidArgumentError):
            list(dinput.Dataset.range(2).bucket_by_sequence_length_fn(lambda x: 1.5, [1], [1, 1]))

    def test_flat_map_and_readers(self):
        flat = dinput.Dataset.range(1, 4).flat_map(
            lambda x: dinput.Dataset.range(10 * int(x), 10 * int(x) + int(x)), [("int64", [])])
        self.assertEqual([int(x) for x in flat], [10, 20, 21, 30, 31, 32])
        with tempfile.TemporaryDirectory() as d:
            for f in ("a", "b"):
                with open(os.path.join(d, f + ".txt"), "w") as out:
                    out.write("%sx\n%sy\n" % (f, f))
            names = dinput.Dataset.list_files([os.path.join(d, "*.txt")])
            got = [bytes(x) for x in names.interleave_reader(dinput.Reader.text_lines(),
                                                             cycle_length=2)]
            self.assertEqual(got, [b"ax", b"bx", b"ay", b"by"])
            got = [bytes(x) for x in
                   names.flat_map_reader(dinput.Reader.fixed_length_records(3))]
            self.assertEqual(got, [b"ax\n", b"ay\n", b"bx\n", b"by\n"])
            with self.assertRaises(dinput.InvalidArgumentError):
                names.flat_map_reader(dinput.Reader.fixed_length_records(0))
            with self.assertRaises(dinput.InvalidArgumentError):
                dinput.Dataset.range(3).interleave_reader(dinput.Reader.records())


if __name__ == "__main__":
    unittest.main()
