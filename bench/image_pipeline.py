#!/usr/bin/env python3
"""An ImageNet-style input pipeline, dinput against PyTorch, in images per second.

  dinput:  records -> decode_jpeg -> random_resized_crop(224) -> random_flip_left_right
           -> normalize -> batch(64), through the Python binding (only whole batches cross
           into Python). decode_jpeg followed by random_resized_crop decodes only the crop's
           region; the four image operations run as one map, the resize writes the flip and
           the normalization in its pass, straight into the batch (docs/images.md, "Chains
           of image operations"). At its best num_parallel_calls among 1 and the number of
           cores (on a machine whose cores are busy with other work, more threads lose).
  PyTorch: a DataLoader over the same JPEG bytes (held in memory, so PyTorch reads no file)
           with torchvision's RandomResizedCrop(224), RandomHorizontalFlip, ToTensor and
           Normalize on PIL images, batch 64, at its best num_workers among 0, 1 and 2.

The images are synthetic 500x375 pictures (gradients plus noise, PIL quality 90, 4:2:0).
Rounds alternate dinput and every PyTorch configuration; each side's best round counts. The
machine's load average is printed with the figures. Goal: dinput >= 3x PyTorch.

  image_pipeline.py [--quick] [--images N] [--rounds R]
Output: one JSON object per measurement on stdout.
"""

import argparse
import io
import json
import os
import sys
import tempfile
import time

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "bindings", "python"))
import dinput  # noqa: E402

MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]
BATCH = 64


def synthetic_jpegs(n, seed=0):
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:375, 0:500]
    out = []
    for i in range(n):
        base = np.stack([(x * (c + 1) + y * (3 - c) + 17 * i) % 256 for c in range(3)], -1)
        img = np.clip(base + rng.integers(-12, 12, base.shape), 0, 255).astype(np.uint8)
        b = io.BytesIO()
        Image.fromarray(img).save(b, "JPEG", quality=90)
        out.append(b.getvalue())
    return out


def dinput_pipeline(path, parallel):
    return (dinput.Dataset.records([path])
            .decode_jpeg(channels=3, num_parallel_calls=parallel)
            .random_resized_crop((224, 224), seed=1, num_parallel_calls=parallel)
            .random_flip_left_right(seed=2)
            .normalize([m * 255 for m in MEAN], [s * 255 for s in STD],
                       num_parallel_calls=parallel)
            .batch(BATCH)
            .prefetch(2))


def run_dinput(ds):
    t0 = time.perf_counter()
    n = 0
    for batch in ds:
        x = batch[0] if isinstance(batch, (list, tuple)) else batch
        assert x.shape[1:] == (224, 224, 3), x.shape
        n += x.shape[0]
    return n, time.perf_counter() - t0


class JpegBytes:
    """A map-style torch dataset over JPEG bytes."""

    def __init__(self, data, transform):
        self.data, self.transform = data, transform

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        img = Image.open(io.BytesIO(self.data[i])).convert("RGB")
        return self.transform(img)


def run_torch(data, workers):
    import torch
    from torchvision import transforms
    t = transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(),
                            transforms.ToTensor(), transforms.Normalize(MEAN, STD)])
    loader = torch.utils.data.DataLoader(JpegBytes(data, t), batch_size=BATCH,
                                         num_workers=workers)
    t0 = time.perf_counter()
    n = 0
    for x in loader:
        assert tuple(x.shape[1:]) == (3, 224, 224), x.shape
        n += x.shape[0]
    return n, time.perf_counter() - t0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true")
    p.add_argument("--images", type=int, default=0)
    p.add_argument("--rounds", type=int, default=0)
    a = p.parse_args()
    n = a.images or (16 if a.quick else 640)
    rounds = a.rounds or (1 if a.quick else 3)
    cores = os.cpu_count() or 1
    data = synthetic_jpegs(n)
    try:
        import torch  # noqa: F401
        import torchvision  # noqa: F401
        have_torch = True
    except ImportError:
        have_torch = False
    worker_counts = [0] if a.quick else [0, 1, 2]
    best = {}
    with tempfile.TemporaryDirectory(prefix="dinput-bench-") as d:
        path = os.path.join(d, "images.tfrecord")
        with dinput.RecordWriter(path) as w:
            for b in data:
                w.write(b)
        parallel = sorted({1, cores})
        pipelines = {p: dinput_pipeline(path, p) for p in parallel}
        for _ in range(rounds):
            for p, ds in pipelines.items():
                got, secs = run_dinput(ds)
                assert got == n
                key = "dinput_parallel%d" % p
                best[key] = max(best.get(key, 0), n / secs)
            if have_torch:
                for w in worker_counts:
                    got, secs = run_torch(data, w)
                    assert got == n
                    key = "torch_workers%d" % w
                    best[key] = max(best.get(key, 0), n / secs)
    load = os.getloadavg()[0]
    mine = [k for k in best if k.startswith("dinput")]
    best["dinput"] = max(best[k] for k in mine)
    out = {"bench": "image.pipeline", "images": n, "size": "500x375", "batch": BATCH,
           "rounds": rounds, "cores": cores, "dinput_images_per_s": round(best["dinput"], 1)}
    out.update({k + "_images_per_s": round(best[k], 1) for k in mine})
    if have_torch:
        torch_keys = sorted(k for k in best if k.startswith("torch"))
        top = max(torch_keys, key=lambda k: best[k])
        out.update({k + "_images_per_s": round(best[k], 1) for k in torch_keys})
        out.update({"torch_best": top, "ratio": round(best["dinput"] / best[top], 3),
                    "goal": ">=3x PyTorch's DataLoader at its best num_workers",
                    "pass": best["dinput"] >= 3 * best[top]})
    else:
        out["torch"] = "skipped: torch or torchvision is not installed"
    out["load"] = round(load, 2)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
