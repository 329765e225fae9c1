package dinput

import (
	"encoding/json"
	"strings"
	"testing"
)

type stageStats struct {
	Name     string `json:"name"`
	Elements int64  `json:"elements"`
	Bytes    int64  `json:"bytes"`
}

type pipelineStats struct {
	Schema string       `json:"schema"`
	Stages []stageStats `json:"stages"`
}

func TestStatistics(t *testing.T) {
	r := must(Range(0, 1000, 1))
	taken := must(r.Take(7))
	it := must(taken.Iterator())
	n := 0
	for it.Next() {
		n++
	}
	if it.Err() != nil || n != 7 {
		t.Fatalf("took %d, err %v", n, it.Err())
	}
	text := must(it.Statistics())
	var doc pipelineStats
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatalf("statistics are not JSON: %v: %s", err, text)
	}
	found := false
	for _, s := range doc.Stages {
		if s.Name == "take" {
			found = true
			if s.Elements != 7 || s.Bytes != 56 {
				t.Errorf("take stage %+v", s)
			}
		}
	}
	if doc.Schema != "dinput.statistics/1" || !found {
		t.Errorf("statistics %s", text)
	}

	traced := must(taken.WithOptions(Options{TraceEvents: 100}))
	it2 := must(traced.Iterator())
	for it2.Next() {
	}
	trace := must(it2.Trace())
	if !strings.Contains(trace, "get_next wait") || !strings.Contains(trace, "traceEvents") {
		t.Errorf("trace %s", trace)
	}
	off := must(taken.WithOptions(Options{DisableStatistics: true}))
	it3 := must(off.Iterator())
	for it3.Next() {
	}
	if doc := must(it3.Statistics()); !strings.Contains(doc, `"stages":[]`) {
		t.Errorf("statistics off: %s", doc)
	}
	if _, err := taken.WithOptions(Options{TraceEvents: -1}); err == nil {
		t.Errorf("TraceEvents -1 accepted")
	}
}
