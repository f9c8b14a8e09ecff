// numr's side of the GPU benchmark: the cases of bench/gpu/torch_peer.py, on cuda:0 (or,
// with --device cpu, on the CPU beside PyTorch's CPU ops).
// Prints one JSON object per line, {"case": name, "ms": median milliseconds}; the
// script bench/gpu/run.sh runs both programs in one go and bench/gpu/report.py joins
// them into the table of BENCHMARKS.md (ratios and fractions of the measured floors).
//   numr_gpu_bench [--reps 20] [--rounds 7] [--gap-ms 0] [--only substring[,substring...]]
//                  [--device cuda:0|cpu|webgpu:0] [--suite all|cpu] [--threads N]
//                  [--warmup 3]
// --suite cpu runs the CPU scaling cases alone (run_cpu; bench/cpu/run.sh runs them at
// several thread counts); --threads sets numr's CPU thread count first.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "core/composition.h"
#include "numr/numr.h"

using namespace numr;

namespace {

// N(0, 1) inputs. WebGPU draws normals on the host in double (its shaders have none), one
// thread; the CPU backend draws the same numbers for the seed on all its threads, so WebGPU's
// inputs are drawn there and uploaded.
Tensor normal_input(const Shape& shape, DType dtype, Device dev, Generator& gen) {
  if (dev.type != DeviceType::WebGpu) return randn(shape, dtype, dev, gen);
  return randn(shape, dtype, Device::cpu(), gen).to(dev);
}

struct Options {
  int reps = 20, rounds = 7;
  int gap_ms = 0;  // idle time before each round (--gap-ms)
  int warmup = 3;  // calls of each case before the timed rounds
  std::string only;
};

struct Case {
  std::string name;
  std::function<void()> fn;
};

bool wanted(const Options& o, const std::string& name) {
  if (o.only.empty()) return true;
  for (size_t at = 0; at <= o.only.size();) {
    const size_t comma = std::min(o.only.find(',', at), o.only.size());
    if (name.find(o.only.substr(at, comma - at)) != std::string::npos) return true;
    at = comma + 1;
  }
  return false;
}

// Whether a block of cases has a wanted one: blocks make their inputs only then, so that a
// run of a few cases does not wait for the others' inputs (slow on some devices).
bool any_wanted(const Options& o, const std::vector<std::string>& names) {
  for (const std::string& n : names)
    if (wanted(o, n)) return true;
  return false;
}

// The mean time of `reps` back-to-back calls. The device is synchronized before and after,
// so queued work is all counted; with --gap-ms it then idles that long before the calls, so
// that every round starts from the same clock and temperature (at the power limit they
// depend on what ran just before).
double round_ms(const Options& o, Device dev, const std::function<void()>& fn) {
  synchronize(dev);
  if (o.gap_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(o.gap_ms));
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < o.reps; ++i) fn();
  synchronize(dev);
  const std::chrono::duration<double, std::milli> d = std::chrono::steady_clock::now() - start;
  return d.count() / o.reps;
}

// Times the wanted cases of a group in `rounds` rounds after warm-up, each round running
// every case in turn, starting one case further each round; prints each case's median
// round. A group is a set of cases compared with each other (a GEMM and its epilogues):
// interleaved, they share the GPU's clock and temperature, which at its power limit move
// by several percent within a few seconds.
void report(const Options& o, Device dev, std::vector<Case> cases) {
  std::erase_if(cases, [&](const Case& c) { return !wanted(o, c.name); });
  std::vector<std::vector<double>> t(cases.size());
  std::vector<std::string> error(cases.size());
  const auto t0 = std::chrono::steady_clock::now();
  const auto since = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  // Progress on stderr, so that a run stopped by a time limit still says where it was.
  for (size_t i = 0; i < cases.size(); ++i) try {
      std::fprintf(stderr, "%s: warm-up\n", cases[i].name.c_str());
      for (int w = 0; w < o.warmup; ++w) cases[i].fn();
      synchronize(dev);
      std::fprintf(stderr, "%s: warmed up at %.2f s\n", cases[i].name.c_str(), since());
    } catch (const std::exception& e) {
      error[i] = e.what();
    }
  for (int r = 0; r < o.rounds; ++r)
    for (size_t q = 0; q < cases.size(); ++q) {
      const size_t i = (q + size_t(r)) % cases.size();
      if (!error[i].empty()) continue;
      try {
        t[i].push_back(round_ms(o, dev, cases[i].fn));
        std::fprintf(stderr, "%s: round %d %.3f ms at %.2f s\n", cases[i].name.c_str(), r,
                     t[i].back(), since());
      } catch (const std::exception& e) {
        error[i] = e.what();
      }
    }
  for (size_t i = 0; i < cases.size(); ++i) {
    if (!error[i].empty()) {
      std::printf("{\"case\": \"%s\", \"error\": \"%s\"}\n", cases[i].name.c_str(),
                  error[i].c_str());
    } else {
      std::sort(t[i].begin(), t[i].end());
      std::printf("{\"case\": \"%s\", \"ms\": %.6f}\n", cases[i].name.c_str(),
                  t[i][t[i].size() / 2]);
    }
  }
  std::fflush(stdout);
}

void report(const Options& o, Device dev, const std::string& name,
            const std::function<void()>& fn) {
  report(o, dev, std::vector<Case>{{name, fn}});
}

void run(const Options& o, Device dev) {
  Generator gen(1);
  const int64_t n = int64_t(64) << 20;
  if (any_wanted(o, {"copy_f32_256M", "sum_all_f32_256M", "sum_lastdim_f32_65536x4096",
                     "sum_dim0_f32_65536x4096", "max_lastdim_f32_65536x4096"})) {
    Tensor big = normal_input({int64_t(256) << 20}, DType::F32, dev, gen);
    report(o, dev, "copy_f32_256M", [&] { (void)big.clone(); });
    report(o, dev, "sum_all_f32_256M", [&] { (void)sum(big); });
    Tensor rows = big.view({65536, 4096});
    report(o, dev, "sum_lastdim_f32_65536x4096", [&] { (void)sum(rows, {1}); });
    report(o, dev, "sum_dim0_f32_65536x4096", [&] { (void)sum(rows, {0}); });
    report(o, dev, "max_lastdim_f32_65536x4096", [&] { (void)max(rows, {1}); });
  }
  for (auto [dt, tag] : {std::pair{DType::F32, "f32"}, std::pair{DType::BF16, "bf16"}}) {
    const std::string t = tag;
    if (any_wanted(o, {"exp_" + t + "_64M", "add_" + t + "_64M", "silu_" + t + "_64M",
                       "silu_mul_" + t + "_64M", "gelu_mul_" + t + "_64M",
                       "silu_mul_fwd_bwd_" + t + "_64M"})) {
      Tensor a = normal_input({n}, dt, dev, gen), b = normal_input({n}, dt, dev, gen),
             g = normal_input({n}, dt, dev, gen);
      report(o, dev, "exp_" + t + "_64M", [&] { (void)exp(a); });
      report(o, dev, "add_" + t + "_64M", [&] { (void)(a + b); });
      report(o, dev, "silu_" + t + "_64M", [&] { (void)silu(a); });
      report(o, dev, "silu_mul_" + t + "_64M", [&] { (void)silu_mul(a, b); });
      report(o, dev, "gelu_mul_" + t + "_64M", [&] { (void)gelu_mul(a, b); });
      // A training step's gate: the fused forward, then the fused backward from (g, a, b).
      report(o, dev, "silu_mul_fwd_bwd_" + t + "_64M", [&] {
        (void)silu_mul(a, b);
        (void)silu_mul_bwd(g, a, b);
      });
    }
    std::vector<std::string> rows_cases = {
        "softmax_" + t + "_65536x1024", "cumsum_" + t + "_8192x8192",
        "contiguous_t_" + t + "_16384x4096", "cast_t_to_bf16_" + t + "_16384x4096"};
    for (const char* c : {"_", "_composed_"})
      for (const char* nm : {"rms_norm", "layer_norm", "rms_norm_fwd_bwd", "layer_norm_fwd_bwd"})
        rows_cases.push_back(std::string(nm).append(c).append(t).append("_65536x1024"));
    if (any_wanted(o, rows_cases)) {
      Tensor s = normal_input({65536, 1024}, dt, dev, gen);
      report(o, dev, "softmax_" + t + "_65536x1024", [&] { (void)softmax(s, -1); });
      // rms_norm and layer_norm over rows of 1024 with eps 1e-5, as torch_peer.py; fwd_bwd is
      // the forward that saves its statistics, then the gradients of x, the weight (and the
      // bias). Each runs again through its composition (*_composed_*), fused against composed.
      Tensor nw = normal_input({1024}, dt, dev, gen), nb = normal_input({1024}, dt, dev, gen);
      Tensor gn = normal_input({65536, 1024}, dt, dev, gen);
      for (const bool composed : {false, true}) {
        const ForceComposition force(composed, {OpId::rms_norm, OpId::layer_norm});
        const std::string c = composed ? "_composed_" : "_";
        report(o, dev, "rms_norm" + c + t + "_65536x1024", [&] { (void)rms_norm(s, nw, 1e-5); });
        report(o, dev, "layer_norm" + c + t + "_65536x1024",
               [&] { (void)layer_norm(s, nw, nb, 1e-5); });
        report(o, dev, "rms_norm_fwd_bwd" + c + t + "_65536x1024", [&] {
          const NormForward f = rms_norm_fwd(s, nw, 1e-5);
          (void)rms_norm_bwd(gn, s, nw, f.rstd);
        });
        report(o, dev, "layer_norm_fwd_bwd" + c + t + "_65536x1024", [&] {
          const NormForward f = layer_norm_fwd(s, nw, nb, 1e-5);
          (void)layer_norm_bwd(gn, s, nw, f.mean, f.rstd);
        });
      }
      Tensor sq = s.view({8192, 8192});
      report(o, dev, "cumsum_" + t + "_8192x8192", [&] { (void)cumsum(sq, -1); });
      // A transposed view made contiguous: reads along one dim, writes along the other.
      Tensor tall = s.view({16384, 4096});
      report(o, dev, "contiguous_t_" + t + "_16384x4096",
             [&] { (void)contiguous(transpose(tall, 0, 1)); });
      // The same view cast to BF16 into a row-major result (mixed-precision weights).
      if (dt == DType::F32)
        report(o, dev, "cast_t_to_bf16_f32_16384x4096",
               [&] { (void)cast(transpose(tall, 0, 1), DType::BF16); });
    }
    // Causal attention over [8, 16, 1024, 64]; fwd_bwd takes the gradients of q, k and v
    // for the output gradient ga (through sum(out * ga), as torch_peer.py's grad call).
    if (any_wanted(o, {"sdpa_causal_" + t + "_8x16x1024x64",
                       "sdpa_causal_fwd_bwd_" + t + "_8x16x1024x64"})) {
      Tensor q = normal_input({8, 16, 1024, 64}, dt, dev, gen),
             kk = normal_input({8, 16, 1024, 64}, dt, dev, gen);
      Tensor v = normal_input({8, 16, 1024, 64}, dt, dev, gen),
             ga = normal_input({8, 16, 1024, 64}, dt, dev, gen);
      report(o, dev, "sdpa_causal_" + t + "_8x16x1024x64",
             [&] { (void)scaled_dot_product_attention(q, kk, v, Tensor(), true); });
      report(o, dev, "sdpa_causal_fwd_bwd_" + t + "_8x16x1024x64", [&] {
        const Var qv(q, true), kv(kk, true), vv(v, true);
        (void)backward(sum(scaled_dot_product_attention(qv, kv, vv, Tensor(), true) * ga));
      });
    }
    // Attention without a mask over [4, 16, S, D], the fused kernel's shapes; fwd_bwd as
    // above. At S = 1024 each runs again through its composition (*_composed_*).
    for (const int64_t seq : {1024, 4096})
      for (const int64_t hd : {64, 128}) {
        const Shape shape{4, 16, seq, hd};
        const std::string size = "_4x16x" + std::to_string(seq) + "x" + std::to_string(hd);
        if (!any_wanted(o, {"sdpa_" + t + size, "sdpa_fwd_bwd_" + t + size,
                            "sdpa_composed_" + t + size, "sdpa_fwd_bwd_composed_" + t + size}))
          continue;
        Tensor q = normal_input(shape, dt, dev, gen), kk = normal_input(shape, dt, dev, gen);
        Tensor v = normal_input(shape, dt, dev, gen), ga = normal_input(shape, dt, dev, gen);
        for (const bool composed : {false, true}) {
          if (composed && seq > 1024) continue;  // the scores alone take 4 GiB at 4096
          const ForceComposition force(composed, {OpId::scaled_dot_product_attention});
          const std::string c = composed ? "_composed_" : "_";
          report(o, dev, "sdpa" + c + t + size,
                 [&] { (void)scaled_dot_product_attention(q, kk, v); });
          report(o, dev, "sdpa_fwd_bwd" + c + t + size, [&] {
            const Var qv(q, true), kv(kk, true), vv(v, true);
            (void)backward(sum(scaled_dot_product_attention(qv, kv, vv) * ga));
          });
        }
      }
  }
  const int64_t m = 8192, k = 4096, nn = 4096;
  const std::string shape = "_8192x4096x4096";
  for (auto [dt, tag, tf32] :
       {std::tuple{DType::F32, "f32", false}, std::tuple{DType::F32, "tf32", true},
        std::tuple{DType::BF16, "bf16", false}}) {
    set_allow_tf32(tf32);
    const std::string t = tag;
    if (!any_wanted(o,
                    {"matmul_" + t + shape, "linear_bias_" + t + shape, "linear_gelu_" + t + shape,
                     "linear_silu_" + t + shape, "linear_gelu_fwd_bwd_" + t + shape,
                     "linear_gelu_bwd_" + t + shape, "bias_gelu_bwd_" + t + "_8192x4096",
                     "matmul_nt_" + t + shape, "matmul_tn_" + t + shape}))
      continue;
    // Weights scaled by 1/sqrt(k), as initialised in practice: the products are about as
    // large as the bias, where the activations are neither linear nor flat.
    Tensor x = normal_input({m, k}, dt, dev, gen);
    Tensor w =
        (normal_input({k, nn}, DType::F32, dev, gen) * (1.0 / std::sqrt(double(k)))).cast(dt);
    Tensor bias = normal_input({nn}, dt, dev, gen), g = normal_input({m, nn}, dt, dev, gen);
    // The plain matmul and the forward epilogues, interleaved (report's group).
    report(o, dev,
           {{"matmul_" + t + shape, [&] { (void)matmul(x, w); }},
            {"linear_bias_" + t + shape,
             [&] { (void)matmul_bias_activation(x, w, bias, Activation::None); }},
            {"linear_gelu_" + t + shape,
             [&] { (void)matmul_bias_activation(x, w, bias, Activation::Gelu); }},
            {"linear_silu_" + t + shape,
             [&] { (void)matmul_bias_activation(x, w, bias, Activation::Silu); }}});
    report(o, dev, "linear_gelu_fwd_bwd_" + t + shape, [&] {
      const EpilogueForward f = matmul_bias_activation_fwd(x, w, bias, Activation::Gelu);
      (void)matmul_bias_activation_bwd_saved(g, x, w, f.saved, Activation::Gelu);
    });
    // The backward alone and its pieces: grad * act'(pre) with the bias gradient, and the
    // two transposed GEMMs.
    if (wanted(o, "linear_gelu_bwd_" + t + shape) ||
        wanted(o, "bias_gelu_bwd_" + t + "_8192x4096")) {
      const EpilogueForward saved = matmul_bias_activation_fwd(x, w, bias, Activation::Gelu);
      report(o, dev, "linear_gelu_bwd_" + t + shape, [&] {
        (void)matmul_bias_activation_bwd_saved(g, x, w, saved.saved, Activation::Gelu);
      });
      report(o, dev, "bias_gelu_bwd_" + t + "_8192x4096",
             [&] { (void)bias_activation_bwd(g, saved.saved, Activation::Gelu); });
    }
    report(o, dev, "matmul_nt_" + t + shape, [&] { (void)matmul(g, w.transpose(0, 1)); });
    report(o, dev, "matmul_tn_" + t + shape, [&] { (void)matmul(x.transpose(0, 1), g); });
  }
  set_allow_tf32(false);
  // Sorting f32 rows (stable; values and indices): one row of 16M, square, many short rows;
  // the 50 largest of each vocabulary-sized row; 1M values searched in 1M sorted ones.
  if (any_wanted(o, {"sort_f32_16M", "sort_f32_4096x4096", "sort_f32_65536x64",
                     "topk50_f32_4096x32000", "searchsorted_f32_1M"})) {
    Tensor one = normal_input({1, int64_t(16) << 20}, DType::F32, dev, gen);
    report(o, dev, "sort_f32_16M", [&] { (void)sort(one, -1); });
    Tensor square = normal_input({4096, 4096}, DType::F32, dev, gen);
    report(o, dev, "sort_f32_4096x4096", [&] { (void)sort(square, -1); });
    Tensor short_rows = normal_input({65536, 64}, DType::F32, dev, gen);
    report(o, dev, "sort_f32_65536x64", [&] { (void)sort(short_rows, -1); });
    Tensor logits = normal_input({4096, 32000}, DType::F32, dev, gen);
    report(o, dev, "topk50_f32_4096x32000", [&] { (void)topk(logits, 50, -1); });
    Tensor seq = sort(normal_input({int64_t(1) << 20}, DType::F32, dev, gen), -1).values;
    Tensor queries = normal_input({int64_t(1) << 20}, DType::F32, dev, gen);
    report(o, dev, "searchsorted_f32_1M", [&] { (void)searchsorted(seq, queries); });
  }
}

// The model families beside PyTorch (torch_peer.py's family_cases, the same names): norms
// beyond the row norms, indexing, shapes, dropout, einsum, convolution and distances.
void run_families(const Options& o, Device dev) {
  Generator gen(2);
  for (auto [dt, tag] : {std::pair{DType::F32, "f32"}, std::pair{DType::BF16, "bf16"}}) {
    const std::string t = tag;
    if (wanted(o, "group_norm_" + t + "_32x256x56x56_g32")) {
      Tensor x = normal_input({32, 256, 56, 56}, dt, dev, gen);
      Tensor w = normal_input({256}, dt, dev, gen), b = normal_input({256}, dt, dev, gen);
      report(o, dev, "group_norm_" + t + "_32x256x56x56_g32",
             [&] { (void)group_norm(x, 32, w, b, 1e-5); });
    }
    if (any_wanted(
            o, {"fused_add_rms_norm_" + t + "_65536x1024", "masked_fill_" + t + "_65536x1024",
                "roll_" + t + "_65536x1024", "repeat_interleave_" + t + "_65536x1024_r2",
                "index_select_" + t + "_65536x1024_16384", "gather_dim1_" + t + "_8192x8192_k1024",
                "scatter_add_dim1_" + t + "_8192x8192_k1024"})) {
      Tensor x = normal_input({65536, 1024}, dt, dev, gen),
             r = normal_input({65536, 1024}, dt, dev, gen);
      Tensor w = normal_input({1024}, dt, dev, gen);
      report(o, dev, "fused_add_rms_norm_" + t + "_65536x1024",
             [&] { (void)fused_add_rms_norm(x, r, w, 1e-5); });
      Tensor mask = lt(rand({65536, 1024}, DType::F32, dev, gen), full({1}, 0.5, DType::F32, dev));
      report(o, dev, "masked_fill_" + t + "_65536x1024", [&] { (void)masked_fill(x, mask, 0.0); });
      report(o, dev, "roll_" + t + "_65536x1024", [&] { (void)roll(x, {7}, {1}); });
      report(o, dev, "repeat_interleave_" + t + "_65536x1024_r2",
             [&] { (void)repeat_interleave(x, 2, 0); });
      Tensor rows = randint(0, 65536, {16384}, DType::I64, dev, gen);
      report(o, dev, "index_select_" + t + "_65536x1024_16384",
             [&] { (void)index_select(x, 0, rows); });
      Tensor wide = x.view({8192, 8192});
      Tensor idx = randint(0, 8192, {8192, 1024}, DType::I64, dev, gen);
      Tensor src = normal_input({8192, 1024}, dt, dev, gen);
      report(o, dev, "gather_dim1_" + t + "_8192x8192_k1024", [&] { (void)gather(wide, 1, idx); });
      report(o, dev, "scatter_add_dim1_" + t + "_8192x8192_k1024",
             [&] { (void)scatter_reduce(wide, 1, idx, src, ScatterReduce::Sum); });
    }
    if (any_wanted(o, {"embedding_" + t + "_50000x1024_8x2048",
                       "embedding_fwd_bwd_" + t + "_50000x1024_8x2048"})) {
      Tensor table = normal_input({50000, 1024}, dt, dev, gen);
      Tensor tokens = randint(0, 50000, {8, 2048}, DType::I64, dev, gen);
      Tensor g = normal_input({8, 2048, 1024}, dt, dev, gen);
      report(o, dev, "embedding_" + t + "_50000x1024_8x2048",
             [&] { (void)embedding_lookup(table, tokens); });
      report(o, dev, "embedding_fwd_bwd_" + t + "_50000x1024_8x2048", [&] {
        const Var tv(table, true);
        (void)backward(sum(embedding_lookup(tv, tokens) * g));
      });
    }
    if (wanted(o, "dropout_" + t + "_64M")) {
      Tensor x = normal_input({int64_t(64) << 20}, dt, dev, gen);
      Generator drop(3);
      report(o, dev, "dropout_" + t + "_64M", [&] { (void)dropout(x, 0.1, drop); });
    }
    if (wanted(o, "einsum_bhqd_bhkd_" + t + "_8x16x1024x64")) {
      Tensor q = normal_input({8, 16, 1024, 64}, dt, dev, gen),
             k = normal_input({8, 16, 1024, 64}, dt, dev, gen);
      report(o, dev, "einsum_bhqd_bhkd_" + t + "_8x16x1024x64", [&] {
        (void)einsum("bhqd,bhkd->bhqk", {q, k});
      });
    }
    if (any_wanted(
            o, {"conv2d_" + t + "_32x64x56x56_k3", "conv2d_fwd_bwd_" + t + "_32x64x56x56_k3",
                "depthwise_conv2d_" + t + "_32x256x56x56_k3", "conv1d_" + t + "_32x256x4096_k3"})) {
      Tensor x = normal_input({32, 64, 56, 56}, dt, dev, gen),
             w = normal_input({64, 64, 3, 3}, dt, dev, gen);
      Tensor b = normal_input({64}, dt, dev, gen), g = normal_input({32, 64, 56, 56}, dt, dev, gen);
      report(o, dev, "conv2d_" + t + "_32x64x56x56_k3", [&] {
        (void)conv2d(x, w, b, {1, 1}, {1, 1});
      });
      report(o, dev, "conv2d_fwd_bwd_" + t + "_32x64x56x56_k3", [&] {
        const Var xv(x, true), wv(w, true), bv(b, true);
        (void)backward(sum(conv2d(xv, wv, bv, {1, 1}, {1, 1}) * g));
      });
      Tensor xd = normal_input({32, 256, 56, 56}, dt, dev, gen),
             wd = normal_input({256, 1, 3, 3}, dt, dev, gen);
      report(o, dev, "depthwise_conv2d_" + t + "_32x256x56x56_k3", [&] {
        (void)depthwise_conv2d(xd, wd, Tensor(), {1, 1}, {1, 1});
      });
      Tensor x1 = normal_input({32, 256, 4096}, dt, dev, gen),
             w1 = normal_input({256, 256, 3}, dt, dev, gen);
      report(o, dev, "conv1d_" + t + "_32x256x4096_k3",
             [&] { (void)conv1d(x1, w1, Tensor(), 1, 1); });
    }
  }
  if (any_wanted(o, {"cdist_f32_4096x4096x128", "masked_select_f32_16M", "nonzero_bool_16M",
                     "bincount_i64_16M_1000", "unique_i64_16M", "one_hot_i64_65536x1000"})) {
    Tensor a = normal_input({4096, 128}, DType::F32, dev, gen),
           b = normal_input({4096, 128}, DType::F32, dev, gen);
    report(o, dev, "cdist_f32_4096x4096x128", [&] { (void)cdist(a, b); });
    Tensor v = normal_input({int64_t(16) << 20}, DType::F32, dev, gen);
    Tensor half =
        lt(rand({int64_t(16) << 20}, DType::F32, dev, gen), full({1}, 0.5, DType::F32, dev));
    report(o, dev, "masked_select_f32_16M", [&] { (void)masked_select(v, half); });
    report(o, dev, "nonzero_bool_16M", [&] { (void)nonzero(half); });
    Tensor ints = randint(0, 1000, {int64_t(16) << 20}, DType::I64, dev, gen);
    report(o, dev, "bincount_i64_16M_1000", [&] { (void)bincount(ints); });
    Tensor many = randint(0, 1 << 20, {int64_t(16) << 20}, DType::I64, dev, gen);
    report(o, dev, "unique_i64_16M", [&] { (void)unique(many); });
    Tensor labels = randint(0, 1000, {65536}, DType::I64, dev, gen);
    report(o, dev, "one_hot_i64_65536x1000", [&] { (void)one_hot(labels, 1000); });
  }
}

// Scientific computing: special functions, complex arithmetic, statistics, FFT and linear
// algebra (batches of small matrices and single large ones).
void run_science(const Options& o, Device dev) {
  Generator gen(4);
  const int64_t n = int64_t(16) << 20;
  if (any_wanted(o, {"lgamma_f32_16M", "digamma_f32_16M", "expit_f32_16M", "complex_mul_c64_16M",
                     "complex_abs_c64_16M", "complex_matmul_c64_1024", "fft_c64_1M",
                     "fft_c64_prime_1000003", "rfft_f32_1024x4096", "quantile_f32_1024x4096_dim1",
                     "histogram_f32_16M_100", "cov_f32_256x65536", "bessel_j0_f32_16M",
                     "bessel_i0e_f32_16M", "bessel_k0_f32_16M", "gammainc_f32_16M"})) {
    Tensor x = add_scalar(rand({n}, DType::F32, dev, gen), 0.5);
    report(o, dev, "lgamma_f32_16M", [&] { (void)lgamma(x); });
    report(o, dev, "digamma_f32_16M", [&] { (void)digamma(x); });
    report(o, dev, "expit_f32_16M", [&] { (void)expit(x); });
    Tensor a =
        complex(normal_input({n}, DType::F32, dev, gen), normal_input({n}, DType::F32, dev, gen));
    Tensor b =
        complex(normal_input({n}, DType::F32, dev, gen), normal_input({n}, DType::F32, dev, gen));
    report(o, dev, "complex_mul_c64_16M", [&] { (void)(a * b); });
    report(o, dev, "complex_abs_c64_16M", [&] { (void)abs(a); });
    Tensor m = a.narrow(0, 0, 1 << 20).view({1024, 1024});
    report(o, dev, "complex_matmul_c64_1024", [&] { (void)matmul(m, m); });
    report(o, dev, "fft_c64_1M", [&] { (void)fft::fft(a.narrow(0, 0, 1 << 20)); });
    report(o, dev, "fft_c64_prime_1000003", [&] { (void)fft::fft(a.narrow(0, 0, 1000003)); });
    Tensor rows = normal_input({1024, 4096}, DType::F32, dev, gen);
    report(o, dev, "rfft_f32_1024x4096", [&] { (void)fft::rfft(rows); });
    report(o, dev, "quantile_f32_1024x4096_dim1", [&] {
      (void)quantile(rows, {0.1, 0.5, 0.9}, 1);
    });
    Tensor flat = normal_input({n}, DType::F32, dev, gen);
    report(o, dev, "histogram_f32_16M_100", [&] {
      (void)histogram(flat, 100, std::pair{-4.0, 4.0});
    });
    Tensor vars = normal_input({256, 65536}, DType::F32, dev, gen);
    report(o, dev, "cov_f32_256x65536", [&] { (void)cov(vars); });
    report(o, dev, "bessel_j0_f32_16M", [&] { (void)bessel_j0(x); });
    report(o, dev, "bessel_i0e_f32_16M", [&] { (void)bessel_i0e(x); });
    report(o, dev, "bessel_k0_f32_16M", [&] { (void)bessel_k0(x); });
    Tensor shape_a = mul_scalar(x, 4.0);
    report(o, dev, "gammainc_f32_16M", [&] { (void)gammainc(shape_a, x); });
  }
  if (any_wanted(o, {"random_exponential_f32_16M", "random_gamma_f32_16M", "random_poisson_f32_16M",
                     "random_binomial_f32_16M", "random_multinomial_f32_4096x1000_16",
                     "random_randperm_16M"})) {
    Tensor conc = add_scalar(rand({n}, DType::F32, dev, gen), 0.5);
    Tensor rate = mul_scalar(conc, 8.0);
    Tensor prob = rand({n}, DType::F32, dev, gen);
    Tensor count = full({n}, 20.0, DType::F32, dev);
    Generator g2(5);
    report(o, dev, "random_exponential_f32_16M", [&] { (void)random::exponential(conc, g2); });
    report(o, dev, "random_gamma_f32_16M", [&] { (void)random::gamma(conc, g2); });
    report(o, dev, "random_poisson_f32_16M", [&] { (void)random::poisson(rate, g2); });
    report(o, dev, "random_binomial_f32_16M", [&] { (void)random::binomial(count, prob, g2); });
    Tensor probs = rand({4096, 1000}, DType::F32, dev, gen);
    report(o, dev, "random_multinomial_f32_4096x1000_16",
           [&] { (void)random::multinomial(probs, 16, true, g2); });
    report(o, dev, "random_randperm_16M", [&] { (void)random::randperm(n, g2, dev); });
  }
  if (any_wanted(
          o, {"linalg_solve_f64_4096x8x8", "linalg_inv_f64_1024", "linalg_eigh_f64_1024",
              "linalg_svd_f64_1024", "linalg_qr_f64_1024", "linalg_cholesky_f64_1024",
              "linalg_cholesky_f32_4096x16x16", "linalg_eigh_f32_4096x16x16",
              "linalg_svd_f32_4096x16x16", "linalg_qr_f32_4096x16x16", "linalg_inv_f32_4096x16x16",
              "linalg_eig_f64_256", "linalg_svd_c64_4096x8x8", "linalg_eigh_c128_256"})) {
    Tensor small = add(normal_input({4096, 8, 8}, DType::F64, dev, gen),
                       mul_scalar(eye(8, std::nullopt, DType::F64, dev), 8.0));
    Tensor rhs = normal_input({4096, 8, 1}, DType::F64, dev, gen);
    report(o, dev, "linalg_solve_f64_4096x8x8", [&] { (void)linalg::solve(small, rhs); });
    Tensor big = add(normal_input({1024, 1024}, DType::F64, dev, gen),
                     mul_scalar(eye(1024, std::nullopt, DType::F64, dev), 64.0));
    report(o, dev, "linalg_inv_f64_1024", [&] { (void)linalg::inv(big); });
    Tensor sym = add(big, big.transpose(0, 1));
    report(o, dev, "linalg_eigh_f64_1024", [&] { (void)linalg::eigh(sym); });
    report(o, dev, "linalg_svd_f64_1024", [&] { (void)linalg::svd(big, false); });
    report(o, dev, "linalg_qr_f64_1024", [&] { (void)linalg::qr(big); });
    Tensor spd = add(matmul(big, big.transpose(0, 1)), eye(1024, std::nullopt, DType::F64, dev));
    report(o, dev, "linalg_cholesky_f64_1024", [&] { (void)linalg::cholesky(spd); });
    Tensor x16 = normal_input({4096, 16, 16}, DType::F32, dev, gen);
    Tensor spd16 = add(matmul(x16, x16.transpose(1, 2)),
                       mul_scalar(eye(16, std::nullopt, DType::F32, dev), 16.0));
    report(o, dev, "linalg_cholesky_f32_4096x16x16", [&] { (void)linalg::cholesky(spd16); });
    report(o, dev, "linalg_eigh_f32_4096x16x16", [&] { (void)linalg::eigh(spd16); });
    report(o, dev, "linalg_svd_f32_4096x16x16", [&] { (void)linalg::svd(x16, false); });
    report(o, dev, "linalg_qr_f32_4096x16x16", [&] { (void)linalg::qr(x16); });
    report(o, dev, "linalg_inv_f32_4096x16x16", [&] { (void)linalg::inv(spd16); });
    Tensor g256 = normal_input({256, 256}, DType::F64, dev, gen);
    report(o, dev, "linalg_eig_f64_256", [&] { (void)linalg::eig(g256); });
    Tensor c8 = complex(normal_input({4096, 8, 8}, DType::F32, dev, gen),
                        normal_input({4096, 8, 8}, DType::F32, dev, gen));
    report(o, dev, "linalg_svd_c64_4096x8x8", [&] { (void)linalg::svd(c8, false); });
    Tensor c256 = complex(normal_input({256, 256}, DType::F64, dev, gen),
                          normal_input({256, 256}, DType::F64, dev, gen));
    Tensor herm = add(c256, conj(c256.transpose(0, 1)));
    report(o, dev, "linalg_eigh_c128_256", [&] { (void)linalg::eigh(herm); });
  }
}

// The CPU at server scale (bench/cpu/run.sh, beside torch_peer.py --suite cpu): GEMMs and
// their epilogues, the fused gate, reductions, row norms, a convolution and a sort. The
// GEMMs are 4096^3 from 4 threads up and 2048^3 below (the names say which), so that a
// single-threaded run stays short.
void run_cpu(const Options& o, Device dev, int threads) {
  Generator gen(6);
  const int64_t g = threads >= 4 ? 4096 : 2048;
  const std::string shape =
      "_" + std::to_string(g) + "x" + std::to_string(g) + "x" + std::to_string(g);
  for (auto [dt, tag] : {std::pair{DType::F32, "f32"}, std::pair{DType::BF16, "bf16"}}) {
    const std::string t = tag;
    Tensor x = normal_input({g, g}, dt, dev, gen);
    Tensor w = (normal_input({g, g}, DType::F32, dev, gen) * (1.0 / std::sqrt(double(g)))).cast(dt);
    Tensor bias = normal_input({g}, dt, dev, gen), gr = normal_input({g, g}, dt, dev, gen);
    report(o, dev,
           {{"matmul_" + t + shape, [&] { (void)matmul(x, w); }},
            {"linear_gelu_" + t + shape,
             [&] { (void)matmul_bias_activation(x, w, bias, Activation::Gelu); }}});
    report(o, dev, "linear_gelu_fwd_bwd_" + t + shape, [&] {
      const EpilogueForward f = matmul_bias_activation_fwd(x, w, bias, Activation::Gelu);
      (void)matmul_bias_activation_bwd_saved(gr, x, w, f.saved, Activation::Gelu);
    });
  }
  const int64_t n = int64_t(64) << 20;
  {
    Tensor a = normal_input({n}, DType::F32, dev, gen), b = normal_input({n}, DType::F32, dev, gen);
    report(o, dev, "silu_mul_f32_64M", [&] { (void)silu_mul(a, b); });
    report(o, dev, "sum_all_f32_64M", [&] { (void)sum(a); });
    Tensor rows = a.view({16384, 4096});
    report(o, dev, "sum_lastdim_f32_16384x4096", [&] { (void)sum(rows, {1}); });
    report(o, dev, "softmax_f32_16384x4096", [&] { (void)softmax(rows, -1); });
    Tensor nw = normal_input({4096}, DType::F32, dev, gen),
           nb = normal_input({4096}, DType::F32, dev, gen);
    report(o, dev, "rms_norm_f32_16384x4096", [&] { (void)rms_norm(rows, nw, 1e-5); });
    report(o, dev, "layer_norm_f32_16384x4096", [&] { (void)layer_norm(rows, nw, nb, 1e-5); });
  }
  {
    Tensor ab = normal_input({n}, DType::BF16, dev, gen),
           bb = normal_input({n}, DType::BF16, dev, gen);
    report(o, dev, "silu_mul_bf16_64M", [&] { (void)silu_mul(ab, bb); });
  }
  {
    Tensor x = normal_input({32, 64, 56, 56}, DType::F32, dev, gen);
    Tensor w = normal_input({64, 64, 3, 3}, DType::F32, dev, gen),
           b = normal_input({64}, DType::F32, dev, gen);
    report(o, dev, "conv2d_f32_32x64x56x56_k3", [&] { (void)conv2d(x, w, b, {1, 1}, {1, 1}); });
    Tensor square = normal_input({4096, 4096}, DType::F32, dev, gen);
    report(o, dev, "sort_f32_4096x4096", [&] { (void)sort(square, -1); });
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::string device = "cuda:0";
  std::string suite = "all";
  int threads = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--reps" && i + 1 < argc)
      o.reps = std::atoi(argv[++i]);
    else if (arg == "--rounds" && i + 1 < argc)
      o.rounds = std::atoi(argv[++i]);
    else if (arg == "--only" && i + 1 < argc)
      o.only = argv[++i];
    else if (arg == "--gap-ms" && i + 1 < argc)
      o.gap_ms = std::atoi(argv[++i]);
    else if (arg == "--device" && i + 1 < argc)
      device = argv[++i];
    else if (arg == "--suite" && i + 1 < argc)
      suite = argv[++i];
    else if (arg == "--threads" && i + 1 < argc)
      threads = std::atoi(argv[++i]);
    else if (arg == "--warmup" && i + 1 < argc)
      o.warmup = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr,
                   "usage: numr_gpu_bench [--reps N] [--rounds N] [--gap-ms N] [--only a,b,...] "
                   "[--device cuda:0|cpu|webgpu:0] [--suite all|cpu] [--threads N] [--warmup N]\n");
      return 2;
    }
  }
  Device dev;
  try {
    dev = parse_device(device);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "numr_gpu_bench: %s\n", e.what());
    return 1;
  }
  if (threads > 0) set_num_threads(threads);
  if (suite == "cpu") {
    try {
      run_cpu(o, dev, threads > 0 ? threads : num_threads());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "numr_gpu_bench: %s\n", e.what());
      return 1;
    }
    return 0;
  }
  // Each part on its own: a device without some dtype (WebGPU has no F64) fails while
  // making that part's inputs, and the other parts still run.
  int failed = 0;
  for (auto [part, fn] : {std::pair{"model", &run}, std::pair{"families", &run_families},
                          std::pair{"science", &run_science}})
    try {
      fn(o, dev);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "numr_gpu_bench: %s part stopped: %s\n", part, e.what());
      ++failed;
    }
  return failed == 3 ? 1 : 0;
}
