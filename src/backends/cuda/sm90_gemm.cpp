// The sm_90a GEMM of sm90_gemm.h: its configuration and layout, the kernel's entry point and
// setup (sm90_gemm_parts.h lists the files that write the rest), and the launch.
//
// The kernel: one CTA of 384 threads per SM. After thread 0 has initialised the mbarriers
// (and, with split tail, written the CTA's table of parts), warpgroup 0 gives registers
// back with setmaxnreg and its thread 0 runs the producer; warpgroups 1 and 2 take them
// and run the consumers. A cluster barrier after the mbarrier initialisation keeps the
// peer's copies from completing on barriers not yet initialised.
#include "backends/cuda/sm90_gemm.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <sstream>

#include "backends/cuda/allocator.h"
#include "backends/cuda/context.h"
#include "backends/cuda/driver.h"
#include "backends/cuda/launch.h"
#include "backends/cuda/matmul_plan.h"
#include "backends/cuda/module.h"
#include "backends/cuda/sm90_gemm_parts.h"
#include "numr/error.h"

namespace numr::cuda {

namespace sm90 {

Layout layout_of(const Sm90GemmConfig& config) {
  Layout l;
  l.tf32 = config.dtype == DType::F32;
  const int elem = l.tf32 ? 4 : 2;
  l.k_step = 128 / elem;
  l.box_n = 128 / elem;
  l.box_bytes = l.k_step * 128;
  l.b_bytes = l.k_step * l.tile_n * elem;
  l.stage_bytes = kABytes + l.b_bytes;
  // A stages, then B stages, then full[] and empty[]; 1 KiB more so the kernel can round
  // the dynamic shared base up to the 1024-byte alignment the 128-byte swizzle needs.
  l.barrier_offset = l.stages * l.stage_bytes;
  l.table_offset = l.barrier_offset + 2 * l.stages * 8;
  l.split_tail = config.split_tail;
  l.shared_bytes = l.table_offset + (l.split_tail ? kItemTableBytes : 0) + 1024;
  l.deferred_groups = l.tf32 ? 0 : kDeferredGroups;
  return l;
}

}  // namespace sm90

using namespace sm90;

namespace {

// The split tail's flags of one device (Sm90GemmConfig::split_tail): one u64 per CTA of a
// grid (at most one CTA per SM), in device memory that lives as long as the device, zeroed
// when made, with a sequence number new for every call, so that no call mistakes a flag an
// earlier one left for its own.
struct SplitFlags {
  uint64_t address = 0;
  uint32_t sequence = 0;
};

SplitFlags split_flags(CudaDevice& dev) {
  struct State {
    uint64_t address = 0;
    int64_t count = 0;
    uint32_t sequence = 0;
  };
  static std::mutex mu;
  static auto* states = new std::map<int, State>();  // devices live until the process ends
  std::lock_guard lock(mu);
  State& st = (*states)[dev.index()];
  const Driver& drv = driver();
  auto zero = [&] {
    check(drv.memset_d8_async(CUdeviceptr(st.address), 0, size_t(st.count) * 8, dev.stream()),
          "cuMemsetD8Async");
  };
  if (st.count == 0) {
    st.count = std::max(dev.props().sm_count, 1);
    st.address =
        uint64_t(reinterpret_cast<uintptr_t>(dev.allocator().allocate(size_t(st.count) * 8)));
    zero();
  }
  if (++st.sequence == 0) {  // wrapped: start again from cleared flags
    zero();
    st.sequence = 1;
  }
  return SplitFlags{st.address, st.sequence};
}

uint64_t address_of(const Tensor& t) {
  return uint64_t(reinterpret_cast<uintptr_t>(t.storage()->handle())) +
         uint64_t(t.offset()) * dtype_size(t.dtype());
}

}  // namespace

Sm90GemmLayout sm90_gemm_layout(const Sm90GemmConfig& config) {
  const Layout l = layout_of(config);
  return Sm90GemmLayout{.tile_n = l.tile_n,
                        .stages = l.stages,
                        .stage_bytes = l.stage_bytes,
                        .shared_bytes = l.shared_bytes};
}

// The suffixes spell the kernel's fixed choices too (tile order in groups of 16 unit rows,
// "_rcp" division by reciprocals, "_q2" one per pair, "_d5" deferred column groups), so that
// a name in the kernel cache or a profile says which kernel it is.
std::string Sm90GemmConfig::name() const {
  const Layout l = layout_of(*this);
  const bool divides = act == Activation::Gelu || act == Activation::Silu;
  return std::string("sm90_gemm_") + (l.tf32 ? "tf32_" : "bf16_") +
         std::string(activation_name(act)) + "_" + std::to_string(T::kM) + "x" +
         std::to_string(l.tile_n) + "x" + std::to_string(l.k_step) + "_s" +
         std::to_string(l.stages) + "_g" + std::to_string(kGroupRows) + (divides ? "_rcp" : "") +
         (divides && !l.tf32 ? "_q2" : "") +
         (l.deferred_groups > 0 ? "_d" + std::to_string(l.deferred_groups) : "") +
         (bias_dtype == DType::BF16 ? "_bias16" : "") + (split_tail ? "_sk" : "") +
         (cluster > 1 ? "_c" + std::to_string(cluster) : "");
}

std::string sm90_gemm_ptx(const Sm90GemmConfig& config) {
  if (!supported_activation(config.act))
    fail<BackendError>(kOp, "activation ", activation_name(config.act), " is not implemented");
  if (config.ptx_major < 8)
    fail<BackendError>(kOp, "needs PTX ISA 8.0 or newer (wgmma, setmaxnreg), not ",
                       config.ptx_major, ".", config.ptx_minor);
  if (config.cluster != 1 && config.cluster != 2)
    fail<BackendError>(kOp, "cluster size ", config.cluster, " (1 or 2 are implemented)");
  if (config.dtype != DType::BF16 && config.dtype != DType::F32)
    fail<BackendError>(kOp, "dtype ", dtype_name(config.dtype), " (BF16, or F32 as TF32)");
  const Layout layout = layout_of(config);
  if (config.bias_dtype != DType::F32 &&
      (config.bias_dtype != DType::BF16 || config.dtype != DType::BF16))
    fail<BackendError>(kOp, "bias dtype ", dtype_name(config.bias_dtype),
                       " (F32, or BF16 with BF16 operands)");
  if (config.split_tail && (layout.tf32 || config.cluster != 1))
    fail<BackendError>(kOp, "split_tail needs the BF16 kernel with clusters of 1");
  const std::string name = config.name();
  const std::string pa = name + "_tmap_a", pb = name + "_tmap_b", pd = name + "_d",
                    pbias = name + "_bias", pn = name + "_n", ptn = name + "_tiles_n",
                    pnu = name + "_num_units", pkb = name + "_k_blocks";

  Ptx p;
  Common c;
  c.l = layout;
  c.cluster = config.cluster;
  c.bias_bf16 = config.bias_dtype == DType::BF16;
  c.split_tail = config.split_tail;
  c.p_dp_units = name + "_whole_units";
  c.p_seq = name + "_sequence";
  c.p_flags = name + "_flags";
  c.p_work = name + "_workspace";
  const std::string tid = p.reg('r'), raw = p.reg('r'), up = p.reg('r'), first = p.reg('p');
  const std::string ma = p.reg('d'), mb = p.reg('d'), tmap_a = p.reg('d'), tmap_b = p.reg('d');
  c.smem = p.reg('r');
  c.bar_full = p.reg('r');
  c.bar_empty = p.reg('r');
  c.rank = p.reg('r');
  c.exit = p.label("exit");
  const std::string init_done = p.label("init_done"), consumers = p.label("consumers");

  p.op("mov.u32 ", tid, ", %tid.x");
  p.op("mov.u32 ", raw, ", sm90_smem");
  p.op("add.u32 ", up, ", ", raw, ", 1023");
  p.op("and.b32 ", c.smem, ", ", up, ", 0xFFFFFC00");
  p.op("add.u32 ", c.bar_full, ", ", c.smem, ", ", layout.barrier_offset);
  p.op("add.u32 ", c.bar_empty, ", ", c.smem, ", ", layout.barrier_offset + 8 * layout.stages);
  if (c.cluster > 1)
    p.op("mov.u32 ", c.rank, ", %cluster_ctarank");
  else
    p.op("mov.u32 ", c.rank, ", 0");
  // Generic addresses of the by-value tensor maps (grid constants in parameter space).
  p.op("mov.b64 ", ma, ", ", pa);
  p.op("cvta.param.u64 ", tmap_a, ", ", ma);
  p.op("mov.b64 ", mb, ", ", pb);
  p.op("cvta.param.u64 ", tmap_b, ", ", mb);
  const std::string d_param = p.reg('d'), bias_param = p.reg('d'), d = p.reg('d'),
                    bias = p.reg('d'), n = p.reg('r');
  c.tiles_n = p.reg('r');
  c.num_units = p.reg('r');
  c.k_blocks = p.reg('r');
  p.op("ld.param.u32 ", n, ", [", pn, "]");
  p.op("ld.param.u32 ", c.tiles_n, ", [", ptn, "]");
  p.op("ld.param.u32 ", c.num_units, ", [", pnu, "]");
  p.op("ld.param.u32 ", c.k_blocks, ", [", pkb, "]");
  p.op("setp.eq.u32 ", first, ", ", tid, ", 0");
  p.op("@!", first, " bra ", init_done);
  for (int s = 0; s < layout.stages; ++s) {
    p.op("mbarrier.init.shared::cta.b64 [", c.bar_full, "+", 8 * s, "], 1");
    // Every consumer warp (2 warpgroups of 4) of every CTA that reads this CTA's stage
    // (through multicast).
    p.op("mbarrier.init.shared::cta.b64 [", c.bar_empty, "+", 8 * s, "], ", 4 * 2 * c.cluster);
  }
  // Make the initialised barriers visible to the copy engine (async proxy) and to the
  // cluster, before any thread uses them.
  p.op("fence.mbarrier_init.release.cluster");
  p.op("fence.proxy.async.shared::cta");
  p.op("prefetch.tensormap [", tmap_a, "]");
  p.op("prefetch.tensormap [", tmap_b, "]");
  if (c.split_tail) write_item_table(p, c);
  p.place(init_done);
  if (c.cluster > 1) {
    // The peer's barriers must be initialised before this CTA's copies complete on them.
    p.op("barrier.cluster.arrive.release.aligned");
    p.op("barrier.cluster.wait.acquire.aligned");
  } else {
    p.op("bar.sync 0");
  }

  {
    const std::string wg = p.reg('r'), is_consumer = p.reg('p');
    p.op("shr.u32 ", wg, ", ", tid, ", 7");
    p.op("setp.ne.u32 ", is_consumer, ", ", wg, ", 0");
    p.op("@", is_consumer, " bra ", consumers);
  }
  // Warpgroup 0: gives registers back, then thread 0 produces and the rest leave.
  p.op("setmaxnreg.dec.sync.aligned.u32 ", kProducerRegs);
  p.op("@!", first, " bra ", c.exit);
  producer(p, c, tmap_a, tmap_b);

  p.place(consumers);
  p.op("setmaxnreg.inc.sync.aligned.u32 ", kConsumerRegs);
  p.op("ld.param.u64 ", d_param, ", [", pd, "]");
  p.op("ld.param.u64 ", bias_param, ", [", pbias, "]");
  p.op("cvta.to.global.u64 ", d, ", ", d_param);
  p.op("cvta.to.global.u64 ", bias, ", ", bias_param);
  consumer(p, c, config.act, tid, d, bias, n);

  p.place(c.exit);
  p.op("ret");

  std::ostringstream os;
  os << "// numr sm_90a GEMM: D = " << activation_name(config.act) << "(A @ B + bias), "
     << (layout.tf32 ? "F32 in and out as TF32" : "BF16 in and out")
     << ", f32 accumulation and bias\n"
     << ".version " << config.ptx_major << "." << config.ptx_minor << "\n"
     << ".target sm_90a\n"
     << ".address_size 64\n\n"
     << ".extern .shared .align 1024 .b8 sm90_smem[];\n\n"
     << ".visible .entry " << name << "(\n"
     << "    .param .align 64 .b8 " << pa << "[128],\n"
     << "    .param .align 64 .b8 " << pb << "[128],\n"
     << "    .param .u64 " << pd << ",\n"
     << "    .param .u64 " << pbias << ",\n"
     << "    .param .u32 " << pn << ",\n"
     << "    .param .u32 " << ptn << ",\n"
     << "    .param .u32 " << pnu << ",\n"
     << "    .param .u32 " << pkb;
  if (c.split_tail)
    os << ",\n    .param .u32 " << c.p_dp_units << ",\n    .param .u32 " << c.p_seq
       << ",\n    .param .u64 " << c.p_flags << ",\n    .param .u64 " << c.p_work;
  os << ")\n"
     << "    .maxntid " << T::kThreads << ", 1, 1\n"
     << "    .minnctapersm 1\n";
  if (c.cluster > 1) os << "    .reqnctapercluster " << c.cluster << ", 1, 1\n";
  os << "{\n" << p.declarations() << "    .reg .f32 %acc<128>;\n";
  if (layout.tf32) os << "    .reg .b32 %fa<64>;\n";
  if (layout.deferred_groups > 0)
    os << "    .reg .f32 %pv<" << 16 * layout.deferred_groups << ">;\n";
  os << "\n" << p.body() << "}\n";
  return os.str();
}

bool sm90_gemm_supported(const CudaDevice& dev, std::string* reason) {
  const DeviceProperties& props = dev.props();
  std::string why;
  if (props.cc_major != 9 || props.cc_minor != 0)
    why = "needs compute capability 9.0 (sm_90a), " + props.name + " has " +
          std::to_string(props.cc_major) + "." + std::to_string(props.cc_minor);
  else if (props.ptx_isa_major < 8)
    why = "the driver compiles PTX ISA up to " + props.ptx_version() + ", wgmma needs 8.0";
  else if (!driver().tensor_map_encode_tiled)
    why = "the driver has no cuTensorMapEncodeTiled";
  if (reason) *reason = why;
  return why.empty();
}

int sm90_gemm_k_step(DType dtype) { return dtype == DType::F32 ? 32 : T::kK; }

bool sm90_gemm_shape_ok(int64_t m, int64_t n, int64_t k, DType dtype) {
  return m > 0 && n > 0 && k > 0 && m % T::kM == 0 && n % T::kN == 0 &&
         k % sm90_gemm_k_step(dtype) == 0 && m / T::kM * (n / 128) <= int64_t(INT32_MAX) &&
         n <= int64_t(UINT32_MAX) && m <= int64_t(INT32_MAX) && k <= int64_t(INT32_MAX);
}

void sm90_gemm_tensor_maps(const Sm90GemmArgs& args, CUtensorMap& map_a, CUtensorMap& map_b) {
  const Driver& drv = driver();
  if (!drv.tensor_map_encode_tiled)
    fail<BackendUnavailable>(kOp, "the driver has no cuTensorMapEncodeTiled");
  const uint32_t unit[2] = {1, 1};
  const bool f32 = args.dtype == DType::F32;
  const uint64_t elem = f32 ? 4 : 2;
  auto encode = [&](CUtensorMap& map, uint64_t addr, uint64_t inner, uint64_t outer,
                    uint32_t box_inner, uint32_t box_outer, const char* what) {
    const uint64_t dims[2] = {inner, outer};
    const uint64_t strides[1] = {inner * elem};  // bytes between rows
    const uint32_t box[2] = {box_inner, box_outer};
    const CUresult r = drv.tensor_map_encode_tiled(
        &map, f32 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2,
        reinterpret_cast<void*>(uintptr_t(addr)), dims, strides, box, unit,
        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
      fail<BackendError>(kOp, "cuTensorMapEncodeTiled (", what, ": dims {", inner, ", ", outer,
                         "}, box {", box_inner, ", ", box_outer, "}): ", error_text(drv, r));
  };
  // One 128-byte row per box row: 64 BF16 or 32 F32 (the k step, and B's box width).
  const uint32_t row = uint32_t(128 / elem);
  encode(map_a, args.a, uint64_t(args.k), uint64_t(args.m), row, T::kM, "A");
  encode(map_b, args.b, uint64_t(args.n), uint64_t(args.k), row, row, "B");
}

Sm90GemmConfig sm90_gemm_default_config(Activation act, int cluster, DType dtype) {
  return Sm90GemmConfig{.act = act,
                        .cluster = cluster,
                        .dtype = dtype,
                        .split_tail = dtype == DType::BF16 && cluster == 1};
}

int64_t sm90_gemm_split_tiles(int64_t units, int64_t grid, int64_t k_blocks) {
  if (grid <= 0 || units / grid < 2 || k_blocks < 4) return 0;
  const int64_t split = units % grid;
  return 2 * split <= grid ? split : 0;
}

int sm90_gemm_cluster(const Sm90GemmArgs& args) {
  if (args.cluster == 1 || args.cluster == 2) return args.cluster;
  return 1;
}

void sm90_gemm_bias_act(CudaDevice& dev, const Sm90GemmArgs& args) {
  std::string why;
  if (!sm90_gemm_supported(dev, &why)) fail<BackendUnavailable>(kOp, why);
  if (!supported_activation(args.act))
    fail<BackendLimitation>(kOp, "activation ", activation_name(args.act), " is not implemented");
  if (args.dtype != DType::BF16 && args.dtype != DType::F32)
    fail<BackendLimitation>(kOp, "dtype ", dtype_name(args.dtype), " (BF16, or F32 as TF32)");
  if (!sm90_gemm_shape_ok(args.m, args.n, args.k, args.dtype))
    fail<BackendLimitation>(kOp, "[", args.m, ", ", args.k, "] @ [", args.k, ", ", args.n,
                            "]: needs m % ", T::kM, " == 0, n % ", T::kN, " == 0, k % ",
                            sm90_gemm_k_step(args.dtype), " == 0");
  const int cluster = sm90_gemm_cluster(args);
  if (args.cluster < 0 || args.cluster > 2 || args.m % (cluster * T::kM) != 0)
    fail<BackendLimitation>(kOp, "cluster ", args.cluster, " with m = ", args.m,
                            " (clusters of 2 need m % ", 2 * T::kM, " == 0)");
  for (const uint64_t addr : {args.a, args.b, args.bias, args.d})
    if (addr % 16 != 0) fail<InvalidArgument>(kOp, "operand addresses must be 16-byte aligned");

  CUtensorMap map_a{}, map_b{};
  sm90_gemm_tensor_maps(args, map_a, map_b);

  if (args.bias_dtype != DType::F32 &&
      (args.bias_dtype != DType::BF16 || args.dtype != DType::BF16))
    fail<BackendLimitation>(kOp, "bias dtype ", dtype_name(args.bias_dtype), " with ",
                            dtype_name(args.dtype), " operands (F32, or BF16 with BF16)");
  Sm90GemmConfig config = sm90_gemm_default_config(args.act, cluster, args.dtype);
  config.bias_dtype = args.bias_dtype;
  if (args.kernel) {
    config = *args.kernel;
    if (config.act != args.act || config.cluster != cluster || config.dtype != args.dtype ||
        config.bias_dtype != args.bias_dtype)
      fail<InvalidArgument>(kOp, "the kernel's activation, cluster, dtype and bias dtype (",
                            activation_name(config.act), ", ", config.cluster, ", ",
                            dtype_name(config.dtype), ", ", dtype_name(config.bias_dtype),
                            ") differ from the call's (", activation_name(args.act), ", ", cluster,
                            ", ", dtype_name(args.dtype), ", ", dtype_name(args.bias_dtype), ")");
  }
  config.ptx_major = dev.props().ptx_isa_major;
  config.ptx_minor = dev.props().ptx_isa_minor;

  // Work units: `cluster` tiles stacked along M (sm90_gemm.h). Tile and k step are the same
  // with split tail or without.
  const Layout shape = layout_of(config);
  const uint32_t tiles_n = uint32_t(args.n / shape.tile_n);
  const uint32_t units = uint32_t(args.m / (T::kM * cluster)) * tiles_n;
  const uint32_t k_blocks = uint32_t(args.k / shape.k_step);
  const uint32_t n = uint32_t(args.n);
  int64_t clusters = std::min<int64_t>(units, dev.props().sm_count / cluster);
  if (args.max_ctas > 0)
    clusters = std::min<int64_t>(clusters, std::max(1, args.max_ctas / cluster));
  // A call that splits no tile runs the kernel without split tail, whose item loop is not
  // free.
  const int64_t split =
      config.split_tail ? sm90_gemm_split_tiles(units, clusters, k_blocks) : int64_t(0);
  if (split == 0) config.split_tail = false;

  const Layout layout = layout_of(config);
  const std::string name = config.name();
  const CUfunction f = dev.kernels().get_or_build(name + "_isa" + dev.props().ptx_version(), [&] {
    return GeneratedKernel{name, sm90_gemm_ptx(config)};
  });
  const LaunchConfig cfg{.grid = {unsigned(clusters * cluster), 1, 1},
                         .block = {unsigned(T::kThreads), 1, 1},
                         .shared_bytes = unsigned(layout.shared_bytes)};
  if (!config.split_tail) {
    launch_kernel(dev, f, cfg, name, map_a, map_b, args.d, args.bias, n, tiles_n, units, k_blocks);
    return;
  }
  const uint32_t whole = units - uint32_t(split);
  const SplitFlags flags = split_flags(dev);
  const DeviceTemp work(dev, size_t(clusters * kSplitTileBytes));  // a slot per CTA
  const uint64_t work_addr = uint64_t(reinterpret_cast<uintptr_t>(work.get()));
  launch_kernel(dev, f, cfg, name, map_a, map_b, args.d, args.bias, n, tiles_n, units, k_blocks,
                whole, flags.sequence, flags.address, work_addr);
}

Tensor sm90_gemm_bias_act(const Tensor& a, const Tensor& b, const Tensor& bias, Activation act,
                          int max_ctas, int cluster, const Sm90GemmConfig* kernel) {
  if (a.dim() != 2 || b.dim() != 2 || bias.dim() != 1)
    fail<InvalidArgument>(kOp, "needs a [m, k], b [k, n] and bias [n]");
  const DType dt = a.dtype();
  if ((dt != DType::BF16 && dt != DType::F32) || b.dtype() != dt ||
      (bias.dtype() != DType::F32 && (bias.dtype() != DType::BF16 || dt != DType::BF16)))
    fail<DTypeMismatch>(kOp,
                        "needs a and b both BF16 or both F32, and an F32 bias (or BF16 "
                        "with BF16 operands)");
  const Device dev = a.device();
  if (dev.type != DeviceType::Cuda || b.device() != dev || bias.device() != dev)
    fail<DeviceMismatch>(kOp, "needs every operand on one CUDA device");
  if (!a.is_contiguous() || !b.is_contiguous() || !bias.is_contiguous())
    fail<NotContiguous>(kOp, "needs contiguous operands");
  const int64_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
  if (b.shape()[0] != k || bias.shape()[0] != n)
    fail<ShapeMismatch>(kOp, "[", m, ", ", k, "] @ [", b.shape()[0], ", ", n, "] + [",
                        bias.shape()[0], "]");
  Tensor out = Tensor::empty({m, n}, dt, dev);
  sm90_gemm_bias_act(cuda_device(dev.index), Sm90GemmArgs{.a = address_of(a),
                                                          .b = address_of(b),
                                                          .bias = address_of(bias),
                                                          .d = address_of(out),
                                                          .m = m,
                                                          .n = n,
                                                          .k = k,
                                                          .act = act,
                                                          .max_ctas = max_ctas,
                                                          .cluster = cluster,
                                                          .kernel = kernel,
                                                          .dtype = dt,
                                                          .bias_dtype = bias.dtype()});
  return out;
}

}  // namespace numr::cuda
