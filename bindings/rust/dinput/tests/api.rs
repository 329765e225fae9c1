//! The rest of the API: tensors, specs, datasets and their transforms, closures, files,
//! threads, DLPack and the build information.

mod common;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use dinput::sys;
use dinput::{
    AutoShardPolicy, Cardinality, Code, Collective, Compression, DType, Dataset, DatasetIterator, DistDataset,
    DistIterator, Element, InputOptions, InterleaveOptions, MapOptions, Optional, Options, PerReplica, RecordWriter,
    Spec, Strategy, Tensor, UNKNOWN_DIM,
};
use dinput::{BatchOptions, ReplicationMode, ShuffleOptions, AUTOTUNE};

fn ints(it: DatasetIterator) -> Vec<i64> {
    it.map(|e| e.unwrap().tensor(0).unwrap().item::<i64>().unwrap()).collect()
}

fn all_ints(dataset: &Dataset) -> Vec<i64> {
    ints(dataset.iter().unwrap())
}

/// A fresh directory under the system temp dir, removed at the end of the test.
struct TempDir(PathBuf);
impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("dinput-rust-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn thread_safety_is_what_the_header_allows() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<Tensor>();
    send_sync::<Element>();
    send_sync::<Spec>();
    send_sync::<Options>();
    send_sync::<Dataset>();
    send_sync::<Optional>();
    send_sync::<Strategy>();
    send_sync::<InputOptions>();
    send_sync::<DistDataset>();
    send_sync::<PerReplica>();
    send_sync::<Collective>();
    send::<DatasetIterator>();
    send::<DistIterator>();
    send::<RecordWriter>();

    // Iterators and writers must NOT be Sync. The method below is ambiguous (a compile error)
    // for a Sync type: it has one impl for every type and one more for Sync types.
    trait AmbiguousIfSync<A> {
        fn check() {}
    }
    impl<T: ?Sized> AmbiguousIfSync<()> for T {}
    #[allow(dead_code)]
    struct IsSync;
    impl<T: ?Sized + Sync> AmbiguousIfSync<IsSync> for T {}
    <DatasetIterator as AmbiguousIfSync<_>>::check();
    <DistIterator as AmbiguousIfSync<_>>::check();
    <RecordWriter as AmbiguousIfSync<_>>::check();
}

/// `use dinput::*` must leave the prelude's names usable: the crate exports no `Iterator`
/// (the dataset iterator is `DatasetIterator`), and its `Result` alias still takes a second
/// parameter. This module would not compile otherwise.
mod glob_import {
    #[allow(unused_imports)]
    use dinput::*;

    pub fn sum_all<I: Iterator<Item = i64>>(values: I) -> i64 {
        values.sum()
    }

    pub fn parse(s: &str) -> Result<i64, std::num::ParseIntError> {
        s.parse()
    }

    pub fn first(dataset: &Dataset) -> Result<i64> {
        let mut it: DatasetIterator = dataset.iter()?;
        it.get_next()?.tensor(0)?.item::<i64>()
    }
}

#[test]
fn glob_import_keeps_std_names() {
    assert_eq!(glob_import::sum_all([1i64, 2, 3].into_iter()), 6);
    assert_eq!(glob_import::parse("42"), Ok(42));
    assert_eq!(glob_import::first(&Dataset::range(7, 9, 1).unwrap()).unwrap(), 7);
}

#[test]
fn tensors() {
    let t = Tensor::new(&[2, 3], &[1.5f64, 2.0, 3.0, 4.0, 5.0, 6.5]).unwrap();
    assert_eq!(
        (t.dtype(), t.rank(), t.shape(), t.num_elements(), t.byte_size()),
        (DType::Float64, 2, &[2i64, 3][..], 6, 48)
    );
    assert_eq!((t.dim(0), t.dim(1), t.dim(2)), (Some(2), Some(3), None));
    assert_eq!(t.as_slice::<f64>().unwrap(), &[1.5, 2.0, 3.0, 4.0, 5.0, 6.5]);
    assert_eq!(t.to_vec::<f64>().unwrap(), vec![1.5, 2.0, 3.0, 4.0, 5.0, 6.5]);
    assert_eq!(t.as_bytes().unwrap().len(), 48);

    let s = Tensor::scalar(7u16).unwrap();
    assert_eq!((s.rank(), s.shape(), s.item::<u16>().unwrap()), (0, &[][..], 7));

    let z = Tensor::zeros(DType::Int32, &[4]).unwrap();
    assert_eq!(z.to_vec::<i32>().unwrap(), vec![0; 4]);

    let b = Tensor::from_bools(&[3], &[true, false, true]).unwrap();
    assert_eq!((b.dtype(), b.to_vec_bool().unwrap()), (DType::Bool, vec![true, false, true]));

    // float16 1.0 = 0x3c00, given as native-endian bytes.
    let h =
        Tensor::from_raw_bytes(DType::Float16, &[2], &[0x3c00u16.to_ne_bytes(), 0u16.to_ne_bytes()].concat()).unwrap();
    assert_eq!((h.dtype(), h.byte_size()), (DType::Float16, 4));
    assert_eq!(h.as_bytes().unwrap()[..2], 0x3c00u16.to_ne_bytes());

    let strings = Tensor::new_bytes(&[2, 2], &["a", "", "ccc", "\u{e9}t\u{e9}"]).unwrap();
    assert_eq!(strings.dtype(), DType::Bytes);
    assert_eq!(strings.byte_size(), 1 + 3 + 5);
    assert_eq!(strings.string(2).unwrap(), b"ccc");
    assert_eq!(strings.to_strings().unwrap(), vec!["a", "", "ccc", "\u{e9}t\u{e9}"]);
    let binary = Tensor::from_strings(&[vec![0u8, 255, 0]]).unwrap();
    assert_eq!(binary.strings().unwrap(), vec![&[0u8, 255, 0][..]]);
    assert_eq!(binary.to_strings().unwrap_err().code, Code::InvalidArgument);

    // Host tensors: to_host is a new handle to the same data.
    assert_eq!(t.device(), dinput::Device::Cpu);
    let host = t.to_host().unwrap();
    assert_eq!(host.as_bytes().unwrap().as_ptr(), t.as_bytes().unwrap().as_ptr());

    // A clone is a second handle to the same data (no copy).
    let c = t.clone();
    drop(t);
    assert_eq!(c.as_slice::<f64>().unwrap()[5], 6.5);
    assert!(format!("{c:?}").contains("6.5"));
}

#[test]
fn dtypes() {
    for dtype in [DType::Bool, DType::Int8, DType::UInt64, DType::BFloat16, DType::Float32, DType::Bytes] {
        assert_eq!(DType::from_name(dtype.name()), dtype);
    }
    assert_eq!((DType::Int64.size(), DType::Float16.size(), DType::Bytes.size()), (8, 2, 0));
    assert_eq!(DType::from_name("complex64"), DType::Invalid);
    assert_eq!(DType::from_raw(99).name(), "invalid");
    assert_eq!(Code::from_raw(77), Some(Code::Unknown));
    assert_eq!(Code::from_raw(0), None);
    assert_eq!(Code::OutOfRange.name(), "OUT_OF_RANGE");
}

#[test]
fn elements_and_borrows() {
    let a = Tensor::from_slice(&[1i32, 2]).unwrap();
    let b = Tensor::from_strings(&["x"]).unwrap();
    let e = Element::new(&[&a, &b]).unwrap();
    drop((a, b)); // the element keeps its own references
    assert_eq!(e.len(), 2);
    assert!(e.get(2).is_none());
    assert_eq!(e.tensor(5).unwrap_err().code, Code::InvalidArgument);
    let first = e.tensor(0).unwrap();
    let owned = first.to_tensor();
    assert_eq!(owned.as_slice::<i32>().unwrap(), &[1, 2]);
    let copy = e.try_clone().unwrap();
    drop(e);
    assert_eq!(copy.iter().map(|t| t.dtype()).collect::<Vec<_>>(), vec![DType::Int32, DType::Bytes]);
    assert_eq!(owned.as_slice::<i32>().unwrap(), &[1, 2]);
}

#[test]
fn clones_are_new_handles_to_the_same_object() {
    let dataset = Dataset::range(0, 4, 1).unwrap();
    let again = dataset.clone();
    drop(dataset);
    assert_eq!(all_ints(&again), vec![0, 1, 2, 3]);

    let t = Tensor::from_slice(&[5i64, 6]).unwrap();
    let e = Element::single(&t).unwrap();
    let e2 = e.clone();
    assert_eq!(e2.tensor(0).unwrap().as_bytes().unwrap().as_ptr(), t.as_bytes().unwrap().as_ptr(), "no copy");
    let value = PerReplica::new(&[&e, &e2]).unwrap();
    let value2 = value.clone();
    drop((e, e2, value));
    assert_eq!(common::replicas(&value2), vec![vec![5, 6], vec![5, 6]]);
    let owned = value2.get(1).unwrap().to_element().unwrap();
    drop(value2);
    assert_eq!(owned.tensor(0).unwrap().to_vec_i64().unwrap(), vec![5, 6]);
}

#[test]
fn tensors_of_an_element_and_a_step_in_one_call() {
    let many: Vec<Tensor> = (0..10i64).map(|i| Tensor::from_slice(&[i, i * 10]).unwrap()).collect();
    let refs: Vec<&Tensor> = many.iter().collect();
    let wide = Element::new(&refs).unwrap(); // more than the first ask's room
    let all = wide.tensors().unwrap();
    assert_eq!(all.len(), 10);
    for (i, t) in all.iter().enumerate() {
        assert_eq!(t.to_vec_i64().unwrap(), vec![i as i64, i as i64 * 10]);
        assert_eq!(t.as_raw(), wide.get(i).unwrap().as_raw());
    }
    let pair = Element::new(&[&many[1], &many[2]]).unwrap();
    let single = Element::single(&many[3]).unwrap();
    let step = PerReplica::new(&[&pair, &pair]).unwrap();
    let flat: Vec<Vec<i64>> = step.tensors().unwrap().iter().map(|t| t.to_vec_i64().unwrap()).collect();
    assert_eq!(flat, vec![vec![1, 10], vec![2, 20], vec![1, 10], vec![2, 20]]);
    let ragged = PerReplica::new(&[&pair, &single]).unwrap();
    let err = ragged.tensors().unwrap_err();
    assert_eq!(err.code, Code::InvalidArgument);
    assert!(err.message.contains("replica 1 has 1 components"), "{}", err.message);
}

#[test]
fn specs() {
    let mut spec = Spec::new().unwrap();
    spec.add(DType::Float32, &[UNKNOWN_DIM, 3]).unwrap().add(DType::Bytes, &[]).unwrap();
    assert_eq!(spec.len(), 2);
    assert_eq!((spec.dtype(0), spec.rank(0), spec.shape(0)), (Some(DType::Float32), Some(2), Some(&[-1i64, 3][..])));
    assert_eq!((spec.dtype(1), spec.rank(1), spec.shape(1)), (Some(DType::Bytes), Some(0), Some(&[][..])));
    assert_eq!((spec.dtype(2), spec.rank(2), spec.shape(2)), (None, None, None));
    assert_eq!(spec.to_string(), "(float32[None, 3], bytes[])");
    assert_eq!(spec.add(DType::Int8, &[-5]).unwrap_err().code, Code::InvalidArgument);

    let batched = Dataset::range(0, 10, 1).unwrap().batch(4, true).unwrap();
    assert_eq!(batched.element_spec().unwrap().components(), vec![(DType::Int64, vec![4])]);
    let it = batched.iter().unwrap();
    assert_eq!(it.element_spec().unwrap().to_string(), "(int64[4])");
    // range(10).batch(2) on 2 replicas: int64 [None] per replica.
    let dist = Strategy::cpu(2).unwrap().distribute_dataset(&common::range_batch(10, 2), None).unwrap();
    assert_eq!(dist.element_spec().unwrap().to_string(), "(int64[None])");
    assert_eq!(dist.iter().unwrap().element_spec().unwrap().to_string(), "(int64[None])");
}

#[test]
fn transforms() {
    let r = Dataset::range(0, 10, 1).unwrap();
    assert_eq!((r.name(), r.cardinality()), ("range", Cardinality::Finite(10)));
    assert_eq!(all_ints(&r.take(3).unwrap()), vec![0, 1, 2]);
    assert_eq!(all_ints(&r.skip(7).unwrap()), vec![7, 8, 9]);
    assert_eq!(all_ints(&r.shard(3, 1).unwrap()), vec![1, 4, 7]);
    assert_eq!(all_ints(&r.take(2).unwrap().repeat(2).unwrap()), vec![0, 1, 0, 1]);
    assert_eq!(r.repeat_forever().unwrap().cardinality(), Cardinality::Infinite);
    assert_eq!(r.filter(|_| Ok(true)).unwrap().cardinality(), Cardinality::Unknown);
    assert_eq!(all_ints(&r.batch(4, false).unwrap().unbatch().unwrap()), (0..10).collect::<Vec<_>>());
    assert_eq!(all_ints(&r.prefetch(dinput::AUTOTUNE).unwrap()), (0..10).collect::<Vec<_>>());

    let mut shuffled = all_ints(&r.shuffle(4, Some(42), true).unwrap());
    let again = all_ints(&r.shuffle(4, Some(42), true).unwrap());
    assert_eq!(shuffled, again, "a seed makes the order deterministic");
    shuffled.sort();
    assert_eq!(shuffled, (0..10).collect::<Vec<_>>());

    let rebatched: Vec<Vec<i64>> = r
        .batch(5, false)
        .unwrap()
        .rebatch(&[3, 0, 2], false)
        .unwrap()
        .iter()
        .unwrap()
        .map(|e| e.unwrap().tensor(0).unwrap().to_vec_i64().unwrap())
        .collect();
    assert_eq!(rebatched, vec![vec![0, 1, 2], vec![], vec![3, 4], vec![5, 6, 7], vec![], vec![8, 9]]);

    let pairs: Vec<(i64, i64)> = r
        .skip(5)
        .unwrap()
        .enumerate(100)
        .unwrap()
        .iter()
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.tensor(0).unwrap().item().unwrap(), e.tensor(1).unwrap().item().unwrap())
        })
        .collect();
    assert_eq!(pairs, vec![(100, 5), (101, 6), (102, 7), (103, 8), (104, 9)]);

    let mut options = Options::new().unwrap();
    assert_eq!(options.auto_shard_policy(), AutoShardPolicy::Auto);
    assert!(!options.skip_corrupt_records());
    options.set_auto_shard_policy(AutoShardPolicy::Off).unwrap().set_skip_corrupt_records(true).unwrap();
    assert_eq!(options.auto_shard_policy(), AutoShardPolicy::Off);
    assert!(options.skip_corrupt_records());
    let shown = format!("{options:?}");
    assert!(shown.contains("skip_corrupt_records: true") && shown.contains("deterministic: true"), "{shown}");
    assert_eq!(all_ints(&r.with_options(&options).unwrap()), (0..10).collect::<Vec<_>>());
    assert!(!options.map_files());
    assert!(!options.allow_nonregular_files());
    // Used by with_options, the options are frozen: a change now is FAILED_PRECONDITION.
    let err = options.set_map_files(true).unwrap_err();
    assert_eq!(err.code, Code::FailedPrecondition);
    assert!(err.message.contains("options already used by dinput_dataset_with_options"), "{err}");
    let mut options = Options::new().unwrap();
    options.set_map_files(true).unwrap().set_allow_nonregular_files(true).unwrap();
    assert!(options.map_files());
    assert!(options.allow_nonregular_files());
    assert_eq!(options.max_record_bytes(), 256 << 20);
    assert_eq!(options.set_max_record_bytes(0).unwrap_err().code, Code::InvalidArgument);
    options.set_max_record_bytes(4).unwrap();
    assert_eq!(options.max_record_bytes(), 4);
}

#[test]
fn batch_and_shuffle_options() {
    let r = Dataset::range(0, 100, 1).unwrap();
    let par = r.batch_with(7, &BatchOptions::new().num_parallel_calls(4).deterministic(false)).unwrap();
    assert_eq!(par.cardinality(), Cardinality::Finite(15));
    assert_eq!(all_ints(&par.unbatch().unwrap()), (0..100).collect::<Vec<i64>>());
    let dropped = r.batch_with(7, &BatchOptions::new().drop_remainder(true).num_parallel_calls(AUTOTUNE)).unwrap();
    assert_eq!(dropped.cardinality(), Cardinality::Finite(14));
    assert_eq!(all_ints(&dropped.unbatch().unwrap()), (0..98).collect::<Vec<i64>>());
    let err = r.batch_with(7, &BatchOptions::new().num_parallel_calls(-5)).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);

    let order = |a: i64, b: i64| all_ints(&r.shuffle_with(100, &ShuffleOptions::new().seeds(a, b)).unwrap());
    assert_eq!(order(3, 9), order(3, 9));
    assert_ne!(order(3, 9), order(3, 10));
    // (s, 0) is the order of the single seed s.
    assert_eq!(order(5, 0), all_ints(&r.shuffle(100, Some(5), true).unwrap()));
    let err = r.shuffle_with(100, &ShuffleOptions::new().seeds(-1, 0)).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);

    let dir = TempDir::new("writer-options");
    let path = dir.0.join("long.rec.zst");
    let options = dinput::RecordWriterOptions::new().compression(Compression::Zstd).level(3).zstd_window_log(27);
    let mut w = RecordWriter::create_with(&path, &options).unwrap();
    w.write(b"abc").unwrap();
    w.close().unwrap();
    let read = Dataset::records(&[&path], Compression::Zstd, 0).unwrap();
    assert_eq!(read.iter().unwrap().count(), 1);
    let bad = dinput::RecordWriterOptions::new().compression(Compression::Zstd).zstd_window_log(40);
    assert_eq!(RecordWriter::create_with(&path, &bad).unwrap_err().code(), Code::InvalidArgument);

    let mut options = Options::new().unwrap();
    assert!(options.deterministic());
    options.set_deterministic(false).unwrap();
    assert!(!options.deterministic());
}

#[test]
fn map_many_closures() {
    let negate = |ins: &[Element]| -> dinput::Result<Vec<Element>> {
        ins.iter().map(|e| Element::single(Tensor::scalar(-e.tensor(0)?.item::<i64>()?)?)).collect()
    };
    let r = Dataset::range(0, 40, 1).unwrap();
    let want = all_ints(&r.map(move |e| negate(std::slice::from_ref(e)).map(|mut v| v.remove(0))).unwrap());
    for parallel in [1, 4, AUTOTUNE] {
        let runs = Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = runs.clone();
        let options = MapOptions::new().num_parallel_calls(parallel);
        let ds = r
            .map_many_with(7, &options, move |ins| {
                seen.lock().unwrap().push(ins.len());
                negate(ins)
            })
            .unwrap();
        assert_eq!(all_ints(&ds), want, "parallel {parallel}");
        let mut lens = runs.lock().unwrap().clone();
        if parallel == 1 {
            assert_eq!(lens, vec![7, 7, 7, 7, 7, 5]);
        }
        lens.sort();
        assert_eq!(lens, vec![5, 7, 7, 7, 7, 7]);
    }
    // Lent inputs kept with to_vec (new references): the identity.
    assert_eq!(all_ints(&r.map_many(4, |ins| Ok(ins.to_vec())).unwrap()), (0..40).collect::<Vec<_>>());
    // An error fails at the first element of its run; a wrong result count and a panic too.
    let failing = r
        .map_many(8, move |ins| {
            if ins.iter().any(|e| e.tensor(0).unwrap().item::<i64>().unwrap() == 20) {
                return Err(dinput::Error::new(Code::FailedPrecondition, "value refused"));
            }
            negate(ins)
        })
        .unwrap();
    let mut it = failing.iter().unwrap();
    for _ in 0..16 {
        it.get_next().unwrap();
    }
    let err = it.get_next().unwrap_err();
    assert_eq!((err.code, err.message.as_str()), (Code::FailedPrecondition, "value refused"));
    let short = r.map_many(4, |ins| Ok(ins[1..].to_vec())).unwrap();
    let err = short.iter().unwrap().get_next().unwrap_err();
    assert_eq!(err.code, Code::InvalidArgument);
    assert!(err.message.contains("returned 3 elements for a run of 4"), "{}", err.message);
    let options = MapOptions::new().num_parallel_calls(2);
    let panics = r.map_many_with(4, &options, |_| -> dinput::Result<Vec<Element>> { panic!("boom") }).unwrap();
    assert!(panics.iter().unwrap().get_next().unwrap_err().message.contains("boom"));
    // max_count 0 is refused.
    assert_eq!(r.map_many(0, |ins| Ok(ins.to_vec())).unwrap_err().code, Code::InvalidArgument);
}

#[test]
fn map_filter_and_generator_closures() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let squares = Dataset::range(0, 6, 1)
        .unwrap()
        .map(move |e| {
            counter.fetch_add(1, Ordering::Relaxed);
            let v = e.tensor(0)?.item::<i64>()?;
            Element::single(Tensor::scalar(v * v)?)
        })
        .unwrap()
        .filter(|e| Ok(e.tensor(0)?.item::<i64>()? % 2 == 0))
        .unwrap();
    assert_eq!(all_ints(&squares), vec![0, 4, 16]);
    assert_eq!(calls.load(Ordering::Relaxed), 6);

    // A parallel map that changes the spec, deterministic: order kept.
    let spec = Spec::of(&[(DType::Bytes, &[])]).unwrap();
    let options = MapOptions::new().out_spec(&spec).num_parallel_calls(4).deterministic(true);
    let names: Vec<String> = Dataset::range(0, 50, 1)
        .unwrap()
        .map_with(&options, |e| {
            Element::single(Tensor::new_bytes(&[], &[format!("n{}", e.tensor(0)?.item::<i64>()?)])?)
        })
        .unwrap()
        .iter()
        .unwrap()
        .map(|e| e.unwrap().tensor(0).unwrap().to_strings().unwrap().remove(0))
        .collect();
    assert_eq!(names, (0..50).map(|i| format!("n{i}")).collect::<Vec<_>>());

    // A generator: one Rust iterator per dataset iterator, each from the start.
    let made = Arc::new(AtomicUsize::new(0));
    let made2 = made.clone();
    let spec = Spec::of(&[(DType::Int64, &[])]).unwrap();
    let fib = Dataset::from_generator(&spec, move || {
        made2.fetch_add(1, Ordering::SeqCst);
        let mut state = (0i64, 1i64);
        std::iter::from_fn(move || {
            let v = state.0;
            state = (state.1, state.0 + state.1);
            Some(Tensor::scalar(v).and_then(Element::single))
        })
        .take(8)
    })
    .unwrap();
    let a = fib.iter().unwrap();
    let b = fib.iter().unwrap();
    assert_eq!(ints(a), vec![0, 1, 1, 2, 3, 5, 8, 13]);
    assert_eq!(ints(b), vec![0, 1, 1, 2, 3, 5, 8, 13]);
    assert_eq!(made.load(Ordering::SeqCst), 2);
    // Elements that do not match the spec fail get_next.
    let wrong = Dataset::from_generator(&spec, || vec![Tensor::scalar(1.0f32).and_then(Element::single)]).unwrap();
    assert_eq!(wrong.iter().unwrap().get_next().unwrap_err().code, Code::InvalidArgument);
    // A generator distributed over 2 replicas: G unknown, so each element is cut evenly.
    let rows = Spec::of(&[(DType::Float32, &[4])]).unwrap();
    let gen = Dataset::from_generator(&rows, || (0..3).map(|i| Element::single(Tensor::from_slice(&[i as f32; 4])?)))
        .unwrap();
    let dist = Strategy::cpu(2).unwrap().distribute_dataset(&gen, None).unwrap();
    let shapes: Vec<Vec<Vec<i64>>> = dist
        .iter()
        .unwrap()
        .map(|s| s.unwrap().iter().map(|e| e.tensor(0).unwrap().shape().to_vec()).collect())
        .collect();
    assert_eq!(shapes, vec![vec![vec![2], vec![2]]; 3]);
}

#[test]
fn datasets_are_shared_between_threads() {
    let dataset = Arc::new(Dataset::range(0, 1000, 1).unwrap().map(|e| e.try_clone()).unwrap());
    let strategy = Arc::new(Strategy::cpu(2).unwrap());
    let dist = Arc::new(strategy.distribute_dataset(&dataset.batch(10, false).unwrap(), None).unwrap());
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let (dataset, dist) = (dataset.clone(), dist.clone());
            std::thread::spawn(move || {
                if i % 2 == 0 {
                    ints(dataset.iter().unwrap()).iter().sum::<i64>()
                } else {
                    common::steps(&dist).iter().flatten().flatten().sum::<i64>()
                }
            })
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), 999 * 1000 / 2);
    }
    // An iterator may move to another thread between calls.
    let mut it = dataset.iter().unwrap();
    let first = it.get_next().unwrap().tensor(0).unwrap().item::<i64>().unwrap();
    let rest = std::thread::spawn(move || ints(it).len()).join().unwrap();
    assert_eq!((first, rest), (0, 999));
}

#[test]
fn input_options_and_plan() {
    let strategy = Strategy::new(&["/cpu:0", "CPU:1"]).unwrap();
    assert_eq!(strategy.devices(), vec!["CPU:0", "CPU:1"]);
    assert_eq!((strategy.num_replicas_in_sync(), strategy.num_local_replicas(), strategy.num_workers()), (2, 2, 1));
    let default = Strategy::default_strategy().unwrap();
    assert_eq!(default.devices(), vec!["CPU:0"]);

    let mut options = InputOptions::new().unwrap();
    assert!(options.fetch_to_device());
    assert_eq!(options.replication_mode(), ReplicationMode::PerWorker);
    assert!(!options.place_dataset_on_device());
    assert_eq!(options.per_replica_buffer_size(), 1);
    options.set_fetch_to_device(false).unwrap().set_per_replica_buffer_size(0).unwrap();
    // A usize past int64 would be negative in C: refused here, naming the argument.
    let err = options.set_per_replica_buffer_size(usize::MAX).unwrap_err();
    assert_eq!(err.code, Code::InvalidArgument);
    assert!(err.message.contains("per_replica_buffer_size"), "{err}");
    assert!(!options.fetch_to_device());
    assert_eq!(options.per_replica_buffer_size(), 0);
    let shown = format!("{options:?}");
    assert!(shown.contains("fetch_to_device: false") && shown.contains("per_replica_buffer_size: 0"), "{shown}");
    let dist = strategy.distribute_dataset(&common::range_batch(6, 4), Some(&options)).unwrap();
    assert_eq!(common::steps(&dist), steps![[[0, 1], [2, 3]], [[4], [5]]]);
    let plan = dist.plan();
    for field in ["\"policy\":\"DATA\"", "\"global_batch_size\":4", "\"num_replicas_in_sync\":2", "\"worker_index\":0"]
    {
        assert!(plan.contains(field), "{field} not in {plan}");
    }
    // Used by distribute_dataset, the options are frozen.
    assert_eq!(options.set_place_dataset_on_device(true).unwrap_err().code, Code::FailedPrecondition);
    // place_dataset_on_device needs PER_REPLICA.
    let mut options = InputOptions::new().unwrap();
    options.set_place_dataset_on_device(true).unwrap().set_replication_mode(ReplicationMode::PerReplica).unwrap();
    assert!(options.place_dataset_on_device());
    assert_eq!(options.replication_mode(), ReplicationMode::PerReplica);
    options.set_replication_mode(ReplicationMode::PerWorker).unwrap();
    assert_eq!(
        strategy.distribute_dataset(&common::range_batch(6, 4), Some(&options)).unwrap_err().code,
        Code::InvalidArgument
    );
}

#[test]
fn records_text_lines_and_interleave() {
    let dir = TempDir::new("files");
    // Two record files written with RecordWriter, read back with their statistics.
    let mut paths = Vec::new();
    for f in 0..2 {
        let path = dir.0.join(format!("part-{f}.tfrecord"));
        let mut writer = RecordWriter::create(&path, Compression::None, 0).unwrap();
        for r in 0..3 {
            writer.write(format!("file{f}-record{r}").as_bytes()).unwrap();
        }
        writer.write(b"").unwrap();
        writer.flush().unwrap();
        writer.close().unwrap();
        assert_eq!(writer.write(b"late").unwrap_err().code, Code::FailedPrecondition);
        paths.push(path);
    }
    // discard() leaves an existing file as it was.
    let mut writer = RecordWriter::create(&paths[0], Compression::Zstd, 0).unwrap();
    writer.write(b"never seen").unwrap();
    writer.discard().unwrap();
    assert_eq!(writer.write(b"late").unwrap_err().code, Code::FailedPrecondition);
    drop(writer);
    let records = Dataset::records(&paths, Compression::None, 0).unwrap();
    // max_record_bytes: file0-record0 (13 bytes) is over a limit of 12.
    let mut small = Options::new().unwrap();
    small.set_max_record_bytes(12).unwrap();
    let err = records.with_options(&small).unwrap().iter().unwrap().get_next().unwrap_err();
    assert_eq!(err.code, Code::DataLoss);
    assert!(err.message.contains("more than the limit of 12"), "{}", err.message);
    let mut it = records.iter().unwrap();
    let mut read = Vec::new();
    for e in &mut it {
        read.push(e.unwrap().tensor(0).unwrap().to_strings().unwrap().remove(0));
    }
    assert_eq!(
        read,
        ["file0-record0", "file0-record1", "file0-record2", "", "file1-record0", "file1-record1", "file1-record2", ""]
    );
    assert_eq!(it.statistic("records").unwrap(), 8);
    assert_eq!(it.statistic("record_bytes").unwrap(), 6 * 13);
    assert_eq!(it.statistic("no such counter").unwrap_err().code, Code::NotFound);

    // A missing file is NOT_FOUND at iteration time, naming the file.
    let missing = Dataset::records(&[dir.0.join("missing")], Compression::None, 0).unwrap();
    let err = missing.iter().unwrap().get_next().unwrap_err();
    assert_eq!(err.code, Code::NotFound);
    assert!(err.message.contains("missing"), "{}", err.message);

    // Text files through list_files + interleave, the usual way to read many files.
    for (name, lines) in [("a.txt", "a0\na1\n"), ("b.txt", "b0\r\nb1")] {
        std::fs::write(dir.0.join(name), lines).unwrap();
    }
    let pattern = dir.0.join("*.txt").to_str().unwrap().to_string();
    let files = Dataset::list_files(&[&pattern], false, None).unwrap();
    assert_eq!(files.name(), "list_files");
    let line_spec = Spec::of(&[(DType::Bytes, &[])]).unwrap();
    let options = InterleaveOptions { cycle_length: 2, ..Default::default() };
    let lines = files
        .interleave(&line_spec, &options, |e| {
            let name = String::from_utf8(e.tensor(0)?.string(0)?.to_vec()).unwrap();
            Dataset::text_lines(&[name])
        })
        .unwrap();
    let read: Vec<String> =
        lines.iter().unwrap().map(|e| e.unwrap().tensor(0).unwrap().to_strings().unwrap().remove(0)).collect();
    assert_eq!(read, ["a0", "b0", "a1", "b1"]);
    let err = Dataset::list_files(&[dir.0.join("*.none").to_str().unwrap()], false, None).unwrap_err();
    assert_eq!(err.code, Code::NotFound);

    // Fixed-length records.
    let fixed = dir.0.join("fixed.bin");
    std::fs::write(&fixed, b"HDRabcdefFT").unwrap();
    let fl = Dataset::fixed_length_records(&[&fixed], 3, 3, 2).unwrap();
    let read: Vec<Vec<u8>> =
        fl.iter().unwrap().map(|e| e.unwrap().tensor(0).unwrap().string(0).unwrap().to_vec()).collect();
    assert_eq!(read, vec![b"abc".to_vec(), b"def".to_vec()]);
}

#[test]
fn dlpack_export_shares_the_data() {
    let t = Tensor::new(&[2, 2], &[1i64, 2, 3, 4]).unwrap();
    let data = t.as_bytes().unwrap().as_ptr();
    let dl = t.to_dlpack().unwrap();
    drop(t); // the export keeps the data alive by itself
    let raw = dl.dl_tensor();
    assert_eq!(dl.shape(), &[2, 2]);
    assert_eq!((raw.dtype.code, raw.dtype.bits, raw.dtype.lanes), (sys::kDLInt, 64, 1));
    assert_eq!(raw.device.device_type, sys::kDLCPU);
    assert_eq!(raw.data as *const u8, data, "no copy");
    // SAFETY: the managed tensor holds 4 int64 values, alive while `dl` is.
    let values =
        unsafe { std::slice::from_raw_parts((raw.data as *const u8).add(raw.byte_offset as usize) as *const i64, 4) };
    assert_eq!(values, &[1, 2, 3, 4]);
    drop(dl); // calls the deleter
}

#[test]
fn version_and_build_info() {
    assert_eq!(dinput::version_number(), sys::DINPUT_VERSION_NUMBER);
    assert_eq!(
        dinput::version(),
        format!("{}.{}.{}", sys::DINPUT_VERSION_MAJOR, sys::DINPUT_VERSION_MINOR, sys::DINPUT_VERSION_PATCH)
    );
    let info = dinput::build_info();
    assert!(info.starts_with('{') && info.contains("\"version\""), "{info}");
}

#[test]
fn collective_abort_releases_the_other_worker() {
    // Worker 1 never iterates; worker 0's step wait is released by the abort, not a timeout.
    let collective = Collective::in_process(2, Some(std::time::Duration::from_secs(60))).unwrap();
    let strategy = Strategy::multi_worker_cpu(&collective, 0, 2).unwrap();
    let dist = strategy.distribute_dataset(&common::range_batch(8, 2), None).unwrap();
    let started = std::time::Instant::now();
    let err = std::thread::scope(|s| {
        let waiter = s.spawn(|| dist.iter().and_then(|mut it| it.get_next()).map(|_| ()));
        std::thread::sleep(std::time::Duration::from_millis(100));
        collective.abort(Code::Aborted, "worker 1 could not build its dataset").unwrap();
        waiter.join().unwrap()
    })
    .unwrap_err();
    assert!(started.elapsed() < std::time::Duration::from_secs(30), "released by the abort");
    assert!(err.message.contains("worker 1 could not build"), "{err}");
}
