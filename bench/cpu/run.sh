#!/usr/bin/env bash
# The CPU benchmark at several thread counts: numr_gpu_bench --suite cpu and torch_peer.py
# --suite cpu, one after the other at each count, joined into one markdown table (case,
# threads, numr ms, torch ms, numr speed-up).
#   bench/cpu/run.sh <numr_gpu_bench> [out-dir]
# THREADS: the counts (default "1 4 16"). REPS and ROUNDS: default 3 and 5, and 2 and 3 at a
# single thread (where the GEMMs are 2048^3, as the case names say). ONLY: case substrings.
# NUMR_LIBS: a folder of shared libraries for numr_gpu_bench alone (a bundle's lib/ from
# scripts/make-gpu-bundle.sh); PyTorch keeps the machine's own. numr's threading settings
# (NUMR_CPU_GEMM_TEAM, NUMR_POOL_CHUNKS, ...) pass through; bench/cpu/knobs.sh compares them.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bench=$1
out=${2:-.}
threads=${THREADS:-1 4 16}
only=${ONLY:-}
mkdir -p "$out"
lscpu | grep -E '^(Model name|Socket|Core|Thread|NUMA node\(s\)|Flags)' | \
  sed 's/^Flags:.*\(amx_bf16\).*/Flags: ... \1 .../' > "$out/cpu.txt" || true
for t in $threads; do
  if [[ $t -le 1 ]]; then reps=${REPS:-2}; rounds=${ROUNDS:-3}; else reps=${REPS:-3}; rounds=${ROUNDS:-5}; fi
  LD_LIBRARY_PATH="${NUMR_LIBS:+$NUMR_LIBS:}${LD_LIBRARY_PATH:-}" \
    "$bench" --device cpu --suite cpu --threads "$t" --warmup 1 --reps "$reps" \
    --rounds "$rounds" ${only:+--only "$only"} > "$out/numr_$t.jsonl"
  python3 "$here/../gpu/torch_peer.py" --suite cpu --threads "$t" --warmup 1 --reps "$reps" \
    --rounds "$rounds" ${only:+--only "$only"} > "$out/torch_$t.jsonl"
done
# shellcheck disable=SC2086
python3 "$here/report.py" "$out" $threads | tee "$out/report.md"
