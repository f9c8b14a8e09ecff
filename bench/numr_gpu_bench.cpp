// numr's side of the GPU benchmark: the cases of bench/gpu/torch_peer.py, on cuda:0.
// Prints one JSON object per line, {"case": name, "ms": median milliseconds}; the
// script bench/gpu/run.sh runs both programs in one go and bench/gpu/report.py joins
// them into the table of BENCHMARKS.md (ratios and fractions of the measured floors).
//   numr_gpu_bench [--reps 20] [--rounds 7] [--only substring[,substring...]]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "numr/numr.h"

using namespace numr;

namespace {

struct Options {
  int reps = 20, rounds = 7;
  std::string only;
};

// Median over rounds of the mean time of `reps` back-to-back calls, after warm-up. The
// device is synchronized before and after each round, so queued work is all counted.
double time_ms(const Options& o, Device dev, const std::function<void()>& fn) {
  for (int i = 0; i < 3; ++i) fn();
  synchronize(dev);
  std::vector<double> t;
  for (int r = 0; r < o.rounds; ++r) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < o.reps; ++i) fn();
    synchronize(dev);
    const std::chrono::duration<double, std::milli> d = std::chrono::steady_clock::now() - start;
    t.push_back(d.count() / o.reps);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void report(const Options& o, Device dev, const std::string& name,
            const std::function<void()>& fn) {
  if (!o.only.empty()) {
    bool wanted = false;
    for (size_t at = 0; at <= o.only.size();) {
      const size_t comma = std::min(o.only.find(',', at), o.only.size());
      if (name.find(o.only.substr(at, comma - at)) != std::string::npos) wanted = true;
      at = comma + 1;
    }
    if (!wanted) return;
  }
  try {
    std::printf("{\"case\": \"%s\", \"ms\": %.6f}\n", name.c_str(), time_ms(o, dev, fn));
  } catch (const std::exception& e) {
    std::printf("{\"case\": \"%s\", \"error\": \"%s\"}\n", name.c_str(), e.what());
  }
  std::fflush(stdout);
}

void run(const Options& o, Device dev) {
  Generator gen(1);
  const int64_t n = int64_t(64) << 20;
  {
    Tensor big = randn({int64_t(256) << 20}, DType::F32, dev, gen);
    report(o, dev, "copy_f32_256M", [&] { (void)big.clone(); });
    report(o, dev, "sum_all_f32_256M", [&] { (void)sum(big); });
    Tensor rows = big.view({65536, 4096});
    report(o, dev, "sum_lastdim_f32_65536x4096", [&] { (void)sum(rows, {1}); });
    report(o, dev, "sum_dim0_f32_65536x4096", [&] { (void)sum(rows, {0}); });
    report(o, dev, "max_lastdim_f32_65536x4096", [&] { (void)max(rows, {1}); });
  }
  for (auto [dt, tag] : {std::pair{DType::F32, "f32"}, std::pair{DType::BF16, "bf16"}}) {
    const std::string t = tag;
    Tensor a = randn({n}, dt, dev, gen), b = randn({n}, dt, dev, gen), g = randn({n}, dt, dev, gen);
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
    Tensor s = randn({65536, 1024}, dt, dev, gen);
    report(o, dev, "softmax_" + t + "_65536x1024", [&] { (void)softmax(s, -1); });
    Tensor sq = s.view({8192, 8192});
    report(o, dev, "cumsum_" + t + "_8192x8192", [&] { (void)cumsum(sq, -1); });
  }
  const int64_t m = 8192, k = 4096, nn = 4096;
  const std::string shape = "_8192x4096x4096";
  for (auto [dt, tag, tf32] :
       {std::tuple{DType::F32, "f32", false}, std::tuple{DType::F32, "tf32", true},
        std::tuple{DType::BF16, "bf16", false}}) {
    set_allow_tf32(tf32);
    const std::string t = tag;
    // Weights scaled by 1/sqrt(k), as initialised in practice: the products are about as
    // large as the bias, where the activations are neither linear nor flat.
    Tensor x = randn({m, k}, dt, dev, gen);
    Tensor w = (randn({k, nn}, DType::F32, dev, gen) * (1.0 / std::sqrt(double(k)))).cast(dt);
    Tensor bias = randn({nn}, dt, dev, gen), g = randn({m, nn}, dt, dev, gen);
    report(o, dev, "matmul_" + t + shape, [&] { (void)matmul(x, w); });
    report(o, dev, "linear_bias_" + t + shape,
           [&] { (void)matmul_bias_activation(x, w, bias, Activation::None); });
    report(o, dev, "linear_gelu_" + t + shape,
           [&] { (void)matmul_bias_activation(x, w, bias, Activation::Gelu); });
    report(o, dev, "linear_silu_" + t + shape,
           [&] { (void)matmul_bias_activation(x, w, bias, Activation::Silu); });
    report(o, dev, "linear_gelu_fwd_bwd_" + t + shape, [&] {
      const EpilogueForward f = matmul_bias_activation_fwd(x, w, bias, Activation::Gelu);
      (void)matmul_bias_activation_bwd_saved(g, x, w, f.saved, Activation::Gelu);
    });
    // The backward alone and its pieces: grad * act'(pre) with the bias gradient, and the
    // two transposed GEMMs.
    const EpilogueForward saved = matmul_bias_activation_fwd(x, w, bias, Activation::Gelu);
    report(o, dev, "linear_gelu_bwd_" + t + shape,
           [&] { (void)matmul_bias_activation_bwd_saved(g, x, w, saved.saved, Activation::Gelu); });
    report(o, dev, "bias_gelu_bwd_" + t + "_8192x4096",
           [&] { (void)bias_activation_bwd(g, saved.saved, Activation::Gelu); });
    report(o, dev, "matmul_nt_" + t + shape, [&] { (void)matmul(g, w.transpose(0, 1)); });
    report(o, dev, "matmul_tn_" + t + shape, [&] { (void)matmul(x.transpose(0, 1), g); });
  }
  set_allow_tf32(false);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--reps" && i + 1 < argc)
      o.reps = std::atoi(argv[++i]);
    else if (arg == "--rounds" && i + 1 < argc)
      o.rounds = std::atoi(argv[++i]);
    else if (arg == "--only" && i + 1 < argc)
      o.only = argv[++i];
    else {
      std::fprintf(stderr, "usage: numr_gpu_bench [--reps N] [--rounds N] [--only a,b,...]\n");
      return 2;
    }
  }
  try {
    run(o, Device::cuda(0));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "numr_gpu_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
