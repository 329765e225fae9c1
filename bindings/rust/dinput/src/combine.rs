//! The transforms over several datasets (zip, concatenate, sample_from_datasets,
//! choose_from_datasets), cache and ignore_errors.

use std::ffi::c_int;
use std::path::Path;

use dinput_sys as sys;

use crate::dataset::{path_c_string, Dataset};
use crate::error::{out_handle, Error, Result};

/// A dataset made by `make` from the handles of `datasets` (borrowed for the call).
fn from_list(
    datasets: &[&Dataset],
    make: impl FnOnce(*mut *mut sys::dinput_dataset_t, *const *const sys::dinput_dataset_t, usize) -> sys::dinput_status_t,
) -> Result<Dataset> {
    let raw: Vec<*const sys::dinput_dataset_t> = datasets.iter().map(|d| d.as_raw()).collect();
    let out = out_handle(|out| make(out, raw.as_ptr(), raw.len()))?;
    // SAFETY: a new handle we own.
    Ok(unsafe { Dataset::from_raw(out.as_ptr()) }.expect("non-null"))
}

impl Dataset {
    /// Elements made of one element of each dataset, their components one after the other in
    /// a single flat tuple. Ends with the shortest dataset.
    pub fn zip(datasets: &[&Dataset]) -> Result<Dataset> {
        // SAFETY: the handles are live for the call; the library references what it keeps.
        from_list(datasets, |out, list, n| unsafe { sys::dinput_dataset_zip(out, list, n) })
    }

    /// This dataset's elements, then `other`'s; their specs must have the same number of
    /// components, dtypes and ranks.
    pub fn concatenate(&self, other: &Dataset) -> Result<Dataset> {
        // SAFETY: see zip.
        from_list(&[self, other], |out, list, _| unsafe { sys::dinput_dataset_concatenate(out, *list, *list.add(1)) })
    }

    /// Each element from one of `datasets`, picked at random with probabilities proportional
    /// to `weights` (None: equal). `seed` None draws one at random per dataset; the same seed
    /// gives the same picks. `stop_on_empty_dataset`: end at the first pick of an exhausted
    /// dataset, else go on among the others.
    pub fn sample_from_datasets(
        datasets: &[&Dataset],
        weights: Option<&[f64]>,
        seed: Option<u64>,
        stop_on_empty_dataset: bool,
    ) -> Result<Dataset> {
        if let Some(w) = weights {
            if w.len() != datasets.len() {
                return Err(Error::invalid_argument(format!(
                    "sample_from_datasets: {} weights for {} datasets",
                    w.len(),
                    datasets.len()
                )));
            }
        }
        let seed = match seed {
            None => -1,
            Some(s) => i64::try_from(s)
                .map_err(|_| Error::invalid_argument(format!("sample_from_datasets: seed {s} exceeds i64::MAX")))?,
        };
        let w = weights.map_or(std::ptr::null(), |w| w.as_ptr());
        // SAFETY: see zip; weights holds one value per dataset, read during the call.
        from_list(datasets, |out, list, n| unsafe {
            sys::dinput_dataset_sample_from_datasets(out, list, n, w, seed, stop_on_empty_dataset as c_int)
        })
    }

    /// Each element from `datasets[i]`, `i` being the next element of `selector` (int64
    /// scalars); an index outside the datasets fails iteration with INVALID_ARGUMENT.
    pub fn choose_from_datasets(
        datasets: &[&Dataset],
        selector: &Dataset,
        stop_on_empty_dataset: bool,
    ) -> Result<Dataset> {
        // SAFETY: see zip.
        from_list(datasets, |out, list, n| unsafe {
            sys::dinput_dataset_choose_from_datasets(out, list, n, selector.as_raw(), stop_on_empty_dataset as c_int)
        })
    }

    /// Keeps the elements of the first complete pass and delivers them to later passes: in
    /// memory (`None`), or in the file `filename`, which a later run reads back. A file of
    /// another pipeline is FAILED_PRECONDITION; a damaged one DATA_LOSS.
    pub fn cache(&self, filename: Option<&Path>) -> Result<Dataset> {
        let name = filename.map(path_c_string).transpose()?;
        let ptr = name.as_ref().map_or(std::ptr::null(), |c| c.as_ptr());
        // SAFETY: see zip; the name lives for the call.
        from_list(&[self], |out, list, _| unsafe { sys::dinput_dataset_cache(out, *list, ptr) })
    }

    /// Drops the elements whose making failed with INVALID_ARGUMENT or DATA_LOSS and goes on;
    /// the iterator statistic "errors_ignored" counts them. Other errors pass.
    pub fn ignore_errors(&self, log_warning: bool) -> Result<Dataset> {
        // SAFETY: see zip.
        from_list(&[self], |out, list, _| unsafe {
            sys::dinput_dataset_ignore_errors(out, *list, log_warning as c_int)
        })
    }
}
