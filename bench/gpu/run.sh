#!/usr/bin/env bash
# The GPU benchmark: numr_gpu_bench and PyTorch on the same GPU, one after the other in one
# run, joined into a markdown table (BENCHMARKS.md, GPU section).
#   bench/gpu/run.sh <numr_gpu_bench> [out-dir]
# REPS, ROUNDS, GAP_MS (idle time before each round), ONLY (case substrings): default 20,
# 7, 50 and every case. DEVICE=cpu runs both on the CPU instead of the GPU; DEVICE=webgpu
# runs numr on webgpu:0 as well, beside its CUDA backend and PyTorch's.
# NUMR_LIBS: a folder of shared libraries for numr_gpu_bench alone (a bundle's lib/ from
# scripts/make-gpu-bundle.sh); PyTorch keeps the machine's own.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bench=$1
out=${2:-.}
reps=${REPS:-20}
rounds=${ROUNDS:-7}
gap=${GAP_MS:-50}
only=${ONLY:-}
device=${DEVICE:-cuda}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt" || true
numr_bench() {
  LD_LIBRARY_PATH="${NUMR_LIBS:+$NUMR_LIBS:}${LD_LIBRARY_PATH:-}" \
    "$bench" --reps "$reps" --rounds "$rounds" --gap-ms "$gap" ${only:+--only "$only"} \
    --device "$1"
}
case $device in
  cpu) numr_bench cpu > "$out/numr.jsonl" ;;
  # numr's WebGPU backend beside its CUDA backend and PyTorch (CUDA), on the same GPU.
  webgpu) numr_bench webgpu:0 > "$out/webgpu.jsonl"; numr_bench cuda:0 > "$out/numr.jsonl" ;;
  *) numr_bench cuda:0 > "$out/numr.jsonl" ;;
esac
python3 "$here/torch_peer.py" --reps "$reps" --rounds "$rounds" --gap-ms "$gap" \
  --device "$([[ $device == cpu ]] && echo cpu || echo cuda)" \
  ${only:+--only "$only"} > "$out/torch.jsonl"
extra=()
[[ $device == webgpu ]] && extra=(--webgpu "$out/webgpu.jsonl")
python3 "$here/report.py" "${extra[@]}" "$out/numr.jsonl" "$out/torch.jsonl" | tee "$out/report.md"
