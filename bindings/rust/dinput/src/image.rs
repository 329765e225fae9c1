//! The image operations (docs/images.md): decoding and augmentation as built-in map stages.

use crate::dataset::{deterministic_c, OptionHandle};
use crate::error::{Error, Result};
use crate::{sys, Code, DType, Dataset};

/// Settings every image operation shares. The default maps component 0 on the consumer's
/// thread.
#[derive(Debug, Clone, Copy)]
pub struct ImageOptions {
    /// The component that holds the image (or its encoded bytes); the others pass through.
    pub component: i64,
    /// 1: sequential; > 1 or [`crate::AUTOTUNE`]: on library threads, with the same results.
    pub num_parallel_calls: i64,
    /// The order of results with num_parallel_calls > 1, as for map.
    pub deterministic: Option<bool>,
}

impl Default for ImageOptions {
    fn default() -> Self {
        ImageOptions { component: 0, num_parallel_calls: 1, deterministic: None }
    }
}

impl ImageOptions {
    fn to_c(&self) -> Result<OptionHandle<sys::dinput_image_options_t>> {
        let o = OptionHandle::new(sys::dinput_image_options_new, sys::dinput_image_options_free)?;
        // SAFETY (setters): the handle is live and owned by `o`.
        o.set(|p| unsafe { sys::dinput_image_options_set_component(p, self.component) })?;
        o.set(|p| unsafe { sys::dinput_image_options_set_num_parallel_calls(p, self.num_parallel_calls) })?;
        o.set(|p| unsafe { sys::dinput_image_options_set_deterministic(p, deterministic_c(self.deterministic)) })?;
        Ok(o)
    }
}

// SAFETY (every operation below): `input` is self's live handle and `out` a valid
// out-parameter (see Dataset::derive); the option handle is live for the call.
impl Dataset {
    /// JPEG bytes (a scalar bytes component) to uint8 [height, width, channels]; channels 0
    /// (as stored), 1 or 3.
    pub fn decode_jpeg(&self, channels: i64, options: &ImageOptions) -> Result<Dataset> {
        let o = options.to_c()?;
        self.derive(|out, input| unsafe { sys::dinput_dataset_decode_jpeg(out, input, channels, o.as_ptr()) })
    }

    /// PNG bytes to uint8 [height, width, channels]; channels 0 (as stored), 1, 3 or 4.
    pub fn decode_png(&self, channels: i64, options: &ImageOptions) -> Result<Dataset> {
        let o = options.to_c()?;
        self.derive(|out, input| unsafe { sys::dinput_dataset_decode_png(out, input, channels, o.as_ptr()) })
    }

    /// Bilinear resizing (half-pixel centres) to `[height, width]`, float32 out.
    pub fn resize(&self, size: [i64; 2], options: &ImageOptions) -> Result<Dataset> {
        let o = options.to_c()?;
        self.derive(|out, input| unsafe { sys::dinput_dataset_resize(out, input, size[0], size[1], o.as_ptr()) })
    }

    /// The centred `[height, width]` region.
    pub fn center_crop(&self, size: [i64; 2], options: &ImageOptions) -> Result<Dataset> {
        let o = options.to_c()?;
        self.derive(|out, input| unsafe { sys::dinput_dataset_center_crop(out, input, size[0], size[1], o.as_ptr()) })
    }

    /// A `[height, width]` region at a place drawn from `seed` (None: random) and the
    /// element's position.
    pub fn random_crop(&self, size: [i64; 2], seed: Option<u32>, options: &ImageOptions) -> Result<Dataset> {
        let o = options.to_c()?;
        let seed = seed.map_or(-1, i64::from);
        self.derive(|out, input| unsafe {
            sys::dinput_dataset_random_crop(out, input, size[0], size[1], seed, o.as_ptr())
        })
    }

    /// A region of random area (`scale` of the image's) and aspect ratio (log-uniform in
    /// `ratio`) resized to `[height, width]`, float32 out.
    pub fn random_resized_crop(
        &self,
        size: [i64; 2],
        scale: [f64; 2],
        ratio: [f64; 2],
        seed: Option<u32>,
        options: &ImageOptions,
    ) -> Result<Dataset> {
        let o = options.to_c()?;
        let seed = seed.map_or(-1, i64::from);
        self.derive(|out, input| unsafe {
            sys::dinput_dataset_random_resized_crop(
                out,
                input,
                size[0],
                size[1],
                scale[0],
                scale[1],
                ratio[0],
                ratio[1],
                seed,
                o.as_ptr(),
            )
        })
    }

    /// Mirrors each image left to right with probability 1/2 (drawn from `seed`, None:
    /// random, and the element's position).
    pub fn random_flip_left_right(&self, seed: Option<u32>, options: &ImageOptions) -> Result<Dataset> {
        let o = options.to_c()?;
        let seed = seed.map_or(-1, i64::from);
        self.derive(|out, input| unsafe { sys::dinput_dataset_random_flip_left_right(out, input, seed, o.as_ptr()) })
    }

    /// To `dtype` (Float32 or Float16), values unchanged.
    pub fn cast_image(&self, dtype: DType, options: &ImageOptions) -> Result<Dataset> {
        let o = options.to_c()?;
        self.derive(|out, input| unsafe { sys::dinput_dataset_cast_image(out, input, dtype.raw(), o.as_ptr()) })
    }

    /// `(x - mean[c]) / stddev[c]` per channel c as `dtype`; one value per channel or one
    /// for all.
    pub fn normalize(&self, mean: &[f32], stddev: &[f32], dtype: DType, options: &ImageOptions) -> Result<Dataset> {
        if mean.is_empty() || mean.len() != stddev.len() {
            return Err(Error::new(
                Code::InvalidArgument,
                "normalize: mean and stddev must have the same, nonzero, length",
            ));
        }
        let o = options.to_c()?;
        self.derive(|out, input| unsafe {
            sys::dinput_dataset_normalize(
                out,
                input,
                mean.as_ptr(),
                stddev.as_ptr(),
                mean.len(),
                dtype.raw(),
                o.as_ptr(),
            )
        })
    }
}
