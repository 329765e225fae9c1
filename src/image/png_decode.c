/* PNG decoding with libpng, in C: libpng's error handler longjmps back to the setjmp in
 * dinput_image_decode_png, and no C++ frame lies between the two. */
#include "image/codec.h"

#include <stdio.h>

#ifdef DINPUT_HAVE_PNG

#include <png.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const unsigned char* data;
  size_t size;
  size_t pos;
  char* error;
  size_t error_size;
} source;

static void read_bytes(png_structp png, png_bytep out, png_size_t n) {
  source* s = (source*)png_get_io_ptr(png);
  if (n > s->size - s->pos) png_error(png, "the data ends before the image does (truncated)");
  memcpy(out, s->data + s->pos, n);
  s->pos += n;
}

static void fail(png_structp png, png_const_charp message) {
  source* s = (source*)png_get_error_ptr(png);
  snprintf(s->error, s->error_size, "%s", message);
  png_longjmp(png, 1);
}

static void ignore_warning(png_structp png, png_const_charp message) { (void)png, (void)message; }

int dinput_image_decode_png(const unsigned char* data, size_t size, int channels,
                            dinput_image_prepare_fn prepare, void* ctx, char* error,
                            size_t error_size) {
  source src = {data, size, 0, error, error_size};
  if (size < 8 || png_sig_cmp((png_const_bytep)data, 0, 8) != 0) {
    snprintf(error, error_size, "not a PNG (no PNG signature)");
    return -1;
  }
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &src, fail, ignore_warning);
  png_infop info = png ? png_create_info_struct(png) : NULL;
  if (!info) {
    png_destroy_read_struct(png ? &png : NULL, NULL, NULL);
    snprintf(error, error_size, "out of memory");
    return -1;
  }
  png_bytep* volatile rows = NULL; /* set after setjmp, freed after a jump */
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, NULL);
    free(rows);
    return -1;
  }
  png_set_read_fn(png, &src, read_bytes);
  png_read_info(png, info);
  png_uint_32 width = 0, height = 0;
  int depth = 0, type = 0;
  png_get_IHDR(png, info, &width, &height, &depth, &type, NULL, NULL, NULL);
  const int trns = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
  const int color = (type & PNG_COLOR_MASK_COLOR) != 0; /* palettes too */
  const int alpha = (type & PNG_COLOR_MASK_ALPHA) != 0 || trns;
  const int ch = channels != 0 ? channels : (color ? 3 : 1) + (alpha ? 1 : 0);
  const int want_color = ch >= 3;
  const int want_alpha = ch == 2 || ch == 4;

  if (depth == 16) png_set_strip_16(png);
  if (type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (type == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (trns && want_alpha) png_set_tRNS_to_alpha(png);
  if (color && !want_color) png_set_rgb_to_gray_fixed(png, 1, -1, -1);
  if (!color && want_color) png_set_gray_to_rgb(png);
  if (alpha && !want_alpha && !trns) png_set_strip_alpha(png);
  if (!alpha && want_alpha) png_set_add_alpha(png, 0xff, PNG_FILLER_AFTER);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  if (png_get_channels(png, info) != ch ||
      png_get_rowbytes(png, info) != (size_t)width * (size_t)ch)
    png_error(png, "unsupported combination of colour type and channels");

  dinput_image_window w = {0, 0, (int)height, (int)width, 0, 0, 0};
  unsigned char* out = prepare(ctx, (int)height, (int)width, ch, &w, error, error_size);
  if (!out) {
    png_destroy_read_struct(&png, &info, NULL);
    return -1;
  }
  rows = (png_bytep*)malloc(sizeof(png_bytep) * (height ? height : 1));
  if (!rows) png_error(png, "out of memory");
  for (png_uint_32 r = 0; r < height; ++r) rows[r] = out + (size_t)r * width * (size_t)ch;
  png_read_image(png, rows);
  png_read_end(png, NULL);
  png_destroy_read_struct(&png, &info, NULL);
  free(rows);
  return 0;
}

#else

int dinput_image_decode_png(const unsigned char* data, size_t size, int channels,
                            dinput_image_prepare_fn prepare, void* ctx, char* error,
                            size_t error_size) {
  (void)data, (void)size, (void)channels, (void)prepare, (void)ctx;
  snprintf(error, error_size, "this dinput was built without libpng (DINPUT_WITH_IMAGES)");
  return -2;
}

#endif
