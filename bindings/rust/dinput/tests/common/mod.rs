//! Helpers shared by the integration tests.
#![allow(dead_code)]

use dinput::{AutoShardPolicy, Dataset, DistDataset, DistIterator, Options, PerReplica, Result};

/// The first component of every local replica of one step, as int64 values.
pub fn replicas(step: &PerReplica) -> Vec<Vec<i64>> {
    step.iter().map(|e| e.tensor(0).and_then(|t| t.to_vec_i64()).expect("int64 component")).collect()
}

/// Every step of an iterator until the end of data.
pub fn collect_steps(it: DistIterator) -> Vec<Vec<Vec<i64>>> {
    it.map(|step| replicas(&step.expect("get_next"))).collect()
}

/// Every step of a fresh iterator of `dist`.
pub fn steps(dist: &DistDataset) -> Vec<Vec<Vec<i64>>> {
    collect_steps(dist.iter().expect("iterator"))
}

/// `range(start, stop).batch(batch)`.
pub fn range_batch(stop: i64, batch: usize) -> Dataset {
    Dataset::range(0, stop, 1).and_then(|d| d.batch(batch, false)).expect("dataset")
}

pub fn with_policy(dataset: &Dataset, policy: AutoShardPolicy) -> Result<Dataset> {
    let mut options = Options::new()?;
    options.set_auto_shard_policy(policy)?;
    dataset.with_options(&options)
}

/// `vec![vec![..], ..]` shorthand for expected steps.
#[macro_export]
macro_rules! steps {
    ($([$([$($v:expr),*]),*]),* $(,)?) => {
        vec![$(vec![$(vec![$($v as i64),*]),*]),*]
    };
}
