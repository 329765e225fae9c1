/* W1's floor: what one pass over W1's bytes costs on this machine, each pass measured alone
 * on one thread (best of W1_PASS_REPS rounds, default 5, warm page cache). The passes are
 * the pieces W1's readers are made of:
 *   pread_reused    the kernel's copy of the plain files into one reused 2 MiB buffer
 *   pread_fresh_4k  the same into a fresh 2 MiB buffer per read (4 KiB pages, populated)
 *   pread_fresh_2m  the same, the buffers mapped at a 2 MiB boundary with MADV_HUGEPAGE
 *   mmap_populate   mapping every plain file with MAP_POPULATE, then unmapping it
 *   crc_seq         both masked CRC32C of every record, in file order (SSE4.2 crc32, 1 lane)
 *   sum_seq         every payload byte summed (64-bit words), in file order
 *   sum_shuffled    the same in a shuffled record order (a consumer after a shuffle)
 *   sum_shuffled_ahead  the same, asking the CPU for record i + 8 while record i is summed (the
 *                   read-ahead of dinput_tensor_string_view)
 *   gather_shuffled memcpy of every payload, in shuffled order, into a reused 256 KiB batch
 *   zstd_stream     ZSTD_decompressStream of the .zst files into a reused 2 MiB buffer,
 *                   content checksum not verified (as dinput decodes them)
 * Usage: passes DATA_DIR (rec-NN.tfrecord and rec-NN.tfrecord.zst, as gen.c writes them).
 * Prints one JSON line per pass: best seconds and GB/s of the 256 MiB payload. Build:
 * cc -O2 -msse4.2 passes.c -lzstd. */
#define _GNU_SOURCE
#define ZSTD_STATIC_LINKING_ONLY
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
#include <zstd.h>

#define FILES 32
#define CHUNK (2u << 20)

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

typedef struct {
  int fd;
  size_t size;
  const unsigned char* map; /* MAP_POPULATE'd, for the passes over memory */
} file_t;

typedef struct {
  const unsigned char* p; /* the record's payload */
  uint64_t len;
} rec_t;

static file_t plain[FILES], zst[FILES];
static rec_t* recs;
static size_t nrec;
static volatile uint64_t sink;

static void open_all(const char* dir, const char* suffix, file_t* out) {
  char path[4096];
  for (int i = 0; i < FILES; i++) {
    snprintf(path, sizeof path, "%s/rec-%02d.tfrecord%s", dir, i, suffix);
    int fd = open(path, O_RDONLY);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
      perror(path);
      exit(1);
    }
    out[i].fd = fd;
    out[i].size = (size_t)sb.st_size;
    out[i].map = mmap(NULL, out[i].size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (out[i].map == MAP_FAILED) {
      perror("mmap");
      exit(1);
    }
  }
}

static uint32_t crc32c(const unsigned char* p, size_t n) {
  uint64_t c = 0xFFFFFFFFu;
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t v;
    memcpy(&v, p, 8);
    c = _mm_crc32_u64(c, v);
  }
  uint32_t c32 = (uint32_t)c;
  while (n--) c32 = _mm_crc32_u8(c32, *p++);
  return c32 ^ 0xFFFFFFFFu;
}
static uint32_t masked(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

static uint64_t sum_bytes(const unsigned char* u, size_t len) {
  uint64_t s = 0;
  size_t k = 0;
  for (; k + 8 <= len; k += 8) {
    uint64_t v;
    memcpy(&v, u + k, 8);
    s += v;
  }
  for (; k < len; k++) s += u[k];
  return s;
}

static void pread_file(const file_t* f, unsigned char* buf) {
  for (size_t off = 0; off < f->size;) {
    size_t want = f->size - off < CHUNK ? f->size - off : CHUNK;
    ssize_t r = pread(f->fd, buf, want, (off_t)off);
    if (r <= 0) {
      perror("pread");
      exit(1);
    }
    off += (size_t)r;
  }
}

static unsigned char* reused;

static void p_pread_reused(void) {
  for (int i = 0; i < FILES; i++) pread_file(&plain[i], reused);
}

/* A fresh chunk per read, freed after the next one (as a pipeline's chunks come and go). */
static void fresh(int huge) {
  for (int i = 0; i < FILES; i++) {
    for (size_t off = 0; off < plain[i].size; off += CHUNK) {
      unsigned char* p;
      if (huge) {
        unsigned char* raw =
            mmap(NULL, 2 * CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        p = (unsigned char*)(((uintptr_t)raw + CHUNK - 1) & ~(uintptr_t)(CHUNK - 1));
        madvise(p, CHUNK, MADV_HUGEPAGE);
        if (madvise(p, CHUNK, 23 /* MADV_POPULATE_WRITE */) != 0)
          for (size_t k = 0; k < CHUNK; k += 4096) p[k] = 0;
        size_t want = plain[i].size - off < CHUNK ? plain[i].size - off : CHUNK;
        if (pread(plain[i].fd, p, want, (off_t)off) <= 0) exit(1);
        munmap(raw, 2 * CHUNK);
      } else {
        p = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
                 -1, 0);
        size_t want = plain[i].size - off < CHUNK ? plain[i].size - off : CHUNK;
        if (pread(plain[i].fd, p, want, (off_t)off) <= 0) exit(1);
        munmap(p, CHUNK);
      }
    }
  }
}
static void p_pread_fresh_4k(void) { fresh(0); }
static void p_pread_fresh_2m(void) { fresh(1); }

static void p_mmap_populate(void) {
  for (int i = 0; i < FILES; i++) {
    void* m = mmap(NULL, plain[i].size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, plain[i].fd, 0);
    if (m == MAP_FAILED) exit(1);
    munmap(m, plain[i].size);
  }
}

static void p_crc_seq(void) {
  uint64_t bad = 0;
  for (size_t i = 0; i < nrec; i++) {
    const unsigned char* h = recs[i].p - 12;
    uint32_t lc, dc;
    memcpy(&lc, h + 8, 4);
    memcpy(&dc, recs[i].p + recs[i].len, 4);
    bad += masked(crc32c(h, 8)) != lc;
    bad += masked(crc32c(recs[i].p, recs[i].len)) != dc;
  }
  if (bad) {
    fprintf(stderr, "bad CRCs: %llu\n", (unsigned long long)bad);
    exit(1);
  }
}

static void p_sum_seq(void) {
  uint64_t s = 0;
  for (size_t i = 0; i < nrec; i++) s += sum_bytes(recs[i].p, recs[i].len);
  sink = s;
}

static rec_t* shuffled;

static void p_sum_shuffled(void) {
  uint64_t s = 0;
  for (size_t i = 0; i < nrec; i++) s += sum_bytes(shuffled[i].p, shuffled[i].len);
  sink = s;
}

static void p_sum_shuffled_ahead(void) {
  uint64_t s = 0;
  for (size_t i = 0; i < nrec; i++) {
    if (i + 8 < nrec) {
      const rec_t* r = &shuffled[i + 8];
      size_t n = r->len < 4096 ? r->len : 4096;
      for (size_t k = 0; k < n; k += 64) __builtin_prefetch(r->p + k);
    }
    s += sum_bytes(shuffled[i].p, shuffled[i].len);
  }
  sink = s;
}

static void p_gather_shuffled(void) {
  size_t used = 0;
  for (size_t i = 0; i < nrec; i++) {
    if (used + shuffled[i].len > (256u << 10)) used = 0;
    memcpy(reused + used, shuffled[i].p, shuffled[i].len);
    used += shuffled[i].len;
  }
  sink = reused[used / 2];
}

static ZSTD_DCtx* dctx;

static void p_zstd_stream(void) {
  for (int i = 0; i < FILES; i++) {
    ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only);
    ZSTD_inBuffer in = {zst[i].map, zst[i].size, 0};
    while (in.pos < in.size) {
      ZSTD_outBuffer out = {reused, CHUNK, 0};
      size_t r = ZSTD_decompressStream(dctx, &out, &in);
      if (ZSTD_isError(r)) {
        fprintf(stderr, "zstd: %s\n", ZSTD_getErrorName(r));
        exit(1);
      }
    }
  }
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: passes DATA_DIR\n");
    return 2;
  }
  const char* reps_env = getenv("W1_PASS_REPS");
  int reps = reps_env ? atoi(reps_env) : 5;
  open_all(argv[1], "", plain);
  open_all(argv[1], ".zst", zst);
  size_t cap = 1 << 18;
  recs = malloc(cap * sizeof *recs);
  uint64_t payload = 0;
  for (int f = 0; f < FILES; f++) {
    for (size_t off = 0; off + 12 <= plain[f].size;) {
      uint64_t len;
      memcpy(&len, plain[f].map + off, 8);
      if (nrec == cap) recs = realloc(recs, (cap *= 2) * sizeof *recs);
      recs[nrec].p = plain[f].map + off + 12;
      recs[nrec].len = len;
      payload += len;
      nrec++;
      off += 12 + len + 4;
    }
  }
  shuffled = malloc(nrec * sizeof *shuffled);
  memcpy(shuffled, recs, nrec * sizeof *shuffled);
  uint64_t s = 1;
  for (size_t i = nrec - 1; i > 0; i--) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    size_t j = (size_t)(s % (i + 1));
    rec_t t = shuffled[i];
    shuffled[i] = shuffled[j];
    shuffled[j] = t;
  }
  reused = aligned_alloc(4096, CHUNK);
  memset(reused, 1, CHUNK);
  dctx = ZSTD_createDCtx();
  ZSTD_DCtx_setParameter(dctx, ZSTD_d_forceIgnoreChecksum, ZSTD_d_ignoreChecksum);
  struct {
    const char* name;
    void (*run)(void);
  } passes[] = {{"pread_reused", p_pread_reused},
                {"pread_fresh_4k", p_pread_fresh_4k},
                {"pread_fresh_2m", p_pread_fresh_2m},
                {"mmap_populate", p_mmap_populate},
                {"crc_seq", p_crc_seq},
                {"sum_seq", p_sum_seq},
                {"sum_shuffled", p_sum_shuffled},
                {"sum_shuffled_ahead", p_sum_shuffled_ahead},
                {"gather_shuffled", p_gather_shuffled},
                {"zstd_stream", p_zstd_stream}};
  const int npass = (int)(sizeof passes / sizeof passes[0]);
  double best[sizeof passes / sizeof passes[0]];
  for (int k = 0; k < npass; k++) best[k] = 1e9;
  for (int r = 0; r < reps; r++) { /* rounds: every pass once per round */
    for (int k = 0; k < npass; k++) {
      double t0 = now();
      passes[k].run();
      double t = now() - t0;
      if (t < best[k]) best[k] = t;
    }
  }
  for (int k = 0; k < npass; k++)
    printf("{\"measurement\": \"pass_%s\", \"best_s\": %.4f, \"GB_per_s\": %.2f, \"rounds\": %d}\n",
           passes[k].name, best[k], payload / best[k] / 1e9, reps);
  return 0;
}
