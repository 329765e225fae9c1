"""Autotuning (docs/autotune.md): the RAM budget option."""
import unittest

import util  # noqa: F401 (puts the package of this checkout on sys.path)
import dinput


class AutotuneTest(unittest.TestCase):
    def test_ram_budget(self):
        ds = dinput.Dataset.range(50).prefetch(dinput.AUTOTUNE)
        it = iter(ds.with_options(dinput.Options(ram_budget=12345)))
        self.assertEqual(len(list(it)), 50)
        doc = it.statistics_dict()
        self.assertEqual(doc["autotune"]["ram_budget"], 12345)
        knobs = [k for s in doc["stages"] if s["autotune"] for k in s["autotune"]]
        self.assertEqual([k["knob"] for k in knobs], ["buffer_size"])
        with self.assertRaisesRegex(dinput.DinputError, "'bytes'"):
            ds.with_options(dinput.Options(ram_budget=-1))


if __name__ == "__main__":
    unittest.main()
