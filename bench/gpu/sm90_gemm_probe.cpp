// numr_sm90_gemm_probe: checks numr's sm_90a GEMM prototype (src/backends/cuda/sm90_gemm.h)
// against numr::matmul_bias_activation, then times it next to numr::matmul (cuBLASLt) and
// numr::matmul_bias_activation, on cuda:0.
//
//   numr_sm90_gemm_probe [M N K] [--act none|relu|gelu|silu] [--reps 20] [--no-small]
//
// M N K default to 8192 4096 4096 (M % 128, N % 256 and K % 64 must be 0). Without --act,
// every activation is checked and timed. Before the large shape, small shapes are checked
// for every activation, without clusters and with clusters of 2 (one tile, many tiles, and
// grids of few CTAs so that each CTA runs several tiles through the stage ring); --no-small
// skips them. The large shape is checked and timed with clusters of 1 and, where
// M % 256 == 0, 2; each timing is the median of 7 interleaved rounds, each the mean of
// --reps calls queued back to back (after 5 warm-up calls) between two CUDA events.
// The probe sets NUMR_CUDA_OWN_GEMM=0, so that matmul_bias_activation, the reference, takes
// the cuBLASLt path rather than this kernel. NUMR_PROBE_STEP_SECONDS (default 120) bounds
// one step (see the exit status 3 below).
//
// Exit status: 0 when every check passes (or "skipped: <reason>" when cuda:0 is missing or
// not of compute capability 9.0), 1 on a mismatch or an error, 2 for bad arguments, 3 when
// a step takes longer than the watchdog allows (a hung kernel).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "backends/cuda/context.h"
#include "backends/cuda/driver.h"
#include "backends/cuda/event.h"
#include "backends/cuda/sm90_gemm.h"
#include "numr/numr.h"

using namespace numr;

namespace {

constexpr int kWarmup = 5;
constexpr double kTolerance = 2e-2;  // |got - want| <= kTolerance * max(1, |want|)
constexpr int kShown = 5;

// Seconds one step may take: NUMR_PROBE_STEP_SECONDS, default 120.
int step_seconds() {
  const char* v = std::getenv("NUMR_PROBE_STEP_SECONDS");
  const int s = v ? std::atoi(v) : 0;
  return s > 0 ? s : 120;
}

// Ends the process when one step (a check or a timing) runs past step_seconds(): a kernel
// that waits on a barrier phase that never completes hangs its stream for good.
class Watchdog {
 public:
  Watchdog() : thread_([this] { run(); }) {}
  ~Watchdog() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void step(const std::string& what) {
    std::lock_guard lock(mu_);
    what_ = what;
    deadline_ = std::chrono::steady_clock::now() + std::chrono::seconds(step_seconds());
  }

 private:
  void run() {
    std::unique_lock lock(mu_);
    while (!stop_) {
      cv_.wait_for(lock, std::chrono::seconds(1));
      if (!stop_ && std::chrono::steady_clock::now() > deadline_) {
        std::printf(
            "TIMEOUT: '%s' did not finish in %d s; the kernel is probably waiting on an "
            "mbarrier phase that never completes (check the parity tracking, the expect_tx "
            "byte count against the tensor maps' boxes, and the empty barrier's arrival "
            "count)\n",
            what_.c_str(), step_seconds());
        std::fflush(stdout);
        std::_Exit(3);
      }
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::string what_ = "start-up";
  std::chrono::steady_clock::time_point deadline_ =
      std::chrono::steady_clock::now() + std::chrono::seconds(step_seconds());
  std::thread thread_;
};

struct Shape3 {
  int64_t m, n, k;
  std::string str() const {
    return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  }
};

struct Inputs {
  Tensor a, b, bias, bias_f32;
};

// a ~ N(0, 1), b ~ N(0, 1/k) (so that a @ b is of order 1 and the activations' curved
// parts are exercised), bias ~ N(0, 1); BF16, and the bias also as F32 (the same values).
Inputs make_inputs(const Shape3& s, uint64_t seed) {
  const Device dev = Device::cuda(0);
  Generator gen(seed);
  Inputs in;
  in.a = randn({s.m, s.k}, DType::F32, dev, gen).cast(DType::BF16);
  in.b =
      (randn({s.k, s.n}, DType::F32, dev, gen) * (1.0 / std::sqrt(double(s.k)))).cast(DType::BF16);
  in.bias = randn({s.n}, DType::F32, dev, gen).cast(DType::BF16);
  in.bias_f32 = in.bias.cast(DType::F32);
  return in;
}

// Compares got with want (both [m, n]); prints one line, and on a mismatch the first
// kShown mismatches and where in the 128 x 256 tile they fall. True when it passes.
bool compare(const std::string& label, const Tensor& got_t, const Tensor& want_t, int64_t n) {
  const std::vector<float> got = got_t.cast(DType::F32).to_vector<float>();
  const std::vector<float> want = want_t.cast(DType::F32).to_vector<float>();
  double max_abs = 0, max_rel = 0;
  int64_t bad = 0, nan = 0, zeros = 0;
  // Mismatches by the row's 16-row slice of the tile (consumer warpgroup x warp) and by the
  // column's 64-column block (one B box).
  int64_t by_slice[8] = {}, by_block[4] = {};
  std::vector<std::string> shown;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    if (std::isnan(g)) ++nan;
    if (g == 0) ++zeros;
    const double diff = std::abs(g - w);
    const double rel = diff / std::max(std::abs(w), 1e-6);
    if (!std::isnan(diff)) {
      max_abs = std::max(max_abs, diff);
      max_rel = std::max(max_rel, rel);
    }
    if (!(diff <= kTolerance * std::max(1.0, std::abs(w)))) {
      const int64_t row = int64_t(i) / n, col = int64_t(i) % n;
      ++bad;
      ++by_slice[(row % 128) / 16];
      ++by_block[(col % 256) / 64];
      if (int(shown.size()) < kShown) {
        char buf[160];
        std::snprintf(buf, sizeof(buf), "    (row %lld, col %lld): got %.6g, want %.6g",
                      (long long)row, (long long)col, g, w);
        shown.emplace_back(buf);
      }
    }
  }
  std::printf("%-52s max|diff| %.3g  max rel %.3g  %s\n", label.c_str(), max_abs, max_rel,
              bad ? "MISMATCH" : "ok");
  if (bad) {
    std::printf("    %lld of %zu elements differ (%lld NaN, %lld exact zeros in the result)\n",
                (long long)bad, got.size(), (long long)nan, (long long)zeros);
    for (const std::string& s : shown) std::printf("%s\n", s.c_str());
    std::printf("    by tile rows [16 s, 16 s + 16), s = 0..7:");
    for (int64_t c : by_slice) std::printf(" %lld", (long long)c);
    std::printf("\n    by tile columns [64 j, 64 j + 64), j = 0..3:");
    for (int64_t c : by_block) std::printf(" %lld", (long long)c);
    std::printf("\n");
  }
  std::fflush(stdout);
  return bad == 0;
}

bool check(Watchdog& dog, const Shape3& s, Activation act, int max_ctas, int cluster,
           uint64_t seed) {
  const std::string label = "check " + s.str() + " " + std::string(activation_name(act)) +
                            " cluster=" + std::to_string(cluster) +
                            (max_ctas ? " ctas=" + std::to_string(max_ctas) : "");
  dog.step(label);
  try {
    const Inputs in = make_inputs(s, seed);
    const Tensor want = matmul_bias_activation(in.a, in.b, in.bias, act);
    const Tensor got = cuda::sm90_gemm_bias_act(in.a, in.b, in.bias_f32, act, max_ctas, cluster);
    synchronize(Device::cuda(0));
    return compare(label, got, want, s.n);
  } catch (const std::exception& e) {
    std::printf("%-52s ERROR: %s\n", label.c_str(), e.what());
    std::fflush(stdout);
    return false;
  }
}

// GPU time of one call of fn: kWarmup calls, then `reps` calls queued back to back
// between two events, divided by reps. Queued back to back, the host's work per call
// (tensor maps, allocation, launch) overlaps the previous call's kernel, as in a model's
// forward pass; events around single calls would count it whenever it is longer than the
// GPU's queue.
double time_ms(cuda::CudaDevice& dev, int reps, const std::function<void()>& fn) {
  for (int i = 0; i < kWarmup; ++i) fn();
  dev.synchronize();
  cuda::Event start(dev), stop(dev);
  start.record();
  for (int i = 0; i < reps; ++i) fn();
  stop.record();
  return stop.elapsed_ms_since(start) / reps;
}

// The clusters worth timing for m: 1, and 2 where m allows it.
std::vector<int> clusters_for(int64_t m) {
  return m % 256 == 0 ? std::vector<int>{1, 2} : std::vector<int>{1};
}

// Times matmul, matmul_bias_activation and the prototype (each cluster size) in kRounds
// interleaved rounds, reporting the median over the rounds, so that clock changes during
// the run reach every candidate alike.
bool time_all(Watchdog& dog, cuda::CudaDevice& dev, const Shape3& s,
              const std::vector<Activation>& acts, int reps) {
  constexpr int kRounds = 7;
  const double flop = 2.0 * double(s.m) * double(s.n) * double(s.k);
  auto tflops = [&](double ms) { return flop / (ms * 1e-3) / 1e12; };
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  try {
    const Inputs in = make_inputs(s, 7);
    const std::vector<int> clusters = clusters_for(s.m);
    for (Activation act : acts) {
      const std::string an(activation_name(act));
      std::vector<double> plain, fused;
      std::vector<std::vector<double>> proto(clusters.size());
      for (int r = 0; r < kRounds; ++r) {
        dog.step("time matmul " + s.str());
        plain.push_back(time_ms(dev, reps, [&] { (void)matmul(in.a, in.b); }));
        dog.step("time matmul_bias_activation " + an + " " + s.str());
        fused.push_back(
            time_ms(dev, reps, [&] { (void)matmul_bias_activation(in.a, in.b, in.bias, act); }));
        for (size_t c = 0; c < clusters.size(); ++c) {
          dog.step("time sm90 " + an + " cluster " + std::to_string(clusters[c]) + " " + s.str());
          proto[c].push_back(time_ms(dev, reps, [&] {
            (void)cuda::sm90_gemm_bias_act(in.a, in.b, in.bias_f32, act, 0, clusters[c]);
          }));
        }
      }
      const double p = median(plain), f = median(fused);
      std::printf("time  %-16s %-4s matmul (cuBLASLt, no epilogue) %8.4f ms  %6.1f TFLOP/s\n",
                  s.str().c_str(), an.c_str(), p, tflops(p));
      std::printf("time  %-16s %-4s matmul_bias_activation         %8.4f ms  %6.1f TFLOP/s\n",
                  s.str().c_str(), an.c_str(), f, tflops(f));
      for (size_t c = 0; c < clusters.size(); ++c) {
        const double t = median(proto[c]);
        std::printf(
            "time  %-16s %-4s sm90 prototype, cluster %d      %8.4f ms  %6.1f TFLOP/s  "
            "(%.3f x matmul's time, %.3f x matmul_bias_activation's)\n",
            s.str().c_str(), an.c_str(), clusters[c], t, tflops(t), t / p, t / f);
      }
      std::fflush(stdout);
    }
    return true;
  } catch (const std::exception& e) {
    std::printf("time  %s ERROR: %s\n", s.str().c_str(), e.what());
    return false;
  }
}

int usage() {
  std::fprintf(stderr,
               "usage: numr_sm90_gemm_probe [M N K] [--act none|relu|gelu|silu] [--reps N] "
               "[--no-small]\n"
               "  M %% 128 == 0, N %% 256 == 0, K %% 64 == 0 (default 8192 4096 4096)\n");
  return 2;
}

bool parse_act(const std::string& s, Activation& act) {
  for (Activation a : {Activation::None, Activation::Relu, Activation::Gelu, Activation::Silu})
    if (s == activation_name(a)) {
      act = a;
      return true;
    }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  // The reference is cuBLASLt's path: matmul_bias_activation may otherwise run this very
  // kernel (gemm_epilogue_own.h), which would compare the kernel with itself.
  setenv("NUMR_CUDA_OWN_GEMM", "0", 1);
  Shape3 shape{8192, 4096, 4096};
  std::vector<Activation> acts = {Activation::None, Activation::Relu, Activation::Gelu,
                                  Activation::Silu};
  int reps = 20;
  bool small = true;
  std::vector<int64_t> dims;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--act" && i + 1 < argc) {
      Activation a;
      if (!parse_act(argv[++i], a)) return usage();
      acts = {a};
    } else if (arg == "--reps" && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--no-small") {
      small = false;
    } else if (!arg.empty() && arg[0] != '-') {
      char* end = nullptr;
      const long long v = std::strtoll(arg.c_str(), &end, 10);
      if (*end != '\0' || v <= 0) return usage();
      dims.push_back(v);
    } else {
      return usage();
    }
  }
  if (!dims.empty()) {
    if (dims.size() != 3) return usage();
    shape = {dims[0], dims[1], dims[2]};
  }
  if (!cuda::sm90_gemm_shape_ok(shape.m, shape.n, shape.k)) {
    std::fprintf(stderr,
                 "numr_sm90_gemm_probe: %s is not supported (M %% 128, N %% 256 and K %% 64 "
                 "must be 0)\n",
                 shape.str().c_str());
    return usage();
  }

  // Is there a device to run on?
  std::string reason;
  cuda::CudaDevice* dev = nullptr;
  try {
    if (cuda::cuda_device_count() == 0) {
      std::string why;
      (void)cuda::try_driver(&why);
      std::printf("skipped: no CUDA device%s%s\n", why.empty() ? "" : ": ", why.c_str());
      return 0;
    }
    dev = &cuda::cuda_device(0);
  } catch (const std::exception& e) {
    std::printf("skipped: cuda:0 cannot be used: %s\n", e.what());
    return 0;
  }
  const cuda::DeviceProperties& p = dev->props();
  if (p.cc_major != 9 || p.cc_minor != 0) {
    std::printf("skipped: %s has compute capability %d.%d, the kernel is for 9.0 (sm_90a)\n",
                p.name.c_str(), p.cc_major, p.cc_minor);
    return 0;
  }
  if (!cuda::sm90_gemm_supported(*dev, &reason)) {
    std::printf("skipped: %s\n", reason.c_str());
    return 0;
  }
  std::printf("device: %s, cc %d.%d, %d SMs, %d B opt-in shared per block; driver %d, PTX ISA %s\n",
              p.name.c_str(), p.cc_major, p.cc_minor, p.sm_count, p.max_shared_per_block_optin,
              p.driver_version, p.ptx_version().c_str());
  std::fflush(stdout);

  Watchdog dog;
  bool ok = true;
  const std::vector<Activation> all = {Activation::None, Activation::Relu, Activation::Gelu,
                                       Activation::Silu};
  if (small) {
    // Without clusters: one tile with one k block; one tile; a few tiles; several tiles per
    // CTA with 1, 2 and 3 CTAs (the ring wraps across tiles, so the phase tracking is
    // exercised); a grid of as many CTAs as tiles. With clusters of 2: one unit (two tiles)
    // with one k block; one unit; several units per cluster; a full grid.
    struct Case {
      Shape3 s;
      int ctas, cluster;
    };
    // K blocks of 1, 2, 5, 6, 7 and 8 move the ring by different amounts per tile (the
    // ping-pong schedule's warpgroups skip each other's k blocks).
    const Case cases[] = {
        {{128, 256, 64}, 0, 1},    {{128, 256, 320}, 0, 1},   {{256, 512, 128}, 0, 1},
        {{256, 512, 128}, 1, 1},   {{384, 768, 320}, 2, 1},   {{1024, 1024, 512}, 0, 1},
        {{1024, 1024, 512}, 3, 1}, {{512, 512, 384}, 1, 1},   {{512, 512, 448}, 2, 1},
        {{256, 256, 64}, 0, 2},    {{256, 512, 320}, 0, 2},   {{512, 768, 320}, 2, 2},
        {{1024, 1024, 512}, 4, 2}, {{1024, 1024, 512}, 0, 2}, {{512, 512, 384}, 2, 2},
        {{512, 512, 448}, 2, 2}};
    uint64_t seed = 11;
    for (Activation act : all)
      for (const Case& c : cases) ok = check(dog, c.s, act, c.ctas, c.cluster, seed++) && ok;
  }
  // Fresh inputs for every check, so that an output buffer the allocator hands out again
  // never holds a previous check's right answer.
  uint64_t large_seed = 1000;
  for (Activation act : acts)
    for (int cluster : clusters_for(shape.m))
      ok = check(dog, shape, act, 0, cluster, large_seed++) && ok;
  if (!ok) {
    std::printf(
        "FAILED: the prototype's results differ from matmul_bias_activation (timings "
        "skipped)\n");
    return 1;
  }
  if (!time_all(dog, *dev, shape, acts, reps)) return 1;
  std::printf("PASSED\n");
  return 0;
}
