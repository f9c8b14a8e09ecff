#!/usr/bin/env bash
# Prints the path of the libnccl.so.2 that PyTorch loads (read from the process's memory
# map once torch has NCCL loaded), else the first libnccl.so.2 under Python's package
# folders; prints nothing when there is none. The multi-GPU scripts point NUMR_NCCL at it,
# so numr and PyTorch run the same NCCL.
python3 - 2>/dev/null <<'PY' || true
import glob, os, site, sys
try:
    import torch
    torch.cuda.nccl.version()
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if os.path.basename(path).startswith("libnccl.so"):
                print(path)
                sys.exit(0)
except Exception:
    pass
dirs = site.getsitepackages() + [site.getusersitepackages()]
for d in dirs:
    for pattern in ("nvidia/nccl/lib", "nvidia/cu1*/lib", "torch/lib"):
        for path in sorted(glob.glob(os.path.join(d, pattern, "libnccl.so.2"))):
            print(path)
            sys.exit(0)
PY
