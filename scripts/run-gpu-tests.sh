#!/usr/bin/env bash
# Runs numr_tests from a bundle (scripts/make-gpu-bundle.sh) on a GPU machine, as ctest's
# two entries do: the suites that record parity and gradient results (the coverage run)
# beside every other suite, each in its own process, logs and a summary in out-dir.
#   scripts/run-gpu-tests.sh <bundle.tar.xz> [out-dir]
# PTXAS=on also assembles every kernel with ptxas (the release tier here does already).
set -uo pipefail
bundle=$1
out=${2:-gpu-tests}
mkdir -p "$out"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
tar -xJf "$bundle" -C "$dir"
export LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export NUMR_TEST_PTXAS=${PTXAS:-off}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt" 2>&1
# The same patterns as NUMR_COVERAGE_SUITES in tests/CMakeLists.txt.
suites="Parity*:Grad*:AutogradEpilogue.*:ElementwiseValues.*:Cast.*:Factory.*:FusedGates.*:Matmul1d.*:View.*"
start=$(date +%s)
NUMR_TEST_COVERAGE=on "$dir/bin/numr_tests" --gtest_filter="$suites" > "$out/coverage.log" 2>&1 &
cov=$!
"$dir/bin/numr_tests" --gtest_filter="-$suites" > "$out/other.log" 2>&1 &
other=$!
wait $cov; rc_cov=$?
wait $other; rc_other=$?
{
  echo "elapsed $(( $(date +%s) - start )) s; exit codes: coverage $rc_cov, other $rc_other"
  for f in coverage other; do
    echo "== $f"
    grep -E '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+ test' "$out/$f.log"
    grep -E '^\[  FAILED  \] [A-Za-z]' "$out/$f.log" | sort -u
  done
} | tee "$out/summary.txt"
[[ $rc_cov -eq 0 && $rc_other -eq 0 ]]
