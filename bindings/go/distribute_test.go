package dinput

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// The examples of docs/semantics.md, "The even split" (single worker, policy AUTO falling
// back to DATA).
func TestSeedExamplesEvenSplit(t *testing.T) {
	cases := []struct {
		n, batch int64
		replicas int
		want     string
	}{
		{6, 4, 2, "[0,1] | [2,3] ; [4] | [5]"},
		{4, 4, 5, "[0] | [1] | [2] | [3] | []"},
		{8, 4, 3, "[0,1] | [2,3] | [] ; [4,5] | [6,7] | []"},
		{9, 4, 4, "[0] | [1] | [2] | [3] ; [4] | [5] | [6] | [7] ; [8] | [] | [] | []"},
		{9, 4, 2, "[0,1] | [2,3] ; [4,5] | [6,7] ; [8] | []"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("range(%d).batch(%d)/N=%d", c.n, c.batch, c.replicas), func(t *testing.T) {
			s := cpuStrategy(t, c.replicas)
			ds := rangeBatch(t, c.n, c.batch, nil)
			dist := must(s.DistributeDataset(ds, nil))
			it := must(dist.Iterator())
			defer it.Close()
			if got := allSteps(t, it); got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestSeedExampleMixedDevices(t *testing.T) {
	// GPU:0 and CPU:0: values stay in host memory (fetch_to_device false), so this runs
	// with or without CUDA and checks the split alone.
	s := must(NewStrategy("GPU:0", "CPU:0"))
	if got := s.Devices(); !reflect.DeepEqual(got, []string{"GPU:0", "CPU:0"}) {
		t.Errorf("devices %v", got)
	}
	opts := DefaultInputOptions()
	opts.FetchToDevice = false
	dist := must(s.DistributeDataset(rangeBatch(t, 9, 4, nil), &opts))
	if got := allSteps(t, must(dist.Iterator())); got != "[0,1] | [2,3] ; [4,5] | [6,7] ; [8] | []" {
		t.Errorf("got %s", got)
	}
}

func TestSeedExamplePairsOfFeatures(t *testing.T) {
	// from_tensors(([1.],[1.])).repeat(100).batch(16) on 4 replicas: 6 steps of [4,1] pairs,
	// then a 7th of [1,1] pairs.
	one := must(NewVector([]float32{1}))
	pair := must(NewElement(one, one))
	ds := must(FromTensors(pair))
	ds = must(ds.Repeat(100))
	ds = must(ds.Batch(16, nil))
	dist := must(cpuStrategy(t, 4).DistributeDataset(ds, nil))
	it := must(dist.Iterator())
	var shapes []string
	for it.Next() {
		step := it.Value()
		var row []string
		for r := 0; r < step.Len(); r++ {
			e := must(step.Element(r))
			f, l := must(e.Tensor(0)), must(e.Tensor(1))
			row = append(row, fmt.Sprint(f.Shape(), l.Shape()))
		}
		shapes = append(shapes, strings.Join(row, " "))
	}
	if it.Err() != nil || len(shapes) != 7 {
		t.Fatalf("%d steps (%v)", len(shapes), it.Err())
	}
	for i, s := range shapes {
		want := "[4 1] [4 1] [4 1] [4 1] [4 1] [4 1] [4 1] [4 1]"
		if i == 6 {
			want = "[1 1] [1 1] [1 1] [1 1] [1 1] [1 1] [1 1] [1 1]"
		}
		if s != want {
			t.Errorf("step %d shapes %s, want %s", i, s, want)
		}
	}
}

func TestSeedExampleRepeatForever(t *testing.T) {
	// from_tensor_slices([1,2,3,4]).repeat().batch(4) on 2 replicas: [1,2] | [3,4] forever.
	v := must(NewVector([]int64{1, 2, 3, 4}))
	ds := must(FromTensorSlices(must(NewElement(v))))
	ds = must(ds.Repeat(RepeatForever))
	ds = must(ds.Batch(4, nil))
	it := must(must(cpuStrategy(t, 2).DistributeDataset(ds, nil)).Iterator())
	for i := 0; i < 10; i++ {
		if !it.Next() {
			t.Fatalf("ended at step %d: %v", i, it.Err())
		}
		if got := formatStep(t, it.Value(), 0); got != "[1,2] | [3,4]" {
			t.Fatalf("step %d = %s", i, got)
		}
	}
}

func TestBalancedSplit(t *testing.T) {
	off := AutoShardOff
	cases := []struct {
		n, batch int64
		replicas int
		want     string
	}{
		{8, 4, 2, "[0,1] | [2,3] ; [4,5] | [6,7]"},
		{5, 4, 2, "[0,1] | [2,3] ; [4] | []"},
		{8, 4, 3, "[0,1] | [2] | [3] ; [4,5] | [6] | [7]"},
	}
	for _, c := range cases {
		dist := must(cpuStrategy(t, c.replicas).DistributeDataset(rangeBatch(t, c.n, c.batch, &off), nil))
		if got := allSteps(t, must(dist.Iterator())); got != c.want {
			t.Errorf("OFF range(%d).batch(%d) N=%d:\n got  %s\n want %s", c.n, c.batch, c.replicas, got, c.want)
		}
		var plan struct {
			Policy          string `json:"policy"`
			Split           string `json:"split"`
			GlobalBatchSize int64  `json:"global_batch_size"`
		}
		if err := json.Unmarshal([]byte(dist.Plan()), &plan); err != nil {
			t.Fatalf("plan %q: %v", dist.Plan(), err)
		}
		if plan.Policy != "OFF" || plan.Split != "balanced" || plan.GlobalBatchSize != c.batch {
			t.Errorf("plan %s", dist.Plan())
		}
	}
}

// The tutorial's get_next_as_optional loop: range(9).batch(4) on 2 replicas.
func TestGetNextAsOptional(t *testing.T) {
	dist := must(cpuStrategy(t, 2).DistributeDataset(rangeBatch(t, 9, 4, nil), nil))
	it := must(dist.Iterator())
	var steps []string
	for {
		opt := must(it.GetNextAsOptional())
		if !opt.HasValue() {
			if _, err := opt.PerReplica(); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("value of an empty optional: %v", err)
			}
			opt.Close()
			break
		}
		step := must(opt.PerReplica())
		if _, err := opt.Element(); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("element of a per-replica optional: %v", err)
		}
		opt.Close()
		steps = append(steps, formatStep(t, step, 0))
		step.Close()
	}
	if got := strings.Join(steps, " ; "); got != "[0,1] | [2,3] ; [4,5] | [6,7] ; [8] | []" {
		t.Errorf("got %s", got)
	}
	// get_next after the end: OUT_OF_RANGE, as in TensorFlow.
	if _, err := it.GetNext(); !errors.Is(err, ErrOutOfRange) {
		t.Errorf("GetNext after the end: %v", err)
	}
}

func TestPartialBatchesAndSpec(t *testing.T) {
	// Partial batches: the replica without data gets a 0-row batch of the same dtype and
	// the spec's other dimensions.
	rows := must(NewTensor([]int64{5, 3}, make([]float32, 15)))
	ds := must(FromTensorSlices(must(NewElement(rows))))
	ds = must(ds.Batch(4, nil))
	dist := must(cpuStrategy(t, 2).DistributeDataset(ds, nil))
	if spec := must(dist.ElementSpec()); spec.String() != "(float32[?,3])" {
		t.Errorf("per-replica spec %v", spec)
	}
	it := must(dist.Iterator())
	if spec := must(it.ElementSpec()); spec.String() != "(float32[?,3])" {
		t.Errorf("iterator spec %v", spec)
	}
	var shapes []string
	for it.Next() {
		for r := 0; r < it.Value().Len(); r++ {
			x := must(it.Value().Tensor(r, 0))
			shapes = append(shapes, fmt.Sprint(x.Shape()))
		}
	}
	if got := strings.Join(shapes, " "); got != "[2 3] [2 3] [1 3] [0 3]" {
		t.Errorf("shapes %s", got)
	}
	spec := must(must(cpuStrategy(t, 2).DistributeDataset(rangeBatch(t, 10, 2, nil), nil)).ElementSpec())
	if spec.String() != "(int64[?])" {
		t.Errorf("range(10).batch(2) on 2 replicas: spec %v, want (int64[?])", spec)
	}
}

// predict doubles the values of its replica's slice and keeps the index: the replica
// function of the tutorial's "restore order" example.
func predict(ctx ReplicaContext, args *Element) (*Element, error) {
	index, err := args.Tensor(0)
	if err != nil {
		return nil, err
	}
	defer index.Close()
	x, err := args.Tensor(1)
	if err != nil {
		return nil, err
	}
	defer x.Close()
	v, err := x.Int64s()
	if err != nil {
		return nil, err
	}
	for i := range v {
		v[i] *= 2
	}
	out, err := NewTensor(x.Shape(), v)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	return NewElement(index, out)
}

func TestRestoreOrder(t *testing.T) {
	r := must(Range(0, 24, 1))
	ds := must(must(r.Enumerate(0)).Batch(6, nil))
	s := cpuStrategy(t, 2)
	it := must(must(s.DistributeDataset(ds, nil)).Iterator())
	result := map[int64]int64{}
	for it.Next() {
		outputs := must(s.Run(predict, it.Value()))
		for rep := 0; rep < outputs.Len(); rep++ {
			idx := must(must(outputs.Tensor(rep, 0)).Int64s())
			val := must(must(outputs.Tensor(rep, 1)).Int64s())
			for i := range idx {
				if _, dup := result[idx[i]]; dup {
					t.Fatalf("index %d seen twice", idx[i])
				}
				result[idx[i]] = val[i]
			}
		}
		outputs.Close()
	}
	if it.Err() != nil || len(result) != 24 {
		t.Fatalf("%d results (%v)", len(result), it.Err())
	}
	for i := int64(0); i < 24; i++ {
		if result[i] != 2*i {
			t.Errorf("result[%d] = %d, want %d", i, result[i], 2*i)
		}
	}
}

func TestDistributeDatasetsFromFunction(t *testing.T) {
	const globalBatchSize = 4
	s := cpuStrategy(t, 2)
	var calls []string
	var savedCtx *InputContext
	dist := must(s.DistributeDatasetsFromFunction(func(ctx *InputContext) (*Dataset, error) {
		savedCtx = ctx
		bs, err := ctx.PerReplicaBatchSize(globalBatchSize)
		if err != nil {
			return nil, err
		}
		if _, err := ctx.PerReplicaBatchSize(5); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "not divisible") {
			return nil, fmt.Errorf("PerReplicaBatchSize(5) gave %v", err)
		}
		calls = append(calls, fmt.Sprintf("pipeline %d/%d, %d replicas, batch %d",
			ctx.InputPipelineID, ctx.NumInputPipelines, ctx.NumReplicasInSync, bs))
		r, err := Range(0, 10, 1)
		if err != nil {
			return nil, err
		}
		defer r.Close()
		sharded, err := r.Shard(int64(ctx.NumInputPipelines), int64(ctx.InputPipelineID))
		if err != nil {
			return nil, err
		}
		defer sharded.Close()
		return sharded.Batch(bs, nil)
	}, nil))
	if !reflect.DeepEqual(calls, []string{"pipeline 0/1, 2 replicas, batch 2"}) {
		t.Errorf("dataset_fn calls %q", calls)
	}
	// Each replica dequeues one element per step; no rebatching.
	if got := allSteps(t, must(dist.Iterator())); got != "[0,1] | [2,3] ; [4,5] | [6,7] ; [8,9] | []" {
		t.Errorf("got %s", got)
	}
	if !strings.Contains(dist.Plan(), `"policy":"NONE"`) {
		t.Errorf("plan %s", dist.Plan())
	}
	// The context was lent for the call only.
	if _, err := savedCtx.PerReplicaBatchSize(4); !errors.Is(err, ErrClosed) {
		t.Errorf("InputContext after the call: %v", err)
	}

	// PER_REPLICA mode: one pipeline per replica, each with its own id.
	opts := DefaultInputOptions()
	opts.ReplicationMode = ReplicationPerReplica
	opts.FetchToDevice = false
	var ids []int
	perReplica := must(s.DistributeDatasetsFromFunction(func(ctx *InputContext) (*Dataset, error) {
		ids = append(ids, ctx.InputPipelineID*10+ctx.NumInputPipelines)
		r, err := Range(int64(100*ctx.InputPipelineID), int64(100*ctx.InputPipelineID+3), 1)
		if err != nil {
			return nil, err
		}
		return r.Batch(2, nil)
	}, &opts))
	if !reflect.DeepEqual(ids, []int{2, 12}) {
		t.Errorf("pipelines (id*10+count) %v", ids)
	}
	if got := allSteps(t, must(perReplica.Iterator())); got != "[0,1] | [100,101] ; [2] | [102]" {
		t.Errorf("PER_REPLICA got %s", got)
	}

	// A failing dataset function fails the call with its message.
	_, err := s.DistributeDatasetsFromFunction(func(ctx *InputContext) (*Dataset, error) {
		return nil, &Error{Code: NotFound, Message: "no shard for pipeline 0"}
	}, nil)
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "no shard for pipeline 0") {
		t.Errorf("failing dataset_fn: %v", err)
	}
	_, err = s.DistributeDatasetsFromFunction(func(ctx *InputContext) (*Dataset, error) { panic("dataset_fn blew up") }, nil)
	if !errors.Is(err, ErrInternal) || !strings.Contains(err.Error(), "dataset_fn blew up") {
		t.Errorf("panicking dataset_fn: %v", err)
	}
}

func TestInputOptionErrors(t *testing.T) {
	s := cpuStrategy(t, 2)
	opts := DefaultInputOptions()
	opts.ReplicationMode = ReplicationPerReplica
	if _, err := s.DistributeDataset(rangeBatch(t, 4, 2, nil), &opts); !errors.Is(err, ErrUnimplemented) {
		t.Errorf("PER_REPLICA with DistributeDataset: %v, want UNIMPLEMENTED", err)
	}
	opts = DefaultInputOptions()
	opts.PlaceDatasetOnDevice = true
	if _, err := s.DistributeDataset(rangeBatch(t, 4, 2, nil), &opts); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("place_dataset_on_device without PER_REPLICA: %v", err)
	}
	opts = DefaultInputOptions()
	opts.PerReplicaBufferSize = -1
	if _, err := s.DistributeDataset(rangeBatch(t, 4, 2, nil), &opts); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("negative buffer size: %v", err)
	}
	// A dataset of scalars cannot be rebatched.
	r := must(Range(0, 4, 1))
	_, err := s.DistributeDataset(r, nil)
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "rank >= 1") {
		t.Errorf("scalars: %v", err)
	}
	// FILE sharding of a pipeline without a file source (a no-op with one worker, so on
	// worker 0 of two; distributing needs no peer).
	c := must(NewInProcessCollective(2, time.Second))
	w0 := must(NewMultiWorkerCPUStrategy(c, 0, 2))
	file := AutoShardFile
	_, err = w0.DistributeDataset(rangeBatch(t, 4, 2, &file), nil)
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "unshardable") {
		t.Errorf("FILE without files: %v", err)
	}
}

func TestValuesFromFunctionRunAndReduce(t *testing.T) {
	s := cpuStrategy(t, 2)
	values := must(s.DistributeValuesFromFunction(func(ctx ValueContext) (*Element, error) {
		v, err := NewScalar(int64(ctx.NumReplicasInSync*100 + ctx.ReplicaIDInSyncGroup))
		if err != nil {
			return nil, err
		}
		defer v.Close()
		return NewElement(v)
	}))
	if got := formatStep(t, values, 0); got != "[200] | [201]" {
		t.Errorf("values_from_function = %s", got)
	}
	// run with no arguments: each replica knows its device; calls are concurrent.
	var mu sync.Mutex
	seen := map[string]int{}
	devices := must(s.Run(func(ctx ReplicaContext, args *Element) (*Element, error) {
		if args != nil {
			return nil, errors.New("expected no arguments")
		}
		mu.Lock()
		seen[ctx.Device] = ctx.ReplicaIDInSyncGroup
		mu.Unlock()
		loss, err := NewScalar(float32(0.1))
		if err != nil {
			return nil, err
		}
		return NewElement(loss)
	}, nil))
	if !reflect.DeepEqual(seen, map[string]int{"CPU:0": 0, "CPU:1": 1}) {
		t.Errorf("replica devices %v", seen)
	}
	// Seed example: 2 replicas with loss 0.1 each, summed: 0.2.
	sum := must(s.Reduce(ReduceSum, devices, AxisNone))
	if got := must(must(sum.Tensor(0)).Float32s()); len(got) != 1 || math.Abs(float64(got[0])-0.2) > 1e-6 {
		t.Errorf("SUM = %v, want 0.2", got)
	}
	// MEAN over axis 0 divides by the total number of rows: (0+1+2+3+4)/5.
	a, b := must(NewVector([]int64{0, 1, 2})), must(NewVector([]int64{3, 4}))
	rows := must(NewPerReplica(must(NewElement(a)), must(NewElement(b))))
	mean := must(s.Reduce(ReduceMean, rows, 0))
	if got := must(must(mean.Tensor(0)).Float64s()); !reflect.DeepEqual(got, []float64{2}) {
		t.Errorf("MEAN axis 0 = %v, want [2]", got)
	}
	if _, err := s.Reduce(ReduceSum, rows, AxisNone); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("element-wise reduce of unequal shapes: %v", err)
	}
	// A replica function's panic fails Run with its message; the process lives.
	_, err := s.Run(func(ctx ReplicaContext, args *Element) (*Element, error) {
		if ctx.ReplicaIDInSyncGroup == 1 {
			panic("replica 1 diverged")
		}
		return args, nil
	}, values)
	if !errors.Is(err, ErrInternal) || !strings.Contains(err.Error(), "replica 1 diverged") {
		t.Errorf("panicking replica fn: %v", err)
	}
	_, err = s.DistributeValuesFromFunction(func(ctx ValueContext) (*Element, error) {
		return nil, &Error{Code: Aborted, Message: "value_fn gave up"}
	})
	if !errors.Is(err, ErrAborted) || !strings.Contains(err.Error(), "value_fn gave up") {
		t.Errorf("failing value_fn: %v", err)
	}
	if _, err := s.Run(predict, must(NewPerReplica(scalarElement(t, 1)))); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("run with 1 argument on 2 replicas: %v", err)
	}
	values.Close()
	if _, err := s.Run(predict, values); !errors.Is(err, ErrClosed) {
		t.Errorf("run with closed args: %v", err)
	}
	s.Close()
	if _, err := s.DistributeDataset(rangeBatch(t, 4, 2, nil), nil); !errors.Is(err, ErrClosed) {
		t.Errorf("closed strategy: %v", err)
	}
	if s.NumReplicasInSync() != 2 {
		t.Errorf("topology of a closed strategy: %d", s.NumReplicasInSync())
	}
}

func TestStrategyTopologyAndErrors(t *testing.T) {
	def := must(NewStrategy())
	if def.NumReplicasInSync() != 1 || !reflect.DeepEqual(def.Devices(), []string{"CPU:0"}) {
		t.Errorf("default strategy: %d replicas on %v", def.NumReplicasInSync(), def.Devices())
	}
	s := must(NewStrategy("/cpu:0", "/job:worker/device:CPU:1"))
	if !reflect.DeepEqual(s.Devices(), []string{"CPU:0", "CPU:1"}) || s.NumWorkers() != 1 || s.WorkerIndex() != 0 {
		t.Errorf("canonical devices %v, %d workers", s.Devices(), s.NumWorkers())
	}
	if _, err := NewStrategy("CPU:0", "CPU:0"); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("duplicate devices: %v", err)
	}
	if _, err := NewStrategy("TPU:0"); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("unknown device: %v", err)
	}
	c := must(NewInProcessCollective(2, time.Second))
	if c.NumWorkers() != 2 {
		t.Errorf("collective of %d workers", c.NumWorkers())
	}
	_, err := NewMultiWorkerCPUStrategy(c, 0, 3)
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "same number of replicas") {
		t.Errorf("3 replicas over 2 workers: %v", err)
	}
	if _, err := NewInProcessCollective(0, 0); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("a collective of 0 workers: %v", err)
	}
	c.Close()
	if _, err := NewMultiWorkerCPUStrategy(c, 0, 2); !errors.Is(err, ErrClosed) {
		t.Errorf("closed collective: %v", err)
	}
}

// runWorkers runs one goroutine per worker, each with its own strategy joined by an
// in-process collective, and returns each worker's steps.
func runWorkers(t *testing.T, workers, replicasInSync int, build func() (*Dataset, error)) []string {
	t.Helper()
	c := must(NewInProcessCollective(workers, 20*time.Second))
	defer c.Close()
	out := make([]string, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			errs[w] = func() error {
				s, err := NewMultiWorkerCPUStrategy(c, w, replicasInSync)
				if err != nil {
					return err
				}
				defer s.Close()
				if s.WorkerIndex() != w || s.NumWorkers() != workers {
					return fmt.Errorf("worker %d sees index %d of %d", w, s.WorkerIndex(), s.NumWorkers())
				}
				ds, err := build()
				if err != nil {
					c.Abort(Aborted, err.Error()) // release the other workers at once
					return err
				}
				dist, err := s.DistributeDataset(ds, nil)
				if err != nil {
					c.Abort(Aborted, err.Error())
					return err
				}
				it, err := dist.Iterator()
				if err != nil {
					return err
				}
				defer it.Close()
				var steps []string
				for {
					step, err := it.GetNext()
					if errors.Is(err, ErrOutOfRange) {
						break
					}
					if err != nil {
						return err
					}
					var parts []string
					for r := 0; r < step.Len(); r++ {
						x, err := step.Tensor(r, 0)
						if err != nil {
							return err
						}
						v, err := x.Int64s()
						if err != nil {
							return err
						}
						parts = append(parts, formatInt64s(v))
						x.Close()
					}
					step.Close()
					steps = append(steps, strings.Join(parts, " | "))
				}
				out[w] = strings.Join(steps, ";")
				return nil
			}()
		}(w)
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Fatalf("worker %d: %v", w, err)
		}
	}
	return out
}

func TestMultiWorkerDataSharding(t *testing.T) {
	// docs/semantics.md, "Partial batches and the end of data": W=2, R=1, range(9).batch(2),
	// DATA: w0 [0];[2];[4];[6];[8] || w1 [1];[3];[5];[7];[]
	data := AutoShardData
	got := runWorkers(t, 2, 2, func() (*Dataset, error) {
		r, err := Range(0, 9, 1)
		if err != nil {
			return nil, err
		}
		b, err := r.Batch(2, nil)
		if err != nil {
			return nil, err
		}
		return b.WithOptions(Options{AutoShardPolicy: data})
	})
	want := []string{"[0];[2];[4];[6];[8]", "[1];[3];[5];[7];[]"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestMultiWorkerOff(t *testing.T) {
	// docs/semantics.md, "The balanced split": policy OFF with W=2, R=1 and
	// range(12).batch(8): every worker gets [0..3];[4..7];[8..11].
	got := runWorkers(t, 2, 2, func() (*Dataset, error) {
		r, err := Range(0, 12, 1)
		if err != nil {
			return nil, err
		}
		b, err := r.Batch(8, nil)
		if err != nil {
			return nil, err
		}
		return b.WithOptions(Options{AutoShardPolicy: AutoShardOff})
	})
	want := "[0,1,2,3];[4,5,6,7];[8,9,10,11]"
	if got[0] != want || got[1] != want {
		t.Errorf("got %q, want %q on both workers", got, want)
	}
}

func TestMultiWorkerReduceAndAbort(t *testing.T) {
	c := must(NewInProcessCollective(2, 20*time.Second))
	results := make([]string, 2)
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			s, err := NewMultiWorkerCPUStrategy(c, w, 4) // 2 workers x 2 replicas
			if err != nil {
				results[w] = err.Error()
				return
			}
			v, err := s.DistributeValuesFromFunction(func(ctx ValueContext) (*Element, error) {
				x, err := NewScalar(float64(ctx.ReplicaIDInSyncGroup))
				if err != nil {
					return nil, err
				}
				return NewElement(x)
			})
			if err != nil {
				results[w] = err.Error()
				return
			}
			sum, err := s.Reduce(ReduceSum, v, AxisNone)
			if err != nil {
				results[w] = err.Error()
				return
			}
			x, _ := sum.Tensor(0)
			f, err := x.Float64s()
			results[w] = fmt.Sprint(f, err)
		}(w)
	}
	wg.Wait()
	// Replica ids 0..3 across both workers: every worker gets 0+1+2+3.
	if results[0] != "[6] <nil>" || results[1] != "[6] <nil>" {
		t.Errorf("cross-worker SUM: %q", results)
	}

	// Abort releases a worker waiting for a peer that never comes.
	lonely := must(NewInProcessCollective(2, 30*time.Second))
	s := must(NewMultiWorkerCPUStrategy(lonely, 0, 2))
	it := must(must(s.DistributeDataset(rangeBatch(t, 4, 2, nil), nil)).Iterator())
	done := make(chan error, 1)
	go func() {
		_, err := it.GetNext()
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	must(0, lonely.Abort(Cancelled, "worker 1 could not start"))
	select {
	case err := <-done:
		if !errors.Is(err, ErrCancelled) || !strings.Contains(err.Error(), "worker 1 could not start") {
			t.Errorf("aborted get_next: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Abort did not release the waiting worker")
	}
}

func TestPerReplicaAccess(t *testing.T) {
	x, y := scalarElement(t, 7), scalarElement(t, 8)
	v := must(NewPerReplica(x, y))
	if v.Len() != 2 {
		t.Fatalf("len %d", v.Len())
	}
	els := must(v.LocalResults())
	v.Close()
	// Elements taken from a per-replica value outlive it.
	if got := must(must(els[1].Tensor(0)).Int64s()); got[0] != 8 {
		t.Errorf("replica 1 = %v", got)
	}
	if _, err := v.Element(0); !errors.Is(err, ErrClosed) {
		t.Errorf("closed per-replica: %v", err)
	}
	w := must(NewPerReplica(x))
	if _, err := w.Element(3); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("Element(3): %v", err)
	}
	if _, err := w.Tensor(0, 2); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Tensor(0, 2): %v", err)
	}
	if _, err := NewPerReplica(nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("nil element: %v", err)
	}
}

func TestAppendValues(t *testing.T) {
	dist := must(cpuStrategy(t, 2).DistributeDataset(rangeBatch(t, 9, 4, nil), nil))
	it := must(dist.Iterator())
	buf := make([]int64, 0, 1) // too small at first: AppendValues grows it
	var all []int64
	for it.Next() {
		for r := 0; r < it.Value().Len(); r++ {
			var err error
			buf, err = AppendValues(buf[:0], it.Value(), r, 0)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, buf...)
		}
	}
	if it.Err() != nil || formatInt64s(all) != "[0,1,2,3,4,5,6,7,8]" {
		t.Errorf("appended %v (%v)", all, it.Err())
	}
	v := must(NewPerReplica(scalarElement(t, 5)))
	prefix := []int64{1, 2}
	if got := must(AppendValues(prefix, v, 0, 0)); !reflect.DeepEqual(got, []int64{1, 2, 5}) {
		t.Errorf("append to a prefix: %v", got)
	}
	if _, err := AppendValues([]float64(nil), v, 0, 0); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "float64") {
		t.Errorf("wrong dtype: %v", err)
	}
	empty := must(NewPerReplica(must(NewElement(must(NewTensor([]int64{0}, []int64{}))))))
	if _, err := AppendValues([]int32(nil), empty, 0, 0); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("wrong dtype of an empty tensor: %v", err)
	}
	if got, err := AppendValues([]int64(nil), empty, 0, 0); err != nil || len(got) != 0 {
		t.Errorf("empty tensor: %v, %v", got, err)
	}
	if _, err := AppendValues([]int64(nil), v, 1, 0); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("replica out of range: %v", err)
	}
	if _, err := AppendValues([]int64(nil), v, 0, 1); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("component out of range: %v", err)
	}
	v.Close()
	if _, err := AppendValues([]int64(nil), v, 0, 0); !errors.Is(err, ErrClosed) {
		t.Errorf("closed value: %v", err)
	}
}

// Next fetches each step's tensor infos with it (from the second step on), and AppendValues
// then reads host values straight from them: the same values as through a Tensor, the same
// errors, and ErrClosed once the step is gone.
func TestAppendValuesOfNextStepsReadFromTheirInfos(t *testing.T) {
	dist := must(cpuStrategy(t, 2).DistributeDataset(rangeBatch(t, 40, 4, nil), nil))
	it := must(dist.Iterator())
	defer it.Close()
	var all []int64
	var previous *PerReplica
	for step := 0; it.Next(); step++ {
		v := it.Value()
		if step > 0 && v.infos == nil {
			t.Fatalf("step %d has no infos: AppendValues would need a cgo call", step)
		}
		if previous != nil {
			if _, err := AppendValues([]int64(nil), previous, 0, 0); !errors.Is(err, ErrClosed) {
				t.Errorf("step %d's previous step: %v, want ErrClosed", step, err)
			}
		}
		for r := 0; r < v.Len(); r++ {
			got := must(AppendValues([]int64{-1}, v, r, 0))
			tensor := must(v.Tensor(r, 0))
			want := append([]int64{-1}, must(tensor.Int64s())...)
			tensor.Close()
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("step %d replica %d: %v, through a Tensor %v", step, r, got, want)
			}
			all = append(all, got[1:]...)
		}
		if _, err := AppendValues([]float64(nil), v, 0, 0); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("step %d, wrong dtype: %v", step, err)
		}
		if _, err := AppendValues([]int64(nil), v, v.Len(), 0); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("step %d, replica out of range: %v", step, err)
		}
		if _, err := AppendValues([]int64(nil), v, 0, 1); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("step %d, component out of range: %v", step, err)
		}
		previous = v
	}
	if it.Err() != nil || len(all) != 40 || all[0] != 0 || all[39] != 39 {
		t.Errorf("read %v (%v)", all, it.Err())
	}
}
