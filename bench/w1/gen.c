/* W1 data generator: NFILES files x NREC records x RECSZ bytes (random payloads) written with
 * dinput_record_writer, uncompressed (rec-XX.tfrecord) and ZSTD level 3 (rec-XX.tfrecord.zst). */
#include <dinput.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NFILES 32
#define NREC 8192
#define RECSZ 1024

static uint64_t s = 0x9E3779B97F4A7C15ull;
static uint64_t next(void) {
  s ^= s << 13;
  s ^= s >> 7;
  s ^= s << 17;
  return s;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: gen DIR\n");
    return 2;
  }
  static uint64_t buf[RECSZ / 8];
  char path[4096];
  for (int f = 0; f < NFILES; f++) {
    for (int z = 0; z < 2; z++) {
      snprintf(path, sizeof path, "%s/rec-%02d.tfrecord%s", argv[1], f, z ? ".zst" : "");
      dinput_record_writer_t* w;
      s = 0x9E3779B97F4A7C15ull + (uint64_t)f; /* same payloads in both variants */
      dinput_record_writer_options_t* o;
      if (dinput_record_writer_options_new(&o) ||
          dinput_record_writer_options_set_compression(
              o, z ? DINPUT_COMPRESSION_ZSTD : DINPUT_COMPRESSION_NONE) ||
          dinput_record_writer_options_set_level(o, 3)) {
        fprintf(stderr, "writer options: %s\n", dinput_last_error_message());
        return 1;
      }
      dinput_status_t st = dinput_record_writer_open(&w, path, o);
      dinput_record_writer_options_free(o);
      if (st) {
        fprintf(stderr, "open %s: %s\n", path, dinput_last_error_message());
        return 1;
      }
      for (int r = 0; r < NREC; r++) {
        for (int i = 0; i < RECSZ / 8; i++) buf[i] = next();
        if (dinput_record_writer_write(w, buf, RECSZ)) {
          fprintf(stderr, "write: %s\n", dinput_last_error_message());
          return 1;
        }
      }
      if (dinput_record_writer_close(w)) {
        fprintf(stderr, "close: %s\n", dinput_last_error_message());
        return 1;
      }
      dinput_record_writer_free(w);
    }
  }
  return 0;
}
