//! Parsing serialized tf.train.Examples (Features, parse_example and its relatives).

use dinput::{Code, DType, Dataset, Element, Features, Tensor};

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn field(out: &mut Vec<u8>, number: u64, payload: &[u8]) {
    varint(out, number << 3 | 2);
    varint(out, payload.len() as u64);
    out.extend_from_slice(payload);
}

/// An Example with int64 feature "id" (absent when `id` is None) and float feature "w".
fn record(id: Option<i64>, w: &[f32]) -> Vec<u8> {
    let mut features = Vec::new();
    let mut entry = |key: &str, feature: Vec<u8>| {
        let mut e = Vec::new();
        field(&mut e, 1, key.as_bytes());
        field(&mut e, 2, &feature);
        field(&mut features, 1, &e);
    };
    if let Some(id) = id {
        let (mut packed, mut list, mut feature) = (Vec::new(), Vec::new(), Vec::new());
        varint(&mut packed, id as u64);
        field(&mut list, 1, &packed);
        field(&mut feature, 3, &list);
        entry("id", feature);
    }
    let (mut list, mut feature) = (Vec::new(), Vec::new());
    let bytes: Vec<u8> = w.iter().flat_map(|f| f.to_le_bytes()).collect();
    field(&mut list, 1, &bytes);
    field(&mut feature, 2, &list);
    entry("w", feature);
    let mut out = Vec::new();
    field(&mut out, 1, &features);
    out
}

fn source() -> Dataset {
    let records = [record(Some(3), &[1.0]), record(None, &[]), record(Some(-4), &[2.0, 3.0])];
    let t = Tensor::new_bytes(&[3], &records).unwrap();
    Dataset::from_tensor_slices(&Element::new(&[&t]).unwrap()).unwrap()
}

#[test]
fn parses_batches_with_ragged_components() {
    let default = Tensor::scalar(0i64).unwrap();
    let mut features = Features::new().unwrap();
    features.var_len("w", DType::Float32).unwrap().fixed_len("id", &[], DType::Int64, Some(&default)).unwrap();
    let parsed = source().batch(3, false).unwrap().parse_example(&features, 0).unwrap();
    assert_eq!(parsed.element_spec().unwrap().to_string(), "(int64[None], float32[None], int64[None])");
    // Frozen once used.
    assert_eq!(features.var_len("x", DType::Int64).unwrap_err().code(), Code::FailedPrecondition);
    let mut it = parsed.iter().unwrap();
    let e = it.get_next().unwrap();
    assert_eq!(e.tensor(0).unwrap().as_slice::<i64>().unwrap(), &[3, 0, -4]);
    assert_eq!(e.tensor(1).unwrap().as_slice::<f32>().unwrap(), &[1.0, 2.0, 3.0]);
    assert_eq!(e.tensor(2).unwrap().as_slice::<i64>().unwrap(), &[0, 1, 1, 3]);
}

#[test]
fn single_records_and_errors() {
    let mut features = Features::new().unwrap();
    features.fixed_len("id", &[], DType::Int64, None).unwrap();
    let parsed = source().parse_single_example(&features, 0).unwrap();
    let mut it = parsed.iter().unwrap();
    assert_eq!(it.get_next().unwrap().tensor(0).unwrap().as_slice::<i64>().unwrap(), &[3]);
    let err = it.get_next().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("record 1 of the input") && err.message().contains("'id'"), "{err}");
    assert_eq!(source().parse_example(&features, 0).unwrap_err().code(), Code::InvalidArgument);
    let mut lists = Features::new().unwrap();
    lists.fixed_len_sequence("w", &[], DType::Float32, true, None).unwrap();
    let seq = source().parse_sequence_example(None, Some(&lists), 0).unwrap();
    assert_eq!(seq.element_spec().unwrap().to_string(), "(float32[None])");
    let mut fresh = Features::new().unwrap();
    assert_eq!(fresh.fixed_len("id", &[], DType::Int32, None).unwrap_err().code(), Code::InvalidArgument);
}
