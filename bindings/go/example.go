package dinput

/*
#include "shim.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// FeatureKind says how a feature of a serialized tf.train.Example is read: tf.io's
// FixedLenFeature, VarLenFeature or FixedLenSequenceFeature.
type FeatureKind int

const (
	FixedLen FeatureKind = iota
	VarLen
	FixedLenSequence
)

// Feature is one entry of a feature spec (docs/examples.md): the key, how it is read, its
// dtype (Int64, Float32 or Bytes), the shape of one record's value (or of one step of a
// sequence), and an optional default (FixedLen) or padding value (FixedLenSequence).
type Feature struct {
	Key          string
	Kind         FeatureKind
	DType        DType
	Shape        []int64
	AllowMissing bool
	Default      *Tensor
}

// FixedLenFeature is tf.io.FixedLenFeature(shape, dtype); set Default for records that
// lack the key.
func FixedLenFeature(key string, shape []int64, dtype DType) Feature {
	return Feature{Key: key, Kind: FixedLen, DType: dtype, Shape: shape}
}

// VarLenFeature is tf.io.VarLenFeature(dtype): parsed as ragged components (the values, and
// in a batch their int64 row splits).
func VarLenFeature(key string, dtype DType) Feature {
	return Feature{Key: key, Kind: VarLen, DType: dtype}
}

// FixedLenSequenceFeature is tf.io.FixedLenSequenceFeature(shape, dtype, allowMissing).
func FixedLenSequenceFeature(key string, shape []int64, dtype DType, allowMissing bool) Feature {
	return Feature{Key: key, Kind: FixedLenSequence, DType: dtype, Shape: shape, AllowMissing: allowMissing}
}

// Features is a feature spec. The parsed components come in the order of the keys.
type Features []Feature

// toC builds the C feature spec (nil for an empty one when allowEmpty); the caller frees it.
func (fs Features) toC(allowEmpty bool) (*C.dinput_feature_spec_t, error) {
	if len(fs) == 0 && allowEmpty {
		return nil, nil
	}
	var p *C.dinput_feature_spec_t
	if err := call(func() C.dinput_status_t { return C.dinput_feature_spec_new(&p) }); err != nil {
		return nil, err
	}
	for _, f := range fs {
		if err := f.addTo(p); err != nil {
			C.dinput_feature_spec_free(p)
			return nil, err
		}
	}
	return p, nil
}

func (f Feature) addTo(p *C.dinput_feature_spec_t) error {
	key := C.CString(f.Key)
	defer C.free(unsafe.Pointer(key))
	shape := f.Shape
	defer runtime.KeepAlive(shape)
	add := func(def *C.dinput_tensor_t) error {
		return call(func() C.dinput_status_t {
			switch f.Kind {
			case FixedLen:
				return C.dinput_feature_spec_add_fixed_len(p, key, C.dinput_dtype_t(f.DType), shapePtr(shape), C.int(len(shape)), def)
			case VarLen:
				return C.dinput_feature_spec_add_var_len(p, key, C.dinput_dtype_t(f.DType))
			default:
				return C.dinput_feature_spec_add_fixed_len_sequence(p, key, C.dinput_dtype_t(f.DType), shapePtr(shape), C.int(len(shape)), cBool(f.AllowMissing), def)
			}
		})
	}
	if f.Kind < FixedLen || f.Kind > FixedLenSequence {
		return invalidArgument("Feature %q: unknown kind %d", f.Key, int(f.Kind))
	}
	if f.Default == nil {
		return add(nil)
	}
	return use(f.Default, func(t *C.dinput_tensor_t) error { return add(t) })
}

// ParseExample parses batches of serialized tf.train.Examples: component `component` of
// each element is a bytes vector (as Batch makes it); the parsed components take its place.
func (d *Dataset) ParseExample(features Features, component int64) (*Dataset, error) {
	spec, err := features.toC(false)
	if err != nil {
		return nil, err
	}
	defer C.dinput_feature_spec_free(spec)
	return d.derive(func(out **C.dinput_dataset_t, in *C.dinput_dataset_t) C.dinput_status_t {
		return C.dinput_dataset_parse_example(out, in, spec, C.int64_t(component))
	})
}

// ParseSingleExample parses one serialized tf.train.Example (a bytes scalar) per element.
func (d *Dataset) ParseSingleExample(features Features, component int64) (*Dataset, error) {
	spec, err := features.toC(false)
	if err != nil {
		return nil, err
	}
	defer C.dinput_feature_spec_free(spec)
	return d.derive(func(out **C.dinput_dataset_t, in *C.dinput_dataset_t) C.dinput_status_t {
		return C.dinput_dataset_parse_single_example(out, in, spec, C.int64_t(component))
	})
}

// ParseSequenceExample parses serialized tf.train.SequenceExamples (a bytes scalar, or a
// vector for a batch): the context features, then the feature lists.
func (d *Dataset) ParseSequenceExample(context, sequence Features, component int64) (*Dataset, error) {
	c, err := context.toC(true)
	if err != nil {
		return nil, err
	}
	defer C.dinput_feature_spec_free(c)
	s, err := sequence.toC(true)
	if err != nil {
		return nil, err
	}
	defer C.dinput_feature_spec_free(s)
	return d.derive(func(out **C.dinput_dataset_t, in *C.dinput_dataset_t) C.dinput_status_t {
		return C.dinput_dataset_parse_sequence_example(out, in, c, s, C.int64_t(component))
	})
}
