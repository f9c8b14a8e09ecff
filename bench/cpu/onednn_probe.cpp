// The CPU GEMM ceiling beside numr: oneDNN's matmul primitive run directly on an OpenMP team
// of T threads (B as given, and B reordered into the primitive's layout, the reorder timed
// apart), then numr's matmul and GELU epilogue at T threads, for BF16 and F32 products of
// random values (all-zero inputs run AMX several times faster than real data).
//   numr_onednn_probe [--size 4096] [--threads 1,4,16] [--reps 5]
// Prints a markdown table of the best of `reps` calls after one warm-up. Run it again with
// NUMR_CPU_GEMM_TEAM=0 for numr's pool split; ONEDNN_VERBOSE=1 names oneDNN's kernels.
#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "numr/numr.h"

namespace {

using dnnl::memory;

double best_ms(int reps, const std::function<void()>& fn) {
  fn();
  double best = 1e300;
  for (int i = 0; i < reps; ++i) {
    const auto t = std::chrono::steady_clock::now();
    fn();
    const std::chrono::duration<double, std::milli> d = std::chrono::steady_clock::now() - t;
    best = std::min(best, d.count());
  }
  return best;
}

// Uniform values in [-0.5, 0.5) into a buffer of f32 or bf16 elements.
void fill(void* data, size_t elements, bool bf16, uint32_t seed) {
  for (size_t i = 0; i < elements; ++i) {
    seed = seed * 1664525u + 1013904223u;
    const float f = float(seed >> 8) / 16777216.0f - 0.5f;
    if (bf16) {
      uint32_t u;
      std::memcpy(&u, &f, 4);
      static_cast<uint16_t*>(data)[i] = uint16_t(u >> 16);
    } else {
      static_cast<float*>(data)[i] = f;
    }
  }
}

void row(const std::string& what, int threads, double ms, int64_t s) {
  const double tflops = 2.0 * double(s) * double(s) * double(s) / (ms * 1e9);
  std::printf("| %s | %d | %.2f | %.2f |\n", what.c_str(), threads, ms, tflops);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t s = 4096;
  int reps = 5;
  std::vector<int> counts = {1, 4, 16};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--size" && i + 1 < argc) {
      s = std::atoll(argv[++i]);
    } else if (arg == "--reps" && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else if (arg == "--threads" && i + 1 < argc) {
      counts.clear();
      for (const char* p = argv[++i]; *p;) {
        counts.push_back(std::atoi(p));
        while (*p && *p != ',') ++p;
        if (*p) ++p;
      }
    } else {
      std::fprintf(stderr, "usage: numr_onednn_probe [--size N] [--threads 1,4,16] [--reps N]\n");
      return 2;
    }
  }
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const bool amx = dnnl::get_effective_cpu_isa() == dnnl::cpu_isa::avx512_core_amx;
  std::printf(
      "%lld^3; oneDNN with AMX: %s\n\n| case | threads | ms | TFLOP/s |\n"
      "|---|---:|---:|---:|\n",
      static_cast<long long>(s), amx ? "yes" : "no");
  numr::Generator gen(1);
  for (const int t : counts) {
    omp_set_num_threads(t);
    numr::set_num_threads(t);
    for (const bool bf16 : {true, false}) {
      const std::string tag = bf16 ? "bf16" : "f32";
      const memory::data_type dt = bf16 ? memory::data_type::bf16 : memory::data_type::f32;
      const memory::desc a_md({s, s}, dt, memory::format_tag::ab);
      const memory::desc plain_b({s, s}, dt, memory::format_tag::ab);
      memory a(a_md, engine), b(plain_b, engine), c(a_md, engine);
      fill(a.get_data_handle(), size_t(s * s), bf16, 1);
      fill(b.get_data_handle(), size_t(s * s), bf16, 2);
      for (const bool packed : {false, true}) {
        const memory::desc b_md =
            packed ? memory::desc({s, s}, dt, memory::format_tag::any) : plain_b;
        const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, a_md), engine);
        const dnnl::matmul mm(pd);
        memory w = packed ? memory(pd.weights_desc(), engine) : b;
        if (packed) {
          const dnnl::reorder r(b, w);
          row("oneDNN reorder of B " + tag, t,
              best_ms(reps,
                      [&] {
                        r.execute(stream, b, w);
                        stream.wait();
                      }),
              s);
        }
        row(std::string("oneDNN ") + pd.impl_info_str() + " " + tag +
                (packed ? " (B packed)" : " (B plain)"),
            t,
            best_ms(
                reps,
                [&] {
                  mm.execute(stream, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, c}});
                  stream.wait();
                }),
            s);
      }
      const numr::DType ndt = bf16 ? numr::DType::BF16 : numr::DType::F32;
      const numr::Tensor x =
          numr::rand({s, s}, numr::DType::F32, numr::Device::cpu(), gen).cast(ndt);
      const numr::Tensor y =
          numr::rand({s, s}, numr::DType::F32, numr::Device::cpu(), gen).cast(ndt);
      const numr::Tensor bias = numr::randn({s}, ndt, numr::Device::cpu(), gen);
      row("numr matmul " + tag, t, best_ms(reps, [&] { (void)numr::matmul(x, y); }), s);
      row("numr gelu(x@w+b) " + tag, t,
          best_ms(reps,
                  [&] { (void)numr::matmul_bias_activation(x, y, bias, numr::Activation::Gelu); }),
          s);
    }
  }
  return 0;
}
