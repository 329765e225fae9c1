package dinput

/*
#include "shim.h"
*/
import "C"

import "unsafe"

// ImageOptions are the settings every image operation shares (docs/images.md). The zero
// value maps component 0 sequentially.
type ImageOptions struct {
	// Component is the element's component that holds the image (or its encoded bytes);
	// the others pass through.
	Component int64
	// NumParallelCalls is 0 or 1 to run on the consumer's thread, more than 1 (or Autotune)
	// to run on a pool of library threads, with the same results.
	NumParallelCalls int64
	// Deterministic is the order of the results with NumParallelCalls > 1, as for Map.
	Deterministic Deterministic
}

// imageOp builds one image operation with opts' settings.
func (d *Dataset) imageOp(opts *ImageOptions, build func(out **C.dinput_dataset_t, in *C.dinput_dataset_t, o *C.dinput_image_options_t) C.dinput_status_t) (*Dataset, error) {
	if opts == nil {
		opts = &ImageOptions{}
	}
	var copts *C.dinput_image_options_t
	if err := call(func() C.dinput_status_t { return C.dinput_image_options_new(&copts) }); err != nil {
		return nil, err
	}
	defer C.dinput_image_options_free(copts)
	parallel := opts.NumParallelCalls
	if parallel == 0 {
		parallel = 1
	}
	if err := call(func() C.dinput_status_t {
		if st := C.dinput_image_options_set_component(copts, C.int64_t(opts.Component)); st != C.DINPUT_OK {
			return st
		}
		if st := C.dinput_image_options_set_num_parallel_calls(copts, C.int64_t(parallel)); st != C.DINPUT_OK {
			return st
		}
		return C.dinput_image_options_set_deterministic(copts, opts.Deterministic.toC())
	}); err != nil {
		return nil, err
	}
	return d.derive(func(out **C.dinput_dataset_t, in *C.dinput_dataset_t) C.dinput_status_t {
		return build(out, in, copts)
	})
}

// DecodeJPEG turns JPEG bytes (a scalar bytes component) into uint8 [height, width,
// channels]; channels is 0 (as stored), 1 or 3.
func (d *Dataset) DecodeJPEG(channels int64, opts *ImageOptions) (*Dataset, error) {
	return d.imageOp(opts, func(out **C.dinput_dataset_t, in *C.dinput_dataset_t, o *C.dinput_image_options_t) C.dinput_status_t {
		return C.dinput_dataset_decode_jpeg(out, in, C.int64_t(channels), o)
	})
}

// DecodePNG turns PNG bytes into uint8 [height, width, channels]; channels is 0 (as
// stored), 1, 3 or 4.
func (d *Dataset) DecodePNG(channels int64, opts *ImageOptions) (*Dataset, error) {
	return d.imageOp(opts, func(out **C.dinput_dataset_t, in *C.dinput_dataset_t, o *C.dinput_image_options_t) C.dinput_status_t {
		return C.dinput_dataset_decode_png(out, in, C.int64_t(channels), o)
	})
}

// Resize resizes images bilinearly (half-pixel centres) to height x width, as float32.
func (d *Dataset) Resize(height, width int64, opts *ImageOptions) (*Dataset, error) {
	return d.imageOp(opts, func(out **C.dinput_dataset_t, in *C.dinput_dataset_t, o *C.dinput_image_options_t) C.dinput_status_t {
		return C.dinput_dataset_resize(out, in, C.int64_t(height), C.int64_t(width), o)
	})
}

// CenterCrop keeps the centred height x width region.
func (d *Dataset) CenterCrop(height, width int64, opts *ImageOptions) (*Dataset, error) {
	return d.imageOp(opts, func(out **C.dinput_dataset_t, in *C.dinput_dataset_t, o *C.dinput_image_options_t) C.dinput_status_t {
		return C.dinput_dataset_center_crop(out, in, C.int64_t(height), C.int64_t(width), o)
	})
}

// RandomCrop keeps a height x width region at a place drawn from seed (< 0: random) and the
// element's position.
func (d *Dataset) RandomCrop(height, width, seed int64, opts *ImageOptions) (*Dataset, error) {
	return d.imageOp(opts, func(out **C.dinput_dataset_t, in *C.dinput_dataset_t, o *C.dinput_image_options_t) C.dinput_status_t {
		return C.dinput_dataset_random_crop(out, in, C.int64_t(height), C.int64_t(width), C.int64_t(seed), o)
	})
}

// RandomResizedCrop resizes a region of random area (a fraction in scale of the image's)
// and aspect ratio (log-uniform in ratio) to height x width, as float32.
func (d *Dataset) RandomResizedCrop(height, width int64, scale, ratio [2]float64, seed int64, opts *ImageOptions) (*Dataset, error) {
	return d.imageOp(opts, func(out **C.dinput_dataset_t, in *C.dinput_dataset_t, o *C.dinput_image_options_t) C.dinput_status_t {
		return C.dinput_dataset_random_resized_crop(out, in, C.int64_t(height), C.int64_t(width),
			C.double(scale[0]), C.double(scale[1]), C.double(ratio[0]), C.double(ratio[1]), C.int64_t(seed), o)
	})
}

// RandomFlipLeftRight mirrors each image with probability 1/2, drawn from seed (< 0:
// random) and the element's position.
func (d *Dataset) RandomFlipLeftRight(seed int64, opts *ImageOptions) (*Dataset, error) {
	return d.imageOp(opts, func(out **C.dinput_dataset_t, in *C.dinput_dataset_t, o *C.dinput_image_options_t) C.dinput_status_t {
		return C.dinput_dataset_random_flip_left_right(out, in, C.int64_t(seed), o)
	})
}

// CastImage converts images to dtype (Float32 or Float16), values unchanged.
func (d *Dataset) CastImage(dtype DType, opts *ImageOptions) (*Dataset, error) {
	return d.imageOp(opts, func(out **C.dinput_dataset_t, in *C.dinput_dataset_t, o *C.dinput_image_options_t) C.dinput_status_t {
		return C.dinput_dataset_cast_image(out, in, C.dinput_dtype_t(dtype), o)
	})
}

// Normalize computes (x - mean[c]) / stddev[c] per channel c as dtype (Float32 or
// Float16); mean and stddev hold one value per channel, or one for all.
func (d *Dataset) Normalize(mean, stddev []float32, dtype DType, opts *ImageOptions) (*Dataset, error) {
	if len(mean) == 0 || len(mean) != len(stddev) {
		return nil, &Error{Code: InvalidArgument, Message: "Normalize: mean and stddev must have the same, nonzero, length"}
	}
	return d.imageOp(opts, func(out **C.dinput_dataset_t, in *C.dinput_dataset_t, o *C.dinput_image_options_t) C.dinput_status_t {
		return C.dinput_dataset_normalize(out, in, (*C.float)(unsafe.Pointer(&mean[0])),
			(*C.float)(unsafe.Pointer(&stddev[0])), C.size_t(len(mean)), C.dinput_dtype_t(dtype), o)
	})
}
