#!/usr/bin/env bash
# Installs the dependencies (and the WebGPU runtime: Dawn, lavapipe), builds numr with
# warnings as errors, runs every test (the device suites again on WebGPU), runs them again
# under AddressSanitizer + UndefinedBehaviorSanitizer, then installs numr into a
# scratch prefix and builds a consumer project against it with find_package(numr).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
# The WebGPU tier (ctest's numr_tests_webgpu) runs on what this installs; if it cannot be
# installed, that tier reports itself skipped and everything else still runs.
bash scripts/install-webgpu.sh || echo "run-tests: the WebGPU runtime could not be installed"
cmake --preset release
cmake --build --preset release
ctest --preset release
# Which adapters the WebGPU tiers ran on (ctest keeps passing tests' output in its log).
grep -h "WebGPU adapter:" build/release/Testing/Temporary/LastTest.log | sort -u | grep . ||
  echo "run-tests: the WebGPU tiers ran on no adapter (skipped)"
cmake --preset asan
cmake --build --preset asan
ctest --preset asan

prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install build/release --prefix "$prefix" >/dev/null
cmake -S tests/consumer -B "$prefix/consumer-build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$prefix/consumer-build" >/dev/null
"$prefix/consumer-build/consumer"
