#!/usr/bin/env bash
# The GPU benchmark: numr_gpu_bench and PyTorch on the same GPU, one after the other in one
# run, joined into a markdown table.   bench/gpu/run.sh <numr_gpu_bench> [out-dir]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bench=$1
out=${2:-.}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt" || true
"$bench" > "$out/numr.jsonl"
python3 "$here/torch_peer.py" > "$out/torch.jsonl"
python3 "$here/report.py" "$out/numr.jsonl" "$out/torch.jsonl" | tee "$out/report.md"
