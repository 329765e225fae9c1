import os
import threading
import unittest

import util  # noqa: F401 (puts the package of this checkout on sys.path)
import dinput


class ErrorTest(unittest.TestCase):
    def test_every_code_has_a_class(self):
        names = ["CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
                 "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
                 "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL",
                 "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"]
        for code, name in enumerate(names, start=1):
            cls = dinput.error_class(code)
            self.assertIsNot(cls, dinput.DinputError, name)
            self.assertTrue(issubclass(cls, dinput.DinputError))
            self.assertEqual(cls.code, code)
            self.assertEqual(cls.code_name, name)
        self.assertIs(dinput.error_class(1000), dinput.DinputError)

    def test_missing_file_is_not_found_with_the_path(self):
        with util.tempdir() as d:
            path = os.path.join(d, "missing.rec")
            with self.assertRaises(dinput.NotFoundError) as cm:
                dinput.Dataset.records([path]).iterator().get_next()
            self.assertIn(path, str(cm.exception))
            self.assertIn(path, cm.exception.message)
            self.assertEqual(cm.exception.code_name, "NOT_FOUND")
            self.assertEqual(cm.exception.code, 5)
            # The standard library's class too, so `except FileNotFoundError` catches it.
            self.assertIsInstance(cm.exception, FileNotFoundError)

    def test_list_files_without_match_is_not_found(self):
        with util.tempdir() as d:
            with self.assertRaises(dinput.NotFoundError) as cm:
                dinput.Dataset.list_files(os.path.join(d, "*.rec"))
            self.assertIn(d, str(cm.exception))

    def test_invalid_argument_and_message(self):
        with self.assertRaises(dinput.InvalidArgumentError) as cm:
            dinput.Dataset.range(0, 10, 0)
        self.assertIsInstance(cm.exception, ValueError)
        self.assertTrue(cm.exception.message)

    def test_corrupt_record_is_data_loss(self):
        with util.tempdir() as d:
            path = util.write_records(d, "a.rec", [b"hello", b"world"])
            with open(path, "r+b") as f:
                f.seek(14)
                f.write(b"X")
            with self.assertRaises(dinput.DataLossError) as cm:
                list(dinput.Dataset.records([path]))
            self.assertIn(path, str(cm.exception))
            skipped = dinput.Dataset.records([path]).with_options(
                dinput.Options(skip_corrupt_records=True))
            self.assertEqual(list(skipped), [b"world"])

    def test_message_is_read_on_the_failing_thread(self):
        # Another thread failing differently at the same time must not change our message.
        stop = threading.Event()

        def other():
            while not stop.is_set():
                try:
                    dinput.Dataset.range(0, 1, 0)
                except dinput.InvalidArgumentError:
                    pass
        t = threading.Thread(target=other)
        t.start()
        try:
            for _ in range(50):
                with self.assertRaises(dinput.NotFoundError) as cm:
                    dinput.Dataset.list_files("/nonexistent-dinput-dir/*.rec")
                self.assertIn("/nonexistent-dinput-dir", str(cm.exception))
        finally:
            stop.set()
            t.join()

    def test_callback_exception_reaches_the_caller(self):
        def bad(x):
            raise KeyError("no such key")
        with self.assertRaises(dinput.InvalidArgumentError) as cm:
            list(dinput.Dataset.range(3).map(bad))
        self.assertIn("no such key", str(cm.exception))

        def stop(x):
            raise dinput.DataLossError("my own data loss")
        with self.assertRaises(dinput.DataLossError) as cm:
            list(dinput.Dataset.range(3).map(stop))
        self.assertIn("my own data loss", str(cm.exception))

    def test_closed_handles(self):
        ds = dinput.Dataset.range(3)
        ds.close()
        ds.close()  # idempotent
        with self.assertRaises(ValueError):
            ds.batch(2)
        with dinput.Dataset.range(3) as ds2:
            it = ds2.iterator()
        self.assertTrue(ds2.closed)
        # The iterator keeps its dataset alive in C.
        self.assertEqual([int(x) for x in it], [0, 1, 2])
        it.close()
        del it  # __del__ after close frees nothing twice


if __name__ == "__main__":
    unittest.main()
