"""Joins bench/cpu/run.sh's outputs (numr_T.jsonl and torch_T.jsonl for each thread count
T) into one markdown table: case, threads, numr ms, torch ms, numr speed-up (torch / numr).
Usage: python3 report.py out-dir T [T ...]
"""
import json
import os
import sys


def load(path):
    meta, rows = {}, {}
    if not os.path.exists(path):
        return meta, rows
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
