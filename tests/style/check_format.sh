#!/bin/sh
# Fails when a tracked C, C++ or CUDA file is not formatted as the root .clang-format says,
# listing each difference. Usage: check_format.sh CLANG_FORMAT SOURCE_DIR
set -eu
clang_format=$1
cd "$2"
"$clang_format" --version
git ls-files -z -- '*.c' '*.cc' '*.cpp' '*.h' '*.hpp' '*.cu' '*.cuh' |
  xargs -0 "$clang_format" --dry-run -Werror
