"""The README's pipeline block (list_files -> interleave(records) -> shuffle -> batch ->
distribute), run as written on record files written here: only the file pattern is replaced.
The test fails when the block is gone, raises, or reads other records than it should."""

import os
import re
import unittest

import numpy

import util

README = os.path.join(os.path.dirname(util.__file__), os.pardir, "README.md")
PATTERN = "/data/train-*.rec"


def pipeline_block():
    """The first ```python block of the README's section on the pipeline."""
    with open(README, encoding="utf-8") as f:
        text = f.read()
    section = re.search(r"^## The pipeline:.*?(?=^## )", text, re.S | re.M)
    if not section:
        raise AssertionError("README.md has no section '## The pipeline: ...'")
    block = re.search(r"^```python\n(.*?)^```", section.group(0), re.S | re.M)
    if not block:
        raise AssertionError("README.md's pipeline section has no ```python block")
    return block.group(1)


class ReadmeTest(unittest.TestCase):
    def test_pipeline_block_runs(self):
        code = pipeline_block()
        self.assertIn(PATTERN, code, "the block no longer reads %s" % PATTERN)
        with util.tempdir() as d:
            written = set()
            for f in range(4):
                records = [b"file %d record %d" % (f, r) for r in range(200)]
                util.write_records(d, "train-%d.rec" % f, records)
                written.update(records)
            ns = {}
            exec(compile(code.replace(PATTERN, os.path.join(d, "train-*.rec")),
                         "README.md", "exec"), ns)

            # The block's last loop ran get_next_as_optional to the end: its last step is a
            # list of one batch per replica, of 128 records each (global batches of 256).
            self.assertEqual([len(b) for b in ns["step"]], [128, 128])
            self.assertEqual(ns["batch"].dtype, numpy.dtype(object))
            self.assertIsInstance(ns["batch"][0], bytes)

            # 800 records, global batches of 256 with drop_remainder: 3 steps, 768 distinct
            # records of the files, in a shuffled order.
            read = [r for step in ns["dist"] for batch in step for r in batch]
            self.assertEqual(len(read), 768)
            self.assertEqual(len(set(read)), 768)
            self.assertTrue(set(read) <= written)
            self.assertNotEqual(read, sorted(read))


if __name__ == "__main__":
    unittest.main()
