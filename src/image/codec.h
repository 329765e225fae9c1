/* The image decoders' C side. libjpeg and libpng report a fatal error by calling an error
 * handler that must not return; the decoders here make it longjmp back to a setjmp in the
 * same C function that called the library, so the jump never crosses a C++ frame (which
 * would skip destructors). The C++ side (image/decode.cc) sees only a return code and a
 * message. */
#ifndef DINPUT_IMAGE_CODEC_H_
#define DINPUT_IMAGE_CODEC_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The region of the image to decode, in pixels of the whole image. A decoder that can write
 * wider rows than the region's straight into the output (saving a copy per row) sets `pad`
 * before calling prepare; prepare may then make the output's rows `stride` pixels long (at
 * least width + pad), and the decoder sets `x_out`, the column of each output row where the
 * region's pixels begin. stride 0: rows of `width` pixels, the region at column 0. */
typedef struct dinput_image_window {
  int y, x, height, width;
  int pad, stride, x_out;
} dinput_image_window;

/* Called once the image's size is known, before any pixel is decoded: `window` holds the
 * whole image and may be narrowed (within it) to decode a region only. Returns the output
 * buffer of window.height rows of window.stride (or, when 0, window.width) pixels of
 * `channels` bytes, or NULL after writing why into
 * error (of error_size bytes). It must not throw or longjmp. */
typedef unsigned char* (*dinput_image_prepare_fn)(void* ctx, int height, int width, int channels,
                                                  dinput_image_window* window, char* error,
                                                  size_t error_size);

/* Decodes a JPEG into 8-bit pixels (rows as the window says). channels: 0 (as
 * stored: 1 for grayscale, else 3), 1 (luma) or 3 (RGB). Returns 0, or -1 after writing a
 * message into error. *x_out: the window's column in the output rows (see
 * dinput_image_window). */
int dinput_image_decode_jpeg(const unsigned char* data, size_t size, int channels,
                             dinput_image_prepare_fn prepare, void* ctx, char* error,
                             size_t error_size, int* x_out);

/* Decodes a PNG into 8-bit pixels (16-bit samples keep their high byte). channels: 0 (as
 * stored: 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA; palettes expand to RGB or RGBA), 1, 3 or 4.
 * The window must stay the whole image for PNG. Returns 0, or -1 with a message. */
int dinput_image_decode_png(const unsigned char* data, size_t size, int channels,
                            dinput_image_prepare_fn prepare, void* ctx, char* error,
                            size_t error_size);

#ifdef __cplusplus
}
#endif

#endif /* DINPUT_IMAGE_CODEC_H_ */
