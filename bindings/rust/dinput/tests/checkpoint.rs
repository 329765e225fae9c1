//! Saving an iterator's state and continuing from it (save_state, iter_from_state).

use dinput::{Code, Dataset, MapOptions};

/// range(30).shuffle(6, fixed seed).batch(4): a partial last batch and a buffer to rebuild.
fn pipeline(buffer: usize) -> Dataset {
    Dataset::range(0, 30, 1).unwrap().shuffle(buffer, Some(3), true).unwrap().batch(4, false).unwrap()
}

fn batches(it: &mut dinput::DatasetIterator, limit: usize) -> Vec<Vec<i64>> {
    let mut out = Vec::new();
    while out.len() < limit {
        match it.get_next() {
            Ok(e) => out.push(e.tensor(0).unwrap().as_slice::<i64>().unwrap().to_vec()),
            Err(e) if e.code() == Code::OutOfRange => break,
            Err(e) => panic!("{e}"),
        }
    }
    out
}

#[test]
fn resumes_at_every_step() {
    let want = batches(&mut pipeline(6).iter().unwrap(), usize::MAX);
    assert_eq!(want.len(), 8);
    for steps in 0..=want.len() {
        let mut it = pipeline(6).iter().unwrap();
        let mut got = batches(&mut it, steps);
        let state: Vec<u8> = it.save_state().unwrap();
        drop(it);
        got.extend(batches(&mut pipeline(6).iter_from_state(&state).unwrap(), usize::MAX));
        assert_eq!(got, want, "saved after {steps} batches");
    }
}

#[test]
fn errors() {
    let ds = pipeline(6);
    let mut it = ds.iter().unwrap();
    batches(&mut it, 1);
    let state = it.save_state().unwrap();
    let err = pipeline(60).iter_from_state(&state).unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition);
    assert!(err.message().contains("shuffle(buffer_size=6"), "{}", err.message());
    assert_eq!(ds.iter_from_state(&state[..state.len() - 1]).unwrap_err().code(), Code::DataLoss);
    let mut flipped = state.clone();
    flipped[30] ^= 0x10;
    assert_eq!(ds.iter_from_state(&flipped).unwrap_err().code(), Code::DataLoss);
    assert_eq!(ds.iter_from_state(&[]).unwrap_err().code(), Code::DataLoss);
    // Parallel results as they finish: an order no state can reproduce.
    let options = MapOptions { num_parallel_calls: 2, deterministic: Some(false), ..MapOptions::default() };
    let unordered = Dataset::range(0, 3, 1).unwrap().map_with(&options, |e| Ok(e.clone())).unwrap();
    let err = unordered.iter().unwrap().save_state().unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented);
    assert!(err.message().contains("deterministic=false"), "{}", err.message());
}

fn steps(it: &mut dinput::DistIterator, limit: usize) -> Vec<Vec<Vec<i64>>> {
    let mut out = Vec::new();
    while out.len() < limit {
        match it.get_next() {
            Ok(step) => out.push(
                (0..step.len())
                    .map(|r| step.get(r).unwrap().tensor(0).unwrap().as_slice::<i64>().unwrap().to_vec())
                    .collect(),
            ),
            Err(e) if e.code() == Code::OutOfRange => break,
            Err(e) => panic!("{e}"),
        }
    }
    out
}

#[test]
fn distributed_iterator_resumes_at_every_step() {
    let strategy = dinput::Strategy::cpu(2).unwrap();
    for at in 0..=9 {
        let mut it = strategy.distribute_dataset(&pipeline(6), None).unwrap().iter().unwrap();
        steps(&mut it, at);
        let state: Vec<u8> = it.save_state().unwrap();
        let want = steps(&mut it, usize::MAX);
        let again = strategy.distribute_dataset(&pipeline(6), None).unwrap();
        assert_eq!(steps(&mut again.iter_from_state(&state).unwrap(), usize::MAX), want, "saved after {at} steps");
        if at == 2 {
            let other = strategy.distribute_dataset(&pipeline(60), None).unwrap();
            let err = other.iter_from_state(&state).unwrap_err();
            assert_eq!(err.code(), Code::FailedPrecondition, "{err}");
            assert_eq!(again.iter_from_state(&state[..state.len() - 1]).unwrap_err().code(), Code::DataLoss);
        }
    }
}

#[test]
fn describes_a_state() {
    let strategy = dinput::Strategy::cpu(2).unwrap();
    let mut it = strategy.distribute_dataset(&pipeline(6), None).unwrap().iter().unwrap();
    steps(&mut it, 2);
    let text = dinput::describe_state(&it.save_state().unwrap()).unwrap();
    assert!(text.contains("\"kind\":\"distributed_iterator\"") && text.contains("\"step\":2"), "{text}");
    assert_eq!(dinput::describe_state(b"DINPUTST").unwrap_err().code(), Code::DataLoss);
}

/// A generator of 0..10 whose position is its next value.
struct Counter {
    next: i64,
}

impl Iterator for Counter {
    type Item = dinput::Result<dinput::Element>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= 10 {
            return None;
        }
        self.next += 1;
        Some(dinput::Tensor::scalar(self.next - 1).and_then(dinput::Element::single))
    }
}

#[test]
fn generator_with_save_and_restore() {
    let spec = dinput::Spec::of(&[(dinput::DType::Int64, &[])]).unwrap();
    let ds = Dataset::from_generator_with_state(
        &spec,
        || Counter { next: 0 },
        |c: &Counter| Ok(c.next.to_le_bytes().to_vec()),
        |mut c: Counter, saved: &[u8]| {
            c.next =
                i64::from_le_bytes(saved.try_into().map_err(|_| dinput::Error::new(Code::InvalidArgument, "size"))?);
            Ok(c)
        },
    )
    .unwrap()
    .batch(3, false)
    .unwrap();
    let want = batches(&mut ds.iter().unwrap(), usize::MAX);
    assert_eq!(want.concat(), (0..10).collect::<Vec<i64>>());
    for steps in 0..=want.len() {
        let mut it = ds.iter().unwrap();
        let mut got = batches(&mut it, steps);
        let state = it.save_state().unwrap();
        got.extend(batches(&mut ds.iter_from_state(&state).unwrap(), usize::MAX));
        assert_eq!(got, want, "saved after {steps} batches");
    }
}
