#!/usr/bin/env bash
# Checks the shared library's exported interface (docs/c-api.md, "Versioning"):
#  - only names starting with dinput_ are exported (the C++ core and the statically linked
#    C++ runtime stay hidden);
#  - every one of them carries the symbol version DINPUT_0 (src/dinput.map), the node later
#    releases keep their compatibility symbols under, and no other version is defined;
#  - every function declared in dinput.h is exported, and nothing undeclared is;
#  - the SONAME is libdinput.so.<major>, and the C++ runtime is not a run-time dependency.
# Usage: check_symbols.sh LIBRARY HEADER MAJOR
set -euo pipefail
lib=$1 header=$2 major=$3
fail=0

version_node=DINPUT_0
# nm lists the version node itself as an absolute symbol named after it: not a function.
exported=$(nm -D --defined-only "$lib" | awk 'NF >= 3 {print $3}' | sed 's/@.*//' |
  grep -vx "$version_node" | sort -u)
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

# Symbol versions: objdump -T prints, for each dynamic symbol, its section, its version
# (in parentheses when hidden) and its name last. Every defined dinput_ symbol must have the
# default version DINPUT_0, and DINPUT_0 must be the only version the library defines.
unversioned=$(objdump -T "$lib" | awk -v v="$version_node" \
  '$NF ~ /^dinput_/ && $0 !~ /\*UND\*/ && $(NF-1) != v {print $NF " (version " $(NF-1) ")"}')
if [ -n "$unversioned" ]; then
  echo "FAIL: exported without the default symbol version $version_node:"
  sed 's/^/  /' <<<"$unversioned"
  fail=1
fi
defined_versions=$(readelf -V "$lib" | sed -n '/Version definition section/,/Version needs section/p' |
  sed -nE 's/.*Name: ([A-Za-z0-9_.]+).*/\1/p' | grep -vx "$(basename "$(readelf -d "$lib" |
  sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')")" | sort -u || true)
if [ "$defined_versions" != "$version_node" ]; then
  echo "FAIL: the library defines the versions '$(echo $defined_versions)', expected only $version_node"
  fail=1
fi

# Function names declared in the header: in each declaration starting with DINPUT_API
# (joined into one line up to its ';', since clang-format may put the name on the line
# after the return type), the identifier directly before the first '('.
# dinput_cuda.h, beside dinput.h, declares the CUDA-typed functions the library also exports.
headers=("$header")
cuda_header="$(dirname "$header")/dinput_cuda.h"
[ -f "$cuda_header" ] && headers+=("$cuda_header")
declared=$(sed -E -e '/^[[:space:]]*DINPUT_API/{:join' -e '/;/!{N;b join' -e '}' -e 's/\n/ /g' \
    -e '}' "${headers[@]}" | grep -hE '^[[:space:]]*DINPUT_API' |
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
echo "exported: $n_exported (expected version $version_node), declared in the headers: $n_declared, SONAME: $soname"
if [ "$fail" -ne 0 ]; then
  echo "0 passed, 1 failed"
  exit 1
fi
echo "1 passed, 0 failed"
