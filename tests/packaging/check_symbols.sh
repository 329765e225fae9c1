#!/usr/bin/env bash
# Checks the shared library's exported interface (docs/c-api.md, "Versioning"):
#  - only names starting with dinput_ are exported (the C++ core and the statically linked
#    C++ runtime stay hidden);
#  - every function declared in dinput.h is exported, and nothing undeclared is;
#  - the SONAME is libdinput.so.<major>, and the C++ runtime is not a run-time dependency.
# Usage: check_symbols.sh LIBRARY HEADER MAJOR
set -euo pipefail
lib=$1 header=$2 major=$3
fail=0

exported=$(nm -D --defined-only "$lib" | awk 'NF >= 3 {print $3}' | sed 's/@.*//' | sort -u)
if [ -z "$exported" ]; then
  echo "FAIL: $lib exports no symbols"
  exit 1
fi
others=$(grep -v '^dinput_' <<<"$exported" || true)
if [ -n "$others" ]; then
  echo "FAIL: symbols exported without the dinput_ prefix:"
  sed 's/^/  /' <<<"$others"
  fail=1
fi

# Function names declared in the header: on each line starting with DINPUT_API, the
# identifier directly before the first '('.
# dinput_cuda.h, beside dinput.h, declares the CUDA-typed functions the library also exports.
headers=("$header")
cuda_header="$(dirname "$header")/dinput_cuda.h"
[ -f "$cuda_header" ] && headers+=("$cuda_header")
declared=$(grep -hE '^[[:space:]]*DINPUT_API' "${headers[@]}" |
  sed -nE 's/^[^(]*[^a-z0-9_](dinput_[a-z0-9_]+)[[:space:]]*\(.*/\1/p' | sort -u)
missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
extra=$(comm -13 <(echo "$declared") <(grep '^dinput_' <<<"$exported"))
if [ -n "$missing" ]; then
  echo "FAIL: declared in ${headers[*]} but not exported:"
  sed 's/^/  /' <<<"$missing"
  fail=1
fi
if [ -n "$extra" ]; then
  echo "FAIL: exported but not declared in ${headers[*]}:"
  sed 's/^/  /' <<<"$extra"
  fail=1
fi

soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')
if [ "$soname" != "libdinput.so.$major" ]; then
  echo "FAIL: SONAME is '$soname', expected 'libdinput.so.$major'"
  fail=1
fi
if readelf -d "$lib" | grep -q 'NEEDED.*libstdc++'; then
  echo "FAIL: $lib needs libstdc++ at run time (it should be linked in statically)"
  fail=1
fi

n_exported=$(grep -c . <<<"$exported")
n_declared=$(grep -c . <<<"$declared")
echo "exported: $n_exported, declared in the headers: $n_declared, SONAME: $soname"
if [ "$fail" -ne 0 ]; then
  echo "0 passed, 1 failed"
  exit 1
fi
echo "1 passed, 0 failed"
