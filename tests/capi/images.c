/* The image operations through the C API: hand-computed resize, crop and flip results, the
 * same draws with any num_parallel_calls, resuming a random pipeline from a saved state, and
 * damaged images failing with INVALID_ARGUMENT naming the element, also on a thread pool. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dinput.h"

/* An 8x8 grayscale JPEG (PIL, quality 95) of the ramp 3 * (8y + x). */
static const unsigned char kJpeg[] = {
    0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01,
    0x00, 0x01, 0x00, 0x00, 0xff, 0xdb, 0x00, 0x43, 0x00, 0x02, 0x01, 0x01, 0x01, 0x01, 0x01, 0x02,
    0x01, 0x01, 0x01, 0x02, 0x02, 0x02, 0x02, 0x02, 0x04, 0x03, 0x02, 0x02, 0x02, 0x02, 0x05, 0x04,
    0x04, 0x03, 0x04, 0x06, 0x05, 0x06, 0x06, 0x06, 0x05, 0x06, 0x06, 0x06, 0x07, 0x09, 0x08, 0x06,
    0x07, 0x09, 0x07, 0x06, 0x06, 0x08, 0x0b, 0x08, 0x09, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x06, 0x08,
    0x0b, 0x0c, 0x0b, 0x0a, 0x0c, 0x09, 0x0a, 0x0a, 0x0a, 0xff, 0xc0, 0x00, 0x0b, 0x08, 0x00, 0x08,
    0x00, 0x08, 0x01, 0x01, 0x11, 0x00, 0xff, 0xc4, 0x00, 0x1f, 0x00, 0x00, 0x01, 0x05, 0x01, 0x01,
    0x01, 0x01, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04,
    0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0xff, 0xc4, 0x00, 0xb5, 0x10, 0x00, 0x02, 0x01, 0x03,
    0x03, 0x02, 0x04, 0x03, 0x05, 0x05, 0x04, 0x04, 0x00, 0x00, 0x01, 0x7d, 0x01, 0x02, 0x03, 0x00,
    0x04, 0x11, 0x05, 0x12, 0x21, 0x31, 0x41, 0x06, 0x13, 0x51, 0x61, 0x07, 0x22, 0x71, 0x14, 0x32,
    0x81, 0x91, 0xa1, 0x08, 0x23, 0x42, 0xb1, 0xc1, 0x15, 0x52, 0xd1, 0xf0, 0x24, 0x33, 0x62, 0x72,
    0x82, 0x09, 0x0a, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x34, 0x35,
    0x36, 0x37, 0x38, 0x39, 0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x53, 0x54, 0x55,
    0x56, 0x57, 0x58, 0x59, 0x5a, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x73, 0x74, 0x75,
    0x76, 0x77, 0x78, 0x79, 0x7a, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8a, 0x92, 0x93, 0x94,
    0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xb2,
    0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9,
    0xca, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xe1, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6,
    0xe7, 0xe8, 0xe9, 0xea, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa, 0xff, 0xda,
    0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3f, 0x00, 0xf9, 0xe7, 0xc1, 0x1f, 0xf0, 0x44, 0xaf, 0xb9,
    0xff, 0x00, 0x14, 0x8f, 0xfe, 0x40, 0xff, 0x00, 0xeb, 0x57, 0xff, 0xd9};

/* A dataset of one 2x3x1 float32 image whose pixel (y, x) is 10y + x. */
static dinput_dataset_t* small_image(void) {
  const float px[6] = {0, 1, 2, 10, 11, 12};
  const int64_t shape[3] = {2, 3, 1};
  dinput_tensor_t* t = NULL;
  dinput_dataset_t* ds = NULL;
  if (dinput_tensor_new(&t, DINPUT_FLOAT32, shape, 3, px, sizeof px) != DINPUT_OK) return NULL;
  dinput_element_t* e = make_element(&t, 1);
  if (e) dinput_dataset_from_tensors(&ds, e);
  dinput_element_free(e);
  return ds;
}

/* The first element's first component as floats (n of them at most); returns how many. */
static size_t first_floats(const dinput_dataset_t* ds, float* out, size_t n) {
  dinput_iterator_t* it = NULL;
  dinput_element_t* e = NULL;
  size_t count = 0;
  if (dinput_dataset_iterator(&it, ds) == DINPUT_OK &&
      dinput_iterator_get_next(&e, it) == DINPUT_OK) {
    const dinput_tensor_t* t = dinput_element_get(e, 0);
    count = (size_t)dinput_tensor_num_elements(t);
    if (count > n) count = n;
    memcpy(out, dinput_tensor_data(t), count * sizeof(float));
  }
  dinput_element_free(e);
  dinput_iterator_free(it);
  return count;
}

static void test_resize_crop_by_hand(void) {
  dinput_dataset_t* img = small_image();
  dinput_dataset_t* ds = NULL;
  float v[24];
  CHECK(img != NULL);
  /* 3 columns to 1: the middle one (half-pixel centres). */
  CHECK_OK(dinput_dataset_resize(&ds, img, 2, 1, NULL));
  CHECK(first_floats(ds, v, 24) == 2 && v[0] == 1.0f && v[1] == 11.0f);
  dinput_dataset_free(ds);
  /* 2x3 to 4x6: output x maps to (x + 0.5) / 2 - 0.5, clamped; (1, 1) blends 0, 1, 10, 11
   * with weights 3/4 and 1/4 on each axis: 0.25 + 2.5. */
  CHECK_OK(dinput_dataset_resize(&ds, img, 4, 6, NULL));
  CHECK(first_floats(ds, v, 24) == 24);
  CHECK(v[0] == 0.0f && v[1] == 0.25f && v[5] == 2.0f);
  CHECK(fabsf(v[6 + 1] - 2.75f) < 1e-6f && v[18 + 5] == 12.0f);
  dinput_dataset_free(ds);
  /* The centred 1x1 region of 2x3 rounds towards the top left: (0, 1). */
  CHECK_OK(dinput_dataset_center_crop(&ds, img, 1, 1, NULL));
  CHECK(first_floats(ds, v, 24) == 1 && v[0] == 1.0f);
  dinput_dataset_free(ds);
  /* A crop larger than the image fails when iterated, naming the element. */
  CHECK_OK(dinput_dataset_center_crop(&ds, img, 3, 3, NULL));
  {
    dinput_iterator_t* it = NULL;
    dinput_element_t* e = NULL;
    CHECK_OK(dinput_dataset_iterator(&it, ds));
    CHECK_STATUS(dinput_iterator_get_next(&e, it), DINPUT_INVALID_ARGUMENT);
    CHECK_MSG("center_crop: element 0");
    CHECK_MSG("smaller than the crop 3x3");
    dinput_iterator_free(it);
  }
  dinput_dataset_free(ds);
  /* Arguments refused when the operation is built, each naming what is wrong. */
  {
    const float two[2] = {1, 2};
    CHECK_STATUS(dinput_dataset_cast_image(&ds, img, DINPUT_INT8, NULL), DINPUT_INVALID_ARGUMENT);
    CHECK_MSG("dtype must be float32 or float16, got int8");
    CHECK_STATUS(dinput_dataset_normalize(&ds, img, two, two, 2, DINPUT_FLOAT32, NULL),
                 DINPUT_INVALID_ARGUMENT);
    CHECK_MSG("normalize: 2 mean values for images of 1 channels");
    CHECK_STATUS(dinput_dataset_normalize(&ds, img, NULL, two, 1, DINPUT_FLOAT32, NULL),
                 DINPUT_INVALID_ARGUMENT);
    CHECK_MSG("argument 'mean' is NULL");
    CHECK_STATUS(dinput_dataset_resize(&ds, img, 0, 4, NULL), DINPUT_INVALID_ARGUMENT);
    CHECK_MSG("resize: size must be [height, width] within 1..65535, got [0, 4]");
    CHECK_STATUS(dinput_dataset_random_resized_crop(&ds, img, 4, 4, 0.5, 0.2, 0.75, 1.33, 1, NULL),
                 DINPUT_INVALID_ARGUMENT);
    CHECK_MSG("scale must satisfy 0 < min <= max <= 1");
    CHECK(ds == NULL);
  }
  /* normalize: (x - 2) / 4, one value for every channel. */
  {
    const float mean = 2, stddev = 4;
    CHECK_OK(dinput_dataset_normalize(&ds, img, &mean, &stddev, 1, DINPUT_FLOAT32, NULL));
    CHECK(first_floats(ds, v, 24) == 6 && v[0] == -0.5f && v[5] == 2.5f);
    dinput_dataset_free(ds);
  }
  dinput_dataset_free(img);
}

/* The pipeline img.repeat(n).random_crop(1x2).random_flip_left_right with num_parallel_calls
 * `parallel`: each element's two values as one int (100 * first + second). */
static dinput_dataset_t* random_pipeline(int64_t n, int64_t parallel) {
  dinput_dataset_t* img = small_image();
  dinput_dataset_t *rep = NULL, *crop = NULL, *flip = NULL;
  dinput_image_options_t* o = NULL;
  dinput_image_options_new(&o);
  dinput_image_options_set_num_parallel_calls(o, parallel);
  dinput_dataset_repeat(&rep, img, n);
  dinput_dataset_random_crop(&crop, rep, 1, 2, 11, o);
  dinput_dataset_random_flip_left_right(&flip, crop, 12, NULL);
  dinput_image_options_free(o);
  dinput_dataset_free(img);
  dinput_dataset_free(rep);
  dinput_dataset_free(crop);
  return flip;
}

static int read_pairs(dinput_iterator_t* it, int* out, int max) {
  int n = 0;
  dinput_element_t* e = NULL;
  while (n < max && dinput_iterator_get_next(&e, it) == DINPUT_OK) {
    const float* v = (const float*)dinput_tensor_data(dinput_element_get(e, 0));
    out[n++] = (int)(v[0] * 100 + v[1]);
    dinput_element_free(e);
    e = NULL;
  }
  return n;
}

static void test_random_ops_are_reproducible(void) {
  enum { N = 40 };
  int seq[N], par[N], resumed[N];
  int i, flipped = 0, moved = 0;
  dinput_dataset_t* a = random_pipeline(N, 1);
  dinput_dataset_t* b = random_pipeline(N, 3);
  dinput_iterator_t *ia = NULL, *ib = NULL, *ic = NULL;
  dinput_state_t* state = NULL;
  CHECK(a != NULL && b != NULL);
  CHECK_OK(dinput_dataset_iterator(&ia, a));
  CHECK(read_pairs(ia, seq, N) == N);
  CHECK_OK(dinput_dataset_iterator(&ib, b));
  CHECK(read_pairs(ib, par, 17) == 17);
  /* Saved in the middle, on a thread pool, then restored into a new iterator. */
  CHECK_OK(dinput_iterator_save(&state, ib));
  CHECK(read_pairs(ib, par + 17, N - 17) == N - 17);
  CHECK(memcmp(seq, par, sizeof seq) == 0);
  CHECK_OK(dinput_dataset_iterator_from_state(&ic, b, dinput_state_data(state),
                                              dinput_state_size(state)));
  CHECK(read_pairs(ic, resumed, N - 17) == N - 17);
  CHECK(memcmp(resumed, seq + 17, (N - 17) * sizeof(int)) == 0);
  /* Every crop is a valid 1x2 window, flipped or not, and both kinds of draws happen. */
  for (i = 0; i < N; ++i) {
    const int first = seq[i] / 100, second = seq[i] % 100;
    const int lo = first < second ? first : second;
    CHECK((first - second == 1 || second - first == 1) && lo % 10 <= 1);
    flipped += first > second;
    moved += lo != 0;
  }
  CHECK(flipped > 0 && flipped < N && moved > 0 && moved < N);
  dinput_state_free(state);
  dinput_iterator_free(ia);
  dinput_iterator_free(ib);
  dinput_iterator_free(ic);
  dinput_dataset_free(a);
  dinput_dataset_free(b);
}

static void test_jpeg_and_damaged_images(void) {
  /* Four records: good, truncated, good, garbage. */
  const char* strs[4] = {(const char*)kJpeg, (const char*)kJpeg, (const char*)kJpeg, "garbage"};
  const size_t lens[4] = {sizeof kJpeg, sizeof kJpeg / 2, sizeof kJpeg, 7};
  const int64_t shape[1] = {4};
  dinput_tensor_t* t = NULL;
  dinput_dataset_t *src = NULL, *ds = NULL;
  dinput_image_options_t* o = NULL;
  dinput_iterator_t* it = NULL;
  dinput_element_t* e = NULL;
  CHECK_OK(dinput_tensor_new_bytes(&t, shape, 1, strs, lens));
  {
    dinput_element_t* el = make_element(&t, 1);
    CHECK_OK(dinput_dataset_from_tensor_slices(&src, el));
    dinput_element_free(el);
  }
  CHECK_OK(dinput_image_options_new(&o));
  CHECK_OK(dinput_image_options_set_num_parallel_calls(o, 2));
  CHECK_OK(dinput_dataset_decode_jpeg(&ds, src, 0, o));
  /* The handle is frozen once used. */
  CHECK_STATUS(dinput_image_options_set_component(o, 1), DINPUT_FAILED_PRECONDITION);
  CHECK_OK(dinput_dataset_iterator(&it, ds));
  CHECK_OK(dinput_iterator_get_next(&e, it));
  {
    const dinput_tensor_t* img = dinput_element_get(e, 0);
    const unsigned char* px = (const unsigned char*)dinput_tensor_data(img);
    CHECK(dinput_tensor_dtype(img) == DINPUT_UINT8 && dinput_tensor_num_elements(img) == 64);
    /* PIL decodes the first row as 0 2 6 9 12 15 18 21: libjpeg-turbo's defaults agree. */
    CHECK(px[0] == 0 && px[1] == 2 && px[2] == 6 && px[7] == 21);
  }
  dinput_element_free(e);
  e = NULL;
  CHECK_STATUS(dinput_iterator_get_next(&e, it), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("decode_jpeg: element 1");
  dinput_iterator_free(it);
  /* A component the elements lack is refused when built (a failing call clears its
   * out-parameter, so `ds` is freed first). */
  dinput_dataset_free(ds);
  ds = NULL;
  dinput_image_options_free(o);
  CHECK_OK(dinput_image_options_new(&o));
  CHECK_OK(dinput_image_options_set_component(o, 1));
  CHECK_STATUS(dinput_dataset_decode_png(&ds, src, 0, o), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("component 1 does not exist");
  CHECK_STATUS(dinput_dataset_decode_jpeg(&ds, src, 2, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("channels must be 0 (as stored), 1 or 3");
  dinput_image_options_free(o);
  dinput_dataset_free(ds);
  dinput_dataset_free(src);
}

int main(void) {
  test_resize_crop_by_hand();
  test_random_ops_are_reproducible();
  test_jpeg_and_damaged_images();
  return check_finish_();
}
