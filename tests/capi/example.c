/* The Example parse operations through the C API: the feature spec handle (frozen when
 * used), parse_example on batches with a var-len feature's ragged components,
 * parse_single_example with a default, parse_sequence_example, errors naming the record and
 * the key, and a checkpoint taken through a parse. Records are written by a small encoder
 * here (varints and length-delimited fields), following tf.train.Example's field numbers. */
#include <stdlib.h>

#include "check.h"

typedef struct {
  char data[256];
  size_t n;
} buf_t;

static void put_varint(buf_t* b, uint64_t v) {
  while (v >= 0x80) {
    b->data[b->n++] = (char)((v & 0x7F) | 0x80);
    v >>= 7;
  }
  b->data[b->n++] = (char)v;
}
static void put_bytes(buf_t* b, unsigned field, const char* p, size_t n) {
  put_varint(b, ((uint64_t)field << 3) | 2);
  put_varint(b, n);
  memcpy(b->data + b->n, p, n);
  b->n += n;
}
static void put_msg(buf_t* b, unsigned field, const buf_t* m) {
  put_bytes(b, field, m->data, m->n);
}

/* A map entry key -> Feature holding int64 values (packed) or strings. */
static void add_int64_feature(buf_t* features, const char* key, const int64_t* v, int n) {
  buf_t packed = {{0}, 0}, list = {{0}, 0}, feature = {{0}, 0}, entry = {{0}, 0};
  int i;
  for (i = 0; i < n; ++i) put_varint(&packed, (uint64_t)v[i]);
  put_msg(&list, 1, &packed);
  put_msg(&feature, 3, &list);
  put_bytes(&entry, 1, key, strlen(key));
  put_msg(&entry, 2, &feature);
  put_msg(features, 1, &entry);
}
static void add_bytes_feature(buf_t* features, const char* key, const char* const* v, int n) {
  buf_t list = {{0}, 0}, feature = {{0}, 0}, entry = {{0}, 0};
  int i;
  for (i = 0; i < n; ++i) put_bytes(&list, 1, v[i], strlen(v[i]));
  put_msg(&feature, 1, &list);
  put_bytes(&entry, 1, key, strlen(key));
  put_msg(&entry, 2, &feature);
  put_msg(features, 1, &entry);
}

/* Record i: id = i, tags = i copies of "t" (record 3 lacks id). */
static void record(buf_t* out, int i) {
  static const char* const tags[] = {"t", "t", "t", "t"};
  buf_t features = {{0}, 0};
  int64_t id = i;
  out->n = 0;
  if (i != 3) add_int64_feature(&features, "id", &id, 1);
  add_bytes_feature(&features, "tags", tags, i);
  put_msg(out, 1, &features);
}

static dinput_dataset_t* records(int count) {
  const char* strings[8];
  size_t lengths[8];
  buf_t bufs[8];
  int64_t shape[1];
  int i;
  dinput_tensor_t* t = NULL;
  dinput_element_t* e;
  dinput_dataset_t* ds = NULL;
  for (i = 0; i < count; ++i) {
    record(&bufs[i], i);
    strings[i] = bufs[i].data;
    lengths[i] = bufs[i].n;
  }
  shape[0] = count;
  CHECK_OK(dinput_tensor_new_bytes(&t, shape, 1, strings, lengths));
  e = make_element(&t, 1);
  CHECK_OK(dinput_dataset_from_tensor_slices(&ds, e));
  dinput_element_free(e);
  return ds;
}

static dinput_feature_spec_t* id_and_tags(int with_default) {
  dinput_feature_spec_t* f = NULL;
  dinput_tensor_t* def = NULL;
  int64_t minus_one = -1;
  CHECK_OK(dinput_feature_spec_new(&f));
  if (with_default) def = make_int64(&minus_one, 1, 0);
  CHECK_OK(dinput_feature_spec_add_fixed_len(f, "id", DINPUT_INT64, NULL, 0, def));
  CHECK_OK(dinput_feature_spec_add_var_len(f, "tags", DINPUT_BYTES));
  dinput_tensor_free(def);
  return f;
}

static void test_parse_example(void) {
  dinput_dataset_t *src = records(3), *batched = NULL, *parsed = NULL;
  dinput_feature_spec_t* f = id_and_tags(0);
  dinput_spec_t* spec = NULL;
  dinput_iterator_t* it = NULL;
  dinput_element_t* e = NULL;
  int64_t v[8];
  static const int64_t ids[] = {0, 1}, splits[] = {0, 0, 1}, last_splits[] = {0, 2};
  CHECK_OK(batch_with(&batched, src, 2, 0));
  CHECK_OK(dinput_dataset_parse_example(&parsed, batched, f, 0));
  /* Frozen once used. */
  CHECK_STATUS(dinput_feature_spec_add_var_len(f, "more", DINPUT_INT64),
               DINPUT_FAILED_PRECONDITION);
  CHECK_MSG("dinput_dataset_parse_example");
  /* id int64[None], tags: bytes[None] values and int64[None] row splits. */
  CHECK_OK(dinput_dataset_element_spec(&spec, parsed));
  CHECK(dinput_spec_size(spec) == 3);
  CHECK(dinput_spec_dtype(spec, 0) == DINPUT_INT64 && dinput_spec_rank(spec, 0) == 1);
  CHECK(dinput_spec_dtype(spec, 1) == DINPUT_BYTES);
  CHECK(dinput_spec_dtype(spec, 2) == DINPUT_INT64);
  dinput_spec_free(spec);
  CHECK_OK(dinput_dataset_iterator(&it, parsed));
  CHECK_OK(dinput_iterator_get_next(&e, it));
  CHECK(same_int64(v, read_int64(e, 0, v, 8), ids, 2));
  CHECK(dinput_tensor_num_elements(dinput_element_get(e, 1)) == 1);
  CHECK(same_int64(v, read_int64(e, 2, v, 8), splits, 3));
  dinput_element_free(e);
  CHECK_OK(dinput_iterator_get_next(&e, it));
  CHECK(same_int64(v, read_int64(e, 2, v, 8), last_splits, 2));
  dinput_element_free(e);
  CHECK_STATUS(dinput_iterator_get_next(&e, it), DINPUT_OUT_OF_RANGE);
  dinput_iterator_free(it);
  /* Wrong component, and a scalar input for the batched parse. */
  dinput_dataset_free(parsed);
  CHECK_STATUS(dinput_dataset_parse_example(&parsed, batched, f, 1), DINPUT_INVALID_ARGUMENT);
  CHECK_STATUS(dinput_dataset_parse_example(&parsed, src, f, 0), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("bytes vector");
  CHECK_STATUS(dinput_dataset_parse_example(&parsed, src, NULL, 0), DINPUT_INVALID_ARGUMENT);
  dinput_feature_spec_free(f);
  dinput_dataset_free(batched);
  dinput_dataset_free(src);
}

static void test_single_and_errors(void) {
  dinput_dataset_t *src = records(5), *parsed = NULL, *strict = NULL;
  dinput_feature_spec_t *f = id_and_tags(1), *g = id_and_tags(0);
  int64_t v[16], n = 0;
  static const int64_t ids[] = {0, 1, 2, -1, 4};
  dinput_iterator_t* it = NULL;
  dinput_element_t* e = NULL;
  int i;
  CHECK_OK(dinput_dataset_parse_single_example(&parsed, src, f, 0));
  CHECK(drain_int64(parsed, v, 16, &n) == 5 && same_int64(v, 5, ids, 5));
  /* Without the default, record 3 fails naming the record and the key. */
  CHECK_OK(dinput_dataset_parse_single_example(&strict, src, g, 0));
  CHECK_OK(dinput_dataset_iterator(&it, strict));
  for (i = 0; i < 3; ++i) {
    CHECK_OK(dinput_iterator_get_next(&e, it));
    dinput_element_free(e);
  }
  CHECK_STATUS(dinput_iterator_get_next(&e, it), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("record 3 of the input");
  CHECK_MSG("'id'");
  CHECK_MSG("missing");
  dinput_iterator_free(it);
  /* Bad specs name the key. */
  CHECK_STATUS(dinput_feature_spec_add_fixed_len(NULL, "x", DINPUT_INT64, NULL, 0, NULL),
               DINPUT_INVALID_ARGUMENT);
  {
    dinput_feature_spec_t* h = NULL;
    int64_t dim = -1;
    CHECK_OK(dinput_feature_spec_new(&h));
    CHECK_STATUS(dinput_feature_spec_add_fixed_len(h, "k", DINPUT_INT32, NULL, 0, NULL),
                 DINPUT_INVALID_ARGUMENT);
    CHECK_MSG("'k'");
    CHECK_STATUS(
        dinput_feature_spec_add_fixed_len_sequence(h, "u", DINPUT_FLOAT32, &dim, 1, 1, NULL),
        DINPUT_INVALID_ARGUMENT);
    CHECK_OK(dinput_feature_spec_add_fixed_len(h, "k", DINPUT_INT64, NULL, 0, NULL));
    CHECK_STATUS(dinput_feature_spec_add_var_len(h, "k", DINPUT_INT64), DINPUT_INVALID_ARGUMENT);
    CHECK_MSG("twice");
    /* A fixed-length feature cannot be a feature list. */
    dinput_dataset_t* refused = NULL; /* a failing call clears its out-parameter */
    CHECK_STATUS(dinput_dataset_parse_sequence_example(&refused, src, NULL, h, 0),
                 DINPUT_INVALID_ARGUMENT);
    CHECK(refused == NULL);
    dinput_feature_spec_free(h);
  }
  dinput_feature_spec_free(NULL);
  dinput_feature_spec_free(f);
  dinput_feature_spec_free(g);
  dinput_dataset_free(parsed);
  dinput_dataset_free(strict);
  dinput_dataset_free(src);
}

static void test_sequence_example(void) {
  /* context {n: [2]}, feature_lists {x: [[1], [2, 3]]} */
  buf_t ctx = {{0}, 0}, lists = {{0}, 0}, fl = {{0}, 0}, seq = {{0}, 0};
  buf_t entry = {{0}, 0};
  int64_t two = 2, v[8];
  static const int64_t values[] = {1, 2, 3}, splits[] = {0, 1, 3};
  const char* s;
  size_t len;
  dinput_tensor_t* t = NULL;
  dinput_element_t *e, *got = NULL;
  dinput_dataset_t *src = NULL, *parsed = NULL;
  dinput_feature_spec_t *c = NULL, *l = NULL;
  dinput_iterator_t* it = NULL;
  add_int64_feature(&ctx, "n", &two, 1);
  {
    /* The FeatureList: one Feature per step, [1] and [2, 3]. */
    buf_t f1 = {{0}, 0}, f2 = {{0}, 0}, packed = {{0}, 0}, list = {{0}, 0};
    put_varint(&packed, 1);
    put_msg(&list, 1, &packed);
    put_msg(&f1, 3, &list);
    packed.n = list.n = 0;
    put_varint(&packed, 2);
    put_varint(&packed, 3);
    put_msg(&list, 1, &packed);
    put_msg(&f2, 3, &list);
    put_msg(&fl, 1, &f1);
    put_msg(&fl, 1, &f2);
  }
  put_bytes(&entry, 1, "x", 1);
  put_msg(&entry, 2, &fl);
  put_msg(&lists, 1, &entry);
  put_msg(&seq, 1, &ctx);
  put_msg(&seq, 2, &lists);
  s = seq.data;
  len = seq.n;
  CHECK_OK(dinput_tensor_new_bytes(&t, NULL, 0, &s, &len));
  e = make_element(&t, 1);
  CHECK_OK(dinput_dataset_from_tensors(&src, e));
  dinput_element_free(e);
  CHECK_OK(dinput_feature_spec_new(&c));
  CHECK_OK(dinput_feature_spec_new(&l));
  CHECK_OK(dinput_feature_spec_add_fixed_len(c, "n", DINPUT_INT64, NULL, 0, NULL));
  CHECK_OK(dinput_feature_spec_add_var_len(l, "x", DINPUT_INT64));
  CHECK_OK(dinput_dataset_parse_sequence_example(&parsed, src, c, l, 0));
  CHECK_OK(dinput_dataset_iterator(&it, parsed));
  CHECK_OK(dinput_iterator_get_next(&got, it));
  CHECK(dinput_element_size(got) == 3);
  CHECK(read_int64(got, 0, v, 8) == 1 && v[0] == 2);
  CHECK(same_int64(v, read_int64(got, 1, v, 8), values, 3));
  CHECK(same_int64(v, read_int64(got, 2, v, 8), splits, 3));
  dinput_element_free(got);
  dinput_iterator_free(it);
  dinput_feature_spec_free(c);
  dinput_feature_spec_free(l);
  dinput_dataset_free(parsed);
  dinput_dataset_free(src);
}

static void test_checkpoint_through_parse(void) {
  dinput_dataset_t *src = records(5), *batched = NULL, *parsed = NULL;
  dinput_feature_spec_t* f = id_and_tags(1);
  dinput_iterator_t *it = NULL, *again = NULL;
  dinput_element_t* e = NULL;
  dinput_state_t* state = NULL;
  int64_t v[8];
  static const int64_t last[] = {4};
  CHECK_OK(batch_with(&batched, src, 2, 0));
  CHECK_OK(dinput_dataset_parse_example(&parsed, batched, f, 0));
  CHECK_OK(dinput_dataset_iterator(&it, parsed));
  CHECK_OK(dinput_iterator_get_next(&e, it));
  dinput_element_free(e);
  CHECK_OK(dinput_iterator_save(&state, it));
  CHECK_OK(dinput_dataset_iterator_from_state(&again, parsed, dinput_state_data(state),
                                              dinput_state_size(state)));
  CHECK_OK(dinput_iterator_get_next(&e, again));
  dinput_element_free(e);
  CHECK_OK(dinput_iterator_get_next(&e, again));
  CHECK(same_int64(v, read_int64(e, 0, v, 8), last, 1));
  dinput_element_free(e);
  dinput_state_free(state);
  dinput_iterator_free(it);
  dinput_iterator_free(again);
  dinput_feature_spec_free(f);
  dinput_dataset_free(parsed);
  dinput_dataset_free(batched);
  dinput_dataset_free(src);
}

int main(void) {
  test_parse_example();
  test_single_and_errors();
  test_sequence_example();
  test_checkpoint_through_parse();
  return check_finish_();
}
