import os
import tempfile
import unittest

import util  # noqa: F401 (puts the package of this checkout on sys.path)
import dinput


def ints(values):
    return [int(v) for v in values]


class CombineTest(unittest.TestCase):
    def test_zip_and_concatenate(self):
        a, b = dinput.Dataset.range(1, 4), dinput.Dataset.range(4, 7)
        z = dinput.Dataset.zip(a, b)
        self.assertEqual(z.cardinality, 3)
        self.assertEqual([(int(x), int(y)) for x, y in z], [(1, 4), (2, 5), (3, 6)])
        self.assertEqual(len(list(dinput.Dataset.zip((a, b, dinput.Dataset.range(2))))), 2)
        self.assertEqual(ints(a.concatenate(dinput.Dataset.range(4, 8))), list(range(1, 8)))
        with self.assertRaises(dinput.InvalidArgumentError):
            dinput.Dataset.zip()

    def test_sample_and_choose(self):
        a, b = dinput.Dataset.range(20), dinput.Dataset.range(100, 120)
        one = ints(dinput.Dataset.sample_from_datasets([a, b], [1, 1], seed=5))
        self.assertEqual(one, ints(dinput.Dataset.sample_from_datasets([a, b], seed=5)))
        self.assertEqual(sorted(one), list(range(20)) + list(range(100, 120)))
        with self.assertRaises(dinput.InvalidArgumentError) as cm:
            dinput.Dataset.sample_from_datasets([a, b], [1, -1], seed=5)
        self.assertIn("weight 1", str(cm.exception))
        sel = dinput.Dataset.from_tensor_slices([1, 0, 1])
        self.assertEqual(ints(dinput.Dataset.choose_from_datasets([a, b], sel)), [100, 0, 101])
        bad = dinput.Dataset.from_tensor_slices([0, 9])
        with self.assertRaises(dinput.InvalidArgumentError) as cm:
            list(dinput.Dataset.choose_from_datasets([a, b], bad))
        self.assertIn("index 9", str(cm.exception))

    def test_cache_and_ignore_errors(self):
        calls = []

        def fail_on_3(x):
            calls.append(int(x))
            if int(x) % 3 == 0:
                raise ValueError("a multiple of 3")
            return x
        ds = dinput.Dataset.range(7).map(fail_on_3).ignore_errors()
        it = iter(ds)
        self.assertEqual(ints(it), [1, 2, 4, 5])
        self.assertEqual(it.statistic("errors_ignored"), 3)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "cache")
            del calls[:]
            first = ints(ds.cache(path))
            self.assertEqual(len(calls), 7)
            del calls[:]
            self.assertEqual(ints(ds.cache(path)), first)
            self.assertEqual(calls, [])
        del calls[:]
        self.assertEqual(len(list(ds.cache().repeat(3))), 12)
        self.assertEqual(len(calls), 7)


if __name__ == "__main__":
    unittest.main()
