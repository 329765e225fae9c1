/* Runs a command and appends its wall-clock and CPU time to a file, as one JSON object:
 * {"wall_s":..,"cpu_s":..,"user_s":..,"sys_s":..}. CPU time is the command's user plus system
 * time over all its threads and waited-for children (wait4's rusage), so that readers that
 * use several threads are compared by the CPU they take as well as by the time they take.
 * usage: rusage OUT_FILE COMMAND [ARG...]; exits with the command's status. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static double secs(struct timeval t) { return t.tv_sec + t.tv_usec * 1e-6; }

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: rusage OUT_FILE COMMAND [ARG...]\n");
    return 2;
  }
  double t0 = now();
  pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    return 2;
  }
  if (pid == 0) {
    execvp(argv[2], argv + 2);
    perror(argv[2]);
    _exit(127);
  }
  int status;
  struct rusage ru;
  if (wait4(pid, &status, 0, &ru) < 0) {
    perror("wait4");
    return 2;
  }
  double wall = now() - t0;
  FILE* f = fopen(argv[1], "a");
  if (!f) {
    perror(argv[1]);
    return 2;
  }
  fprintf(f, "{\"wall_s\":%.6f,\"cpu_s\":%.6f,\"user_s\":%.6f,\"sys_s\":%.6f}\n", wall,
          secs(ru.ru_utime) + secs(ru.ru_stime), secs(ru.ru_utime), secs(ru.ru_stime));
  fclose(f);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
