package dinput

import (
	"encoding/binary"
	"reflect"
	"strings"
	"testing"
)

// protoField appends a length-delimited field.
func protoField(b []byte, field int, payload []byte) []byte {
	b = binary.AppendUvarint(b, uint64(field<<3|2))
	b = binary.AppendUvarint(b, uint64(len(payload)))
	return append(b, payload...)
}

// exampleRecord serializes an Example with int64 feature "id" (unless id < 0) and bytes
// feature "tags".
func exampleRecord(id int64, tags ...string) []byte {
	var features []byte
	entry := func(key string, feature []byte) {
		features = protoField(features, 1, protoField(protoField(nil, 1, []byte(key)), 2, feature))
	}
	if id >= 0 {
		entry("id", protoField(nil, 3, protoField(nil, 1, binary.AppendUvarint(nil, uint64(id)))))
	}
	var list []byte
	for _, t := range tags {
		list = protoField(list, 1, []byte(t))
	}
	entry("tags", protoField(nil, 1, list))
	return protoField(nil, 1, features)
}

func TestParseExample(t *testing.T) {
	records := [][]byte{exampleRecord(1, "a"), exampleRecord(2), exampleRecord(-1, "b", "c")}
	tensor := must(NewBytesTensor([]int64{3}, records))
	src := must(FromTensorSlices(must(NewElement(tensor))))
	defer src.Close()
	def := must(NewScalar(int64(-7)))
	id := FixedLenFeature("id", nil, Int64)
	id.Default = def
	features := Features{VarLenFeature("tags", Bytes), id}

	batched := must(must(src.Batch(2, nil)).ParseExample(features, 0))
	if spec := must(batched.ElementSpec()); spec.String() != "(int64[?], bytes[?], int64[?])" {
		t.Errorf("spec %v", spec)
	}
	it := must(batched.Iterator())
	var ids, splits []int64
	var tags []string
	for it.Next() {
		ts := must(it.Value().Tensors())
		ids = append(ids, must(ts[0].Int64s())...)
		for _, b := range must(ts[1].Bytes()) {
			tags = append(tags, string(b))
		}
		splits = append(splits, must(ts[2].Int64s())...)
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	it.Close()
	if !reflect.DeepEqual(ids, []int64{1, 2, -7}) || !reflect.DeepEqual(tags, []string{"a", "b", "c"}) ||
		!reflect.DeepEqual(splits, []int64{0, 1, 1, 0, 2}) {
		t.Errorf("ids %v tags %v splits %v", ids, tags, splits)
	}

	single := must(src.ParseSingleExample(Features{FixedLenFeature("id", nil, Int64)}, 0))
	it = must(single.Iterator())
	for it.Next() {
	}
	if err := it.Err(); err == nil || !strings.Contains(err.Error(), "record 2 of the input") ||
		!strings.Contains(err.Error(), "'id'") {
		t.Errorf("missing feature without default: %v", err)
	}
	it.Close()
	if _, err := src.ParseExample(features, 0); err == nil || !strings.Contains(err.Error(), "bytes vector") {
		t.Errorf("scalar input to ParseExample: %v", err)
	}
	if _, err := src.ParseSequenceExample(nil, Features{FixedLenFeature("x", nil, Int64)}, 0); err == nil {
		t.Error("a FixedLenFeature as a feature list was accepted")
	}
	seq := must(src.ParseSequenceExample(Features{VarLenFeature("tags", Bytes)}, nil, 0))
	if spec := must(seq.ElementSpec()); spec.String() != "(bytes[?])" {
		t.Errorf("sequence spec %v", spec)
	}
}
