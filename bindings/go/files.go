package dinput

/*
#include "shim.h"
*/
import "C"

import (
	"errors"
	"runtime"
	"strconv"
	"unsafe"
)

// Compression is the compression of a record file (dinput_compression_t).
type Compression int

// The compressions. Zstd: the whole file is one zstd stream; Gzip: one gzip stream.
const (
	CompressionNone Compression = 0
	CompressionZstd Compression = 1
	CompressionGzip Compression = 2
)

func (c Compression) String() string {
	switch c {
	case CompressionNone:
		return "NONE"
	case CompressionZstd:
		return "ZSTD"
	case CompressionGzip:
		return "GZIP"
	}
	return "Compression(" + strconv.Itoa(int(c)) + ")"
}

// RecordsOptions tune Records; the zero value (or nil) reads uncompressed files with a
// buffer size the library picks.
type RecordsOptions struct {
	Compression Compression
	// BufferSize is the read buffer in bytes; 0 lets the library pick.
	BufferSize int64
}

// Records returns one bytes scalar per record of TFRecord files (the format TensorFlow's
// TFRecordDataset reads), files read in order, every record's checksums verified. A damaged
// record fails with DataLoss naming the file and offset (see Options.SkipCorruptRecords); a
// missing file matches fs.ErrNotExist. A file source for FILE auto-sharding.
func Records(files []string, opts *RecordsOptions) (*Dataset, error) {
	if opts == nil {
		opts = &RecordsOptions{}
	}
	var copts *C.dinput_records_options_t
	if err := call(func() C.dinput_status_t {
		if st := C.dinput_records_options_new(&copts); st != C.DINPUT_OK {
			return st
		}
		if st := C.dinput_records_options_set_compression(copts, C.dinput_compression_t(opts.Compression)); st != C.DINPUT_OK {
			return st
		}
		return C.dinput_records_options_set_buffer_size(copts, C.int64_t(opts.BufferSize))
	}); err != nil {
		C.dinput_records_options_free(copts)
		return nil, err
	}
	defer C.dinput_records_options_free(copts)
	arr, free := cStrings(files)
	defer free()
	return newDataset(func(out **C.dinput_dataset_t) C.dinput_status_t {
		return C.dinput_dataset_records(out, arr, C.size_t(len(files)), copts)
	})
}

// FixedLengthRecords returns one bytes scalar of recordBytes bytes per record of each file,
// after skipping headerBytes at the start and footerBytes at the end of every file. A file
// whose body is not a multiple of recordBytes fails with DataLoss. A file source.
func FixedLengthRecords(files []string, recordBytes, headerBytes, footerBytes int64) (*Dataset, error) {
	arr, free := cStrings(files)
	defer free()
	return newDataset(func(out **C.dinput_dataset_t) C.dinput_status_t {
		return C.dinput_dataset_fixed_length_records(out, arr, C.size_t(len(files)),
			C.int64_t(recordBytes), C.int64_t(headerBytes), C.int64_t(footerBytes))
	})
}

// ListFilesOptions tune ListFiles; the zero value (or nil) lists the names sorted.
type ListFilesOptions struct {
	// Shuffle shuffles the names, in a new order for each iterator (unlike tf.data, the
	// default is sorted, so that a listing is the same every run).
	Shuffle bool
	// Seeds fixes the shuffle's seed pair, as ShuffleOptions.Seeds; nil: random.
	Seeds *[2]int64
}

// ListFiles returns the names (bytes scalars) of the files matching any of the glob
// patterns, matched now; NotFound (fs.ErrNotExist) when nothing matches. A file source:
// FILE auto-sharding splits this list, so a reader fed by it through Interleave reads only
// the worker's files.
func ListFiles(patterns []string, opts *ListFilesOptions) (*Dataset, error) {
	if opts == nil {
		opts = &ListFilesOptions{}
	}
	var copts *C.dinput_list_files_options_t
	if err := call(func() C.dinput_status_t {
		if st := C.dinput_list_files_options_new(&copts); st != C.DINPUT_OK {
			return st
		}
		if opts.Seeds != nil {
			if st := C.dinput_list_files_options_set_seed(copts, C.int64_t(opts.Seeds[0]), C.int64_t(opts.Seeds[1])); st != C.DINPUT_OK {
				return st
			}
		}
		return C.dinput_list_files_options_set_shuffle(copts, cBool(opts.Shuffle))
	}); err != nil {
		C.dinput_list_files_options_free(copts)
		return nil, err
	}
	defer C.dinput_list_files_options_free(copts)
	arr, free := cStrings(patterns)
	defer free()
	return newDataset(func(out **C.dinput_dataset_t) C.dinput_status_t {
		return C.dinput_dataset_list_files(out, arr, C.size_t(len(patterns)), copts)
	})
}

// Statistic returns a counter of the iterator's work so far: "records" (records read by
// file readers), "record_bytes" (their payload bytes), "corrupt_records_skipped" and
// "corrupt_bytes_skipped" (see Options.SkipCorruptRecords), "errors_ignored" (see
// Dataset.IgnoreErrors). NotFound for other names.
func (it *Iterator) Statistic(name string) (int64, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var out C.int64_t
	err := callOn(it, func(p *C.dinput_iterator_t) C.dinput_status_t { return C.dinput_iterator_statistic(&out, p, cname) })
	return int64(out), err
}

// Statistic is Iterator.Statistic for this worker's input pipelines.
func (it *DistributedIterator) Statistic(name string) (int64, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var out C.int64_t
	err := callOn(it, func(p *C.dinput_dist_iterator_t) C.dinput_status_t {
		return C.dinput_dist_iterator_statistic(&out, p, cname)
	})
	return int64(out), err
}

// RecordWriterOptions tune OpenRecordWriter; the zero value (or nil) writes an
// uncompressed file.
type RecordWriterOptions struct {
	Compression Compression
	// Level is the compression level: 0 for the codec's default, else 1..19 (zstd) or 1..9
	// (gzip).
	Level int
	// ZstdWindowLog is, for zstd, the log2 of the window (10..31) with long-distance
	// matching, as `zstd --long=N`; 0 keeps the level's window.
	ZstdWindowLog int
}

// RecordWriter writes a TFRecord file that Records (and TensorFlow) read. The records go to
// a temporary file that Close puts at the path, so the path keeps its old contents until
// Close succeeds, and after any failure or Discard. It serves one goroutine at a time.
type RecordWriter struct {
	ref ref[C.dinput_record_writer_t]
}

func (w *RecordWriter) handle() *ref[C.dinput_record_writer_t] {
	if w == nil {
		return nil
	}
	return &w.ref
}
func (*RecordWriter) kind() string { return "RecordWriter" }

// OpenRecordWriter starts a record file at path. A missing directory matches
// fs.ErrNotExist, one that cannot be written to fs.ErrPermission.
func OpenRecordWriter(path string, opts *RecordWriterOptions) (*RecordWriter, error) {
	if opts == nil {
		opts = &RecordWriterOptions{}
	}
	var copts *C.dinput_record_writer_options_t
	if err := call(func() C.dinput_status_t {
		if st := C.dinput_record_writer_options_new(&copts); st != C.DINPUT_OK {
			return st
		}
		if st := C.dinput_record_writer_options_set_compression(copts, C.dinput_compression_t(opts.Compression)); st != C.DINPUT_OK {
			return st
		}
		if st := C.dinput_record_writer_options_set_level(copts, C.int(opts.Level)); st != C.DINPUT_OK {
			return st
		}
		return C.dinput_record_writer_options_set_zstd_window_log(copts, C.int(opts.ZstdWindowLog))
	}); err != nil {
		C.dinput_record_writer_options_free(copts)
		return nil, err
	}
	defer C.dinput_record_writer_options_free(copts)
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var out *C.dinput_record_writer_t
	if err := call(func() C.dinput_status_t { return C.dinput_record_writer_open(&out, cpath, copts) }); err != nil {
		return nil, err
	}
	w := &RecordWriter{}
	w.ref.p = out
	// A forgotten writer is freed, which closes it: what was written replaces the path.
	runtime.SetFinalizer(w, func(w *RecordWriter) { w.ref.close(freeRecordWriter) })
	return w, nil
}

func freeRecordWriter(p *C.dinput_record_writer_t) { C.dinput_record_writer_free(p) }

// Write appends one record.
func (w *RecordWriter) Write(record []byte) error {
	return callOn(w, func(p *C.dinput_record_writer_t) C.dinput_status_t {
		var data unsafe.Pointer
		if len(record) > 0 {
			data = unsafe.Pointer(&record[0])
		}
		return C.dinput_record_writer_write(p, data, C.size_t(len(record)))
	})
}

// Flush pushes buffered records to the temporary file; they appear at the path at Close.
func (w *RecordWriter) Flush() error {
	return callOn(w, func(p *C.dinput_record_writer_t) C.dinput_status_t { return C.dinput_record_writer_flush(p) })
}

// Close finishes the file and puts it at the path, reporting any error (the path is then
// unchanged), and releases the writer. Closing again (or after Discard) returns nil.
func (w *RecordWriter) Close() error {
	if w == nil {
		return nil
	}
	err := callOn(w, func(p *C.dinput_record_writer_t) C.dinput_status_t { return C.dinput_record_writer_close(p) })
	if errors.Is(err, ErrClosed) {
		return nil
	}
	w.ref.close(freeRecordWriter)
	runtime.SetFinalizer(w, nil)
	return err
}

// Discard abandons the file: the temporary is removed, the path keeps what it held before,
// and the writer is released. Use it when the records turn out to be wrong.
func (w *RecordWriter) Discard() error {
	if w == nil {
		return nil
	}
	err := callOn(w, func(p *C.dinput_record_writer_t) C.dinput_status_t { return C.dinput_record_writer_discard(p) })
	if errors.Is(err, ErrClosed) {
		return nil
	}
	w.ref.close(freeRecordWriter)
	runtime.SetFinalizer(w, nil)
	return err
}
