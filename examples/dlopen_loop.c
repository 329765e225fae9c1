/* Using dinput without linking it: the library is opened at run time with dlopen and every
 * function is looked up by name, as a language runtime or plugin host would do. Runs the
 * get_next_as_optional loop over range(9).batch(4) on two replicas.
 *
 * Usage: example_dlopen_loop [path/to/libdinput.so.0]   (default: "libdinput.so.0") */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <dinput.h> /* types and constants only: no function of it is linked */

/* The subset of the API this program uses, as function pointers. */
struct api {
  const char* (*version)(void);
  const char* (*last_error_message)(void);
  dinput_status_t (*strategy_new)(dinput_strategy_t**, const char* const*, int);
  void (*strategy_free)(dinput_strategy_t*);
  dinput_status_t (*range)(dinput_dataset_t**, int64_t, int64_t, int64_t);
  dinput_status_t (*batch)(dinput_dataset_t**, const dinput_dataset_t*, int64_t,
                           const dinput_batch_options_t*);
  void (*dataset_free)(dinput_dataset_t*);
  dinput_status_t (*distribute)(dinput_dist_dataset_t**, const dinput_strategy_t*,
                                const dinput_dataset_t*, const dinput_input_options_t*);
  void (*dist_dataset_free)(dinput_dist_dataset_t*);
  dinput_status_t (*dist_iterator)(dinput_dist_iterator_t**, const dinput_dist_dataset_t*);
  void (*dist_iterator_free)(dinput_dist_iterator_t*);
  dinput_status_t (*next_as_optional)(dinput_optional_t**, dinput_dist_iterator_t*);
  int (*has_value)(const dinput_optional_t*);
  dinput_status_t (*get_per_replica)(dinput_per_replica_t**, const dinput_optional_t*);
  void (*optional_free)(dinput_optional_t*);
  int (*per_replica_size)(const dinput_per_replica_t*);
  const dinput_element_t* (*per_replica_get)(const dinput_per_replica_t*, int);
  void (*per_replica_free)(dinput_per_replica_t*);
  const dinput_tensor_t* (*element_get)(const dinput_element_t*, size_t);
  int64_t (*tensor_dim)(const dinput_tensor_t*, int);
  const void* (*tensor_data)(const dinput_tensor_t*);
};

static void* lookup(void* lib, const char* name) {
  void* p = dlsym(lib, name);
  if (!p) {
    fprintf(stderr, "missing symbol %s: %s\n", name, dlerror());
    exit(1);
  }
  return p;
}

/* POSIX guarantees that a data pointer from dlsym can be converted to a function pointer;
 * the copy through memcpy-free union keeps ISO C compilers quiet about it. */
#define LOAD(field, name)    \
  do {                       \
    union {                  \
      void* p;               \
      __typeof__(a.field) f; \
    } u;                     \
    u.p = lookup(lib, name); \
    a.field = u.f;           \
  } while (0)

static void check(const struct api* a, dinput_status_t st) {
  if (st != DINPUT_OK) {
    fprintf(stderr, "dinput error %d: %s\n", (int)st, a->last_error_message());
    exit(1);
  }
}

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "libdinput.so.0";
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "cannot open %s: %s\n", path, dlerror());
    return 1;
  }
  struct api a;
  LOAD(version, "dinput_version");
  LOAD(last_error_message, "dinput_last_error_message");
  LOAD(strategy_new, "dinput_strategy_new");
  LOAD(strategy_free, "dinput_strategy_free");
  LOAD(range, "dinput_dataset_range");
  LOAD(batch, "dinput_dataset_batch");
  LOAD(dataset_free, "dinput_dataset_free");
  LOAD(distribute, "dinput_strategy_distribute_dataset");
  LOAD(dist_dataset_free, "dinput_dist_dataset_free");
  LOAD(dist_iterator, "dinput_dist_dataset_iterator");
  LOAD(dist_iterator_free, "dinput_dist_iterator_free");
  LOAD(next_as_optional, "dinput_dist_iterator_get_next_as_optional");
  LOAD(has_value, "dinput_optional_has_value");
  LOAD(get_per_replica, "dinput_optional_get_per_replica");
  LOAD(optional_free, "dinput_optional_free");
  LOAD(per_replica_size, "dinput_per_replica_size");
  LOAD(per_replica_get, "dinput_per_replica_get");
  LOAD(per_replica_free, "dinput_per_replica_free");
  LOAD(element_get, "dinput_element_get");
  LOAD(tensor_dim, "dinput_tensor_dim");
  LOAD(tensor_data, "dinput_tensor_data");

  printf("loaded dinput %s\n", a.version());
  const char* devices[2] = {"CPU:0", "CPU:1"};
  dinput_strategy_t* strategy = NULL;
  dinput_dataset_t *range = NULL, *dataset = NULL;
  dinput_dist_dataset_t* dist = NULL;
  dinput_dist_iterator_t* it = NULL;
  check(&a, a.strategy_new(&strategy, devices, 2));
  check(&a, a.range(&range, 0, 9, 1));
  check(&a, a.batch(&dataset, range, 4, NULL));
  check(&a, a.distribute(&dist, strategy, dataset, NULL));
  check(&a, a.dist_iterator(&it, dist));
  for (;;) {
    dinput_optional_t* opt = NULL;
    check(&a, a.next_as_optional(&opt, it));
    if (!a.has_value(opt)) {
      a.optional_free(opt);
      break;
    }
    dinput_per_replica_t* step = NULL;
    check(&a, a.get_per_replica(&step, opt));
    for (int r = 0; r < a.per_replica_size(step); r++) {
      const dinput_tensor_t* t = a.element_get(a.per_replica_get(step, r), 0);
      const int64_t* v = (const int64_t*)a.tensor_data(t);
      printf(r ? " | [" : "[");
      for (int64_t i = 0; i < a.tensor_dim(t, 0); i++)
        printf(i ? " %lld" : "%lld", (long long)v[i]);
      printf("]");
    }
    printf("\n");
    a.per_replica_free(step);
    a.optional_free(opt);
  }
  a.dist_iterator_free(it);
  a.dist_dataset_free(dist);
  a.dataset_free(dataset);
  a.dataset_free(range);
  a.strategy_free(strategy);
  dlclose(lib);
  return 0;
}
