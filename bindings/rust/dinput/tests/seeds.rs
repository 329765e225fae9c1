//! The examples of docs/semantics.md, through the Rust API.

mod common;

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use common::{range_batch, replicas, steps, with_policy};
use dinput::{
    AutoShardPolicy, Code, Collective, DType, Dataset, Element, InputOptions, ReduceOp, ReplicationMode, Strategy,
    Tensor, UNKNOWN_DIM,
};

#[test]
fn range6_batch4_on_2_replicas() {
    // [0,1] | [2,3] ; [4] | [5]
    let strategy = Strategy::cpu(2).unwrap();
    let dist = strategy.distribute_dataset(&range_batch(6, 4), None).unwrap();
    assert_eq!(steps(&dist), steps![[[0, 1], [2, 3]], [[4], [5]]]);
}

#[test]
fn even_split_table() {
    // range(4).batch(4) on 5 replicas: [0] | [1] | [2] | [3] | []
    let dist = Strategy::cpu(5).unwrap().distribute_dataset(&range_batch(4, 4), None).unwrap();
    assert_eq!(steps(&dist), steps![[[0], [1], [2], [3], []]]);
    // range(8).batch(4) on 3: [0,1] | [2,3] | [] ; [4,5] | [6,7] | []
    let dist = Strategy::cpu(3).unwrap().distribute_dataset(&range_batch(8, 4), None).unwrap();
    assert_eq!(steps(&dist), steps![[[0, 1], [2, 3], []], [[4, 5], [6, 7], []]]);
    // range(9).batch(4) on 4: [0]|[1]|[2]|[3] ; [4]|[5]|[6]|[7] ; [8]|[]|[]|[]
    let dist = Strategy::cpu(4).unwrap().distribute_dataset(&range_batch(9, 4), None).unwrap();
    assert_eq!(steps(&dist), steps![[[0], [1], [2], [3]], [[4], [5], [6], [7]], [[8], [], [], []]]);
    assert!(dist.plan().contains("\"split\":\"even\""), "{}", dist.plan());
}

#[test]
fn range9_batch4_get_next_as_optional_on_2_replicas() {
    // [0,1] | [2,3] ; [4,5] | [6,7] ; [8] | [] then an empty optional
    let strategy = Strategy::new(&["CPU:0", "CPU:1"]).unwrap();
    let dist = strategy.distribute_dataset(&range_batch(9, 4), None).unwrap();
    let mut it = dist.iter().unwrap();
    let mut seen = Vec::new();
    for _ in 0..5 {
        // steps_per_loop 5, as the tutorial
        let optional = it.get_next_as_optional().unwrap();
        if !optional.has_value() {
            // An empty optional holds nothing to get.
            assert_eq!(optional.per_replica().unwrap_err().code, Code::InvalidArgument);
            break;
        }
        let value = optional.per_replica().unwrap();
        // Pass it through run, as the example does, to check run keeps per-replica order.
        let results = strategy.run(Some(&value), |_, x| Element::single(x.unwrap().tensor(0)?)).unwrap();
        seen.push(replicas(&results));
    }
    assert_eq!(seen, steps![[[0, 1], [2, 3]], [[4, 5], [6, 7]], [[8], []]]);
    // The end is sticky.
    assert!(!it.get_next_as_optional().unwrap().has_value());
    assert_eq!(it.get_next().unwrap_err().code, Code::OutOfRange);
}

#[test]
fn partial_batches_keep_dtype_and_inner_dimensions() {
    // from_tensors(([1.],[1.])).repeat(100).batch(16) on 4 replicas: 6 steps of pairs of
    // [4,1], then one of pairs of [1,1] (100 = 6*16 + 4).
    let one = Tensor::from_slice(&[1.0f32]).unwrap();
    let element = Element::new(&[&one, &one]).unwrap();
    let dataset = Dataset::from_tensors(&element).unwrap().repeat(100).unwrap().batch(16, false).unwrap();
    let dist = Strategy::cpu(4).unwrap().distribute_dataset(&dataset, None).unwrap();
    let mut shapes = Vec::new();
    for step in dist.iter().unwrap() {
        let step = step.unwrap();
        assert_eq!(step.len(), 4);
        for replica in step.iter() {
            assert_eq!(replica.len(), 2);
            let features = replica.tensor(0).unwrap();
            assert_eq!(features.dtype(), DType::Float32);
            assert!(features.as_slice::<f32>().unwrap().iter().all(|&v| v == 1.0));
            assert_eq!(replica.tensor(1).unwrap().shape(), features.shape());
        }
        shapes.push(step.get(0).unwrap().tensor(0).unwrap().shape().to_vec());
    }
    let mut expected = vec![vec![4, 1]; 6];
    expected.push(vec![1, 1]);
    assert_eq!(shapes, expected);

    // An empty batch keeps the dtype and the known inner dimensions: from_tensors(float32[3])
    // .repeat(5).batch(4) on 4 replicas ends with [1,3] | (0,3) | (0,3) | (0,3).
    let row = Tensor::from_slice(&[1.0f32, 2.0, 3.0]).unwrap();
    let dataset =
        Dataset::from_tensors(&Element::single(&row).unwrap()).unwrap().repeat(5).unwrap().batch(4, false).unwrap();
    let dist = Strategy::cpu(4).unwrap().distribute_dataset(&dataset, None).unwrap();
    let shapes: Vec<Vec<Vec<i64>>> = dist
        .iter()
        .unwrap()
        .map(|s| s.unwrap().iter().map(|e| e.tensor(0).unwrap().shape().to_vec()).collect())
        .collect();
    assert_eq!(shapes, vec![vec![vec![1, 3]; 4], vec![vec![1, 3], vec![0, 3], vec![0, 3], vec![0, 3]]]);

    // range(9).batch(4) on 2: the empty batch of the last step is int64 with 0 rows.
    let dist = Strategy::cpu(2).unwrap().distribute_dataset(&range_batch(9, 4), None).unwrap();
    let last = dist.iter().unwrap().last().unwrap().unwrap();
    let empty = last.get(1).unwrap().tensor(0).unwrap();
    assert_eq!((empty.dtype(), empty.shape()), (DType::Int64, &[0i64][..]));
    assert_eq!(empty.as_slice::<i64>().unwrap(), &[] as &[i64]);
    // The per-replica spec has an unknown batch dimension since partial batches can occur.
    let spec = dist.element_spec().unwrap();
    assert_eq!(spec.components(), vec![(DType::Int64, vec![UNKNOWN_DIM])]);
    assert_eq!(spec.to_string(), "(int64[None])");
}

#[test]
fn repeat_forever_keeps_splitting() {
    // from_tensor_slices([1,2,3,4]).repeat().batch(4) on 2: [1,2] | [3,4] forever.
    let values = Tensor::from_slice(&[1i64, 2, 3, 4]).unwrap();
    let dataset = Dataset::from_tensor_slices(&Element::single(&values).unwrap())
        .unwrap()
        .repeat_forever()
        .unwrap()
        .batch(4, false)
        .unwrap();
    let dist = Strategy::cpu(2).unwrap().distribute_dataset(&dataset, None).unwrap();
    let first: Vec<_> = dist.iter().unwrap().take(50).map(|s| replicas(&s.unwrap())).collect();
    assert_eq!(first, vec![steps![[[1, 2], [3, 4]]][0].clone(); 50]);
}

#[test]
fn balanced_split_with_policy_off() {
    let off = |stop, batch, n| {
        let dataset = with_policy(&range_batch(stop, batch), AutoShardPolicy::Off).unwrap();
        let dist = Strategy::cpu(n).unwrap().distribute_dataset(&dataset, None).unwrap();
        assert!(dist.plan().contains("\"split\":\"balanced\""), "{}", dist.plan());
        steps(&dist)
    };
    assert_eq!(off(8, 4, 2), steps![[[0, 1], [2, 3]], [[4, 5], [6, 7]]]);
    assert_eq!(off(5, 4, 2), steps![[[0, 1], [2, 3]], [[4], []]]);
    assert_eq!(off(8, 4, 3), steps![[[0, 1], [2], [3]], [[4, 5], [6], [7]]]);
}

#[test]
fn restore_order_with_enumerate() {
    // range(24).enumerate().batch(6) on 2 replicas; each replica outputs 2*x with its index:
    // reassembled {0: 0, 1: 2, ..., 23: 46}.
    let strategy = Strategy::cpu(2).unwrap();
    let dataset = Dataset::range(0, 24, 1).unwrap().enumerate(0).unwrap().batch(6, false).unwrap();
    let dist = strategy.distribute_dataset(&dataset, None).unwrap();
    let mut result = BTreeMap::new();
    for x in dist.iter().unwrap() {
        let x = x.unwrap();
        let outputs = strategy
            .run(Some(&x), |_ctx, args| {
                let args = args.expect("run was given arguments");
                let index = args.tensor(0)?;
                let inputs = args.tensor(1)?;
                let doubled: Vec<i64> = inputs.as_slice::<i64>()?.iter().map(|v| 2 * v).collect();
                let out = Tensor::new(inputs.shape(), &doubled)?;
                Element::new(&[&index, &out])
            })
            .unwrap();
        for replica in outputs.iter() {
            let index = replica.tensor(0).unwrap().to_vec_i64().unwrap();
            let values = replica.tensor(1).unwrap().to_vec_i64().unwrap();
            for (i, v) in index.into_iter().zip(values) {
                assert!(result.insert(i, v).is_none(), "index {i} seen twice");
            }
        }
    }
    let expected: BTreeMap<i64, i64> = (0..24).map(|i| (i, 2 * i)).collect();
    assert_eq!(result, expected);
}

#[test]
fn distribute_datasets_from_function_with_input_context() {
    let strategy = Strategy::cpu(2).unwrap();
    let mut contexts = Vec::new();
    let dist = strategy
        .distribute_datasets_from_function(None, |ctx| {
            contexts.push((ctx.num_input_pipelines(), ctx.input_pipeline_id(), ctx.num_replicas_in_sync()));
            // The per-replica batch size of a global batch of 4 over 2 replicas.
            let batch = ctx.per_replica_batch_size(4)?;
            assert_eq!(batch, 2);
            let not_divisible = ctx.per_replica_batch_size(5).unwrap_err();
            assert_eq!(not_divisible.code, Code::InvalidArgument);
            assert!(not_divisible.message.contains("divisible"), "{}", not_divisible.message);
            Dataset::range(0, 10, 1)?.shard(ctx.num_input_pipelines(), ctx.input_pipeline_id())?.batch(batch, false)
        })
        .unwrap();
    // Called once: one worker, PER_WORKER.
    assert_eq!(contexts, vec![(1, 0, 2)]);
    // Neither sharded nor rebatched by dinput: each replica dequeues one element per step.
    assert_eq!(steps(&dist), steps![[[0, 1], [2, 3]], [[4, 5], [6, 7]], [[8, 9], []]]);
    assert!(dist.plan().contains("\"policy\":\"NONE\""), "{}", dist.plan());
}

#[test]
fn from_function_tutorial_shapes() {
    // from_function.c: 64 rows batched by 16, then by the per-replica batch size 8, give one
    // element of shape (4, 16, 1), which replica 0 receives while replica 1 gets an empty
    // batch (0, 0, 1): both batch dimensions are unknown in the spec (no drop_remainder), and
    // an empty batch keeps only the known ones (tests/examples/from_function.expected).
    let strategy = Strategy::cpu(2).unwrap();
    let dist = strategy
        .distribute_datasets_from_function(None, |ctx| {
            let batch = ctx.per_replica_batch_size(16)?;
            let one = Tensor::from_slice(&[1.0f32])?;
            Dataset::from_tensors(&Element::new(&[&one, &one])?)?
                .repeat(64)?
                .batch(16, false)?
                .shard(ctx.num_input_pipelines(), ctx.input_pipeline_id())?
                .batch(batch, false)?
                .prefetch(2)
        })
        .unwrap();
    let shapes: Vec<Vec<Vec<i64>>> = dist
        .iter()
        .unwrap()
        .map(|s| s.unwrap().iter().map(|e| e.tensor(0).unwrap().shape().to_vec()).collect())
        .collect();
    assert_eq!(shapes, vec![vec![vec![4, 16, 1], vec![0, 0, 1]]]);
}

#[test]
fn from_function_per_replica_mode() {
    let strategy = Strategy::cpu(2).unwrap();
    let mut options = InputOptions::new().unwrap();
    options.set_replication_mode(ReplicationMode::PerReplica).unwrap().set_fetch_to_device(false).unwrap();
    let mut ids = Vec::new();
    let dist = strategy
        .distribute_datasets_from_function(Some(&options), |ctx| {
            ids.push((ctx.input_pipeline_id(), ctx.num_input_pipelines()));
            let id = ctx.input_pipeline_id() as i64;
            Dataset::range(10 * id, 10 * id + 3, 1)?.batch(1, false)
        })
        .unwrap();
    assert_eq!(ids, vec![(0, 2), (1, 2)]);
    assert_eq!(steps(&dist), steps![[[0], [10]], [[1], [11]], [[2], [12]]]);
    // PER_REPLICA is only for distribute_datasets_from_function.
    let err = strategy.distribute_dataset(&range_batch(4, 2), Some(&options)).unwrap_err();
    assert_eq!(err.code, Code::Unimplemented, "{err}");
}

#[test]
fn distribute_values_from_function() {
    // ctx.num_replicas_in_sync on 2 replicas gives (2, 2); the replica ids are 0 and 1.
    let strategy = Strategy::cpu(2).unwrap();
    let mut calls = 0;
    let values = strategy
        .distribute_values_from_function(|ctx| {
            calls += 1;
            let v = [ctx.num_replicas_in_sync() as i64, ctx.replica_id_in_sync_group() as i64];
            Element::single(&Tensor::from_slice(&v)?)
        })
        .unwrap();
    assert_eq!(calls, 2);
    assert_eq!(replicas(&values), vec![vec![2, 0], vec![2, 1]]);
    // run passes each replica its own value; the context names the replica's device.
    let seen = Mutex::new(Vec::new());
    let out = strategy
        .run(Some(&values), |ctx, x| {
            seen.lock().unwrap().push((ctx.replica_id_in_sync_group(), ctx.device().to_string()));
            Element::single(x.unwrap().tensor(0)?)
        })
        .unwrap();
    assert_eq!(replicas(&out), vec![vec![2, 0], vec![2, 1]]);
    let mut seen = seen.into_inner().unwrap();
    seen.sort();
    assert_eq!(seen, vec![(0, "CPU:0".to_string()), (1, "CPU:1".to_string())]);
}

#[test]
fn run_and_reduce() {
    // Seed: 2 replicas each returning loss 0.1 per step, summed: 0.2.
    let strategy = Strategy::cpu(2).unwrap();
    let losses = strategy.run(None, |_, args| {
        assert!(args.is_none());
        Element::single(&Tensor::scalar(0.1f32)?)
    });
    let losses = losses.unwrap();
    let total = strategy.reduce(ReduceOp::Sum, &losses, None).unwrap();
    let total = total.tensor(0).unwrap();
    assert_eq!(total.dtype(), DType::Float32);
    assert!((total.item::<f32>().unwrap() - 0.2).abs() < 1e-6);
    // MEAN over axis 0 divides by the total number of rows: (0+1+2 + 3) / 4 rows.
    let rows = strategy
        .distribute_values_from_function(|ctx| {
            let v: Vec<i64> = if ctx.replica_id_in_sync_group() == 0 { vec![0, 1, 2] } else { vec![3] };
            Element::single(&Tensor::from_slice(&v)?)
        })
        .unwrap();
    let mean = strategy.reduce(ReduceOp::Mean, &rows, Some(0)).unwrap();
    assert_eq!(mean.tensor(0).unwrap().item::<f64>().unwrap(), 1.5);
}

/// Runs `worker(strategy)` for each of W worker threads joined by an in-process collective.
fn multi_worker<T: Send>(workers: usize, replicas_in_sync: usize, worker: impl Fn(Strategy) -> T + Sync) -> Vec<T> {
    let collective = Collective::in_process(workers, Some(Duration::from_secs(20))).unwrap();
    assert_eq!(collective.num_workers(), workers);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let (collective, worker) = (&collective, &worker);
                s.spawn(move || {
                    let strategy = Strategy::multi_worker_cpu(collective, w, replicas_in_sync).unwrap();
                    assert_eq!((strategy.num_workers(), strategy.worker_index()), (workers, w));
                    worker(strategy)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("worker thread")).collect()
    })
}

#[test]
fn multi_worker_data_sharding() {
    // W=2, R=1, range(9).batch(2), DATA: w0 [0];[2];[4];[6];[8] || w1 [1];[3];[5];[7];[]
    let results = multi_worker(2, 2, |strategy| {
        let dataset = with_policy(&range_batch(9, 2), AutoShardPolicy::Data).unwrap();
        let dist = strategy.distribute_dataset(&dataset, None).unwrap();
        steps(&dist)
    });
    assert_eq!(results[0], steps![[[0]], [[2]], [[4]], [[6]], [[8]]]);
    assert_eq!(results[1], steps![[[1]], [[3]], [[5]], [[7]], [[]]]);
}

#[test]
fn multi_worker_off_and_reduce() {
    // OFF, W=2 R=1, range(12).batch(8): every worker gets [0..3];[4..7];[8..11]; a SUM reduce
    // is an all-reduce, so both workers get the same total.
    let results = multi_worker(2, 2, |strategy| {
        let dataset = with_policy(&range_batch(12, 8), AutoShardPolicy::Off).unwrap();
        let dist = strategy.distribute_dataset(&dataset, None).unwrap();
        let all = steps(&dist);
        let mine = strategy
            .distribute_values_from_function(|ctx| {
                Element::single(&Tensor::scalar(ctx.replica_id_in_sync_group() as i64 + 1)?)
            })
            .unwrap();
        let total = strategy.reduce(ReduceOp::Sum, &mine, None).unwrap().tensor(0).unwrap().item::<i64>().unwrap();
        (all, total)
    });
    for (all, total) in results {
        assert_eq!(all, steps![[[0, 1, 2, 3]], [[4, 5, 6, 7]], [[8, 9, 10, 11]]]);
        assert_eq!(total, 1 + 2);
    }
}

#[test]
fn multi_worker_strategy_needs_equal_replicas() {
    let collective = Collective::in_process(2, None).unwrap();
    let err = Strategy::multi_worker_cpu(&collective, 0, 3).unwrap_err();
    assert_eq!(err.code, Code::InvalidArgument);
    assert!(err.message.contains("same number of replicas"), "{}", err.message);
}
