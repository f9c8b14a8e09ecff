#!/usr/bin/env bash
# Multi-GPU figures: all-reduce bus bandwidth of numr (numr_dist_bench over NCCL) beside
# PyTorch (torch.distributed, NCCL) on the same GPUs, 1 KiB to 1 GiB, and the data-parallel
# training throughput of numr_transformer on 1 GPU and on N GPUs. Prints markdown tables and
# keeps the raw output in out-dir.
#   bench/dist/run.sh [DIR] [out-dir]
# DIR: an unpacked bundle (scripts/make-gpu-bundle.sh: bin/, lib/, share/) or a build
# directory; by default the bundle this script sits in, else build/release.
# GPUS (default 2), MAX_BYTES (default 1 GiB), STEPS (training steps, default 200), BATCH
# (sequences per step on one GPU, default 32). numr's programs get the bundle's lib/;
# PyTorch keeps the machine's own libraries.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-}
if [[ -z $dir ]]; then
  if [[ -x $here/../../bin/numr_dist_bench ]]; then dir=$here/../..; else dir=$here/../../build/release; fi
fi
out=${2:-dist-bench}
gpus=${GPUS:-2}
max_bytes=${MAX_BYTES:-1073741824}
steps=${STEPS:-200}
batch=${BATCH:-32}
find_program() {
  for p in "$dir/bin/$1" "$dir/bench/$1" "$dir/examples/$1"; do
    [[ -x $p ]] && { echo "$p"; return; }
  done
  echo "bench/dist/run.sh: no $1 under $dir" >&2
  exit 1
}
bench=$(find_program numr_dist_bench)
transformer=$(find_program numr_transformer)
texts=/usr/share/common-licenses
[[ -d $dir/share/common-licenses ]] && texts=$dir/share/common-licenses
launch=$here/../../scripts/launch-dp.sh
[[ -x $launch ]] || launch=$dir/scripts/launch-dp.sh
numr_libs=""
[[ -d $dir/lib ]] && numr_libs=$dir/lib
with_numr_libs() { LD_LIBRARY_PATH="${numr_libs:+$numr_libs:}${LD_LIBRARY_PATH:-}" "$@"; }
export NCCL_NVLS_ENABLE=0
# numr runs the NCCL PyTorch loads, so the two compare transports alone.
if [[ -z ${NUMR_NCCL:-} ]]; then
  found=$("$(dirname "$launch")/find-nccl.sh")
  [[ -n $found ]] && export NUMR_NCCL=$found
fi
echo "NCCL for numr: ${NUMR_NCCL:-the search order of docs/distributed.md}" >&2
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt" || true
have=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [[ ${have:-0} -lt $gpus ]]; then
  echo "SKIPPED: $gpus GPUs needed, ${have:-0} visible"
  exit 77
fi

echo "== all-reduce, $gpus GPUs" >&2
# A step that fails leaves n/a in its cells and its log in out-dir; the others still run.
with_numr_libs "$launch" -n "$gpus" "$bench" --max-bytes "$max_bytes" > "$out/numr_allreduce.log" 2>&1 ||
  echo "numr_dist_bench failed: $out/numr_allreduce.log" >&2
{ grep -E '^\[0\] ([0-9]|#|bytes)' "$out/numr_allreduce.log" || true; } | sed 's/^\[0\] //' \
  > "$out/numr_allreduce.csv"
python3 -m torch.distributed.run --standalone --nproc_per_node="$gpus" "$here/torch_allreduce.py" \
  --max-bytes "$max_bytes" > "$out/torch_allreduce.csv" 2> "$out/torch_allreduce.err" ||
  echo "the PyTorch all-reduce failed: $out/torch_allreduce.err" >&2

echo "== training throughput" >&2
tokens_per_s() {  # the median tokens/s of the lines after the first (warm-up) one
  { grep -o '[0-9]* tokens/s' "$1" || true; } | awk 'NR > 1 {print $1}' | sort -n |
    awk '{v[NR] = $1} END {if (NR == 0) print "n/a"; else print v[int((NR + 1) / 2)]}'
}
common=(--device cuda --steps "$steps" --text-dir "$texts" --target 100 --checkpoint "$out/ckpt.safetensors")
with_numr_libs "$transformer" "${common[@]}" --batch "$batch" > "$out/train_1gpu.log" 2>&1 ||
  echo "1-GPU training failed: $out/train_1gpu.log" >&2
with_numr_libs "$launch" -n "$gpus" "$transformer" "${common[@]}" --batch "$batch" --distributed \
  > "$out/train_${gpus}gpu_same_batch.log" 2>&1 ||
  echo "$gpus-GPU training failed: $out/train_${gpus}gpu_same_batch.log" >&2
with_numr_libs "$launch" -n "$gpus" "$transformer" "${common[@]}" --batch $((batch * gpus)) \
  --distributed > "$out/train_${gpus}gpu_batch_per_gpu.log" 2>&1 ||
  echo "$gpus-GPU training failed: $out/train_${gpus}gpu_batch_per_gpu.log" >&2
one=$(tokens_per_s "$out/train_1gpu.log")
strong=$(tokens_per_s "$out/train_${gpus}gpu_same_batch.log")
weak=$(tokens_per_s "$out/train_${gpus}gpu_batch_per_gpu.log")

python3 - "$out" "$gpus" "$one" "$strong" "$weak" "$batch" <<'PY'
import csv, sys
out, gpus, one, strong, weak, batch = sys.argv[1:7]
def read(path):
    rows = {}
    with open(path) as f:
        for line in f:
            if line[:1].isdigit():
                b, t, alg, bus = line.strip().split(",")
                rows[int(b)] = (float(t), float(bus))
    return rows
numr, torch = read(f"{out}/numr_allreduce.csv"), read(f"{out}/torch_allreduce.csv")
def size(b):
    for unit, s in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= s:
            return f"{b // s} {unit}"
    return f"{b} B"
gpu = open(f"{out}/gpu.txt").read().strip().splitlines()
print(f"All-reduce (sum, F32, in place), {gpus} GPUs: {gpu[0] if gpu else '?'}; busbw = algbw * 2(n-1)/n")
print()
print("| size | numr time (us) | numr busbw (GB/s) | torch time (us) | torch busbw (GB/s) | numr / torch busbw |")
print("|---:|---:|---:|---:|---:|---:|")
for b in sorted(set(numr) | set(torch)):
    n, t = numr.get(b), torch.get(b)
    ratio = f"{n[1] / t[1]:.2f}" if n and t and t[1] > 0 else "n/a"
    fmt = lambda r: (f"{r[0]:.1f}", f"{r[1]:.2f}") if r else ("n/a", "n/a")
    print(f"| {size(b)} | {fmt(n)[0]} | {fmt(n)[1]} | {fmt(t)[0]} | {fmt(t)[1]} | {ratio} |")
print()
print(f"Data-parallel training, numr_transformer (tokens/s over all GPUs, median of the 50-step intervals after the first)")
print()
def speedup(x):
    try:
        return f"{float(x) / float(one):.2f}x"
    except ValueError:
        return "n/a"
print("| GPUs | sequences per step | tokens/s | vs 1 GPU |")
print("|---:|---:|---:|---:|")
print(f"| 1 | {batch} | {one} | 1.00x |")
print(f"| {gpus} | {batch} ({int(batch) // int(gpus)} per GPU) | {strong} | {speedup(strong)} |")
print(f"| {gpus} | {int(batch) * int(gpus)} ({batch} per GPU) | {weak} | {speedup(weak)} |")
PY
