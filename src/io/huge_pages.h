// Memory asked to be backed by transparent huge pages: used where a reader fills many
// megabytes of fresh memory at once (read chunks, a restore's kept records), so that it is
// faulted in a 2 MiB page at a time rather than 4 KiB. See docs/records.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace dinput {

class Buffer;

// The size of a transparent huge page on the platforms dinput runs on (x86-64, aarch64
// with 4 KiB base pages).
constexpr size_t kHugePageBytes = size_t{2} << 20;

// Maps `size` bytes (a multiple of kHugePageBytes) of private anonymous memory at a
// huge-page boundary and advises huge pages for it (MADV_HUGEPAGE: honoured where the
// system's setting is "madvise" or "always"; elsewhere the memory is ordinary pages).
// Nothing is faulted in. Returns nullptr when the memory cannot be mapped. Free with
// munmap(p, size).
void* map_huge_page_aligned(size_t size) noexcept;

// Huge pages kept for reuse across iterators: a mapping of kHugePageBytes from
// map_huge_page_aligned that was faulted in and is no longer used (a read buffer of an
// iterator that ended, an arena whose records are gone) is kept, up to kKeptHugePages (none
// in AddressSanitizer builds, so that a use after free is still reported), so that the next
// iterator's first read buffers and a restore's arenas need no fresh memory: the kernel
// zeroes a fresh page on its first fault, at about 1 GB/s on some virtual machines.
constexpr size_t kKeptHugePages = 16;
// A kept huge page (faulted in, holding old bytes), or nullptr when none is kept.
void* take_kept_huge_page() noexcept;
// Keeps `p`, a mapping of kHugePageBytes, or unmaps it when kKeptHugePages are kept.
void keep_huge_page(void* p) noexcept;

// An arena of kHugeArenaBytes for the records a restore keeps (a shuffle buffer's worth,
// copied out of the bytes read again): one huge page, so that ten megabytes of records
// fault in a few pages at a time instead of one per 4 KiB, which was most of what a kept
// record cost. Freed arenas are kept huge pages (keep_huge_page), as the heap would keep
// smaller blocks. An arena lives as long as the last record viewing it. Returns nullptr when
// the memory cannot be mapped (the caller uses the heap).
constexpr size_t kHugeArenaBytes = kHugePageBytes;
std::shared_ptr<Buffer> make_huge_arena();

// Faults in, ahead of use, the arenas that `bytes` of records will need (as many as
// kKeptHugePages at most, counting the huge pages kept already), so that make_huge_arena()
// finds them ready: a restore calls it on another thread while it replays its draws, since
// zeroing fresh memory was a large part of what the first restore in a process cost.
void prefault_huge_arenas(uint64_t bytes) noexcept;

}  // namespace dinput
