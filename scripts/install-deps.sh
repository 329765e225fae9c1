#!/usr/bin/env bash
# Installs the Debian packages dinput needs to build and test, skipping those present.
# Runs as root (CI, containers) or through sudo. Optional toolchains that are already on the
# machine by other means (node/npm, cargo) are only installed when missing altogether.
set -euo pipefail
packages=(cmake make g++ gcc binutils pkg-config libgtest-dev libgmock-dev libbenchmark-dev
          libdlpack-dev nlohmann-json3-dev libisal-dev libzstd-dev zlib1g-dev zstd python3 golang-go clang libclang-rt-14-dev ccache
          doxygen clang-format-14 libgloo-dev redis-server python3-numpy python3-torch bindgen
          libjpeg62-turbo-dev libturbojpeg0-dev libjpeg-turbo-progs libpng-dev libprotobuf-dev protobuf-compiler
          python3-protobuf python3-pil python3-torchvision)
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)
command -v cargo >/dev/null 2>&1 || [ -x "$HOME/.cargo/bin/cargo" ] || packages+=(cargo)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "== installing: ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
