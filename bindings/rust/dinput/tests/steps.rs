//! Several steps of a distributed iterator per call (get_next_steps): the steps get_next
//! gives, the end of data and an error after the steps made before them, and saves.

use dinput::{Code, Dataset, DistIterator, PerReplica};

fn values(step: &PerReplica) -> Vec<Vec<i64>> {
    (0..step.len()).map(|r| step.get(r).unwrap().tensor(0).unwrap().as_slice::<i64>().unwrap().to_vec()).collect()
}

/// Every step by get_next_steps(max): the steps, the sizes of the calls, the error that ended them.
fn in_calls(it: &mut DistIterator, max: usize) -> (Vec<Vec<Vec<i64>>>, Vec<usize>, dinput::Error) {
    let (mut steps, mut calls) = (Vec::new(), Vec::new());
    loop {
        match it.get_next_steps(max) {
            Ok(got) => {
                calls.push(got.len());
                steps.extend(got.iter().map(values));
            }
            Err(e) => return (steps, calls, e),
        }
    }
}

fn dist(ds: &Dataset) -> dinput::DistDataset {
    dinput::Strategy::cpu(2).unwrap().distribute_dataset(ds, None).unwrap()
}

#[test]
fn same_steps_as_get_next() {
    let d = dist(&Dataset::range(0, 21, 1).unwrap().batch(4, false).unwrap());
    let want: Vec<_> = d.iter().unwrap().map(|s| values(&s.unwrap())).collect();
    let (got, calls, end) = in_calls(&mut d.iter().unwrap(), 4);
    assert_eq!(got, want);
    assert_eq!(calls, vec![4, 2]);
    assert_eq!(end.code(), Code::OutOfRange);
    assert_eq!(d.iter().unwrap().get_next_steps(0).unwrap_err().code(), Code::InvalidArgument);
}

#[test]
fn error_after_the_steps_before_it() {
    let failing = Dataset::range(0, 64, 1)
        .unwrap()
        .map(|e| {
            if e.tensor(0)?.as_slice::<i64>()?[0] == 30 {
                Err(dinput::Error::new(Code::DataLoss, "the element that fails"))
            } else {
                Ok(e.clone())
            }
        })
        .unwrap();
    let d = dist(&failing.batch(4, false).unwrap());
    let (got, calls, err) = in_calls(&mut d.iter().unwrap(), 16);
    assert_eq!(err.code(), Code::DataLoss, "{err}");
    assert_eq!(calls, vec![7]);
    assert_eq!(got.last().unwrap(), &vec![vec![24, 25], vec![26, 27]]);
}

#[test]
fn save_after_a_call_restores_after_its_last_step() {
    let d = dist(&Dataset::range(0, 21, 1).unwrap().batch(4, false).unwrap());
    let mut it = d.iter().unwrap();
    assert_eq!(it.get_next_steps(3).unwrap().len(), 3);
    let state = it.save_state().unwrap();
    let rest: Vec<_> = it.map(|s| values(&s.unwrap())).collect();
    assert_eq!(rest.len(), 3);
    let (got, _, end) = in_calls(&mut d.iter_from_state(&state).unwrap(), 2);
    assert_eq!(got, rest);
    assert_eq!(end.code(), Code::OutOfRange);
}

/// Every step by copy_steps(max) of i64 [2] pieces: the steps (an unfit one as well), the
/// steps copied by each call, the unfit steps and the error that ended them.
fn copied(it: &mut DistIterator, max: usize) -> (Vec<Vec<Vec<i64>>>, Vec<usize>, usize, dinput::Error) {
    let (mut steps, mut calls, mut unfits) = (Vec::new(), Vec::new(), 0);
    let mut buf = vec![-1i64; max * 2 * 2];
    loop {
        match it.copy_steps(&mut buf, &[2], max) {
            Ok((n, unfit)) => {
                calls.push(n);
                steps.extend(buf[..n * 4].chunks(4).map(|s| vec![s[..2].to_vec(), s[2..].to_vec()]));
                if let Some(step) = unfit {
                    unfits += 1;
                    steps.push(values(&step));
                }
            }
            Err(e) => return (steps, calls, unfits, e),
        }
    }
}

#[test]
fn copied_steps_are_those_of_get_next() {
    let d = dist(&Dataset::range(0, 21, 1).unwrap().batch(4, false).unwrap());
    let want: Vec<_> = d.iter().unwrap().map(|s| values(&s.unwrap())).collect();
    let (got, calls, unfits, end) = copied(&mut d.iter().unwrap(), 4);
    assert_eq!(got, want);
    // 5 steps of 2 x 2 copied 4 and 1, the short sixth handed out after them.
    assert_eq!((calls, unfits), (vec![4, 1], 1));
    assert_eq!(end.code(), Code::OutOfRange);
    // Too small a buffer, another dtype: refused before any step, or every step unfit.
    let mut it = d.iter().unwrap();
    assert_eq!(it.copy_steps(&mut [0i64; 7], &[2], 2).unwrap_err().code(), Code::InvalidArgument);
    let (n, unfit) = it.copy_steps(&mut [0f64; 8], &[2], 2).unwrap();
    assert_eq!((n, unfit.map(|s| values(&s))), (0, Some(want[0].clone())));
}
