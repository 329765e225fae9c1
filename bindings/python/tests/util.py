"""Shared helpers of the Python binding's tests."""

import os
import sys
import tempfile

# Run from the source tree: the package is the directory above this one.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import dinput  # noqa: E402


def write_records(directory, name, records):
    path = os.path.join(directory, name)
    with dinput.RecordWriter(path) as w:
        for r in records:
            w.write(r)
    return path


def tempdir():
    return tempfile.TemporaryDirectory(prefix="dinput-py-")
