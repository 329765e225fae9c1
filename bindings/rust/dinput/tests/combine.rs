//! zip, concatenate, sample_from_datasets, choose_from_datasets, cache and ignore_errors.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use dinput::{Cardinality, Code, Dataset, Element, Error, Tensor};

fn ints(dataset: &Dataset) -> Vec<i64> {
    dataset.iter().unwrap().map(|e| e.unwrap().tensor(0).unwrap().item::<i64>().unwrap()).collect()
}

#[test]
fn zip_and_concatenate() {
    let (a, b) = (Dataset::range(1, 4, 1).unwrap(), Dataset::range(4, 7, 1).unwrap());
    let z = Dataset::zip(&[&a, &b]).unwrap();
    assert_eq!(z.cardinality(), Cardinality::Finite(3));
    let first = z.iter().unwrap().next().unwrap().unwrap();
    assert_eq!(first.len(), 2);
    assert_eq!(first.tensor(1).unwrap().item::<i64>().unwrap(), 4);
    assert_eq!(ints(&a.concatenate(&b).unwrap()), vec![1, 2, 3, 4, 5, 6]);
    assert_eq!(Dataset::zip(&[]).unwrap_err().code(), Code::InvalidArgument);
}

#[test]
fn sample_and_choose() {
    let (a, b) = (Dataset::range(0, 20, 1).unwrap(), Dataset::range(100, 120, 1).unwrap());
    let one = ints(&Dataset::sample_from_datasets(&[&a, &b], Some(&[1.0, 1.0]), Some(5), false).unwrap());
    let two = ints(&Dataset::sample_from_datasets(&[&a, &b], None, Some(5), false).unwrap());
    assert_eq!(one.len(), 40);
    assert_eq!(one, two);
    let err = Dataset::sample_from_datasets(&[&a, &b], Some(&[1.0, -1.0]), Some(5), false).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    let picks = Tensor::from_slice(&[1i64, 0, 1]).unwrap();
    let selector = Dataset::from_tensor_slices(&Element::new(&[&picks]).unwrap()).unwrap();
    assert_eq!(ints(&Dataset::choose_from_datasets(&[&a, &b], &selector, true).unwrap()), vec![100, 0, 101]);
}

#[test]
fn cache_and_ignore_errors() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let mapped = Dataset::range(0, 7, 1)
        .unwrap()
        .map(move |e: &Element| {
            counter.fetch_add(1, Ordering::SeqCst);
            let v = e.tensor(0)?.item::<i64>()?;
            if v % 3 == 0 {
                return Err(Error::new(Code::InvalidArgument, "a multiple of 3"));
            }
            e.try_clone()
        })
        .unwrap();
    let ignoring = mapped.ignore_errors(false).unwrap();
    let mut it = ignoring.iter().unwrap();
    let n = it.by_ref().map(|e| e.unwrap()).count();
    assert_eq!(n, 4);
    assert_eq!(it.statistic("errors_ignored").unwrap(), 3);

    let dir = std::env::temp_dir().join(format!("dinput-rust-combine-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("cache");
    calls.store(0, Ordering::SeqCst);
    let first = ints(&ignoring.cache(Some(&file)).unwrap());
    assert_eq!(calls.load(Ordering::SeqCst), 7);
    calls.store(0, Ordering::SeqCst);
    assert_eq!(ints(&ignoring.cache(Some(&file)).unwrap()), first);
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    let memory = ignoring.cache(None).unwrap().repeat(2).unwrap();
    calls.store(0, Ordering::SeqCst);
    assert_eq!(ints(&memory).len(), 8);
    assert_eq!(calls.load(Ordering::SeqCst), 7);
    std::fs::remove_dir_all(&dir).unwrap();
}
