"""Joins bench/cpu/run.sh's outputs (numr_T.jsonl and torch_T.jsonl for each thread count
T) into one markdown table: case, threads, numr ms, torch ms, numr speed-up (torch / numr).
Usage: python3 report.py out-dir T [T ...]
"""
import importlib.util
import os
import sys

# The JSON-lines reader of the GPU report (bench/gpu/report.py), shared rather than copied.
_spec = importlib.util.spec_from_file_location(
    "gpu_report", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gpu", "report.py"))
_gpu_report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_gpu_report)


def load(path):
    """(meta, rows by case) of one output, empty where a run left no file."""
    return _gpu_report.load(path) if os.path.exists(path) else ({}, {})


def main():
    out, counts = sys.argv[1], [int(t) for t in sys.argv[2:]]
    cpu = os.path.join(out, "cpu.txt")
    if os.path.exists(cpu):
        with open(cpu) as f:
            print("; ".join(line.strip() for line in f if line.strip()))
    rows, order = {}, []
    for t in counts:
        tmeta, torch = load(os.path.join(out, f"torch_{t}.jsonl"))
        _, numr = load(os.path.join(out, f"numr_{t}.jsonl"))
        if tmeta:
            print(f"PyTorch {tmeta.get('torch', '?')}")
        for name in list(torch) + [c for c in numr if c not in torch]:
            # The same case at every thread count, whatever its size: the name less its size.
            family = name.rsplit("_", 1)[0]
            if family not in rows:
                rows[family] = []
                order.append(family)
            rows[family].append((name, t, numr.get(name, {}), torch.get(name, {})))
    print()
    print("| case | threads | numr ms | torch ms | numr speed-up |")
    print("|---|---:|---:|---:|---:|")
    for family in order:
        for name, t, n, tr in rows[family]:
            nm, tm = n.get("ms"), tr.get("ms")
            cells = [name, str(t), f"{nm:.3f}" if nm else n.get("error", "-")[:60],
                     f"{tm:.3f}" if tm else tr.get("error", "-")[:60],
                     f"{tm / nm:.2f}x" if nm and tm else "-"]
            print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
