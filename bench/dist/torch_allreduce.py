"""PyTorch's side of bench/dist/run.sh: all-reduce bandwidth over torch.distributed (NCCL),
measured as numr_dist_bench measures it (in-place F32 sums, 5 warm-up calls, the mean of
back-to-back calls, the slowest rank's time; busbw = algbw * 2 (n - 1) / n).
    torchrun --nproc_per_node=2 bench/dist/torch_allreduce.py [--max-bytes N]
Rank 0 prints CSV: bytes,time_us,algbw_gbs,busbw_gbs
"""
import argparse
import os
import time

import torch
import torch.distributed as dist


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--min-bytes", type=int, default=1024)
    ap.add_argument("--max-bytes", type=int, default=1 << 30)
    args = ap.parse_args()
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    rank, n = dist.get_rank(), dist.get_world_size()
    check = torch.full((1000,), float(rank + 1), device="cuda")
    dist.all_reduce(check)
    assert check[0].item() == n * (n + 1) / 2, check[0].item()
    if rank == 0:
        print(f"# torch {torch.__version__} nccl {torch.cuda.nccl.version()}, {n} ranks")
        print("bytes,time_us,algbw_gbs,busbw_gbs")
    size = args.min_bytes
    while size <= args.max_bytes:
        iters = 200 if size <= 1 << 20 else 50 if size <= 64 << 20 else 10
        x = torch.zeros(size // 4, dtype=torch.float32, device="cuda")
        for _ in range(5):
            dist.all_reduce(x)
        dist.barrier()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        secs = (time.perf_counter() - t0) / iters
        slowest = torch.tensor([secs], dtype=torch.float64, device="cuda")
        dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
        t = slowest.item()
        algbw = size / t / 1e9
        if rank == 0:
            print(f"{size},{t * 1e6:.2f},{algbw:.3f},{algbw * 2 * (n - 1) / n:.3f}", flush=True)
        size *= 2
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
