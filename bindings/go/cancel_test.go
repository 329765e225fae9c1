package dinput

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A GetNext blocked on a slow map function returns ErrCancelled promptly after Cancel from
// another goroutine, and Close does not wait for the map function.
func TestCancelBlockedGetNext(t *testing.T) {
	var release, inside atomic.Bool
	ds := must(must(Range(0, 100, 1)).Map(func(in *Element) (*Element, error) {
		inside.Store(true)
		for !release.Load() {
			time.Sleep(time.Millisecond)
		}
		return in, nil
	}, &MapOptions{NumParallelCalls: 2}))
	defer ds.Close()
	it := must(ds.Iterator())
	type result struct {
		err error
		at  time.Time
	}
	done := make(chan result)
	go func() {
		_, err := it.GetNext()
		done <- result{err, time.Now()}
	}()
	for !inside.Load() {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	cancelledAt := time.Now()
	if err := it.Cancel(); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if !errors.Is(r.err, ErrCancelled) || !strings.Contains(r.err.Error(), "cancelled") {
		t.Fatalf("GetNext after Cancel: %v", r.err)
	}
	if d := r.at.Sub(cancelledAt); d > 500*time.Millisecond {
		t.Errorf("GetNext returned %v after Cancel", d)
	}
	if _, err := it.GetNext(); !errors.Is(err, ErrCancelled) {
		t.Errorf("a later GetNext: %v", err)
	}
	if err := it.Cancel(); err != nil {
		t.Errorf("a second Cancel: %v", err)
	}
	start := time.Now()
	it.Close()
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("Close waited %v for the blocked map function", d)
	}
	release.Store(true)
}

// Close from another goroutine unblocks a GetNext waiting for data.
func TestCloseUnblocksGetNext(t *testing.T) {
	var release atomic.Bool
	defer release.Store(true)
	ds := must(must(must(Range(0, 100, 1)).Map(func(in *Element) (*Element, error) {
		for !release.Load() {
			time.Sleep(time.Millisecond)
		}
		return in, nil
	}, nil)).Prefetch(1))
	defer ds.Close()
	it := must(ds.Iterator())
	done := make(chan error)
	go func() {
		_, err := it.GetNext()
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	it.Close()
	select {
	case err := <-done:
		if !errors.Is(err, ErrCancelled) {
			t.Errorf("GetNext during Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("GetNext still blocked after Close")
	}
}

// Cancelling one worker's distributed iterator fails the other worker's waiting step at once.
func TestCancelDistributedIteratorReleasesOtherWorkers(t *testing.T) {
	collective := must(NewInProcessCollective(2, time.Minute))
	defer collective.Close()
	batched := must(must(Range(0, 16, 1)).Batch(2, nil))
	defer batched.Close()
	var its [2]*DistributedIterator
	for w := 0; w < 2; w++ {
		strategy := must(NewMultiWorkerStrategy(collective, w, "CPU:0"))
		defer strategy.Close()
		dist := must(strategy.DistributeDataset(batched, nil))
		defer dist.Close()
		its[w] = must(dist.Iterator())
		defer its[w].Close()
	}
	done := make(chan error)
	go func() {
		_, err := its[1].GetNext()
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	if err := its[0].Cancel(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, ErrCancelled) || !strings.Contains(err.Error(), "worker 0 cancelled") {
			t.Errorf("worker 1's step: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("worker 1 still waiting after worker 0 cancelled")
	}
}

// Close of a strategy from another goroutine does not wait for a Run in progress (which
// nothing can cancel): it returns at once, the Run finishes with its own result, and the
// strategy reads as closed afterwards.
func TestCloseDoesNotWaitForCall(t *testing.T) {
	s := cpuStrategy(t, 2)
	var release, inside atomic.Bool
	defer release.Store(true)
	done := make(chan error)
	go func() {
		v, err := s.Run(func(ctx ReplicaContext, args *Element) (*Element, error) {
			inside.Store(true)
			for !release.Load() {
				time.Sleep(time.Millisecond)
			}
			x, err := NewScalar(int64(ctx.ReplicaIDInSyncGroup))
			if err != nil {
				return nil, err
			}
			defer x.Close()
			return NewElement(x)
		}, nil)
		if err == nil {
			v.Close()
		}
		done <- err
	}()
	for !inside.Load() {
		time.Sleep(time.Millisecond)
	}
	closed := make(chan struct{})
	go func() {
		s.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close waited for the Run in progress")
	}
	if _, err := s.Run(func(ReplicaContext, *Element) (*Element, error) { return nil, nil }, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Run after Close: %v", err)
	}
	release.Store(true)
	if err := <-done; err != nil {
		t.Errorf("the Run that Close overlapped: %v", err)
	}
}

// blockedDataset is Range(0, 100) behind a map that blocks until release is set; inside is
// set once the map runs. The map runs on library threads (parallel), so a call waiting for
// it can be cancelled; a sequential map runs on the caller's own thread, inside GetNext,
// and no cancellation can interrupt a Go function there.
func blockedDataset(t *testing.T, release, inside *atomic.Bool) *Dataset {
	t.Helper()
	return must(must(Range(0, 100, 1)).Map(func(in *Element) (*Element, error) {
		inside.Store(true)
		for !release.Load() {
			time.Sleep(time.Millisecond)
		}
		return in, nil
	}, &MapOptions{NumParallelCalls: 2}))
}

// Cancelling the context of a GetNextContext blocked in a slow map function returns
// context.Canceled promptly; the iterator is cancelled for good.
func TestGetNextContextCancel(t *testing.T) {
	var release, inside atomic.Bool
	defer release.Store(true)
	ds := blockedDataset(t, &release, &inside)
	defer ds.Close()
	it := must(ds.Iterator())
	defer it.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		v   *Element
		err error
		at  time.Time
	}
	done := make(chan result, 1)
	go func() {
		v, err := it.GetNextContext(ctx)
		done <- result{v, err, time.Now()}
	}()
	for !inside.Load() {
		time.Sleep(time.Millisecond)
	}
	cancelledAt := time.Now()
	cancel()
	select {
	case r := <-done:
		if r.v != nil || r.err != context.Canceled {
			t.Errorf("GetNextContext after cancel: %v, %v", r.v, r.err)
		}
		if d := r.at.Sub(cancelledAt); d > 500*time.Millisecond {
			t.Errorf("GetNextContext returned %v after cancel", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("GetNextContext still blocked after its context was cancelled")
	}
	if _, err := it.GetNext(); !errors.Is(err, ErrCancelled) {
		t.Errorf("GetNext after the context gave up: %v", err)
	}
}

// A deadline ends NextContext with context.DeadlineExceeded from Err.
func TestNextContextDeadline(t *testing.T) {
	var release, inside atomic.Bool
	defer release.Store(true)
	ds := blockedDataset(t, &release, &inside)
	defer ds.Close()
	it := must(ds.Iterator())
	defer it.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	if it.NextContext(ctx) {
		t.Fatal("NextContext produced an element from a blocked pipeline")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("NextContext returned after %v for a 50ms deadline", d)
	}
	if err := it.Err(); err != context.DeadlineExceeded {
		t.Errorf("Err after the deadline: %v", err)
	}
	if it.NextContext(context.Background()) {
		t.Error("NextContext went on after the deadline stopped the loop")
	}
}

// A context done before the call returns its error without cancelling the iterator; a
// context that is never done iterates everything.
func TestContextDoneBeforeAndNever(t *testing.T) {
	ds := must(Range(0, 5, 1))
	defer ds.Close()
	it := must(ds.Iterator())
	defer it.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if v, err := it.GetNextContext(ctx); v != nil || err != context.Canceled {
		t.Errorf("GetNextContext with a cancelled context: %v, %v", v, err)
	}
	live, stop := context.WithCancel(context.Background())
	defer stop()
	var got []int64
	for _, c := range []context.Context{context.Background(), live} {
		for i := 0; i < 2 && it.NextContext(c); i++ {
			got = append(got, must(must(it.Value().Tensor(0)).Int64s())...)
		}
	}
	for it.NextContext(live) {
		got = append(got, must(must(it.Value().Tensor(0)).Int64s())...)
	}
	if it.Err() != nil || formatInt64s(got) != "[0,1,2,3,4]" {
		t.Errorf("NextContext: %v (%v)", got, it.Err())
	}
}

// A distributed step waiting for another worker returns context.Canceled once its context
// is cancelled.
func TestDistributedGetNextContext(t *testing.T) {
	collective := must(NewInProcessCollective(2, time.Minute))
	defer collective.Close()
	batched := must(must(Range(0, 16, 1)).Batch(2, nil))
	defer batched.Close()
	var its [2]*DistributedIterator
	for w := 0; w < 2; w++ {
		strategy := must(NewMultiWorkerStrategy(collective, w, "CPU:0"))
		defer strategy.Close()
		dist := must(strategy.DistributeDataset(batched, nil))
		defer dist.Close()
		its[w] = must(dist.Iterator())
		defer its[w].Close()
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		ok := its[1].NextContext(ctx)
		if ok {
			done <- errors.New("a step without worker 0")
			return
		}
		done <- its[1].Err()
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err != context.Canceled {
			t.Errorf("worker 1's step: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("worker 1 still waiting after its context was cancelled")
	}
}

// Close from another goroutine while Next waits for data: Next returns false, and neither
// call waits for the other or races on the current value (run with -race).
func TestCloseDuringNext(t *testing.T) {
	var release, inside atomic.Bool
	defer release.Store(true)
	ds := blockedDataset(t, &release, &inside)
	defer ds.Close()
	it := must(ds.Iterator())
	done := make(chan bool, 1)
	go func() { done <- it.Next() }()
	for !inside.Load() {
		time.Sleep(time.Millisecond)
	}
	it.Close()
	select {
	case ok := <-done:
		if ok || it.Value() != nil || !errors.Is(it.Err(), ErrCancelled) {
			t.Errorf("Next during Close: %v, value %v, err %v", ok, it.Value(), it.Err())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Next still blocked after Close")
	}
}
