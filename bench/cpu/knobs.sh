#!/usr/bin/env bash
# numr's CPU suite (numr_gpu_bench --suite cpu) at one thread count under each of the
# settings that steer its threading, side by side in one markdown table (ms; the first
# column is the default), to choose defaults on a given machine.
#   bench/cpu/knobs.sh <numr_gpu_bench> [out-dir]
# THREADS (default 16), REPS and ROUNDS (default 3 and 5), ONLY (case substrings; default
# the GEMMs, the gate and the reductions). NUMR_LIBS as in run.sh.
#   NUMR_CPU_GEMM_TEAM=0      every GEMM split over numr's pool (the previous behaviour)
#   OMP_WAIT_POLICY=passive   OpenMP's threads sleep at once after a team GEMM
#   NUMR_CPU_OWN_GEMM=0       F32 epilogues through oneDNN's post-ops, not numr's own GEMM
#   NUMR_POOL_CHUNKS=4        four chunks per thread in parallel loops, taken as threads finish
#   NUMR_SPIN_US=0            numr's idle workers sleep at once
#   NUMR_POOL_OMP_MS=0        parallel loops never move to OpenMP's team after a team GEMM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bench=$1
out=${2:-knobs}
t=${THREADS:-16}
only=${ONLY:-matmul_,linear_gelu,silu_mul,sum_,softmax}
mkdir -p "$out"
settings=("DEFAULT=1" "NUMR_CPU_GEMM_TEAM=0" "OMP_WAIT_POLICY=passive" "NUMR_CPU_OWN_GEMM=0"
          "NUMR_POOL_CHUNKS=4" "NUMR_SPIN_US=0" "NUMR_POOL_OMP_MS=0")
for s in "${settings[@]}"; do
  env "$s" LD_LIBRARY_PATH="${NUMR_LIBS:+$NUMR_LIBS:}${LD_LIBRARY_PATH:-}" \
    "$bench" --device cpu --suite cpu --threads "$t" --warmup 1 --reps "${REPS:-3}" \
    --rounds "${ROUNDS:-5}" --only "$only" > "$out/$s.jsonl"
done
python3 - "$out" "$t" "${settings[@]}" <<'PY' | tee "$out/knobs.md"
import json, sys
out, t, settings = sys.argv[1], sys.argv[2], sys.argv[3:]
runs = []
for s in settings:
    with open(f"{out}/{s}.jsonl") as f:
        runs.append({o["case"]: o.get("ms") for o in map(json.loads, f) if "case" in o})
print(f"numr at {t} threads, ms\n")
print("| case | " + " | ".join(s if s != "DEFAULT=1" else "default" for s in settings) + " |")
print("|---|" + "---:|" * len(settings))
for case in runs[0]:
    cells = [f"{r[case]:.3f}" if r.get(case) else "-" for r in runs]
    print(f"| {case} | " + " | ".join(cells) + " |")
PY
