"""The image operations against an independent decoder: PIL (python3-pil), whose JPEG codec
is libjpeg-turbo with the same defaults dinput uses (accurate integer DCT, smooth chroma
upsampling), so pixels must match exactly; PNG is lossless, so they must match too. Also
the element's position in errors, and the same draws with any num_parallel_calls."""

import io
import subprocess
import tempfile
import unittest

import numpy as np
from PIL import Image

from util import tempdir, write_records
import dinput


def jpeg(array, progressive=False, **save):
    if progressive:
        # PIL's progressive writer runs out of buffer on small noisy images: Debian's cjpeg
        # (libjpeg-turbo-progs) writes those.
        with tempfile.NamedTemporaryFile(suffix=".ppm") as f:
            Image.fromarray(array).save(f.name, "PPM")
            return subprocess.run(["cjpeg", "-progressive", "-quality", "90", f.name],
                                  check=True, stdout=subprocess.PIPE).stdout
    b = io.BytesIO()
    Image.fromarray(array).save(b, "JPEG", **save)
    return b.getvalue()


def png(image):
    b = io.BytesIO()
    image.save(b, "PNG")
    return b.getvalue()


def noise(h, w, c=3, seed=0):
    rng = np.random.default_rng(seed)
    shape = (h, w) if c == 1 else (h, w, c)
    # Smooth gradients plus noise: the chroma upsampling and the DCT both matter.
    base = np.add.outer(np.arange(h) * 3, np.arange(w) * 2) % 256
    if c != 1:
        base = np.stack([base, base[::-1], base[:, ::-1]][:c], axis=-1)
    return ((base + rng.integers(0, 60, shape)) % 256).astype(np.uint8)


def images(ds):
    return [e[0] if isinstance(e, (list, tuple)) else e for e in ds]


def slices(values):
    return dinput.Dataset.from_tensor_slices(np.array(values, dtype=object))


class JpegTest(unittest.TestCase):
    def test_pixels_match_pil(self):
        encoded, refs = [], []
        for i, (h, w) in enumerate([(1, 1), (17, 9), (37, 53), (64, 64), (375, 500)]):
            for sub in (0, 1, 2):  # 4:4:4, 4:2:2, 4:2:0
                for progressive in (False, True):
                    data = jpeg(noise(h, w, seed=i), quality=90, subsampling=sub,
                                progressive=progressive)
                    encoded.append(data)
                    refs.append(np.array(Image.open(io.BytesIO(data))))
        for parallel in (1, 3):
            got = images(slices(encoded).decode_jpeg(channels=3, num_parallel_calls=parallel))
            self.assertEqual(len(got), len(refs))
            for g, r in zip(got, refs):
                self.assertEqual(g.dtype, np.uint8)
                np.testing.assert_array_equal(g, r)

    def test_grayscale_and_channels(self):
        gray = jpeg(noise(20, 30, c=1))
        color = jpeg(noise(20, 30))
        ref_gray = np.array(Image.open(io.BytesIO(gray)))
        as_stored = images(slices([gray]).decode_jpeg())[0]
        np.testing.assert_array_equal(as_stored, ref_gray[:, :, None])
        # Gray to RGB repeats the gray value (PIL's convert does too).
        rgb = images(slices([gray]).decode_jpeg(channels=3))[0]
        np.testing.assert_array_equal(rgb, np.array(Image.open(io.BytesIO(gray)).convert("RGB")))
        # Colour to one channel is libjpeg's luma output: PIL's draft("L") asks for the same.
        im = Image.open(io.BytesIO(color))
        im.draft("L", im.size)
        luma = images(slices([color]).decode_jpeg(channels=1))[0]
        np.testing.assert_array_equal(luma[:, :, 0], np.array(im))

    def test_damaged_images_name_the_element(self):
        good = jpeg(noise(30, 40))
        for parallel in (1, 2):
            ds = slices([good, good, good[: len(good) // 2], good]).decode_jpeg(
                channels=3, num_parallel_calls=parallel)
            it = iter(ds)
            next(it)
            next(it)
            with self.assertRaises(dinput.DinputError) as cm:
                next(it)
            self.assertEqual(cm.exception.code_name, "INVALID_ARGUMENT")
            self.assertIn("decode_jpeg: element 2", str(cm.exception))
        with self.assertRaises(dinput.DinputError) as cm:
            images(slices([b""]).decode_jpeg())
        self.assertIn("element 0", str(cm.exception))

    def test_records_file(self):
        with tempdir() as d:
            data = [jpeg(noise(24 + i, 32, seed=i)) for i in range(5)]
            path = write_records(d, "images.tfrecord", data)
            got = images(dinput.Dataset.records([path]).decode_jpeg(channels=3))
            for g, b in zip(got, data):
                np.testing.assert_array_equal(g, np.array(Image.open(io.BytesIO(b))))

    def test_fused_random_resized_crop_decodes_the_same_pixels(self):
        # decode_jpeg then random_resized_crop decodes only the region; a cast in between
        # (exact for uint8) keeps the two apart, decoding the whole image.
        data = [jpeg(noise(40 + i, 60 + 3 * i, seed=i), subsampling=i % 3) for i in range(12)]
        fused = images(slices(data).decode_jpeg(channels=3)
                       .random_resized_crop((24, 24), seed=5))
        whole = images(slices(data).decode_jpeg(channels=3).cast_image("float32")
                       .random_resized_crop((24, 24), seed=5))
        for f, w in zip(fused, whole):
            np.testing.assert_array_equal(f, w)


class PngTest(unittest.TestCase):
    def test_modes_match_pil(self):
        rgb = noise(13, 21)
        cases = [
            (Image.fromarray(rgb), 0, np.array(Image.fromarray(rgb))),
            (Image.fromarray(rgb[:, :, 0]), 0, rgb[:, :, :1]),
            (Image.fromarray(rgb[:, :, 0]), 3, np.repeat(rgb[:, :, :1], 3, axis=2)),
            (Image.fromarray(np.dstack([rgb, rgb[:, :, :1]])), 0, np.dstack([rgb, rgb[:, :, :1]])),
            (Image.fromarray(np.dstack([rgb, rgb[:, :, :1]])), 3, rgb),
            (Image.fromarray(rgb), 4, np.dstack([rgb, np.full(rgb.shape[:2], 255, np.uint8)])),
        ]
        pal = Image.fromarray(rgb).quantize(16)
        cases.append((pal, 3, np.array(pal.convert("RGB"))))
        for image, channels, want in cases:
            got = images(slices([png(image)]).decode_png(channels=channels, num_parallel_calls=2))
            np.testing.assert_array_equal(got[0], want, err_msg="%s %d" % (image.mode, channels))

    def test_damaged(self):
        data = png(Image.fromarray(noise(10, 10)))
        for bad, what in [(data[:40], "element 0"), (b"\x89PNG\r\n\x1a\n" + b"x" * 30, "element 0"),
                          (b"GIF89a", "no PNG signature")]:
            with self.assertRaises(dinput.DinputError) as cm:
                images(slices([bad]).decode_png())
            self.assertEqual(cm.exception.code_name, "INVALID_ARGUMENT")
            self.assertIn(what, str(cm.exception))


class TransformTest(unittest.TestCase):
    def test_resize_matches_half_pixel_formula(self):
        img = noise(7, 11, seed=3)
        got = images(dinput.Dataset.from_tensors(img).resize((5, 4)))[0]

        def taps(n_in, n_out):
            s = (np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5
            f = np.floor(s)
            return (np.maximum(f, 0).astype(int), np.minimum(np.ceil(s), n_in - 1).astype(int),
                    s - f)
        y0, y1, fy = taps(7, 5)
        x0, x1, fx = taps(11, 4)
        a = img.astype(np.float64)
        top = a[y0][:, x0] + (a[y0][:, x1] - a[y0][:, x0]) * fx[None, :, None]
        bot = a[y1][:, x0] + (a[y1][:, x1] - a[y1][:, x0]) * fx[None, :, None]
        want = top + (bot - top) * fy[:, None, None]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)

    def test_normalize_and_flip(self):
        img = noise(4, 5, seed=4)
        mean, std = [10.0, 20.0, 30.0], [2.0, 4.0, 8.0]
        got = images(dinput.Dataset.from_tensors(img).normalize(mean, std, dtype="float16"))[0]
        self.assertEqual(got.dtype, np.float16)
        want = (img.astype(np.float32) - mean) / std
        np.testing.assert_allclose(got.astype(np.float32), want, rtol=1e-3, atol=1e-2)
        flips = images(dinput.Dataset.from_tensors(img).repeat(16)
                       .random_flip_left_right(seed=9, num_parallel_calls=3))
        kinds = set()
        for f in flips:
            if np.array_equal(f, img):
                kinds.add("same")
            else:
                np.testing.assert_array_equal(f, img[:, ::-1])
                kinds.add("flipped")
        self.assertEqual(kinds, {"same", "flipped"})

    def test_flip_and_normalize_in_place(self):
        # After resize each image's buffer has no other holder, so the flip and the float32
        # normalization write over it: the values must be those of fresh buffers.
        data = [jpeg(noise(20 + i, 30, seed=i)) for i in range(12)]
        base = images(slices(data).decode_jpeg(channels=3).resize((8, 10)))
        mean, std = np.array([1.0, 2.0, 3.0]), np.array([2.0, 4.0, 8.0])
        got = images(slices(data).decode_jpeg(channels=3).resize((8, 10))
                     .random_flip_left_right(seed=4, num_parallel_calls=2)
                     .normalize(mean, std, num_parallel_calls=2))
        kinds = set()
        for g, b in zip(got, base):
            same = ((b - mean) / std).astype(np.float32)
            flipped = ((b[:, ::-1] - mean) / std).astype(np.float32)
            if np.allclose(g, same, rtol=1e-6, atol=1e-5):
                kinds.add("same")
            else:
                np.testing.assert_allclose(g, flipped, rtol=1e-6, atol=1e-5)
                kinds.add("flipped")
        self.assertEqual(kinds, {"same", "flipped"})

    def test_resize_of_uint8_equals_resize_of_its_float32_copy(self):
        # uint8 pixels are blended four at a time with vector instructions, float32 ones one
        # at a time: the same operations, so the same values, for sizes up and down.
        for k, (h, w, out) in enumerate([(7, 11, (5, 4)), (20, 33, (40, 19)), (3, 2, (7, 9)),
                                         (64, 48, (24, 24))]):
            img = noise(h, w, seed=k)
            a = images(dinput.Dataset.from_tensors(img).resize(out))[0]
            b = images(dinput.Dataset.from_tensors(img).cast_image("float32").prefetch(1)
                       .resize(out))[0]
            np.testing.assert_array_equal(a, b, err_msg=str(out))

    def test_fused_chain_equals_the_separate_operations(self):
        # Consecutive image operations run as one map, and a resize writes its flip and its
        # float32 normalization in the same pass; a prefetch between them keeps them apart.
        # The values must be equal, bit for bit, and so must the draws of each seed.
        data = [jpeg(noise(30 + i, 41 + 2 * i, seed=i), subsampling=i % 3) for i in range(16)]
        mean, std = [120.0, 110.5, 100.25], [60.0, 57.5, 55.0]

        def chains(split):
            gap = (lambda d: d.prefetch(1)) if split else (lambda d: d)
            dec = slices(data).decode_jpeg(channels=3)
            return [
                gap(gap(dec.random_resized_crop((13, 17), seed=5)).random_flip_left_right(seed=6))
                .normalize(mean, std, num_parallel_calls=2),
                gap(gap(gap(dec).resize((9, 7))).random_flip_left_right(seed=7)).normalize(
                    mean, std),
                gap(gap(dec).resize((11, 12))).normalize([3.0], [2.0]),
                gap(gap(dec.random_resized_crop((8, 8), seed=3)).random_flip_left_right(seed=4))
                .normalize(mean, std, dtype="float16"),
                gap(gap(gap(dec).resize((6, 5))).random_flip_left_right(seed=8)).cast_image(
                    "float16"),
            ]
        for k, (fused, apart) in enumerate(zip(chains(False), chains(True))):
            a, b = images(fused), images(apart)
            self.assertEqual(len(a), len(b))
            for x, y in zip(a, b):
                self.assertEqual(x.dtype, y.dtype)
                np.testing.assert_array_equal(x, y, err_msg="chain %d" % k)
        # Both ways of the flip happen in the first chain.
        plain = images(slices(data).decode_jpeg(channels=3).random_resized_crop((13, 17), seed=5)
                       .prefetch(1).normalize(mean, std))
        flipped = [not np.array_equal(x, y) for x, y in zip(images(chains(False)[0]), plain)]
        self.assertIn(True, flipped)
        self.assertIn(False, flipped)

    def test_batches_of_a_chain_written_in_place(self):
        # A chain ending in a resize, directly batched, writes each image into its place in
        # the batch; the batches must equal those of the same chain kept apart from the batch
        # (a prefetch between them), partial last batch and parallel calls included.
        data = [jpeg(noise(30 + i, 41 + 2 * i, seed=i), subsampling=i % 3) for i in range(23)]
        mean, std = [120.0, 110.5, 100.25], [60.0, 57.5, 55.0]

        def chain(parallel):
            return (slices(data).decode_jpeg(channels=3, num_parallel_calls=parallel)
                    .random_resized_crop((13, 17), seed=5, num_parallel_calls=parallel)
                    .random_flip_left_right(seed=6).normalize(mean, std))
        for parallel in (1, 3):
            direct = images(chain(parallel).batch(5))
            apart = images(chain(parallel).prefetch(1).batch(5))
            self.assertEqual([b.shape[0] for b in direct], [5, 5, 5, 5, 3])
            for x, y in zip(direct, apart):
                np.testing.assert_array_equal(x, y)
            unbatched = images(chain(parallel).prefetch(1))
            np.testing.assert_array_equal(np.concatenate(direct), np.stack(unbatched))
        # A damaged image still fails its batch, naming the element.
        bad = data[:7] + [data[7][: len(data[7]) // 2]] + data[8:]
        ds = (slices(bad).decode_jpeg(channels=3).random_resized_crop((8, 8), seed=1)
              .normalize(mean, std).batch(4))
        it = iter(ds)
        next(it)
        with self.assertRaises(dinput.DinputError) as cm:
            next(it)
        self.assertIn("element 7", str(cm.exception))

    def test_random_crop_checkpoint(self):
        img = noise(9, 9, seed=5)
        ds = (dinput.Dataset.from_tensors(img).repeat(20).random_crop((4, 5), seed=2)
              .random_flip_left_right(seed=3))
        # Each iterator is a new epoch with new draws; the saved state carries its epoch.
        it = iter(ds)
        for _ in range(7):
            next(it)
        state = it.save_state()
        rest = images(it)
        resumed = images(ds.iterator_from_state(state))
        self.assertEqual(len(resumed), 13)
        for a, b in zip(resumed, rest):
            np.testing.assert_array_equal(a, b)
        other_epoch = images(ds)
        self.assertFalse(all(np.array_equal(a, b) for a, b in zip(other_epoch[7:], rest)))


if __name__ == "__main__":
    unittest.main()
