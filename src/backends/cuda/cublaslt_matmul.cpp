#include "backends/cuda/cublaslt_matmul.h"

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

class Preference {
 public:
  explicit Preference(uint64_t workspace_bytes) {
    const CublasLt& lt = cublaslt();
    check(lt.matmul_preference_create(&pref_), "cublasLtMatmulPreferenceCreate");
    check(lt.matmul_preference_set_attribute(pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                             &workspace_bytes, sizeof(workspace_bytes)),
          "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)");
  }
  ~Preference() {
    if (pref_) cublaslt().matmul_preference_destroy(pref_);
  }
  Preference(const Preference&) = delete;
  Preference& operator=(const Preference&) = delete;
  cublasLtMatmulPreference_t get() const { return pref_; }

 private:
  cublasLtMatmulPreference_t pref_ = nullptr;
};

}  // namespace

void lt_matmul(CudaDevice& dev, const LtMatmulDesc& desc, const LtLayout& a, const LtLayout& b,
               const LtLayout& c, const LtLayout& d, const LtOperands& operands) {
  CublasLtHandle& h = dev.cublaslt();
  const CublasLt& lt = cublaslt();
  dev.make_current();
  const Desc op(desc);
  const Layout la(a), lb(b), lc(c), ld(d);
  const Preference pref(h.workspace_bytes);
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t hs = lt.matmul_algo_get_heuristic(
      h.handle, op.get(), la.get(), lb.get(), lc.get(), ld.get(), pref.get(), 1, &result, &found);
  if (hs == CUBLAS_STATUS_NOT_SUPPORTED || (hs == CUBLAS_STATUS_SUCCESS && found == 0))
    fail<BackendLimitation>("cuda",
                            "cublasLtMatmulAlgoGetHeuristic: no cuBLASLt algorithm for "
                            "this matmul (epilogue ",
                            uint32_t(desc.epilogue), ", compute type ", int(desc.compute),
                            ", A type ", int(a.type), ", ", d.rows, "x", d.cols, " output)");
  check(hs, "cublasLtMatmulAlgoGetHeuristic");
  check(lt.matmul(h.handle, op.get(), operands.alpha, operands.a, la.get(), operands.b, lb.get(),
                  operands.beta, operands.c, lc.get(), operands.d, ld.get(), &result.algo,
                  h.workspace, h.workspace_bytes, dev.stream()),
        "cublasLtMatmul");
}

}  // namespace numr::cuda
