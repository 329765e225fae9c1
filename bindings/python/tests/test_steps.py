"""Reading the steps of distributed iterators with few ctypes calls (dinput/_steps.py): an
iterator takes one step per call (so every save is exact), one made with read_ahead=True
several per call while steps come fast; the values, their order, the end of data, errors
and the arrays' lifetime are those of get_next either way."""

import gc
import unittest

import numpy as np

import util  # noqa: F401 (puts the package of this checkout on sys.path)
import dinput
from dinput import _steps


class Calls:
    """Records (max_steps, steps returned) of every dinput_dist_iterator_get_next_steps call."""

    def __init__(self, before=None):
        self.before = before  # called with max_steps before each call

    def __enter__(self):
        self.calls = []
        real = self.real = _steps._get_next_steps

        def spy(count, steps, infos, max_steps, per_step, h):
            if self.before:
                self.before(max_steps)
            st = real(count, steps, infos, max_steps, per_step, h)
            self.calls.append((max_steps, _steps.c_size_t.from_address(count).value
                               if st == 0 else 0))
            return st

        _steps._get_next_steps = spy
        return self

    def __exit__(self, *exc):
        _steps._get_next_steps = self.real


def dist(ds, replicas=2):
    return dinput.Strategy(["CPU:%d" % i for i in range(replicas)]).distribute_dataset(ds)


def values(steps):
    return [[r.tolist() for r in step] for step in steps]


def ahead(d):
    return d.iterator(read_ahead=True)


def one_by_one(d):
    out = []
    with d.iterator() as it:
        while True:
            try:
                out.append(it.get_next())
            except dinput.OutOfRangeError:
                return out


class StepsTest(unittest.TestCase):
    def test_ahead_gives_the_steps_of_get_next(self):
        d = dist(dinput.Dataset.range(4001).batch(8))
        want = values(one_by_one(d))
        self.assertEqual(len(want), 501)
        self.assertEqual(want[-1], [[4000], []])
        with Calls() as spy:
            got = values(ahead(d))
        self.assertEqual(got, want)
        # Several steps per call: fewer calls than steps (the first step sizes the buffers).
        self.assertLess(len(spy.calls), len(want))
        self.assertTrue(any(n > 1 for _, n in spy.calls), spy.calls[:20])
        self.assertEqual(sum(n for _, n in spy.calls) + 1, len(want))
        # The end of data comes alone, after the last steps.
        self.assertEqual(spy.calls[-1][1], 0)
        self.assertEqual(values(ahead(dist(dinput.Dataset.range(0).batch(4)))), [])
        # get_next and Python iteration mix, in order.
        it = ahead(d)
        mixed = [it.get_next(), next(it), it.get_next()] + list(it)
        self.assertEqual(values(mixed), want)
        with self.assertRaises(dinput.OutOfRangeError):
            it.get_next()

    def test_pieces_of_one_batch_share_one_array(self):
        # 3 replicas of one int64 component: each step's pieces lie back to back in the
        # batch's memory and are slices of one read-only array.
        d = dist(dinput.Dataset.range(3001).batch(12), replicas=3)
        want = values(one_by_one(d))
        steps = list(ahead(d))
        self.assertEqual(values(steps), want)
        self.assertIs(steps[3][0].base, steps[3][2].base)
        self.assertEqual(want[-1], [[3000], [], []])

    def test_several_components_and_replicas(self):
        ds = dinput.Dataset.from_tensor_slices((
            np.arange(600, dtype=np.float32).reshape(300, 2),
            np.arange(300, dtype=np.int16),
            np.array([b"s%d" % i for i in range(300)], dtype=object),
        )).batch(6)
        d = dist(ds, replicas=3)
        want = one_by_one(d)
        got = list(ahead(d))
        self.assertEqual(len(got), len(want))
        for a, b in zip(got, want):
            self.assertEqual(len(a), 3)
            for ra, rb in zip(a, b):
                self.assertEqual(len(ra), 3)
                for x, y in zip(ra, rb):
                    self.assertEqual(x.dtype, y.dtype)
                    self.assertEqual(x.tolist(), y.tolist())
        self.assertEqual(got[0][1][0].tolist(), [[4.0, 5.0], [6.0, 7.0]])

    def test_arrays_outlive_the_iteration(self):
        d = dist(dinput.Dataset.range(2000).batch(16))
        kept = [step for step in ahead(d)]
        del d
        gc.collect()
        flat = np.concatenate([r for step in kept for r in step])
        self.assertEqual(flat.tolist(), list(range(2000)))
        self.assertFalse(kept[5][1].flags.writeable)
        with self.assertRaises(ValueError):
            kept[5][1][0] = 1

    def test_every_step_is_freed_once_its_arrays_are_gone(self):
        freed = []
        real = _steps._free
        _steps._free = lambda ph: (freed.append(ph), real(ph))
        try:
            d = dist(dinput.Dataset.range(1001).batch(8))
            for read_ahead in (True, False):
                del freed[:]
                kept = list(d.iterator(read_ahead=read_ahead))
                gc.collect()
                self.assertEqual(freed, [])
                self.assertEqual(len(kept), 126)
                del kept
                gc.collect()
                self.assertEqual(len(freed), 126)
                self.assertEqual(len(set(freed)), 126)
        finally:
            _steps._free = real

    def test_an_error_comes_after_the_steps_before_it(self):
        def fail_at_3000(x):
            if int(x) == 3000:
                raise dinput.DataLossError("the element that fails")
            return x

        d = dist(dinput.Dataset.range(5000).map(fail_at_3000).batch(8))
        got = []
        with self.assertRaises(dinput.DataLossError) as caught:
            for step in ahead(d):
                got.append(step)
        self.assertIn("the element that fails", str(caught.exception))
        # Every step before the one holding 3000, in order.
        self.assertEqual(len(got), 375)
        self.assertEqual(np.concatenate([r for s in got for r in s]).tolist(), list(range(3000)))

    def test_explicit_iterators_take_one_step_per_call_and_save_exactly(self):
        d = dist(dinput.Dataset.range(800).shuffle(50, seed=4, reshuffle_each_iteration=False).batch(8))
        want = values(one_by_one(d))
        with Calls() as spy:
            it = d.iterator()
            got = [[r.tolist() for r in next(it)] for _ in range(10)]
            for at in (10, 11, 37, 99):
                while len(got) < at:
                    got.append([r.tolist() for r in next(it)])
                state = it.save_state()
                rest = values(d.iterator_from_state(state))
                self.assertEqual(got + rest, want, "saved after %d steps" % at)
        self.assertTrue(spy.calls)
        self.assertTrue(all(m == 1 for m, _ in spy.calls), spy.calls[:10])
        # A read-ahead iterator may hold steps it took and has not given out: it refuses to
        # save (a state past them would skip them), before and after it read ahead.
        it = ahead(d)
        for _ in range(3):
            with self.assertRaises(dinput.FailedPreconditionError):
                it.save_state()
            next(it)
        with self.assertRaises(dinput.FailedPreconditionError):
            it.get_next_as_optional()

    def test_read_ahead_keeps_the_faster_way(self):
        # A fake clock that only the calls into the library advance: first a call that costs
        # much more than a step (reading ahead pays), then steps that cost much more than the
        # call and more when taken several at once (one per call is faster).
        for cost, want in ((lambda n: 10000 + 100 * n, _steps.AHEAD),
                           (lambda n: 5000 * n + (20000 if n > 1 else 0), 1)):
            clock = [0]
            real_clock = _steps.perf_counter_ns
            _steps.perf_counter_ns = lambda: clock[0]
            try:
                def costly(max_steps, cost=cost):
                    clock[0] += cost(max_steps)

                with Calls(before=costly) as spy:
                    got = values(ahead(dist(dinput.Dataset.range(4800).batch(8))))
            finally:
                _steps.perf_counter_ns = real_clock
            self.assertEqual(len(got), 600)
            asked = [m for m, _ in spy.calls]
            # A block of 64 steps one per call, one of 64 steps AHEAD per call, then the
            # faster way for the following blocks.
            self.assertEqual(asked[:64], [1] * 64)
            self.assertEqual(asked[64:80], [_steps.AHEAD] * 16)
            self.assertEqual(set(asked[80:300]), {want}, asked[79:100])

    def test_big_steps_are_not_read_ahead(self):
        big = np.zeros(200_000, np.float32)  # 800 KB a row: steps of 1.6 MB
        d = dist(dinput.Dataset.from_tensors(big).repeat(8).batch(2))
        with Calls() as spy:
            got = list(ahead(d))
        self.assertEqual(len(got), 4)
        self.assertTrue(all(m == 1 for m, _ in spy.calls), spy.calls)


if __name__ == "__main__":
    unittest.main()
