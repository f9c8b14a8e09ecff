// numr_sm90_gemm_probe: checks numr's sm_90a GEMM prototype (src/backends/cuda/sm90_gemm.h)
// against numr::matmul_bias_activation, then times it next to numr::matmul (cuBLASLt) and
// numr::matmul_bias_activation, on cuda:0.
//
//   numr_sm90_gemm_probe [M N K] [--act none|relu|gelu|silu] [--reps 20] [--rounds 7]
//                        [--no-small] [--variants] [--skip label,...] [--keep-going] [--tf32]
//                        [--gap-ms N]
//
// M N K default to 8192 4096 4096 (M % 128, N % 256 and K % 64 must be 0; K % 32 with
// --tf32). --tf32: F32 operands and the kernel's TF32 form, against matmul and
// matmul_bias_activation with TF32 allowed (small shapes then include odd numbers of k
// blocks of 32). Without --act,
// every activation is checked and timed. Before the large shape, small shapes are checked
// for every activation, without clusters and with clusters of 2 (one tile, many tiles, and
// grids of few CTAs so that each CTA runs several tiles through the stage ring); --no-small
// skips them. Small shapes are also checked with a bias spread over about +-100, so that the
// activations' saturated ends and their largest denominators are reached. The large shape
// is checked and timed with clusters of 1 and, where M % 256 == 0, 2; each timing is the
// median of --rounds interleaved rounds, each the mean of --reps calls queued back to back
// (after 5 warm-up calls) between two CUDA events.
//
// --gap-ms N: the GPU idles N ms before each timed batch of calls (after its warm-up), so that
// every batch starts from the same clock rather than at the power limit.
// --variants: the kernel configurations of variants() (with and without split tail) are
// checked too (the same checks as the default kernel's) and timed in interleaved rounds,
// each with its ratio to matmul's time per round; --skip leaves out the variants it names,
// --keep-going times even after a failed check. First of all, the probe checks on the GPU that
// div.full.f32 (x, den) and x * rcp.approx.ftz(den) have equal bits for every f32 den in
// [1, 2^126] and a set of x (the kernel's division by reciprocals, sm90_gemm_activation.cpp;
// a failure fails the probe).
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
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "backends/cuda/context.h"
#include "backends/cuda/driver.h"
#include "backends/cuda/event.h"
#include "backends/cuda/launch.h"
#include "backends/cuda/module.h"
#include "backends/cuda/sm90_gemm.h"
#include "numr/numr.h"

using namespace numr;

namespace {

constexpr int kWarmup = 5;
constexpr double kTolerance = 2e-2;  // |got - want| <= kTolerance * max(1, |want|)
constexpr int kShown = 5;

// The operands' dtype: BF16, or F32 (--tf32, the kernel's TF32 form).
DType g_dtype = DType::BF16;
// Idle time before each timed batch of calls (--gap-ms): every batch then starts from the
// same clock, where back to back the GPU runs these GEMMs at its power limit.
int g_gap_ms = 0;

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
  // The kernel configuration the steps run (a --variants label), named on a timeout.
  void variant(const std::string& label) {
    std::lock_guard lock(mu_);
    variant_ = label;
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
        std::printf("HUNG_VARIANT=%s\n", variant_.c_str());
        std::fflush(stdout);
        std::_Exit(3);
      }
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::string what_ = "start-up";
  std::string variant_ = "default";
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
// parts are exercised), bias ~ N(0, 1); of g_dtype, and the bias also as F32 (the same
// values).
Inputs make_inputs(const Shape3& s, uint64_t seed, double bias_scale = 1.0) {
  const Device dev = Device::cuda(0);
  Generator gen(seed);
  Inputs in;
  in.a = randn({s.m, s.k}, DType::F32, dev, gen).cast(g_dtype);
  in.b = (randn({s.k, s.n}, DType::F32, dev, gen) * (1.0 / std::sqrt(double(s.k)))).cast(g_dtype);
  in.bias = (randn({s.n}, DType::F32, dev, gen) * bias_scale).cast(g_dtype);
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

// `kernel`: the configuration to run (its act and cluster are set here); null: the default.
bool check(Watchdog& dog, const Shape3& s, Activation act, int max_ctas, int cluster, uint64_t seed,
           const cuda::Sm90GemmConfig* kernel = nullptr, double bias_scale = 1.0,
           const std::string& tag = "") {
  const std::string label = "check " + s.str() + " " + std::string(activation_name(act)) +
                            " cluster=" + std::to_string(cluster) +
                            (max_ctas ? " ctas=" + std::to_string(max_ctas) : "") +
                            (bias_scale != 1.0 ? " wide" : "") + (tag.empty() ? "" : " " + tag);
  dog.step(label);
  try {
    const Inputs in = make_inputs(s, seed, bias_scale);
    const Tensor want = matmul_bias_activation(in.a, in.b, in.bias, act);
    cuda::Sm90GemmConfig config;
    if (kernel) {
      config = *kernel;
      config.act = act;
      config.cluster = cluster;
      config.dtype = g_dtype;
      config.split_tail = config.split_tail && cluster == 1;  // clusters of 1 only
    }
    const Tensor got = cuda::sm90_gemm_bias_act(in.a, in.b, in.bias_f32, act, max_ctas, cluster,
                                                kernel ? &config : nullptr);
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
  if (g_gap_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(g_gap_ms));
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

// The checks of one kernel configuration (null: the default): with `small`, the small shapes
// and the wide bias for every activation; then the large shape for `acts`, each cluster size.
bool check_suite(Watchdog& dog, const Shape3& shape, const std::vector<Activation>& acts,
                 bool small, const cuda::Sm90GemmConfig* kernel, const std::string& tag) {
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
    // K blocks of 1, 2, 5, 6, 7 and 8 move the ring by different amounts per tile.
    const Case cases[] = {
        {{128, 256, 64}, 0, 1},    {{128, 256, 320}, 0, 1},   {{256, 512, 128}, 0, 1},
        {{256, 512, 128}, 1, 1},   {{384, 768, 320}, 2, 1},   {{1024, 1024, 512}, 0, 1},
        {{1024, 1024, 512}, 3, 1}, {{512, 512, 384}, 1, 1},   {{512, 512, 448}, 2, 1},
        {{256, 256, 64}, 0, 2},    {{256, 512, 320}, 0, 2},   {{512, 768, 320}, 2, 2},
        {{1024, 1024, 512}, 4, 2}, {{1024, 1024, 512}, 0, 2}, {{512, 512, 384}, 2, 2},
        {{512, 512, 448}, 2, 2}};
    // TF32 takes K in blocks of 32 and two blocks per loop turn: odd block counts too.
    const Case tf32_cases[] = {{{128, 256, 32}, 0, 1},  {{256, 512, 96}, 1, 1},
                               {{512, 512, 160}, 2, 1}, {{256, 256, 32}, 0, 2},
                               {{512, 768, 96}, 2, 2},  {{1024, 1024, 224}, 4, 2}};
    uint64_t seed = 11;
    for (Activation act : kernel ? acts : all) {
      for (const Case& c : cases)
        ok = check(dog, c.s, act, c.ctas, c.cluster, seed++, kernel, 1.0, tag) && ok;
      if (g_dtype == DType::F32)
        for (const Case& c : tf32_cases)
          ok = check(dog, c.s, act, c.ctas, c.cluster, seed++, kernel, 1.0, tag) && ok;
      // A bias of about +-100: saturated activations, denominators up to infinity.
      ok = check(dog, {1024, 1024, 512}, act, 3, 1, seed++, kernel, 50.0, tag) && ok;
      ok = check(dog, {1024, 1024, 512}, act, 4, 2, seed++, kernel, 50.0, tag) && ok;
    }
  }
  // Fresh inputs for every check, so that an output buffer the allocator hands out again
  // never holds a previous check's right answer.
  uint64_t large_seed = 1000;
  for (Activation act : acts)
    for (int cluster : clusters_for(shape.m))
      ok = check(dog, shape, act, 0, cluster, large_seed++, kernel, 1.0, tag) && ok;
  return ok;
}

// Kernel configurations compared by --variants (act and cluster are set per call).
struct Variant {
  std::string label;
  cuda::Sm90GemmConfig config;
};

std::vector<Variant> variants() {
  // The default kernel with its partly filled last wave split along K ("sk", clusters of 1
  // only: its runs skip clusters of 2) and without. The TF32 kernel has no split tail.
  if (g_dtype == DType::F32) return {{"default", {.dtype = DType::F32}}};
  return {{"unsplit", {}}, {"sk", {.split_tail = true}}};
}

// Every variant through check_suite, but those equal to the default kernel and those named in
// `skip` (labels).
bool check_variants(Watchdog& dog, const Shape3& shape, const std::vector<Activation>& acts,
                    bool small, const std::vector<std::string>& skip) {
  bool ok = true;
  for (const Variant& v : variants()) {
    if (std::find(skip.begin(), skip.end(), v.label) != skip.end()) continue;
    cuda::Sm90GemmConfig gelu = v.config;
    gelu.act = Activation::Gelu;
    if (gelu.name() == cuda::sm90_gemm_default_config(Activation::Gelu, 1, g_dtype).name())
      continue;  // the default: checked already
    dog.variant(v.label);
    if (!check_suite(dog, shape, acts, small, &v.config, v.label)) {
      std::printf("variant %s: FAILED\n", v.label.c_str());
      ok = false;
    }
  }
  dog.variant("default");
  return ok;
}

// Times matmul and every variant (each cluster size) in `rounds` interleaved rounds; per
// variant the median time and the median, least and greatest of its per-round ratio to
// matmul's time.
bool time_variants(Watchdog& dog, cuda::CudaDevice& dev, const Shape3& s,
                   const std::vector<Activation>& acts, int reps, int rounds,
                   const std::vector<std::string>& skip) {
  const double flop = 2.0 * double(s.m) * double(s.n) * double(s.k);
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  try {
    const Inputs in = make_inputs(s, 7);
    const std::vector<int> clusters = clusters_for(s.m);
    for (Activation act : acts) {
      const std::string an(activation_name(act));
      struct Run {
        std::string label;
        cuda::Sm90GemmConfig config;
        std::vector<double> ms, ratio;
      };
      std::vector<Run> runs;
      for (const Variant& v : variants()) {
        if (std::find(skip.begin(), skip.end(), v.label) != skip.end()) continue;
        for (int cluster : clusters) {
          if (v.config.split_tail && cluster != 1) continue;
          Run r{v.label + " c" + std::to_string(cluster), v.config, {}, {}};
          r.config.act = act;
          r.config.cluster = cluster;
          runs.push_back(r);
        }
      }
      std::vector<double> plain;
      for (int round = 0; round < rounds; ++round) {
        dog.step("time matmul " + s.str());
        const double p = time_ms(dev, reps, [&] { (void)matmul(in.a, in.b); });
        plain.push_back(p);
        // Rotate the order each round, so that no variant always follows the same one.
        for (size_t q = 0; q < runs.size(); ++q) {
          Run& r = runs[(q + size_t(round)) % runs.size()];
          dog.step("time " + an + " " + r.label + " " + s.str());
          dog.variant(r.label.substr(0, r.label.rfind(' ')));
          const double t = time_ms(dev, reps, [&] {
            (void)cuda::sm90_gemm_bias_act(in.a, in.b, in.bias_f32, act, 0, r.config.cluster,
                                           &r.config);
          });
          r.ms.push_back(t);
          r.ratio.push_back(t / p);
        }
      }
      const double p = median(plain);
      std::printf("variants %-16s %-4s matmul %8.4f ms  %6.1f TFLOP/s\n", s.str().c_str(),
                  an.c_str(), p, flop / (p * 1e-3) / 1e12);
      for (const Run& r : runs) {
        const double t = median(r.ms);
        std::printf(
            "variants %-16s %-4s %-14s %8.4f ms  %6.1f TFLOP/s  %.3f x matmul (per round: "
            "median %.3f, %.3f..%.3f)\n",
            s.str().c_str(), an.c_str(), r.label.c_str(), t, flop / (t * 1e-3) / 1e12, t / p,
            median(r.ratio), *std::min_element(r.ratio.begin(), r.ratio.end()),
            *std::max_element(r.ratio.begin(), r.ratio.end()));
      }
      std::fflush(stdout);
    }
    dog.variant("default");
    return true;
  } catch (const std::exception& e) {
    std::printf("variants %s ERROR: %s\n", s.str().c_str(), e.what());
    return false;
  }
}

// x values the division check pairs with every den (bit patterns): zeros, ones, ordinary
// and extreme magnitudes, the smallest normal and subnormals, infinities and NaN.
const uint32_t kDivisionX[] = {
    0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x3F000000, 0x40490FDB, 0xC02DF854, 0x0DA24260,
    0x8DA24260, 0x00800000, 0x80800000, 0x000AE398, 0x80011111, 0x00000001, 0x80000001, 0x007FFFFF,
    0x7F7FFFFF, 0xFF7FFFFF, 0x7F000000, 0x477FE000, 0xC2AF0000, 0xC1233333, 0x42C80000, 0x501502F9,
    0xE0AD78EC, 0x7F800000, 0xFF800000, 0x7FC00000, 0x0D800000, 0x71800000, 0x7F000001, 0x80400000};

// div.full.f32 (x, den) against x * rcp.approx.ftz.f32 (den), bit for bit (two NaNs count as
// equal), for every den from 1 to 2^126 and each x of kDivisionX, plus two x per den drawn
// from den's bits (one any pattern, one of moderate magnitude). True when they agree.
bool division_check(Watchdog& dog, cuda::CudaDevice& dev) {
  dog.step("division check");
  const uint32_t lo = 0x3F800000, hi = 0x7E800000;  // 1 and 2^126
  const uint32_t count = hi - lo + 1;
  const int nx = int(sizeof(kDivisionX) / sizeof(kDivisionX[0]));
  std::ostringstream ptx;
  ptx << ".version " << dev.props().ptx_isa_major << "." << dev.props().ptx_isa_minor << "\n"
      << ".target sm_90a\n.address_size 64\n\n"
      << ".visible .entry numr_division_check(.param .u64 xs, .param .u64 out, "
         ".param .u32 lo, .param .u32 count)\n{\n"
      << "  .reg .pred %p<8>;\n  .reg .b32 %r<40>;\n  .reg .b64 %rd<8>;\n  .reg .f32 %f<8>;\n"
      << "  ld.param.u64 %rd0, [xs];\n  ld.param.u64 %rd1, [out];\n"
      << "  cvta.to.global.u64 %rd0, %rd0;\n  cvta.to.global.u64 %rd1, %rd1;\n"
      << "  ld.param.u32 %r0, [lo];\n  ld.param.u32 %r1, [count];\n"
      << "  mov.u32 %r2, %ctaid.x;\n  mov.u32 %r3, %ntid.x;\n  mov.u32 %r4, %tid.x;\n"
      << "  mad.lo.u32 %r5, %r2, %r3, %r4;\n"                        // i
      << "  mov.u32 %r6, %nctaid.x;\n  mul.lo.u32 %r7, %r6, %r3;\n"  // stride
      << "  mov.u32 %r20, 0;\n"                                      // this thread's mismatches
      << "$den_loop:\n"
      << "  setp.ge.u32 %p0, %r5, %r1;\n  @%p0 bra $done;\n"
      << "  add.u32 %r8, %r0, %r5;\n  mov.b32 %f0, %r8;\n"  // den
      << "  rcp.approx.ftz.f32 %f1, %f0;\n"
      << "  mov.u32 %r9, 0;\n"  // x index
      << "$x_loop:\n"
      << "  setp.lt.u32 %p1, %r9, " << nx << ";\n"
      << "  @%p1 mul.wide.u32 %rd2, %r9, 4;\n  @%p1 add.s64 %rd3, %rd0, %rd2;\n"
      << "  @%p1 ld.global.nc.b32 %r10, [%rd3];\n"
      // x number nx: den's bits mixed (any pattern); nx + 1: the same, exponent moderate.
      << "  mul.lo.u32 %r11, %r8, 0x9E3779B1;\n  shr.u32 %r12, %r11, 15;\n"
      << "  xor.b32 %r13, %r11, %r12;\n"
      << "  setp.eq.u32 %p2, %r9, " << nx << ";\n"
      << "  @%p2 mov.u32 %r10, %r13;\n"
      << "  setp.eq.u32 %p3, %r9, " << nx + 1 << ";\n"
      << "  and.b32 %r14, %r13, 0x8FFFFFFF;\n  or.b32 %r14, %r14, 0x30000000;\n"
      << "  @%p3 mov.u32 %r10, %r14;\n"
      << "  mov.b32 %f2, %r10;\n"
      << "  div.full.f32 %f3, %f2, %f0;\n  mul.rn.f32 %f4, %f2, %f1;\n"
      << "  mov.b32 %r15, %f3;\n  mov.b32 %r16, %f4;\n"
      << "  setp.ne.u32 %p4, %r15, %r16;\n"
      << "  setp.eq.f32 %p6, %f3, %f3;\n"  // not both NaN: at least one is a number
      << "  setp.eq.or.f32 %p6, %f4, %f4, %p6;\n"
      << "  and.pred %p4, %p4, %p6;\n"
      << "  @!%p4 bra $next_x;\n"
      << "  add.u32 %r20, %r20, 1;\n"
      << "  setp.ne.u32 %p7, %r20, 1;\n  @%p7 bra $next_x;\n"
      // The thread's first mismatch: the first thread to get here records it.
      << "  atom.global.cas.b32 %r17, [%rd1+20], 0, 1;\n"
      << "  setp.ne.u32 %p7, %r17, 0;\n  @%p7 bra $next_x;\n"
      << "  st.global.u32 [%rd1+4], %r8;\n  st.global.u32 [%rd1+8], %r10;\n"
      << "  st.global.u32 [%rd1+12], %r15;\n  st.global.u32 [%rd1+16], %r16;\n"
      << "$next_x:\n"
      << "  add.u32 %r9, %r9, 1;\n  setp.lt.u32 %p1, %r9, " << nx + 2 << ";\n"
      << "  @%p1 bra $x_loop;\n"
      << "  add.u32 %r5, %r5, %r7;\n  bra $den_loop;\n"
      << "$done:\n"
      << "  setp.eq.u32 %p0, %r20, 0;\n  @%p0 bra $end;\n"
      << "  atom.global.add.u32 %r17, [%rd1], %r20;\n"
      << "$end:\n  ret;\n}\n";
  try {
    const cuda::CUfunction f = dev.kernels().get_or_build("probe_division_check", [&] {
      return cuda::GeneratedKernel{"numr_division_check", ptx.str()};
    });
    const Device d = Device::cuda(0);
    const std::vector<int32_t> xs_host(std::begin(kDivisionX), std::end(kDivisionX));
    const Tensor xs = Tensor::from_vector(xs_host, {int64_t(xs_host.size())}, d);
    const Tensor out = Tensor::from_vector(std::vector<int32_t>(8, 0), {8}, d);
    auto address = [](const Tensor& t) {
      return uint64_t(reinterpret_cast<uintptr_t>(t.storage()->handle())) +
             uint64_t(t.offset()) * dtype_size(t.dtype());
    };
    const cuda::LaunchConfig cfg{.grid = {unsigned(dev.props().sm_count) * 16, 1, 1},
                                 .block = {256, 1, 1}};
    const auto t0 = std::chrono::steady_clock::now();
    cuda::launch_kernel(dev, f, cfg, "numr_division_check", address(xs), address(out), lo, count);
    dev.synchronize();
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const std::vector<int32_t> r = out.to_vector<int32_t>();
    std::printf(
        "division check: den in [1, 2^126] (%u values) x %d values of x: %u mismatches "
        "(%.2f s)\n",
        count, nx + 2, uint32_t(r[0]), secs);
    if (r[0] != 0)
      std::printf("    first: den %08x x %08x: div.full %08x, x * rcp %08x\n", uint32_t(r[1]),
                  uint32_t(r[2]), uint32_t(r[3]), uint32_t(r[4]));
    std::fflush(stdout);
    return r[0] == 0;
  } catch (const std::exception& e) {
    std::printf("division check ERROR: %s\n", e.what());
    return false;
  }
}

int usage() {
  std::fprintf(stderr,
               "usage: numr_sm90_gemm_probe [M N K] [--act none|relu|gelu|silu] [--reps N] "
               "[--rounds N] [--no-small] [--variants] [--skip label,...] [--keep-going] "
               "[--tf32] [--gap-ms N]\n"
               "  M %% 128 == 0, N %% 256 == 0, K %% 64 == 0 (%% 32 with --tf32; default 8192 "
               "4096 4096)\n");
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
  int reps = 20, rounds = 7;
  bool small = true, with_variants = false, keep_going = false;
  std::vector<std::string> skip;
  std::vector<int64_t> dims;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--act" && i + 1 < argc) {
      Activation a;
      if (!parse_act(argv[++i], a)) return usage();
      acts = {a};
    } else if (arg == "--reps" && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--rounds" && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--no-small") {
      small = false;
    } else if (arg == "--variants") {
      with_variants = true;
    } else if (arg == "--keep-going") {
      keep_going = true;
    } else if (arg == "--gap-ms" && i + 1 < argc) {
      g_gap_ms = std::max(0, std::atoi(argv[++i]));
    } else if (arg == "--tf32") {
      g_dtype = DType::F32;
      set_allow_tf32(true);
    } else if (arg == "--skip" && i + 1 < argc) {
      std::stringstream list(argv[++i]);
      for (std::string label; std::getline(list, label, ',');) skip.push_back(label);
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
  if (!cuda::sm90_gemm_shape_ok(shape.m, shape.n, shape.k, g_dtype)) {
    std::fprintf(stderr,
                 "numr_sm90_gemm_probe: %s is not supported (M %% 128, N %% 256 and K %% %d "
                 "must be 0)\n",
                 shape.str().c_str(), cuda::sm90_gemm_k_step(g_dtype));
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
  // The kernel's division by reciprocals is exact only if the two quotients agree.
  ok = division_check(dog, *dev) && ok;
  ok = check_suite(dog, shape, acts, small, nullptr, "") && ok;
  if (!ok) {
    std::printf("FAILED: the prototype's results differ from matmul_bias_activation%s\n",
                keep_going ? "" : " (timings skipped)");
    if (!keep_going) return 1;
  }
  if (!time_all(dog, *dev, shape, acts, reps)) return 1;
  if (with_variants) {
    const bool variants_ok = check_variants(dog, shape, acts, small, skip);
    if (!variants_ok) std::printf("variants: some checks FAILED (timing them anyway)\n");
    if (!time_variants(dog, *dev, shape, acts, reps, rounds, skip)) return 1;
    ok = variants_ok && ok;
  }
  if (!ok) return 1;
  std::printf("PASSED\n");
  return 0;
}
