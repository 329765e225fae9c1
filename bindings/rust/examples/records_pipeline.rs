//! The README's record-file pipeline: list_files → interleave(records) → shuffle → batch →
//! distribute over two CPU replicas → iterate, printing how many records each replica got.
//!
//! Usage: cargo run --offline --example records_pipeline [-- 'DIR/train-*.tfrecord']
//! Without a pattern it reads demo files that it writes into a temporary directory.
//! `cargo test` runs this file's test (the example is built with `test = true`), which also
//! fails when the README's copy of `read_records` differs from the one here.
use dinput::RecordWriter; // for the demo files

use dinput::{Compression, DType, Dataset, InterleaveOptions, Spec, Strategy};

/// Reads the record files matching `pattern` through list_files → interleave(records) →
/// shuffle → batch → distribute over two CPU replicas; returns the records each replica got.
fn read_records(pattern: &str) -> dinput::Result<Vec<usize>> {
    let files = Dataset::list_files(&[pattern], true, None)?; // shuffled names, each epoch
    let spec = Spec::of(&[(DType::Bytes, &[])])?; // what each file's dataset yields
    let options = InterleaveOptions { cycle_length: 4, num_parallel_calls: 4, ..Default::default() };
    let records = files.interleave(&spec, &options, |name| {
        let path = String::from_utf8_lossy(name.tensor(0)?.string(0)?).into_owned();
        Dataset::records(&[path], Compression::None, 0)
    })?;
    let batches = records.shuffle(10_000, None, true)?.batch(256, false)?; // 128 per replica
    let strategy = Strategy::new(&["CPU:0", "CPU:1"])?;
    let mut counts = vec![0; strategy.num_local_replicas()];
    for step in strategy.distribute_dataset(&batches, None)?.iter()? {
        let step = step?; // a PerReplica value: one batch per replica
        for (replica, batch) in step.iter().enumerate() {
            let payloads = batch.tensor(0)?.strings()?; // Vec<&[u8]>, borrowed, not copied
            counts[replica] += payloads.len();
        }
    }
    Ok(counts)
}

/// Writes `files` record files of `per_file` records each into `dir`; returns their pattern.
fn write_demo_files(dir: &std::path::Path, files: usize, per_file: usize) -> dinput::Result<String> {
    for f in 0..files {
        let mut writer = RecordWriter::create(dir.join(format!("train-{f}.tfrecord")), Compression::None, 0)?;
        for r in 0..per_file {
            writer.write(format!("file {f} record {r}").as_bytes())?;
        }
        writer.close()?;
    }
    Ok(dir.join("train-*.tfrecord").to_string_lossy().into_owned())
}

/// A scratch directory of this process, removed on drop.
struct ScratchDir(std::path::PathBuf);

impl ScratchDir {
    fn new(tag: &str) -> ScratchDir {
        let dir = std::env::temp_dir().join(format!("dinput-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("creating a scratch directory");
        ScratchDir(dir)
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg_attr(test, allow(dead_code))]
fn main() -> dinput::Result<()> {
    let scratch;
    let pattern = match std::env::args().nth(1) {
        Some(pattern) => pattern,
        None => {
            scratch = ScratchDir::new("example");
            write_demo_files(&scratch.0, 3, 300)?
        }
    };
    println!("records per replica: {:?}", read_records(&pattern)?);
    Ok(())
}

#[test]
fn reads_demo_files_as_the_readme_shows() {
    let scratch = ScratchDir::new("example-test");
    let pattern = write_demo_files(&scratch.0, 3, 300).unwrap();
    // 900 records: three global batches of 256 (128 per replica), then one of 132, which
    // fills replica 0's 128 rows first and leaves 4 to replica 1 (as tf.distribute does).
    assert_eq!(read_records(&pattern).unwrap(), [512, 388]);

    let readme = include_str!("../README.md");
    let shown = readme
        .split("```rust\n")
        .skip(1)
        .filter_map(|block| block.split("\n```").next())
        .find(|block| block.contains("fn read_records("))
        .expect("README.md has no ```rust block with fn read_records(");
    assert!(
        include_str!("records_pipeline.rs").contains(shown),
        "README.md's read_records is not the one examples/records_pipeline.rs runs; README shows:\n{shown}"
    );
}
