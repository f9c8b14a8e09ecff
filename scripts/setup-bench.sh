#!/usr/bin/env bash
# Installs what numr_bench needs on Debian/Ubuntu: the build tools, numr's own
# dependencies (SLEEF, OpenBLAS, GoogleTest) and libtorch-dev as the peer library.
# Runs as root or through sudo, without prompts. Then:
#   cmake --preset bench && cmake --build --preset bench
#   ./build/bench/bench/numr_bench --markdown
set -euo pipefail

packages=(build-essential cmake ninja-build pkg-config
          libsleef-dev libopenblas-dev libgtest-dev libtorch-dev)

if [[ $(id -u) -eq 0 ]]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "setup-bench.sh: run as root or install sudo" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${packages[@]}"

# libtorch-dev ships a CMake package config; numr's bench finds it with find_package(Torch).
if [[ ! -f /usr/lib/$(gcc -dumpmachine)/cmake/Torch/TorchConfig.cmake ]]; then
  echo "setup-bench.sh: libtorch-dev installed but TorchConfig.cmake not found" >&2
  exit 1
fi
echo "setup-bench.sh: done"
