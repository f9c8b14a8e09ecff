// Pieces shared by the CPU GEMM paths (matmul.cpp, onednn_matmul.cpp, gemm_epilogue.cpp):
// the oneDNN engine, the OpenMP setting held at one thread around oneDNN calls, per-thread
// scratch buffers, and the work thresholds the paths choose by.
#pragma once

#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <cstddef>
#include <cstdlib>

#include "numr/error.h"

namespace numr::cpu {

// Below this many multiply-adds oneDNN's fixed per-call cost loses to the BLAS.
inline constexpr double kOnednnMinMacs = 65536.0;
// The least work worth a task of its own on numr's thread pool.
inline constexpr double kMinMacsPerTask = 256.0 * 1024.0;

inline dnnl::engine& onednn_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// oneDNN sizes its OpenMP team from the calling thread's OpenMP setting. It is held at n
// (1: numr's pool does the splitting) for a call and put back after, so the caller's own
// OpenMP code is left as it was.
class OmpThreads {
 public:
  explicit OmpThreads(int n) : saved_(omp_get_max_threads()) {
    if (n != saved_) omp_set_num_threads(n);
  }
  ~OmpThreads() {
    if (omp_get_max_threads() != saved_) omp_set_num_threads(saved_);
  }
  OmpThreads(const OmpThreads&) = delete;
  OmpThreads& operator=(const OmpThreads&) = delete;

 private:
  int saved_;
};

// Grow-only per-thread scratch memory (packed or converted operands, staged results,
// oneDNN's scratchpad), kept between calls: the first touch of a fresh large buffer costs
// a page fault per 4 KiB, more than a half-precision conversion. Released by trim() when
// above kKeepBytes.
class ScratchBuffer {
 public:
  explicit ScratchBuffer(const char* op = "matmul") : op_(op) {}
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;
  ~ScratchBuffer() { std::free(data_); }

  void* get(size_t bytes) {
    if (bytes > size_) {
      std::free(data_);
      size_ = (bytes + 63) / 64 * 64;
      data_ = std::aligned_alloc(64, size_);
      if (!data_) {
        size_ = 0;
        fail<OutOfMemory>(op_, "cannot allocate ", bytes, " bytes of scratch");
      }
    }
    return data_;
  }
  void trim() {
    if (size_ <= kKeepBytes) return;
    std::free(data_);
    data_ = nullptr;
    size_ = 0;
  }

 private:
  static constexpr size_t kKeepBytes = size_t(64) << 20;
  const char* op_;
  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace numr::cpu
