#!/usr/bin/env bash
# Installs the dependencies, builds numr and runs the main example.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
cmake --preset release
cmake --build --preset release --target numr_demo
./build/release/examples/numr_demo "$@"
