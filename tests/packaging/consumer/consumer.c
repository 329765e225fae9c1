/* A program built against an installed dinput (through pkg-config or the CMake package):
 * iterates range(10).batch(4) and prints one line the test compares. */
#include <stdio.h>

#include <dinput.h>

int main(void) {
  dinput_dataset_t *range = NULL, *batched = NULL;
  dinput_iterator_t* it = NULL;
  dinput_element_t* e = NULL;
  dinput_status_t st;
  int64_t values[4], sum = 0;
  int batches = 0, i;
  if (dinput_dataset_range(&range, 0, 10, 1) != DINPUT_OK ||
      dinput_dataset_batch(&batched, range, 4, NULL) != DINPUT_OK ||
      dinput_dataset_iterator(&it, batched) != DINPUT_OK) {
    fprintf(stderr, "setup failed: %s\n", dinput_last_error_message());
    return 1;
  }
  while ((st = dinput_iterator_get_next(&e, it)) == DINPUT_OK) {
    const dinput_tensor_t* t = dinput_element_get(e, 0);
    int64_t n = dinput_tensor_num_elements(t);
    if (dinput_tensor_copy_to(values, sizeof values, t, DINPUT_INT64) != DINPUT_OK) return 1;
    for (i = 0; i < n; ++i) sum += values[i];
    ++batches;
    dinput_element_free(e);
  }
  dinput_iterator_free(it);
  dinput_dataset_free(batched);
  dinput_dataset_free(range);
  if (st != DINPUT_OUT_OF_RANGE) return 1;
  printf("consumer: version=%s header=%d.%d.%d batches=%d sum=%lld\n", dinput_version(),
         DINPUT_VERSION_MAJOR, DINPUT_VERSION_MINOR, DINPUT_VERSION_PATCH, batches, (long long)sum);
  return 0;
}
