#include "io/file_ops.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>

namespace dinput::fileops {

namespace {

int sys_open(const char* path, int flags, mode_t mode) { return ::open(path, flags, mode); }
ssize_t sys_read(int fd, void* buf, size_t n) { return ::read(fd, buf, n); }
ssize_t sys_pread(int fd, void* buf, size_t n, off_t offset) { return ::pread(fd, buf, n, offset); }
ssize_t sys_write(int fd, const void* buf, size_t n) { return ::write(fd, buf, n); }
int sys_fstat(int fd, struct stat* st) { return ::fstat(fd, st); }
int sys_stat(const char* path, struct stat* st) { return ::stat(path, st); }

const Ops kSystem{sys_open, sys_read, sys_pread, sys_write, sys_fstat, sys_stat};
std::atomic<const Ops*> g_ops{&kSystem};

}  // namespace

const Ops& system_ops() { return kSystem; }
const Ops& current() { return *g_ops.load(std::memory_order_acquire); }
void install(const Ops* ops) { g_ops.store(ops ? ops : &kSystem, std::memory_order_release); }

}  // namespace dinput::fileops
