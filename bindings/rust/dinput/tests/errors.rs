//! Error paths: argument errors, closures that fail or panic (on the caller's thread and on
//! library threads), dtype mismatches, and the thread-local last error.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::range_batch;
use dinput::{Code, DType, Dataset, Element, Error, MapOptions, Spec, Strategy, Tensor, AUTOTUNE};

fn scalar_spec() -> Spec {
    Spec::of(&[(DType::Int64, &[])]).unwrap()
}

#[test]
fn batch_size_zero_is_invalid_argument() {
    let err = Dataset::range(0, 10, 1).unwrap().batch(0, false).unwrap_err();
    assert_eq!(err.code, Code::InvalidArgument);
    assert!(err.message.contains("batch"), "the message names what is wrong: {}", err.message);
    assert!(err.to_string().starts_with("INVALID_ARGUMENT: "), "{err}");
}

#[test]
fn range_step_zero_is_invalid_argument() {
    let err = Dataset::range(0, 10, 0).unwrap_err();
    assert_eq!(err.code, Code::InvalidArgument);
    assert!(!err.message.is_empty());
}

#[test]
fn counts_past_int64_are_invalid_argument_naming_the_argument() {
    // In C these would wrap to -1, which means "all" / "forever" / AUTOTUNE there.
    let ds = Dataset::range(0, 4, 1).unwrap();
    let cases: Vec<(&str, Result<Dataset, Error>)> = vec![
        ("batch_size", ds.batch(usize::MAX, false)),
        ("take count", ds.take(usize::MAX)),
        ("skip count", ds.skip(usize::MAX)),
        ("repeat count", ds.repeat(usize::MAX)),
        ("num_shards", ds.shard(usize::MAX, 0)),
        ("buffer_size", ds.shuffle(usize::MAX, Some(1), false)),
        ("rebatch size", ds.batch(2, false).unwrap().rebatch(&[1, usize::MAX], false)),
    ];
    for (what, result) in cases {
        let err = result.unwrap_err();
        assert_eq!(err.code, Code::InvalidArgument, "{what}");
        assert!(err.message.contains(what), "{what}: {}", err.message);
    }
    // The ordinary counts work as before.
    let it = ds.repeat(2).unwrap().skip(1).unwrap().take(5).unwrap().shard(2, 1).unwrap().iter().unwrap();
    let values: Vec<i64> = it.map(|e| e.unwrap().tensor(0).unwrap().item::<i64>().unwrap()).collect();
    assert_eq!(values, vec![2, 0]);
}

#[test]
fn a_cpu_strategy_of_no_replicas_is_invalid_argument() {
    // usize::MAX must fail at once, without first naming 2^64 devices.
    for n in [0, 4097, usize::MAX] {
        let err = Strategy::cpu(n).unwrap_err();
        assert_eq!(err.code, Code::InvalidArgument);
        assert!(err.message.contains(&format!("num_replicas {n}")), "{}", err.message);
    }
    assert_eq!(Strategy::cpu(3).unwrap().num_local_replicas(), 3);
}

#[test]
fn distributing_scalars_is_invalid_argument() {
    let err = Strategy::cpu(2).unwrap().distribute_dataset(&Dataset::range(0, 5, 1).unwrap(), None).unwrap_err();
    assert_eq!(err.code, Code::InvalidArgument);
    assert!(err.message.contains("rank >= 1"), "{}", err.message);
}

#[test]
fn map_closure_panic_fails_get_next_with_the_panic_message() {
    let dataset = Dataset::range(0, 10, 1)
        .unwrap()
        .map(|e| {
            let v = e.tensor(0)?.item::<i64>()?;
            if v == 3 {
                panic!("boom at element {v}");
            }
            Element::single(Tensor::scalar(v * 10)?)
        })
        .unwrap();
    let mut it = dataset.iter().unwrap();
    for expected in [0, 10, 20] {
        assert_eq!(it.get_next().unwrap().tensor(0).unwrap().item::<i64>().unwrap(), expected);
    }
    let err = it.get_next().unwrap_err();
    assert_eq!(err.code, Code::Unknown);
    assert!(err.message.contains("boom at element 3"), "{}", err.message);
    assert!(err.message.contains("map closure panicked"), "{}", err.message);
    // The iterator is finished and repeats the error; the process is alive, and the dataset
    // can be iterated again (a new iterator restarts it).
    assert_eq!(it.get_next().unwrap_err().code, Code::Unknown);
    let again: Vec<_> =
        dataset.iter().unwrap().take(2).map(|e| e.unwrap().tensor(0).unwrap().item::<i64>().unwrap()).collect();
    assert_eq!(again, vec![0, 10]);
}

#[test]
fn parallel_map_panic_on_library_threads() {
    let options = MapOptions { num_parallel_calls: 4, ..Default::default() };
    let dataset = Dataset::range(0, 100, 1)
        .unwrap()
        .map_with(&options, |e| {
            if e.tensor(0)?.item::<i64>()? == 57 {
                panic!("parallel boom");
            }
            e.try_clone()
        })
        .unwrap();
    let items: Vec<_> = dataset.iter().unwrap().collect();
    // Items before 57 arrive in order, then exactly one error, then the end (fused).
    let (ok, err): (Vec<_>, Vec<_>) = items.into_iter().partition(|r| r.is_ok());
    assert_eq!(ok.len(), 57);
    assert_eq!(err.len(), 1);
    let err = err.into_iter().next().unwrap().unwrap_err();
    assert!(err.message.contains("parallel boom"), "{}", err.message);
}

#[test]
fn map_closure_error_keeps_its_code_and_message() {
    let dataset = Dataset::range(0, 3, 1)
        .unwrap()
        .map(|_| Err(Error::new(Code::PermissionDenied, "not allowed by the test")))
        .unwrap()
        .prefetch(2) // the map runs on the prefetch thread: the message must still arrive
        .unwrap();
    let err = dataset.iter().unwrap().get_next().unwrap_err();
    assert_eq!(err.code, Code::PermissionDenied);
    assert!(err.message.contains("not allowed by the test"), "{}", err.message);
}

#[test]
fn map_closure_out_of_range_is_an_error_not_the_end() {
    // What an exhausted inner iterator returns: passed on by a map closure, it must stop the
    // outer `for` loop with an `Err`, not end it cleanly and drop the rest of the epoch.
    let dataset = Dataset::range(0, 10, 1)
        .unwrap()
        .map(|e| {
            let v = e.tensor(0)?.item::<i64>()?;
            if v == 4 {
                return Err(Error::new(Code::OutOfRange, "the inner iterator ran out"));
            }
            Element::single(Tensor::scalar(v)?)
        })
        .unwrap();
    let items: Vec<_> = dataset.iter().unwrap().collect();
    assert_eq!(items.len(), 5, "four elements, then the error (not a clean end)");
    let err = items[4].as_ref().unwrap_err();
    assert_eq!(err.code, Code::InvalidArgument);
    assert!(err.message.contains("map callback returned OUT_OF_RANGE"), "{}", err.message);
    assert!(err.message.contains("the inner iterator ran out"), "{}", err.message);
}

#[test]
fn map_result_must_match_out_spec() {
    let spec = Spec::of(&[(DType::Float32, &[])]).unwrap();
    let options = MapOptions { out_spec: Some(&spec), ..Default::default() };
    let dataset = Dataset::range(0, 3, 1).unwrap().map_with(&options, |e| e.try_clone()).unwrap();
    let err = dataset.iter().unwrap().get_next().unwrap_err();
    assert_eq!(err.code, Code::InvalidArgument, "{err}");
}

#[test]
fn filter_and_generator_failures() {
    let filtered = Dataset::range(0, 5, 1).unwrap().filter(|_| panic!("filter boom")).unwrap();
    let err = filtered.iter().unwrap().get_next().unwrap_err();
    assert!(err.message.contains("filter boom"), "{}", err.message);

    let generator = Dataset::from_generator(&scalar_spec(), || {
        (0..5).map(|i| {
            if i < 2 {
                Element::single(Tensor::scalar(i as i64)?)
            } else {
                Err(Error::new(Code::DataLoss, "source broke"))
            }
        })
    })
    .unwrap();
    let items: Vec<_> = generator.iter().unwrap().collect();
    assert_eq!(items.len(), 3);
    let err = items[2].as_ref().unwrap_err();
    assert_eq!((err.code, err.message.contains("source broke")), (Code::DataLoss, true), "{err}");

    let panicking = Dataset::from_generator(&scalar_spec(), || -> std::vec::IntoIter<dinput::Result<Element>> {
        panic!("factory boom")
    })
    .unwrap();
    let err = panicking.iter().and_then(|mut it| it.get_next()).unwrap_err();
    assert!(err.message.contains("factory boom"), "{}", err.message);
}

#[test]
fn run_and_value_fn_and_dataset_fn_panics() {
    let strategy = Strategy::cpu(3).unwrap();
    // Replicas 1 and 2 run on library threads.
    let err = strategy
        .run(None, |ctx, _| {
            if ctx.replica_id_in_sync_group() == 2 {
                panic!("replica 2 failed");
            }
            Element::single(Tensor::scalar(1i32)?)
        })
        .unwrap_err();
    assert!(err.message.contains("replica 2 failed"), "{}", err.message);

    let err =
        strategy.distribute_values_from_function(|_| -> dinput::Result<Element> { panic!("value boom") }).unwrap_err();
    assert!(err.message.contains("value boom"), "{}", err.message);

    let err = strategy
        .distribute_datasets_from_function(None, |_| -> dinput::Result<Dataset> { panic!("dataset_fn boom") })
        .unwrap_err();
    assert!(err.message.contains("dataset_fn boom"), "{}", err.message);

    let err = strategy
        .distribute_datasets_from_function(None, |_| Err(Error::new(Code::NotFound, "no such data")))
        .unwrap_err();
    assert_eq!(err.code, Code::NotFound);
    assert!(err.message.contains("no such data"), "{}", err.message);
}

#[test]
fn wrong_dtype_reads_are_errors() {
    let t = Tensor::from_slice(&[1i64, 2, 3]).unwrap();
    let err = t.as_slice::<f32>().unwrap_err();
    assert_eq!(err.code, Code::InvalidArgument);
    assert!(err.message.contains("float32") && err.message.contains("int64"), "{}", err.message);
    // to_vec is checked by the library itself, whose message names both dtypes.
    let err = t.to_vec::<f64>().unwrap_err();
    assert_eq!(err.code, Code::InvalidArgument);
    assert!(err.message.contains("float64") && err.message.contains("int64"), "{}", err.message);
    assert_eq!(t.to_vec_bool().unwrap_err().code, Code::InvalidArgument);
    assert_eq!(t.strings().unwrap_err().code, Code::InvalidArgument);
    assert_eq!(t.string(0).unwrap_err().code, Code::InvalidArgument);
    assert_eq!(t.item::<i64>().unwrap_err().code, Code::InvalidArgument); // 3 values, not 1
    let bytes = Tensor::from_strings(&["a"]).unwrap();
    assert_eq!(bytes.as_slice::<u8>().unwrap_err().code, Code::InvalidArgument);
    assert_eq!(bytes.as_bytes().unwrap_err().code, Code::InvalidArgument);
    assert_eq!(bytes.to_dlpack().unwrap_err().code, Code::InvalidArgument);
}

#[test]
fn bad_tensor_arguments() {
    assert_eq!(Tensor::new(&[2, 2], &[1i32, 2, 3]).unwrap_err().code, Code::InvalidArgument);
    assert_eq!(Tensor::new::<i32>(&[3], &[]).unwrap_err().code, Code::InvalidArgument); // not zeros
    assert_eq!(Tensor::new(&[-1], &[1i32]).unwrap_err().code, Code::InvalidArgument);
    assert_eq!(Tensor::zeros(DType::Bytes, &[1]).unwrap_err().code, Code::InvalidArgument);
    assert_eq!(Tensor::new_bytes(&[2], &["only one"]).unwrap_err().code, Code::InvalidArgument);
    assert_eq!(Strategy::new(&["CPU:0", "CPU:0"]).unwrap_err().code, Code::InvalidArgument);
    assert_eq!(Strategy::new(&["CPU:\0"]).unwrap_err().code, Code::InvalidArgument);
}

#[test]
fn empty_optional_has_no_value() {
    let mut it = Dataset::range(0, 1, 1).unwrap().iter().unwrap();
    let first = it.get_next_as_optional().unwrap();
    assert!(first.has_value());
    assert_eq!(first.per_replica().unwrap_err().code, Code::InvalidArgument); // holds an element
    let end = it.get_next_as_optional().unwrap();
    assert!(!end.has_value());
    assert_eq!(end.value().unwrap_err().code, Code::InvalidArgument);
    assert!(end.into_value().unwrap().is_none());
}

#[test]
fn errors_stay_on_their_thread() {
    // Each thread fails differently at once; each must read its own message.
    std::thread::scope(|s| {
        for i in 0..8 {
            s.spawn(move || {
                for _ in 0..50 {
                    if i % 2 == 0 {
                        let err = Dataset::range(0, 1, 1).unwrap().batch(0, false).unwrap_err();
                        assert!(err.message.contains("batch"), "{}", err.message);
                    } else {
                        let err = Dataset::range(0, 1, 0).unwrap_err();
                        assert!(!err.message.contains("batch"), "{}", err.message);
                    }
                }
            });
        }
    });
}

#[test]
fn last_error_survives_closures_on_this_thread() {
    // A sequential map runs its closure on the caller's thread; a failing call inside it
    // must not replace the caller's unread last error.
    let dataset = Dataset::range(0, 3, 1)
        .unwrap()
        .map(|e| {
            let _ = Dataset::range(0, 1, 0); // fails inside the closure
            Ok(e.clone())
        })
        .unwrap();
    let mut it = dataset.iter().unwrap();
    let _ = Dataset::range(0, 10, 1).unwrap().batch(0, false); // the caller's failure
    let before = dinput::last_error().expect("the failing call left its error");
    it.get_next().unwrap();
    let after = dinput::last_error().expect("still there after a successful get_next");
    assert_eq!(after.code, before.code);
    assert_eq!(after.message, before.message);
    assert!(after.message.contains("batch"), "{}", after.message);
}

#[test]
fn last_error_reports_and_clears() {
    dinput::clear_last_error();
    assert!(dinput::last_error().is_none());
    let _ = Dataset::range(0, 1, 0);
    let last = dinput::last_error().expect("the failing call left its error");
    assert_eq!(last.code, Code::InvalidArgument);
    dinput::clear_last_error();
    assert!(dinput::last_error().is_none());
}

/// A closure that counts how often it is dropped.
struct DropCounter(Arc<AtomicUsize>);
impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn closures_are_freed_once_also_when_the_constructor_fails() {
    let drops = Arc::new(AtomicUsize::new(0));
    let guard = DropCounter(drops.clone());
    // An invalid num_parallel_calls is refused (by the map options): the closure is still freed.
    let options = MapOptions { num_parallel_calls: -7, ..Default::default() };
    let err = Dataset::range(0, 3, 1)
        .unwrap()
        .map_with(&options, move |e| {
            let _ = &guard;
            e.try_clone()
        })
        .unwrap_err();
    assert_eq!(err.code, Code::InvalidArgument, "{err}");
    assert_eq!(drops.load(Ordering::SeqCst), 1);

    // A working map keeps its closure while the dataset or an iterator lives.
    let guard = DropCounter(drops.clone());
    let options = MapOptions { num_parallel_calls: AUTOTUNE, ..Default::default() };
    let dataset = range_batch(10, 2)
        .map_with(&options, move |e| {
            let _ = &guard;
            e.try_clone()
        })
        .unwrap();
    let mut it = dataset.iter().unwrap();
    drop(dataset);
    assert_eq!(drops.load(Ordering::SeqCst), 1, "the iterator keeps the dataset and its closure");
    assert_eq!(it.get_next().unwrap().tensor(0).unwrap().to_vec_i64().unwrap(), vec![0, 1]);
    drop(it);
    assert_eq!(drops.load(Ordering::SeqCst), 2);
}
