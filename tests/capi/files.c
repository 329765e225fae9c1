/* File sources through the C API: list_files, and interleave feeding text_lines (the usual
 * way to read many files), with interleave's callback failures and user_data lifetime. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "dinput.h"

static char dir[256];

static void write_file(const char* name, const char* content) {
  char path[512];
  FILE* f;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  f = fopen(path, "wb");
  CHECK(f != NULL);
  if (!f) return;
  fputs(content, f);
  fclose(f);
}

/* The last path component of each name, for comparing list_files output. */
static void basenames(char* s) {
  char *out = s, *p = s, *start = s;
  for (;; ++p) {
    if (*p == '/') start = p + 1;
    if (*p == ',' || *p == '\0') {
      size_t n = (size_t)(p - start);
      memmove(out, start, n);
      out += n;
      if (*p == '\0') break;
      *out++ = ',';
      start = p + 1;
    }
  }
  *out = '\0';
}

static void test_list_files(void) {
  char pattern[300], other[300], text[1024];
  const char* patterns[2];
  dinput_dataset_t* ds = NULL;
  snprintf(pattern, sizeof pattern, "%s/*.txt", dir);
  snprintf(other, sizeof other, "%s/*.none", dir);
  patterns[0] = pattern;
  patterns[1] = other;
  CHECK_OK(dinput_dataset_list_files(&ds, patterns, 2, NULL));
  CHECK(strcmp(dinput_dataset_name(ds), "list_files") == 0);
  CHECK(dinput_dataset_cardinality(ds) == 3);
  CHECK_STATUS(join_strings(ds, text, sizeof text), DINPUT_OUT_OF_RANGE);
  basenames(text);
  CHECK(strcmp(text, "a.txt,b.txt,c.txt") == 0);
  dinput_dataset_free(ds);

  ds = (dinput_dataset_t*)(void*)text;
  CHECK_STATUS(dinput_dataset_list_files(&ds, patterns + 1, 1, NULL), DINPUT_NOT_FOUND);
  CHECK_MSG(other);
  CHECK(ds == NULL);
  CHECK_STATUS(dinput_dataset_list_files(&ds, NULL, 1, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'patterns'");
}

/* interleave callback: a text_lines dataset for the file named by the element. */
struct reader_config {
  int frees;
  int calls;
  int fail_on_b;
};

static void count_free(void* user_data) { ++((struct reader_config*)user_data)->frees; }

static dinput_status_t open_lines(dinput_dataset_t** out, const dinput_element_t* in,
                                  void* user_data) {
  struct reader_config* c = (struct reader_config*)user_data;
  const char* s = NULL;
  size_t len = 0;
  char path[512];
  const char* files[1];
  dinput_status_t st;
  ++c->calls;
  if ((st = dinput_tensor_string_view(&s, &len, dinput_element_get(in, 0), 0)) != DINPUT_OK)
    return st;
  if (len >= sizeof path) return DINPUT_INVALID_ARGUMENT;
  memcpy(path, s, len);
  path[len] = '\0';
  if (c->fail_on_b && strstr(path, "b.txt")) {
    dinput_error_set(DINPUT_PERMISSION_DENIED, "b.txt is off limits");
    return DINPUT_PERMISSION_DENIED;
  }
  files[0] = path;
  return dinput_dataset_text_lines(out, files, 1);
}

static void test_interleave_text_files(void) {
  char pattern[300], text[1024];
  const char* patterns[1];
  dinput_dataset_t *names = NULL, *lines = NULL;
  dinput_spec_t* spec = NULL;
  dinput_iterator_t* it = NULL;
  dinput_element_t* e = NULL;
  int64_t n = 0;
  int k;
  long parallel[2] = {1, 3};
  snprintf(pattern, sizeof pattern, "%s/*.txt", dir);
  patterns[0] = pattern;
  CHECK_OK(dinput_dataset_list_files(&names, patterns, 1, NULL));
  CHECK_OK(dinput_spec_new(&spec));
  CHECK_OK(dinput_spec_add(spec, DINPUT_BYTES, NULL, 0));

  /* cycle 2, block 1: a1 b1 a2 b2 then c's lines fill the freed slot. */
  for (k = 0; k < 2; ++k) {
    struct reader_config c = {0, 0, 0};
    CHECK_OK(
        interleave_with(&lines, names, open_lines, spec, 2, 1, parallel[k], 1, &c, count_free));
    CHECK(strcmp(dinput_dataset_name(lines), "interleave") == 0);
    CHECK_STATUS(join_strings(lines, text, sizeof text), DINPUT_OUT_OF_RANGE);
    if (strcmp(text, "a1,b1,a2,b2,c1,c2") != 0) fprintf(stderr, "  interleaved: %s\n", text);
    CHECK(strcmp(text, "a1,b1,a2,b2,c1,c2") == 0);
    CHECK(c.calls == 3);
    dinput_dataset_free(lines);
    CHECK(c.frees == 1);
  }

  /* The callback's failure and message reach get_next, after what was read before. */
  {
    struct reader_config c = {0, 0, 1};
    CHECK_OK(interleave_with(&lines, names, open_lines, spec, 1, 1, 1, 1, &c, count_free));
    CHECK_OK(dinput_dataset_iterator(&it, lines));
    while (dinput_iterator_get_next(&e, it) == DINPUT_OK) {
      dinput_element_free(e);
      ++n;
    }
    CHECK(n == 2); /* a1, a2 */
    CHECK(dinput_last_error_code() == DINPUT_PERMISSION_DENIED);
    CHECK_MSG("b.txt is off limits");
    dinput_iterator_free(it);
    dinput_dataset_free(lines);
    CHECK(c.frees == 1);
  }

  /* Bad arguments: free_user_data still runs once. */
  {
    struct reader_config c = {0, 0, 0};
    CHECK_STATUS(interleave_with(&lines, names, open_lines, NULL, 2, 1, 1, 1, &c, count_free),
                 DINPUT_INVALID_ARGUMENT);
    CHECK_MSG("'out_spec'");
    CHECK(lines == NULL);
    CHECK_STATUS(interleave_with(&lines, names, open_lines, spec, 0, 1, 1, 1, &c, count_free),
                 DINPUT_INVALID_ARGUMENT);
    CHECK_MSG("cycle_length");
    CHECK_STATUS(interleave_with(&lines, names, open_lines, spec, 2, 0, 1, 1, &c, count_free),
                 DINPUT_INVALID_ARGUMENT);
    CHECK_MSG("block_length");
    CHECK_STATUS(interleave_with(&lines, names, NULL, spec, 2, 1, 1, 1, &c, count_free),
                 DINPUT_INVALID_ARGUMENT);
    CHECK_MSG("'fn'");
    CHECK(c.frees == 4);
    CHECK(c.calls == 0);
  }
  dinput_spec_free(spec);
  dinput_dataset_free(names);
}

int main(void) {
  char path[300];
  const char* base = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/dinput_capi_files_XXXXXX", base && *base ? base : "/tmp");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 2;
  }
  write_file("a.txt", "a1\na2\n");
  write_file("b.txt", "b1\r\nb2");
  write_file("c.txt", "c1\nc2\n");
  write_file("d.log", "not matched\n");
  test_list_files();
  test_interleave_text_files();
  snprintf(path, sizeof path, "%s/a.txt", dir);
  remove(path);
  snprintf(path, sizeof path, "%s/b.txt", dir);
  remove(path);
  snprintf(path, sizeof path, "%s/c.txt", dir);
  remove(path);
  snprintf(path, sizeof path, "%s/d.log", dir);
  remove(path);
  rmdir(dir);
  return check_finish_();
}
