// numr_bench: numr side by side with libtorch and OpenBLAS on this CPU (DESIGN §9).
//
//   numr_bench [--threads N] [--filter REGEX] [--reps N] [--markdown]
//
// Every case runs numr, then libtorch (and, for GEMMs, cblas_sgemm directly) on the
// same inputs, each in blocks of its own calls that alternate over three rounds
// (interleaved_ms), and reports the median of about --reps timed runs. Each numr
// result is also checked against libtorch's, so a kernel that silently does nothing
// cannot look fast. Memory-bound ops are reported as GB/s and as a fraction of the
// copy bandwidth measured in the same rounds (a 256 MiB memcpy on as many threads, timed in
// blocks alternating with the libraries'); GEMMs as GFLOP/s and as a fraction of
// OpenBLAS's rate.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <cblas.h>
#include <numr/numr.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

namespace {

using Clock = std::chrono::steady_clock;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr size_t kCopyBytes = size_t(256) << 20;  // the bandwidth floor's copy

struct Options {
  int threads = int(std::max(1u, std::thread::hardware_concurrency()));
  std::string filter;
  int reps = 15;
  bool markdown = false;
};

// ---- timing ----

// Idle time before each timed block: OpenBLAS's and OpenMP's workers spin for a while
// after a call, and would otherwise steal cores from the next library measured.
void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(150)); }

// Median wall time of fn in milliseconds, after warm-up. Stops early (after at least 5
// runs) once a block has taken 3 s, so the large GEMMs stay affordable.
double median_ms(const std::function<void()>& fn, int reps, int warmup = 2) {
  settle();
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> times;
  double total = 0.0;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = Clock::now();
    fn();
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    times.push_back(ms);
    total += ms;
    if (total > 3000.0 && i + 1 >= 5) break;
  }
  std::sort(times.begin(), times.end());
  const size_t n = times.size();
  return n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
}

// Whether a thread of this process other than the caller is running or runnable (state R
// in /proc/self/task/*/stat): a worker still polling or spinning after its library's call.
bool other_threads_running() {
  const std::string self = std::to_string(gettid());
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    if (task.path().filename() == self) continue;
    std::ifstream in(task.path() / "stat");
    std::string line;
    std::getline(in, line);
    const size_t close = line.rfind(')');  // the state follows "(command) "
    if (close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'R')
      return true;
  }
  return false;
}

int g_idle_waits = 0, g_idle_timeouts = 0;

// Waits until every other thread of the process sleeps (at most 0.5 s): each library's
// workers spin or poll for a while after a call (numr's 10 ms, libgomp's several ms,
// OpenBLAS's about 0.1 s here), and a worker still spinning takes a core from whatever
// runs next (numr's two-thread product ran at half speed right after an OpenBLAS call).
void wait_until_idle() {
  const auto deadline = Clock::now() + std::chrono::milliseconds(500);
  ++g_idle_waits;
  while (other_threads_running()) {
    if (Clock::now() > deadline) {
      ++g_idle_timeouts;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// Medians of several functions (numr, libtorch, a reference), each timed in blocks of its
// own calls, the blocks alternating over kRounds rounds so that load from elsewhere on the
// machine falls on all of them alike. A block starts once every other library's workers
// sleep, with an untimed call; its timed calls each follow a 5 ms pause, as calls of a
// program that does other work between them. So each library is timed with its own
// workers in whatever state its own previous call left them (all of them still polling or
// spinning after 5 ms) and with no other library's. A block is cut to
// fewer calls (at least 2) when its calls would take more than 1.5 s; a block of calls
// under 1 ms takes at least kShortCalls of them, since one descheduled call moves the
// median of a few such calls by more than the differences being measured.
std::vector<double> interleaved_ms(const std::vector<std::function<void()>>& fns, int reps) {
  constexpr int kRounds = 3;
  constexpr int kShortCalls = 15;
  const int per_block = std::max(2, (reps + kRounds - 1) / kRounds);
  std::vector<std::vector<double>> times(fns.size());
  for (int round = 0; round < kRounds; ++round) {
    for (size_t f = 0; f < fns.size(); ++f) {
      wait_until_idle();
      const auto w0 = Clock::now();
      fns[f]();  // untimed: wakes the library's workers, warms the caches
      const double warm = std::chrono::duration<double, std::milli>(Clock::now() - w0).count();
      const int most = warm < 1.0 ? std::max(per_block, kShortCalls) : per_block;
      const int calls = std::clamp(int(1500.0 / std::max(warm, 1e-3)), 2, most);
      for (int i = 0; i < calls; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        const auto t0 = Clock::now();
        fns[f]();
        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        times[f].push_back(ms);
      }
    }
  }
  std::vector<double> medians;
  for (auto& t : times) {
    std::sort(t.begin(), t.end());
    const size_t n = t.size();
    medians.push_back(n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]));
  }
  return medians;
}

// Runs fn(begin, end) over [0, n) split across n_threads plain threads.
template <class F>
void run_split(int n_threads, int64_t n, F&& fn) {
  const int64_t chunk = (n + n_threads - 1) / n_threads;
  std::vector<std::thread> workers;
  for (int i = 1; i < n_threads; ++i) {
    const int64_t b = i * chunk, e = std::min(n, b + chunk);
    if (b < e) workers.emplace_back([&fn, b, e] { fn(b, e); });
  }
  fn(0, std::min(n, chunk));
  for (auto& w : workers) w.join();
}

// memcpy split over n threads that stay alive between calls (the caller copies the first
// part): a timed copy pays a wake-up, as a library's call on its pool does, not a thread
// start. The helpers sleep on a condition variable in between, so wait_until_idle sees them
// idle.
class CopyCrew {
 public:
  explicit CopyCrew(int n) : n_(std::max(1, n)) {
    for (int i = 1; i < n_; ++i) helpers_.emplace_back([this, i] { serve(i); });
  }
  ~CopyCrew() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : helpers_) t.join();
  }
  CopyCrew(const CopyCrew&) = delete;
  CopyCrew& operator=(const CopyCrew&) = delete;

  void copy(char* dst, const char* src, size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(m_);
      dst_ = dst;
      src_ = src;
      bytes_ = bytes;
      pending_ = n_ - 1;
      ++generation_;
    }
    wake_.notify_all();
    part(0);
    std::unique_lock<std::mutex> lock(m_);
    done_.wait(lock, [this] { return pending_ == 0; });
  }

 private:
  void part(int i) {
    const size_t chunk = (bytes_ + size_t(n_) - 1) / size_t(n_);
    const size_t b = std::min(bytes_, size_t(i) * chunk), e = std::min(bytes_, b + chunk);
    std::memcpy(dst_ + b, src_ + b, e - b);
  }
  void serve(int i) {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(m_);
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      part(i);
      {
        std::lock_guard<std::mutex> lock(m_);
        if (--pending_ == 0) done_.notify_one();
      }
    }
  }

  const int n_;
  std::mutex m_;
  std::condition_variable wake_, done_;
  char* dst_ = nullptr;
  const char* src_ = nullptr;
  size_t bytes_ = 0;
  int pending_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
  std::vector<std::thread> helpers_;
};

// ---- results ----

struct Row {
  std::string op, shape;
  double numr_ms = kNaN, torch_ms = kNaN, blas_ms = kNaN;
  double work = 0.0;      // bytes moved, or floating-point operations
  bool flops = false;     // work counts flops (rate in GFLOP/s) rather than bytes
  double floor_rate = kNaN;  // bytes/s or flop/s that numr is held against
  std::string check;         // "ok", "n/a" or a mismatch description
};

std::string fmt(const char* f, double v) {
  if (std::isnan(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string rate_str(double work, double ms, bool flops) {
  if (std::isnan(ms)) return "n/a";
  return fmt("%.1f", work / (ms * 1e6)) + (flops ? " GFLOP/s" : " GB/s");
}

void print_table(const std::vector<Row>& rows, bool markdown) {
  const std::vector<std::string> head = {"op",          "shape",       "numr ms",
                                         "torch ms",    "ref ms",      "numr/torch",
                                         "numr rate",   "of floor",    "check"};
  std::vector<std::vector<std::string>> cells;
  for (const Row& r : rows) {
    const double frac = r.work / (r.numr_ms * 1e-3) / r.floor_rate;
    cells.push_back({r.op, r.shape, fmt("%.3f", r.numr_ms), fmt("%.3f", r.torch_ms),
                     fmt("%.3f", r.blas_ms), fmt("%.2fx", r.torch_ms / r.numr_ms),
                     rate_str(r.work, r.numr_ms, r.flops), fmt("%.0f%%", 100.0 * frac),
                     r.check});
  }
  std::vector<size_t> width(head.size());
  for (size_t c = 0; c < head.size(); ++c) {
    width[c] = head[c].size();
    for (const auto& line : cells) width[c] = std::max(width[c], line[c].size());
  }
  auto print_line = [&](const std::vector<std::string>& line) {
    for (size_t c = 0; c < line.size(); ++c) {
      if (markdown) std::printf("| %-*s ", int(width[c]), line[c].c_str());
      else std::printf("%-*s  ", int(width[c]), line[c].c_str());
    }
    std::printf(markdown ? "|\n" : "\n");
  };
  print_line(head);
  if (markdown) {
    for (size_t c = 0; c < head.size(); ++c) std::printf("|%s", std::string(width[c] + 2, '-').c_str());
    std::printf("|\n");
  }
  for (const auto& line : cells) print_line(line);
}

// ---- inputs and checks ----

std::vector<float> random_values(int64_t n, uint32_t seed, float lo = -3.f, float hi = 3.f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(gen);
  return v;
}

struct Pair {
  numr::Tensor n;
  at::Tensor t;
};

// The same values as a numr tensor and a libtorch tensor, in dtype (F32 or BF16).
Pair make_inputs(const std::vector<int64_t>& shape, uint32_t seed, numr::DType dtype,
               float lo = -3.f, float hi = 3.f) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v = random_values(n, seed, lo, hi);
  numr::Tensor nt = numr::Tensor::from_vector(v, shape);
  at::Tensor tt = at::from_blob(v.data(), shape, at::kFloat).clone();
  if (dtype == numr::DType::BF16) {
    nt = numr::cast(nt, numr::DType::BF16);
    tt = tt.to(at::kBFloat16);
  } else if (dtype == numr::DType::F64) {
    nt = numr::cast(nt, numr::DType::F64);
    tt = tt.to(at::kDouble);
  }
  return {nt, tt};
}

// Compares numr's result with libtorch's: same element count, and every difference
// within tol of the largest magnitude (summation orders differ between libraries).
std::string compare(const numr::Tensor& got, const at::Tensor& want, double tol) {
  const numr::Tensor g = got.dtype() == numr::DType::F32 ? got : numr::cast(got, numr::DType::F32);
  const std::vector<float> gv = g.to_vector<float>();
  const at::Tensor w = want.to(at::kFloat).contiguous();
  if (int64_t(gv.size()) != w.numel())
    return "size " + std::to_string(gv.size()) + " vs " + std::to_string(w.numel());
  const float* wv = w.data_ptr<float>();
  double max_ref = 0.0, max_diff = 0.0;
  for (size_t i = 0; i < gv.size(); ++i) {
    max_ref = std::max(max_ref, double(std::fabs(wv[i])));
    const double d = std::fabs(double(gv[i]) - double(wv[i]));
    if (!(d <= max_diff)) max_diff = std::isnan(d) ? std::numeric_limits<double>::infinity() : d;
  }
  if (max_diff <= tol * std::max(max_ref, 1.0)) return "ok";
  return "MISMATCH (" + fmt("%.3g", max_diff) + ")";
}

std::string shape_str(const std::vector<int64_t>& s, const char* dtype) {
  std::string out = std::string(dtype) + " [";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// ---- the runner ----

Row make_row(const std::string& op, const std::string& shape) {
  Row r;
  r.op = op;
  r.shape = shape;
  return r;
}

class Bench {
 public:
  explicit Bench(const Options& o)
      : opt_(o), filter_(o.filter.empty() ? ".*" : o.filter), crew_(o.threads) {}

  bool wanted(const std::string& op, const std::string& shape) const {
    return std::regex_search(op + " " + shape, filter_);
  }

  // A memory-bound op: `bytes` read and written by one call.
  void memory_op(const std::string& op, const std::string& shape, double bytes,
                 const std::function<numr::Tensor()>& numr_fn,
                 const std::function<at::Tensor()>& torch_fn, double tol) {
    if (!wanted(op, shape)) return;
    Row r = make_row(op, shape);
    r.work = bytes;
    // The floor: the copy of copy_floor (256 MiB split over the threads) timed again in
    // the same rounds as the libraries, so that it sees the same state of the machine.
    // Always 256 MiB: glibc's memcpy changes strategy with the size (non-temporal stores
    // only for large copies), which would make the floor depend on the op's size.
    if (copy_src_.empty()) {
      copy_src_.assign(kCopyBytes, 1);
      copy_dst_.assign(kCopyBytes, 2);
    }
    run_pair(r, numr_fn, torch_fn, tol,
             [&] { crew_.copy(copy_dst_.data(), copy_src_.data(), kCopyBytes); });
    r.floor_rate = 2.0 * double(kCopyBytes) / (r.blas_ms * 1e-3);
    rows_.push_back(r);
  }

  // A GEMM-bound op doing `flop` work; `blas_fn` is the reference rate numr is held
  // against (OpenBLAS's sgemm for matmul, numr's own plain matmul for the epilogues).
  void gemm_op(const std::string& op, const std::string& shape, double flop,
               const std::function<numr::Tensor()>& numr_fn,
               const std::function<at::Tensor()>& torch_fn, const std::function<void()>& blas_fn,
               double tol) {
    if (!wanted(op, shape)) return;
    Row r = make_row(op, shape);
    r.work = flop;
    r.flops = true;
    run_pair(r, numr_fn, torch_fn, tol, blas_fn);
    r.floor_rate = flop / (r.blas_ms * 1e-3);
    rows_.push_back(r);
  }

  void floor_row(const std::string& op, const std::string& shape, double bytes, double ms) {
    Row r = make_row(op, shape);
    r.work = bytes;
    r.numr_ms = ms;
    r.floor_rate = copy_rate_;
    r.check = "floor";
    rows_.push_back(r);
  }

  void set_copy_rate(double bytes_per_s) { copy_rate_ = bytes_per_s; }
  const Options& options() const { return opt_; }
  const std::vector<Row>& rows() const { return rows_; }

 private:
  void run_pair(Row& r, const std::function<numr::Tensor()>& numr_fn,
                const std::function<at::Tensor()>& torch_fn, double tol,
                const std::function<void()>& blas_fn = {}) {
    std::vector<std::function<void()>> fns = {[&] { at::Tensor y = torch_fn(); }};
    if (blas_fn) fns.push_back(blas_fn);
    bool have_numr = true;
    try {
      r.check = compare(numr_fn(), torch_fn(), tol);
      fns.push_back([&] { numr::Tensor y = numr_fn(); });
    } catch (const numr::Error& e) {
      // An op not implemented yet on this backend: reported, not fatal.
      r.check = "n/a";
      have_numr = false;
      std::fprintf(stderr, "%s %s: %s\n", r.op.c_str(), r.shape.c_str(), e.what());
    }
    const std::vector<double> ms = interleaved_ms(fns, opt_.reps);
    r.torch_ms = ms[0];
    if (blas_fn) r.blas_ms = ms[1];
    if (have_numr) r.numr_ms = ms.back();
  }

  Options opt_;
  std::regex filter_;
  double copy_rate_ = kNaN;
  CopyCrew crew_;
  std::vector<char> copy_src_, copy_dst_;
  std::vector<Row> rows_;
};

// The fused ops of numr against libtorch's unfused eager equivalents: the gate
// silu(a) * b with its backward, and the GEMM epilogue gelu(a @ w + bias) with its
// backward. Backward rows time the fused kernels numr's autograd calls (one pass for the
// gate; one pass plus two GEMMs for the epilogue) against libtorch's autograd.
void fused_cases(Bench& bench) {
  for (numr::DType dt : {numr::DType::F32, numr::DType::BF16}) {
    const bool bf = dt == numr::DType::BF16;
    const double es = bf ? 2.0 : 4.0, tol = bf ? 2e-2 : 1e-5;
    const std::vector<int64_t> shape = {4096, 4096};
    const double n = 4096.0 * 4096.0;
    const Pair a = make_inputs(shape, 21, dt), b = make_inputs(shape, 22, dt),
               g = make_inputs(shape, 23, dt);
    const std::string s = shape_str(shape, bf ? "bf16" : "f32");
    bench.memory_op("silu_mul", s, 3 * n * es, [&] { return numr::silu_mul(a.n, b.n); },
                    [&] { return at::silu(a.t) * b.t; }, tol);
    // Forward + backward: 2 reads + 1 write, then 3 reads + 2 writes.
    bench.memory_op(
        "silu_mul fwd+bwd", s, 8 * n * es,
        [&] {
          numr::Tensor y = numr::silu_mul(a.n, b.n);
          return numr::silu_mul_bwd(g.n, a.n, b.n).first;
        },
        [&] {
          at::Tensor ta = a.t.detach().requires_grad_(true), tb = b.t.detach().requires_grad_(true);
          at::Tensor y = at::silu(ta) * tb;
          return torch::autograd::grad({y}, {ta, tb}, {g.t})[0];
        },
        tol);
  }
  struct Size {
    int64_t m, k, n;
  };
  for (const Size sz : {Size{1024, 1024, 1024}, Size{4096, 1024, 4096}}) {
    for (numr::DType dt : {numr::DType::F32, numr::DType::BF16}) {
      const bool bf = dt == numr::DType::BF16;
      const double tol = bf ? 3e-2 : 1e-4;
      const Pair x = make_inputs({sz.m, sz.k}, 31, dt, -1.f, 1.f);
      const Pair w = make_inputs({sz.k, sz.n}, 32, dt, -1.f, 1.f);
      const Pair bias = make_inputs({sz.n}, 33, dt, -1.f, 1.f);
      const Pair gy = make_inputs({sz.m, sz.n}, 34, dt, -1.f, 1.f);
      const std::string s = std::string(bf ? "bf16 " : "f32 ") + std::to_string(sz.m) + "x" +
                            std::to_string(sz.k) + "x" + std::to_string(sz.n);
      const double flop = 2.0 * double(sz.m) * double(sz.k) * double(sz.n);
      bench.gemm_op(
          "matmul_bias_activation gelu", s, flop,
          [&] { return numr::matmul_bias_activation(x.n, w.n, bias.n, numr::Activation::Gelu); },
          [&] { return at::gelu(at::addmm(bias.t, x.t, w.t), "tanh"); },
          [&] { numr::Tensor y = numr::matmul(x.n, w.n); }, tol);
      const numr::EpilogueForward fwd =
          numr::matmul_bias_activation_fwd(x.n, w.n, bias.n, numr::Activation::Gelu);
      bench.gemm_op(
          "matmul_bias_activation gelu bwd", s, 2 * flop,
          [&] {
            return numr::matmul_bias_activation_bwd_saved(gy.n, x.n, w.n, fwd.saved,
                                                          numr::Activation::Gelu)
                .d_b;
          },
          [&] {
            at::Tensor tx = x.t.detach().requires_grad_(true), tw = w.t.detach().requires_grad_(true),
                       tb = bias.t.detach().requires_grad_(true);
            at::Tensor y = at::gelu(at::addmm(tb, tx, tw), "tanh");
            return torch::autograd::grad({y}, {tx, tw, tb}, {gy.t})[1];
          },
          [&] {
            numr::Tensor da = numr::matmul(gy.n, w.n.transpose(0, 1));
            numr::Tensor dw = numr::matmul(x.n.transpose(0, 1), gy.n);
          },
          tol);
    }
  }
}

// ---- the cases ----

// The bandwidth floor: memcpy between pre-touched 256 MiB buffers, on one thread and
// split over all of them; the better of the two is the floor. A copy into a fresh
// allocation is shown too: an op that returns a new tensor pays those page faults.
void copy_floor(Bench& bench) {
  const size_t bytes = kCopyBytes;
  std::vector<char> src(bytes, 1), dst(bytes, 2);
  const int nt = bench.options().threads;
  const double one = median_ms([&] { std::memcpy(dst.data(), src.data(), bytes); }, 9);
  const double all = median_ms(
      [&] {
        run_split(nt, int64_t(bytes), [&](int64_t b, int64_t e) {
          std::memcpy(dst.data() + b, src.data() + b, size_t(e - b));
        });
      },
      9);
  const double best = std::min(one, all);
  bench.set_copy_rate(2.0 * double(bytes) / (best * 1e-3));
  const double fresh = median_ms(
      [&] {
        char* p = static_cast<char*>(std::aligned_alloc(64, bytes));
        run_split(nt, int64_t(bytes), [&](int64_t b, int64_t e) {
          std::memcpy(p + b, src.data() + b, size_t(e - b));
        });
        std::free(p);
      },
      9);
  bench.floor_row("memcpy (1 thread)", "256 MiB", 2.0 * double(bytes), one);
  bench.floor_row("memcpy (" + std::to_string(nt) + " threads)", "256 MiB", 2.0 * double(bytes),
                  all);
  bench.floor_row("memcpy into new buffer", "256 MiB", 2.0 * double(bytes), fresh);
}

void elementwise_cases(Bench& bench) {
  const std::vector<int64_t> shape = {4096, 4096};
  const double n = 4096.0 * 4096.0, f4 = 4.0;
  const Pair a = make_inputs(shape, 1, numr::DType::F32);
  const Pair b = make_inputs(shape, 2, numr::DType::F32);
  const Pair row = make_inputs({4096}, 3, numr::DType::F32);
  const std::string s = shape_str(shape, "f32");
  const double t32 = 1e-5;

  bench.memory_op("add", s, 3 * n * f4, [&] { return numr::add(a.n, b.n); },
                  [&] { return at::add(a.t, b.t); }, t32);
  bench.memory_op("mul", s, 3 * n * f4, [&] { return numr::mul(a.n, b.n); },
                  [&] { return at::mul(a.t, b.t); }, t32);
  bench.memory_op("exp", s, 2 * n * f4, [&] { return numr::exp(a.n); },
                  [&] { return at::exp(a.t); }, t32);
  bench.memory_op("silu", s, 2 * n * f4, [&] { return numr::silu(a.n); },
                  [&] { return at::silu(a.t); }, t32);
  bench.memory_op("gelu (tanh)", s, 2 * n * f4, [&] { return numr::gelu(a.n); },
                  [&] { return at::gelu(a.t, "tanh"); }, t32);
  bench.memory_op("tanh", s, 2 * n * f4, [&] { return numr::tanh(a.n); },
                  [&] { return at::tanh(a.t); }, t32);
  bench.memory_op("sigmoid", s, 2 * n * f4, [&] { return numr::sigmoid(a.n); },
                  [&] { return at::sigmoid(a.t); }, t32);
  bench.memory_op("relu", s, 2 * n * f4, [&] { return numr::relu(a.n); },
                  [&] { return at::relu(a.t); }, t32);
  bench.memory_op("add, broadcast row", s + " + [4096]", 2 * n * f4 + 4096 * f4,
                  [&] { return numr::add(a.n, row.n); }, [&] { return at::add(a.t, row.t); },
                  t32);

  const Pair ah = make_inputs(shape, 4, numr::DType::BF16);
  const Pair bh = make_inputs(shape, 5, numr::DType::BF16);
  const std::string sh = shape_str(shape, "bf16");
  bench.memory_op("add", sh, 3 * n * 2, [&] { return numr::add(ah.n, bh.n); },
                  [&] { return at::add(ah.t, bh.t); }, 1e-2);
  bench.memory_op("silu", sh, 2 * n * 2, [&] { return numr::silu(ah.n); },
                  [&] { return at::silu(ah.t); }, 1e-2);
}

void reduction_cases(Bench& bench) {
  const std::vector<int64_t> shape = {4096, 4096};
  const double n = 4096.0 * 4096.0, f4 = 4.0;
  const Pair x = make_inputs(shape, 7, numr::DType::F32);
  const std::string s = shape_str(shape, "f32");
  const double t = 1e-4;

  bench.memory_op("sum (all)", s, n * f4, [&] { return numr::sum(x.n); },
                  [&] { return at::sum(x.t); }, t);
  bench.memory_op("sum (last dim)", s, n * f4 + 4096 * f4,
                  [&] { return numr::sum(x.n, {-1}); }, [&] { return at::sum(x.t, {-1}); }, t);
  bench.memory_op("sum (dim 0)", s, n * f4 + 4096 * f4, [&] { return numr::sum(x.n, {0}); },
                  [&] { return at::sum(x.t, {0}); }, t);
  bench.memory_op("max (all)", s, n * f4, [&] { return numr::max(x.n); },
                  [&] { return at::max(x.t); }, t);
  bench.memory_op("mean (all)", s, n * f4, [&] { return numr::mean(x.n); },
                  [&] { return at::mean(x.t); }, t);
  bench.memory_op("var (last dim)", s, n * f4 + 4096 * f4,
                  [&] { return numr::var(x.n, {-1}); },
                  [&] { return at::var(x.t, {-1}, /*unbiased=*/true, /*keepdim=*/false); }, t);
  bench.memory_op("softmax (last dim)", s, 2 * n * f4, [&] { return numr::softmax(x.n, -1); },
                  [&] { return at::softmax(x.t, -1); }, t);
  bench.memory_op("cumsum (last dim)", s, 2 * n * f4, [&] { return numr::cumsum(x.n, -1); },
                  [&] { return at::cumsum(x.t, -1); }, t);
  bench.memory_op("cumsum (dim 0)", s, 2 * n * f4, [&] { return numr::cumsum(x.n, 0); },
                  [&] { return at::cumsum(x.t, 0); }, t);
  bench.memory_op("logsumexp (last dim)", s, n * f4 + 4096 * f4,
                  [&] { return numr::logsumexp(x.n, {-1}); },
                  [&] { return at::logsumexp(x.t, {-1}); }, t);
  bench.memory_op("argmax (last dim)", s, n * f4 + 4096 * 8.0,
                  [&] { return numr::argmax(x.n, -1); }, [&] { return at::argmax(x.t, -1); }, 0.0);
  bench.memory_op("softmax (dim 0)", s, 2 * n * f4, [&] { return numr::softmax(x.n, 0); },
                  [&] { return at::softmax(x.t, 0); }, t);

  // The same element count in other shapes: short softmax rows, a tall matrix's row and
  // column sums.
  const std::vector<int64_t> tall = {16384, 1024}, short_rows = {262144, 64};
  const Pair xt = make_inputs(tall, 8, numr::DType::F32);
  const Pair xs = make_inputs(short_rows, 9, numr::DType::F32);
  bench.memory_op(
      "sum (last dim)", shape_str(tall, "f32"), n * f4 + 16384 * f4,
      [&] { return numr::sum(xt.n, {-1}); }, [&] { return at::sum(xt.t, {-1}); }, t);
  // A transposed view read into a row-major result: made contiguous, and as an input.
  const numr::Tensor tn = numr::transpose(xt.n, 0, 1);
  const at::Tensor tt = xt.t.transpose(0, 1);
  bench.memory_op(
      "contiguous of transpose", "f32 [1024, 16384]", 2 * n * f4,
      [&] { return numr::contiguous(tn); }, [&] { return tt.contiguous(); }, t);
  bench.memory_op(
      "exp of transpose", "f32 [1024, 16384]", 2 * n * f4, [&] { return numr::exp(tn); },
      [&] { return at::exp(tt); }, t);
  // Cast to BF16 into a row-major result (libtorch: copy_ into a new row-major tensor; its
  // `to` would keep the transposed layout).
  bench.memory_op(
      "cast of transpose", "f32 [1024, 16384] to bf16", n * (f4 + 2),
      [&] { return numr::cast(tn, numr::DType::BF16); },
      [&] {
        return at::empty({1024, 16384}, at::kBFloat16).copy_(tt);
      },
      t);
  // The same in 2-byte and 8-byte elements.
  for (const numr::DType dt : {numr::DType::BF16, numr::DType::F64}) {
    const Pair xo = make_inputs(tall, 10, dt);
    const numr::Tensor on = numr::transpose(xo.n, 0, 1);
    const at::Tensor ot = xo.t.transpose(0, 1);
    const double es = double(numr::dtype_size(dt));
    bench.memory_op(
        "contiguous of transpose",
        shape_str({1024, 16384}, dt == numr::DType::BF16 ? "bf16" : "f64"), 2 * n * es,
        [&] { return numr::contiguous(on); }, [&] { return ot.contiguous(); }, t);
  }
  bench.memory_op("sum (dim 0)", shape_str(tall, "f32"), n * f4 + 1024 * f4,
                  [&] { return numr::sum(xt.n, {0}); }, [&] { return at::sum(xt.t, {0}); }, t);
  bench.memory_op("softmax (last dim)", shape_str(short_rows, "f32"), 2 * n * f4,
                  [&] { return numr::softmax(xs.n, -1); }, [&] { return at::softmax(xs.t, -1); },
                  t);
}

void matmul_cases(Bench& bench) {
  struct Size {
    int64_t m, k, n;
  };
  const int nt = bench.options().threads;
  for (const Size sz : {Size{256, 256, 256}, Size{1024, 1024, 1024}, Size{2048, 2048, 2048},
                        Size{4096, 1024, 1024}}) {
    const std::string s = "f32 " + std::to_string(sz.m) + "x" + std::to_string(sz.k) + "x" +
                          std::to_string(sz.n);
    if (!bench.wanted("matmul", s) && !bench.wanted("matmul", "bf16" + s.substr(3))) continue;
    const Pair a = make_inputs({sz.m, sz.k}, 11, numr::DType::F32, -1.f, 1.f);
    const Pair b = make_inputs({sz.k, sz.n}, 12, numr::DType::F32, -1.f, 1.f);
    std::vector<float> c(size_t(sz.m * sz.n));
    const float* pa = a.t.data_ptr<float>();
    const float* pb = b.t.data_ptr<float>();
    auto sgemm = [&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(sz.m), int(sz.n), int(sz.k),
                  1.f, pa, int(sz.k), pb, int(sz.n), 0.f, c.data(), int(sz.n));
    };
    const double flop = 2.0 * double(sz.m) * double(sz.k) * double(sz.n);
    // Small products as a program calls them, one after another: each timed block is
    // kBackToBack calls, so a pool's wake-up after the benchmark's pause is paid once.
    const bool small = sz.m * sz.n * sz.k <= int64_t(256) * 256 * 256;
    auto back_to_back = [&](const std::string& shape, const Pair& x, const Pair& y,
                            double tol) {
      constexpr int kBackToBack = 20;
      bench.gemm_op(
          "matmul, 20 back to back", shape, kBackToBack * flop,
          [&] {
            for (int i = 1; i < kBackToBack; ++i) (void)numr::matmul(x.n, y.n);
            return numr::matmul(x.n, y.n);
          },
          [&] {
            for (int i = 1; i < kBackToBack; ++i) (void)at::matmul(x.t, y.t);
            return at::matmul(x.t, y.t);
          },
          [&] {
            for (int i = 0; i < kBackToBack; ++i) sgemm();
          },
          tol);
    };
    bench.gemm_op("matmul", s, flop, [&] { return numr::matmul(a.n, b.n); },
                  [&] { return at::matmul(a.t, b.t); }, sgemm, 1e-4);
    if (small) back_to_back(s, a, b, 1e-4);

    // bf16 in, bf16 out; held against OpenBLAS's f32 rate, since numr computes it in f32.
    const std::string sh = "bf16" + s.substr(3);
    if (sz.m * sz.n * sz.k > int64_t(2048) * 2048 * 2048 / 2) continue;
    const Pair ah{numr::cast(a.n, numr::DType::BF16), a.t.to(at::kBFloat16)};
    const Pair bh{numr::cast(b.n, numr::DType::BF16), b.t.to(at::kBFloat16)};
    bench.gemm_op("matmul", sh, flop, [&] { return numr::matmul(ah.n, bh.n); },
                  [&] { return at::matmul(ah.t, bh.t); }, sgemm, 2e-2);
    if (small) back_to_back(sh, ah, bh, 2e-2);
  }

  // Many small products: numr spreads the batch over its pool; the OpenBLAS figure splits
  // the batch over the same number of threads, one single-threaded sgemm per item.
  const int64_t batch = 256, d = 64;
  const std::string s = "f32 " + std::to_string(batch) + "x(" + std::to_string(d) + "x" +
                        std::to_string(d) + "x" + std::to_string(d) + ")";
  if (!bench.wanted("batched matmul", s)) return;
  const Pair a = make_inputs({batch, d, d}, 13, numr::DType::F32, -1.f, 1.f);
  const Pair b = make_inputs({batch, d, d}, 14, numr::DType::F32, -1.f, 1.f);
  std::vector<float> c(size_t(batch * d * d));
  const float* pa = a.t.data_ptr<float>();
  const float* pb = b.t.data_ptr<float>();
  auto sgemm_batch = [&] {
    run_split(nt, batch, [&](int64_t first, int64_t last) {
      for (int64_t i = first; i < last; ++i)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(d), int(d), int(d), 1.f,
                    pa + i * d * d, int(d), pb + i * d * d, int(d), 0.f, c.data() + i * d * d,
                    int(d));
    });
  };
  bench.gemm_op("batched matmul", s, 2.0 * double(batch * d * d * d),
                [&] { return numr::matmul(a.n, b.n); }, [&] { return at::matmul(a.t, b.t); },
                sgemm_batch, 1e-4);
}

// ---- machine description ----

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  return "unknown";
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  return buf;
}

[[noreturn]] void usage(int code) {
  std::fprintf(code ? stderr : stdout,
               "usage: numr_bench [--threads N] [--filter REGEX] [--reps N] [--markdown]\n"
               "  --threads N     threads for numr, libtorch and OpenBLAS (default: all cores)\n"
               "  --filter REGEX  only cases whose \"op shape\" matches\n"
               "  --reps N        timed runs per measurement; the median is reported (15)\n"
               "  --markdown      print the table as Markdown\n");
  std::exit(code);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(2);
      return argv[++i];
    };
    if (a == "--threads") o.threads = std::atoi(value().c_str());
    else if (a == "--filter") o.filter = value();
    else if (a == "--reps") o.reps = std::atoi(value().c_str());
    else if (a == "--markdown") o.markdown = true;
    else if (a == "--help" || a == "-h") usage(0);
    else usage(2);
  }
  if (o.threads < 1 || o.reps < 1) usage(2);
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse(argc, argv);
  numr::set_num_threads(opt.threads);
  at::set_num_threads(opt.threads);
  openblas_set_num_threads(opt.threads);

  std::printf("numr_bench: %s, %u logical CPUs; %d threads; median of up to %d runs\n",
              cpu_model().c_str(), std::thread::hardware_concurrency(), opt.threads, opt.reps);
  std::printf("date: %s; OpenBLAS: %s (core %s); libtorch %s, %d intra-op threads\n",
              utc_now().c_str(), openblas_get_config(), openblas_get_corename(),
              TORCH_VERSION, at::get_num_threads());
  const char* isa = std::getenv("NUMR_CPU_ISA");
  std::printf("numr CPU kernels: %s\n\n", isa ? isa : "best available (NUMR_CPU_ISA unset)");

  Bench bench(opt);
  copy_floor(bench);
  elementwise_cases(bench);
  reduction_cases(bench);
  matmul_cases(bench);
  fused_cases(bench);
  print_table(bench.rows(), opt.markdown);
  std::printf(
      "\nnumr/torch = torch time / numr time (above 1: numr is faster). of floor = numr's "
      "rate over the copy bandwidth of a 256 MiB memcpy on as many threads timed in the same "
      "rounds (memory-bound ops; ref ms is that copy's time; the memcpy rows above time it "
      "once, at the start), "
      "over OpenBLAS's sgemm rate "
      "(matmul), over numr's plain matmul of the same shape (epilogue forward) or two plain "
      "matmuls (epilogue backward); ref ms is that reference's time.\n");
  std::printf(
      "Each library's block of calls began once every other library's workers slept: %d "
      "blocks, %d of them after 0.5 s with a thread still running.\n",
      g_idle_waits, g_idle_timeouts);
  return 0;
}
