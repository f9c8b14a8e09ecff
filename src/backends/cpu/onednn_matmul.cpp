// oneDNN matmul: each operand becomes a 3-D memory descriptor {batch, rows, cols} with its
// own strides (a broadcast operand gets batch 1), and batch dims that no single stride can
// describe are looped here. Only an operand whose matrix has no unit stride (or has a
// negative one) is packed. A large product runs as one primitive on an OpenMP team of the
// pool's size (gemm_team_threads); otherwise numr's thread pool splits the work into
// blocks, each run by a single-threaded primitive. Primitives are cached per block layout
// and thread count.
#include "backends/cpu/onednn_matmul.h"

#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "backends/cpu/gemm_support.h"
#include "backends/cpu/kernels/kernels.h"
#include "backends/cpu/onednn_packed_b.h"
#include "core/thread_pool.h"
#include "numr/error.h"

namespace numr::cpu {
namespace {

using dnnl::memory;
using Buffer = ScratchBuffer;

struct ThreadBuffers {
  Buffer a, b, packed_b, scratchpad;
};
ThreadBuffers& thread_buffers() {
  thread_local ThreadBuffers t;
  return t;
}

// Strides of a [rows, cols] matrix made acceptable to oneDNN: one of them 1 and the other
// at least the extent of the unit-stride dim. Strides along dims of length 1 are never
// followed, so they are set to the values a dense matrix would have. False when the
// matrix has no such layout.
bool normalize_matrix(int64_t rows, int64_t cols, int64_t& rs, int64_t& cs) {
  if (cols == 1) cs = 1;
  if (rows == 1) rs = cs == 1 ? cols : 1;
  return (cs == 1 && rs >= std::max<int64_t>(cols, 1)) ||
         (rs == 1 && cs >= std::max<int64_t>(rows, 1));
}

// One operand as oneDNN will see it.
struct Operand {
  const char* data = nullptr;     // element (0, ..., 0)
  std::vector<int64_t> bstrides;  // per batch dim of out; 0 where broadcast
  int64_t rows = 0, cols = 0, rs = 0, cs = 0;
};

Operand make_operand(const TensorRef& r, Buffer& pack_buffer) {
  const size_t nd = r.shape.size();
  const size_t esize = dtype_size(r.dtype);
  Operand op;
  op.rows = r.shape[nd - 2];
  op.cols = r.shape[nd - 1];
  op.rs = r.strides[nd - 2];
  op.cs = r.strides[nd - 1];
  op.bstrides.assign(r.strides.begin(), r.strides.end() - 2);
  bool direct = normalize_matrix(op.rows, op.cols, op.rs, op.cs);
  for (int64_t s : op.bstrides) direct = direct && s >= 0;
  if (direct) {
    op.data = static_cast<const char*>(r.base) + r.offset * int64_t(esize);
    return op;
  }
  // Copy the distinct data: broadcast batch dims stay broadcast (stride 0) in the copy.
  TensorRef src = r;
  for (size_t d = 0; d + 2 < nd; ++d)
    if (src.strides[d] == 0) src.shape[d] = 1;
  TensorRef dst;
  dst.dtype = r.dtype;
  dst.shape = src.shape;
  dst.strides = contiguous_strides(dst.shape);
  dst.base = pack_buffer.get(size_t(shape_numel(dst.shape)) * esize);
  kernels().copy(CopyCall{src, dst});
  op.data = static_cast<const char*>(dst.base);
  for (size_t d = 0; d + 2 < nd; ++d) op.bstrides[d] = r.strides[d] == 0 ? 0 : dst.strides[d];
  op.rs = op.cols;
  op.cs = 1;
  normalize_matrix(op.rows, op.cols, op.rs, op.cs);
  return op;
}

// A run of batch dims that every operand steps through with a single stride.
struct BatchDim {
  int64_t size = 1, sa = 0, sb = 0, so = 0;
};

// Out's batch dims of length > 1, adjacent ones merged where all three operands allow.
std::vector<BatchDim> merged_batch(const Shape& out_shape, const Operand& a, const Operand& b,
                                   const Strides& out_strides) {
  std::vector<BatchDim> dims;  // innermost first
  for (size_t d = out_shape.size() - 2; d-- > 0;) {
    if (out_shape[d] == 1) continue;
    const BatchDim x{out_shape[d], a.bstrides[d], b.bstrides[d], out_strides[d]};
    if (!dims.empty()) {
      BatchDim& in = dims.back();
      if (x.sa == in.sa * in.size && x.sb == in.sb * in.size && x.so == in.so * in.size) {
        in.size *= x.size;
        continue;
      }
    }
    dims.push_back(x);
  }
  return dims;
}

// The least work worth a task of its own: below it, waking another thread costs more than
// it saves.

// A cached primitive and what executing it needs.
struct Entry {
  std::unique_ptr<dnnl::matmul> primitive;  // null when only the reference kernel applies
  memory::desc a, b, out, scratchpad;
  bool b_packed = false;  // made for the layout oneDNN picked for b (PackedB)
};

// The cache key: every number that shaped the primitive.
using Key = std::vector<int64_t>;

class PrimitiveCache {
 public:
  // With pack_b (one item: 3-D descriptors of batch 1), the primitive is made with 2-D
  // descriptors and picks b's layout (with 3-D ones oneDNN keeps b's plain layout).
  const Entry& get(const Key& key, const memory::desc& a, const memory::desc& b,
                   const memory::desc& out, bool pack_b) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(key);
    if (it != map_.end()) return *it->second;
    if (map_.size() >= kMaxEntries) map_.clear();  // bounded; callers hold no references
    auto entry = std::make_unique<Entry>();
    entry->a = pack_b ? PackedB::two_d(a) : a;
    entry->b = pack_b ? PackedB::any_layout(PackedB::two_d(b)) : b;
    entry->out = pack_b ? PackedB::two_d(out) : out;
    entry->b_packed = pack_b;
    dnnl::primitive_attr attr;
    // With a scratchpad passed in by each caller, one primitive may run on several
    // threads at once.
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    try {
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(entry->a, entry->b, entry->out), attr,
                                      onednn_engine());
      // oneDNN's reference implementation is a scalar loop, far slower than numr's BLAS
      // path; such cases are left to that path.
      if (std::strncmp(pd.impl_info_str(), "ref", 3) != 0) {
        entry->primitive = std::make_unique<dnnl::matmul>(pd);
        entry->scratchpad = pd.scratchpad_desc();
        entry->b = pd.weights_desc();
      }
    } catch (const dnnl::error&) {
      // No implementation at all (BF16 below AVX-512): also the BLAS path's.
    }
    return *map_.emplace(key, std::move(entry)).first->second;
  }

 private:
  static constexpr size_t kMaxEntries = 512;
  std::mutex mu_;
  std::map<Key, std::unique_ptr<Entry>> map_;
};

PrimitiveCache& primitive_cache() {
  static PrimitiveCache cache;
  return cache;
}

std::atomic<double> g_team_min_macs{-1.0};
std::atomic<int64_t> g_team_runs{0};

double default_team_min_macs() {
  static const double macs = [] {
    // Smaller products leave the team's start-up visible against the product itself.
    double v = double(int64_t(1) << 22);
    if (const char* env = std::getenv("NUMR_CPU_GEMM_TEAM_MIN_MACS")) v = std::atof(env);
    if (const char* env = std::getenv("NUMR_CPU_GEMM_TEAM"); env && std::strcmp(env, "0") == 0)
      v = -1.0;
    return v;
  }();
  return macs;
}

// Byte offset of one operand at a batch position.
int64_t batch_offset(const std::vector<BatchDim>& loops, const std::vector<int64_t>& idx,
                     int64_t BatchDim::*stride) {
  int64_t off = 0;
  for (size_t i = 0; i < loops.size(); ++i) off += idx[i] * (loops[i].*stride);
  return off;
}

}  // namespace

double gemm_team_min_macs() {
  const double t = g_team_min_macs.load(std::memory_order_relaxed);
  return t >= 0 ? t : default_team_min_macs();
}
void set_gemm_team_min_macs_for_testing(double macs) {
  g_team_min_macs.store(macs, std::memory_order_relaxed);
}

int64_t gemm_team_count() { return g_team_runs.load(std::memory_order_relaxed); }
void count_gemm_team_run() {
  g_team_runs.fetch_add(1, std::memory_order_relaxed);
  ThreadPool::instance().note_openmp_team();
}

int gemm_team_threads(double total_macs) {
  const double per_thread = gemm_team_min_macs();
  if (per_thread < 0) return 0;  // NUMR_CPU_GEMM_TEAM=0
  const int n = ThreadPool::instance().size();
  if (n < 2 || ThreadPool::in_worker() || total_macs < per_thread * n) return 0;
  return n;
}

bool onednn_matmul(const MatmulCall& call) {
  const TensorRef& out = call.out;
  const DType dt = out.dtype;
  const memory::data_type mdt =
      dt == DType::BF16 ? memory::data_type::bf16 : memory::data_type::f32;
  const size_t nd = out.shape.size();
  const int64_t m = out.shape[nd - 2], n = out.shape[nd - 1], k = call.a.shape[nd - 1];
  const int64_t esize = int64_t(dtype_size(dt));

  ThreadBuffers& buffers = thread_buffers();
  const Operand a = make_operand(call.a, buffers.a);
  const Operand b = make_operand(call.b, buffers.b);
  std::vector<BatchDim> batch = merged_batch(out.shape, a, b, out.strides);

  // oneDNN takes one batch dim, broadcast on at most one side; the widest such dim goes
  // to oneDNN and the others are looped here.
  BatchDim inner;
  {
    int best = -1;
    for (size_t i = 0; i < batch.size(); ++i)
      if ((batch[i].sa != 0 || batch[i].sb != 0) &&
          (best < 0 || batch[i].size > batch[size_t(best)].size))
        best = int(i);
    if (best >= 0) {
      inner = batch[size_t(best)];
      batch.erase(batch.begin() + best);
    } else {
      inner.so = m * n;
    }
  }
  const std::vector<BatchDim>& loops = batch;

  // Set below when row blocks of one matrix product all read the whole of b.
  bool want_packed_b = false;
  PackedB packed_b;

  // One block of the product: items [b0, b1) of the inner batch, rows [r0, r1) of out and
  // columns [c0, c1), each a sub-matrix view, run by a single-threaded primitive on the
  // calling thread. Returns false when oneDNN has only its reference kernel for it.
  auto run_block = [&](int64_t b0, int64_t b1, int64_t r0, int64_t r1, int64_t c0, int64_t c1,
                       bool execute) {
    const int64_t nb = b1 - b0, mb = r1 - r0, cb = c1 - c0;
    // A broadcast operand is given batch 1; its batch stride is then unused and set to
    // what a dense stack would have.
    auto operand_desc = [&](const Operand& op, int64_t rows, int64_t cols, int64_t bstride) {
      const int64_t dense = op.cs == 1 ? rows * op.rs : cols * op.cs;
      const int64_t items = bstride == 0 ? 1 : nb;
      return memory::desc({items, rows, cols}, mdt, {items == 1 ? dense : bstride, op.rs, op.cs});
    };
    const memory::desc a_md = operand_desc(a, mb, k, inner.sa);
    const memory::desc b_md = operand_desc(b, k, cb, inner.sb);
    const memory::desc o_md({nb, mb, cb}, mdt, {nb == 1 ? mb * n : inner.so, n, 1});
    auto entry_for = [&](bool pack_b) -> const Entry& {
      // oneDNN blocks a product for the thread count set when its primitive is made.
      const Key key = {int64_t(dt), nb,       mb,       cb,     k,
                       inner.sa,    inner.sb, inner.so, n,      a.rs,
                       a.cs,        b.rs,     b.cs,     pack_b, omp_get_max_threads()};
      return primitive_cache().get(key, a_md, b_md, o_md, pack_b);
    };
    const Entry* found = &entry_for(want_packed_b);
    if (!found->primitive) return false;
    if (!execute) {
      // The probe of the first block, on the calling thread before any block runs.
      if (found->b_packed)
        packed_b.pack(PackedB::two_d(b_md), b.data, found->b, thread_buffers().packed_b);
      return true;
    }
    // A block whose primitive wants b in another layout than the packed one (a ragged last
    // block may) takes b as it is.
    const bool use_packed = found->b_packed && packed_b.fits(found->b);
    if (found->b_packed && !use_packed && !(found->b == PackedB::two_d(b_md)))
      found = &entry_for(false);
    const Entry& entry = *found;
    if (!entry.primitive) return false;

    dnnl::engine& engine = onednn_engine();
    thread_local dnnl::stream stream(engine);
    ThreadBuffers& tb = thread_buffers();
    memory a_mem(entry.a, engine, nullptr), b_mem(entry.b, engine, nullptr),
        o_mem(entry.out, engine, nullptr);
    memory s_mem(entry.scratchpad, engine,
                 tb.scratchpad.get(std::max<size_t>(entry.scratchpad.get_size(), 1)));
    const char* const a0 = a.data + (b0 * inner.sa + r0 * a.rs) * esize;
    const char* const b0p = b.data + (b0 * inner.sb + c0 * b.cs) * esize;
    char* const o0 =
        static_cast<char*>(out.base) + (out.offset + b0 * inner.so + r0 * n + c0) * esize;
    std::vector<int64_t> idx(loops.size(), 0);
    for (;;) {
      // memory objects take non-const handles; oneDNN only reads src and weights.
      a_mem.set_data_handle(
          const_cast<char*>(a0 + batch_offset(loops, idx, &BatchDim::sa) * esize));
      b_mem.set_data_handle(
          use_packed ? packed_b.data()
                     : const_cast<char*>(b0p + batch_offset(loops, idx, &BatchDim::sb) * esize));
      o_mem.set_data_handle(o0 + batch_offset(loops, idx, &BatchDim::so) * esize);
      entry.primitive->execute(stream, {{DNNL_ARG_SRC, a_mem},
                                        {DNNL_ARG_WEIGHTS, b_mem},
                                        {DNNL_ARG_DST, o_mem},
                                        {DNNL_ARG_SCRATCHPAD, s_mem}});
      size_t d = loops.size();
      while (d > 0 && ++idx[d - 1] == loops[d - 1].size) idx[--d] = 0;
      if (d == 0) break;
    }
    stream.wait();
    tb.scratchpad.trim();
    return true;
  };

  // oneDNN's own threads (an OpenMP team) spin-wait at barriers, and next to other
  // spinning pools (OpenBLAS's, another process's) a short product waits on them. So below
  // gemm_team_threads' size oneDNN runs single-threaded and numr's pool, whose idle threads
  // sleep, splits the product: over the inner batch when it has enough items, else over the longer
  // of out's rows and columns (each block then packs its own share of the other operand, except
  // that row blocks of one product share one packed b when it is large: PackedB).
  const int64_t macs_per_item = m * n * k;
  const double total = double(macs_per_item) * double(inner.size) *
                       double(out.numel() / std::max<int64_t>(1, m * n * inner.size));
  int64_t tasks = ThreadPool::instance().size();
  if (total < kMinMacsPerTask * 2) tasks = 1;
  tasks = std::max<int64_t>(1, std::min<int64_t>(tasks, int64_t(total / kMinMacsPerTask)));
  enum class Split { Batch, Rows, Cols } split = Split::Rows;
  if (inner.size >= 2 * tasks || (inner.size >= tasks && m * n < 64 * 64))
    split = Split::Batch;
  else if (n > m)
    split = Split::Cols;
  const int64_t extent = split == Split::Batch ? inner.size : split == Split::Rows ? m : n;
  tasks = std::min(tasks, extent);
  // Blocks of rows/columns are multiples of 16 so that only the last one has a ragged edge.
  const int64_t align = split == Split::Batch ? 1 : 16;
  const int64_t per = ((extent + tasks - 1) / tasks + align - 1) / align * align;
  tasks = (extent + per - 1) / per;

  auto run_task = [&](int64_t t, bool execute) {
    const int64_t lo = t * per, hi = std::min(extent, lo + per);
    switch (split) {
      case Split::Batch: return run_block(lo, hi, 0, m, 0, n, execute);
      case Split::Rows: return run_block(0, inner.size, lo, hi, 0, n, execute);
      case Split::Cols: return run_block(0, inner.size, 0, m, lo, hi, execute);
    }
    return false;
  };

  const int team = gemm_team_threads(total);
  if (team > 0) {
    // One primitive on `team` OpenMP threads; numr's pool workers block meanwhile instead
    // of polling for work on the same cores. B, read by every thread, is packed by all.
    ThreadPool::instance().park();
    want_packed_b = loops.empty() && inner.size == 1 && PackedB::worth_it(team, k * n * esize);
    OmpThreads omp_threads(team);
    try {
      if (!run_block(0, inner.size, 0, m, 0, n, false)) return false;
      run_block(0, inner.size, 0, m, 0, n, true);
      count_gemm_team_run();
    } catch (const dnnl::error& e) {
      fail<BackendError>("matmul", "oneDNN: ", e.what());
    }
  } else {
    want_packed_b = split == Split::Rows && loops.empty() && inner.size == 1 &&
                    PackedB::worth_it(tasks, k * n * esize);
    OmpThreads omp_threads(1);
    try {
      // Whether oneDNN has a fast kernel for this layout is known before anything runs.
      if (!run_task(0, false)) return false;
      if (tasks == 1) {
        run_task(0, true);
      } else {
        ThreadPool::instance().parallel_for(tasks, 1, [&](int64_t first, int64_t last) {
          const OmpThreads single(1);
          for (int64_t t = first; t < last; ++t) run_task(t, true);
        });
      }
    } catch (const dnnl::error& e) {
      fail<BackendError>("matmul", "oneDNN: ", e.what());
    }
  }
  buffers.a.trim();
  buffers.b.trim();
  buffers.packed_b.trim();
  return true;
}

}  // namespace numr::cpu
