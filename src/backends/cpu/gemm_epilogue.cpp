// GEMM epilogues on the CPU. Every path finishes an output block while it is still in
// cache, never in a second pass over the whole output:
// - F32, and BF16 on CPUs with AVX512-BF16 but without AMX, with GELU, SiLU, sigmoid or
//   tanh: numr's own GEMM (kernels/own_gemm.cpp), whose epilogue runs on the accumulators;
//   oneDNN's eltwise post-op costs these more than numr's activation. oneDNN's main loop is
//   a little faster, so it keeps the cheap activations. With AMX, oneDNN's BF16 kernels
//   are several times faster than any AVX-512 loop, so BF16 goes to oneDNN.
// - F32 and BF16 products large enough for oneDNN (see matmul.cpp) run oneDNN's matmul
//   primitive with the bias, an eltwise post-op for the activation and a binary-add
//   post-op for the residual, all applied to the accumulators in registers.
// - When the pre-activation must be stored too, and for F16 (widened to f32, as in
//   matmul.cpp), oneDNN writes each block's f32 product to a per-thread stage of at most
//   kStageBytes (or straight into an f32 `pre`), and the epilogue kernel
//   (kernels().epilogue_rows) finishes the block from there.
// - F64 and small products: the BLAS (through cpu::matmul) computes blocks of rows of at
//   most kStageBytes, and the pool finishes each block before the next is computed.
// As in onednn_matmul.cpp, a large product runs as one primitive on an OpenMP team
// (gemm_team_threads); below that numr's pool splits the work and oneDNN runs
// single-threaded per block, row blocks of one product sharing one packed b when it is
// large (onednn_packed_b.h).
#include "backends/cpu/gemm_epilogue.h"

#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "backends/cpu/gemm_support.h"
#include "backends/cpu/kernels/kernels.h"
#include "backends/cpu/matmul.h"
#include "backends/cpu/onednn_matmul.h"
#include "backends/cpu/onednn_packed_b.h"
#include "core/thread_pool.h"
#include "numr/error.h"

namespace numr::cpu {
namespace {

using dnnl::memory;

constexpr const char* kOp = "matmul_bias_activation";
using Buffer = ScratchBuffer;

// A staged block's f32 product stays within this, so it is still in L2/L3 when finished.
constexpr int64_t kStageBytes = int64_t(2) << 20;
// The same for a band of rows run on an OpenMP team (every thread's share of it); tests
// set less (set_team_stage_bytes_for_testing).
constexpr int64_t kTeamStageBytes = int64_t(32) << 20;
std::atomic<int64_t> g_team_stage_bytes{kTeamStageBytes};

struct ThreadBuffers {
  Buffer a{kOp}, b{kOp}, packed_b{kOp}, stage{kOp}, scratchpad{kOp};
  void trim() {
    a.trim();
    b.trim();
    packed_b.trim();
    stage.trim();
    scratchpad.trim();
  }
};
ThreadBuffers& thread_buffers() {
  thread_local ThreadBuffers t;
  return t;
}

char* at(const TensorRef& r, int64_t elements) {
  return static_cast<char*>(r.base) + (r.offset + elements) * int64_t(dtype_size(r.dtype));
}

// The problem after the front end: out [nb, m, n] (nb = 1 for 2-D) contiguous, a and b
// with one optional batch dim whose stride is 0 where shared.
struct Problem {
  int64_t nb = 1, m = 0, n = 0, k = 0;
};

Problem problem_of(const GemmEpilogueCall& c) {
  const Shape& s = c.out.shape;
  const size_t nd = s.size();
  Problem p;
  p.nb = nd == 3 ? s[0] : 1;
  p.m = s[nd - 2];
  p.n = s[nd - 1];
  p.k = c.a.shape[nd - 1];
  return p;
}

// An operand as a batch of matrices: element (i, r, c) at data + i*bs + r*rs + c*cs.
struct Operand {
  const char* data = nullptr;
  int64_t bs = 0, rows = 0, cols = 0, rs = 0, cs = 0;
  DType dtype = DType::F32;
};

// One of the rows/cols strides 1 and the other at least the extent of the unit-stride dim,
// with strides along dims of length 1 set to what a dense matrix would have.
bool normalize_matrix(int64_t rows, int64_t cols, int64_t& rs, int64_t& cs) {
  if (cols == 1) cs = 1;
  if (rows == 1) rs = cs == 1 ? cols : 1;
  return (cs == 1 && rs >= std::max<int64_t>(cols, 1)) ||
         (rs == 1 && cs >= std::max<int64_t>(rows, 1));
}

// The operand in dtype `want`, described in place when oneDNN (or the kernels) can read it
// as it is, else copied into `buffer` as a dense batch (a shared matrix copied once).
// A left operand is never left shared across a batch (oneDNN wants the batch on one side).
// With unit_cols, an operand whose columns are not adjacent is copied too.
Operand prepare(const TensorRef& r, int64_t nb, DType want, Buffer& buffer, bool may_share,
                bool unit_cols = false) {
  const size_t nd = r.shape.size();
  Operand op;
  op.rows = r.shape[nd - 2];
  op.cols = r.shape[nd - 1];
  op.rs = r.strides[nd - 2];
  op.cs = r.strides[nd - 1];
  op.bs = nd == 3 ? r.strides[0] : 0;
  op.dtype = want;
  if (nb == 1) op.bs = 0;
  bool direct = r.dtype == want && op.bs >= 0 && (may_share || op.bs != 0 || nb == 1) &&
                normalize_matrix(op.rows, op.cols, op.rs, op.cs) && (!unit_cols || op.cs == 1);
  if (direct) {
    op.data = static_cast<const char*>(r.base) + r.offset * int64_t(dtype_size(r.dtype));
    return op;
  }
  const bool shared = op.bs == 0 && may_share;
  TensorRef src;
  src.base = r.base;
  src.offset = r.offset;
  src.dtype = r.dtype;
  src.shape = {shared ? 1 : nb, op.rows, op.cols};
  src.strides = {shared || nd < 3 ? 0 : r.strides[0], r.strides[nd - 2], r.strides[nd - 1]};
  TensorRef dst;
  dst.dtype = want;
  dst.shape = src.shape;
  dst.strides = contiguous_strides(dst.shape);
  dst.base = buffer.get(size_t(std::max<int64_t>(1, shape_numel(dst.shape))) * dtype_size(want));
  kernels().copy(CopyCall{src, dst});
  op.data = static_cast<const char*>(dst.base);
  op.bs = shared ? 0 : op.rows * op.cols;
  op.rs = op.cols;
  op.cs = 1;
  normalize_matrix(op.rows, op.cols, op.rs, op.cs);
  return op;
}

// What oneDNN does in a block and what the epilogue kernel does after it.
struct Mode {
  bool staged = false;        // oneDNN writes an f32 product that the kernel finishes
  bool stage_is_pre = false;  // ... straight into pre (F32 with a pre-activation)
  bool dnnl_bias = false, dnnl_act = false, dnnl_res = false;
};

struct Entry {
  std::unique_ptr<dnnl::matmul> primitive;
  bool fast = false;      // not oneDNN's scalar reference implementation
  bool b_packed = false;  // made for the layout oneDNN picked for b (PackedB)
  memory::desc a, b, bias, dst, res, scratchpad;
  int res_arg = 0;
};

using Key = std::vector<int64_t>;

class PrimitiveCache {
 public:
  template <class Make>
  const Entry& get(const Key& key, Make&& make) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(key);
    if (it != map_.end()) return *it->second;
    if (map_.size() >= kMaxEntries) map_.clear();  // bounded; callers hold no references
    return *map_.emplace(key, make()).first->second;
  }

 private:
  static constexpr size_t kMaxEntries = 256;
  std::mutex mu_;
  std::map<Key, std::unique_ptr<Entry>> map_;
};

PrimitiveCache& primitive_cache() {
  static PrimitiveCache cache;
  return cache;
}

dnnl::algorithm eltwise_of(Activation act) {
  switch (act) {
    case Activation::Relu: return dnnl::algorithm::eltwise_relu;
    case Activation::Gelu: return dnnl::algorithm::eltwise_gelu_tanh;
    case Activation::Silu: return dnnl::algorithm::eltwise_swish;  // x * sigmoid(1 * x)
    case Activation::Sigmoid: return dnnl::algorithm::eltwise_logistic;
    case Activation::Tanh: return dnnl::algorithm::eltwise_tanh;
    case Activation::None: break;
  }
  return dnnl::algorithm::undef;
}

// The oneDNN path. Returns false, having written nothing, when oneDNN has only its
// reference kernel for this problem.
class OnednnEpilogue {
 public:
  OnednnEpilogue(const GemmEpilogueCall& call, const Mode& mode, const Operand& a, const Operand& b,
                 const Problem& p)
      : c_(call), mode_(mode), a_(a), b_(b), p_(p) {
    mdt_ = a.dtype == DType::BF16 ? memory::data_type::bf16 : memory::data_type::f32;
    // One matrix for every item and a stack of row-major items: one tall product.
    if (p_.nb > 1 && b_.bs == 0 && a_.cs == 1 && a_.bs == p_.m * a_.rs) {
      p_.m *= p_.nb;
      p_.nb = 1;
      a_.bs = 0;
    }
  }

  bool run() {
    const int64_t m = p_.m, n = p_.n, nb = p_.nb;
    const double total = double(nb) * double(m) * double(n) * double(p_.k);
    if (const int team = gemm_team_threads(total); team > 0) return run_team(team);
    int64_t tasks = ThreadPool::instance().size();
    if (total < kMinMacsPerTask * 2) tasks = 1;
    tasks = std::max<int64_t>(1, std::min<int64_t>(tasks, int64_t(total / kMinMacsPerTask)));
    if (nb >= 2 * tasks || (nb >= tasks && m * n < 64 * 64))
      split_ = Split::Batch;
    else if (n > m)
      split_ = Split::Cols;
    const int64_t extent = split_ == Split::Batch ? nb : split_ == Split::Rows ? m : n;
    tasks = std::min(tasks, extent);
    const int64_t align = split_ == Split::Batch ? 1 : 16;
    per_ = ((extent + tasks - 1) / tasks + align - 1) / align * align;
    tasks = (extent + per_ - 1) / per_;
    extent_ = extent;
    step_ = per_;
    if (mode_.staged && !mode_.stage_is_pre) {
      // Bytes of stage per unit of the split extent (an item, a row or a column).
      const int64_t unit = (split_ == Split::Batch  ? p_.m * p_.n
                            : split_ == Split::Rows ? p_.nb * p_.n
                                                    : p_.nb * p_.m) *
                           int64_t(sizeof(float));
      step_ = std::max<int64_t>(align, kStageBytes / std::max<int64_t>(unit, 1) / align * align);
    }
    // Row blocks of one product that all read the whole of b: b is packed once (PackedB).
    want_packed_b_ = split_ == Split::Rows && p_.nb == 1 &&
                     PackedB::worth_it((tasks - 1) + (per_ + step_ - 1) / step_,
                                       p_.k * p_.n * int64_t(dtype_size(a_.dtype)));

    OmpThreads omp_threads(1);
    try {
      if (!run_task(0, false)) return false;
      if (tasks == 1) {
        run_task(0, true);
      } else {
        ThreadPool::instance().parallel_for(tasks, 1, [&](int64_t first, int64_t last) {
          const OmpThreads single(1);
          for (int64_t t = first; t < last; ++t) run_task(t, true);
          thread_buffers().stage.trim();
        });
      }
    } catch (const dnnl::error& e) {
      fail<BackendError>(kOp, "oneDNN: ", e.what());
    }
    return true;
  }

 private:
  enum class Split { Batch, Rows, Cols };

  // The whole product as one primitive on an OpenMP team of `team` threads
  // (gemm_team_threads), b packed by the team when large; a product staged in f32 goes in
  // bands of rows of at most kTeamStageBytes (one item: the whole batch otherwise), each
  // finished in parallel before the next band runs.
  bool run_team(int team) {
    ThreadPool::instance().park();
    team_ = true;
    split_ = Split::Rows;
    per_ = step_ = extent_ = p_.m;
    if (mode_.staged && !mode_.stage_is_pre && p_.nb == 1) {
      const int64_t rows = g_team_stage_bytes.load(std::memory_order_relaxed) /
                           (std::max<int64_t>(p_.n, 1) * int64_t(sizeof(float)));
      step_ = std::max<int64_t>(16 * team, rows / 16 * 16);
    }
    want_packed_b_ =
        p_.nb == 1 && PackedB::worth_it(team, p_.k * p_.n * int64_t(dtype_size(a_.dtype)));
    OmpThreads omp_threads(team);
    try {
      if (!block(0, p_.nb, 0, std::min(p_.m, step_), 0, p_.n, false)) return false;
      for (int64_t r0 = 0; r0 < p_.m; r0 += step_)
        block(0, p_.nb, r0, std::min(p_.m, r0 + step_), 0, p_.n, true);
      count_gemm_team_run();
    } catch (const dnnl::error& e) {
      fail<BackendError>(kOp, "oneDNN: ", e.what());
    }
    thread_buffers().stage.trim();
    return true;
  }

  // Task t's share, in blocks whose staged product fits kStageBytes.
  bool run_task(int64_t t, bool execute) {
    const int64_t lo = t * per_, hi = std::min(extent_, lo + per_);
    for (int64_t s = lo; s < hi; s += step_) {
      const int64_t e = std::min(hi, s + step_);
      bool ok = false;
      switch (split_) {
        case Split::Batch: ok = block(s, e, 0, p_.m, 0, p_.n, execute); break;
        case Split::Rows: ok = block(0, p_.nb, s, e, 0, p_.n, execute); break;
        case Split::Cols: ok = block(0, p_.nb, 0, p_.m, s, e, execute); break;
      }
      if (!execute) return ok;
    }
    return true;
  }

  // An operand's block as oneDNN sees it: nbk items (1 where shared) of rows x cols.
  memory::desc operand_desc(const Operand& op, int64_t nbk, int64_t rows, int64_t cols) const {
    const int64_t dense = op.cs == 1 ? rows * op.rs : cols * op.cs;
    const int64_t items = op.bs == 0 ? 1 : nbk;
    return memory::desc({items, rows, cols}, mdt_, {items == 1 ? dense : op.bs, op.rs, op.cs});
  }
  // b's block as given; 2-D for a primitive that packs it (PackedB::two_d).
  memory::desc plain_b_desc(int64_t nbk, int64_t cb, bool two_d) const {
    const memory::desc d = operand_desc(b_, nbk, p_.k, cb);
    return two_d ? PackedB::two_d(d) : d;
  }

  // The primitive for a block of nbk items, mb rows and cb columns (see block()); with
  // pack_b (one item), one made with 2-D descriptors that picks b's layout.
  const Entry& entry(int64_t nbk, int64_t mb, int64_t cb, bool pack_b) {
    const int64_t k = p_.k, n = p_.n;
    const int64_t item = p_.m * n;  // out's batch stride (folded: one item)
    const bool to_stage = mode_.staged && !mode_.stage_is_pre;
    // oneDNN blocks a product for the thread count set when its primitive is made.
    const Key key = {int64_t(mdt_),
                     nbk,
                     mb,
                     cb,
                     k,
                     a_.bs,
                     a_.rs,
                     a_.cs,
                     b_.bs,
                     b_.rs,
                     b_.cs,
                     n,
                     item,
                     int64_t(c_.act),
                     mode_.staged,
                     mode_.stage_is_pre,
                     mode_.dnnl_bias,
                     mode_.dnnl_act,
                     mode_.dnnl_res,
                     pack_b,
                     omp_get_max_threads()};
    return primitive_cache().get(key, [&] {
      auto e = std::make_unique<Entry>();
      e->a = operand_desc(a_, nbk, mb, k);
      e->b = plain_b_desc(nbk, cb, false);
      const memory::dims out_strides = {nbk == 1 ? mb * n : item, n, 1};
      e->dst = to_stage ? memory::desc({nbk, mb, cb}, memory::data_type::f32, {mb * cb, cb, 1})
                        : memory::desc({nbk, mb, cb}, mode_.staged ? memory::data_type::f32 : mdt_,
                                       out_strides);
      if (mode_.dnnl_bias) e->bias = memory::desc({1, 1, cb}, mdt_, {cb, cb, 1});
      if (pack_b) {
        e->b_packed = true;
        e->a = PackedB::two_d(e->a);
        e->b = PackedB::any_layout(plain_b_desc(nbk, cb, true));
        e->dst = PackedB::two_d(e->dst);
        if (mode_.dnnl_bias) e->bias = PackedB::two_d(e->bias);
      }
      dnnl::post_ops ops;
      int n_ops = 0;
      if (mode_.dnnl_act && c_.act != Activation::None) {
        // swish's alpha is the sigmoid's scale (1 for SiLU); relu's is the negative slope.
        const float alpha = c_.act == Activation::Silu ? 1.f : 0.f;
        ops.append_eltwise(1.f, eltwise_of(c_.act), alpha, 0.f);
        ++n_ops;
      }
      if (mode_.dnnl_res) {
        e->res = memory::desc({nbk, mb, cb}, mdt_, out_strides);
        if (pack_b) e->res = PackedB::two_d(e->res);
        ops.append_binary(dnnl::algorithm::binary_add, e->res);
        e->res_arg = DNNL_ARG_ATTR_MULTIPLE_POST_OP(n_ops) | DNNL_ARG_SRC_1;
        ++n_ops;
      }
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      if (n_ops) attr.set_post_ops(ops);
      const dnnl::matmul::desc desc = mode_.dnnl_bias
                                          ? dnnl::matmul::desc(e->a, e->b, e->bias, e->dst)
                                          : dnnl::matmul::desc(e->a, e->b, e->dst);
      try {
        dnnl::matmul::primitive_desc pd(desc, attr, onednn_engine());
        e->fast = std::strncmp(pd.impl_info_str(), "ref", 3) != 0;
        e->primitive = std::make_unique<dnnl::matmul>(pd);
        e->scratchpad = pd.scratchpad_desc();
        e->b = pd.weights_desc();
      } catch (const dnnl::error&) {
        // No implementation for this combination: the caller takes another mode.
      }
      return e;
    });
  }

  // Items [b0, b1), rows [r0, r1), columns [c0, c1) of out.
  bool block(int64_t b0, int64_t b1, int64_t r0, int64_t r1, int64_t c0, int64_t c1, bool execute) {
    const int64_t nbk = b1 - b0, mb = r1 - r0, cb = c1 - c0, n = p_.n;
    const int64_t item = p_.m * n;  // out's batch stride (folded: one item)
    const bool to_stage = mode_.staged && !mode_.stage_is_pre;
    const Entry* found = &entry(nbk, mb, cb, want_packed_b_);
    if (!execute) {
      // The probe of the first block, on the calling thread before any block runs.
      if (found->fast && found->b_packed)
        packed_b_.pack(plain_b_desc(1, cb, true), b_.data, found->b, thread_buffers().packed_b);
      return found->fast;
    }
    // A block whose primitive wants b in another layout than the packed one (a ragged last
    // block may) takes b as it is.
    const bool use_packed = found->b_packed && packed_b_.fits(found->b);
    if (found->b_packed && !use_packed && !(found->b == plain_b_desc(nbk, cb, true)))
      found = &entry(nbk, mb, cb, false);
    const Entry& entry = *found;
    if (!entry.primitive) fail<BackendError>(kOp, "oneDNN has no matmul for a block of this shape");

    dnnl::engine& engine = onednn_engine();
    thread_local dnnl::stream stream(engine);
    ThreadBuffers& tb = thread_buffers();
    const int64_t es = int64_t(dtype_size(a_.dtype));
    const int64_t out_off = b0 * item + r0 * n + c0;  // in out's (folded) elements
    void* stage = nullptr;
    int64_t stage_ld = n;
    if (to_stage) {
      stage = tb.stage.get(size_t(nbk * mb * cb) * sizeof(float));
      stage_ld = cb;
    } else if (mode_.stage_is_pre) {
      stage = at(c_.pre, out_off);
    }
    memory a_mem(entry.a, engine, const_cast<char*>(a_.data + (b0 * a_.bs + r0 * a_.rs) * es));
    memory b_mem(entry.b, engine,
                 use_packed ? packed_b_.data()
                            : const_cast<char*>(b_.data + (b0 * b_.bs + c0 * b_.cs) * es));
    memory d_mem(entry.dst, engine, stage ? stage : at(c_.out, out_off));
    memory s_mem(entry.scratchpad, engine,
                 tb.scratchpad.get(std::max<size_t>(entry.scratchpad.get_size(), 1)));
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, a_mem},
                                            {DNNL_ARG_WEIGHTS, b_mem},
                                            {DNNL_ARG_DST, d_mem},
                                            {DNNL_ARG_SCRATCHPAD, s_mem}};
    if (mode_.dnnl_bias) args.emplace(DNNL_ARG_BIAS, memory(entry.bias, engine, at(c_.bias, c0)));
    if (mode_.dnnl_res)
      args.emplace(entry.res_arg, memory(entry.res, engine, at(c_.residual, out_off)));
    entry.primitive->execute(stream, args);
    stream.wait();
    tb.scratchpad.trim();
    if (!mode_.staged) return true;

    // Finish the block's rows while they are in cache.
    EpilogueRows er;
    er.dtype = c_.out.dtype;
    er.act = c_.act;
    er.rows = mb;
    er.n = cb;
    er.src_ld = stage_ld;
    er.out_ld = er.res_ld = er.pre_ld = n;
    er.bias = mode_.dnnl_bias ? nullptr : at(c_.bias, c0);
    const int64_t src_item = to_stage ? mb * cb : item;  // stage elements per item
    const int64_t src_es = to_stage ? int64_t(sizeof(float)) : es;
    // Rows [q0, q1) of the block's nbk * mb rows, item by item.
    auto finish = [&](int64_t q0, int64_t q1) {
      EpilogueRows r = er;
      while (q0 < q1) {
        const int64_t i = q0 / mb, row = q0 % mb, rows = std::min(q1 - q0, mb - row);
        const int64_t off = out_off + i * item + row * n;
        r.rows = rows;
        r.src = static_cast<const char*>(stage) + (i * src_item + row * stage_ld) * src_es;
        r.out = at(c_.out, off);
        r.pre = c_.has_pre && !mode_.stage_is_pre ? at(c_.pre, off) : nullptr;
        r.residual = c_.has_residual ? at(c_.residual, off) : nullptr;
        kernels().epilogue_rows(r);
        q0 += rows;
      }
    };
    if (team_) {
      // The team's band, finished in parallel: on the team itself while it still polls.
      ThreadPool::instance().note_openmp_team();
      const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(cb, 1));
      ThreadPool::instance().parallel_for(nbk * mb, grain, finish);
    } else {
      finish(0, nbk * mb);
    }
    return true;
  }

  const GemmEpilogueCall& c_;
  Mode mode_;
  Operand a_, b_;
  Problem p_;
  memory::data_type mdt_;
  Split split_ = Split::Rows;
  int64_t per_ = 1, extent_ = 1, step_ = 1;
  bool want_packed_b_ = false;
  bool team_ = false;  // run_team: one block on an OpenMP team
  PackedB packed_b_;
};

bool try_onednn(const GemmEpilogueCall& c, const Problem& p) {
  const DType dt = c.out.dtype;
  if (dt == DType::F64) return false;  // oneDNN has no f64 matmul
  if (double(p.nb) * double(p.m) * double(p.n) * double(p.k) < kOnednnMinMacs) return false;
  // oneDNN's f16 matmul needs AVX512-FP16: F16 is widened to f32 and always staged.
  const DType mt = dt == DType::F16 ? DType::F32 : dt;
  ThreadBuffers& buffers = thread_buffers();
  const Operand a = prepare(c.a, p.nb, mt, buffers.a, false);
  const Operand b = prepare(c.b, p.nb, mt, buffers.b, true);
  // The fused form first; if oneDNN has no fast kernel with these post-ops, the staged
  // form, whose primitive has none.
  std::vector<Mode> modes;
  if (dt != DType::F16) {
    if (!c.has_pre)
      modes.push_back({false, false, true, true, c.has_residual});
    else if (dt == DType::F32)
      modes.push_back({true, true, true, false, false});
    else
      modes.push_back({true, false, true, false, false});
  }
  modes.push_back({true, false, false, false, false});
  bool done = false;
  for (const Mode& mode : modes) {
    OnednnEpilogue run(c, mode, a, b, p);
    if ((done = run.run())) break;
  }
  buffers.trim();
  return done;
}

// numr's own GEMM (see the top of the file). Returns false, having written nothing, where
// it does not apply.
std::atomic<int64_t> g_own_gemm_runs{0};

bool try_own_gemm(const GemmEpilogueCall& c, const Problem& p) {
  const DType dt = c.out.dtype;
  if (c.has_residual || !uses_own_gemm(dt, c.act)) return false;
  // BF16 only where oneDNN would run otherwise: vdpbf16ps, as oneDNN's BF16 kernels,
  // treats subnormal inputs and products as zero; smaller products keep the exact f32
  // path (see docs/semantics.md).
  if (dt == DType::BF16 && double(p.nb) * double(p.m) * double(p.n) * double(p.k) < kOnednnMinMacs)
    return false;
  ThreadBuffers& buffers = thread_buffers();
  const Operand a = prepare(c.a, p.nb, dt, buffers.a, true, true);
  const Operand b = prepare(c.b, p.nb, dt, buffers.b, true, true);
  OwnGemmCall g;
  g.dtype = dt;
  g.a = a.data;
  g.a_bs = a.bs;
  g.a_rs = a.rs;
  g.b = b.data;
  g.b_bs = b.bs;
  g.b_rs = b.rs;
  g.bias = at(c.bias, 0);
  g.out = at(c.out, 0);
  g.pre = c.has_pre ? at(c.pre, 0) : nullptr;
  g.nb = p.nb;
  g.m = p.m;
  g.n = p.n;
  g.k = p.k;
  g.act = c.act;
  g.packed = buffers.packed_b.get(size_t(own_gemm_scratch_bytes(g)));
  const bool done = kernels().own_gemm(g);
  buffers.trim();
  if (done) g_own_gemm_runs.fetch_add(1, std::memory_order_relaxed);
  return done;
}

// Runs the epilogue kernel over out's flattened rows [r0, r1) on the pool, reading the
// product from src (row r0's first element; compute dtype, row stride n; null for an
// all-zero product).
void finish_parallel(const GemmEpilogueCall& c, const void* src, int64_t r0, int64_t r1) {
  const int64_t n = c.out.shape.back();
  const int64_t cs = c.out.dtype == DType::F64 ? 8 : 4;
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1));
  ThreadPool::instance().parallel_for(r1 - r0, grain, [&](int64_t b, int64_t e) {
    EpilogueRows er;
    er.dtype = c.out.dtype;
    er.act = c.act;
    er.rows = e - b;
    er.n = n;
    er.src_ld = er.out_ld = er.res_ld = er.pre_ld = n;
    const int64_t off = (r0 + b) * n;
    er.src = src ? static_cast<const char*>(src) + b * n * cs : nullptr;
    er.bias = at(c.bias, 0);
    er.out = at(c.out, off);
    // When src is pre itself, pre = src + bias is written back in place.
    er.pre = c.has_pre ? at(c.pre, off) : nullptr;
    er.residual = c.has_residual ? at(c.residual, off) : nullptr;
    kernels().epilogue_rows(er);
  });
}

// The BLAS path: blocks of rows computed by cpu::matmul into an f32/f64 stage (out or pre
// itself when they have the compute dtype), each finished before the next.
void blas_epilogue(const GemmEpilogueCall& c, const Problem& p) {
  const DType dt = c.out.dtype;
  const DType ct = dt == DType::F64 ? DType::F64 : DType::F32;
  const int64_t cs = int64_t(dtype_size(ct));
  const int64_t m = p.m, n = p.n, k = p.k, nb = p.nb;
  ThreadBuffers& buffers = thread_buffers();
  // Half-precision operands are widened once, so every product below is all-f32.
  const Operand a = prepare(c.a, nb, ct, buffers.a, true);
  const Operand b = prepare(c.b, nb, ct, buffers.b, true);
  const bool in_place = dt == ct;
  const bool src_is_pre = in_place && c.has_pre;
  char* stage_base = nullptr;
  if (in_place) stage_base = src_is_pre ? at(c.pre, 0) : at(c.out, 0);
  // Rows per block: a whole batch item or more when small, else a slice of one item.
  const int64_t row_bytes = n * cs;
  const int64_t block_rows = std::max<int64_t>(1, kStageBytes / std::max<int64_t>(row_bytes, 1));
  if (!in_place) {
    const int64_t rows = nb * m <= block_rows ? nb * m : std::min(block_rows, m);
    stage_base = static_cast<char*>(buffers.stage.get(size_t(rows * row_bytes)));
  }

  auto matrix_ref = [&](const Operand& op, int64_t item, int64_t r0, int64_t rows) {
    TensorRef r;
    r.base = const_cast<char*>(op.data);
    r.offset = item * op.bs + r0 * op.rs;
    r.dtype = ct;
    r.shape = {rows, op.cols};
    r.strides = {op.rs, op.cs};
    return r;
  };
  auto stage_ref = [&](char* base, int64_t rows, int64_t items) {
    TensorRef r;
    r.base = base;
    r.dtype = ct;
    r.shape = items == 1 ? Shape{rows, n} : Shape{items, rows, n};
    r.strides = contiguous_strides(r.shape);
    return r;
  };
  if (nb * m <= block_rows) {
    // Everything in one block: one (batched) product.
    MatmulCall mc;
    mc.a = matrix_ref(a, 0, 0, m);
    mc.b = matrix_ref(b, 0, 0, k);
    if (nb > 1) {
      mc.a.shape.insert(mc.a.shape.begin(), nb);
      mc.a.strides.insert(mc.a.strides.begin(), a.bs);
      mc.b.shape.insert(mc.b.shape.begin(), nb);
      mc.b.strides.insert(mc.b.strides.begin(), b.bs);
    }
    mc.out = stage_ref(stage_base, m, nb);
    cpu::matmul(mc);
    finish_parallel(c, stage_base, 0, nb * m);
  } else {
    for (int64_t i = 0; i < nb; ++i)
      for (int64_t r0 = 0; r0 < m; r0 += block_rows) {
        const int64_t rows = std::min(block_rows, m - r0);
        const int64_t off = (i * m + r0) * n;  // elements of out
        char* stage = in_place ? stage_base + off * cs : stage_base;
        MatmulCall mc;
        mc.a = matrix_ref(a, i, r0, rows);
        mc.b = matrix_ref(b, i, 0, k);
        mc.out = stage_ref(stage, rows, 1);
        cpu::matmul(mc);
        finish_parallel(c, stage, i * m + r0, i * m + r0 + rows);
      }
  }
  buffers.trim();
}

}  // namespace

bool uses_own_gemm(DType dtype, Activation act) {
  static const bool cpu_has_bf16 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512bf16") != 0;
  }();
  // NUMR_CPU_OWN_GEMM=0 leaves every epilogue to oneDNN (to compare the two).
  static const bool allowed = [] {
    const char* env = std::getenv("NUMR_CPU_OWN_GEMM");
    return !(env && std::strcmp(env, "0") == 0);
  }();
  if (act == Activation::None || act == Activation::Relu || !kernels().own_gemm || !allowed)
    return false;
  return dtype == DType::F32 || (dtype == DType::BF16 && cpu_has_bf16 && !onednn_uses_amx());
}

bool onednn_uses_amx() {
  // oneDNN asks Linux for the AMX tile state itself (arch_prctl ARCH_REQ_XCOMP_PERM) and
  // reports AMX only when granted; ONEDNN_MAX_CPU_ISA caps it.
  static const bool amx = dnnl::get_effective_cpu_isa() == dnnl::cpu_isa::avx512_core_amx;
  return amx;
}
int64_t own_gemm_count() { return g_own_gemm_runs.load(std::memory_order_relaxed); }
void set_team_stage_bytes_for_testing(int64_t bytes) {
  g_team_stage_bytes.store(bytes > 0 ? bytes : kTeamStageBytes, std::memory_order_relaxed);
}

void matmul_epilogue(const GemmEpilogueCall& call) {
  if (call.out.numel() == 0) return;
  const Problem p = problem_of(call);
  if (p.k == 0) {  // an empty sum: the product is 0
    finish_parallel(call, nullptr, 0, p.nb * p.m);
    return;
  }
  if (try_own_gemm(call, p) || try_onednn(call, p)) return;
  blas_epilogue(call, p);
}

}  // namespace numr::cpu
