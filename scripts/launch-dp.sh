#!/usr/bin/env bash
# Starts N processes of a numr program as one data-parallel world.
#   scripts/launch-dp.sh -n 2 PROGRAM [ARGS...]        one process per GPU (NCCL)
#   scripts/launch-dp.sh --cpu -n 2 PROGRAM [ARGS...]  N CPU ranks through mpirun (MPI)
# GPU ranks get NUMR_WORLD_SIZE, NUMR_RANK, NUMR_LOCAL_RANK (rank i uses cuda:i) and
# NUMR_NCCL_ID_FILE, a fresh file through which rank 0 hands NCCL's unique id to the others
# (numr::dist::init_from_env reads them). Each line of output is prefixed with its rank.
# When a rank fails, the others are stopped; the exit code is the first failure's.
set -uo pipefail
n=2
cpu=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    -n) n=$2; shift 2 ;;
    --cpu) cpu=1; shift ;;
    --) shift; break ;;
    *) break ;;
  esac
done
[[ $# -ge 1 ]] || { echo "usage: $0 [--cpu] [-n N] PROGRAM [ARGS...]" >&2; exit 2; }
# NVLink multicast (NVLS) stays off: numr never asks for it, and neither does NCCL then.
export NCCL_NVLS_ENABLE=0

if [[ $cpu -eq 1 ]]; then
  command -v mpirun >/dev/null || { echo "launch-dp: no mpirun (install openmpi-bin)" >&2; exit 2; }
  extra=()
  [[ $(id -u) -eq 0 ]] && extra+=(--allow-run-as-root)
  exec mpirun -np "$n" --oversubscribe "${extra[@]}" --tag-output -x NCCL_NVLS_ENABLE "$@"
fi

dir=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$dir"
}
trap cleanup EXIT INT TERM
export NUMR_WORLD_SIZE=$n NUMR_NCCL_ID_FILE="$dir/nccl-id"
for ((r = 0; r < n; ++r)); do
  NUMR_RANK=$r NUMR_LOCAL_RANK=$r "$@" > >(sed -u "s/^/[$r] /") 2>&1 &
  pids+=($!)
done
rc=0
# Polls rather than `wait -n`, so that a failed rank is seen at once and every other rank's
# status is still collected.
while [[ ${#pids[@]} -gt 0 ]]; do
  for i in "${!pids[@]}"; do
    p=${pids[$i]}
    kill -0 "$p" 2>/dev/null && continue
    wait "$p"
    status=$?
    unset "pids[$i]"
    if [[ $status -ne 0 && $rc -eq 0 ]]; then
      rc=$status
      if [[ ${#pids[@]} -gt 0 ]]; then
        echo "launch-dp: rank $i exited with $status; stopping the others" >&2
        for q in "${pids[@]}"; do kill "$q" 2>/dev/null; done
      fi
    fi
  done
  sleep 0.2
done
exit $rc
