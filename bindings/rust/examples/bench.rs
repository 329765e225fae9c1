//! The Rust binding's cost per element: one epoch of `range(N).batch(256)` distributed over 2
//! CPU replicas (distribute_dataset), reading every value, through the safe layer.
//!
//! For a ratio measured in the same process and run, the same loop is also timed through the
//! raw `dinput-sys` calls (exactly the C benchmark's loop, bench/bench_distribute.c
//! dist_range_pass); the C program itself is bench/run.sh's business. Each figure is the
//! median of 5 epochs after one warm-up epoch.
//!
//! Then (unless `--only range`) the map closures, as bench/bindings/c_map.c measures them in C:
//! `range(M).map(identity).batch(256)`, every batch read, one line per variant:
//! rust_map_element_seq and rust_map_element_par2 (`map_with`, sequential and 2 parallel
//! calls), rust_map_many64_seq and rust_map_many64_par2 (`map_many_with`, runs of 64).
//! ns_per_elem is the pipeline's median wall time per element over 3 epochs (after a warm-up),
//! base_ns_per_elem that of `range(M).batch(256)`, callback_ns_per_elem the difference. M is
//! `--map-n` (2^20), a 16th of it for rust_map_element_par2.
//!
//! Usage: cargo run --release --offline --example bench
//!          [-- --quick | -- --n N] [--map-n M] [--only range|map]
//! Output: JSON lines:
//!   {"bench":"rust_range_batch256_2replicas","ns_per_elem":...,"raw_ffi_ns_per_elem":...,...}
//!   {"bench":"rust_map_element_seq","n":...,"ns_per_elem":...,"base_ns_per_elem":...,...}
use std::hint::black_box;
use std::time::Instant;

use dinput::{sys, Dataset, DistDataset, MapOptions, Strategy};

const RUNS: usize = 5;
const BATCH: usize = 256;
const REPLICAS: usize = 2;

/// Kept out of line, like the C benchmark's bench_sum_i64, so both sides run the same loop.
#[inline(never)]
fn sum_i64(v: &[i64]) -> i64 {
    v.iter().sum()
}

/// One epoch through the safe API; nanoseconds per element.
fn safe_pass(dist: &DistDataset, n: i64) -> dinput::Result<f64> {
    let mut it = dist.iter()?;
    let (mut sum, mut count) = (0i64, 0i64);
    let t0 = Instant::now();
    for step in &mut it {
        let step = step?;
        for replica in step.iter() {
            let values = replica.tensor(0)?.as_slice::<i64>()?;
            sum += sum_i64(values);
            count += values.len() as i64;
        }
    }
    let ns = t0.elapsed().as_nanos() as f64;
    check_total(sum, count, n);
    black_box(sum);
    Ok(ns / n as f64)
}

/// One epoch through the raw declarations, call for call the C benchmark's loop.
fn raw_pass(dist: &DistDataset, n: i64) -> f64 {
    let mut it: *mut sys::dinput_dist_iterator_t = std::ptr::null_mut();
    // SAFETY: dist is live; `it` is a valid out-parameter.
    assert_eq!(unsafe { sys::dinput_dist_dataset_iterator(&mut it, dist.as_raw()) }, sys::DINPUT_OK);
    let (mut sum, mut count) = (0i64, 0i64);
    let t0 = Instant::now();
    loop {
        let mut pv: *mut sys::dinput_per_replica_t = std::ptr::null_mut();
        // SAFETY: `it` is a live iterator used by this thread only; pv a valid out-parameter.
        let status = unsafe { sys::dinput_dist_iterator_get_next(&mut pv, it) };
        if status == sys::DINPUT_OUT_OF_RANGE {
            break;
        }
        assert_eq!(status, sys::DINPUT_OK, "dinput_dist_iterator_get_next failed");
        for r in 0..REPLICAS as std::ffi::c_int {
            // SAFETY: pv is a live per-replica value of REPLICAS elements; the borrowed
            // element and tensor stay valid until pv is freed below; an int64 tensor's data
            // holds num_elements values.
            unsafe {
                let t = sys::dinput_element_get(sys::dinput_per_replica_get(pv, r), 0);
                let k = sys::dinput_tensor_num_elements(t);
                if k > 0 {
                    let data = sys::dinput_tensor_data(t) as *const i64;
                    sum += sum_i64(std::slice::from_raw_parts(data, k as usize));
                }
                count += k;
            }
        }
        // SAFETY: pv is owned here and freed once.
        unsafe { sys::dinput_per_replica_free(pv) };
    }
    let ns = t0.elapsed().as_nanos() as f64;
    // SAFETY: `it` is owned here and freed once.
    unsafe { sys::dinput_dist_iterator_free(it) };
    check_total(sum, count, n);
    black_box(sum);
    ns / n as f64
}

/// A benchmark that lost or duplicated values would report nonsense: stop instead.
fn check_total(sum: i64, count: i64, n: i64) {
    if count != n || sum != n * (n - 1) / 2 {
        eprintln!("bench: {count} values summing to {sum}, expected {n} values summing to {}", n * (n - 1) / 2);
        std::process::exit(2);
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        0.5 * (v[m - 1] + v[m])
    }
}

fn main() -> dinput::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut n: i64 = 1 << 24; // as bench_distribute.c's distribute.scale
    let mut map_n: i64 = 1 << 20;
    let mut only = String::new();
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--quick" => {
                n = 4096;
                map_n = 4096;
            }
            "--map-n" if i + 1 < args.len() => {
                i += 1;
                map_n = args[i].parse().expect("--map-n takes a number");
            }
            "--only" if i + 1 < args.len() && (args[i + 1] == "range" || args[i + 1] == "map") => {
                i += 1;
                only = args[i].clone();
            }
            "--n" if i + 1 < args.len() => {
                i += 1;
                n = args[i].parse().expect("--n takes a number");
            }
            other => {
                eprintln!("usage: bench [--quick | --n N] [--map-n M] [--only range|map] (unknown argument {other})");
                std::process::exit(2);
            }
        }
        i += 1;
    }

    if only == "map" {
        return map_benchmarks(map_n);
    }
    let strategy = Strategy::cpu(REPLICAS)?;
    let dataset = Dataset::range(0, n, 1)?.batch(BATCH, false)?;
    let dist = strategy.distribute_dataset(&dataset, None)?;

    safe_pass(&dist, n)?; // warm-up: threads, allocator
    raw_pass(&dist, n);
    let (mut safe, mut raw) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        safe.push(safe_pass(&dist, n)?);
        raw.push(raw_pass(&dist, n));
    }
    let (safe, raw) = (median(safe), median(raw));
    println!(
        "{{\"bench\":\"rust_range_batch256_2replicas\",\"ns_per_elem\":{safe:.3},\"raw_ffi_ns_per_elem\":{raw:.3},\
         \"ratio_vs_raw\":{:.2},\"n\":{n},\"batch\":{BATCH},\"replicas\":{REPLICAS},\"runs\":{RUNS},\
         \"dinput_version\":\"{}\"}}",
        safe / raw,
        dinput::version()
    );
    if only != "range" {
        map_benchmarks(map_n)?;
    }
    Ok(())
}

/// One epoch of `ds` (batches of range(n)); nanoseconds per element.
fn map_epoch(ds: &Dataset, n: i64) -> dinput::Result<f64> {
    let (mut sum, mut count) = (0i64, 0i64);
    let t0 = Instant::now();
    for batch in ds.iter()? {
        let batch = batch?;
        let values = batch.tensor(0)?.as_slice::<i64>()?;
        sum += sum_i64(values);
        count += values.len() as i64;
    }
    let ns = t0.elapsed().as_nanos() as f64;
    check_total(sum, count, n);
    Ok(ns / n as f64)
}

/// The median of 3 epochs after a warm-up one.
fn median_epoch(ds: &Dataset, n: i64) -> dinput::Result<f64> {
    map_epoch(ds, n)?;
    Ok(median(vec![map_epoch(ds, n)?, map_epoch(ds, n)?, map_epoch(ds, n)?]))
}

fn map_benchmarks(n: i64) -> dinput::Result<()> {
    let variants = [
        ("rust_map_element_seq", 0, 1, n),
        ("rust_map_element_par2", 0, 2, (n / 16).max(1)),
        ("rust_map_many64_seq", 64, 1, n),
        ("rust_map_many64_par2", 64, 2, n),
    ];
    for (name, many, parallel, n) in variants {
        let range = Dataset::range(0, n, 1)?;
        let base = median_epoch(&range.batch(BATCH, false)?, n)?;
        let options = MapOptions::new().num_parallel_calls(parallel);
        let mapped = if many > 0 {
            range.map_many_with(many, &options, |ins| Ok(ins.to_vec()))?
        } else {
            range.map_with(&options, |e| e.try_clone())?
        };
        let ns = median_epoch(&mapped.batch(BATCH, false)?, n)?;
        println!(
            "{{\"bench\":\"{name}\",\"n\":{n},\"ns_per_elem\":{ns:.2},\"base_ns_per_elem\":{base:.2},\
             \"callback_ns_per_elem\":{:.2}}}",
            ns - base
        );
    }
    Ok(())
}
