import unittest

import numpy as np
import torch
import torch.utils.data

import util  # noqa: F401 (puts the package of this checkout on sys.path)
import dinput
import dinput.torch_data


class TorchTest(unittest.TestCase):
    def test_from_dlpack_is_zero_copy(self):
        t = dinput.Tensor.from_value(np.arange(12, dtype=np.float32).reshape(3, 4))
        data = t.data_ptr()
        x = torch.from_dlpack(t)
        self.assertEqual(x.data_ptr(), data)
        self.assertEqual(tuple(x.shape), (3, 4))
        t.close()
        self.assertEqual(float(x.sum()), 66.0)  # the torch tensor keeps the memory alive

    def test_to_torch_dtypes(self):
        with dinput.Tensor.from_value(np.array([True, False])) as t:
            x = dinput.torch_data.to_torch(t)
            self.assertEqual(x.dtype, torch.bool)
            self.assertEqual(x.tolist(), [True, False])
        with dinput.Tensor.from_value([b"a", b"b"]) as t:
            self.assertEqual(dinput.torch_data.to_torch(t), [b"a", b"b"])

    def test_dataloader(self):
        x = np.arange(20, dtype=np.float32).reshape(10, 2)
        y = np.arange(10)
        ds = dinput.Dataset.from_tensor_slices((x, y)).batch(4)
        adapter = dinput.torch_data.IterableDataset(ds)
        self.assertIsInstance(adapter, torch.utils.data.IterableDataset)
        self.assertEqual(len(adapter), 3)
        loader = torch.utils.data.DataLoader(adapter, batch_size=None, num_workers=0)
        batches = list(loader)
        self.assertEqual(len(batches), 3)
        self.assertEqual(batches[0][0].dtype, torch.float32)
        self.assertEqual(batches[2][1].tolist(), [8, 9])
        self.assertTrue(torch.equal(torch.cat([b[0] for b in batches]), torch.from_numpy(x)))
        # Two epochs through the same adapter.
        self.assertEqual(len(list(loader)), 3)

    def test_dataloader_collates_unbatched(self):
        ds = dinput.Dataset.range(6)
        loader = torch.utils.data.DataLoader(dinput.torch_data.IterableDataset(ds),
                                             batch_size=4, num_workers=0)
        self.assertEqual([b.tolist() for b in loader], [[0, 1, 2, 3], [4, 5]])

    def test_dataloader_workers_read_disjoint_shards(self):
        ds = dinput.Dataset.range(100).batch(10)
        loader = torch.utils.data.DataLoader(dinput.torch_data.IterableDataset(ds),
                                             batch_size=None, num_workers=2)
        self.assertEqual(sorted(int(x) for b in loader for x in b), list(range(100)))

    def test_rejects_other_datasets(self):
        with self.assertRaises(TypeError):
            dinput.torch_data.IterableDataset([1, 2, 3])


if __name__ == "__main__":
    unittest.main()
