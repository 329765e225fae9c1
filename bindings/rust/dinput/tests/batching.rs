//! padded_batch, bucket_by_sequence_length, window, flat_map, and readers as values.

use std::path::PathBuf;

use dinput::{
    Code, Compression, DType, Dataset, Element, InterleaveOptions, MapOptions, PaddedBatchOptions, Reader,
    RecordWriter, Spec, Tensor, UNKNOWN_DIM,
};

/// Component 0 of every element as int64 values, with each element's shape.
fn rows(dataset: &Dataset) -> Vec<(Vec<i64>, Vec<i64>)> {
    dataset
        .iter()
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let t = e.tensor(0).unwrap();
            (t.to_vec_i64().unwrap(), t.shape().to_vec())
        })
        .collect()
}

fn strings(dataset: &Dataset) -> Vec<String> {
    dataset.iter().unwrap().map(|e| e.unwrap().tensor(0).unwrap().to_strings().unwrap().remove(0)).collect()
}

/// range(lo, hi) with each x made into x copies of x (tf.fill([x], x)).
fn fills(lo: i64, hi: i64) -> Dataset {
    let spec = Spec::of(&[(DType::Int64, &[UNKNOWN_DIM])]).unwrap();
    let options = MapOptions { out_spec: Some(&spec), ..Default::default() };
    Dataset::range(lo, hi, 1)
        .unwrap()
        .map_with(&options, |e| {
            let x = e.tensor(0)?.item::<i64>()?;
            Element::new(&[&Tensor::from_slice(&vec![x; x as usize])?])
        })
        .unwrap()
}

#[test]
fn padded_batch_and_buckets() {
    let a = fills(1, 5);
    let got = rows(&a.padded_batch(2, &PaddedBatchOptions::default()).unwrap());
    assert_eq!(got, [(vec![1, 0, 2, 2], vec![2, 2]), (vec![3, 3, 3, 0, 4, 4, 4, 4], vec![2, 4])]);
    let values = Element::new(&[&Tensor::scalar(-1i64).unwrap()]).unwrap();
    let options =
        PaddedBatchOptions { padded_shapes: Some(vec![vec![5]]), padding_values: Some(values), drop_remainder: true };
    let got = rows(&fills(1, 6).padded_batch(2, &options).unwrap());
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].0, [1, -1, -1, -1, -1, 2, 2, -1, -1, -1]);
    // A padded shape smaller than an element fails the iteration, naming it.
    let small = PaddedBatchOptions { padded_shapes: Some(vec![vec![2]]), ..Default::default() };
    let err = a.padded_batch(2, &small).unwrap().iter().unwrap().find_map(|e| e.err()).unwrap();
    assert_eq!(err.code, Code::InvalidArgument);
    assert!(err.message.contains("component 0 of input element 2"), "{}", err.message);

    let b = fills(1, 7).bucket_by_sequence_length(0, &[3, 5], &[2, 2, 2], false, &PaddedBatchOptions::default());
    let got: Vec<Vec<i64>> = rows(&b.unwrap()).into_iter().map(|r| r.0).collect();
    assert_eq!(got, [vec![1, 0, 2, 2], vec![3, 3, 3, 0, 4, 4, 4, 4], vec![5, 5, 5, 5, 5, 0, 6, 6, 6, 6, 6, 6]]);
    let err = a.bucket_by_sequence_length(0, &[3, 5], &[2], false, &PaddedBatchOptions::default()).unwrap_err();
    assert_eq!(err.code, Code::InvalidArgument);
}

/// The length from a closure: range(8) by x % 3, boundaries [1, 2], two per bucket.
#[test]
fn buckets_by_a_length_closure() {
    let mod3 = |e: &Element| -> dinput::Result<i64> {
        let x = e.tensor(0)?.item::<i64>()?;
        Ok(if x == 100 { -1 } else { x % 3 })
    };
    let b = Dataset::range(0, 8, 1).unwrap().bucket_by_sequence_length_fn(
        mod3,
        &[1, 2],
        &[2, 2, 2],
        false,
        &PaddedBatchOptions::default(),
    );
    let got: Vec<Vec<i64>> = rows(&b.unwrap()).into_iter().map(|r| r.0).collect();
    assert_eq!(got, [vec![0, 3], vec![1, 4], vec![2, 5], vec![6], vec![7]]);
    let bad = Dataset::range(100, 101, 1)
        .unwrap()
        .bucket_by_sequence_length_fn(mod3, &[1], &[1, 1], false, &PaddedBatchOptions::default())
        .unwrap();
    let err = bad.iter().unwrap().find_map(|e| e.err()).unwrap();
    assert_eq!(err.code, Code::InvalidArgument);
    assert!(err.message.contains("gave -1"), "{}", err.message);
}

#[test]
fn window_and_flat_map() {
    let w = Dataset::range(0, 7, 1).unwrap().window(3, 3, 2, false).unwrap();
    let got: Vec<Vec<i64>> = rows(&w).into_iter().map(|r| r.0).collect();
    assert_eq!(got, [vec![0, 2, 4], vec![3, 5], vec![6]]);
    assert_eq!(Dataset::range(0, 7, 1).unwrap().window(3, 0, 1, false).unwrap_err().code, Code::InvalidArgument);

    let spec = Spec::of(&[(DType::Int64, &[])]).unwrap();
    let flat = Dataset::range(1, 4, 1)
        .unwrap()
        .flat_map(&spec, |e| {
            let x = e.tensor(0)?.item::<i64>()?;
            Dataset::range(10 * x, 10 * x + x, 1)
        })
        .unwrap();
    assert_eq!(flat.name(), "flat_map");
    let got: Vec<i64> = rows(&flat).into_iter().flat_map(|r| r.0).collect();
    assert_eq!(got, [10, 20, 21, 30, 31, 32]);
}

#[test]
fn readers_need_no_closure() {
    let dir = std::env::temp_dir().join(format!("dinput-rust-readers-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["a", "b"] {
        let mut writer = RecordWriter::create(&dir.join(format!("{f}.tfrecord")), Compression::Zstd, 0).unwrap();
        for r in 0..2 {
            writer.write(format!("{f}{r}").as_bytes()).unwrap();
        }
        writer.close().unwrap();
        std::fs::write(dir.join(format!("{f}.txt")), format!("{f}x\n{f}y\n")).unwrap();
    }
    let list = |ext: &str| {
        let pattern: PathBuf = dir.join(format!("*.{ext}"));
        Dataset::list_files(&[pattern.to_str().unwrap()], false, None).unwrap()
    };
    let records = Reader::Records { compression: Compression::Zstd, buffer_size: 0 };
    let options = InterleaveOptions { cycle_length: 2, ..Default::default() };
    assert_eq!(strings(&list("tfrecord").interleave_reader(records, &options).unwrap()), ["a0", "b0", "a1", "b1"]);
    assert_eq!(strings(&list("tfrecord").flat_map_reader(records).unwrap()), ["a0", "a1", "b0", "b1"]);
    assert_eq!(strings(&list("txt").interleave_reader(Reader::TextLines, &options).unwrap()), ["ax", "bx", "ay", "by"]);
    let fixed = Reader::FixedLengthRecords { record_bytes: 3, header_bytes: 0, footer_bytes: 0 };
    assert_eq!(strings(&list("txt").flat_map_reader(fixed).unwrap()), ["ax\n", "ay\n", "bx\n", "by\n"]);
    let bad = Reader::FixedLengthRecords { record_bytes: 0, header_bytes: 0, footer_bytes: 0 };
    assert_eq!(list("txt").flat_map_reader(bad).unwrap_err().code, Code::InvalidArgument);
    let err = Dataset::range(0, 3, 1).unwrap().interleave_reader(Reader::TextLines, &options).unwrap_err();
    assert_eq!(err.code, Code::InvalidArgument);
    let _ = std::fs::remove_dir_all(&dir);
}
