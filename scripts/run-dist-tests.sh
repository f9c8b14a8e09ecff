#!/usr/bin/env bash
# Runs the multi-process tests (tests/dist, numr_dist_tests) as 2 GPU ranks over NCCL, and
# as 2 CPU ranks over MPI where mpirun is installed. Prints PASS, FAIL or SKIPPED (with the
# reason: fewer than 2 GPUs, no libnccl.so.2) for each, and exits 0 only when the NCCL run
# passed; 77 when it was skipped.
#   scripts/run-dist-tests.sh [DIR]
# DIR: a build directory (build/release) or an unpacked bundle (scripts/make-gpu-bundle.sh);
# by default the bundle this script sits in, else build/release.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-}
if [[ -z $dir ]]; then
  if [[ -x $here/../bin/numr_dist_tests ]]; then dir=$here/..; else dir=$here/../build/release; fi
fi
program=""
for p in "$dir/bin/numr_dist_tests" "$dir/tests/numr_dist_tests"; do
  [[ -x $p ]] && { program=$p; break; }
done
[[ -n $program ]] || { echo "FAIL: no numr_dist_tests under $dir (build it, or unpack the bundle)"; exit 1; }
export NCCL_NVLS_ENABLE=0
# PyTorch's NCCL when there is one and NUMR_NCCL is unset; else numr's own search. (Asked
# before the bundle's libraries join the loader's path: they are numr's, not Python's.)
if [[ -z ${NUMR_NCCL:-} ]]; then
  found=$("$here/find-nccl.sh")
  [[ -n $found ]] && export NUMR_NCCL=$found
fi
[[ -d $dir/lib ]] && export LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "NCCL: ${NUMR_NCCL:-the search order of docs/distributed.md}"
log=$(mktemp -d)

gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [[ ${gpus:-0} -lt 2 ]]; then
  nccl="SKIPPED: ${gpus:-0} GPU(s) visible to nvidia-smi, 2 needed"
  nccl_rc=77
else
  NUMR_DIST_DEVICE=cuda timeout 600 "$here/launch-dp.sh" -n 2 "$program" > "$log/nccl.log" 2>&1
  nccl_rc=$?
  case $nccl_rc in
    0) nccl="PASS ($(grep -m1 -o 'PASSED.*' "$log/nccl.log" | sed 's/\x1b\[[0-9;]*m//g'))" ;;
    77) nccl="SKIPPED: $(grep -m1 -o 'SKIPPED: .*' "$log/nccl.log")" ;;
    124) nccl="FAIL: timed out after 600 s (a rank hung)" ;;
    *) nccl="FAIL (exit $nccl_rc)" ;;
  esac
  [[ $nccl_rc -ne 0 && $nccl_rc -ne 77 ]] && grep -E 'Failure|FAILED|error|Error' "$log/nccl.log" | head -40
fi
echo "NCCL, 2 GPU ranks: $nccl"

if command -v mpirun >/dev/null; then
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NUMR_NUM_THREADS=1 \
    timeout 300 mpirun -np 2 --oversubscribe "$program" > "$log/mpi.log" 2>&1
  case $? in
    0) mpi="PASS" ;;
    77) mpi="SKIPPED: $(grep -m1 -o 'SKIPPED: .*' "$log/mpi.log")" ;;
    *) mpi="FAIL"; grep -E 'Failure|FAILED' "$log/mpi.log" | head -20 ;;
  esac
else
  mpi="SKIPPED: no mpirun"
fi
echo "MPI, 2 CPU ranks:  $mpi"
echo "logs: $log"
exit $nccl_rc
