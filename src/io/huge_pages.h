// Memory asked to be backed by transparent huge pages: used where a reader fills many
// megabytes of fresh memory at once (read chunks, a restore's kept records), so that it is
// faulted in a 2 MiB page at a time rather than 4 KiB. See docs/records.md.
#pragma once

#include <cstddef>

namespace dinput {

// The size of a transparent huge page on the platforms dinput runs on (x86-64, aarch64
// with 4 KiB base pages).
constexpr size_t kHugePageBytes = size_t{2} << 20;

// Maps `size` bytes (a multiple of kHugePageBytes) of private anonymous memory at a
// huge-page boundary and advises huge pages for it (MADV_HUGEPAGE: honoured where the
// system's setting is "madvise" or "always"; elsewhere the memory is ordinary pages).
// Nothing is faulted in. Returns nullptr when the memory cannot be mapped. Free with
// munmap(p, size).
void* map_huge_page_aligned(size_t size) noexcept;

}  // namespace dinput
