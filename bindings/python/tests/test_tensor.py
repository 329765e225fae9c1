import gc
import unittest

import numpy as np

import util  # noqa: F401 (puts the package of this checkout on sys.path)
import dinput
from dinput import _lib


class TensorTest(unittest.TestCase):
    def test_round_trip_dtypes(self):
        for dt in ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                   "uint64", "float16", "float32", "float64"]:
            a = (np.arange(6) % 2).astype(dt).reshape(2, 3)
            with dinput.Tensor.from_value(a) as t:
                self.assertEqual(t.dtype, dt)
                self.assertEqual(t.shape, (2, 3))
                b = t.numpy()
                self.assertEqual(b.dtype, a.dtype)
                np.testing.assert_array_equal(a, b)

    def test_byte_order_and_errors(self):
        with dinput.Tensor.from_value(np.array([1.5, 2.5], dtype=">f8")) as t:
            self.assertEqual(t.numpy().tolist(), [1.5, 2.5])
        with self.assertRaises(TypeError):
            dinput.Tensor.from_value(np.array([1 + 2j]))

    def test_iterated_scalars_are_numpy_scalars(self):
        got = list(dinput.Dataset.from_tensor_slices(
            (np.array([1, 2], dtype=np.int32), np.array([True, False]))))
        self.assertIsInstance(got[0][0], np.int32)
        self.assertIsInstance(got[1][1], np.bool_)
        self.assertEqual([(int(a), bool(b)) for a, b in got], [(1, True), (2, False)])

    def test_scalars_and_bytes(self):
        with dinput.Tensor.from_value(np.float64(2.5)) as t:
            self.assertEqual(t.shape, ())
            self.assertEqual(float(t.numpy()), 2.5)
        with dinput.Tensor.from_value(["ab", b"c\x00d"]) as t:
            self.assertEqual(t.dtype, "bytes")
            self.assertEqual(list(t.numpy()), [b"ab", b"c\x00d"])
            with self.assertRaises(dinput.InvalidArgumentError):
                t.__dlpack__()  # bytes tensors have no DLPack form

    def test_numpy_from_dlpack_is_zero_copy(self):
        t = dinput.Tensor.from_value(np.arange(1000, dtype=np.float32))
        data = t.data_ptr()
        self.assertEqual(data, _lib.lib.dinput_tensor_data(t._h))
        a = np.from_dlpack(t)
        self.assertEqual(a.ctypes.data, data)
        b = t.numpy()
        self.assertEqual(b.ctypes.data, data)
        # The exported array keeps the data alive after the tensor handle is gone.
        t.close()
        del t
        gc.collect()
        junk = [np.full(1000, 7, dtype=np.float32) for _ in range(50)]
        self.assertEqual(a.sum(), sum(range(1000)))
        self.assertEqual(b[999], 999.0)
        del junk

    def test_iteration_is_zero_copy(self):
        ds = dinput.Dataset.range(64).batch(16)
        with ds.iterator(output="tensor") as it:
            t = it.get_next()
            a = np.from_dlpack(t)
            self.assertEqual(a.ctypes.data, t.data_ptr())
            t.close()
            np.testing.assert_array_equal(a, np.arange(16))

    def test_unconsumed_capsule_is_released(self):
        # A capsule nobody imports must free the export in its destructor (no leak, no crash).
        t = dinput.Tensor.from_value(np.ones(4))
        for _ in range(100):
            cap = t.__dlpack__()
            del cap
        self.assertEqual(t.__dlpack_device__(), (1, 0))

    def test_cuda_functions_without_a_gpu(self):
        # Host tensors: the CUDA calls have nothing to wait for; the caches report bytes.
        with dinput.Tensor.from_value(np.arange(3)) as t:
            t.cuda_wait()
            t.cuda_wait(0)
            self.assertIsNone(t.cuda_ready_event())
        dinput.cuda_empty_cache()
        limit = dinput.cuda_cache_limit()
        dinput.cuda_set_cache_limit(1 << 20)
        self.assertEqual(dinput.cuda_cache_limit(), 1 << 20)
        dinput.cuda_set_cache_limit(limit)
        held, cached = dinput.cuda_pool_bytes(0)
        self.assertLessEqual(cached, held)
        with self.assertRaises(dinput.InvalidArgumentError):
            dinput.cuda_pool_bytes(-1)
        try:
            t = dinput.Tensor.pinned(np.arange(4, dtype=np.float32))
        except dinput.FailedPreconditionError as e:
            self.assertTrue(str(e))  # no CUDA driver or device here
        else:
            self.assertEqual(t.device_type, 3)
            self.assertEqual(np.from_dlpack(t).tolist(), [0.0, 1.0, 2.0, 3.0])

    def test_close_is_idempotent(self):
        t = dinput.Tensor.from_value([1, 2])
        t.close()
        t.close()
        with self.assertRaises(ValueError):
            t.numpy()
        self.assertIn("closed", repr(t))


if __name__ == "__main__":
    unittest.main()
