#include "backends/cuda/cublaslt_matmul.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "backends/cuda/context.h"
#include "backends/cuda/cublaslt.h"
#include "numr/error.h"

namespace numr::cuda {
namespace {

// RAII owners of the library's descriptors, so an exception between creation and use
// leaks nothing.
class Desc {
 public:
  explicit Desc(const LtMatmulDesc& d) {
    const CublasLt& lt = cublaslt();
    check(lt.matmul_desc_create(&desc_, d.compute, d.scale_type), "cublasLtMatmulDescCreate");
    set(CUBLASLT_MATMUL_DESC_TRANSA, int32_t(d.trans_a), "TRANSA");
    set(CUBLASLT_MATMUL_DESC_TRANSB, int32_t(d.trans_b), "TRANSB");
    set(CUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t(d.epilogue), "EPILOGUE");
    if (d.bias) {
      set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, d.bias, "BIAS_POINTER");
      if (d.bias_type)
        set(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, int32_t(*d.bias_type), "BIAS_DATA_TYPE");
      if (d.bias_batch_stride)
        set(CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, d.bias_batch_stride, "BIAS_BATCH_STRIDE");
    }
    if (d.aux) {
      set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, d.aux, "EPILOGUE_AUX_POINTER");
      set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, d.aux_ld, "EPILOGUE_AUX_LD");
      if (d.aux_batch_stride)
        set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, d.aux_batch_stride,
            "EPILOGUE_AUX_BATCH_STRIDE");
      if (d.aux_type)
        set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, int32_t(*d.aux_type),
            "EPILOGUE_AUX_DATA_TYPE");
    }
  }
  ~Desc() {
    if (desc_) cublaslt().matmul_desc_destroy(desc_);
  }
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
  cublasLtMatmulDesc_t get() const { return desc_; }

 private:
  template <class T>
  void set(cublasLtMatmulDescAttributes_t attr, const T& value, const char* name) {
    check(cublaslt().matmul_desc_set_attribute(desc_, attr, &value, sizeof(value)),
          std::string("cublasLtMatmulDescSetAttribute(") + name + ")");
  }
  cublasLtMatmulDesc_t desc_ = nullptr;
};

class Layout {
 public:
  explicit Layout(const LtLayout& l) {
    const CublasLt& lt = cublaslt();
    check(lt.matrix_layout_create(&layout_, l.type, l.rows, l.cols, l.ld),
          "cublasLtMatrixLayoutCreate");
    if (l.order != CUBLASLT_ORDER_COL) set(CUBLASLT_MATRIX_LAYOUT_ORDER, int32_t(l.order), "ORDER");
    if (l.batch_count != 1) {
      set(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, l.batch_count, "BATCH_COUNT");
      set(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, l.batch_stride, "STRIDED_BATCH_OFFSET");
    }
  }
  ~Layout() {
    if (layout_) cublaslt().matrix_layout_destroy(layout_);
  }
  Layout(const Layout&) = delete;
  Layout& operator=(const Layout&) = delete;
  cublasLtMatrixLayout_t get() const { return layout_; }

 private:
  template <class T>
  void set(cublasLtMatrixLayoutAttribute_t attr, const T& value, const char* name) {
    check(cublaslt().matrix_layout_set_attribute(layout_, attr, &value, sizeof(value)),
          std::string("cublasLtMatrixLayoutSetAttribute(") + name + ")");
  }
  cublasLtMatrixLayout_t layout_ = nullptr;
};

// The largest power of two, up to 256, that divides the address: what the heuristic may
// assume about a pointer.
uint32_t alignment_of(const void* p) {
  const auto v = reinterpret_cast<uintptr_t>(p);
  if (v == 0) return 256;
  return uint32_t(std::min<uintptr_t>(v & (~v + 1), 256));
}

class Preference {
 public:
  Preference(uint64_t workspace_bytes, uint32_t reduction_schemes, const LtOperands& ops) {
    const CublasLt& lt = cublaslt();
    check(lt.matmul_preference_create(&pref_), "cublasLtMatmulPreferenceCreate");
    set(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, workspace_bytes, "MAX_WORKSPACE_BYTES");
    if (reduction_schemes != uint32_t(CUBLASLT_REDUCTION_SCHEME_MASK))
      set(CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, reduction_schemes, "REDUCTION_SCHEME_MASK");
    set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignment_of(ops.a), "MIN_ALIGNMENT_A_BYTES");
    set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignment_of(ops.b), "MIN_ALIGNMENT_B_BYTES");
    set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignment_of(ops.c), "MIN_ALIGNMENT_C_BYTES");
    set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignment_of(ops.d), "MIN_ALIGNMENT_D_BYTES");
  }
  ~Preference() {
    if (pref_) cublaslt().matmul_preference_destroy(pref_);
  }
  Preference(const Preference&) = delete;
  Preference& operator=(const Preference&) = delete;
  cublasLtMatmulPreference_t get() const { return pref_; }

 private:
  template <class T>
  void set(cublasLtMatmulPreferenceAttributes_t attr, const T& value, const char* name) {
    check(cublaslt().matmul_preference_set_attribute(pref_, attr, &value, sizeof(value)),
          std::string("cublasLtMatmulPreferenceSetAttribute(") + name + ")");
  }
  cublasLtMatmulPreference_t pref_ = nullptr;
};

// Heuristic answers by configuration. The key holds everything the heuristic sees: the
// device, every descriptor attribute we set, the preference's reduction schemes, the four
// layouts and the alignment of every pointer (the bias and aux pointers' values matter to
// it too, per cublasLt.h).
using HeuristicKey = std::vector<int64_t>;

HeuristicKey key_of(const CudaDevice& dev, const LtMatmulDesc& d, const LtLayout* const (&ls)[4],
                    uint32_t reduction_schemes, const LtOperands& ops) {
  HeuristicKey k = {dev.index(),
                    int64_t(reduction_schemes),
                    int64_t(d.compute),
                    int64_t(d.scale_type),
                    int64_t(d.trans_a),
                    int64_t(d.trans_b),
                    int64_t(d.epilogue),
                    d.bias ? int64_t(alignment_of(d.bias)) : 0,
                    d.bias_type ? int64_t(*d.bias_type) : -1,
                    d.bias_batch_stride,
                    d.aux ? int64_t(alignment_of(d.aux)) : 0,
                    d.aux_ld,
                    d.aux_batch_stride,
                    d.aux_type ? int64_t(*d.aux_type) : -1,
                    alignment_of(ops.a),
                    alignment_of(ops.b),
                    alignment_of(ops.c),
                    alignment_of(ops.d),
                    ops.c == ops.d};
  for (const LtLayout* l : ls)
    k.insert(k.end(), {int64_t(l->type), int64_t(l->rows), int64_t(l->cols), l->ld,
                       int64_t(l->order), l->batch_count, l->batch_stride});
  return k;
}

struct Heuristic {
  bool found = false;
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;  // the query's, when nothing was found
  cublasLtMatmulAlgo_t algo{};
};

class HeuristicCache {
 public:
  std::optional<Heuristic> find(const HeuristicKey& k) {
    std::lock_guard lock(mu_);
    const auto it = map_.find(k);
    if (it == map_.end()) return std::nullopt;
    return it->second;
  }
  void put(HeuristicKey k, const Heuristic& h) {
    std::lock_guard lock(mu_);
    if (map_.size() >= kMaxEntries) map_.clear();  // a workload with endless shapes
    map_.emplace(std::move(k), h);
  }

 private:
  static constexpr size_t kMaxEntries = 4096;
  std::mutex mu_;
  std::map<HeuristicKey, Heuristic> map_;
};

HeuristicCache& heuristic_cache() {
  static auto* cache = new HeuristicCache;  // never destroyed: used until the process ends
  return *cache;
}

// Queues the matmul when cuBLASLt has an algorithm for it; otherwise returns the heuristic's
// answer (found == false) and queues nothing.
Heuristic run(CudaDevice& dev, const LtMatmulDesc& desc, const LtLayout& a, const LtLayout& b,
              const LtLayout& c, const LtLayout& d, const LtOperands& operands) {
  CublasLtHandle& h = dev.cublaslt();
  const CublasLt& lt = cublaslt();
  dev.make_current();
  const Desc op(desc);
  const Layout la(a), lb(b), lc(c), ld(d);
  const LtLayout* const layouts[4] = {&a, &b, &c, &d};
  const uint32_t schemes = reduction_scheme_mask(desc.compute, d.type);
  HeuristicKey key = key_of(dev, desc, layouts, schemes, operands);
  std::optional<Heuristic> cached = heuristic_cache().find(key);
  if (!cached) {
    const Preference pref(h.workspace_bytes, schemes, operands);
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    const cublasStatus_t hs = lt.matmul_algo_get_heuristic(
        h.handle, op.get(), la.get(), lb.get(), lc.get(), ld.get(), pref.get(), 1, &result, &found);
    // NOT_SUPPORTED is how the heuristic says that nothing fits; INVALID_VALUE is what some
    // versions answer for an epilogue a type combination lacks (e.g. F64 with GELU). Both
    // let the caller fall back; other failures are errors.
    if (hs != CUBLAS_STATUS_NOT_SUPPORTED && hs != CUBLAS_STATUS_INVALID_VALUE)
      check(hs, "cublasLtMatmulAlgoGetHeuristic");
    Heuristic fresh;
    fresh.found = hs == CUBLAS_STATUS_SUCCESS && found > 0;
    fresh.status = hs;
    if (fresh.found) fresh.algo = result.algo;
    heuristic_cache().put(std::move(key), fresh);
    cached = fresh;
  }
  if (!cached->found) return *cached;
  check(lt.matmul(h.handle, op.get(), operands.alpha, operands.a, la.get(), operands.b, lb.get(),
                  operands.beta, operands.c, lc.get(), operands.d, ld.get(), &cached->algo,
                  h.workspace, h.workspace_bytes, dev.stream()),
        "cublasLtMatmul");
  return *cached;
}

}  // namespace

uint32_t reduction_scheme_mask(cublasComputeType_t compute, cudaDataType_t d) {
  const bool narrow_d =
      d == CUDA_R_16F || d == CUDA_R_16BF || (d == CUDA_R_32F && compute == CUBLAS_COMPUTE_64F);
  return uint32_t(narrow_d ? CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE
                           : CUBLASLT_REDUCTION_SCHEME_MASK);
}

bool try_lt_matmul(CudaDevice& dev, const LtMatmulDesc& desc, const LtLayout& a, const LtLayout& b,
                   const LtLayout& c, const LtLayout& d, const LtOperands& operands) {
  return run(dev, desc, a, b, c, d, operands).found;
}

void lt_matmul(CudaDevice& dev, const LtMatmulDesc& desc, const LtLayout& a, const LtLayout& b,
               const LtLayout& c, const LtLayout& d, const LtOperands& operands) {
  const Heuristic h = run(dev, desc, a, b, c, d, operands);
  if (!h.found)
    fail<BackendLimitation>("cuda",
                            "cublasLtMatmulAlgoGetHeuristic: no cuBLASLt algorithm for "
                            "this matmul (epilogue ",
                            uint32_t(desc.epilogue), ", compute type ", int(desc.compute),
                            ", A type ", int(a.type), ", ", d.rows, "x", d.cols,
                            " output; heuristic status ", status_text(h.status), ")");
}

}  // namespace numr::cuda
