#!/usr/bin/env bash
# A WebGPU tier: the suites that run on every test device, on webgpu:0 alone, through the
# runtime scripts/install-webgpu.sh put in <deps> (Dawn and a CPU Vulkan driver: lavapipe
# through env.sh, SwiftShader through env-swiftshader.sh). Without that runtime the tier is
# skipped (exit 77), saying why; it never passes without a WebGPU adapter, and the runtime
# suite checks the adapter is the one named (its name contains <adapter>).
#   tests/webgpu_tier.sh <numr_tests> <deps> <gtest filter> [env script] [adapter]
set -uo pipefail
tests=$1
deps=$2
filter=$3
env_script=${4:-env.sh}
if [[ ! -f "$deps/$env_script" ]]; then
  echo "webgpu tier skipped: no WebGPU runtime in $deps/$env_script (run scripts/install-webgpu.sh)"
  exit 77
fi
# shellcheck disable=SC1090
source "$deps/$env_script"
export NUMR_TEST_DEVICES=webgpu
export NUMR_TEST_WEBGPU_ADAPTER=${5:-}
# The runtime suite first: it names the adapter and fails on Dawn's Null backend.
"$tests" --gtest_filter='WebGpuRuntime.*' || exit 1
exec "$tests" --gtest_filter="$filter:-WebGpuRuntime.*"
