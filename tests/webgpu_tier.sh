#!/usr/bin/env bash
# The WebGPU tier: the suites that run on every test device, on webgpu:0 alone, through the
# runtime scripts/install-webgpu.sh put in <deps> (Dawn and lavapipe). Without it the tier
# is skipped (exit 77), saying why; it never passes without a WebGPU adapter.
#   tests/webgpu_tier.sh <numr_tests> <deps> <gtest filter>
set -uo pipefail
tests=$1
deps=$2
filter=$3
if [[ ! -f "$deps/env.sh" ]]; then
  echo "webgpu tier skipped: no WebGPU runtime in $deps (run scripts/install-webgpu.sh)"
  exit 77
fi
# shellcheck disable=SC1091
source "$deps/env.sh"
export NUMR_TEST_DEVICES=webgpu
# The runtime suite first: it names the adapter and fails on Dawn's Null backend.
"$tests" --gtest_filter='WebGpuRuntime.*' || exit 1
exec "$tests" --gtest_filter="$filter:-WebGpuRuntime.*"
