package dinput

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// notWrapped lists the exported C functions the Go binding does not call, each with the
// reason. Everything else that dinput.h or dinput_cuda.h exports must appear in the
// binding's sources (a Go file or the cgo shim), so a function added to the C API without a
// Go counterpart fails TestEveryCFunctionIsWrapped until it is wrapped or listed here.
var notWrapped = map[string]string{
	// Go's option types are plain structs that the binding turns into a C handle for one
	// call; no handle is ever exposed, so the handle getters have nothing to read.
	"dinput_batch_options_drop_remainder":             "options are Go structs",
	"dinput_batch_options_num_parallel_calls":         "options are Go structs",
	"dinput_map_options_num_parallel_calls":           "options are Go structs",
	"dinput_map_options_out_spec":                     "options are Go structs",
	"dinput_shuffle_options_reshuffle_each_iteration": "options are Go structs",
	"dinput_shuffle_options_seed":                     "options are Go structs",
	"dinput_shuffle_options_seed2":                    "options are Go structs",
	"dinput_options_allow_nonregular_files":           "options are Go structs",
	"dinput_options_deterministic":                    "options are Go structs",
	"dinput_options_map_files":                        "options are Go structs",
	"dinput_options_max_record_bytes":                 "options are Go structs",
	"dinput_options_skip_corrupt_records":             "options are Go structs",
	"dinput_input_options_fetch_to_device":            "options are Go structs",
	"dinput_input_options_per_replica_buffer_size":    "options are Go structs",
	"dinput_input_options_place_dataset_on_device":    "options are Go structs",
	"dinput_collective_options_address":               "options are Go structs",
	"dinput_collective_options_allow_loopback":        "options are Go structs",
	"dinput_collective_options_interface":             "options are Go structs",
	"dinput_collective_options_job_id":                "options are Go structs",
	"dinput_collective_options_timeout_ms":            "options are Go structs",
	"dinput_list_files_options_seed":                  "options are Go structs",
	"dinput_list_files_options_seed2":                 "options are Go structs",
	"dinput_image_options_component":                  "options are Go structs",
	"dinput_image_options_deterministic":              "options are Go structs",
	"dinput_image_options_num_parallel_calls":         "options are Go structs",
	"dinput_list_files_options_shuffle":               "options are Go structs",
	"dinput_records_options_buffer_size":              "options are Go structs",
	"dinput_record_writer_options_level":              "options are Go structs",
	"dinput_record_writer_options_zstd_window_log":    "options are Go structs",
	"dinput_batch_options_deterministic":              "options are Go structs",
	"dinput_input_options_replication_mode":           "options are Go structs",
	"dinput_interleave_options_block_length":          "options are Go structs",
	"dinput_interleave_options_cycle_length":          "options are Go structs",
	"dinput_interleave_options_deterministic":         "options are Go structs",
	"dinput_interleave_options_num_parallel_calls":    "options are Go structs",
	"dinput_map_options_deterministic":                "options are Go structs",
	"dinput_options_auto_shard_policy":                "options are Go structs",
	"dinput_record_writer_options_compression":        "options are Go structs",
	"dinput_records_options_compression":              "options are Go structs",
	"dinput_padded_batch_options_drop_remainder":      "options are Go structs",
	"dinput_padded_batch_options_padded_shapes":       "options are Go structs",
	"dinput_padded_batch_options_padding_values":      "options are Go structs",
	// Errors: every failing call's code is its return value and its message is read at
	// once on the same (locked) thread, so there is nothing to clear or re-read.
	"dinput_error_clear":     "errors are returned, not kept",
	"dinput_last_error_code": "the code is the call's return value",
	// The shim reads a tensor's dtype, shape and data in one call (dgo_tensor_describe,
	// dinput_tensor_copy_to); per-dimension and raw-pointer accessors are not needed.
	"dinput_tensor_data": "read through the shim in one call",
	"dinput_tensor_dim":  "read through the shim in one call",
	// PerReplica values are immutable and Go handles share them; nothing needs a second
	// C handle.
	"dinput_per_replica_ref": "no second handle is needed",
}

// exportedFunctions returns the functions a header exports (DINPUT_API declarations).
func exportedFunctions(t *testing.T, header string) []string {
	t.Helper()
	src, err := os.ReadFile(header)
	if err != nil {
		t.Fatal(err)
	}
	// The name is the last identifier before the first "(" after DINPUT_API.
	decl := regexp.MustCompile(`DINPUT_API\s[^(;]*?\b(dinput_[A-Za-z0-9_]+)\s*\(`)
	var names []string
	for _, m := range decl.FindAllStringSubmatch(string(src), -1) {
		names = append(names, m[1])
	}
	return names
}

func TestEveryCFunctionIsWrapped(t *testing.T) {
	var sources strings.Builder
	files, _ := filepath.Glob("*.go")
	files = append(files, "shim.c", "shim.h")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sources.Write(b)
	}
	text := sources.String()
	var missing, stale []string
	seen := map[string]bool{}
	for _, header := range []string{"../../include/dinput.h", "../../include/dinput_cuda.h"} {
		names := exportedFunctions(t, header)
		if len(names) == 0 {
			t.Fatalf("no DINPUT_API function found in %s: the pattern no longer matches", header)
		}
		for _, name := range names {
			seen[name] = true
			used := regexp.MustCompile(`\b` + name + `\b`).MatchString(text)
			_, excluded := notWrapped[name]
			switch {
			case !used && !excluded:
				missing = append(missing, name)
			case used && excluded:
				stale = append(stale, name)
			}
		}
	}
	for name := range notWrapped {
		if !seen[name] {
			stale = append(stale, name+" (not in the headers)")
		}
	}
	sort.Strings(missing)
	sort.Strings(stale)
	if len(missing) > 0 {
		t.Errorf("C functions the Go binding does not wrap (wrap them, or list them with a reason in notWrapped):\n  %s",
			strings.Join(missing, "\n  "))
	}
	if len(stale) > 0 {
		t.Errorf("notWrapped entries that are wrapped or gone (remove them):\n  %s", strings.Join(stale, "\n  "))
	}
}
