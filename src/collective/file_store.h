// The file://DIR rendezvous store: a directory on a file system every worker sees (NFS, Lustre,
// a local directory for workers on one machine). One file per key, written to a temporary name
// and renamed into place, so a reader sees a whole value or none. Waits poll the directory with
// a growing pause (up to 50 ms): shared file systems have no change notification that works
// across machines. `add` holds a POSIX record lock (fcntl) on a lock file of the key.
#pragma once

#include <memory>
#include <string>

#include "collective/store.h"

namespace dinput {

// A store in `dir`, created (with its parents) when missing; UNAVAILABLE naming the directory
// when it cannot be created or written.
std::shared_ptr<Store> make_file_store(const std::string& dir);

}  // namespace dinput
