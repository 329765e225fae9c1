package dinput

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// useAll runs f with the handles of every dataset held (none may be closed or nil).
func useAll(datasets []*Dataset, f func(ps []*C.dinput_dataset_t) error) error {
	ps := make([]*C.dinput_dataset_t, 0, len(datasets))
	var rec func(i int) error
	rec = func(i int) error {
		if i == len(datasets) {
			return f(ps)
		}
		if datasets[i] == nil {
			return closedError("dataset")
		}
		return use(datasets[i], func(p *C.dinput_dataset_t) error {
			ps = append(ps, p)
			return rec(i + 1)
		})
	}
	return rec(0)
}

// withDatasetArray builds a dataset from a C array of the datasets' handles (in C memory).
func withDatasetArray(datasets []*Dataset, f func(out **C.dinput_dataset_t, arr **C.dinput_dataset_t, n C.size_t) C.dinput_status_t) (*Dataset, error) {
	var ds *Dataset
	err := useAll(datasets, func(ps []*C.dinput_dataset_t) (err error) {
		n := len(ps)
		arr := (**C.dinput_dataset_t)(C.calloc(C.size_t(n+1), C.size_t(unsafe.Sizeof(uintptr(0)))))
		defer C.free(unsafe.Pointer(arr))
		copy(unsafe.Slice(arr, n+1), ps)
		ds, err = newDataset(func(out **C.dinput_dataset_t) C.dinput_status_t { return f(out, arr, C.size_t(n)) })
		return err
	})
	return ds, err
}

// Zip returns elements made of one element of each dataset, their components one after the
// other in a single flat tuple. It ends with the shortest dataset.
func Zip(datasets ...*Dataset) (*Dataset, error) {
	return withDatasetArray(datasets, func(out **C.dinput_dataset_t, arr **C.dinput_dataset_t, n C.size_t) C.dinput_status_t {
		return C.dinput_dataset_zip(out, arr, n)
	})
}

// Concatenate returns d's elements followed by other's. Their specs must have the same
// number of components, dtypes and ranks.
func (d *Dataset) Concatenate(other *Dataset) (*Dataset, error) {
	return withDatasetArray([]*Dataset{d, other}, func(out **C.dinput_dataset_t, arr **C.dinput_dataset_t, _ C.size_t) C.dinput_status_t {
		ps := unsafe.Slice(arr, 2)
		return C.dinput_dataset_concatenate(out, ps[0], ps[1])
	})
}

// SampleFromDatasets picks each element from one of the datasets at random, with
// probabilities proportional to weights (nil: equal). seed >= 0 gives the same picks on every
// run; a negative seed draws one per dataset. stopOnEmptyDataset ends the result at the first
// pick of an exhausted dataset; otherwise picks go on among the others.
func SampleFromDatasets(datasets []*Dataset, weights []float64, seed int64, stopOnEmptyDataset bool) (*Dataset, error) {
	if weights != nil && len(weights) != len(datasets) {
		return nil, &Error{Code: InvalidArgument, Message: "SampleFromDatasets: one weight per dataset is required"}
	}
	var w *C.double
	if len(weights) > 0 {
		w = (*C.double)(C.malloc(C.size_t(len(weights)) * C.size_t(unsafe.Sizeof(C.double(0)))))
		defer C.free(unsafe.Pointer(w))
		for i, x := range weights {
			unsafe.Slice(w, len(weights))[i] = C.double(x)
		}
	}
	return withDatasetArray(datasets, func(out **C.dinput_dataset_t, arr **C.dinput_dataset_t, n C.size_t) C.dinput_status_t {
		return C.dinput_dataset_sample_from_datasets(out, arr, n, w, C.int64_t(seed), cBool(stopOnEmptyDataset))
	})
}

// ChooseFromDatasets takes each element from datasets[i], i being the next element of
// selector (int64 scalars). An index outside the datasets fails iteration with
// InvalidArgument naming it.
func ChooseFromDatasets(datasets []*Dataset, selector *Dataset, stopOnEmptyDataset bool) (*Dataset, error) {
	all := append([]*Dataset{selector}, datasets...)
	return withDatasetArray(all, func(out **C.dinput_dataset_t, arr **C.dinput_dataset_t, n C.size_t) C.dinput_status_t {
		ps := unsafe.Slice(arr, int(n))
		return C.dinput_dataset_choose_from_datasets(out, &ps[1], n-1, ps[0], cBool(stopOnEmptyDataset))
	})
}

// Cache keeps the elements of the first complete pass and delivers them to later passes: in
// memory when filename is "", else in that file, which a later run reads back. A file
// written by another pipeline is FailedPrecondition; a damaged one DataLoss.
func (d *Dataset) Cache(filename string) (*Dataset, error) {
	var cname *C.char
	if filename != "" {
		cname = C.CString(filename)
		defer C.free(unsafe.Pointer(cname))
	}
	return d.derive(func(out **C.dinput_dataset_t, in *C.dinput_dataset_t) C.dinput_status_t {
		return C.dinput_dataset_cache(out, in, cname)
	})
}

// IgnoreErrors drops the elements whose making failed with InvalidArgument or DataLoss and
// goes on; Iterator.Statistic("errors_ignored") counts them. Other errors pass.
func (d *Dataset) IgnoreErrors(logWarning bool) (*Dataset, error) {
	ds, err := d.derive(func(out **C.dinput_dataset_t, in *C.dinput_dataset_t) C.dinput_status_t {
		return C.dinput_dataset_ignore_errors(out, in, cBool(logWarning))
	})
	runtime.KeepAlive(d)
	return ds, err
}
