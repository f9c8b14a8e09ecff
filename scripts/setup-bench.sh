#!/usr/bin/env bash
# Installs what numr_bench needs: numr's own dependencies plus libtorch-dev, the peer it
# is compared with (scripts/install-deps.sh --bench). Then:
#   cmake --preset bench && cmake --build --preset bench
#   ./build/bench/bench/numr_bench --markdown
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --bench
# libtorch-dev ships a CMake package config; the bench finds it with find_package(Torch).
if [[ ! -f /usr/lib/$(gcc -dumpmachine)/cmake/Torch/TorchConfig.cmake ]]; then
  echo "setup-bench.sh: libtorch-dev installed but TorchConfig.cmake not found" >&2
  exit 1
fi
echo "setup-bench.sh: done"
