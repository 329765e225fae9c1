// The system calls through which the file readers and the record writer reach files.
// Every call goes through a process-wide table of function pointers that tests replace to
// inject faults (EIO, short reads, a file that ends early, ENOSPC on write) at chosen
// offsets, without a special file system. Internal: nothing here is exported from the
// shared library (its version script keeps only dinput_* symbols), so the hook is only
// reachable by code linked against the static library, that is, the tests.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

namespace dinput::fileops {

struct Ops {
  int (*open)(const char* path, int flags, mode_t mode);
  ssize_t (*read)(int fd, void* buf, size_t n);
  ssize_t (*pread)(int fd, void* buf, size_t n, off_t offset);
  ssize_t (*write)(int fd, const void* buf, size_t n);
  int (*fstat)(int fd, struct stat* st);
  int (*stat)(const char* path, struct stat* st);
};

// The plain system calls.
const Ops& system_ops();
// The table in effect (system_ops() unless a test installed another).
const Ops& current();
// Installs `ops` (nullptr: back to the system calls). The table must outlive its use; swap
// it only while no file is being read or written.
void install(const Ops* ops);

inline int open(const char* path, int flags, mode_t mode = 0) {
  return current().open(path, flags, mode);
}
inline ssize_t read(int fd, void* buf, size_t n) { return current().read(fd, buf, n); }
inline ssize_t pread(int fd, void* buf, size_t n, off_t offset) {
  return current().pread(fd, buf, n, offset);
}
inline ssize_t write(int fd, const void* buf, size_t n) { return current().write(fd, buf, n); }
inline int fstat(int fd, struct stat* st) { return current().fstat(fd, st); }
inline int stat(const char* path, struct stat* st) { return current().stat(path, st); }

}  // namespace dinput::fileops
