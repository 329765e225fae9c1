/* JPEG decoding with libjpeg (libjpeg-turbo), in C: libjpeg's error handler longjmps back to
 * the setjmp in dinput_image_decode_jpeg, and no C++ frame lies between the two. */
#include "image/codec.h"

#include <stdio.h>

#ifdef DINPUT_HAVE_JPEG

#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

/* jpeglib.h needs FILE and size_t declared first. */
#include <jerror.h>
#include <jpeglib.h>

typedef struct {
  struct jpeg_error_mgr mgr; /* first: libjpeg's pointer to it is a pointer to this */
  jmp_buf jump;
  char* error;
  size_t error_size;
} error_state;

static void fail(j_common_ptr cinfo) {
  error_state* e = (error_state*)cinfo->err;
  char message[JMSG_LENGTH_MAX];
  (*cinfo->err->format_message)(cinfo, message);
  snprintf(e->error, e->error_size, "%s", message);
  longjmp(e->jump, 1);
}

/* libjpeg keeps decoding through damaged data after a warning, filling what it lost with gray.
 * The warnings that mean pixels were lost are errors here (a truncated file, a damaged
 * entropy-coded segment); the harmless ones (stray bytes between markers, an unknown JFIF
 * version) are ignored, as are trace messages. */
static void on_message(j_common_ptr cinfo, int level) {
  if (level >= 0) return;
  switch (cinfo->err->msg_code) {
    case JWRN_JPEG_EOF:
    case JWRN_HIT_MARKER:
    case JWRN_HUFF_BAD_CODE:
    case JWRN_MUST_RESYNC:
    case JWRN_NOT_SEQUENTIAL:
    case JWRN_BOGUS_PROGRESSION:
      fail(cinfo);
      break;
    default:
      cinfo->err->num_warnings++;
  }
}

static void no_output(j_common_ptr cinfo) { (void)cinfo; }

int dinput_image_decode_jpeg(const unsigned char* data, size_t size, int channels,
                             dinput_image_prepare_fn prepare, void* ctx, char* error,
                             size_t error_size, int* x_out) {
  struct jpeg_decompress_struct cinfo;
  error_state err;
  /* Set after setjmp and freed after a jump: volatile, so the jump does not lose them. */
  unsigned char* volatile row = NULL;
  JSAMPROW* volatile rows = NULL;
  memset(&cinfo, 0, sizeof cinfo);
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = fail;
  err.mgr.emit_message = on_message;
  err.mgr.output_message = no_output;
  err.error = error;
  err.error_size = error_size;
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    free(row);
    free(rows);
    return -1;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, data, (unsigned long)size);
  jpeg_read_header(&cinfo, TRUE);
  const int ch = channels != 0 ? channels : cinfo.jpeg_color_space == JCS_GRAYSCALE ? 1 : 3;
  cinfo.out_color_space = ch == 1 ? JCS_GRAYSCALE : JCS_RGB;

  /* Room for whole decoded rows: a window widened by one chroma sample on each side (at most
   * 4 pixels) and to whole iMCUs (at most 31 more pixels on each side). */
  dinput_image_window w = {0, 0, (int)cinfo.image_height, (int)cinfo.image_width, 72, 0, 0};
  unsigned char* out =
      prepare(ctx, (int)cinfo.image_height, (int)cinfo.image_width, ch, &w, error, error_size);
  if (!out) {
    jpeg_destroy_decompress(&cinfo);
    return -1;
  }
  const size_t stride = (size_t)(w.stride > 0 ? w.stride : w.width) * (size_t)ch;
  const size_t window_bytes = (size_t)w.width * (size_t)ch;
  *x_out = 0;
  jpeg_start_decompress(&cinfo);
  if (w.x == 0 && w.y == 0 && w.width == (int)cinfo.output_width &&
      w.height == (int)cinfo.output_height) {
    /* All row pointers at once: libjpeg then hands out as many rows per call as it has. */
    rows = (JSAMPROW*)malloc(sizeof(JSAMPROW) * (size_t)w.height);
    if (!rows) ERREXIT1(&cinfo, JERR_OUT_OF_MEMORY, 0);
    for (int r = 0; r < w.height; ++r) rows[r] = out + (size_t)r * stride;
    while (cinfo.output_scanline < cinfo.output_height)
      jpeg_read_scanlines(&cinfo, rows + cinfo.output_scanline,
                          cinfo.output_height - cinfo.output_scanline);
    jpeg_finish_decompress(&cinfo);
  } else {
    /* A window: only its columns are transformed (jpeg_crop_scanline widens them to whole
     * blocks) and the rows above it are skipped; decoding stops after its last row. Smooth
     * chroma upsampling blends each chroma sample with its neighbours, and treats the edge of
     * what is decoded as the image's edge: a margin of one chroma sample on every side keeps
     * the window's pixels the same as those of the whole image. */
    /* A progressive image is decoded whole, row by row: where its scans leave coefficients
     * out, libjpeg smooths each block from its neighbours, which a cropped decode treats
     * differently, so the window would differ from the same window of the whole image (the
     * fuzzer found such a file). */
    const int whole = cinfo.progressive_mode;
    const int mx = cinfo.max_h_samp_factor, my = cinfo.max_v_samp_factor;
    const int x0 = whole ? 0 : w.x > mx ? w.x - mx : 0;
    const int x1 = whole || w.x + w.width + mx >= (int)cinfo.output_width ? (int)cinfo.output_width
                                                                          : w.x + w.width + mx;
    const int y0 = whole ? 0 : w.y > my ? w.y - my : 0;
    JDIMENSION x = (JDIMENSION)x0, width = (JDIMENSION)(x1 - x0);
    if (width != cinfo.output_width) jpeg_crop_scanline(&cinfo, &x, &width);
    const size_t left = (size_t)(w.x - (int)x) * (size_t)ch;
    /* Rows as wide as decoded fit the output's: decode into it, the window at column
     * `left` (the margin rows above the window go where its first row will be written
     * after them). Otherwise through a row of our own, copying the window's part. */
    const int direct = (size_t)width * (size_t)ch <= stride;
    if (!direct) {
      row = (unsigned char*)malloc((size_t)width * (size_t)ch);
      if (!row) ERREXIT1(&cinfo, JERR_OUT_OF_MEMORY, 0);
    }
    if (y0 > 0) jpeg_skip_scanlines(&cinfo, (JDIMENSION)y0);
    for (int r = y0; r < w.y + w.height; ++r) {
      JSAMPROW one = direct ? out + (size_t)(r > w.y ? r - w.y : 0) * stride : row;
      jpeg_read_scanlines(&cinfo, &one, 1);
      if (!direct && r >= w.y) memcpy(out + (size_t)(r - w.y) * stride, row + left, window_bytes);
    }
    if (direct) *x_out = (int)(left / (size_t)ch);
    jpeg_abort_decompress(&cinfo);
  }
  jpeg_destroy_decompress(&cinfo);
  free(row);
  free(rows);
  return 0;
}

#else

int dinput_image_decode_jpeg(const unsigned char* data, size_t size, int channels,
                             dinput_image_prepare_fn prepare, void* ctx, char* error,
                             size_t error_size, int* x_out) {
  (void)data, (void)size, (void)channels, (void)prepare, (void)ctx, (void)x_out;
  snprintf(error, error_size, "this dinput was built without libjpeg (DINPUT_WITH_IMAGES)");
  return -2;
}

#endif
