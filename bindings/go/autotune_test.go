package dinput

import (
	"strings"
	"testing"
)

// Options.RAMBudget reaches the autotuner (its budget shows in the statistics, with the
// prefetch's knob) and a negative budget is refused.
func TestRAMBudget(t *testing.T) {
	r := must(Range(0, 50, 1))
	p := must(r.Prefetch(Autotune))
	budgeted := must(p.WithOptions(Options{RAMBudget: 12345}))
	it := must(budgeted.Iterator())
	n := 0
	for it.Next() {
		n++
	}
	if it.Err() != nil || n != 50 {
		t.Fatalf("took %d, err %v", n, it.Err())
	}
	doc := must(it.Statistics())
	if !strings.Contains(doc, `"ram_budget":12345`) || !strings.Contains(doc, `"knob":"buffer_size"`) {
		t.Errorf("statistics %s", doc)
	}
	if _, err := p.WithOptions(Options{RAMBudget: -1}); err == nil || !strings.Contains(err.Error(), "'bytes'") {
		t.Errorf("RAMBudget -1: %v", err)
	}
}
