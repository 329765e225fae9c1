package dinput

import (
	"fmt"
	"strings"
	"testing"
)

// must returns v, or panics on an error (failing the test with a stack trace). The tests use
// it for steps whose failure makes the rest meaningless; Go's multi-value call rules leave
// no room for a testing.TB argument next to (v, err).
func must[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprintf("unexpected error: %v", err))
	}
	return v
}

// formatInt64s formats values like the spec's tables: [0,1].
func formatInt64s(v []int64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprint(x)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// formatStep formats component `component` of every replica of a step: "[0,1] | [2,3]".
func formatStep(t testing.TB, step *PerReplica, component int) string {
	t.Helper()
	parts := make([]string, step.Len())
	for r := range parts {
		tensor := must(step.Tensor(r, component))
		switch tensor.DType() {
		case Float32:
			parts[r] = fmt.Sprint(must(tensor.Float32s()))
		default:
			parts[r] = formatInt64s(must(tensor.Int64s()))
		}
		tensor.Close()
	}
	return strings.Join(parts, " | ")
}

// allSteps runs a distributed iterator to its end and formats every step, joined by " ; ".
func allSteps(t testing.TB, it *DistributedIterator) string {
	t.Helper()
	var steps []string
	for it.Next() {
		steps = append(steps, formatStep(t, it.Value(), 0))
	}
	if err := it.Err(); err != nil {
		t.Fatalf("iteration failed: %v", err)
	}
	return strings.Join(steps, " ; ")
}

// cpuStrategy returns a strategy of n CPU replicas.
func cpuStrategy(t testing.TB, n int) *Strategy {
	t.Helper()
	devices := make([]string, n)
	for i := range devices {
		devices[i] = fmt.Sprintf("CPU:%d", i)
	}
	return must(NewStrategy(devices...))
}

// rangeBatch returns range(n).batch(b), optionally with an auto-shard policy.
func rangeBatch(t testing.TB, n, b int64, policy *AutoShardPolicy) *Dataset {
	t.Helper()
	r := must(Range(0, n, 1))
	defer r.Close()
	ds := must(r.Batch(b, nil))
	if policy == nil {
		return ds
	}
	defer ds.Close()
	return must(ds.WithOptions(Options{AutoShardPolicy: *policy}))
}

// elementsOf runs a plain iterator and returns component 0 of every element as int64s.
func elementsOf(t testing.TB, ds *Dataset) []string {
	t.Helper()
	it := must(ds.Iterator())
	defer it.Close()
	var out []string
	for it.Next() {
		tensor := must(it.Value().Tensor(0))
		out = append(out, formatInt64s(must(tensor.Int64s())))
		tensor.Close()
	}
	if err := it.Err(); err != nil {
		t.Fatalf("iteration failed: %v", err)
	}
	return out
}

// scalarElement returns an element of one int64 scalar (handy in generators and maps).
func scalarElement(t testing.TB, v int64) *Element {
	t.Helper()
	s := must(NewScalar(v))
	defer s.Close()
	return must(NewElement(s))
}
