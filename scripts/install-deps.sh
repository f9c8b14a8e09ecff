#!/usr/bin/env bash
# Installs what building and testing numr needs, from Debian's packages. Runs as root or
# through sudo; safe to run again.
set -euo pipefail

# python3-numpy: the I/O tests check that NumPy reads the files numr writes.
# libopenmpi-dev, openmpi-bin: Open MPI (libmpi.so.40, which numr loads at run time, and
# mpirun) for the CPU communicator and its multi-process tests.
# mesa-vulkan-drivers: the Vulkan loader and the libraries the newer lavapipe that
# scripts/install-webgpu.sh fetches links against (LLVM 15, libdrm, xcb); npm fetches Dawn.
packages=(cmake ninja-build g++ pkg-config libopenblas-dev libsleef-dev libdnnl-dev libgtest-dev
          python3-numpy mesa-vulkan-drivers libopenmpi-dev openmpi-bin)
command -v npm >/dev/null || packages+=(npm)
if [[ "${1:-}" == "--bench" ]]; then
  packages+=(libtorch-dev)  # the peer the benchmark program compares with
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all packages present"
  exit 0
fi

sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
