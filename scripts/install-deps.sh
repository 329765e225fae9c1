#!/usr/bin/env bash
# Installs the Debian packages dinput needs to build and test, skipping those present.
# Runs as root (CI, containers) or through sudo.
set -euo pipefail
packages=(cmake make g++ gcc pkg-config libgtest-dev libgmock-dev libdlpack-dev python3 binutils)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "installing: ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
