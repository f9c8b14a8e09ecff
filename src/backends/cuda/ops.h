// The CUDA kernels of each op family, one free function per family, called by CudaBackend
// with the device it serves (make it current is already done; work goes on dev.stream()).
// Each lives in its own file; families not written yet are in pending_ops.cpp and throw
// BackendLimitation. The call structs are documented in core/backend.h.
#pragma once

#include "core/backend.h"

namespace numr::cuda {

class CudaDevice;

void run_elementwise(CudaDevice& dev, const ElementwiseCall& call);
void run_reduce(CudaDevice& dev, const ReduceCall& call);
void run_along_axis(CudaDevice& dev, const AxisCall& call);
void run_matmul(CudaDevice& dev, const MatmulCall& call);
void run_matmul_epilogue(CudaDevice& dev, const GemmEpilogueCall& call);
void run_bias_activation_bwd(CudaDevice& dev, const BiasActBwdCall& call);
void run_row_norm(CudaDevice& dev, const RowNormCall& call);
void run_row_norm_bwd(CudaDevice& dev, const RowNormBwdCall& call);
void run_index_gather(CudaDevice& dev, const GatherCall& call);
void run_index_scatter(CudaDevice& dev, const ScatterCall& call);
void run_attention(CudaDevice& dev, const AttentionCall& call);
void run_attention_bwd(CudaDevice& dev, const AttentionBwdCall& call);
// Any strides and dtypes. (CudaBackend::copy itself handles a contiguous copy between
// equal dtypes with one cuMemcpyDtoDAsync and never calls this for it.)
void run_copy(CudaDevice& dev, const CopyCall& call);
void run_fill(CudaDevice& dev, const FillCall& call);
void run_sequence(CudaDevice& dev, const SequenceCall& call);
void run_random(CudaDevice& dev, const RandomCall& call);
void run_sort_rows(CudaDevice& dev, const SortCall& call);
void run_search_sorted(CudaDevice& dev, const SearchSortedCall& call);

}  // namespace numr::cuda
