/* The most common real pipeline: record files listed by a glob pattern, read several at a
 * time (interleave of one records reader per file), shuffled, batched to the global batch
 * size and distributed over two replicas:
 *
 *   list_files("DIR/part-*.rec") -> interleave(records, cycle_length=3) -> shuffle(32)
 *     -> batch(8) -> distribute over CPU:0, CPU:1
 *
 * It first writes its own small record files (6 files of 10 records, "f<file>-r<record>")
 * into a new temporary directory, then reads one epoch and checks that every record arrived
 * exactly once across the replicas. The order depends on the shuffle; what it prints does
 * not. The temporary directory is removed at the end. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "example_util.h"

enum { kFiles = 6, kRecordsPerFile = 10, kGlobalBatch = 8 };

/* Writes DIR/part-F.rec for every file F with the records "fF-rR". */
static void write_files(const char* dir) {
  char path[512], record[32];
  for (int f = 0; f < kFiles; f++) {
    dinput_record_writer_t* writer = NULL;
    snprintf(path, sizeof path, "%s/part-%d.rec", dir, f);
    check(
        dinput_record_writer_open(&writer, path, NULL)); /* NULL: default options, no compression */
    for (int r = 0; r < kRecordsPerFile; r++) {
      int n = snprintf(record, sizeof record, "f%d-r%d", f, r);
      check(dinput_record_writer_write(writer, record, (size_t)n));
    }
    check(dinput_record_writer_close(writer)); /* the file appears at `path` only now */
    dinput_record_writer_free(writer);
  }
}

/* interleave's function: a records reader for the one file named by the input element. */
static dinput_status_t open_records(dinput_dataset_t** out, const dinput_element_t* in,
                                    void* user_data) {
  char name[512];
  const char* s = NULL;
  size_t n = 0;
  const char* files[1] = {name};
  (void)user_data;
  dinput_status_t status = dinput_tensor_string_view(&s, &n, dinput_element_get(in, 0), 0);
  if (status != DINPUT_OK) return status;
  if (n >= sizeof name) {
    dinput_error_set(DINPUT_INVALID_ARGUMENT, "file name too long");
    return DINPUT_INVALID_ARGUMENT;
  }
  memcpy(name, s, n);
  name[n] = '\0';
  return dinput_dataset_records(out, files, 1, NULL);
}

/* Marks every record of a replica's batch as seen; counts the ones seen before. */
static int mark_seen(const dinput_element_t* batch, int seen[kFiles][kRecordsPerFile]) {
  const dinput_tensor_t* records = dinput_element_get(batch, 0);
  int duplicates = 0;
  for (int64_t i = 0; i < dinput_tensor_num_elements(records); i++) {
    const char* s = NULL;
    size_t n = 0;
    int f = -1, r = -1;
    char text[32];
    check(dinput_tensor_string_view(&s, &n, records, i));
    snprintf(text, sizeof text, "%.*s", (int)n, s);
    if (sscanf(text, "f%d-r%d", &f, &r) != 2 || f < 0 || f >= kFiles || r < 0 ||
        r >= kRecordsPerFile) {
      fprintf(stderr, "unexpected record '%s'\n", text);
      exit(1);
    }
    if (seen[f][r]++) duplicates++;
  }
  return duplicates;
}

int main(void) {
  char dir[] = "/tmp/dinput-file-pipeline-XXXXXX";
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  write_files(dir);
  printf("wrote %d record files of %d records\n", kFiles, kRecordsPerFile);

  /* list_files: the file names, matched now; NULL options: sorted, not shuffled. */
  char pattern[512];
  snprintf(pattern, sizeof pattern, "%s/part-*.rec", dir);
  const char* patterns[1] = {pattern};
  dinput_dataset_t* files = NULL;
  check(dinput_dataset_list_files(&files, patterns, 1, NULL));

  /* interleave: three files read at once, one record from each in turn. The out_spec (bytes
   * scalars) is what every records reader gives. */
  dinput_spec_t* record_spec = NULL;
  check(dinput_spec_new(&record_spec));
  check(dinput_spec_add(record_spec, DINPUT_BYTES, NULL, 0));
  dinput_interleave_options_t* interleave_options = NULL;
  check(dinput_interleave_options_new(&interleave_options));
  check(dinput_interleave_options_set_cycle_length(interleave_options, 3));
  check(dinput_interleave_options_set_num_parallel_calls(interleave_options, 3)); /* read ahead */
  dinput_dataset_t* records = NULL;
  check(dinput_dataset_interleave(&records, files, open_records, record_spec, NULL, NULL,
                                  interleave_options));

  /* shuffle: a buffer of 32 records and a fixed seed pair, so that a run can be repeated. */
  dinput_shuffle_options_t* shuffle_options = NULL;
  check(dinput_shuffle_options_new(&shuffle_options));
  check(dinput_shuffle_options_set_seed(shuffle_options, 7, 0));
  dinput_dataset_t* shuffled = NULL;
  check(dinput_dataset_shuffle(&shuffled, records, 32, shuffle_options));

  /* batch: the GLOBAL batch size; distribution splits each batch between the replicas. */
  dinput_dataset_t* batched = NULL;
  check(dinput_dataset_batch(&batched, shuffled, kGlobalBatch, NULL));

  const char* devices[2] = {"CPU:0", "CPU:1"};
  dinput_strategy_t* strategy = NULL;
  check(dinput_strategy_new(&strategy, devices, 2));
  dinput_dist_dataset_t* dist = NULL;
  check(dinput_strategy_distribute_dataset(&dist, strategy, batched, NULL));
  printf(
      "list_files -> interleave(records, cycle_length=3) -> shuffle(32) -> batch(%d) -> 2 "
      "replicas\n",
      kGlobalBatch);

  /* One epoch. */
  static int seen[kFiles][kRecordsPerFile];
  int steps = 0, duplicates = 0;
  dinput_dist_iterator_t* iterator = NULL;
  check(dinput_dist_dataset_iterator(&iterator, dist));
  for (;;) {
    dinput_optional_t* next = NULL;
    check(dinput_dist_iterator_get_next_as_optional(&next, iterator));
    if (!dinput_optional_has_value(next)) {
      dinput_optional_free(next);
      break;
    }
    dinput_per_replica_t* value = NULL;
    check(dinput_optional_get_per_replica(&value, next));
    for (int replica = 0; replica < dinput_per_replica_size(value); replica++)
      duplicates += mark_seen(dinput_per_replica_get(value, replica), seen);
    dinput_per_replica_free(value);
    dinput_optional_free(next);
    steps++;
  }

  int missing = 0;
  for (int f = 0; f < kFiles; f++)
    for (int r = 0; r < kRecordsPerFile; r++) missing += seen[f][r] == 0;
  printf("%d steps; %d records expected, %d missing, %d duplicated\n", steps,
         kFiles * kRecordsPerFile, missing, duplicates);
  printf(missing == 0 && duplicates == 0 ? "every record exactly once\n"
                                         : "RECORDS LOST OR DUPLICATED\n");

  dinput_dist_iterator_free(iterator);
  dinput_dist_dataset_free(dist);
  dinput_strategy_free(strategy);
  dinput_dataset_free(batched);
  dinput_shuffle_options_free(shuffle_options);
  dinput_dataset_free(shuffled);
  dinput_dataset_free(records);
  dinput_interleave_options_free(interleave_options);
  dinput_spec_free(record_spec);
  dinput_dataset_free(files);

  for (int f = 0; f < kFiles; f++) {
    char path[512];
    snprintf(path, sizeof path, "%s/part-%d.rec", dir, f);
    remove(path);
  }
  rmdir(dir);
  return missing == 0 && duplicates == 0 ? 0 : 1;
}
