"""PyTorch's times for the cases numr_gpu_bench measures, on the same GPU in the same run.

Prints one JSON object per line: {"case": name, "ms": median milliseconds}. Timed with CUDA
events around `reps` back-to-back calls, median of `rounds` rounds, after warm-up. The cases
of a group (a GEMM and its epilogues) are timed interleaved, as numr_gpu_bench does: each
round runs every case of the group in turn, starting one case further each round.
Usage: python3 torch_peer.py [--reps 20] [--rounds 7] [--gap-ms 0] [--only a,b,...]
                             [--device cuda|cpu]
On the CPU the rounds are timed with the wall clock.
"""
import argparse
import json
import statistics
import time

import torch
import torch.nn.functional as F


DEVICE = "cuda"


def round_ms(fn, reps, gap_ms=0):
    if DEVICE == "cpu":
        if gap_ms > 0:
            time.sleep(gap_ms / 1000)
        start = time.perf_counter()
        for _ in range(reps):
            fn()
        return (time.perf_counter() - start) * 1000 / reps
    torch.cuda.synchronize()
    if gap_ms > 0:
        time.sleep(gap_ms / 1000)
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / reps


def timed_group(fns, reps, rounds, gap_ms=0):
    """Median round of each fn; rounds interleave the fns (one further each round)."""
    for fn in fns:
        for _ in range(3):
            fn()
    if DEVICE == "cuda":
        torch.cuda.synchronize()
    times = [[] for _ in fns]
    for r in range(rounds):
        for q in range(len(fns)):
            i = (q + r) % len(fns)
            times[i].append(round_ms(fns[i], reps, gap_ms))
    return [statistics.median(t) for t in times]


class Group(list):
    """Cases (name, fn) timed interleaved with each other."""


def cases():
    dev = DEVICE
    g = torch.Generator(device=dev).manual_seed(1)
    n = 64 << 20  # 64M elements

    def rnd(*shape, dtype=torch.float32):
        return torch.randn(*shape, device=dev, generator=g, dtype=torch.float32).to(dtype)

    big = rnd(256 << 20)
    big_out = torch.empty_like(big)
    yield "copy_f32_256M", lambda: big_out.copy_(big)
    yield "sum_all_f32_256M", lambda: big.sum()
    rows = big.view(65536, 4096)
    yield "sum_lastdim_f32_65536x4096", lambda: rows.sum(dim=1)
    yield "sum_dim0_f32_65536x4096", lambda: rows.sum(dim=0)
    yield "max_lastdim_f32_65536x4096", lambda: rows.amax(dim=1)
    del big_out

    for dt, tag in ((torch.float32, "f32"), (torch.bfloat16, "bf16")):
        a, b = rnd(n, dtype=dt), rnd(n, dtype=dt)
        yield f"exp_{tag}_64M", lambda a=a: torch.exp(a)
        yield f"add_{tag}_64M", lambda a=a, b=b: a + b
        yield f"silu_{tag}_64M", lambda a=a: F.silu(a)
        yield f"silu_mul_{tag}_64M", lambda a=a, b=b: F.silu(a) * b
        yield f"gelu_mul_{tag}_64M", lambda a=a, b=b: F.gelu(a, approximate="tanh") * b
        ag, bg = a.clone().requires_grad_(), b.clone().requires_grad_()
        gout = rnd(n, dtype=dt)

        def fwd_bwd(ag=ag, bg=bg, gout=gout):
            y = F.silu(ag) * bg
            torch.autograd.grad(y, (ag, bg), gout)

        yield f"silu_mul_fwd_bwd_{tag}_64M", fwd_bwd
        s = rnd(65536, 1024, dtype=dt)
        yield f"softmax_{tag}_65536x1024", lambda s=s: torch.softmax(s, dim=-1)
        yield f"cumsum_{tag}_8192x8192", lambda s=s: torch.cumsum(s.view(8192, 8192), dim=-1)
        w, bn = rnd(1024, dtype=dt), rnd(1024, dtype=dt)
        yield (f"rms_norm_{tag}_65536x1024",
               lambda s=s, w=w: F.rms_norm(s, (1024,), w, eps=1e-5))
        yield (f"layer_norm_{tag}_65536x1024",
               lambda s=s, w=w, bn=bn: F.layer_norm(s, (1024,), w, bn, eps=1e-5))
        sg, wg, bg2 = s.clone().requires_grad_(), w.clone().requires_grad_(), bn.clone().requires_grad_()
        gn = rnd(65536, 1024, dtype=dt)

        def rms_fwd_bwd(sg=sg, wg=wg, gn=gn):
            torch.autograd.grad(F.rms_norm(sg, (1024,), wg, eps=1e-5), (sg, wg), gn)

        def ln_fwd_bwd(sg=sg, wg=wg, bg2=bg2, gn=gn):
            torch.autograd.grad(F.layer_norm(sg, (1024,), wg, bg2, eps=1e-5), (sg, wg, bg2), gn)

        yield f"rms_norm_fwd_bwd_{tag}_65536x1024", rms_fwd_bwd
        yield f"layer_norm_fwd_bwd_{tag}_65536x1024", ln_fwd_bwd
        q, kk, v, ga = (rnd(8, 16, 1024, 64, dtype=dt) for _ in range(4))
        yield (f"sdpa_causal_{tag}_8x16x1024x64",
               lambda q=q, kk=kk, v=v: F.scaled_dot_product_attention(q, kk, v, is_causal=True))
        qg, kg, vg = (t.clone().requires_grad_() for t in (q, kk, v))

        def sdpa_fwd_bwd(qg=qg, kg=kg, vg=vg, ga=ga):
            o = F.scaled_dot_product_attention(qg, kg, vg, is_causal=True)
            torch.autograd.grad(o, (qg, kg, vg), ga)

        yield f"sdpa_causal_fwd_bwd_{tag}_8x16x1024x64", sdpa_fwd_bwd
        del q, kk, v, ga, qg, kg, vg
        for seq in (1024, 4096):
            for hd in (64, 128):
                q, kk, v, ga = (rnd(4, 16, seq, hd, dtype=dt) for _ in range(4))
                size = f"4x16x{seq}x{hd}"
                yield (f"sdpa_{tag}_{size}",
                       lambda q=q, kk=kk, v=v: F.scaled_dot_product_attention(q, kk, v))
                qg, kg, vg = (t.clone().requires_grad_() for t in (q, kk, v))

                def sdpa_plain_fwd_bwd(qg=qg, kg=kg, vg=vg, ga=ga):
                    o = F.scaled_dot_product_attention(qg, kg, vg)
                    torch.autograd.grad(o, (qg, kg, vg), ga)

                yield f"sdpa_fwd_bwd_{tag}_{size}", sdpa_plain_fwd_bwd
                del q, kk, v, ga, qg, kg, vg
        yield (f"contiguous_t_{tag}_16384x4096",
               lambda s=s: s.view(16384, 4096).t().contiguous())
        if dt == torch.float32:
            # A row-major result, as numr's: `to` alone would keep the transposed strides.
            yield ("cast_t_to_bf16_f32_16384x4096",
                   lambda s=s: s.view(16384, 4096).t().to(
                       torch.bfloat16, memory_format=torch.contiguous_format))
        del a, b, ag, bg, gout, s, w, bn, sg, wg, bg2, gn

    m, k, nn = 8192, 4096, 4096
    for dt, tag, tf32 in ((torch.float32, "f32", False), (torch.float32, "tf32", True),
                          (torch.bfloat16, "bf16", False)):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        # Weights scaled by 1/sqrt(k), as initialised in practice (numr_gpu_bench does the same).
        x, bias = rnd(m, k, dtype=dt), rnd(nn, dtype=dt)
        w = (torch.randn(k, nn, device=dev, generator=g, dtype=torch.float32) / k ** 0.5).to(dt)
        yield Group([
            (f"matmul_{tag}_{m}x{k}x{nn}", lambda x=x, w=w: x @ w),
            (f"linear_bias_{tag}_{m}x{k}x{nn}",
             lambda x=x, w=w, bias=bias: torch.addmm(bias, x, w)),
            (f"linear_gelu_{tag}_{m}x{k}x{nn}",
             lambda x=x, w=w, bias=bias: F.gelu(torch.addmm(bias, x, w), approximate="tanh")),
            (f"linear_gelu_fused_{tag}_{m}x{k}x{nn}",
             lambda x=x, w=w, bias=bias: torch._addmm_activation(bias, x, w, use_gelu=True)),
            (f"linear_silu_{tag}_{m}x{k}x{nn}",
             lambda x=x, w=w, bias=bias: F.silu(torch.addmm(bias, x, w))),
        ])
        xg, wg, bg = (t.clone().requires_grad_() for t in (x, w, bias))
        gout = rnd(m, nn, dtype=dt)

        def lin_bwd(xg=xg, wg=wg, bg=bg, gout=gout):
            y = F.gelu(torch.addmm(bg, xg, wg), approximate="tanh")
            torch.autograd.grad(y, (xg, wg, bg), gout)

        yield f"linear_gelu_fwd_bwd_{tag}_{m}x{k}x{nn}", lin_bwd
        y = F.gelu(torch.addmm(bg, xg, wg), approximate="tanh")
        yield f"linear_gelu_bwd_{tag}_{m}x{k}x{nn}", \
            lambda y=y, xg=xg, wg=wg, bg=bg, gout=gout: torch.autograd.grad(
                y, (xg, wg, bg), gout, retain_graph=True)
        pre = torch.addmm(bias, x, w)
        yield f"bias_gelu_bwd_{tag}_{m}x{nn}", \
            lambda pre=pre, gout=gout: torch.ops.aten.gelu_backward(
                gout, pre, approximate="tanh").sum(0)
        yield f"matmul_nt_{tag}_{m}x{k}x{nn}", lambda gout=gout, w=w: gout @ w.t()
        yield f"matmul_tn_{tag}_{m}x{k}x{nn}", lambda x=x, gout=gout: x.t() @ gout
        del x, w, bias, xg, wg, bg, gout, y, pre
    torch.backends.cuda.matmul.allow_tf32 = False




def main():
    p = argparse.ArgumentParser()
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--gap-ms", type=int, default=0, help="idle time before each round")
    p.add_argument("--only", default="", help="comma-separated substrings of case names")
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    args = p.parse_args()
    global DEVICE
    DEVICE = args.device
    name = torch.cuda.get_device_name() if DEVICE == "cuda" else \
        f"cpu ({torch.get_num_threads()} threads)"
    print(json.dumps({"device": name, "torch": torch.__version__}), flush=True)
    wanted = [w for w in args.only.split(",") if w]
    for item in cases():
        group = item if isinstance(item, Group) else [item]
        group = [(name, fn) for name, fn in group
                 if not wanted or any(w in name for w in wanted)]
        if not group:
            continue
        times = timed_group([fn for _, fn in group], args.reps, args.rounds, args.gap_ms)
        for (name, _), ms in zip(group, times):
            print(json.dumps({"case": name, "ms": ms}), flush=True)
        if DEVICE == "cuda":
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
