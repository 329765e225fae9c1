import os
import subprocess
import sys
import tempfile
import threading
import unittest

import numpy as np

import util  # noqa: F401 (puts the package of this checkout on sys.path)
import dinput


class DistributeTest(unittest.TestCase):
    def test_strategy(self):
        with dinput.Strategy(["CPU:0", "CPU:1"]) as s:
            self.assertEqual(s.num_replicas_in_sync, 2)
            self.assertEqual(s.num_local_replicas, 2)
            self.assertEqual(s.num_workers, 1)
            self.assertEqual(s.worker_index, 0)
            self.assertEqual(s.devices, ["CPU:0", "CPU:1"])
        self.assertEqual(dinput.Strategy().devices, ["CPU:0"])
        with self.assertRaises(dinput.InvalidArgumentError):
            dinput.Strategy(["CPU:0", "CPU:0"])

    def test_steps_split_global_batches(self):
        s = dinput.Strategy(["CPU:0", "CPU:1"])
        dd = s.distribute_dataset(dinput.Dataset.range(10).batch(4))
        self.assertEqual(dd.plan["global_batch_size"], 4)
        self.assertEqual(dd.plan["num_replicas_in_sync"], 2)
        self.assertEqual(dd.element_spec, [("int64", (None,))])
        steps = [[r.tolist() for r in step] for step in dd]
        self.assertEqual(steps, [[[0, 1], [2, 3]], [[4, 5], [6, 7]], [[8], [9]]])
        # A second pass is a new epoch.
        self.assertEqual(len(list(dd)), 3)

    def test_step_arrays_view_the_library_memory_and_outlive_the_step(self):
        # Each step's arrays are read-only views of the step's memory, read through one
        # C call per step; they stay valid after the step, the iterator and the dataset go.
        import gc
        s = dinput.Strategy(["CPU:0", "CPU:1"])
        ds = dinput.Dataset.from_tensor_slices((
            np.arange(20, dtype=np.int32).reshape(10, 2),
            np.array([True, False] * 5),
            np.array([b"r%d" % i for i in range(10)], dtype=object),
        )).batch(4)
        dd = s.distribute_dataset(ds)
        kept = [step for step in dd]
        del dd, ds
        gc.collect()
        self.assertEqual(len(kept), 3)
        ints = [r[0] for step in kept for r in step]
        self.assertTrue(all(a.dtype == np.int32 and a.ndim == 2 for a in ints))
        self.assertEqual(np.concatenate(ints).ravel().tolist(), list(range(20)))
        self.assertEqual(np.concatenate([r[1] for step in kept for r in step]).tolist(),
                         [True, False] * 5)
        self.assertEqual(np.concatenate([r[2] for step in kept for r in step]).tolist(),
                         [b"r%d" % i for i in range(10)])
        with self.assertRaises(ValueError):
            ints[0][0, 0] = 7
        # The partial last step: 2 rows over 2 replicas, then a step-free end.
        self.assertEqual([r[0].shape for r in kept[2]], [(1, 2), (1, 2)])

    def test_empty_pieces_and_plain_iteration(self):
        s = dinput.Strategy(["CPU:0", "CPU:1", "CPU:2"])
        steps = [[r.tolist() for r in step]
                 for step in s.distribute_dataset(dinput.Dataset.range(4).batch(3))]
        self.assertEqual(steps, [[[0], [1], [2]], [[3], [], []]])
        values = list(dinput.Dataset.range(5).batch(2))
        self.assertEqual([v.tolist() for v in values], [[0, 1], [2, 3], [4]])
        self.assertFalse(values[0].flags.writeable)

    def test_get_next_and_optional(self):
        s = dinput.Strategy(["CPU:0", "CPU:1"])
        dd = s.distribute_dataset(dinput.Dataset.from_tensor_slices(
            (np.arange(4), np.arange(4, dtype=np.float32))).batch(4), fetch_to_device=False)
        it = dd.iterator()
        opt = it.get_next_as_optional()
        self.assertTrue(opt.has_value())
        step = opt.get_value()
        self.assertEqual(len(step), 2)
        self.assertIsInstance(step[0], tuple)
        self.assertEqual(step[1][0].tolist(), [2, 3])
        self.assertEqual(step[1][1].dtype, np.float32)
        self.assertFalse(it.get_next_as_optional().has_value())
        with self.assertRaises(dinput.OutOfRangeError):
            it.get_next()
        it.close()
        it = dd.iterator(output="tensor")
        step = it.get_next()
        self.assertIsInstance(step[0][0], dinput.Tensor)
        it.cancel()
        with self.assertRaises(dinput.CancelledError):
            it.get_next()

    def test_reduce(self):
        s = dinput.Strategy(["CPU:0", "CPU:1"])
        np.testing.assert_array_equal(s.reduce("sum", [np.array([1.0, 2.0]),
                                                       np.array([3.0, 4.0])]), [4.0, 6.0])
        self.assertEqual(float(s.reduce("mean", [np.arange(3), np.arange(3)], axis=0)), 1.0)
        with self.assertRaises(ValueError):
            s.reduce("max", [1, 2])
        with self.assertRaises(dinput.InvalidArgumentError):
            s.reduce("sum", [np.array([1.0, 2.0]), np.array([1.0])])

    def test_run_and_values_from_function(self):
        s = dinput.Strategy(["CPU:0", "CPU:1"])
        vals = s.distribute_values_from_function(lambda i, n: np.full(2, i * 10 + n))
        self.assertEqual([v.tolist() for v in vals], [[2, 2], [12, 12]])
        step = next(iter(s.distribute_dataset(dinput.Dataset.range(8).batch(4))))
        out = s.run(lambda ctx, v: (v * 10, np.int64(ctx.replica_id_in_sync_group)), args=step)
        self.assertEqual([(a.tolist(), int(b)) for a, b in out], [([0, 10], 0), ([20, 30], 1)])
        self.assertEqual(s.run(lambda ctx, v: ctx.device), [b"CPU:0", b"CPU:1"])
        self.assertEqual(int(s.reduce("sum", s.run(lambda c, v: v.sum(), args=step))), 6)

        def bad(ctx, v):
            raise ValueError("replica %d refuses" % ctx.replica_id_in_sync_group)
        with self.assertRaises(dinput.InvalidArgumentError) as cm:
            s.run(bad)
        self.assertIn("refuses", str(cm.exception))

    def test_distribute_datasets_from_function(self):
        s = dinput.Strategy(["CPU:0", "CPU:1"])
        seen = []

        def fn(ctx):
            seen.append((ctx.num_input_pipelines, ctx.input_pipeline_id,
                         ctx.num_replicas_in_sync, ctx.get_per_replica_batch_size(4)))
            return dinput.Dataset.range(8).batch(ctx.get_per_replica_batch_size(4))
        steps = [[r.tolist() for r in step] for step in s.distribute_datasets_from_function(fn)]
        self.assertEqual(seen, [(1, 0, 2, 2)])
        self.assertEqual(steps, [[[0, 1], [2, 3]], [[4, 5], [6, 7]]])
        per_replica = s.distribute_datasets_from_function(
            lambda ctx: dinput.Dataset.range(4).batch(2), per_replica=True)
        self.assertEqual(len(list(per_replica)), 2)
        with self.assertRaises(dinput.InvalidArgumentError) as cm:
            s.distribute_datasets_from_function(lambda ctx: ctx.get_per_replica_batch_size(3))
        self.assertIn("3", str(cm.exception))

    def test_multi_worker_cpu_and_options(self):
        collective = dinput.Collective.in_process(1)
        s = dinput.Strategy.multi_worker_cpu(collective, 0, 2)
        self.assertEqual(s.num_replicas_in_sync, 2)
        with self.assertRaises(dinput.InvalidArgumentError):
            dinput.Strategy.multi_worker_cpu(dinput.Collective.in_process(2), 0, 3)
        it = s.distribute_dataset(dinput.Dataset.range(4).batch(4)).iterator()
        self.assertEqual(it.element_spec, [("int64", (None,))])
        # place_dataset_on_device needs PER_REPLICA mode: refused with PER_WORKER.
        with self.assertRaises(dinput.DinputError):
            s.distribute_datasets_from_function(lambda c: dinput.Dataset.range(2).batch(1),
                                                place_dataset_on_device=True,
                                                fetch_to_device=False)

    def test_multi_worker_in_process(self):
        workers = 2
        collective = dinput.Collective.in_process(workers, timeout_ms=20000)
        self.assertEqual(collective.num_workers, workers)
        results, errors = {}, []

        def worker(i):
            try:
                s = dinput.Strategy(["CPU:0", "CPU:1"], collective=collective, worker_index=i)
                self.assertEqual(s.num_replicas_in_sync, 4)
                ds = dinput.Dataset.range(16).batch(8).with_options(
                    dinput.Options(auto_shard_policy="data"))
                results[i] = [[r.tolist() for r in step] for step in s.distribute_dataset(ds)]
            except Exception as e:  # reported on the main thread
                errors.append(e)
                collective.abort("worker %d failed: %s" % (i, e))

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(workers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        seen = sorted(x for w in results.values() for step in w for r in step for x in r)
        self.assertEqual(seen, list(range(16)))
        self.assertEqual(len(results[0]), len(results[1]))

    def test_cluster(self):
        c = dinput.Cluster(1, 4, "tcp://10.0.0.1:29500")
        self.assertEqual((c.rank, c.world_size), (1, 4))
        self.assertEqual(c.rdzv_url, "tcp://10.0.0.1:29500")
        self.assertEqual(c.source, "explicit")
        self.assertIn("rank 1 of 4", repr(c))
        with self.assertRaises(dinput.InvalidArgumentError) as cm:
            dinput.Cluster(4, 4)
        self.assertIn("4", str(cm.exception))
        # resolve() reads the variables (os.environ also sets the C environment).
        saved = {k: os.environ.get(k) for k in ("DINPUT_RANK", "DINPUT_WORLD_SIZE")}
        try:
            os.environ["DINPUT_RANK"], os.environ["DINPUT_WORLD_SIZE"] = "2", "3"
            c = dinput.Cluster.resolve("explicit")
            self.assertEqual((c.rank, c.world_size), (2, 3))
            os.environ["DINPUT_RANK"] = "x"
            with self.assertRaises(dinput.InvalidArgumentError) as cm:
                dinput.Cluster.resolve("explicit")
            self.assertIn("DINPUT_RANK", str(cm.exception))
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    def test_multi_process_collective(self):
        # Two worker processes meeting through a file:// rendezvous (Gloo).
        if not dinput.build_info().get("gloo", {}).get("available"):
            with self.assertRaises(dinput.UnimplementedError):
                dinput.Collective.from_cluster(dinput.Cluster(0, 1, "file:///tmp"))
            return
        script = (
            "import sys, dinput\n"
            "c = dinput.Cluster(int(sys.argv[1]), 2, sys.argv[2])\n"
            "col = dinput.Collective.from_cluster(c, timeout_ms=30000, allow_loopback=True)\n"
            "s = dinput.Strategy(['CPU:0'], collective=col, worker_index=c.rank)\n"
            "ds = dinput.Dataset.range(8).batch(4).with_options("
            "dinput.Options(auto_shard_policy='data'))\n"
            "print(' '.join(str(int(x)) for step in s.distribute_dataset(ds) "
            "for r in step for x in r))\n")
        env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(
            os.path.abspath(__file__))))
        with tempfile.TemporaryDirectory(prefix="dinput-rdzv-") as d:
            procs = [subprocess.Popen([sys.executable, "-c", script, str(i), "file://" + d],
                                      env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True) for i in range(2)]
            outs = [p.communicate(timeout=120) for p in procs]
        for p, (out, err) in zip(procs, outs):
            self.assertEqual(p.returncode, 0, err)
        got = sorted(int(x) for out, _ in outs for x in out.split())
        self.assertEqual(got, list(range(8)))

    def test_pipeline_from_files(self):
        with util.tempdir() as d:
            for i in range(4):
                util.write_records(d, "part-%d.rec" % i, [b"%d-%d" % (i, k) for k in range(5)])
            ds = (dinput.Dataset.list_files(os.path.join(d, "*.rec"))
                  .interleave(lambda f: dinput.Dataset.records([f]), cycle_length=2)
                  .shuffle(64, seed=1)
                  .batch(4))
            s = dinput.Strategy(["CPU:0", "CPU:1"])
            it = s.distribute_dataset(ds).iterator()
            got = [rec for step in it for replica in step for rec in replica]
            self.assertEqual(sorted(got), sorted(b"%d-%d" % (i, k) for i in range(4)
                                                 for k in range(5)))
            self.assertEqual(it.statistic("records"), 20)


class DistributedCheckpointTest(unittest.TestCase):
    """DistributedIterator.save_state and DistributedDataset.iterator_from_state."""

    @staticmethod
    def distributed(buffer_size=6):
        s = dinput.Strategy(["CPU:0", "CPU:1"])
        return s.distribute_dataset(dinput.Dataset.range(30).shuffle(buffer_size, seed=3).batch(4))

    @staticmethod
    def steps(it):
        return [[r.tolist() for r in step] for step in it]

    def test_resumes_at_every_step(self):
        for at in range(10):
            it = self.distributed().iterator()
            for _ in range(min(at, 8)):
                it.get_next()
            state = it.save_state()
            self.assertIsInstance(state, bytes)
            want = self.steps(it)
            got = self.steps(self.distributed().iterator_from_state(state))
            self.assertEqual(got, want, "saved after %d steps" % at)

    def test_errors(self):
        it = self.distributed().iterator()
        it.get_next()
        state = it.save_state()
        with self.assertRaises(dinput.FailedPreconditionError) as caught:
            self.distributed(60).iterator_from_state(state)
        self.assertIn("shuffle(buffer_size=6", str(caught.exception))
        with self.assertRaises(dinput.DataLossError):
            self.distributed().iterator_from_state(state[:-1])

    def test_describe_state(self):
        it = self.distributed().iterator()
        it.get_next()
        it.get_next()
        described = dinput.describe_state(it.save_state())
        self.assertEqual(described["kind"], "distributed_iterator")
        self.assertEqual(described["step"], 2)
        self.assertEqual(described["workers"], 1)
        with self.assertRaises(dinput.DataLossError):
            dinput.describe_state(b"DINPUTST")


if __name__ == "__main__":
    unittest.main()
