/* Calls the probe of gloo_shared_probe.cc through its shared library: passes when both of
   Gloo's exceptions came back as dinput errors instead of aborting the process. */
#include <stdio.h>
#include <string.h>

int dinput_test_gloo_probe(char* out, size_t size);

int main(void) {
  char report[4096];
  dinput_test_gloo_probe(report, sizeof report);
  printf("%s\n", report);
  return strncmp(report, "UNAVAILABLE: ", 13) == 0 &&
                 strstr(report, "lost its connection to worker 1") != NULL &&
                 strstr(report, " | INVALID_ARGUMENT") != NULL
             ? 0
             : 1;
}
