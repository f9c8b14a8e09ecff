"""Joins numr_gpu_bench's and torch_peer.py's outputs into one markdown table.

For memory-bound cases the floor is the bytes each must move (inputs read once, outputs
written once) over the copy bandwidth measured in the same run (the faster of the two
copies); for GEMMs, the FLOPs over the faster plain matmul of that dtype in the run.
Usage: python3 report.py [--webgpu webgpu.jsonl] numr.jsonl torch.jsonl
With --webgpu, the table is numr's WebGPU backend beside its CUDA backend (numr.jsonl) and
PyTorch on the same GPU, for the cases the WebGPU run has.
"""
import json
import re
import sys

ELEM = {"f32": 4, "tf32": 4, "bf16": 2}


def load(path):
    meta, rows = {}, {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            obj = json.loads(line)
            if "case" in obj:
                rows[obj["case"]] = obj
            else:
                meta.update(obj)
    return meta, rows


def traffic(case):
    """Bytes moved, or None for a GEMM case or one without a memory floor here."""
    m = re.match(r"(.+)_(f32|bf16|tf32)_(\w+)$", case)
    if not m:
        return None
    op, tag, size = m.group(1), m.group(2), m.group(3)
    e = ELEM[tag]
    if op.startswith(("matmul", "linear", "sdpa")):
        return None
    if size.endswith("M"):
        n = int(size[:-1]) << 20
    elif re.fullmatch(r"\d+x\d+", size):
        r, c = (int(v) for v in size.split("x"))
        n = r * c
    else:
        return None
    passes = {"copy": 2, "sum_all": 1, "sum_lastdim": 1, "sum_dim0": 1, "max_lastdim": 1,
              "exp": 2, "add": 3, "silu": 2, "silu_mul": 3, "gelu_mul": 3,
              "silu_mul_fwd_bwd": 8, "softmax": 2, "cumsum": 2, "bias_gelu_bwd": 3,
              "contiguous_t": 2, "cast_t_to_bf16": 1.5,
              # x read, out written; fwd_bwd adds grad and x read, d_x written.
              "rms_norm": 2, "layer_norm": 2, "rms_norm_fwd_bwd": 5, "layer_norm_fwd_bwd": 5,
              "rms_norm_composed": 2, "layer_norm_composed": 2,
              "rms_norm_fwd_bwd_composed": 5, "layer_norm_fwd_bwd_composed": 5,
              # sort: x read, values and I64 indices written; topk: x read (the output is
              # small); searchsorted: the sequence and the values read, I64 positions written.
              "sort": 4, "topk50": 1, "searchsorted": 4,
              # the model families with a plain memory floor: x read, out written
              "masked_fill": 2.25, "roll": 2, "fused_add_rms_norm": 4, "dropout": 2}.get(op)
    return int(passes * n * e) if passes else None


def flops(case):
    a = re.match(r"sdpa(_causal)?(_fwd_bwd)?(_composed)?_\w+?_(\d+)x(\d+)x(\d+)x(\d+)$", case)
    if a:
        # q k^T and p v: 4 B H S^2 D; the causal triangle half of it; the backward five
        # products where the forward has two.
        b, h, s, d = (int(v) for v in a.groups()[3:])
        f = 4 * b * h * s * s * d // (2 if a.group(1) else 1)
        return f * 7 // 2 if a.group(2) else f
    m = re.match(r"(matmul|linear)\w*_(\d+)x(\d+)x(\d+)$", case)
    if not m:
        return None
    mm, k, n = (int(v) for v in m.groups()[1:])
    f = 2 * mm * k * n
    if "fwd_bwd" in case:
        return 3 * f
    return 2 * f if "_bwd_" in case else f


def webgpu_table(webgpu, numr, torch, bandwidth):
    print("| case | WebGPU ms | numr CUDA ms | torch ms | WebGPU / CUDA speed | "
          "WebGPU % of floor |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, w in webgpu.items():
        wm, cm, tm = w.get("ms"), numr.get(name, {}).get("ms"), torch.get(name, {}).get("ms")
        b = traffic(name)
        floor = b / (bandwidth * 1e6) if b is not None and bandwidth else None
        cells = [name, f"{wm:.3f}" if wm else w.get("error", "-")[:60],
                 f"{cm:.3f}" if cm else "-", f"{tm:.3f}" if tm else "-",
                 f"{100 * cm / wm:.0f}%" if wm and cm else "-",
                 f"{100 * floor / wm:.0f}%" if wm and floor else "-"]
        print("| " + " | ".join(cells) + " |")


def main():
    args = sys.argv[1:]
    webgpu = None
    if args[:1] == ["--webgpu"]:
        webgpu = load(args[1])[1]
        args = args[2:]
    nmeta, numr = load(args[0])
    tmeta, torch = load(args[1])
    copies = [r["ms"] for r in (numr.get("copy_f32_256M"), torch.get("copy_f32_256M"))
              if r and "ms" in r]
    bandwidth = traffic("copy_f32_256M") / min(copies) / 1e6 if copies else None  # GB/s
    print(f"Device: {tmeta.get('device', '?')}; PyTorch {tmeta.get('torch', '?')}; "
          f"copy floor {bandwidth:.0f} GB/s (read + write)\n" if bandwidth else "")
    if webgpu is not None:
        webgpu_table(webgpu, numr, torch, bandwidth)
        return
    print("| case | numr ms | torch ms | numr speed-up | numr % of floor | torch % of floor |")
    print("|---|---:|---:|---:|---:|---:|")
    gemm_best = {}
    for name in torch:
        if traffic(name) is None and re.match(r"matmul_(f32|bf16|tf32)_", name):
            tag = name.split("_")[1]
            for side in (numr, torch):
                if name in side and "ms" in side[name]:
                    rate = flops(name) / side[name]["ms"]
                    gemm_best[tag] = max(gemm_best.get(tag, 0), rate)
    for name in list(torch) + [c for c in numr if c not in torch]:
        n, t = numr.get(name, {}), torch.get(name, {})
        nm, tm = n.get("ms"), t.get("ms")
        b, f = traffic(name), flops(name)
        tag = re.match(r".+?_(f32|bf16|tf32)_", name)
        floor = None
        if b is not None and bandwidth:
            floor = b / (bandwidth * 1e6)
        elif f is not None and tag and tag.group(1) in gemm_best:
            floor = f / gemm_best[tag.group(1)]

        def pct(ms):
            return f"{100 * floor / ms:.0f}%" if ms and floor else "-"

        cells = [name, f"{nm:.3f}" if nm else n.get("error", "-")[:60],
                 f"{tm:.3f}" if tm else "-", f"{tm / nm:.2f}x" if nm and tm else "-",
                 pct(nm), pct(tm)]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
