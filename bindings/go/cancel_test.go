package dinput

import (
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
