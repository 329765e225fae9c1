import os
import unittest

import numpy as np

import util  # noqa: F401 (puts the package of this checkout on sys.path)
import dinput


def ints(values):
    return [int(v) for v in values]


class DatasetTest(unittest.TestCase):
    def test_range_and_transforms(self):
        self.assertEqual(ints(dinput.Dataset.range(5)), [0, 1, 2, 3, 4])
        self.assertEqual(ints(dinput.Dataset.range(2, 10, 3)), [2, 5, 8])
        ds = dinput.Dataset.range(10).skip(2).take(5).repeat(2)
        self.assertEqual(ints(ds), [2, 3, 4, 5, 6] * 2)
        self.assertEqual(len(ds), 10)
        self.assertEqual(dinput.Dataset.range(3).repeat().cardinality,
                         dinput.INFINITE_CARDINALITY)
        self.assertEqual(ints(dinput.Dataset.range(3).repeat().take(7)), [0, 1, 2, 0, 1, 2, 0])
        self.assertEqual(ints(dinput.Dataset.range(10).shard(3, 1)), [1, 4, 7])
        self.assertEqual(ints(dinput.Dataset.range(4).prefetch(2)), [0, 1, 2, 3])

    def test_batch(self):
        b = list(dinput.Dataset.range(10).batch(4))
        self.assertEqual([x.tolist() for x in b], [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]])
        self.assertEqual(len(list(dinput.Dataset.range(10).batch(4, drop_remainder=True))), 2)
        spec = dinput.Dataset.range(10).batch(4).element_spec
        self.assertEqual(spec, [("int64", (None,))])
        spec = dinput.Dataset.range(10).batch(4, drop_remainder=True).element_spec
        self.assertEqual(spec[0].shape, (4,))
        b = list(dinput.Dataset.range(10).batch(5, num_parallel_calls=2).unbatch())
        self.assertEqual(ints(b), list(range(10)))

    def test_shuffle(self):
        a = ints(dinput.Dataset.range(100).shuffle(100, seed=7))
        self.assertEqual(sorted(a), list(range(100)))
        self.assertNotEqual(a, list(range(100)))
        self.assertEqual(a, ints(dinput.Dataset.range(100).shuffle(100, seed=7)))
        ds = dinput.Dataset.range(100).shuffle(100, seed=7, reshuffle_each_iteration=False)
        self.assertEqual(ints(ds), ints(ds))

    def test_from_tensor_slices(self):
        x = np.arange(12, dtype=np.float32).reshape(6, 2)
        y = ["a", "b", "c", "d", "e", "f"]
        ds = dinput.Dataset.from_tensor_slices((x, y))
        self.assertEqual(len(ds), 6)
        self.assertEqual(ds.element_spec, [("float32", (2,)), ("bytes", ())])
        got = list(ds)
        np.testing.assert_array_equal(got[3][0], x[3])
        self.assertEqual(got[3][1], b"d")
        batches = list(ds.batch(4))
        self.assertEqual(batches[0][0].shape, (4, 2))
        self.assertEqual(list(batches[1][1]), [b"e", b"f"])
        self.assertEqual(ints(dinput.Dataset.from_tensor_slices([5, 6])), [5, 6])
        one = list(dinput.Dataset.from_tensors(([1, 2], 3.0)))
        self.assertEqual(len(one), 1)
        self.assertEqual(one[0][0].tolist(), [1, 2])

    def test_iterator_api(self):
        it = dinput.Dataset.range(2).iterator()
        self.assertEqual(int(it.get_next()), 0)
        opt = it.get_next_as_optional()
        self.assertTrue(opt.has_value())
        self.assertEqual(int(opt.get_value()), 1)
        opt = it.get_next_as_optional()
        self.assertFalse(opt.has_value())
        with self.assertRaises(dinput.InvalidArgumentError):
            opt.get_value()
        with self.assertRaises(dinput.OutOfRangeError):
            it.get_next()
        self.assertEqual(it.element_spec, [("int64", ())])
        it.close()
        it = dinput.Dataset.range(10).repeat().iterator()
        it.cancel()
        with self.assertRaises(dinput.CancelledError):
            it.get_next()

    def test_cancel_from_another_thread(self):
        # get_next releases the GIL while it waits, so another Python thread can cancel it.
        import threading
        release = threading.Event()

        def slow():
            yield 0
            release.wait(30)
            yield 1
        it = dinput.Dataset.from_generator(slow, [("int64", [])]).prefetch(1).iterator()
        self.assertEqual(int(it.get_next()), 0)
        timer = threading.Timer(0.2, it.cancel)
        timer.start()
        try:
            with self.assertRaises(dinput.CancelledError):
                it.get_next()
        finally:
            release.set()
            timer.join()
        it.close()

    def test_options(self):
        o = dinput.Options(auto_shard_policy="data", deterministic=True, max_record_bytes=1 << 20)
        self.assertEqual(ints(dinput.Dataset.range(3).with_options(o)), [0, 1, 2])
        with self.assertRaises(ValueError):
            dinput.Dataset.range(3).with_options(dinput.Options(auto_shard_policy="bogus"))
        with self.assertRaises(dinput.InvalidArgumentError):
            dinput.Dataset.range(3).with_options(dinput.Options(max_record_bytes=-5))

    def test_map_filter(self):
        ds = dinput.Dataset.range(10).map(lambda x: x * 2).filter(lambda x: x % 3 == 0)
        self.assertEqual(ints(ds), [0, 6, 12, 18])
        ds = dinput.Dataset.range(4).map(lambda x: (x, (x / 2).astype(np.float32)),
                                         element_spec=[("int64", ()), ("float32", ())])
        self.assertEqual([float(b) for _, b in ds], [0.0, 0.5, 1.0, 1.5])
        ds = dinput.Dataset.range(100).map(lambda x: x + 1, num_parallel_calls=4)
        self.assertEqual(ints(ds), list(range(1, 101)))
        ds = dinput.Dataset.range(100).map(lambda x: x + 1, num_parallel_calls=4,
                                           deterministic=False)
        self.assertEqual(sorted(ints(ds)), list(range(1, 101)))
        b = dinput.Dataset.range(10).batch(4, num_parallel_calls=2, deterministic=True)
        self.assertEqual(len(list(b)), 3)

    def test_map_many(self):
        r = dinput.Dataset.range(40)
        want = ints(r.map(lambda x: -x))
        for parallel in (None, 4, dinput.AUTOTUNE):
            runs = []

            def negate(xs):
                runs.append(len(xs))
                return [-x for x in xs]
            self.assertEqual(ints(r.map_many(negate, 7, num_parallel_calls=parallel)), want)
            self.assertEqual(sorted(runs), [5, 7, 7, 7, 7, 7])
            if parallel is None:
                self.assertEqual(runs[-1], 5)
        ds = r.map_many(lambda xs: [x + 1 for x in xs], 3, num_parallel_calls=4,
                        deterministic=False)
        self.assertEqual(sorted(ints(ds)), list(range(1, 41)))
        ds = dinput.Dataset.range(4).map_many(
            lambda xs: [(x, (x / 2).astype(np.float32)) for x in xs], 3,
            element_spec=[("int64", ()), ("float32", ())])
        self.assertEqual([float(b) for _, b in ds], [0.0, 0.5, 1.0, 1.5])

        # An exception fails the iteration at the first element of its list.
        def refuse_20(xs):
            if any(int(x) == 20 for x in xs):
                raise KeyError("value 20")
            return xs
        got = []
        with self.assertRaises(dinput.DinputError) as cm:
            for x in r.map_many(refuse_20, 8, num_parallel_calls=2):
                got.append(int(x))
        self.assertEqual(got, list(range(16)))
        self.assertIn("value 20", str(cm.exception))
        # A wrong number of results, or a result off the spec, names what is wrong.
        with self.assertRaises(dinput.DinputError) as cm:
            list(r.map_many(lambda xs: xs[1:], 4))
        self.assertIn("list of 4 results", str(cm.exception))
        with self.assertRaises(dinput.InvalidArgumentError) as cm:
            list(r.map_many(lambda xs: [np.float32(1)] * len(xs), 4))
        self.assertIn("output 0", str(cm.exception))
        with self.assertRaises(ValueError):
            r.map_many(lambda xs: xs, 0)

    def test_from_generator(self):
        calls = []

        def gen():
            calls.append(1)
            for i in range(5):
                yield (i, np.full(2, i, np.float32))
        ds = dinput.Dataset.from_generator(gen, [("int64", []), ("float32", [2])])
        self.assertEqual(ds.cardinality, dinput.UNKNOWN_CARDINALITY)
        got = list(ds.batch(2))
        self.assertEqual([b[0].tolist() for b in got], [[0, 1], [2, 3], [4]])
        self.assertEqual(got[2][1].tolist(), [[4.0, 4.0]])
        self.assertEqual(len(list(ds)), 5)
        self.assertEqual(len(calls), 2)  # one generator per iterator

        def bad():
            yield 1
            raise RuntimeError("generator broke")
        with self.assertRaises(dinput.UnknownError) as cm:
            list(dinput.Dataset.from_generator(bad, [("int64", [])]))
        self.assertIn("generator broke", str(cm.exception))
        with self.assertRaises(dinput.InvalidArgumentError):
            list(dinput.Dataset.from_generator(lambda: iter([1.5]), [("int64", [])]))

    def test_record_writer(self):
        with util.tempdir() as d:
            for comp in (None, "zstd", "gzip"):
                path = os.path.join(d, "w-%s.rec" % comp)
                with dinput.RecordWriter(path, compression=comp, level=1) as w:
                    for k in range(3):
                        w.write(b"rec%d" % k)
                    w.flush()
                self.assertEqual(list(dinput.Dataset.records(path, compression=comp)),
                                 [b"rec0", b"rec1", b"rec2"])
            # An exception inside the with block discards the file.
            path = os.path.join(d, "discarded.rec")
            with self.assertRaises(KeyError):
                with dinput.RecordWriter(path) as w:
                    w.write(b"x")
                    raise KeyError("stop")
            self.assertFalse(os.path.exists(path))
            with self.assertRaises(dinput.InvalidArgumentError):
                dinput.RecordWriter(os.path.join(d, "bad.rec"), compression="zstd", level=99)
            with self.assertRaises(dinput.NotFoundError):
                dinput.RecordWriter(os.path.join(d, "no", "such", "dir.rec"))

    def test_rebatch_and_fixed_length(self):
        got = [b.tolist() for b in dinput.Dataset.range(10).batch(4).rebatch([3])]
        self.assertEqual(got, [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]])
        with util.tempdir() as d:
            path = os.path.join(d, "fixed.bin")
            with open(path, "wb") as f:
                f.write(b"HHabcdefT")
            ds = dinput.Dataset.fixed_length_records(path, 3, header_bytes=2, footer_bytes=1)
            self.assertEqual(list(ds), [b"abc", b"def"])

    def test_files_pipeline(self):
        with util.tempdir() as d:
            for i in range(3):
                util.write_records(d, "part-%d.rec" % i, [b"r%d-%d" % (i, k) for k in range(4)])
            with open(os.path.join(d, "lines.txt"), "w") as f:
                f.write("one\ntwo\r\nthree")
            files = dinput.Dataset.list_files(os.path.join(d, "part-*.rec"))
            self.assertEqual(list(files), [os.path.join(d, "part-%d.rec" % i).encode()
                                           for i in range(3)])
            recs = files.interleave(lambda f: dinput.Dataset.records([f]), cycle_length=3,
                                    block_length=1)
            self.assertEqual(recs.element_spec, [("bytes", ())])
            got = list(recs)
            self.assertEqual(got[:3], [b"r0-0", b"r1-0", b"r2-0"])
            self.assertEqual(len(got), 12)
            shuffled = files.interleave(lambda f: dinput.Dataset.records([f]),
                                        element_spec=[("bytes", [])], num_parallel_calls=2,
                                        deterministic=False)
            self.assertEqual(sorted(shuffled), sorted(got))
            with self.assertRaises(ValueError):
                dinput.Dataset.records([os.path.join(d, "part-0.rec")], compression="lz4")
            # A plain file read as gzip is a data error naming the file.
            with self.assertRaises(dinput.DinputError) as cm:
                list(dinput.Dataset.records([os.path.join(d, "part-0.rec")], compression="gzip"))
            self.assertIn("part-0.rec", str(cm.exception))
            it = dinput.Dataset.records(files=[os.path.join(d, "part-0.rec")],
                                        buffer_size=4096).iterator()
            self.assertEqual(len(list(it)), 4)
            self.assertEqual(it.statistic("records"), 4)
            self.assertEqual(list(dinput.Dataset.text_lines(os.path.join(d, "lines.txt"))),
                             [b"one", b"two", b"three"])
            shuffled_names = dinput.Dataset.list_files(os.path.join(d, "*.rec"), shuffle=True,
                                                       seed=3)
            self.assertEqual(len(list(shuffled_names)), 3)


class CheckpointTest(unittest.TestCase):
    """Iterator.save_state and Dataset.iterator_from_state."""

    def test_generator_with_save_and_restore(self):
        def gen():
            return iter(range(10))

        def save(it):
            # A range iterator's position: what __length_hint__ says is left.
            return str(10 - it.__length_hint__()).encode()

        def restore(it, data):
            for _ in range(int(data)):
                next(it)
            return it

        ds = dinput.Dataset.from_generator(gen, [("int64", ())], save=save,
                                           restore=restore).batch(3)
        for steps in range(5):
            it = ds.iterator()
            got = [it.get_next().tolist() for _ in range(steps)]
            state = it.save_state()
            got += [b.tolist() for b in ds.iterator_from_state(state)]
            self.assertEqual(got, [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]])
        with self.assertRaises(TypeError):
            dinput.Dataset.from_generator(gen, [("int64", ())], save=save)

    @staticmethod
    def pipeline(buffer_size=6):
        return dinput.Dataset.range(30).shuffle(buffer_size, seed=3).batch(4)

    def test_resumes_at_every_step(self):
        want = [b.tolist() for b in self.pipeline()]
        self.assertEqual(len(want), 8)
        for steps in range(len(want) + 1):
            it = self.pipeline().iterator()
            got = [it.get_next().tolist() for _ in range(steps)]
            state = it.save_state()
            self.assertIsInstance(state, bytes)
            got += [b.tolist() for b in self.pipeline().iterator_from_state(state)]
            self.assertEqual(got, want, "saved after %d batches" % steps)

    def test_errors(self):
        it = self.pipeline().iterator()
        it.get_next()
        state = it.save_state()
        with self.assertRaises(dinput.FailedPreconditionError) as caught:
            self.pipeline(60).iterator_from_state(state)
        self.assertIn("shuffle(buffer_size=6", str(caught.exception))
        with self.assertRaises(dinput.DataLossError):
            self.pipeline().iterator_from_state(state[:-1])
        flipped = bytearray(state)
        flipped[30] ^= 0x10
        with self.assertRaises(dinput.DataLossError):
            self.pipeline().iterator_from_state(flipped)
        # Parallel results as they finish: an order no state can reproduce.
        unordered = dinput.Dataset.range(3).map(lambda x: x, num_parallel_calls=2,
                                                deterministic=False)
        with self.assertRaises(dinput.UnimplementedError) as caught:
            unordered.iterator().save_state()
        self.assertIn("deterministic=false", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
