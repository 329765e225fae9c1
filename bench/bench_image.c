/* bench_image — JPEG decoding (issue "Images").
 *
 *  image.decode_jpeg   from_tensor_slices(N JPEGs).decode_jpeg(channels=3) on one thread.
 *                      Baseline: a plain TurboJPEG loop (tjDecompress2 into RGB, the same
 *                      accurate DCT and smooth upsampling) over the same images into a buffer
 *                      malloc'd per image. Goal: >= 0.9x the baseline's images per second.
 *  image.decode_jpeg.parallel2  the same with num_parallel_calls 2, against num_parallel_calls
 *                      1 in the same run: the scaling on two threads (for information; on a
 *                      machine of 2 busy cores it cannot reach 2x).
 *
 * The images are synthetic 500x375 photos-like pictures (smooth gradients plus noise),
 * encoded once by TurboJPEG at quality 90 with 4:2:0 chroma. Every decoded byte is summed on
 * both sides and the sums compared, so that a broken decode cannot look fast. dinput and the
 * baseline alternate, best of BENCH_RUNS rounds each.
 *
 * Usage: bench_image [--quick]   (--quick: few images, for the CTest smoke test)
 * Output: one JSON object per measurement on stdout.
 */
#include <turbojpeg.h>
#include <unistd.h>

#include "bench_util.h"

enum { kWidth = 500, kHeight = 375 };

typedef struct {
  unsigned char** data;
  unsigned long* size;
  int n;
} jpegs;

static jpegs make_jpegs(int n) {
  jpegs j = {calloc((size_t)n, sizeof(unsigned char*)), calloc((size_t)n, sizeof(unsigned long)),
             n};
  tjhandle tj = tjInitCompress();
  unsigned char* rgb = malloc((size_t)kWidth * kHeight * 3);
  uint32_t state = 12345;
  for (int i = 0; i < n; ++i) {
    for (int y = 0; y < kHeight; ++y)
      for (int x = 0; x < kWidth; ++x)
        for (int c = 0; c < 3; ++c) {
          state = state * 1664525u + 1013904223u;
          int v = (x * (c + 1) + y * (3 - c) + i * 17) % 256 + (int)(state >> 28) - 8;
          rgb[((size_t)y * kWidth + x) * 3 + c] = (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    if (tjCompress2(tj, rgb, kWidth, 0, kHeight, TJPF_RGB, &j.data[i], &j.size[i], TJSAMP_420, 90,
                    0) != 0) {
      fprintf(stderr, "tjCompress2: %s\n", tjGetErrorStr2(tj));
      exit(2);
    }
  }
  free(rgb);
  tjDestroy(tj);
  return j;
}

static int64_t sum_bytes(const unsigned char* p, size_t n) {
  int64_t s = 0;
  for (size_t i = 0; i < n; i += 61) s += p[i];
  return s;
}

/* The baseline: one TurboJPEG handle, a malloc'd output per image. Returns elapsed ns. */
static double run_baseline(const jpegs* j, int64_t* sum) {
  tjhandle tj = tjInitDecompress();
  double t0 = bench_now_ns();
  for (int i = 0; i < j->n; ++i) {
    int w, h, sub, cs;
    if (tjDecompressHeader3(tj, j->data[i], j->size[i], &w, &h, &sub, &cs) != 0) exit(2);
    unsigned char* out = malloc((size_t)w * h * 3);
    if (tjDecompress2(tj, j->data[i], j->size[i], out, w, 0, h, TJPF_RGB, 0) != 0) exit(2);
    *sum += sum_bytes(out, (size_t)w * h * 3);
    free(out);
  }
  double t = bench_now_ns() - t0;
  tjDestroy(tj);
  return t;
}

static dinput_dataset_t* source(const jpegs* j) {
  const char** strs = malloc(sizeof(char*) * (size_t)j->n);
  size_t* lens = malloc(sizeof(size_t) * (size_t)j->n);
  for (int i = 0; i < j->n; ++i) {
    strs[i] = (const char*)j->data[i];
    lens[i] = j->size[i];
  }
  const int64_t shape[1] = {j->n};
  dinput_tensor_t* t = NULL;
  dinput_element_t* e = NULL;
  dinput_dataset_t* ds = NULL;
  BENCH_CHECK(dinput_tensor_new_bytes(&t, shape, 1, strs, lens));
  const dinput_tensor_t* parts[1] = {t};
  BENCH_CHECK(dinput_element_new(&e, parts, 1));
  BENCH_CHECK(dinput_dataset_from_tensor_slices(&ds, e));
  dinput_element_free(e);
  dinput_tensor_free(t);
  free(strs);
  free(lens);
  return ds;
}

static dinput_dataset_t* decoder(const dinput_dataset_t* src, int64_t parallel) {
  dinput_image_options_t* o = NULL;
  dinput_dataset_t* ds = NULL;
  BENCH_CHECK(dinput_image_options_new(&o));
  BENCH_CHECK(dinput_image_options_set_num_parallel_calls(o, parallel));
  BENCH_CHECK(dinput_dataset_decode_jpeg(&ds, src, 3, o));
  dinput_image_options_free(o);
  return ds;
}

static double run_dinput(const dinput_dataset_t* ds, int64_t* sum) {
  dinput_iterator_t* it = NULL;
  BENCH_CHECK(dinput_dataset_iterator(&it, ds));
  double t0 = bench_now_ns();
  dinput_element_t* e = NULL;
  while (bench_next(it, &e)) {
    const dinput_tensor_t* t = dinput_element_get(e, 0);
    *sum += sum_bytes((const unsigned char*)dinput_tensor_data(t),
                      (size_t)dinput_tensor_num_elements(t));
    dinput_element_free(e);
  }
  double t = bench_now_ns() - t0;
  dinput_iterator_free(it);
  return t;
}

static double load_average(void) {
  double l[1] = {-1};
  return getloadavg(l, 1) == 1 ? l[0] : -1;
}

int main(int argc, char** argv) {
  const int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  const int n = quick ? 8 : 400, runs = quick ? 1 : BENCH_RUNS;
  jpegs j = make_jpegs(n);
  dinput_dataset_t* src = source(&j);
  dinput_dataset_t* seq = decoder(src, 1);
  dinput_dataset_t* par = decoder(src, 2);
  double best_base = 1e300, best_seq = 1e300, best_par = 1e300;
  int64_t want = 0, got = 0;
  run_baseline(&j, &want); /* warm-up */
  want = 0;
  for (int r = 0; r < runs; ++r) {
    int64_t s1 = 0, s2 = 0, s3 = 0;
    double b = run_baseline(&j, &s1), d = run_dinput(seq, &s2), p = run_dinput(par, &s3);
    if (s1 != s2 || s1 != s3) {
      fprintf(stderr, "decoded pixels differ: baseline sum %lld, dinput %lld and %lld\n",
              (long long)s1, (long long)s2, (long long)s3);
      return 2;
    }
    want = s1;
    got = s2;
    if (b < best_base) best_base = b;
    if (d < best_seq) best_seq = d;
    if (p < best_par) best_par = p;
  }
  (void)got;
  (void)want;
  const double base_ips = n / (best_base * 1e-9), seq_ips = n / (best_seq * 1e-9);
  const double par_ips = n / (best_par * 1e-9);
  printf(
      "{\"bench\":\"image.decode_jpeg\",\"images\":%d,\"size\":\"%dx%d\",\"runs\":%d,"
      "\"dinput_images_per_s\":%.1f,\"baseline_images_per_s\":%.1f,\"ratio\":%.3f,"
      "\"goal\":\">=0.9x a plain TurboJPEG loop on one thread\",\"pass\":%s,\"load\":%.2f}\n",
      n, kWidth, kHeight, runs, seq_ips, base_ips, seq_ips / base_ips,
      bench_bool(seq_ips >= 0.9 * base_ips), load_average());
  printf(
      "{\"bench\":\"image.decode_jpeg.parallel2\",\"images\":%d,\"runs\":%d,"
      "\"parallel2_images_per_s\":%.1f,\"parallel1_images_per_s\":%.1f,\"scaling\":%.3f,"
      "\"goal\":\"scales with num_parallel_calls (for information)\",\"cores\":%ld,"
      "\"load\":%.2f}\n",
      n, runs, par_ips, seq_ips, par_ips / seq_ips, sysconf(_SC_NPROCESSORS_ONLN), load_average());
  dinput_dataset_free(seq);
  dinput_dataset_free(par);
  dinput_dataset_free(src);
  for (int i = 0; i < n; ++i) tjFree(j.data[i]);
  free(j.data);
  free(j.size);
  return 0;
}
