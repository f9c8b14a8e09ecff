"""PyTorch's times for the cases numr_gpu_bench measures, on the same GPU in the same run.

Prints one JSON object per line: {"case": name, "ms": median milliseconds}. Timed with CUDA
events around `reps` back-to-back calls, median of `rounds` rounds, after warm-up. The cases
of a group (a GEMM and its epilogues) are timed interleaved, as numr_gpu_bench does: each
round runs every case of the group in turn, starting one case further each round.
Usage: python3 torch_peer.py [--reps 20] [--rounds 7] [--gap-ms 0] [--only a,b,...]
                             [--device cuda|cpu] [--suite all|cpu] [--threads N] [--warmup 3]
On the CPU the rounds are timed with the wall clock. --suite cpu runs the CPU scaling cases
alone (numr_gpu_bench's run_cpu, the same names; bench/cpu/run.sh runs both at several
thread counts); --threads sets torch.set_num_threads first.
"""
import argparse
import itertools
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


WARMUP = 3


def timed_group(fns, reps, rounds, gap_ms=0):
    """Median round of each fn; rounds interleave the fns (one further each round)."""
    for fn in fns:
        for _ in range(WARMUP):
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

    # Sorting, as numr_gpu_bench: stable sorts (values and indices), topk, searchsorted.
    one = rnd(1, 16 << 20)
    yield "sort_f32_16M", lambda: torch.sort(one, dim=-1, stable=True)
    square = rnd(4096, 4096)
    yield "sort_f32_4096x4096", lambda: torch.sort(square, dim=-1, stable=True)
    short_rows = rnd(65536, 64)
    yield "sort_f32_65536x64", lambda: torch.sort(short_rows, dim=-1, stable=True)
    logits = rnd(4096, 32000)
    yield "topk50_f32_4096x32000", lambda: torch.topk(logits, 50, dim=-1)
    seq = torch.sort(rnd(1 << 20)).values
    queries = rnd(1 << 20)
    yield "searchsorted_f32_1M", lambda: torch.searchsorted(seq, queries)
    del one, square, short_rows, logits, seq, queries


def family_cases():
    """The model families (numr_gpu_bench's run_families, the same names)."""
    dev = DEVICE
    g = torch.Generator(device=dev).manual_seed(2)

    def rnd(*shape, dtype=torch.float32):
        return torch.randn(*shape, device=dev, generator=g, dtype=torch.float32).to(dtype)

    def ints(high, *shape):
        return torch.randint(0, high, shape, device=dev, generator=g)

    for dt, tag in ((torch.float32, "f32"), (torch.bfloat16, "bf16")):
        x, w, b = rnd(32, 256, 56, 56, dtype=dt), rnd(256, dtype=dt), rnd(256, dtype=dt)
        yield (f"group_norm_{tag}_32x256x56x56_g32",
               lambda x=x, w=w, b=b: F.group_norm(x, 32, w, b, eps=1e-5))
        del x, w, b
        x, r, w = rnd(65536, 1024, dtype=dt), rnd(65536, 1024, dtype=dt), rnd(1024, dtype=dt)

        def add_rms(x=x, r=r, w=w):
            s = x + r
            return s, F.rms_norm(s, (1024,), w, eps=1e-5)

        yield f"fused_add_rms_norm_{tag}_65536x1024", add_rms
        mask = torch.rand(65536, 1024, device=dev, generator=g) < 0.5
        yield f"masked_fill_{tag}_65536x1024", lambda x=x, mask=mask: x.masked_fill(mask, 0.0)
        yield f"roll_{tag}_65536x1024", lambda x=x: torch.roll(x, 7, 1)
        yield (f"repeat_interleave_{tag}_65536x1024_r2",
               lambda x=x: torch.repeat_interleave(x, 2, dim=0))
        rows = ints(65536, 16384)
        yield (f"index_select_{tag}_65536x1024_16384",
               lambda x=x, rows=rows: torch.index_select(x, 0, rows))
        wide = x.view(8192, 8192)
        idx, src = ints(8192, 8192, 1024), rnd(8192, 1024, dtype=dt)
        yield (f"gather_dim1_{tag}_8192x8192_k1024",
               lambda wide=wide, idx=idx: torch.gather(wide, 1, idx))
        yield (f"scatter_add_dim1_{tag}_8192x8192_k1024",
               lambda wide=wide, idx=idx, src=src: wide.scatter_reduce(1, idx, src, "sum"))
        del x, r, w, mask, rows, wide, idx, src
        table, tokens, gout = rnd(50000, 1024, dtype=dt), ints(50000, 8, 2048), rnd(8, 2048, 1024, dtype=dt)
        yield (f"embedding_{tag}_50000x1024_8x2048",
               lambda table=table, tokens=tokens: F.embedding(tokens, table))
        tg = table.clone().requires_grad_()

        def emb_fwd_bwd(tg=tg, tokens=tokens, gout=gout):
            torch.autograd.grad(F.embedding(tokens, tg), (tg,), gout)

        yield f"embedding_fwd_bwd_{tag}_50000x1024_8x2048", emb_fwd_bwd
        del table, tokens, gout, tg
        x = rnd(64 << 20, dtype=dt)
        yield f"dropout_{tag}_64M", lambda x=x: F.dropout(x, 0.1, training=True)
        del x
        q, k = rnd(8, 16, 1024, 64, dtype=dt), rnd(8, 16, 1024, 64, dtype=dt)
        yield (f"einsum_bhqd_bhkd_{tag}_8x16x1024x64",
               lambda q=q, k=k: torch.einsum("bhqd,bhkd->bhqk", q, k))
        del q, k
        x, w, b, gout = (rnd(32, 64, 56, 56, dtype=dt), rnd(64, 64, 3, 3, dtype=dt),
                         rnd(64, dtype=dt), rnd(32, 64, 56, 56, dtype=dt))
        yield (f"conv2d_{tag}_32x64x56x56_k3",
               lambda x=x, w=w, b=b: F.conv2d(x, w, b, padding=1))
        xg, wg, bg = (t.clone().requires_grad_() for t in (x, w, b))

        def conv_fwd_bwd(xg=xg, wg=wg, bg=bg, gout=gout):
            torch.autograd.grad(F.conv2d(xg, wg, bg, padding=1), (xg, wg, bg), gout)

        yield f"conv2d_fwd_bwd_{tag}_32x64x56x56_k3", conv_fwd_bwd
        xd, wd = rnd(32, 256, 56, 56, dtype=dt), rnd(256, 1, 3, 3, dtype=dt)
        yield (f"depthwise_conv2d_{tag}_32x256x56x56_k3",
               lambda xd=xd, wd=wd: F.conv2d(xd, wd, padding=1, groups=256))
        x1, w1 = rnd(32, 256, 4096, dtype=dt), rnd(256, 256, 3, dtype=dt)
        yield (f"conv1d_{tag}_32x256x4096_k3",
               lambda x1=x1, w1=w1: F.conv1d(x1, w1, padding=1))
        del x, w, b, gout, xg, wg, bg, xd, wd, x1, w1
    a, b = rnd(4096, 128), rnd(4096, 128)
    yield "cdist_f32_4096x4096x128", lambda a=a, b=b: torch.cdist(a, b)
    v = rnd(16 << 20)
    half = torch.rand(16 << 20, device=dev, generator=g) < 0.5
    yield "masked_select_f32_16M", lambda v=v, half=half: torch.masked_select(v, half)
    yield "nonzero_bool_16M", lambda half=half: torch.nonzero(half)
    small = ints(1000, 16 << 20)
    yield "bincount_i64_16M_1000", lambda small=small: torch.bincount(small)
    many = ints(1 << 20, 16 << 20)
    yield "unique_i64_16M", lambda many=many: torch.unique(many)
    labels = ints(1000, 65536)
    yield "one_hot_i64_65536x1000", lambda labels=labels: F.one_hot(labels, 1000)


def science_cases():
    """Scientific computing (numr_gpu_bench's run_science, the same names)."""
    dev = DEVICE
    g = torch.Generator(device=dev).manual_seed(4)
    n = 16 << 20

    def rnd(*shape, dtype=torch.float32):
        return torch.randn(*shape, device=dev, generator=g, dtype=dtype)

    x = torch.rand(n, device=dev, generator=g) + 0.5
    yield "lgamma_f32_16M", lambda: torch.lgamma(x)
    yield "digamma_f32_16M", lambda: torch.digamma(x)
    yield "expit_f32_16M", lambda: torch.special.expit(x)
    a = torch.complex(rnd(n), rnd(n))
    b = torch.complex(rnd(n), rnd(n))
    yield "complex_mul_c64_16M", lambda: a * b
    yield "complex_abs_c64_16M", lambda: torch.abs(a)
    m = a[: 1 << 20].view(1024, 1024)
    yield "complex_matmul_c64_1024", lambda: m @ m
    yield "fft_c64_1M", lambda: torch.fft.fft(a[: 1 << 20])
    yield "fft_c64_prime_1000003", lambda: torch.fft.fft(a[:1000003])
    rows = rnd(1024, 4096)
    yield "rfft_f32_1024x4096", lambda: torch.fft.rfft(rows)
    q = torch.tensor([0.1, 0.5, 0.9], device=dev)
    yield "quantile_f32_1024x4096_dim1", lambda: torch.quantile(rows, q, dim=1)
    flat = rnd(n)
    if dev == "cpu":  # torch.histogram has no CUDA kernel; histc is its GPU counterpart
        yield "histogram_f32_16M_100", lambda: torch.histogram(flat, 100, range=(-4.0, 4.0))
    else:
        yield "histogram_f32_16M_100", lambda: torch.histc(flat, 100, -4.0, 4.0)
    vars_ = rnd(256, 65536)
    yield "cov_f32_256x65536", lambda: torch.cov(vars_)
    yield "bessel_j0_f32_16M", lambda: torch.special.bessel_j0(x)
    yield "bessel_i0e_f32_16M", lambda: torch.special.i0e(x)
    yield "bessel_k0_f32_16M", lambda: torch.special.modified_bessel_k0(x)
    shape_a = x * 4.0
    yield "gammainc_f32_16M", lambda: torch.special.gammainc(shape_a, x)
    conc = torch.rand(n, device=dev, generator=g) + 0.5
    rate = conc * 8.0
    prob = torch.rand(n, device=dev, generator=g)
    count = torch.full((n,), 20.0, device=dev)
    yield "random_exponential_f32_16M", lambda: torch.empty_like(conc).exponential_(generator=g) / conc
    yield "random_gamma_f32_16M", lambda: torch._standard_gamma(conc)
    yield "random_poisson_f32_16M", lambda: torch.poisson(rate, generator=g)
    yield "random_binomial_f32_16M", lambda: torch.binomial(count, prob, generator=g)
    probs = torch.rand(4096, 1000, device=dev, generator=g)
    yield "random_multinomial_f32_4096x1000_16", lambda: torch.multinomial(probs, 16, True, generator=g)
    yield "random_randperm_16M", lambda: torch.randperm(n, device=dev, generator=g)
    small = rnd(4096, 8, 8, dtype=torch.float64) + 8 * torch.eye(8, dtype=torch.float64, device=dev)
    rhs = rnd(4096, 8, 1, dtype=torch.float64)
    yield "linalg_solve_f64_4096x8x8", lambda: torch.linalg.solve(small, rhs)
    big = rnd(1024, 1024, dtype=torch.float64) + 64 * torch.eye(1024, dtype=torch.float64, device=dev)
    yield "linalg_inv_f64_1024", lambda: torch.linalg.inv(big)
    sym = big + big.T
    yield "linalg_eigh_f64_1024", lambda: torch.linalg.eigh(sym)
    yield "linalg_svd_f64_1024", lambda: torch.linalg.svd(big, full_matrices=False)
    yield "linalg_qr_f64_1024", lambda: torch.linalg.qr(big)
    spd = big @ big.T + torch.eye(1024, dtype=torch.float64, device=dev)
    yield "linalg_cholesky_f64_1024", lambda: torch.linalg.cholesky(spd)
    x16 = rnd(4096, 16, 16)
    spd16 = x16 @ x16.transpose(1, 2) + 16 * torch.eye(16, device=dev)
    yield "linalg_cholesky_f32_4096x16x16", lambda: torch.linalg.cholesky(spd16)
    yield "linalg_eigh_f32_4096x16x16", lambda: torch.linalg.eigh(spd16)
    yield "linalg_svd_f32_4096x16x16", lambda: torch.linalg.svd(x16, full_matrices=False)
    yield "linalg_qr_f32_4096x16x16", lambda: torch.linalg.qr(x16)
    yield "linalg_inv_f32_4096x16x16", lambda: torch.linalg.inv(spd16)
    g256 = rnd(256, 256, dtype=torch.float64)
    yield "linalg_eig_f64_256", lambda: torch.linalg.eig(g256)
    c8 = torch.complex(rnd(4096, 8, 8), rnd(4096, 8, 8))
    yield "linalg_svd_c64_4096x8x8", lambda: torch.linalg.svd(c8, full_matrices=False)
    c256 = torch.complex(rnd(256, 256, dtype=torch.float64), rnd(256, 256, dtype=torch.float64))
    herm = c256 + c256.conj().T
    yield "linalg_eigh_c128_256", lambda: torch.linalg.eigh(herm)


def cpu_cases(threads):
    """numr_gpu_bench's run_cpu: GEMMs (4096^3 from 4 threads, else 2048^3) and epilogues,
    the fused gate, reductions, row norms, a convolution and a sort."""
    dev = "cpu"
    g = torch.Generator(device=dev).manual_seed(6)

    def rnd(*shape, dtype=torch.float32):
        return torch.randn(*shape, device=dev, generator=g, dtype=torch.float32).to(dtype)

    s = 4096 if threads >= 4 else 2048
    shape = f"{s}x{s}x{s}"
    for dt, tag in ((torch.float32, "f32"), (torch.bfloat16, "bf16")):
        x, bias = rnd(s, s, dtype=dt), rnd(s, dtype=dt)
        w = (torch.randn(s, s, device=dev, generator=g) / s ** 0.5).to(dt)
        yield Group([
            (f"matmul_{tag}_{shape}", lambda x=x, w=w: x @ w),
            (f"linear_gelu_{tag}_{shape}",
             lambda x=x, w=w, bias=bias: F.gelu(torch.addmm(bias, x, w), approximate="tanh")),
        ])
        xg, wg, bg = (t.clone().requires_grad_() for t in (x, w, bias))
        gout = rnd(s, s, dtype=dt)

        def lin_fwd_bwd(xg=xg, wg=wg, bg=bg, gout=gout):
            y = F.gelu(torch.addmm(bg, xg, wg), approximate="tanh")
            torch.autograd.grad(y, (xg, wg, bg), gout)

        yield f"linear_gelu_fwd_bwd_{tag}_{shape}", lin_fwd_bwd
    n = 64 << 20
    a, b = rnd(n), rnd(n)
    yield "silu_mul_f32_64M", lambda: F.silu(a) * b
    yield "sum_all_f32_64M", lambda: a.sum()
    rows = a.view(16384, 4096)
    yield "sum_lastdim_f32_16384x4096", lambda: rows.sum(dim=1)
    yield "softmax_f32_16384x4096", lambda: torch.softmax(rows, dim=-1)
    nw, nb = rnd(4096), rnd(4096)
    yield "rms_norm_f32_16384x4096", lambda: F.rms_norm(rows, (4096,), nw, 1e-5)
    yield "layer_norm_f32_16384x4096", lambda: F.layer_norm(rows, (4096,), nw, nb, 1e-5)
    ab, bb = rnd(n, dtype=torch.bfloat16), rnd(n, dtype=torch.bfloat16)
    yield "silu_mul_bf16_64M", lambda: F.silu(ab) * bb
    xc, wc, bc = rnd(32, 64, 56, 56), rnd(64, 64, 3, 3), rnd(64)
    yield "conv2d_f32_32x64x56x56_k3", lambda: F.conv2d(xc, wc, bc, 1, 1)
    square = rnd(4096, 4096)
    yield "sort_f32_4096x4096", lambda: torch.sort(square, dim=-1, stable=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--gap-ms", type=int, default=0, help="idle time before each round")
    p.add_argument("--only", default="", help="comma-separated substrings of case names")
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--suite", default="all", choices=["all", "cpu"])
    p.add_argument("--threads", type=int, default=0, help="torch.set_num_threads first")
    p.add_argument("--warmup", type=int, default=3, help="calls of each case before timing")
    args = p.parse_args()
    global DEVICE, WARMUP
    DEVICE = "cpu" if args.suite == "cpu" else args.device
    WARMUP = args.warmup
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    name = torch.cuda.get_device_name() if DEVICE == "cuda" else \
        f"cpu ({torch.get_num_threads()} threads)"
    print(json.dumps({"device": name, "torch": torch.__version__}), flush=True)
    wanted = [w for w in args.only.split(",") if w]
    suite = cpu_cases(torch.get_num_threads()) if args.suite == "cpu" else \
        itertools.chain(cases(), family_cases(), science_cases())
    for item in suite:
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
