/* W1 baseline (a): single-thread hand-written reader. mmaps the record files, indexes the
 * records (parsing the TFRecord framing), shuffles the index (xorshift64 + Fisher-Yates),
 * gathers 256-record batches with memcpy into a batch buffer, verifies both masked CRC32C
 * (SSE4.2 crc32 instruction) of every record and sums every byte. Build with -O2 -msse4.2. */
#include <fcntl.h>
#include <nmmintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BATCH 256

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static uint32_t crc32c(const unsigned char* p, size_t n) {
  uint64_t c = 0xFFFFFFFFu;
  while (n >= 8) {
    uint64_t v;
    memcpy(&v, p, 8);
    c = _mm_crc32_u64(c, v);
    p += 8;
    n -= 8;
  }
  uint32_t c32 = (uint32_t)c;
  while (n--) c32 = _mm_crc32_u8(c32, *p++);
  return c32 ^ 0xFFFFFFFFu;
}
static uint32_t masked(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

typedef struct {
  const unsigned char* p;
  uint64_t len;
} rec_t; /* p: start of the 12-byte header */

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: baseline FILE...\n");
    return 2;
  }
  double t0 = now();
  size_t cap = 1 << 16, n = 0;
  rec_t* idx = malloc(cap * sizeof *idx);
  for (int f = 1; f < argc; f++) {
    int fd = open(argv[f], O_RDONLY);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
      perror(argv[f]);
      return 1;
    }
    const unsigned char* m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
      perror("mmap");
      return 1;
    }
    close(fd);
    size_t off = 0, size = (size_t)sb.st_size;
    while (off < size) {
      uint64_t len;
      if (size - off < 12) {
        fprintf(stderr, "%s: truncated at %zu\n", argv[f], off);
        return 1;
      }
      memcpy(&len, m + off, 8);
      if (size - off - 12 < len + 4) {
        fprintf(stderr, "%s: truncated at %zu\n", argv[f], off);
        return 1;
      }
      if (n == cap) {
        cap *= 2;
        idx = realloc(idx, cap * sizeof *idx);
      }
      idx[n].p = m + off;
      idx[n].len = len;
      n++;
      off += 12 + len + 4;
    }
  }
  uint64_t s = 1;
  for (size_t i = n - 1; i > 0; i--) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    size_t j = (size_t)(s % (i + 1));
    rec_t t = idx[i];
    idx[i] = idx[j];
    idx[j] = t;
  }
  size_t bcap = 1 << 20;
  unsigned char* buf = malloc(bcap);
  uint64_t sum = 0, bytes = 0;
  for (size_t b = 0; b < n; b += BATCH) {
    size_t e = b + BATCH < n ? b + BATCH : n, used = 0;
    for (size_t i = b; i < e; i++) { /* gather + verify */
      const unsigned char* h = idx[i].p;
      uint64_t len = idx[i].len;
      uint32_t lc, dc;
      memcpy(&lc, h + 8, 4);
      memcpy(&dc, h + 12 + len, 4);
      if (masked(crc32c(h, 8)) != lc || masked(crc32c(h + 12, len)) != dc) {
        fprintf(stderr, "bad CRC at record %zu\n", i);
        return 1;
      }
      if (used + len > bcap) {
        while (used + len > bcap) bcap *= 2;
        buf = realloc(buf, bcap);
      }
      memcpy(buf + used, h + 12, len);
      used += len;
    }
    size_t off = 0; /* read every delivered byte */
    for (size_t i = b; i < e; i++) {
      const unsigned char* u = buf + off;
      size_t len = idx[i].len, k = 0;
      uint64_t s8 = 0;
      for (; k + 8 <= len; k += 8) {
        uint64_t v;
        memcpy(&v, u + k, 8);
        s8 += v;
      }
      for (; k < len; k++) s8 += u[k];
      sum += s8;
      off += len;
    }
    bytes += used;
  }
  double t1 = now();
  printf("{\"seconds\":%.6f,\"records\":%zu,\"bytes\":%llu,\"checksum\":%llu}\n", t1 - t0, n,
         (unsigned long long)bytes, (unsigned long long)sum);
  return 0;
}
