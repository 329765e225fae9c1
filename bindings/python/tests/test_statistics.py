"""Per-stage statistics and traces (docs/statistics.md)."""
import json
import time
import unittest

import util  # noqa: F401 (puts the package of this checkout on sys.path)
import dinput


def stage(doc, name):
    return next(s for s in doc["stages"] if s["name"] == name)


class StatisticsTest(unittest.TestCase):
    def test_counts(self):
        it = iter(dinput.Dataset.range(1000).take(7))
        self.assertEqual(len(list(it)), 7)
        doc = it.statistics_dict()
        self.assertEqual(doc["schema"], "dinput.statistics/1")
        self.assertEqual(stage(doc, "take")["elements"], 7)
        self.assertEqual(stage(doc, "take")["bytes"], 56)
        self.assertEqual(stage(doc, "range")["elements"], 7)
        self.assertEqual(json.loads(it.statistics())["stages"], doc["stages"])
        self.assertEqual(doc["consumer"]["calls"], 8)

    def test_slow_map_is_the_slowest_stage(self):
        def slow(x):
            time.sleep(0.002)
            return x
        it = iter(dinput.Dataset.range(10).map(slow).batch(2))
        self.assertEqual(len(list(it)), 5)
        doc = it.statistics_dict()
        self.assertEqual(doc["slowest_stage"], stage(doc, "map")["id"])
        self.assertGreater(doc["consumer"]["wait_ns"], 10 * 2000000)
        self.assertGreater(doc["consumer"]["input_bound_percent"], 50)

    def test_trace_and_off(self):
        it = iter(dinput.Dataset.range(5).with_options(dinput.Options(trace_events=1000)))
        self.assertEqual(len(list(it)), 5)
        trace = json.loads(it.trace())
        slices = [e for e in trace["traceEvents"] if e["ph"] == "X"]
        self.assertEqual(len([e for e in slices if e["name"] == "get_next wait"]), 6)
        self.assertEqual(len([e for e in slices if e["name"].endswith(" range")]), 6)
        off = iter(dinput.Dataset.range(5).with_options(dinput.Options(statistics=False)))
        self.assertEqual(len(list(off)), 5)
        self.assertEqual(off.statistics_dict()["stages"], [])
        with self.assertRaises(dinput.DinputError):
            dinput.Dataset.range(5).with_options(dinput.Options(trace_events=-1))

    def test_distributed(self):
        with dinput.Strategy(["CPU:0", "CPU:1"]) as s:
            it = iter(s.distribute_dataset(dinput.Dataset.range(8).batch(4)))
            self.assertEqual(len(list(it)), 2)
            doc = it.statistics_dict()
            self.assertEqual(doc["schema"], "dinput.dist_statistics/1")
            self.assertEqual(stage(doc["pipelines"][0], "batch")["elements"], 2)
            job = it.statistics_dict(all_workers=True)
            self.assertEqual(job["schema"], "dinput.job_statistics/1")
            self.assertEqual(job["slowest_worker"], 0)
            self.assertIn("traceEvents", json.loads(it.trace()))


if __name__ == "__main__":
    unittest.main()
