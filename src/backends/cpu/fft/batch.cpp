// The batched, strided entry points of fft.h: each sequence is gathered into a buffer of
// the calling thread, transformed there and scattered to the output. Many sequences are
// spread over the thread pool; a few long ones split each pass over it instead.
#include <algorithm>
#include <bit>
#include <vector>

#include "backends/cpu/fft/complex_plan.h"
#include "backends/cpu/fft/fft.h"
#include "backends/cpu/fft/plan_cache.h"
#include "backends/cpu/fft/real_plan.h"
#include "core/thread_pool.h"
#include "numr/error.h"

namespace numr::cpu::fft {

namespace {

struct Offsets {
  int64_t in, out;
};

// Sequences of a batch by linear index (the last batch dim varying fastest).
class BatchWalk {
 public:
  BatchWalk(std::span<const BatchDim> dims, int64_t n, const char* op) : dims_(dims) {
    if (n < 1) throw InvalidArgument(detail::message(op, "length must be >= 1, got ", n));
    for (const BatchDim& d : dims) {
      if (d.size < 0) throw InvalidArgument(detail::message(op, "negative batch size ", d.size));
      count_ *= d.size;
    }
  }
  int64_t count() const { return count_; }
  Offsets at(int64_t i) const {
    Offsets o{0, 0};
    for (size_t d = dims_.size(); d-- > 0;) {
      const int64_t idx = i % dims_[d].size;
      i /= dims_[d].size;
      o.in += idx * dims_[d].in_stride;
      o.out += idx * dims_[d].out_stride;
    }
    return o;
  }

 private:
  std::span<const BatchDim> dims_;
  int64_t count_ = 1;
};

// Runs body(first, last, parallel_inside) over the sequences: batches of short sequences
// over the pool, long sequences one at a time with their passes split.
template <class Body>
void schedule(int64_t count, int64_t n, Body&& body) {
  if (count == 0) return;
  const int64_t log_n = std::max<int64_t>(1, std::bit_width(static_cast<uint64_t>(n)));
  const int64_t work = n * log_n;  // per sequence
  const int64_t threads = ThreadPool::instance().size();
  constexpr int64_t kTaskWork = int64_t{1} << 16;
  if (count >= threads && count * work >= 2 * kTaskWork) {
    parallel_for(count, std::max<int64_t>(1, kTaskWork / work),
                 [&](int64_t b, int64_t e) { body(b, e, false); });
  } else {
    body(int64_t{0}, count, n >= 16384);
  }
}

template <class T>
const T* reals(const std::complex<T>* p) {
  return reinterpret_cast<const T*>(p);
}
template <class T>
T* reals(std::complex<T>* p) {
  return reinterpret_cast<T*>(p);
}

}  // namespace

template <class T>
void c2c(int64_t n, Direction dir, std::span<const BatchDim> batch, const std::complex<T>* in,
         int64_t in_stride, std::complex<T>* out, int64_t out_stride) {
  const BatchWalk walk(batch, n, "fft");
  const auto plan = complex_plan<T>(n, dir);
  const T* src = reals(in);
  T* dst = reals(out);
  schedule(walk.count(), n, [&](int64_t first, int64_t last, bool parallel) {
    CxBuffer<T> a(plan->buffer_size()), b(plan->buffer_size());
    for (int64_t i = first; i < last; ++i) {
      const Offsets o = walk.at(i);
      const T* x = src + 2 * o.in;
      for (int64_t j = 0; j < n; ++j)
        a.data()[j] = {x[2 * j * in_stride], x[2 * j * in_stride + 1]};
      const Cx<T>* y = plan->run(a.data(), b.data(), parallel);
      T* z = dst + 2 * o.out;
      for (int64_t j = 0; j < n; ++j) {
        z[2 * j * out_stride] = y[j].re;
        z[2 * j * out_stride + 1] = y[j].im;
      }
    }
  });
}

template <class T>
void r2c(int64_t n, std::span<const BatchDim> batch, const T* in, int64_t in_stride,
         std::complex<T>* out, int64_t out_stride) {
  const BatchWalk walk(batch, n, "rfft");
  const auto plan = real_plan<T>(n, Direction::Forward);
  T* dst = reals(out);
  const int64_t n_out = n / 2 + 1;
  schedule(walk.count(), n, [&](int64_t first, int64_t last, bool parallel) {
    CxBuffer<T> a(plan->buffer_size()), b(plan->buffer_size());
    for (int64_t i = first; i < last; ++i) {
      const Offsets o = walk.at(i);
      plan->load_real(in + o.in, in_stride, a.data());
      const Cx<T>* y = plan->forward(a.data(), b.data(), parallel);
      T* z = dst + 2 * o.out;
      for (int64_t j = 0; j < n_out; ++j) {
        z[2 * j * out_stride] = y[j].re;
        z[2 * j * out_stride + 1] = y[j].im;
      }
    }
  });
}

template <class T>
void c2r(int64_t n, std::span<const BatchDim> batch, const std::complex<T>* in, int64_t in_stride,
         T* out, int64_t out_stride) {
  const BatchWalk walk(batch, n, "irfft");
  const auto plan = real_plan<T>(n, Direction::Inverse);
  const T* src = reals(in);
  const int64_t n_in = n / 2 + 1;
  schedule(walk.count(), n, [&](int64_t first, int64_t last, bool parallel) {
    CxBuffer<T> a(plan->buffer_size()), b(plan->buffer_size());
    for (int64_t i = first; i < last; ++i) {
      const Offsets o = walk.at(i);
      const T* x = src + 2 * o.in;
      for (int64_t j = 0; j < n_in; ++j)
        a.data()[j] = {x[2 * j * in_stride], x[2 * j * in_stride + 1]};
      const auto y = plan->inverse(a.data(), b.data(), parallel);
      T* z = out + o.out;
      for (int64_t j = 0; j < n; ++j) z[j * out_stride] = y.ptr[j * y.stride];
    }
  });
}

template void c2c<float>(int64_t, Direction, std::span<const BatchDim>, const std::complex<float>*,
                         int64_t, std::complex<float>*, int64_t);
template void c2c<double>(int64_t, Direction, std::span<const BatchDim>,
                          const std::complex<double>*, int64_t, std::complex<double>*, int64_t);
template void r2c<float>(int64_t, std::span<const BatchDim>, const float*, int64_t,
                         std::complex<float>*, int64_t);
template void r2c<double>(int64_t, std::span<const BatchDim>, const double*, int64_t,
                          std::complex<double>*, int64_t);
template void c2r<float>(int64_t, std::span<const BatchDim>, const std::complex<float>*, int64_t,
                         float*, int64_t);
template void c2r<double>(int64_t, std::span<const BatchDim>, const std::complex<double>*, int64_t,
                          double*, int64_t);

}  // namespace numr::cpu::fft
