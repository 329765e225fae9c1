#!/usr/bin/env python3
"""Binding parity: every function dinput.h and dinput_cuda.h export is wrapped by each
binding's idiomatic layer (Go's package, the Rust `dinput` crate above `dinput-sys`, the Julia
module above its raw `LibDinput`, the Python package with its ctypes declarations), or is named below with the
reason it is not. An exclusion that no longer excludes anything fails too, so the list stays
short and true.

  parity.py SOURCE_DIR      exit 0 when every binding wraps what it should, 1 otherwise
"""

import glob
import os
import re
import sys

# Getters of the C options objects (dinput_batch_options_num_parallel_calls, ...): every
# binding builds options from its own values (structs, keyword arguments) and only calls the
# setters; the getters are for C callers, who hold the objects themselves.
OPTION_GETTER = re.compile(r"^dinput_(\w+_)?options_(?!new$|free$|set_)\w+$")

# Functions a binding leaves unwrapped on purpose, with the reason.
ALL = {
    "dinput_error_clear": "errors are values or exceptions that carry their own message; no "
                          "binding leaves the thread-local error for later",
    "dinput_last_error_code": "the status is the call's return value; bindings read only the "
                              "message after a failure",
}
EXCLUDED = {
    "go": dict(ALL, **{
        "dinput_tensor_data": "Go copies values out through typed accessors (or hands out "
                              "DLPack); a raw pointer would outlive its KeepAlive",
        "dinput_tensor_dim": "Shape() returns every dimension at once",
        "dinput_per_replica_ref": "a PerReplica is owned by one Go value; sharing goes through "
                                  "Go references",
    }),
    "rust": {
        "dinput_set_thread_launcher": "a Rust callback costs no more on the library's own "
                                      "threads; dinput-sys declares it for programs that "
                                      "start threads of their own",
    },
    "julia": dict(ALL, **{
        "dinput_dtype_size": "sizeof of the Julia element type gives it",
        "dinput_version_number": "version() parses dinput_version() into a VersionNumber",
        "dinput_set_thread_launcher": "Julia's threads are a fixed pool that a thread body, "
                                      "blocking for a pipeline's life, would take from; see "
                                      "tools/check_abi.mjs",
    }),
    "python": {
        "dinput_tensor_dim": "shape returns every dimension at once",
        "dinput_per_replica_ref": "a step is a Python list of the replicas' values; Python "
                                  "references share it",
        "dinput_set_thread_launcher": "not written yet: a ctypes callback on a library "
                                      "thread attaches that thread to the interpreter per "
                                      "call, as Go's did (docs/c-api.md)",
    },
}

# Each binding's idiomatic layer, and the comment syntax of its language.
LAYERS = {
    "go": (["bindings/go/*.go", "bindings/go/shim.c", "bindings/go/shim.h"], ["_test.go"], "//"),
    "rust": (["bindings/rust/dinput/src/**/*.rs"], [], "//"),
    "julia": (["bindings/julia/Dinput/src/*.jl"], ["libdinput.jl"], "#"),
    # The ctypes declarations (_lib.py) count: the package calls what it declares, some
    # by name built at run time (the options setters of with_options).
    "python": (["bindings/python/dinput/*.py"], [], "#"),
}


def exported(source):
    names = set()
    for header in ("include/dinput.h", "include/dinput_cuda.h"):
        with open(os.path.join(source, header)) as f:
            text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
        for m in re.finditer(r"DINPUT_API\b(.*?);", text, flags=re.S):
            decl = re.sub(r"__attribute__\s*\(\(.*?\)\)", "", m.group(1), flags=re.S)
            name = re.search(r"\b(dinput_\w+)\s*\(", decl)
            if name:
                names.add(name.group(1))
    return names


def layer_text(source, patterns, skipped, comment):
    paths = set()
    for pattern in patterns:
        paths.update(glob.glob(os.path.join(source, pattern), recursive=True))
    text = []
    for path in sorted(paths):
        if any(path.endswith(s) for s in skipped):
            continue
        with open(path) as f:
            text.append(re.sub(re.escape(comment) + r"[^\n]*", "", f.read()))
    return "\n".join(text), len(text)


def main():
    source = sys.argv[1] if len(sys.argv) > 1 else "."
    names = exported(source)
    if len(names) < 200:
        print("FAILED: found only %d exported functions in the headers" % len(names))
        return 1
    problems = []
    for binding, (patterns, skipped, comment) in LAYERS.items():
        text, files = layer_text(source, patterns, skipped, comment)
        if files == 0:
            problems.append("%s: no source files found" % binding)
            continue
        used = {n for n in names if re.search(r"\b" + n + r"\b", text)}
        excluded = EXCLUDED[binding]
        for name in sorted(names - used):
            if not OPTION_GETTER.match(name) and name not in excluded:
                problems.append("%s does not wrap %s (wrap it, or exclude it in "
                                "tests/bindings/parity.py with the reason)" % (binding, name))
        for name in sorted(excluded):
            if name not in names:
                problems.append("%s: the exclusion of %s names no exported function" %
                                (binding, name))
            elif name in used:
                problems.append("%s wraps %s now: drop its exclusion" % (binding, name))
        print("%s: %d of %d functions wrapped, %d option getters and %d others excluded" %
              (binding, len(used), len(names),
               len([n for n in names - used if OPTION_GETTER.match(n)]),
               len([n for n in names - used if n in excluded])))
    if problems:
        print("FAILED:\n- " + "\n- ".join(problems))
        return 1
    print("passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
