//! Cancelling an iterator from another thread, and dropping one whose upstream is slow.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use dinput::{Canceller, Code, Collective, Dataset, DistDataset, DistIterator, MapOptions, Strategy};

#[test]
fn cancellers_are_send_and_sync() {
    fn send_sync<T: Send + Sync + Clone>() {}
    send_sync::<Canceller>();
}

#[test]
fn cancel_fails_a_blocked_get_next_and_drop_does_not_wait() {
    let release = Arc::new(AtomicBool::new(false));
    let dropped = Arc::new(AtomicUsize::new(0));
    struct CountDrop(Arc<AtomicUsize>);
    impl Drop for CountDrop {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let (gate, guard) = (release.clone(), CountDrop(dropped.clone()));
    // A map function that blocks (as one that sleeps for seconds) until the test releases it.
    let mapped = Dataset::range(0, 100, 1)
        .unwrap()
        .map_with(&MapOptions { num_parallel_calls: 2, ..MapOptions::default() }, move |e| {
            let _keep = &guard;
            while !gate.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(1));
            }
            Ok(e.clone())
        })
        .unwrap();
    let mut it = mapped.iter().unwrap();
    drop(mapped);
    let canceller = it.canceller();
    let consumer = std::thread::spawn(move || {
        let result = it.get_next();
        (result.map(|_| ()), Instant::now(), it)
    });
    std::thread::sleep(Duration::from_millis(50));
    let cancelled_at = Instant::now();
    canceller.cancel().unwrap();
    let (result, returned_at, mut it) = consumer.join().unwrap();
    let err = result.unwrap_err();
    assert_eq!(err.code, Code::Cancelled, "{err}");
    assert!(err.message.contains("cancelled"), "{err}");
    assert!(returned_at - cancelled_at < Duration::from_millis(500), "{:?}", returned_at - cancelled_at);
    assert_eq!(it.get_next().unwrap_err().code, Code::Cancelled);
    assert!(it.next().unwrap().is_err()); // the Iterator impl yields the error once
    canceller.cancel().unwrap(); // idempotent
    drop(canceller);
    // The map function is still blocked: dropping must not wait for it.
    let start = Instant::now();
    drop(it);
    assert!(start.elapsed() < Duration::from_millis(500), "{:?}", start.elapsed());
    assert_eq!(dropped.load(Ordering::SeqCst), 0);
    release.store(true, Ordering::SeqCst);
    let deadline = Instant::now() + Duration::from_secs(10);
    while dropped.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(dropped.load(Ordering::SeqCst), 1);
}

/// Two in-process workers with one CPU replica each over range(n).batch(2), joined by a
/// collective with `timeout`: the distributed datasets (kept alive by the caller) and each
/// worker's iterator of the first epoch.
fn two_workers(timeout: Duration, n: i64) -> (Vec<DistDataset>, DistIterator, DistIterator) {
    let collective = Collective::in_process(2, Some(timeout)).unwrap();
    let batched = Dataset::range(0, n, 1).unwrap().batch(2, false).unwrap();
    let datasets: Vec<DistDataset> = (0..2)
        .map(|w| {
            let strategy = Strategy::multi_worker(&collective, w, &["CPU:0"]).unwrap();
            strategy.distribute_dataset(&batched, None).unwrap()
        })
        .collect();
    let worker0 = datasets[0].iter().unwrap();
    let worker1 = datasets[1].iter().unwrap();
    (datasets, worker0, worker1)
}

#[test]
fn cancel_on_one_worker_fails_the_others_promptly() {
    let (_datasets, worker0, mut worker1) = two_workers(Duration::from_secs(60), 16);
    // Worker 1 waits in its first step for worker 0, which cancels instead.
    let waiting = std::thread::spawn(move || (worker1.get_next().map(|_| ()), Instant::now()));
    std::thread::sleep(Duration::from_millis(50));
    let cancelled_at = Instant::now();
    worker0.canceller().cancel().unwrap();
    let (result, returned_at) = waiting.join().unwrap();
    let err = result.unwrap_err();
    assert_eq!(err.code, Code::Cancelled, "{err}");
    assert!(err.message.contains("worker 0 cancelled"), "{err}");
    assert!(returned_at - cancelled_at < Duration::from_millis(500));
}

#[test]
fn dropping_a_dist_iterator_cancels_it_while_a_canceller_lives() {
    // Without the iterator's own Drop, the C handle (and so the cancel of the other workers)
    // would only go with the last Canceller, and worker 1 would wait out this timeout.
    let (_datasets, mut worker0, mut worker1) = two_workers(Duration::from_secs(30), 64);
    let other = std::thread::spawn(move || {
        let mut steps = 0;
        loop {
            match worker1.get_next() {
                Ok(_) => steps += 1,
                Err(e) => return (steps, e, Instant::now()),
            }
        }
    });
    for _ in 0..2 {
        worker0.get_next().unwrap();
    }
    let canceller = worker0.canceller();
    std::thread::sleep(Duration::from_millis(50)); // worker 1 now waits in step 3
    let dropped_at = Instant::now();
    drop(worker0);
    let (steps, err, returned_at) = other.join().unwrap();
    assert_eq!(steps, 2);
    assert_eq!(err.code, Code::Cancelled, "{err}");
    assert!(returned_at - dropped_at < Duration::from_millis(500), "{:?}", returned_at - dropped_at);
    canceller.cancel().unwrap(); // still callable, and idempotent
}
