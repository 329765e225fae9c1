/* Reading tf.train.Example records: a record file of serialized Examples, read, batched and
 * parsed without any user code (docs/examples.md):
 *
 *   records("DIR/train.rec") -> batch(4) -> parse_example({
 *       "label":  FixedLenFeature([], int64),
 *       "tokens": VarLenFeature(bytes),
 *       "weight": FixedLenFeature([], float32, default_value=1.0)})
 *
 * It first writes its own record file of 6 Examples (encoded here by hand, as any
 * protobuf library would encode them; the last three have no "weight"), then prints each
 * parsed batch: the labels, the tokens as flat values with their row splits (the ragged
 * encoding of a var-len feature), and the weights. The temporary directory is removed at
 * the end. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "example_util.h"

/* ---- a minimal protobuf encoder: varints and length-delimited fields ---- */

typedef struct {
  char data[512];
  size_t size;
} message_t;

static void put_varint(message_t* m, uint64_t v) {
  for (; v >= 0x80; v >>= 7) m->data[m->size++] = (char)((v & 0x7F) | 0x80);
  m->data[m->size++] = (char)v;
}
static void put_field(message_t* m, unsigned number, const void* data, size_t size) {
  put_varint(m, (uint64_t)number << 3 | 2);
  put_varint(m, size);
  memcpy(m->data + m->size, data, size);
  m->size += size;
}
/* Features.feature[key] = Feature{kind: list}, with list (BytesList = 1, FloatList = 2,
 * Int64List = 3) holding `values` as its field 1. */
static void put_feature(message_t* features, const char* key, unsigned kind,
                        const message_t* values) {
  message_t list = {{0}, 0}, feature = {{0}, 0}, entry = {{0}, 0};
  if (kind == 1) {
    list = *values; /* a BytesList's values are its fields already */
  } else {
    put_field(&list, 1, values->data, values->size); /* packed numbers */
  }
  put_field(&feature, kind, list.data, list.size);
  put_field(&entry, 1, key, strlen(key));
  put_field(&entry, 2, feature.data, feature.size);
  put_field(features, 1, entry.data, entry.size);
}

static message_t make_example(int i) {
  static const char* const words[] = {"the", "quick", "brown", "fox"};
  message_t features = {{0}, 0}, label = {{0}, 0}, tokens = {{0}, 0}, weight = {{0}, 0};
  message_t example = {{0}, 0};
  put_varint(&label, (uint64_t)(i % 2));
  for (int t = 0; t < i % 4; t++) put_field(&tokens, 1, words[t], strlen(words[t]));
  float w = 0.5f * (float)(i + 1);
  memcpy(weight.data, &w, 4); /* floats are little-endian fixed32s */
  weight.size = 4;
  put_feature(&features, "label", 3, &label);
  put_feature(&features, "tokens", 1, &tokens);
  if (i < 3) put_feature(&features, "weight", 2, &weight);
  put_field(&example, 1, features.data, features.size);
  return example;
}

int main(void) {
  char dir[] = "/tmp/dinput-parse-records-XXXXXX";
  char path[512];
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  snprintf(path, sizeof path, "%s/train.rec", dir);
  dinput_record_writer_t* writer = NULL;
  check(dinput_record_writer_open(&writer, path, NULL));
  for (int i = 0; i < 6; i++) {
    message_t e = make_example(i);
    check(dinput_record_writer_write(writer, e.data, e.size));
  }
  check(dinput_record_writer_close(writer));
  dinput_record_writer_free(writer);

  /* The feature spec: keys map to features; the parsed components come sorted by key. */
  dinput_feature_spec_t* features = NULL;
  check(dinput_feature_spec_new(&features));
  check(dinput_feature_spec_add_fixed_len(features, "label", DINPUT_INT64, NULL, 0, NULL));
  check(dinput_feature_spec_add_var_len(features, "tokens", DINPUT_BYTES));
  const float one = 1.0f;
  dinput_tensor_t* default_weight = NULL;
  check(dinput_tensor_new(&default_weight, DINPUT_FLOAT32, NULL, 0, &one, sizeof one));
  check(dinput_feature_spec_add_fixed_len(features, "weight", DINPUT_FLOAT32, NULL, 0,
                                          default_weight));
  dinput_tensor_free(default_weight); /* the spec keeps its own copy */

  const char* files[1] = {path};
  dinput_dataset_t *records = NULL, *batched = NULL, *parsed = NULL;
  check(dinput_dataset_records(&records, files, 1, NULL));
  check(dinput_dataset_batch(&batched, records, 4, NULL));
  check(dinput_dataset_parse_example(&parsed, batched, features, 0));
  dinput_feature_spec_free(features);

  /* label int64[None]; tokens: values bytes[None] and row splits int64[None]; weight. */
  dinput_spec_t* spec = NULL;
  check(dinput_dataset_element_spec(&spec, parsed));
  printf("%zu components\n", dinput_spec_size(spec));
  dinput_spec_free(spec);

  static const char* const names[] = {"label", "tokens", "token_row_splits", "weight"};
  dinput_iterator_t* it = NULL;
  check(dinput_dataset_iterator(&it, parsed));
  dinput_element_t* batch = NULL;
  dinput_status_t status;
  while ((status = dinput_iterator_get_next(&batch, it)) == DINPUT_OK) {
    for (size_t c = 0; c < dinput_element_size(batch); c++) {
      printf("%s%s = ", c ? ", " : "", names[c]);
      print_tensor(dinput_element_get(batch, c));
    }
    printf("\n");
    dinput_element_free(batch);
  }
  if (status != DINPUT_OUT_OF_RANGE) check(status);
  dinput_iterator_free(it);
  dinput_dataset_free(parsed);
  dinput_dataset_free(batched);
  dinput_dataset_free(records);
  unlink(path);
  rmdir(dir);
  return 0;
}
