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
    """Records (max_steps, steps returned) of every dinput_dist_iterator_get_next_steps call,
    and in `copies` (max_steps, steps copied, whether a step came unfit) of every
    dinput_dist_iterator_copy_steps call."""

    def __init__(self, before=None):
        self.before = before  # called with max_steps before each call

    def __enter__(self):
        self.calls, self.copies = [], []
        self.order = []  # max_steps of every call of either kind, in order
        real = self.real = _steps._get_next_steps
        real_copy = self.real_copy = _steps._copy_steps

        def spy(count, steps, infos, max_steps, per_step, h):
            if self.before:
                self.before(max_steps)
            st = real(count, steps, infos, max_steps, per_step, h)
            self.order.append(max_steps)
            self.calls.append((max_steps, _steps.c_size_t.from_address(count).value
                               if st == 0 else 0))
            return st

        def copy_spy(count, unfit, buf, size, dtype, dims, rank, max_steps, h):
            if self.before:
                self.before(max_steps)
            st = real_copy(count, unfit, buf, size, dtype, dims, rank, max_steps, h)
            self.order.append(max_steps)
            self.copies.append((max_steps, _steps.c_size_t.from_address(count).value,
                                bool(_steps.c_void_p.from_address(unfit).value)))
            return st

        _steps._get_next_steps = spy
        _steps._copy_steps = copy_spy
        return self

    def __exit__(self, *exc):
        _steps._get_next_steps = self.real
        _steps._copy_steps = self.real_copy

class copy_off:
    """Reading ahead through views only (no step is small enough to copy)."""

    def __enter__(self):
        self.real = _steps.COPY_MAX_STEP_BYTES
        _steps.COPY_MAX_STEP_BYTES = 0

    def __exit__(self, *exc):
        _steps.COPY_MAX_STEP_BYTES = self.real


class library_clock:
    """A fake clock for the read-ahead's timing that only the calls into the library advance,
    each by cost(max_steps) nanoseconds; entering it gives the Calls spy of those calls."""

    def __init__(self, cost):
        self.now = 0
        self.cost = cost
        self.calls = Calls(before=self.advance)

    def advance(self, max_steps):
        self.now += self.cost(max_steps)

    def __enter__(self):
        self.real = _steps.perf_counter_ns
        _steps.perf_counter_ns = lambda: self.now
        return self.calls.__enter__()

    def __exit__(self, *exc):
        try:
            self.calls.__exit__(*exc)
        finally:
            _steps.perf_counter_ns = self.real


def copied(d):
    """Every step of d through a read-ahead iterator that copies after its first block: a
    fake clock on which a call into the library costs much more than a step."""
    with library_clock(lambda n: 10000 + 100 * n) as spy:
        steps = list(ahead(d))
    return steps, spy


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
        got, spy = copied(d)
        self.assertEqual(values(got), want)
        # Several steps per call: fewer calls than steps (the first step sizes the buffers).
        # Steps of 8 int64 are small and alike: read ahead by copying, the short last one
        # handed out unfit after the steps copied before it.
        self.assertLess(len(spy.calls) + len(spy.copies), len(want))
        self.assertTrue(any(n > 1 for _, n, _ in spy.copies), spy.copies[:20])
        self.assertEqual([u for _, _, u in spy.copies].count(True), 1)
        self.assertEqual(sum(n for _, n in spy.calls) + sum(n + u for _, n, u in spy.copies) + 1,
                         len(want))
        # The end of data comes alone, after the last steps.
        self.assertEqual(spy.copies[-1][1:], (0, False))
        # The same through views, where copying is off.
        with copy_off(), Calls() as spy:
            self.assertEqual(values(ahead(d)), want)
        self.assertEqual(spy.copies, [])
        self.assertTrue(any(n > 1 for _, n in spy.calls), spy.calls[:20])
        self.assertEqual(sum(n for _, n in spy.calls) + 1, len(want))
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
            for read_ahead, copy in ((True, False), (False, False), (True, True)):
                del freed[:]
                if copy:
                    # Copied steps are freed in the library as they are copied: only the
                    # first (sizing the buffers), those taken one per call and the short
                    # last one (unfit) are viewed.
                    with Calls() as spy:
                        kept = list(d.iterator(read_ahead=True))
                    self.assertTrue(spy.copies)
                    viewed = 1 + sum(n for _, n in spy.calls) + sum(u for _, _, u in spy.copies)
                    self.assertLess(viewed, 126)
                else:
                    with copy_off():
                        kept = list(d.iterator(read_ahead=read_ahead))
                    viewed = 126
                gc.collect()
                self.assertEqual(freed, [])
                self.assertEqual(len(kept), 126)
                del kept
                gc.collect()
                self.assertEqual(len(freed), viewed)
                self.assertEqual(len(set(freed)), viewed)
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
        # Through views (AHEAD per call) and by copying (COPY_AHEAD per call).
        for copy, many in ((False, _steps.AHEAD), (True, _steps.COPY_AHEAD)):
            for cost, want in ((lambda n: 10000 + 100 * n, many),
                               (lambda n: 5000 * n + (20000 if n > 1 else 0), 1)):
                with library_clock(cost) as spy:
                    if copy:
                        got = values(ahead(dist(dinput.Dataset.range(4800).batch(8))))
                    else:
                        with copy_off():
                            got = values(ahead(dist(dinput.Dataset.range(4800).batch(8))))
                self.assertEqual(len(got), 600)
                asked = spy.order
                # A block of 64 steps one per call (through views), one of 64 steps `many`
                # per call, then the faster way for the following blocks.
                self.assertEqual(asked[:64], [1] * 64)
                self.assertEqual(asked[64:64 + 64 // many], [many] * (64 // many))
                self.assertEqual(set(asked[64 + 64 // many:300]), {want},
                                 asked[64 + 64 // many:100])
                self.assertEqual(bool(spy.copies), copy)

    def test_copied_steps_are_rows_of_one_read_only_array(self):
        d = dist(dinput.Dataset.range(4001).batch(8))
        want = values(one_by_one(d))
        steps, spy = copied(d)
        self.assertEqual(values(steps), want)
        self.assertTrue(all(m == _steps.COPY_AHEAD for m, _, _ in spy.copies), spy.copies)
        # Step 200 is well past the first two blocks: copied with the steps around it into
        # one array the module owns (no library memory held), each piece a row of it.
        a, b = steps[200]
        self.assertIs(a.base, b.base)
        self.assertIs(a.base, steps[201][0].base)
        self.assertIsNotNone(a.base)
        self.assertEqual(a.base.shape[1:], (4,))
        self.assertFalse(a.flags.writeable)
        with self.assertRaises(ValueError):
            a[0] = 1
        self.assertEqual(a.dtype, np.int64)

    def test_copied_steps_of_several_components(self):
        # 3 replicas of 2 components, each float32 [2, 3] per replica: tuples per replica.
        ds = dinput.Dataset.from_tensor_slices((
            np.arange(3600, dtype=np.float32).reshape(1200, 3),
            -np.arange(3600, dtype=np.float32).reshape(1200, 3),
        )).batch(6)
        d = dist(ds, replicas=3)
        want = one_by_one(d)
        got, spy = copied(d)
        self.assertTrue(any(n > 1 for _, n, _ in spy.copies), spy.copies)
        self.assertEqual(len(got), len(want))
        for a, b in zip(got, want):
            self.assertEqual(len(a), 3)
            for ra, rb in zip(a, b):
                self.assertIsInstance(ra, tuple)
                self.assertEqual(len(ra), 2)
                for x, y in zip(ra, rb):
                    self.assertEqual((x.dtype, x.shape), (y.dtype, y.shape))
                    self.assertEqual(x.tolist(), y.tolist())
        self.assertEqual(got[150][2][1].tolist(), [[-2712.0, -2713.0, -2714.0],
                                                   [-2715.0, -2716.0, -2717.0]])

    def test_a_new_batch_size_becomes_the_copied_layout(self):
        # 2000 steps of 2 x 4 values, then 1000 of 2 x 2: the first step of the second part
        # comes unfit, alone, and the copies go on with its layout.
        ds = dinput.Dataset.range(16000).batch(8).concatenate(dinput.Dataset.range(4000).batch(4))
        d = dist(ds)
        want = values(one_by_one(d))
        got, spy = copied(d)
        self.assertEqual(got and values(got), want)
        unfit = [i for i, (_, n, u) in enumerate(spy.copies) if u]
        # The first step of 2 x 2 comes unfit after the copies of its call, if any, and the
        # next call's first step unfit again, alone, unless it was alone already.
        self.assertIn(len(unfit), (1, 2))
        self.assertEqual(spy.copies[unfit[-1]][1], 0)
        self.assertTrue(any(n > 1 for _, n, _ in spy.copies[unfit[-1] + 1:]), spy.copies)
        self.assertEqual(got[-1][0].base.shape[1:], (2,))
        # Then steps too big to copy: read ahead through views (AHEAD per call) from there.
        ds = dinput.Dataset.range(16000).batch(8).concatenate(
            dinput.Dataset.range(4096 * 40).batch(4096))
        d = dist(ds)
        want = values(one_by_one(d))
        got, spy = copied(d)
        self.assertEqual(got and values(got), want)
        self.assertTrue(spy.copies)
        self.assertEqual(set(spy.order[-5:]), {_steps.AHEAD})

    def test_a_much_faster_way_is_measured_against_less_often(self):
        # Where reading ahead took under half the time of one step per call, one per call
        # is timed again after 4 * EXPLOIT blocks instead of EXPLOIT.
        for cost, blocks in ((lambda n: 10000 + 100 * n, 4 * _steps.EXPLOIT),
                             (lambda n: 10000 + 9000 * n, _steps.EXPLOIT)):
            with library_clock(cost) as spy:
                n = len(list(ahead(dist(dinput.Dataset.range(80000).batch(8)))))
            self.assertEqual(n, 10000)
            # The steps taken before each run of calls of one step.
            starts, taken, before = [], 1, None
            for m in spy.order:
                if m == 1 and before != 1:
                    starts.append(taken)
                taken += m
                before = m
            period = (2 + blocks) * _steps.BLOCK
            self.assertEqual(starts[:3], [1, 1 + period, 1 + 2 * period])

    def test_big_steps_are_not_read_ahead(self):
        big = np.zeros(200_000, np.float32)  # 800 KB a row: steps of 1.6 MB
        d = dist(dinput.Dataset.from_tensors(big).repeat(8).batch(2))
        with Calls() as spy:
            got = list(ahead(d))
        self.assertEqual(len(got), 4)
        self.assertTrue(all(m == 1 for m, _ in spy.calls), spy.calls)


if __name__ == "__main__":
    unittest.main()
