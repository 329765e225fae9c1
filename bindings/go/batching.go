package dinput

/*
#include "shim.h"
*/
import "C"

import "runtime"

// PaddedBatchOptions tune PaddedBatch and BucketBySequenceLength; the zero value (or nil)
// pads every unknown dimension to the batch's longest row, with zeros (empty strings for
// bytes), and keeps a short last batch.
type PaddedBatchOptions struct {
	// PaddedShapes gives one shape per component: a dimension of UnknownDim pads to the
	// batch's longest, a known one to that size. nil: the input spec's shapes.
	PaddedShapes [][]int64
	// PaddingValues holds one scalar per component, of its dtype; nil: zeros.
	PaddingValues *Element
	// DropRemainder drops a last batch shorter than n (for buckets: the partly filled
	// buckets at the end of the input).
	DropRemainder bool
}

// withPaddedOptions builds the C options for d's elements and calls f with them.
func (d *Dataset) withPaddedOptions(opts *PaddedBatchOptions, f func(*C.dinput_padded_batch_options_t) (*Dataset, error)) (*Dataset, error) {
	if opts == nil {
		opts = &PaddedBatchOptions{}
	}
	var copts *C.dinput_padded_batch_options_t
	if err := call(func() C.dinput_status_t { return C.dinput_padded_batch_options_new(&copts) }); err != nil {
		return nil, err
	}
	defer C.dinput_padded_batch_options_free(copts)
	if err := call(func() C.dinput_status_t {
		return C.dinput_padded_batch_options_set_drop_remainder(copts, cBool(opts.DropRemainder))
	}); err != nil {
		return nil, err
	}
	if opts.PaddedShapes != nil {
		spec, err := d.ElementSpec()
		if err != nil {
			return nil, err
		}
		if len(opts.PaddedShapes) != len(spec) {
			return nil, invalidArgument("PaddedShapes has %d shapes but the elements have %d components", len(opts.PaddedShapes), len(spec))
		}
		shapes := make(Spec, len(spec))
		for i, s := range opts.PaddedShapes {
			shapes[i] = TensorSpec{DType: spec[i].DType, Shape: s}
		}
		cspec, err := shapes.toC()
		if err != nil {
			return nil, err
		}
		defer C.dinput_spec_free(cspec)
		if err := call(func() C.dinput_status_t {
			return C.dinput_padded_batch_options_set_padded_shapes(copts, cspec)
		}); err != nil {
			return nil, err
		}
	}
	if opts.PaddingValues != nil {
		if err := use(opts.PaddingValues, func(p *C.dinput_element_t) error {
			return call(func() C.dinput_status_t { return C.dinput_padded_batch_options_set_padding_values(copts, p) })
		}); err != nil {
			return nil, err
		}
	}
	return f(copts)
}

// PaddedBatch combines n consecutive elements into one like Batch, padding each component
// to one shape first (tf.data's padded_batch). An element larger than its padded shape
// fails the iteration with InvalidArgument naming the component and the element. A batch
// for DistributeDataset: n is the global batch size.
func (d *Dataset) PaddedBatch(n int64, opts *PaddedBatchOptions) (*Dataset, error) {
	return d.withPaddedOptions(opts, func(copts *C.dinput_padded_batch_options_t) (*Dataset, error) {
		return d.derive(func(out **C.dinput_dataset_t, in *C.dinput_dataset_t) C.dinput_status_t {
			return C.dinput_dataset_padded_batch(out, in, C.int64_t(n), copts)
		})
	})
}

// BucketBySequenceLength groups elements by the length (first dimension) of component
// lengthComponent into padded batches: bucket i takes lengths in [boundaries[i-1],
// boundaries[i]) and goes out as soon as it holds batchSizes[i] elements (one size per
// bucket, len(boundaries)+1); at the end of the input the partly filled buckets go out in
// bucket order. padToBucketBoundary pads unknown dimensions to the bucket's boundary - 1.
func (d *Dataset) BucketBySequenceLength(lengthComponent int, boundaries, batchSizes []int64, padToBucketBoundary bool, opts *PaddedBatchOptions) (*Dataset, error) {
	if lengthComponent < 0 {
		return nil, invalidArgument("BucketBySequenceLength: lengthComponent %d is negative", lengthComponent)
	}
	return d.withPaddedOptions(opts, func(copts *C.dinput_padded_batch_options_t) (*Dataset, error) {
		ds, err := d.derive(func(out **C.dinput_dataset_t, in *C.dinput_dataset_t) C.dinput_status_t {
			return C.dinput_dataset_bucket_by_sequence_length(out, in, C.size_t(lengthComponent),
				shapePtr(boundaries), C.size_t(len(boundaries)), shapePtr(batchSizes), C.size_t(len(batchSizes)),
				cBool(padToBucketBoundary), copts)
		})
		runtime.KeepAlive(boundaries)
		runtime.KeepAlive(batchSizes)
		return ds, err
	})
}

// LengthFunc gives an element's length for BucketBySequenceLengthFunc (lent for the call, as
// for MapFunc); tf.data's element_length_func.
type LengthFunc func(in *Element) (int64, error)

// BucketBySequenceLengthFunc is BucketBySequenceLength with each element's length given by
// fn rather than taken from a component. A negative length, or an error from fn, fails the
// iteration with InvalidArgument naming the element.
func (d *Dataset) BucketBySequenceLengthFunc(fn LengthFunc, boundaries, batchSizes []int64, padToBucketBoundary bool, opts *PaddedBatchOptions) (*Dataset, error) {
	if fn == nil {
		return nil, invalidArgument("BucketBySequenceLengthFunc: fn is nil")
	}
	return d.withPaddedOptions(opts, func(copts *C.dinput_padded_batch_options_t) (*Dataset, error) {
		ds, err := d.deriveWithHandle(fn, func(out **C.dinput_dataset_t, in *C.dinput_dataset_t, h C.uintptr_t) C.dinput_status_t {
			return C.dgo_dataset_bucket_by_sequence_length_fn(out, in, h,
				shapePtr(boundaries), C.size_t(len(boundaries)), shapePtr(batchSizes), C.size_t(len(batchSizes)),
				cBool(padToBucketBoundary), copts)
		})
		runtime.KeepAlive(boundaries)
		runtime.KeepAlive(batchSizes)
		return ds, err
	})
}

// Window returns sliding windows, each one element whose components stack the window's
// elements: window i holds input elements i*shift + k*stride, k < size (fewer at the end
// unless dropRemainder). tf.data's window(size, shift, stride, drop_remainder) followed by
// flat_map(lambda *w: zip(w).batch(size)).
func (d *Dataset) Window(size, shift, stride int64, dropRemainder bool) (*Dataset, error) {
	return d.derive(func(out **C.dinput_dataset_t, in *C.dinput_dataset_t) C.dinput_status_t {
		return C.dinput_dataset_window(out, in, C.int64_t(size), C.int64_t(shift), C.int64_t(stride), cBool(dropRemainder))
	})
}

// FlatMap calls fn for each element and reads the dataset it returns to its end before the
// next one (tf.data's flat_map: Interleave with a cycle of one).
func (d *Dataset) FlatMap(fn InterleaveFunc, outSpec Spec) (*Dataset, error) {
	if fn == nil {
		return nil, invalidArgument("FlatMap: fn is nil")
	}
	cspec, err := outSpec.toC()
	if err != nil {
		return nil, err
	}
	defer C.dinput_spec_free(cspec)
	return d.deriveWithHandle(fn, func(out **C.dinput_dataset_t, in *C.dinput_dataset_t, h C.uintptr_t) C.dinput_status_t {
		return C.dgo_dataset_flat_map(out, in, cspec, h)
	})
}

// Reader is a file reader as a value: what InterleaveReader and FlatMapReader run on each
// file name of their input, with no Go callback.
type Reader struct {
	kind                                  int // 0 records, 1 text lines, 2 fixed-length records
	records                               RecordsOptions
	recordBytes, headerBytes, footerBytes int64
}

// RecordsReader reads TFRecord files as Records does (opts nil: defaults).
func RecordsReader(opts *RecordsOptions) Reader {
	r := Reader{kind: 0}
	if opts != nil {
		r.records = *opts
	}
	return r
}

// TextLinesReader reads text files as TextLines does.
func TextLinesReader() Reader { return Reader{kind: 1} }

// FixedLengthRecordsReader reads files as FixedLengthRecords does.
func FixedLengthRecordsReader(recordBytes, headerBytes, footerBytes int64) Reader {
	return Reader{kind: 2, recordBytes: recordBytes, headerBytes: headerBytes, footerBytes: footerBytes}
}

// withReader makes the C reader (its arguments are checked there) and calls f with it.
func (r Reader) withReader(f func(*C.dinput_reader_t) (*Dataset, error)) (*Dataset, error) {
	var cr *C.dinput_reader_t
	err := call(func() C.dinput_status_t {
		switch r.kind {
		case 1:
			return C.dinput_reader_text_lines(&cr)
		case 2:
			return C.dinput_reader_fixed_length_records(&cr, C.int64_t(r.recordBytes), C.int64_t(r.headerBytes), C.int64_t(r.footerBytes))
		}
		var copts *C.dinput_records_options_t
		if st := C.dinput_records_options_new(&copts); st != C.DINPUT_OK {
			return st
		}
		defer C.dinput_records_options_free(copts)
		if st := C.dinput_records_options_set_compression(copts, C.dinput_compression_t(r.records.Compression)); st != C.DINPUT_OK {
			return st
		}
		if st := C.dinput_records_options_set_buffer_size(copts, C.int64_t(r.records.BufferSize)); st != C.DINPUT_OK {
			return st
		}
		return C.dinput_reader_records(&cr, copts)
	})
	if err != nil {
		return nil, err
	}
	defer C.dinput_reader_free(cr)
	return f(cr)
}

// InterleaveReader is Interleave over file names (bytes scalars, e.g. from ListFiles), each
// read by r: ListFiles → InterleaveReader(RecordsReader(nil)) with no Go callback. FILE
// auto-sharding splits the file list.
func (d *Dataset) InterleaveReader(r Reader, opts *InterleaveOptions) (*Dataset, error) {
	if opts == nil {
		opts = &InterleaveOptions{}
	}
	return r.withReader(func(cr *C.dinput_reader_t) (*Dataset, error) {
		return d.derive(func(out **C.dinput_dataset_t, in *C.dinput_dataset_t) C.dinput_status_t {
			return C.dgo_dataset_interleave_reader(out, in, cr, C.int64_t(opts.CycleLength), C.int64_t(opts.BlockLength),
				C.int64_t(opts.NumParallelCalls), C.int(opts.Deterministic.toC()))
		})
	})
}

// FlatMapReader reads each file named by the input whole, in order, with r.
func (d *Dataset) FlatMapReader(r Reader) (*Dataset, error) {
	return r.withReader(func(cr *C.dinput_reader_t) (*Dataset, error) {
		return d.derive(func(out **C.dinput_dataset_t, in *C.dinput_dataset_t) C.dinput_status_t {
			return C.dinput_dataset_flat_map_reader(out, in, cr)
		})
	})
}
