//! Parsing serialized `tf.train.Example` and `SequenceExample` records
//! (`Dataset::parse_example` and its relatives; docs/examples.md).

use std::ffi::c_int;
use std::ptr::NonNull;

use crate::dataset::Dataset;
use crate::error::{c_string, check, out_handle, to_c_int, Result};
use crate::sys;
use crate::tensor::{DType, Tensor};

/// The features a parse extracts, one per key, as tf.io's `FixedLenFeature`,
/// `VarLenFeature` and `FixedLenSequenceFeature`. The parsed components come in the order
/// of the keys. A parse that uses it freezes it: later additions fail with
/// `FailedPrecondition`.
pub struct Features {
    raw: NonNull<sys::dinput_feature_spec_t>,
}

// SAFETY: the additions take `&mut self`; a frozen spec is only read by the library.
unsafe impl Send for Features {}
// SAFETY: as above.
unsafe impl Sync for Features {}

impl Drop for Features {
    fn drop(&mut self) {
        // SAFETY: self owns the handle.
        unsafe { sys::dinput_feature_spec_free(self.raw.as_ptr()) }
    }
}

impl std::fmt::Debug for Features {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Features")
    }
}

fn shape_ptr(shape: &[i64]) -> *const i64 {
    if shape.is_empty() {
        std::ptr::null()
    } else {
        shape.as_ptr()
    }
}

fn tensor_ptr(t: Option<&Tensor>) -> *const sys::dinput_tensor_t {
    t.map_or(std::ptr::null(), |t| t.as_raw())
}

impl Features {
    /// An empty feature spec.
    pub fn new() -> Result<Features> {
        // SAFETY: out is a valid out-parameter.
        let raw = out_handle(|out| unsafe { sys::dinput_feature_spec_new(out) })?;
        Ok(Features { raw })
    }

    pub fn as_raw(&self) -> *const sys::dinput_feature_spec_t {
        self.raw.as_ptr()
    }

    /// `FixedLenFeature(shape, dtype, default)`: every record gives exactly the shape's number
    /// of values; `default` (that many values, or one to repeat) stands in for a missing key.
    pub fn fixed_len(&mut self, key: &str, shape: &[i64], dtype: DType, default: Option<&Tensor>) -> Result<&mut Self> {
        let k = c_string(key, "feature key")?;
        let rank: c_int = to_c_int(shape.len(), "rank")?;
        // SAFETY: the handle is live and exclusively borrowed; key, shape and default are
        // valid for the call and copied by the library.
        check(unsafe {
            sys::dinput_feature_spec_add_fixed_len(
                self.raw.as_ptr(),
                k.as_ptr(),
                dtype.raw(),
                shape_ptr(shape),
                rank,
                tensor_ptr(default),
            )
        })?;
        Ok(self)
    }

    /// `VarLenFeature(dtype)`: parsed as ragged components (the values, and in a batch their
    /// int64 row splits).
    pub fn var_len(&mut self, key: &str, dtype: DType) -> Result<&mut Self> {
        let k = c_string(key, "feature key")?;
        // SAFETY: as in fixed_len.
        check(unsafe { sys::dinput_feature_spec_add_var_len(self.raw.as_ptr(), k.as_ptr(), dtype.raw()) })?;
        Ok(self)
    }

    /// `FixedLenSequenceFeature(shape, dtype, allow_missing, default)`: a sequence of values
    /// of `shape`, padded in a batch with `default` (one value; `None`: zero or empty).
    pub fn fixed_len_sequence(
        &mut self,
        key: &str,
        shape: &[i64],
        dtype: DType,
        allow_missing: bool,
        default: Option<&Tensor>,
    ) -> Result<&mut Self> {
        let k = c_string(key, "feature key")?;
        let rank: c_int = to_c_int(shape.len(), "rank")?;
        // SAFETY: as in fixed_len.
        check(unsafe {
            sys::dinput_feature_spec_add_fixed_len_sequence(
                self.raw.as_ptr(),
                k.as_ptr(),
                dtype.raw(),
                shape_ptr(shape),
                rank,
                c_int::from(allow_missing),
                tensor_ptr(default),
            )
        })?;
        Ok(self)
    }
}

impl Dataset {
    /// Parses batches of serialized Examples: component `component` of each element is a
    /// bytes vector; the parsed components take its place, the others pass through.
    pub fn parse_example(&self, features: &Features, component: usize) -> Result<Dataset> {
        let c = i64::try_from(component).unwrap_or(i64::MAX);
        // SAFETY: both handles are live for the call; out is a valid out-parameter.
        out_handle(|out| unsafe { sys::dinput_dataset_parse_example(out, self.as_raw(), features.as_raw(), c) })
            .map(Dataset::wrap)
    }

    /// Parses one serialized Example (a bytes scalar) per element.
    pub fn parse_single_example(&self, features: &Features, component: usize) -> Result<Dataset> {
        let c = i64::try_from(component).unwrap_or(i64::MAX);
        // SAFETY: as in parse_example.
        out_handle(|out| unsafe { sys::dinput_dataset_parse_single_example(out, self.as_raw(), features.as_raw(), c) })
            .map(Dataset::wrap)
    }

    /// Parses serialized SequenceExamples (a bytes scalar, or a vector for a batch): the
    /// context features, then the feature lists.
    pub fn parse_sequence_example(
        &self,
        context: Option<&Features>,
        sequence: Option<&Features>,
        component: usize,
    ) -> Result<Dataset> {
        let c = i64::try_from(component).unwrap_or(i64::MAX);
        let ctx = context.map_or(std::ptr::null(), |f| f.as_raw());
        let seq = sequence.map_or(std::ptr::null(), |f| f.as_raw());
        // SAFETY: as in parse_example; null feature specs mean none.
        out_handle(|out| unsafe { sys::dinput_dataset_parse_sequence_example(out, self.as_raw(), ctx, seq, c) })
            .map(Dataset::wrap)
    }
}
