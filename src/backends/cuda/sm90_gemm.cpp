// The sm_90a GEMM of sm90_gemm.h. The PTX is written as text with a small helper rather
// than through ptx::KernelBuilder: the kernel needs instructions the builder has no calls
// for (wgmma with 128 accumulator operands, mbarrier, bulk tensor copies, setmaxnreg,
// 64-byte aligned by-value parameters, .maxntid/.minnctapersm), and its warp-specialised
// control flow (one thread of the producer warpgroup runs a loop the others skip) is what
// the builder's barrier check is made to reject.
//
// Schedules. Cooperative: both consumer warpgroups on one tile of 128 x 256, warpgroup w
// on rows 64w..64w+63 with m64n256k16, 4 stages of 48 KiB. Ping-pong (Sm90GemmConfig's default):
// each consumer warpgroup on its own tile of 128 x 128, with two m64n128k16 per k16 step (rows
// 0..63 into acc0..63, rows 64..127 into acc64..127), 6 stages of 32 KiB; the warpgroups
// take the CTA's tiles in turn (sm90_gemm.h's numbers for the trade: ping-pong hides the
// epilogue but loads A and B for half as many outputs per stage).
//
// Shared memory (dynamic, base rounded up to 1024 bytes; offsets from there), S stages:
//   [0, S * 16 Ki)      A stages: stage s at s * 16 Ki
//   [S * 16 Ki, ...)    B stages: stage s at S * 16 Ki + s * (B stage bytes)
//   then full[0..S-1] and empty[0..S-1] mbarriers (8 bytes each)
//
// Layouts (both written by the bulk tensor copies with CU_TENSOR_MAP_SWIZZLE_128B):
//  - A stage: 128 rows (m) of 64 BF16 (k) = 128 bytes per row, row r at r * 128; within
//    each group of 8 rows (1024 bytes) the 16-byte chunk c of row r is stored at chunk
//    c ^ (r % 8). That is wgmma's K-major layout with 128-byte swizzle: the descriptor's
//    stride byte offset (between 8-row groups) is 1024, the leading byte offset is unused
//    for swizzled K-major layouts (set to 1, i.e. 16 bytes), and the k-th group of 16 K
//    values (32 bytes) starts 32 * k bytes into the rows: the descriptor's start address
//    advances by 32 bytes per k16 step, and the hardware applies the swizzle to the
//    address it forms (which is why the tile must sit on a 1024-byte boundary). Rows
//    64..127 start 8 KiB in.
//  - B stage: tile_n / 64 column blocks of 64 n (128 bytes, the most one 128-byte-swizzled
//    box holds), block j at j * 8 KiB; each block is 64 rows (k) of 128 bytes, swizzled as
//    above. For wgmma B is K x N and here N is contiguous ("MN-major", the transpose bit
//    set). In the MN-major 128-byte-swizzled canonical layout, an atom is 64 n x 8 k
//    (1024 bytes, one 128-byte row per k); the leading byte offset is the distance between
//    atoms along N (the next 64 columns: 8 KiB) and the stride byte offset the distance
//    between atoms along K (the next 8 rows: 1024 bytes). One m64nNk16 reads N / 64 atoms
//    along N and 2 along K; the k-th k16 step starts 16 rows (2048 bytes) further.
//
// Descriptor (64 bits): bits 0-13 start address >> 4, 16-29 leading byte offset >> 4,
// 32-45 stride byte offset >> 4, 49-51 base offset (0: every tile is 1024-byte aligned),
// 62-63 swizzle mode (1 = 128-byte).
//
// Accumulators of m64nNk16 (f32): thread t of the warpgroup, warp w = t / 32, lane l,
// holds d[4i + j], i = 0..N/8-1: row 16w + l/4 (+8 for j = 2, 3), column 8i + 2(l%4) (+1
// for j = 1, 3).
//
// Work: the grid is persistent, one CTA per SM. A work unit is `cluster` tiles stacked
// along M; the CTA of rank r in its cluster takes tile r of each unit its cluster takes
// (units c, c + clusters, ...). Units are numbered in groups of group_rows unit rows (all
// columns of the group, M fastest inside it), so that the ~132 tiles in flight cover a few
// column blocks of B rather than all of them (8192 x 8192 x 8192 ping-pong: 0.96 instead of
// 1.18 of the matmul's time). Both CTAs of a cluster of 2 need the same B tile: each loads
// half of its 64-column boxes with a multicast copy that writes them into both CTAs' stage
// and completes their bytes on both CTAs' full[s].
// With split tail (cooperative BF16, clusters of 1) a last wave that would leave half of the
// grid or more idle is split along K over every CTA instead ("Split tail" below).
//
// Pipeline and phases: stage s and its parity advance together in both roles, over every
// (unit, k block) the CTA handles in order, so they stay in step across tiles:
// stage = (stage + 1) % S, and the parity flips when stage wraps to 0. The consumers wait
// on full[s] for parity `phase`; the producer waits on empty[s] for parity `phase ^ 1`,
// which a freshly initialised barrier reports complete, so the first round of the ring
// does not wait. A consumer warp arrives on empty[s] (count 4 per reading warpgroup per CTA
// of the cluster: 8 cooperative, 4 ping-pong) once wgmma.wait_group has reported the group
// reading stage s complete: the groups of k block kb-1 after the commit of k block kb
// (wait_group 1), the last one after the K loop (wait_group 0), before the epilogue. With
// clusters of 2 each consumer warp arrives on both CTAs' empty[s] (the peer's through
// mapa), since either CTA's next copies write into both; a peer's copies for the next
// round of stage s can so only start after this CTA's consumers have waited on full[s],
// and its bytes can land before this CTA's expect_tx (the transaction count goes negative
// meanwhile, which the mbarrier allows; the phase cannot complete before the local
// arrival). At the end the producer thread waits for the last release of every stage, so
// that no peer arrives on the barriers of a CTA that has exited; a cluster barrier after
// the mbarrier initialisation keeps the peer's copies from completing on barriers not yet
// initialised.
//
// Ping-pong turns: warpgroup cw takes the CTA's units cw, cw + 2, ... and, after each of
// its tiles, moves its stage and phase on by the other warpgroup's k blocks (k_blocks
// stages). Parity alone would let a warpgroup that runs a whole tile ahead mistake an old
// phase of full[s] for the one it needs, so the main loops take turns through two named
// barriers of 256 threads (id 1: warpgroup 0 may start its next tile, id 2: warpgroup 1
// may): a warpgroup arrives (bar.arrive) on the other's once it has waited on the last full
// barrier of its tile, and waits (bar.sync) on its own before every tile but warpgroup 0's
// first. It then runs its epilogue while the other's products run.
//
// Epilogue: in registers, v = acc + bias (f32), act(v) in f32, cvt.rn.bf16x2.f32 per
// column pair, 8 values (one row set, four blocks of 8 columns) at a time; then the four
// lanes of a quad, which hold one row's columns 2 apiece in each block of 8, exchange words
// so that each lane holds 4 consecutive columns of two blocks (one butterfly shuffle round
// between lanes q and q ^ 1; store_width 16: two rounds, 8 consecutive columns) and stores
// them with 8-byte st.global.v2 (a quad's store covers 32 bytes of a row: whole sectors; the
// first version's 4-byte stores took the cooperative kernel from 1.01 to 1.11 of the
// matmul's time at 8192 x 4096 x 4096). A TMA store (stmatrix into a 128-byte-swizzled
// staging tile, fence.proxy.async, one thread's cp.async.bulk.tensor of its two 64-column
// boxes, the staging tile handed between the warpgroups through an mbarrier or one per
// warpgroup with 5 stages) cut the exchange and stores to 16 stmatrix per tile but ran
// 1-2% slower than the 16-byte stores for every activation, on an H200, so it was dropped.
// Gelu and silu divide with split_division (sm90_gemm.h): per 8 values 8 rcp + mul, one
// setp each and one branch, in place of div.full.f32's 2 setp, 4 predicated mul, rcp and
// mul per value.
//
// Deferred epilogue (cooperative BF16, deferred_groups D): the epilogue above runs for the
// tile's column groups 0 .. 7 - D (32 columns each) only; groups 8 - D .. 7 are kept as
// acc + bias in %pv (16 registers per group), with the tile's two row addresses, and their
// 2 D units (one row set of one group: 8 values, one store) run in the next tile's main
// loop, one per k block between wgmma.commit_group and wgmma.wait_group, where the
// products of two k blocks are queued on the tensor cores; a tile of fewer k blocks than
// units runs the rest in its last one, and the CTA's last tile runs them before it exits.
// A unit is picked by a compare-and-branch chain on the count of units done. The results
// are those of the plain epilogue: the same operations on the same values.
//
// TF32 (sm90_gemm.h has the idea). A stage: 128 rows (m) of 32 F32 (k), laid out as the BF16
// A stage, and read by wgmma as its B operand (K-major, N = 128 rows of m): the same
// descriptor, 32 bytes further per k8 step. B stage: 4 boxes of 32 columns (n), box j at
// j * 4 KiB, each 32 rows (k) of 128 bytes, 128-byte swizzled (cooperative: 8 boxes, and
// warpgroup cw takes boxes 4 cw .. 4 cw + 3 as below). Thread (warp w, lane 4g + t)
// takes the columns 32w + 4 chunk(g) .. + 3 of box w, chunk(g) = (g >> 1) | (g & 1) << 2, as
// its rows g and g + 8 of the two m64 blocks of D^T (words 0, 1: first block; 2, 3: second);
// per k8 step s it loads k rows 8s + t and 8s + t + 4 (a0/a1 and a2/a3 of m64nNk8's
// fragment). A quarter warp (g = 2p, 2p + 1, t = 0..3) then reads chunks chunk(g) ^ (row
// % 8): 8 different ones, since chunk(2p) and chunk(2p + 1) differ in bit 2 and t spans the
// low two bits. The accumulators hold, for each m of the tile, this thread's 4 consecutive
// n; epilogue_f32 stores them as one 16-byte st.global per row.
#include "backends/cuda/sm90_gemm.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <sstream>
#include <vector>

#include "backends/cuda/allocator.h"
#include "backends/cuda/context.h"
#include "backends/cuda/driver.h"
#include "backends/cuda/launch.h"
#include "backends/cuda/matmul_plan.h"
#include "backends/cuda/module.h"
#include "math/elementwise.h"
#include "numr/error.h"

namespace numr::cuda {
namespace {

constexpr const char* kOp = "sm90_gemm";
using T = Sm90GemmTile;

static_assert(T::kK * 2 == 128, "one stage row of A is one 128-byte swizzle row");
static_assert(T::kM == 2 * 64, "two m64 row blocks per CTA tile");

// Dynamic shared memory a block may opt into on sm_90 (227 KiB).
constexpr int kSharedLimit = 232448;
constexpr int kABytes = T::kM * 128;  // one A stage: 128 rows of 128 bytes (64 BF16 or 32 F32)
// TF32: columns of D (rows of D^T) per consumer warpgroup, in either schedule.
constexpr int kTf32WarpgroupN = 128;
// Split tail: the CTA's parts P and O as (unit, first k block, end k block, count of the
// parts before O), u32 each.
constexpr int kItemTableBytes = 32;
// Split tail: the consumers' named barrier (256 threads) around the workspace's use.
constexpr int kSplitBarrier = 1;
static_assert(kSplitTileBytes == 2 * 128 * 128 * 4, "256 threads x 128 accumulators of f32");

// Register counts: the producer needs few, the consumers 128 accumulators, up to 80 deferred
// values (deferred_groups 5) and the rest. 128 * 24 + 256 * 240 = 64512 <= 65536 registers
// of an SM.
constexpr int kProducerRegs = 24;
constexpr int kConsumerRegs = 240;

// Descriptor constants (the start address is or-ed in).
constexpr uint64_t kSwizzle128 = uint64_t(1) << 62;
constexpr uint64_t desc_bits(uint64_t leading_bytes, uint64_t stride_bytes) {
  return ((leading_bytes >> 4) << 16) | ((stride_bytes >> 4) << 32) | kSwizzle128;
}
constexpr uint64_t kDescA = desc_bits(16, 1024);
constexpr uint64_t kDescB = desc_bits(T::kK * 128, 1024);  // next 64 columns: 64 rows of 128 B

std::string f32_hex(float v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0f%08X", std::bit_cast<uint32_t>(v));
  return buf;
}

// PTX text with virtual registers numbered per class and unique labels.
class Ptx {
 public:
  // A fresh register: 'p' pred, 'h' b16, 'r' b32, 'd' b64, 'f' f32.
  std::string reg(char cls) {
    switch (cls) {
      case 'p': return "%p" + std::to_string(np_++);
      case 'h': return "%h" + std::to_string(nh_++);
      case 'r': return "%r" + std::to_string(nr_++);
      case 'd': return "%rd" + std::to_string(nd_++);
      default: return "%f" + std::to_string(nf_++);
    }
  }
  std::string label(const std::string& hint) { return "$L_" + hint + "_" + std::to_string(nl_++); }
  void place(const std::string& l) { body_ << l << ":\n"; }
  template <class... Args>
  void op(const Args&... args) {
    body_ << "    ";
    (body_ << ... << args);
    body_ << ";\n";
  }
  void comment(const std::string& c) { body_ << "    // " << c << "\n"; }

  std::string declarations() const {
    std::ostringstream os;
    os << "    .reg .pred %p<" << std::max(np_, 1) << ">;\n"
       << "    .reg .b16 %h<" << std::max(nh_, 1) << ">;\n"
       << "    .reg .b32 %r<" << std::max(nr_, 1) << ">;\n"
       << "    .reg .b64 %rd<" << std::max(nd_, 1) << ">;\n"
       << "    .reg .f32 %f<" << std::max(nf_, 1) << ">;\n";
    return os.str();
  }
  std::string body() const { return body_.str(); }

 private:
  std::ostringstream body_;
  int np_ = 0, nh_ = 0, nr_ = 0, nd_ = 0, nf_ = 0, nl_ = 0;
};

// act(v) in f32, in the operations and order that numr's formulas (math/elementwise.h)
// take in its BF16 kernels (fast_math.h: exp as ex2.approx.ftz of x log2(e), exp2 as
// ex2.approx.ftz, division as div.full), so that for equal pre-activations the results
// match matmul_bias_activation's bit for bit (activate_grouped, below, gives up the last
// bits of the division for fewer MUFU operations):
//   relu(x) = x < 0 ? 0 : x,  silu(x) = x / (1 + exp(-x)),
//   gelu(x) = x / (1 + exp2(x fma(g1, x x, g0))),  g0, g1 = math::kGeluG0, kGeluG1.
//
// With split division, x / den is x * rcp.approx(den) here and the quotient's operands are
// returned too (`den` set), for split_division_check to redo with div.full.f32 where den
// is out of the range where the two agree.
struct Activated {
  std::string y;       // act(x)
  std::string x, den;  // the quotient's operands (den empty: no division)
};

Activated activate(Ptx& p, Activation act, const std::string& x, bool split_division) {
  // x / (1 + 2^a)
  auto x_over_one_plus_exp2 = [&](const std::string& a) {
    const std::string e = p.reg('f'), den = p.reg('f'), y = p.reg('f');
    p.op("ex2.approx.ftz.f32 ", e, ", ", a);
    p.op("add.rn.f32 ", den, ", ", e, ", 0f3F800000");
    if (!split_division) {
      p.op("div.full.f32 ", y, ", ", x, ", ", den);
      return Activated{y, x, ""};
    }
    const std::string r = p.reg('f');
    p.op("rcp.approx.ftz.f32 ", r, ", ", den);
    p.op("mul.rn.f32 ", y, ", ", x, ", ", r);
    return Activated{y, x, den};
  };
  switch (act) {
    case Activation::None: return Activated{x, "", ""};
    case Activation::Relu: {
      const std::string neg = p.reg('p'), y = p.reg('f');
      p.op("setp.lt.f32 ", neg, ", ", x, ", 0f00000000");
      p.op("selp.f32 ", y, ", 0f00000000, ", x, ", ", neg);
      return Activated{y, "", ""};
    }
    case Activation::Silu: {  // exp(-x) = 2^(-x log2(e))
      const std::string nx = p.reg('f'), a = p.reg('f');
      p.op("neg.f32 ", nx, ", ", x);
      p.op("mul.rn.f32 ", a, ", ", nx, ", ", f32_hex(float(1.4426950408889634)));
      return x_over_one_plus_exp2(a);
    }
    case Activation::Gelu: {  // a = x (g0 + g1 x^2), math::gelu_exp2_arg
      const std::string x2 = p.reg('f'), t = p.reg('f'), a = p.reg('f');
      p.op("mul.rn.f32 ", x2, ", ", x, ", ", x);
      p.op("fma.rn.f32 ", t, ", ", f32_hex(float(math::kGeluG1)), ", ", x2, ", ",
           f32_hex(float(math::kGeluG0)));
      p.op("mul.rn.f32 ", a, ", ", x, ", ", t);
      return x_over_one_plus_exp2(a);
    }
    default: break;
  }
  fail<BackendError>(kOp, "activation ", activation_name(act), " is not implemented");
}

// The split division's range check for a batch of quotients: where any den is above 2^126
// or NaN (gtu: unordered too), the whole batch is recomputed with div.full.f32. One setp
// per quotient (ptxas chains them into one predicate) and one branch per batch.
void split_division_check(Ptx& p, const std::vector<Activated>& batch) {
  std::string any;
  for (const Activated& v : batch) {
    if (v.den.empty()) continue;
    if (any.empty()) {
      any = p.reg('p');
      p.op("setp.gtu.f32 ", any, ", ", v.den, ", 0f7E800000");
    } else {
      p.op("setp.gtu.or.f32 ", any, ", ", v.den, ", 0f7E800000, ", any);
    }
  }
  if (any.empty()) return;
  const std::string in_range = p.label("div_in_range");
  p.op("@!", any, " bra ", in_range);
  for (const Activated& v : batch)
    if (!v.den.empty()) p.op("div.full.f32 ", v.y, ", ", v.x, ", ", v.den);
  p.place(in_range);
}

// Gelu or Silu of 8 values with one reciprocal per group of `group` (2 or 4) of them
// (Sm90GemmConfig::reciprocal_group). Pairs: y0 = x0 * (d1 * r), y1 = x1 * (d0 * r), r =
// rcp.approx.ftz(d0 d1). Fours: r = rcp(d01 d23), r01 = r * d23 = 1 / d01, r23 = r * d01,
// then each pair from its r as above. Where any group's product is above 2^126 (r would
// flush to zero) or NaN, the batch is redone with div.full.f32.
std::vector<Activated> activate_grouped(Ptx& p, Activation act, const std::string (&v)[8],
                                        int group) {
  std::vector<Activated> y(8);
  for (int k = 0; k < 8; ++k) {
    // The activation's own code up to its quotient: den = 1 + 2^a.
    const std::string a = p.reg('f');
    if (act == Activation::Silu) {
      p.op("mul.rn.f32 ", a, ", ", v[k], ", ", f32_hex(float(-1.4426950408889634)));
    } else {
      const std::string x2 = p.reg('f'), t = p.reg('f');
      p.op("mul.rn.f32 ", x2, ", ", v[k], ", ", v[k]);
      p.op("fma.rn.f32 ", t, ", ", f32_hex(float(math::kGeluG1)), ", ", x2, ", ",
           f32_hex(float(math::kGeluG0)));
      p.op("mul.rn.f32 ", a, ", ", v[k], ", ", t);
    }
    const std::string e = p.reg('f');
    y[k] = Activated{p.reg('f'), v[k], p.reg('f')};
    p.op("ex2.approx.ftz.f32 ", e, ", ", a);
    p.op("add.rn.f32 ", y[k].den, ", ", e, ", 0f3F800000");
  }
  const auto mul = [&](const std::string& x, const std::string& z) {
    const std::string r = p.reg('f');
    p.op("mul.rn.f32 ", r, ", ", x, ", ", z);
    return r;
  };
  std::string any;
  const auto check = [&](const std::string& prod) {
    if (any.empty()) {
      any = p.reg('p');
      p.op("setp.gtu.f32 ", any, ", ", prod, ", 0f7E800000");
    } else {
      p.op("setp.gtu.or.f32 ", any, ", ", prod, ", 0f7E800000, ", any);
    }
  };
  const auto rcp = [&](const std::string& x) {
    const std::string r = p.reg('f');
    p.op("rcp.approx.ftz.f32 ", r, ", ", x);
    return r;
  };
  // The pair k, k + 1 from r = 1 / (d_k d_k+1).
  const auto finish_pair = [&](int k, const std::string& r) {
    p.op("mul.rn.f32 ", y[k].y, ", ", y[k].x, ", ", mul(y[k + 1].den, r));
    p.op("mul.rn.f32 ", y[k + 1].y, ", ", y[k + 1].x, ", ", mul(y[k].den, r));
  };
  for (int k = 0; k < 8; k += group) {
    if (group == 2) {
      const std::string prod = mul(y[k].den, y[k + 1].den);
      check(prod);
      finish_pair(k, rcp(prod));
    } else {
      const std::string d01 = mul(y[k].den, y[k + 1].den), d23 = mul(y[k + 2].den, y[k + 3].den);
      const std::string prod = mul(d01, d23);
      check(prod);
      const std::string r = rcp(prod);
      finish_pair(k, mul(r, d23));
      finish_pair(k + 2, mul(r, d01));
    }
  }
  const std::string in_range = p.label("group_in_range");
  p.op("@!", any, " bra ", in_range);
  for (const Activated& a : y) p.op("div.full.f32 ", a.y, ", ", a.x, ", ", a.den);
  p.place(in_range);
  return y;
}

bool supported_activation(Activation act) {
  return act == Activation::None || act == Activation::Relu || act == Activation::Gelu ||
         act == Activation::Silu;
}

// The accumulator operand list "{%acc<first>, ..., %acc<first + count - 1>}".
std::string accumulator_list(int first, int count) {
  std::string s = "{";
  for (int i = first; i < first + count; ++i)
    s += (i > first ? ", %acc" : "%acc") + std::to_string(i);
  return s + "}";
}

// The kernel's shape for a configuration.
struct Layout {
  bool pingpong = false;
  bool tf32 = false;    // F32 operands multiplied as TF32 (B from registers: TF32 above)
  int tile_n = 256;     // columns of one consumer tile
  int k_step = 64;      // K per stage: one 128-byte row of A (64 BF16, 32 F32)
  int box_n = 64;       // columns of B per bulk copy: one 128-byte row (64 BF16, 32 F32)
  int box_bytes = 0;    // one B box: k_step rows of 128 bytes
  int stages = 4;       // ring depth
  int b_bytes = 0;      // one B stage: k_step rows (k) of tile_n elements
  int stage_bytes = 0;  // A + B
  int barrier_offset = 0;
  int table_offset = 0;  // split tail: the CTA's three split items (3 x 3 u32)
  int shared_bytes = 0;
  int readers = 2;  // consumer warpgroups that read each stage
  bool split_tail = false;
};

Layout layout_of(const Sm90GemmConfig& config) {
  Layout l;
  l.pingpong = config.schedule == Sm90Schedule::PingPong;
  l.tf32 = config.dtype == DType::F32;
  l.tile_n = l.pingpong ? 128 : 256;
  const int elem = l.tf32 ? 4 : 2;
  l.k_step = 128 / elem;
  l.box_n = 128 / elem;
  l.box_bytes = l.k_step * 128;
  l.stages = config.stages > 0 ? config.stages : (l.pingpong ? 6 : 4);
  l.b_bytes = l.k_step * l.tile_n * elem;
  l.stage_bytes = kABytes + l.b_bytes;
  // A stages, then B stages, then full[] and empty[]; 1 KiB more so the kernel can round
  // the dynamic shared base up to the 1024-byte alignment the 128-byte swizzle needs.
  l.barrier_offset = l.stages * l.stage_bytes;
  l.table_offset = l.barrier_offset + 2 * l.stages * 8;
  l.split_tail = config.split_tail;
  l.shared_bytes = l.table_offset + (l.split_tail ? kItemTableBytes : 0) + 1024;
  l.readers = l.pingpong ? 1 : 2;
  return l;
}

// Registers and settings both roles use.
struct Common {
  Layout l;
  int cluster = 1;                  // CTAs per cluster: 1, or 2 sharing B through multicast copies
  int group_rows = 0;               // tile order: 0 N fastest, else groups of this many unit rows
  std::string smem;                 // u32: the 1024-byte aligned dynamic shared base
  std::string bar_full, bar_empty;  // u32: full[0], empty[0]
  std::string rank;                 // u32: %cluster_ctarank (0 when cluster == 1)
  std::string tiles_n, num_units, k_blocks;
  std::string exit;
  int store_width = 16;  // bytes per lane, row and st.global: 16 or 8
  bool split_division = false;
  int reciprocal_group = 1;  // Sm90GemmConfig::reciprocal_group
  int deferred_groups = 0;  // Sm90GemmConfig::deferred_groups
  bool bias_bf16 = false;   // Sm90GemmConfig::bias_dtype BF16
  bool split_tail = false;  // Sm90GemmConfig::split_tail
  // Split tail: the parameters (whole tiles, sequence number, flags, workspace).
  std::string p_dp_units, p_seq, p_flags, p_work;
};

// Waits until the mbarrier at `bar` (shared, u32) has completed the phase of parity `parity`.
// The default semantics (acquire, CTA scope) also serve the empty barriers that the peer
// CTA arrives on: what they order are the tensor cores' reads of a stage (finished, by
// wgmma.wait_group, before the arrival) against the copy engine's next writes into it, and
// no ordinary memory accesses. (`.acquire.cluster` here and `.release.cluster` on the
// remote arrival cost an L1 invalidation and a GPU-wide memory barrier each, which made the
// cluster kernel 40% slower.) A parity names a phase only among the two nearest ones: the
// waiter must never be more than one phase ahead of the barrier.
void wait_parity(Ptx& p, const std::string& bar, const std::string& parity,
                 const std::string& hint) {
  const std::string again = p.label(hint), done = p.reg('p');
  p.place(again);
  p.op("mbarrier.try_wait.parity.shared::cta.b64 ", done, ", [", bar, "], ", parity);
  p.op("@!", done, " bra ", again);
}

// stage = (stage + 1) % stages; phase ^= 1 when it wraps.
void advance(Ptx& p, int stages, const std::string& stage, const std::string& phase) {
  const std::string wrap = p.reg('p');
  p.op("add.u32 ", stage, ", ", stage, ", 1");
  p.op("setp.eq.u32 ", wrap, ", ", stage, ", ", stages);
  p.op("@", wrap, " mov.u32 ", stage, ", 0");
  p.op("@", wrap, " xor.b32 ", phase, ", ", phase, ", 1");
}

// The work units of this CTA: unit = cluster id, then += clusters (CTA id and CTA count
// without clusters). A unit is `cluster` tiles stacked along M that share their B tile:
// unit u covers m_blk = cluster * (u / tiles_n) + rank, n_blk = u % tiles_n (N fastest).
void first_unit(Ptx& p, const Common& c, const std::string& unit, const std::string& step) {
  p.op("mov.u32 ", unit, c.cluster > 1 ? ", %clusterid.x" : ", %ctaid.x");
  p.op("mov.u32 ", step, c.cluster > 1 ? ", %nclusterid.x" : ", %nctaid.x");
}

void tile_coords(Ptx& p, const Common& c, const std::string& unit, const std::string& m_blk,
                 const std::string& n_blk) {
  const std::string mu = p.reg('r');
  if (c.group_rows == 0) {
    const std::string t = p.reg('r');
    p.op("div.u32 ", mu, ", ", unit, ", ", c.tiles_n);
    p.op("mul.lo.u32 ", t, ", ", mu, ", ", c.tiles_n);
    p.op("sub.u32 ", n_blk, ", ", unit, ", ", t);
  } else {
    // Groups of group_rows unit rows (fewer in the last group), M fastest inside a group.
    const int g = c.group_rows;
    const std::string rows_m = p.reg('r'), per_group = p.reg('r'), grp = p.reg('r'), t = p.reg('r'),
                      within = p.reg('r'), row0 = p.reg('r'), left = p.reg('r'), rows = p.reg('r'),
                      r = p.reg('r');
    p.op("div.u32 ", rows_m, ", ", c.num_units, ", ", c.tiles_n);
    p.op("mul.lo.u32 ", per_group, ", ", c.tiles_n, ", ", g);
    p.op("div.u32 ", grp, ", ", unit, ", ", per_group);
    p.op("mul.lo.u32 ", t, ", ", grp, ", ", per_group);
    p.op("sub.u32 ", within, ", ", unit, ", ", t);
    p.op("mul.lo.u32 ", row0, ", ", grp, ", ", g);
    p.op("sub.u32 ", left, ", ", rows_m, ", ", row0);
    p.op("min.u32 ", rows, ", ", left, ", ", g);
    p.op("rem.u32 ", r, ", ", within, ", ", rows);
    p.op("div.u32 ", n_blk, ", ", within, ", ", rows);
    p.op("add.u32 ", mu, ", ", row0, ", ", r);
  }
  if (c.cluster > 1) {
    const std::string base = p.reg('r');
    p.op("mul.lo.u32 ", base, ", ", mu, ", ", c.cluster);
    p.op("add.u32 ", m_blk, ", ", base, ", ", c.rank);
  } else {
    p.op("mov.u32 ", m_blk, ", ", mu);
  }
}

int log2_of(int v) { return std::countr_zero(unsigned(v)); }

// Split tail. The grid of G CTAs takes the first dp_units tiles whole, tile c + j G for CTA
// c, and splits the S = num_units - dp_units others (sm90_gemm_split_tiles: fewer than G)
// along K: their S k_blocks k blocks, in tile order, are cut into G runs, CTA c taking
// [c W / G, (c + 1) W / G), W = S k_blocks. A run is shorter than a tile, so it holds at
// most two parts of tiles: the end of one tile (k blocks s .. k_blocks - 1, s > 0), which
// makes the CTA that tile's owner, and the start of the next (0 .. e - 1, e < k_blocks);
// or one part: an owner's end, a start, an inside part (s .. e - 1), or a whole tile. A
// CTA runs its whole tiles, then the part it does not own (P): it stores the part's
// accumulators to its workspace slot and sets its flag to (sequence << 32) | 1. Then the
// part it owns (O): after the part's products it waits for the flags of the CTAs before it
// that hold the tile's other parts (c - 1, then c - 2 if there is one), adds their
// accumulators to its own in that order, and runs the epilogue. The parts run at once on
// their CTAs, so a split tile costs its owner about its share of the k blocks; the sum is
// in f32, in a fixed order: the result is deterministic, but a split tile's sums are
// grouped differently from the unsplit kernel's (the rounding of f32 additions). A CTA
// only waits for CTAs of lower index, which never wait, and which the GPU starts no later:
// every wait ends. The table in shared memory holds P and O as (unit, first k block, end
// k block, O: the count of parts before it); an absent part has first == end. Thread 0
// writes it before the barrier that follows initialisation.
void write_item_table(Ptx& p, const Common& c) {
  p.comment("split tail: this CTA's parts P and O");
  const std::string dp = p.reg('r'), split = p.reg('r'), cta = p.reg('r'), g = p.reg('r');
  const std::string w = p.reg('d'), c64 = p.reg('d'), g64 = p.reg('d'), kb64 = p.reg('d'),
                    t = p.reg('d'), t1 = p.reg('d'), lo = p.reg('d'), hi = p.reg('d');
  p.op("ld.param.u32 ", dp, ", [", c.p_dp_units, "]");
  p.op("sub.u32 ", split, ", ", c.num_units, ", ", dp);
  p.op("mul.wide.u32 ", w, ", ", split, ", ", c.k_blocks);
  p.op("mov.u32 ", cta, ", %ctaid.x");
  p.op("mov.u32 ", g, ", %nctaid.x");
  p.op("cvt.u64.u32 ", c64, ", ", cta);
  p.op("cvt.u64.u32 ", g64, ", ", g);
  p.op("cvt.u64.u32 ", kb64, ", ", c.k_blocks);
  p.op("mul.lo.u64 ", t, ", ", c64, ", ", w);
  p.op("div.u64 ", lo, ", ", t, ", ", g64);
  p.op("add.u64 ", t1, ", ", t, ", ", w);
  p.op("div.u64 ", hi, ", ", t1, ", ", g64);
  const std::string has = p.reg('p');
  p.op("setp.lt.u64 ", has, ", ", lo, ", ", hi);
  // The run's first k block: tile t_lo, k block r_lo; its last: tile t_hi, k block r_hi - 1.
  auto split_at = [&](const std::string& at, std::string& tile, std::string& kb) {
    const std::string q = p.reg('d'), qk = p.reg('d'), r = p.reg('d');
    tile = p.reg('r');
    kb = p.reg('r');
    p.op("div.u64 ", q, ", ", at, ", ", kb64);
    p.op("mul.lo.u64 ", qk, ", ", q, ", ", kb64);
    p.op("sub.u64 ", r, ", ", at, ", ", qk);
    p.op("cvt.u32.u64 ", tile, ", ", q);
    p.op("cvt.u32.u64 ", kb, ", ", r);
  };
  std::string t_lo, r_lo, t_hi, r_hi;
  split_at(lo, t_lo, r_lo);
  const std::string last = p.reg('d');
  p.op("sub.u64 ", last, ", ", hi, ", 1");
  split_at(last, t_hi, r_hi);
  p.op("add.u32 ", r_hi, ", ", r_hi, ", 1");
  const std::string two = p.reg('p'), at_end = p.reg('p');
  p.op("setp.ne.u32 ", two, ", ", t_lo, ", ", t_hi);
  p.op("setp.eq.u32 ", at_end, ", ", r_hi, ", ", c.k_blocks);
  const std::string u_lo = p.reg('r'), u_hi = p.reg('r');
  p.op("add.u32 ", u_lo, ", ", t_lo, ", ", dp);
  p.op("add.u32 ", u_hi, ", ", t_hi, ", ", dp);
  auto store = [&](int slot, const std::string& unit, const std::string& kb0,
                   const std::string& kb1) {
    const int at = c.l.table_offset + 16 * slot;
    p.op("st.shared.u32 [", c.smem, "+", at, "], ", unit);
    p.op("st.shared.u32 [", c.smem, "+", at + 4, "], ", kb0);
    p.op("st.shared.u32 [", c.smem, "+", at + 8, "], ", kb1);
  };
  // O: the run's first part when the run ends a tile there (t_lo, r_lo, k_blocks): a run
  // across a boundary, or one reaching its tile's end.
  const std::string owns = p.reg('p');
  {
    const std::string end = p.reg('r');
    p.op("or.pred ", owns, ", ", two, ", ", at_end);
    p.op("and.pred ", owns, ", ", owns, ", ", has);
    p.op("selp.b32 ", end, ", ", c.k_blocks, ", ", r_lo, ", ", owns);
    store(1, u_lo, r_lo, end);
  }
  // P: after a boundary the next tile's start (t_hi, 0, r_hi); else a run that stops
  // inside its tile (t_lo, r_lo, r_hi).
  {
    const std::string inside = p.reg('p'), unit = p.reg('r'), first = p.reg('r'), end = p.reg('r');
    p.op("not.pred ", inside, ", ", owns);
    p.op("and.pred ", inside, ", ", inside, ", ", has);
    p.op("selp.b32 ", unit, ", ", u_hi, ", ", u_lo, ", ", two);
    p.op("selp.b32 ", first, ", 0, ", r_lo, ", ", two);
    p.op("selp.b32 ", end, ", ", r_hi, ", ", first, ", ", inside);
    p.op("@", two, " mov.u32 ", end, ", ", r_hi);
    p.op("@!", has, " mov.u32 ", end, ", ", first);
    store(0, unit, first, end);
  }
  // The parts before O: CTAs c - 1, c - 2, ... whose runs end after the tile's start
  // (t_lo k_blocks), counted down while there are any (none when O starts at 0).
  {
    const std::string count = p.reg('r'), prev = p.reg('r'), start = p.reg('d'), ts = p.reg('d'),
                      loop = p.label("sk_count"), done = p.label("sk_counted");
    p.op("mov.u32 ", count, ", 0");
    p.op("cvt.u64.u32 ", ts, ", ", t_lo);
    p.op("mul.lo.u64 ", start, ", ", ts, ", ", kb64);
    p.op("mov.u32 ", prev, ", ", cta);
    p.op("@!", owns, " bra ", done);
    p.place(loop);
    {
      const std::string none = p.reg('p'), after = p.reg('p'), p64 = p.reg('d'), m = p.reg('d'),
                        end = p.reg('d');
      p.op("setp.eq.u32 ", none, ", ", prev, ", 0");
      p.op("@", none, " bra ", done);
      // run prev - 1 ends at prev W / G
      p.op("cvt.u64.u32 ", p64, ", ", prev);
      p.op("mul.lo.u64 ", m, ", ", p64, ", ", w);
      p.op("div.u64 ", end, ", ", m, ", ", g64);
      p.op("setp.le.u64 ", after, ", ", end, ", ", start);
      p.op("@", after, " bra ", done);
      p.op("add.u32 ", count, ", ", count, ", 1");
      p.op("sub.u32 ", prev, ", ", prev, ", 1");
      p.op("bra ", loop);
    }
    p.place(done);
    p.op("st.shared.u32 [", c.smem, "+", c.l.table_offset + 16 + 12, "], ", count);
  }
}

// The CTA's work, one item at a time: tile `unit`, k blocks kb0 .. kb1 - 1. Without split
// tail, units first_unit, then `step` on (kb0 0, kb1 k_blocks); with it, the whole tiles
// ctaid + j nctaid, then the parts P and O above.
struct Work {
  std::string unit, step, kb0, kb1;
  std::string it, last;  // split tail: the item's index, and "this is the CTA's last"
};

Work work_start(Ptx& p, const Common& c) {
  Work w;
  w.unit = p.reg('r');
  if (!c.split_tail) {
    w.step = p.reg('r');
    first_unit(p, c, w.unit, w.step);
    w.kb0 = "0";
    w.kb1 = c.k_blocks;
    return w;
  }
  w.kb0 = p.reg('r');
  w.kb1 = p.reg('r');
  w.it = p.reg('r');
  w.last = p.reg('p');
  p.op("mov.u32 ", w.it, ", 0");
  p.op("setp.ne.u32 ", w.last, ", ", w.it, ", ", w.it);
  return w;
}

// At the head of the work loop: the next item, or a branch to `done` when none is left.
void work_item(Ptx& p, const Common& c, const Work& w, const std::string& done) {
  if (!c.split_tail) {
    const std::string none = p.reg('p');
    p.op("setp.ge.u32 ", none, ", ", w.unit, ", ", c.num_units);
    p.op("@", none, " bra ", done);
    return;
  }
  const std::string again = p.label("w_item"), part_o = p.label("w_o"), check = p.label("w_check"),
                    have = p.label("w_have");
  auto load_slot = [&](int slot) {
    const int at = c.l.table_offset + 16 * slot;
    p.op("ld.shared.u32 ", w.unit, ", [", c.smem, "+", at, "]");
    p.op("ld.shared.u32 ", w.kb0, ", [", c.smem, "+", at + 4, "]");
    p.op("ld.shared.u32 ", w.kb1, ", [", c.smem, "+", at + 8, "]");
  };
  p.place(again);
  {
    // Whole tile `it` while there is one: unit ctaid + it nctaid; then P (item j0, the
    // first past them) and O (j0 + 1, the last).
    const std::string g = p.reg('r'), cta = p.reg('r'), dp = p.reg('r'), in = p.reg('p'),
                      left = p.reg('r'), t = p.reg('r'), j0 = p.reg('r'), is_p = p.reg('p');
    p.op("mov.u32 ", g, ", %nctaid.x");
    p.op("mov.u32 ", cta, ", %ctaid.x");
    p.op("mad.lo.u32 ", w.unit, ", ", w.it, ", ", g, ", ", cta);
    p.op("mov.u32 ", w.kb0, ", 0");
    p.op("mov.u32 ", w.kb1, ", ", c.k_blocks);
    p.op("ld.param.u32 ", dp, ", [", c.p_dp_units, "]");
    p.op("setp.lt.u32 ", in, ", ", w.unit, ", ", dp);
    p.op("@", in, " bra ", have);
    // j0 = ceil((dp - cta) / g): this CTA's count of whole tiles (cta < g <= dp)
    p.op("sub.u32 ", left, ", ", dp, ", ", cta);
    p.op("add.u32 ", t, ", ", left, ", ", g);
    p.op("sub.u32 ", t, ", ", t, ", 1");
    p.op("div.u32 ", j0, ", ", t, ", ", g);
    p.op("setp.ne.u32 ", is_p, ", ", w.it, ", ", j0);
    p.op("@", is_p, " bra ", part_o);
    load_slot(0);
    p.op("bra ", check);
  }
  p.place(part_o);
  p.op("setp.eq.u32 ", w.last, ", ", w.it, ", ", w.it);
  load_slot(1);
  p.place(check);
  {
    const std::string empty = p.reg('p');
    p.op("setp.eq.u32 ", empty, ", ", w.kb0, ", ", w.kb1);
    p.op("@!", empty, " bra ", have);
    p.op("@", w.last, " bra ", done);
    p.op("add.u32 ", w.it, ", ", w.it, ", 1");
    p.op("bra ", again);
  }
  p.place(have);
}

// At the end of the work loop: on to the loop's head, `head` (units `step` further without
// split tail), or to `done` after the CTA's last item.
void work_next(Ptx& p, const Common& c, const Work& w, const std::string& step,
               const std::string& head, const std::string& done) {
  if (!c.split_tail) {
    p.op("add.u32 ", w.unit, ", ", w.unit, ", ", step);
    p.op("bra ", head);
    return;
  }
  p.op("@", w.last, " bra ", done);
  p.op("add.u32 ", w.it, ", ", w.it, ", 1");
  p.op("bra ", head);
}

// CTA `cta`'s flag and this thread's part of its workspace slot: thread 128 + t keeps its
// accumulators 4i .. 4i + 3 at 16 (256 i + t) bytes, so that each v4 access of the 256
// threads covers 4 KiB in one piece.
void split_addresses(Ptx& p, const Common& c, const std::string& cta, const std::string& tid,
                     std::string& flag, std::string& part) {
  const std::string t = p.reg('r');
  const std::string fp = p.reg('d'), wp = p.reg('d'), fo = p.reg('d'), wo = p.reg('d'),
                    to = p.reg('d'), fg = p.reg('d'), wg = p.reg('d'), wt = p.reg('d');
  p.op("ld.param.u64 ", fp, ", [", c.p_flags, "]");
  p.op("ld.param.u64 ", wp, ", [", c.p_work, "]");
  p.op("cvta.to.global.u64 ", fg, ", ", fp);
  p.op("cvta.to.global.u64 ", wg, ", ", wp);
  p.op("mul.wide.u32 ", fo, ", ", cta, ", 8");
  p.op("mul.wide.u32 ", wo, ", ", cta, ", ", kSplitTileBytes);
  p.op("sub.u32 ", t, ", ", tid, ", 128");
  p.op("mul.wide.u32 ", to, ", ", t, ", 16");
  flag = p.reg('d');
  part = p.reg('d');
  p.op("add.s64 ", flag, ", ", fg, ", ", fo);
  p.op("add.s64 ", wt, ", ", wg, ", ", wo);
  p.op("add.s64 ", part, ", ", wt, ", ", to);
}

// A set flag: (sequence << 32) | 1.
std::string flag_value(Ptx& p, const Common& c) {
  const std::string seq = p.reg('r'), s64 = p.reg('d'), hi = p.reg('d'), v = p.reg('d');
  p.op("ld.param.u32 ", seq, ", [", c.p_seq, "]");
  p.op("cvt.u64.u32 ", s64, ", ", seq);
  p.op("shl.b64 ", hi, ", ", s64, ", 32");
  p.op("or.b64 ", v, ", ", hi, ", 1");
  return v;
}

// A part this CTA does not own (it ends before its tile does): its accumulators to the
// CTA's workspace slot and the CTA's flag set (release, GPU scope, by thread 128 after the
// named barrier), in place of the epilogue; then on to `next`.
void store_part(Ptx& p, const Common& c, const Work& w, const std::string& tid,
                const std::string& next) {
  const std::string ends = p.reg('p'), owned = p.label("sk_owned");
  p.op("setp.eq.u32 ", ends, ", ", w.kb1, ", ", c.k_blocks);
  p.op("@", ends, " bra ", owned);
  const std::string cta = p.reg('r');
  p.op("mov.u32 ", cta, ", %ctaid.x");
  std::string flag, part;
  split_addresses(p, c, cta, tid, flag, part);
  for (int i = 0; i < 32; ++i)
    p.op("st.global.cg.v4.f32 [", part, "+", 4096 * i, "], {%acc", 4 * i, ", %acc", 4 * i + 1,
         ", %acc", 4 * i + 2, ", %acc", 4 * i + 3, "}");
  const std::string value = flag_value(p, c);
  const std::string leader = p.reg('p');
  p.op("setp.eq.u32 ", leader, ", ", tid, ", 128");
  p.op("bar.sync ", kSplitBarrier, ", 256");
  p.op("@", leader, " st.release.gpu.global.u64 [", flag, "], ", value);
  p.op("bra ", next);
  p.place(owned);
}

// The part this CTA owns, when it does not start its tile (kb0 > 0): the accumulators of
// the tile's other parts added to this thread's, CTA c - 1's first, each once its flag is
// set (thread 128 waits, acquire at GPU scope; the named barrier lets the others read).
void add_parts(Ptx& p, const Common& c, const Work& w, const std::string& tid) {
  const std::string whole = p.reg('p'), done = p.label("sk_added"), loop = p.label("sk_add");
  p.op("setp.eq.u32 ", whole, ", ", w.kb0, ", 0");
  p.op("@", whole, " bra ", done);
  const std::string count = p.reg('r'), from = p.reg('r');
  p.op("ld.shared.u32 ", count, ", [", c.smem, "+", c.l.table_offset + 16 + 12, "]");
  p.op("mov.u32 ", from, ", %ctaid.x");
  p.place(loop);
  {
    const std::string none = p.reg('p');
    p.op("setp.eq.u32 ", none, ", ", count, ", 0");
    p.op("@", none, " bra ", done);
  }
  p.op("sub.u32 ", from, ", ", from, ", 1");
  p.op("sub.u32 ", count, ", ", count, ", 1");
  std::string flag, part;
  split_addresses(p, c, from, tid, flag, part);
  const std::string want = flag_value(p, c);
  const std::string leader = p.reg('p'), got = p.reg('d'), wait = p.reg('p');
  const std::string spin = p.label("sk_spin"), ready = p.label("sk_ready");
  p.op("setp.eq.u32 ", leader, ", ", tid, ", 128");
  p.op("@!", leader, " bra ", ready);
  p.place(spin);
  p.op("ld.acquire.gpu.global.u64 ", got, ", [", flag, "]");
  p.op("setp.ne.u64 ", wait, ", ", got, ", ", want);
  p.op("@", wait, " nanosleep.u32 32");
  p.op("@", wait, " bra ", spin);
  p.place(ready);
  p.op("bar.sync ", kSplitBarrier, ", 256");
  // Four v4 loads at a time, then their 16 additions.
  for (int i0 = 0; i0 < 32; i0 += 4) {
    std::string v[4][4];
    for (int i = 0; i < 4; ++i) {
      for (std::string& r : v[i]) r = p.reg('f');
      p.op("ld.global.cg.v4.f32 {", v[i][0], ", ", v[i][1], ", ", v[i][2], ", ", v[i][3], "}, [",
           part, "+", 4096 * (i0 + i), "]");
    }
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        const int a = 4 * (i0 + i) + j;
        p.op("add.rn.f32 %acc", a, ", %acc", a, ", ", v[i][j]);
      }
  }
  p.op("bra ", loop);
  p.place(done);
}

void producer(Ptx& p, const Common& c, const std::string& tmap_a, const std::string& tmap_b) {
  const Layout& l = c.l;
  p.comment("producer: one thread issues the copies of every (tile, k block) of this CTA");
  const std::string stage = p.reg('r'), phase = p.reg('r');
  const std::string kb = p.reg('r'), m_blk = p.reg('r'), n_blk = p.reg('r'), m0 = p.reg('r'),
                    n0 = p.reg('r');
  const std::string unit_loop = p.label("p_unit"), k_loop = p.label("p_k"),
                    done_label = p.label("p_done");
  const bool multicast = c.cluster > 1;
  std::string mask;
  if (multicast) {
    mask = p.reg('h');
    p.op("mov.b16 ", mask, ", ", (1 << c.cluster) - 1);
  }
  const Work w = work_start(p, c);
  p.op("mov.u32 ", stage, ", 0");
  p.op("mov.u32 ", phase, ", 0");
  p.place(unit_loop);
  work_item(p, c, w, done_label);
  tile_coords(p, c, w.unit, m_blk, n_blk);
  p.op("shl.b32 ", m0, ", ", m_blk, ", ", log2_of(T::kM));
  p.op("shl.b32 ", n0, ", ", n_blk, ", ", log2_of(l.tile_n));
  p.op("mov.u32 ", kb, ", ", w.kb0);
  p.place(k_loop);
  {
    const std::string off = p.reg('r'), full = p.reg('r'), empty = p.reg('r'), par = p.reg('r');
    p.op("shl.b32 ", off, ", ", stage, ", 3");
    p.op("add.u32 ", full, ", ", c.bar_full, ", ", off);
    p.op("add.u32 ", empty, ", ", c.bar_empty, ", ", off);
    p.op("xor.b32 ", par, ", ", phase, ", 1");
    // With multicast, the stage is free once the consumers of every CTA of the cluster
    // have released it: this CTA writes half of B into the peer's stage too.
    wait_parity(p, empty, par, "p_wait_empty");
    p.op("mbarrier.arrive.expect_tx.shared::cta.b64 _, [", full, "], ", l.stage_bytes);
    const std::string t = p.reg('r'), dst_a = p.reg('r'), dst_b = p.reg('r'), k0 = p.reg('r');
    p.op("mul.lo.u32 ", t, ", ", stage, ", ", kABytes);
    p.op("add.u32 ", dst_a, ", ", c.smem, ", ", t);
    const std::string t2 = p.reg('r'), t3 = p.reg('r');
    p.op("mul.lo.u32 ", t2, ", ", stage, ", ", l.b_bytes);
    p.op("add.u32 ", t3, ", ", c.smem, ", ", t2);
    p.op("add.u32 ", dst_b, ", ", t3, ", ", l.stages * kABytes);
    p.op("shl.b32 ", k0, ", ", kb, ", ", log2_of(l.k_step));
    // Coordinates innermost first: A is {k, m}, B is {n, k}.
    p.op("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [", dst_a,
         "], [", tmap_a, ", {", k0, ", ", m0, "}], [", full, "]");
    const int boxes = l.tile_n / l.box_n;
    if (!multicast) {
      for (int j = 0; j < boxes; ++j) {
        const std::string nj = p.reg('r'), dj = p.reg('r');
        p.op("add.u32 ", nj, ", ", n0, ", ", l.box_n * j);
        p.op("add.u32 ", dj, ", ", dst_b, ", ", j * l.box_bytes);
        p.op("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [", dj,
             "], [", tmap_b, ", {", nj, ", ", k0, "}], [", full, "]");
      }
    } else {
      // CTA `rank` loads boxes rank * per .. rank * per + per - 1 of B and writes each into
      // the same place of every CTA of the cluster, completing bytes on each CTA's full[s].
      const int per = boxes / c.cluster;
      const std::string first_box = p.reg('r'), n_first = p.reg('r'), d_first = p.reg('r');
      const std::string t4 = p.reg('r'), t5 = p.reg('r');
      p.op("mul.lo.u32 ", first_box, ", ", c.rank, ", ", per);
      p.op("shl.b32 ", t4, ", ", first_box, ", ", log2_of(l.box_n));
      p.op("add.u32 ", n_first, ", ", n0, ", ", t4);
      p.op("mul.lo.u32 ", t5, ", ", first_box, ", ", l.box_bytes);
      p.op("add.u32 ", d_first, ", ", dst_b, ", ", t5);
      for (int j = 0; j < per; ++j) {
        const std::string nj = p.reg('r'), dj = p.reg('r');
        p.op("add.u32 ", nj, ", ", n_first, ", ", l.box_n * j);
        p.op("add.u32 ", dj, ", ", d_first, ", ", j * l.box_bytes);
        p.op(
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
            ".multicast::cluster [",
            dj, "], [", tmap_b, ", {", nj, ", ", k0, "}], [", full, "], ", mask);
      }
    }
  }
  advance(p, l.stages, stage, phase);
  {
    const std::string more = p.reg('p');
    p.op("add.u32 ", kb, ", ", kb, ", 1");
    p.op("setp.lt.u32 ", more, ", ", kb, ", ", w.kb1);
    p.op("@", more, " bra ", k_loop);
  }
  work_next(p, c, w, w.step, unit_loop, done_label);
  p.place(done_label);
  if (multicast) {
    // The peer CTA's consumers arrive on this CTA's empty barriers until their last stage:
    // this CTA stays (through this thread) until every stage's last release has come.
    for (int s = 0; s < l.stages; ++s) {
      const std::string off = p.reg('r'), empty = p.reg('r'), par = p.reg('r');
      p.op("shl.b32 ", off, ", ", stage, ", 3");
      p.op("add.u32 ", empty, ", ", c.bar_empty, ", ", off);
      p.op("xor.b32 ", par, ", ", phase, ", 1");
      wait_parity(p, empty, par, "p_wait_tail");
      advance(p, l.stages, stage, phase);
    }
  }
  p.op("bra ", c.exit);
}

// 4 x 4 transpose of 32-bit words across the 4 lanes of a quad (lane bits b1, b0 given as
// predicates): lane q's x[i] becomes lane i's x[q]. Two butterfly rounds, each swapping
// the two words whose index bit differs from the lane's bit with the partner lane. With
// `both` false, only the second round: lane q (q even) then holds lane q's and lane
// q + 1's x[0] in x[0], x[1] and their x[2] in x[2], x[3]; lane q + 1 their x[1] and x[3]
// in the same places.
void quad_transpose(Ptx& p, std::string (&x)[4], const std::string& b1, const std::string& b0,
                    bool both = true) {
  auto sel = [&](const std::string& pred, const std::string& a, const std::string& b) {
    const std::string r = p.reg('r');
    p.op("selp.b32 ", r, ", ", a, ", ", b, ", ", pred);
    return r;
  };
  auto swap = [&](const std::string& v, int mask) {
    const std::string r = p.reg('r');
    p.op("shfl.sync.bfly.b32 ", r, ", ", v, ", ", mask, ", 0x1f, 0xffffffff");
    return r;
  };
  // Index bit 1 against lane bit 1 (partner lane q ^ 2): words {0, 1} <-> {2, 3}.
  if (both) {
    const std::string lo = swap(sel(b1, x[0], x[2]), 2), hi = swap(sel(b1, x[1], x[3]), 2);
    const std::string y0 = sel(b1, lo, x[0]), y1 = sel(b1, hi, x[1]);
    const std::string y2 = sel(b1, x[2], lo), y3 = sel(b1, x[3], hi);
    x[0] = y0, x[1] = y1, x[2] = y2, x[3] = y3;
  }
  // Index bit 0 against lane bit 0 (partner lane q ^ 1): words {0, 2} <-> {1, 3}.
  {
    const std::string a = swap(sel(b0, x[0], x[1]), 1), b = swap(sel(b0, x[2], x[3]), 1);
    const std::string y0 = sel(b0, a, x[0]), y1 = sel(b0, x[1], a);
    const std::string y2 = sel(b0, b, x[2]), y3 = sel(b0, x[3], b);
    x[0] = y0, x[1] = y1, x[2] = y2, x[3] = y3;
  }
}

// Where this thread's part of a BF16 tile (m_blk, n_blk) goes: D at its rows row_t + 8 r
// (+ 64 for the ping-pong tile's second m64 block), dr[r], at its first column after the
// quad's exchange; and the bias at the thread's first column pair (bp).
struct TileOut {
  std::string dr[4];
  std::string bp;
};

TileOut tile_out(Ptx& p, const Common& c, const std::string& d, const std::string& bias,
                 const std::string& n, const std::string& m_blk, const std::string& n_blk,
                 const std::string& row_t, const std::string& quad) {
  const Layout& l = c.l;
  const int row_sets = l.pingpong ? 4 : 2;
  TileOut o;
  o.bp = p.reg('d');
  const std::string m0 = p.reg('r'), n0 = p.reg('r'), row = p.reg('r'), colq = p.reg('r');
  const std::string col = p.reg('r'), rn = p.reg('d'), c64 = p.reg('d'), e = p.reg('d'),
                    eb = p.reg('d'), bcol = p.reg('r'), bq = p.reg('r'), boff = p.reg('d');
  p.op("shl.b32 ", m0, ", ", m_blk, ", ", log2_of(T::kM));
  p.op("shl.b32 ", n0, ", ", n_blk, ", ", log2_of(l.tile_n));
  p.op("add.u32 ", row, ", ", m0, ", ", row_t);
  // After the exchange this thread's first column in each group of 32: 8 (l%4) (full
  // exchange), or 8 (l%2) + 2 (l%4 & 2) (half).
  if (c.store_width == 16) {
    p.op("shl.b32 ", colq, ", ", quad, ", 3");
  } else {
    const std::string q1 = p.reg('r'), q2 = p.reg('r'), a = p.reg('r'), b = p.reg('r');
    p.op("and.b32 ", q1, ", ", quad, ", 1");
    p.op("and.b32 ", q2, ", ", quad, ", 2");
    p.op("shl.b32 ", a, ", ", q1, ", 3");
    p.op("shl.b32 ", b, ", ", q2, ", 1");
    p.op("add.u32 ", colq, ", ", a, ", ", b);
  }
  p.op("add.u32 ", col, ", ", n0, ", ", colq);
  p.op("mul.wide.u32 ", rn, ", ", row, ", ", n);
  p.op("cvt.u64.u32 ", c64, ", ", col);
  p.op("add.s64 ", e, ", ", rn, ", ", c64);
  p.op("shl.b64 ", eb, ", ", e, ", 1");
  o.dr[0] = p.reg('d');
  p.op("add.s64 ", o.dr[0], ", ", d, ", ", eb);
  for (int rs = 1; rs < row_sets; ++rs) {
    const std::string stride = p.reg('d');
    o.dr[rs] = p.reg('d');
    p.op("mul.wide.u32 ", stride, ", ", n, ", ", 2 * (8 * (rs % 2) + 64 * (rs / 2)));
    p.op("add.s64 ", o.dr[rs], ", ", o.dr[0], ", ", stride);
  }
  p.op("shl.b32 ", bq, ", ", quad, ", 1");
  p.op("add.u32 ", bcol, ", ", n0, ", ", bq);
  p.op("mul.wide.u32 ", boff, ", ", bcol, ", ", c.bias_bf16 ? 2 : 4);
  p.op("add.s64 ", o.bp, ", ", bias, ", ", boff);
  return o;
}

// The lane bits of `quad` as predicates (b1: bit 1, b0: bit 0), for quad_transpose.
void quad_bits(Ptx& p, const std::string& quad, std::string& b1, std::string& b0) {
  b1 = p.reg('p');
  b0 = p.reg('p');
  const std::string t1 = p.reg('r'), t0 = p.reg('r');
  p.op("and.b32 ", t1, ", ", quad, ", 2");
  p.op("setp.ne.u32 ", b1, ", ", t1, ", 0");
  p.op("and.b32 ", t0, ", ", quad, ", 1");
  p.op("setp.ne.u32 ", b0, ", ", t0, ", 0");
}

// The bias of this thread's columns in column group g (blocks 4g .. 4g + 3 of 8 columns):
// bv[ii][j] for column 8 (4g + ii) + 2 (l%4) + j. A BF16 bias is widened exactly: its two
// values of one 32-bit load moved to the upper halves of two f32.
void load_bias(Ptx& p, const Common& c, const std::string& bp, int g, std::string (&bv)[4][2]) {
  for (int ii = 0; ii < 4; ++ii) {
    bv[ii][0] = p.reg('f');
    bv[ii][1] = p.reg('f');
    if (!c.bias_bf16) {
      p.op("ld.global.nc.v2.f32 {", bv[ii][0], ", ", bv[ii][1], "}, [", bp, "+", 32 * (4 * g + ii),
           "]");
      continue;
    }
    const std::string w = p.reg('r'), lo = p.reg('r'), hi = p.reg('r');
    p.op("ld.global.nc.b32 ", w, ", [", bp, "+", 16 * (4 * g + ii), "]");
    p.op("shl.b32 ", lo, ", ", w, ", 16");
    p.op("and.b32 ", hi, ", ", w, ", 0xFFFF0000");
    p.op("mov.b32 ", bv[ii][0], ", ", lo);
    p.op("mov.b32 ", bv[ii][1], ", ", hi);
  }
}

// The accumulator of row set rs (rows + 8 (rs % 2), + 64 (rs / 2)), column block i, word j.
int acc_index(int rs, int i, int j) { return 64 * (rs / 2) + 4 * i + 2 * (rs % 2) + j; }

// act(v) as BF16 for 8 pre-activations (bias added) of one row of column group g, v[2 ii +
// j] at column 8 (4g + ii) + 2 (l%4) + j, stored at [row + 64 g].
void store_group(Ptx& p, const Common& c, Activation act, const std::string (&v)[8],
                 const std::string& row, int g, const std::string& b1, const std::string& b0) {
  std::vector<Activated> y;
  if (c.reciprocal_group > 1 && (act == Activation::Gelu || act == Activation::Silu)) {
    y = activate_grouped(p, act, v, c.reciprocal_group);
  } else {
    for (const std::string& x : v) y.push_back(activate(p, act, x, c.split_division));
    if (c.split_division) split_division_check(p, y);
  }
  std::string words[4];
  for (int ii = 0; ii < 4; ++ii) {
    // cvt.rn.bf16x2.f32 d, a, b puts a in the upper half: the higher column goes first.
    words[ii] = p.reg('r');
    p.op("cvt.rn.bf16x2.f32 ", words[ii], ", ", y[2 * ii + 1].y, ", ", y[2 * ii].y);
  }
  // Lane q of a quad holds columns 8 (4g + i) + 2q, +1 for i = 0..3. After the full
  // exchange it holds columns 8 (4g + q) .. 8 (4g + q) + 7: 16 bytes at 64 g + 16 q.
  // After the half exchange, columns 8 (4g + i) + 2 (q & 2) .. + 3 for i = q & 1 and
  // i = 2 + (q & 1): 8 bytes at 64 g + 16 (q & 1) + 4 (q & 2), and 32 bytes further.
  if (c.store_width == 16) {
    quad_transpose(p, words, b1, b0);
    p.op("st.global.v4.b32 [", row, "+", 64 * g, "], {", words[0], ", ", words[1], ", ", words[2],
         ", ", words[3], "}");
  } else {
    quad_transpose(p, words, b1, b0, false);
    p.op("st.global.v2.b32 [", row, "+", 64 * g, "], {", words[0], ", ", words[1], "}");
    p.op("st.global.v2.b32 [", row, "+", 64 * g + 32, "], {", words[2], ", ", words[3], "}");
  }
}

// D = act(acc + bias) as BF16 for column groups 0 .. groups - 1 of this thread's rows.
// Accumulator layout of m64nNk16, thread t of the warpgroup, warp w, lane l: d[4i + j], row
// 16w + l/4 (+8 for j = 2, 3), column 8i + 2(l%4) (+1 for j = 1, 3); the ping-pong tile's
// rows 64..127 are in acc64..acc127.
void epilogue(Ptx& p, const Common& c, Activation act, const TileOut& o, int groups,
              const std::string& b1, const std::string& b0) {
  p.comment("epilogue: D = act(acc + bias) as BF16");
  const int row_sets = c.l.pingpong ? 4 : 2;
  for (int g = 0; g < groups; ++g) {
    std::string bv[4][2];
    load_bias(p, c, o.bp, g, bv);
    for (int rs = 0; rs < row_sets; ++rs) {
      std::string v[8];
      for (int ii = 0; ii < 4; ++ii)
        for (int j = 0; j < 2; ++j) {
          v[2 * ii + j] = p.reg('f');
          p.op("add.rn.f32 ", v[2 * ii + j], ", %acc", acc_index(rs, 4 * g + ii, j), ", ",
               bv[ii][j]);
        }
      store_group(p, c, act, v, o.dr[rs], g, b1, b0);
    }
  }
}

// The deferred epilogue (cooperative BF16, Sm90GemmConfig::deferred_groups): the tile's
// last `groups` column groups wait in %pv as acc + bias, while the next tile's products run.
// Deferred group gi (0 .. groups - 1) is column group kGroups - groups + gi, in %pv16gi ..
// %pv16gi+15. A unit is one row set of one group: unit u = 2 gi + rs, in %pv16gi+8rs .. +7.
// `pending` counts the units done (units(): none left); `rows` are the tile's two row
// addresses.
struct Deferred {
  int groups = 0;
  std::string pending;
  std::string rows[2];
  int units() const { return 2 * groups; }
};
constexpr int kGroups = Sm90GemmTile::kN / 32;  // column groups of a cooperative tile

std::string pv(int gi, int rs, int k) { return "%pv" + std::to_string(16 * gi + 8 * rs + k); }

// Saves the deferred groups of the tile just computed (acc + bias) and its row addresses.
void defer_groups(Ptx& p, const Common& c, const TileOut& o, const Deferred& df) {
  p.comment("deferred epilogue: keep acc + bias of the last column groups");
  for (int gi = 0; gi < df.groups; ++gi) {
    const int g = kGroups - df.groups + gi;
    std::string bv[4][2];
    load_bias(p, c, o.bp, g, bv);
    for (int rs = 0; rs < 2; ++rs)
      for (int ii = 0; ii < 4; ++ii)
        for (int j = 0; j < 2; ++j)
          p.op("add.rn.f32 ", pv(gi, rs, 2 * ii + j), ", %acc", acc_index(rs, 4 * g + ii, j), ", ",
               bv[ii][j]);
  }
  p.op("mov.b64 ", df.rows[0], ", ", o.dr[0]);
  p.op("mov.b64 ", df.rows[1], ", ", o.dr[1]);
  p.op("mov.u32 ", df.pending, ", 0");
}

// Runs deferred unit `pending` (which must be one left) and counts it done.
void deferred_unit(Ptx& p, const Common& c, Activation act, const Deferred& df,
                   const std::string& b1, const std::string& b0) {
  const std::string done = p.label("dfr_done");
  std::vector<std::string> at(df.units());
  for (int u = 1; u < df.units(); ++u) {
    const std::string is = p.reg('p');
    at[u] = p.label("dfr_unit");
    p.op("setp.eq.u32 ", is, ", ", df.pending, ", ", u);
    p.op("@", is, " bra ", at[u]);
  }
  for (int u = 0; u < df.units(); ++u) {
    if (u > 0) p.place(at[u]);
    const int gi = u / 2, rs = u % 2;
    std::string v[8];
    for (int k = 0; k < 8; ++k) v[k] = pv(gi, rs, k);
    store_group(p, c, act, v, df.rows[rs], kGroups - df.groups + gi, b1, b0);
    if (u + 1 < df.units()) p.op("bra ", done);
  }
  p.place(done);
  p.op("add.u32 ", df.pending, ", ", df.pending, ", 1");
}

// One BF16 k block's products: A and B from the stage through descriptors (da: A's, at
// this stage; desc_b0: B's at stage 0), 64 / 16 k16 steps.
void bf16_products(Ptx& p, const Common& c, const std::string& stage, const std::string& da,
                   const std::string& desc_b0, const std::string& accumulate,
                   const std::string& always) {
  const Layout& l = c.l;
  const std::string s64 = p.reg('d'), ob = p.reg('d'), db = p.reg('d');
  p.op("cvt.u64.u32 ", s64, ", ", stage);
  p.op("mul.lo.u64 ", ob, ", ", s64, ", ", l.b_bytes / 16);
  p.op("add.s64 ", db, ", ", desc_b0, ", ", ob);
  p.op("wgmma.fence.sync.aligned");
  for (int k = 0; k < l.k_step / 16; ++k) {
    std::string dak = da, dbk = db;
    if (k > 0) {
      dak = p.reg('d');
      dbk = p.reg('d');
      p.op("add.s64 ", dak, ", ", da, ", ", 2 * k);    // 32 bytes per k16 along the row
      p.op("add.s64 ", dbk, ", ", db, ", ", 128 * k);  // 16 rows of 128 bytes per k16
    }
    // imm-scale-a 1, imm-scale-b 1, imm-trans-a 0 (K-major), imm-trans-b 1 (N-major).
    const std::string& scale_d = k == 0 ? accumulate : always;
    if (!l.pingpong) {
      p.op("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 ", accumulator_list(0, 128), ", ",
           dak, ", ", dbk, ", ", scale_d, ", 1, 1, 0, 1");
    } else {
      // Rows 0..63, then rows 64..127 (8 KiB further into the A stage).
      const std::string dak2 = p.reg('d');
      p.op("add.s64 ", dak2, ", ", dak, ", ", 64 * 128 / 16);
      p.op("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 ", accumulator_list(0, 64), ", ",
           dak, ", ", dbk, ", ", scale_d, ", 1, 1, 0, 1");
      p.op("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 ", accumulator_list(64, 64), ", ",
           dak2, ", ", dbk, ", ", scale_d, ", 1, 1, 0, 1");
    }
  }
}

// TF32 fragment registers: set `set` (0, 1), k8 step s (0..3), word i (0..7).
std::string frag(int set, int s, int i) { return "%fa" + std::to_string(32 * set + 8 * s + i); }

// The byte offsets, from a B stage, of the two 16-byte words this thread loads per k8 step
// (k rows t and t + 4 of the step; TF32 above): warp w's box, row t (+ 4), and the chunk
// chunk(g) = (g >> 1) | (g & 1) << 2 of it, swizzled.
// `chunk` gets chunk(g): this thread's 4 columns of each 32 are 4 chunk(g) .. + 3.
void tf32_fragment_offsets(Ptx& p, const std::string& box_index, const std::string& lane,
                           const std::string& quad, std::string (&off)[2], std::string& chunk) {
  const std::string g = p.reg('r'), g1 = p.reg('r'), g0 = p.reg('r'), g0s = p.reg('r'),
                    box = p.reg('r');
  chunk = p.reg('r');
  p.op("shr.u32 ", g, ", ", lane, ", 2");
  p.op("shr.u32 ", g1, ", ", g, ", 1");
  p.op("and.b32 ", g0, ", ", g, ", 1");
  p.op("shl.b32 ", g0s, ", ", g0, ", 2");
  p.op("or.b32 ", chunk, ", ", g1, ", ", g0s);
  p.op("shl.b32 ", box, ", ", box_index, ", 12");  // 4 KiB per box of 32 columns
  for (int h = 0; h < 2; ++h) {
    const std::string row = p.reg('r'), sw = p.reg('r'), a = p.reg('r'), b = p.reg('r'),
                      t = p.reg('r');
    p.op("add.u32 ", row, ", ", quad, ", ", 4 * h);
    p.op("xor.b32 ", sw, ", ", chunk, ", ", row);
    p.op("shl.b32 ", a, ", ", row, ", 7");
    p.op("shl.b32 ", b, ", ", sw, ", 4");
    p.op("add.u32 ", t, ", ", box, ", ", a);
    off[h] = p.reg('r');
    p.op("add.u32 ", off[h], ", ", t, ", ", b);
  }
}

// One TF32 k block's products: this thread's B fragments (B^T's rows, as wgmma's A) from the
// stage into set `set`, then per k8 step two m64n128k8 with A's tile (as wgmma's B, K-major)
// through the descriptor da.
void tf32_products(Ptx& p, const Common& c, int set, const std::string& stage,
                   const std::string& da, const std::string (&frag_off)[2],
                   const std::string& accumulate, const std::string& always) {
  const Layout& l = c.l;
  const std::string t = p.reg('r'), base = p.reg('r');
  p.op("mul.lo.u32 ", t, ", ", stage, ", ", l.b_bytes);
  p.op("add.u32 ", base, ", ", c.smem, ", ", t);
  std::string addr[2];
  for (int h = 0; h < 2; ++h) {
    const std::string u = p.reg('r');
    p.op("add.u32 ", u, ", ", base, ", ", frag_off[h]);
    addr[h] = p.reg('r');
    p.op("add.u32 ", addr[h], ", ", u, ", ", l.stages * kABytes);
  }
  for (int s = 0; s < l.k_step / 8; ++s)
    for (int h = 0; h < 2; ++h)
      p.op("ld.shared.v4.b32 {", frag(set, s, 4 * h), ", ", frag(set, s, 4 * h + 1), ", ",
           frag(set, s, 4 * h + 2), ", ", frag(set, s, 4 * h + 3), "}, [", addr[h], "+", 1024 * s,
           "]");
  p.op("wgmma.fence.sync.aligned");
  for (int s = 0; s < l.k_step / 8; ++s) {
    std::string das = da;
    if (s > 0) {
      das = p.reg('d');
      p.op("add.s64 ", das, ", ", da, ", ", 2 * s);  // 32 bytes per k8 along A's rows
    }
    const std::string& scale_d = s == 0 ? accumulate : always;
    // Words 0, 1 (rows t) and 4, 5 (rows t + 4) are this thread's fragment of the first
    // m64 block (columns 0, 1 of its four), words 2, 3 and 6, 7 of the second.
    for (int half = 0; half < 2; ++half)
      p.op("wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 ", accumulator_list(64 * half, 64),
           ", {", frag(set, s, 2 * half), ", ", frag(set, s, 2 * half + 1), ", ",
           frag(set, s, 2 * half + 4), ", ", frag(set, s, 2 * half + 5), "}, ", das, ", ", scale_d,
           ", 1, 1");
  }
}

// D = act(acc + bias) as F32 for the TF32 kernel's tile (m_blk, n_blk). The accumulators
// hold D^T: thread (warp w, lane l = 4g + t) has, for each column 8i + 2t + j (j = 0, 1) of
// the two m64 blocks (rows of D: m), the rows 16w + g and + 8 of each block, which are
// columns 32w + 4 chunk(g) + 0, 1 (first block) and + 2, 3 (second) of D: acc[4i + j],
// acc[4i + 2 + j], acc[64 + 4i + j], acc[64 + 4i + 2 + j]. So each row m of D gets 16
// consecutive bytes from this thread, and a warp's 8 g cover 128 consecutive bytes.
void epilogue_f32(Ptx& p, const Common& c, Activation act, const std::string& d,
                  const std::string& bias, const std::string& n, const std::string& m_blk,
                  const std::string& n_blk, const std::string& box_index, const std::string& quad,
                  const std::string& chunk) {
  const Layout& l = c.l;
  p.comment("epilogue: D = act(acc + bias) as F32");
  const std::string m0 = p.reg('r'), n0 = p.reg('r'), ws = p.reg('r'), cs = p.reg('r'),
                    t1 = p.reg('r'), col = p.reg('r'), qs = p.reg('r'), row = p.reg('r');
  p.op("shl.b32 ", m0, ", ", m_blk, ", ", log2_of(T::kM));
  p.op("shl.b32 ", n0, ", ", n_blk, ", ", log2_of(l.tile_n));
  p.op("shl.b32 ", ws, ", ", box_index, ", 5");
  p.op("shl.b32 ", cs, ", ", chunk, ", 2");
  p.op("add.u32 ", t1, ", ", n0, ", ", ws);
  p.op("add.u32 ", col, ", ", t1, ", ", cs);
  p.op("shl.b32 ", qs, ", ", quad, ", 1");
  p.op("add.u32 ", row, ", ", m0, ", ", qs);
  const std::string rn = p.reg('d'), c64 = p.reg('d'), e = p.reg('d'), eb = p.reg('d'),
                    row_bytes = p.reg('d'), step = p.reg('d'), boff = p.reg('d'), bp = p.reg('d');
  p.op("mul.wide.u32 ", rn, ", ", row, ", ", n);
  p.op("cvt.u64.u32 ", c64, ", ", col);
  p.op("add.s64 ", e, ", ", rn, ", ", c64);
  p.op("shl.b64 ", eb, ", ", e, ", 2");
  p.op("mul.wide.u32 ", row_bytes, ", ", n, ", 4");
  p.op("mul.wide.u32 ", step, ", ", n, ", 32");  // 8 rows
  p.op("mul.wide.u32 ", boff, ", ", col, ", 4");
  p.op("add.s64 ", bp, ", ", bias, ", ", boff);
  std::string bv[4];
  for (std::string& v : bv) v = p.reg('f');
  p.op("ld.global.nc.v4.f32 {", bv[0], ", ", bv[1], ", ", bv[2], ", ", bv[3], "}, [", bp, "]");
  std::string dr[2];
  dr[0] = p.reg('d');
  dr[1] = p.reg('d');
  p.op("add.s64 ", dr[0], ", ", d, ", ", eb);
  p.op("add.s64 ", dr[1], ", ", dr[0], ", ", row_bytes);
  for (int i = 0; i < kTf32WarpgroupN / 8; ++i) {
    std::vector<Activated> y;
    for (int j = 0; j < 2; ++j)
      for (int q = 0; q < 4; ++q) {
        const int acc = 64 * (q / 2) + 4 * i + 2 * (q % 2) + j;
        const std::string v = p.reg('f');
        p.op("add.rn.f32 ", v, ", %acc", acc, ", ", bv[q]);
        y.push_back(activate(p, act, v, c.split_division));
      }
    if (c.split_division) split_division_check(p, y);
    for (int j = 0; j < 2; ++j) {
      p.op("st.global.v4.f32 [", dr[j], "], {", y[4 * j].y, ", ", y[4 * j + 1].y, ", ",
           y[4 * j + 2].y, ", ", y[4 * j + 3].y, "}");
      if (i + 1 < kTf32WarpgroupN / 8) p.op("add.s64 ", dr[j], ", ", dr[j], ", ", step);
    }
  }
}

void consumer(Ptx& p, const Common& c, Activation act, const std::string& tid, const std::string& d,
              const std::string& bias, const std::string& n) {
  const Layout& l = c.l;
  p.comment(l.pingpong ? "consumers: warpgroup cw = 0, 1 computes every other tile of this CTA"
                       : "consumers: warpgroup cw = 0, 1 computes rows 64 cw .. 64 cw + 63 of each "
                         "tile");
  const std::string cw = p.reg('r'), warp = p.reg('r'), lane = p.reg('r'), lane0 = p.reg('p');
  const std::string quad = p.reg('r');
  {
    const std::string t = p.reg('r'), t2 = p.reg('r');
    p.op("shr.u32 ", t, ", ", tid, ", 7");
    p.op("sub.u32 ", cw, ", ", t, ", 1");
    p.op("shr.u32 ", t2, ", ", tid, ", 5");
    p.op("and.b32 ", warp, ", ", t2, ", 3");
    p.op("and.b32 ", lane, ", ", tid, ", 31");
    p.op("setp.eq.u32 ", lane0, ", ", lane, ", 0");
    p.op("and.b32 ", quad, ", ", lane, ", 3");
  }
  // With multicast, each release also goes to the peer's empty barrier of the same stage.
  std::string peer_empty;
  if (c.cluster > 1) {
    const std::string peer = p.reg('r');
    peer_empty = p.reg('r');
    p.op("xor.b32 ", peer, ", ", c.rank, ", 1");
    p.op("mapa.shared::cluster.u32 ", peer_empty, ", ", c.bar_empty, ", ", peer);
  }
  auto release = [&](const std::string& pred, const std::string& stage_reg) {
    const std::string po = p.reg('r'), pe = p.reg('r');
    p.op("shl.b32 ", po, ", ", stage_reg, ", 3");
    p.op("add.u32 ", pe, ", ", c.bar_empty, ", ", po);
    p.op("@", pred, " mbarrier.arrive.shared::cta.b64 _, [", pe, "]");
    if (c.cluster > 1) {
      const std::string re = p.reg('r');
      p.op("add.u32 ", re, ", ", peer_empty, ", ", po);
      p.op("@", pred, " mbarrier.arrive.shared::cluster.b64 _, [", re, "]");
    }
  };
  // Descriptors of stage 0: cooperative, warpgroup cw reads A rows 64 cw .. 64 cw + 63;
  // ping-pong, both m64 blocks (the second 8 KiB further). TF32 uses A's only (as wgmma's B).
  const std::string desc_a0 = p.reg('d'), desc_b0 = p.reg('d');
  {
    const std::string addr = p.reg('r'), s = p.reg('r'), m = p.reg('r');
    const std::string w = p.reg('d');
    if (l.pingpong || l.tf32) {
      p.op("mov.u32 ", addr, ", ", c.smem);
    } else {
      const std::string t = p.reg('r');
      p.op("mul.lo.u32 ", t, ", ", cw, ", ", 64 * 128);
      p.op("add.u32 ", addr, ", ", c.smem, ", ", t);
    }
    p.op("shr.u32 ", s, ", ", addr, ", 4");
    p.op("and.b32 ", m, ", ", s, ", 16383");
    p.op("cvt.u64.u32 ", w, ", ", m);
    p.op("or.b64 ", desc_a0, ", ", w, ", ", kDescA);
    const std::string addr_b = p.reg('r'), sb = p.reg('r'), mb = p.reg('r');
    const std::string wb = p.reg('d');
    p.op("add.u32 ", addr_b, ", ", c.smem, ", ", l.stages * kABytes);
    p.op("shr.u32 ", sb, ", ", addr_b, ", 4");
    p.op("and.b32 ", mb, ", ", sb, ", 16383");
    p.op("cvt.u64.u32 ", wb, ", ", mb);
    p.op("or.b64 ", desc_b0, ", ", wb, ", ", kDescB);
  }
  // This thread's first row in a tile: row_t (then row_t + 8, and + 64 for ping-pong).
  const std::string row_t = p.reg('r');
  {
    const std::string b = p.reg('r'), cc = p.reg('r'), e = p.reg('r');
    p.op("shl.b32 ", b, ", ", warp, ", 4");
    p.op("shr.u32 ", cc, ", ", lane, ", 2");
    p.op("add.u32 ", e, ", ", b, ", ", cc);
    if (l.pingpong) {
      p.op("mov.u32 ", row_t, ", ", e);
    } else {
      const std::string a = p.reg('r');
      p.op("shl.b32 ", a, ", ", cw, ", 6");
      p.op("add.u32 ", row_t, ", ", a, ", ", e);
    }
  }
  // TF32: the box of 32 columns of B whose fragments this warp loads (cooperative: warpgroup
  // cw takes the tile's columns 128 cw .. 128 cw + 127, boxes 4 cw .. 4 cw + 3).
  std::string frag_off[2], chunk, box_index = warp;
  if (l.tf32 && !l.pingpong) {
    const std::string t = p.reg('r');
    box_index = p.reg('r');
    p.op("shl.b32 ", t, ", ", cw, ", 2");
    p.op("add.u32 ", box_index, ", ", t, ", ", warp);
  }
  if (l.tf32) tf32_fragment_offsets(p, box_index, lane, quad, frag_off, chunk);
  std::string b1, b0;
  if (!l.tf32) quad_bits(p, quad, b1, b0);
  Deferred df;
  if (c.deferred_groups > 0) {
    df.groups = c.deferred_groups;
    df.pending = p.reg('r');
    df.rows[0] = p.reg('d');
    df.rows[1] = p.reg('d');
    p.op("mov.u32 ", df.pending, ", ", df.units());
  }
  const std::string always = p.reg('p');
  p.op("setp.eq.u32 ", always, ", ", tid, ", ", tid);

  const std::string stage = p.reg('r'), phase = p.reg('r');
  const std::string kb = p.reg('r'), prev = p.reg('r'), m_blk = p.reg('r'), n_blk = p.reg('r');
  const std::string unit_loop = p.label("c_unit"), k_loop = p.label("c_k");
  const Work w = work_start(p, c);
  const std::string &unit = w.unit, &step = w.step;
  p.op("mov.u32 ", stage, ", 0");
  p.op("mov.u32 ", phase, ", 0");
  p.op("mov.u32 ", prev, ", 0");

  // Ping-pong: warpgroup cw takes this CTA's units cw, cw + 2, ... (in the order the
  // producer loads them). Between two of its tiles the ring moves on by the other's k
  // blocks: skip() advances stage and phase by k_blocks stages.
  std::string unit_step = step, waits, bar_mine, bar_other;
  std::function<void()> skip;
  if (l.pingpong) {
    unit_step = p.reg('r');
    p.op("shl.b32 ", unit_step, ", ", step, ", 1");
    const std::string t = p.reg('r');
    p.op("mul.lo.u32 ", t, ", ", cw, ", ", step);
    p.op("add.u32 ", unit, ", ", unit, ", ", t);
    const std::string kb_rem = p.reg('r'), kb_quot = p.reg('r'), kb_odd = p.reg('r');
    p.op("rem.u32 ", kb_rem, ", ", c.k_blocks, ", ", l.stages);
    p.op("div.u32 ", kb_quot, ", ", c.k_blocks, ", ", l.stages);
    p.op("and.b32 ", kb_odd, ", ", kb_quot, ", 1");
    skip = [&p, &l, stage, phase, kb_rem, kb_odd]() {
      const std::string wrap = p.reg('p');
      p.op("add.u32 ", stage, ", ", stage, ", ", kb_rem);
      p.op("setp.ge.u32 ", wrap, ", ", stage, ", ", l.stages);
      p.op("@", wrap, " sub.u32 ", stage, ", ", stage, ", ", l.stages);
      p.op("@", wrap, " xor.b32 ", phase, ", ", phase, ", 1");
      p.op("xor.b32 ", phase, ", ", phase, ", ", kb_odd);
    };
    // Warpgroup 1 starts after warpgroup 0's first tile.
    {
      const std::string second = p.reg('p'), skip_done = p.label("c_first_skip");
      p.op("setp.eq.u32 ", second, ", ", cw, ", 1");
      p.op("@!", second, " bra ", skip_done);
      skip();
      p.place(skip_done);
    }
    // The main loops take turns, ordered by two named barriers (id 1: warpgroup 0 may
    // start, id 2: warpgroup 1 may), each completed by 128 threads arriving (the other
    // warpgroup, once it has waited on the last full barrier of its tile) and 128 waiting.
    // Without this a warpgroup would wait on full barriers a whole tile ahead of the
    // ring, where a parity no longer tells the phases apart.
    waits = p.reg('r');
    bar_mine = p.reg('r');
    bar_other = p.reg('r');
    p.op("mov.u32 ", waits, ", ", cw);
    p.op("add.u32 ", bar_mine, ", ", cw, ", 1");
    p.op("sub.u32 ", bar_other, ", 2, ", cw);
  }

  p.place(unit_loop);
  const std::string flush = df.groups > 0 ? p.label("c_flush") : c.exit;
  work_item(p, c, w, flush);
  if (l.pingpong) {
    const std::string go = p.reg('p'), started = p.label("c_turn");
    p.op("setp.eq.u32 ", go, ", ", waits, ", 0");
    p.op("@", go, " bra ", started);
    p.op("bar.sync ", bar_mine, ", 256");
    p.place(started);
  }
  tile_coords(p, c, unit, m_blk, n_blk);
  p.op("mov.u32 ", kb, ", ", w.kb0);
  // One k block: wait for its stage, queue its products (TF32: into fragment set `set`),
  // release the previous k block's stage once its products are done, move on.
  auto k_block = [&](int set) {
    const std::string off = p.reg('r'), full = p.reg('r');
    p.op("shl.b32 ", off, ", ", stage, ", 3");
    p.op("add.u32 ", full, ", ", c.bar_full, ", ", off);
    wait_parity(p, full, phase, "c_wait_full");
    const std::string s64 = p.reg('d'), oa = p.reg('d'), da = p.reg('d'), accumulate = p.reg('p');
    p.op("cvt.u64.u32 ", s64, ", ", stage);
    p.op("mul.lo.u64 ", oa, ", ", s64, ", ", kABytes / 16);  // descriptor units of 16 bytes
    p.op("add.s64 ", da, ", ", desc_a0, ", ", oa);
    // The first k block of an item overwrites the accumulators (scale-d false).
    p.op("setp.ne.u32 ", accumulate, ", ", kb, ", ", w.kb0);
    if (l.tf32)
      tf32_products(p, c, set, stage, da, frag_off, accumulate, always);
    else
      bf16_products(p, c, stage, da, desc_b0, accumulate, always);
    p.op("wgmma.commit_group.sync.aligned");
    // While the products run: one unit of the previous tile's deferred epilogue, or at the
    // tile's last k block every unit left.
    if (df.groups > 0) {
      const std::string again = p.label("c_dfr"), dfr_end = p.label("c_dfr_end");
      const std::string none = p.reg('p'), next = p.reg('r'), last = p.reg('p');
      p.place(again);
      p.op("setp.ge.u32 ", none, ", ", df.pending, ", ", df.units());
      p.op("@", none, " bra ", dfr_end);
      deferred_unit(p, c, act, df, b1, b0);
      p.op("add.u32 ", next, ", ", kb, ", 1");
      p.op("setp.eq.u32 ", last, ", ", next, ", ", w.kb1);
      p.op("@", last, " bra ", again);
      p.place(dfr_end);
    }
    // The group of the previous k block has finished reading its stage (and, TF32, its
    // fragment set, which the next k block refills): release it.
    p.op("wgmma.wait_group.sync.aligned 1");
    const std::string rel = p.reg('p'), not_first = p.reg('p');
    p.op("setp.ne.u32 ", not_first, ", ", kb, ", ", w.kb0);
    p.op("and.pred ", rel, ", ", not_first, ", ", lane0);
    release(rel, prev);
    p.op("mov.u32 ", prev, ", ", stage);
    advance(p, l.stages, stage, phase);
    p.op("add.u32 ", kb, ", ", kb, ", 1");
  };
  p.place(k_loop);
  if (!l.tf32) {
    k_block(0);
    const std::string more = p.reg('p');
    p.op("setp.lt.u32 ", more, ", ", kb, ", ", w.kb1);
    p.op("@", more, " bra ", k_loop);
  } else {
    // Two fragment sets in turn: the loop body is two k blocks. An odd count leaves after
    // the first straight to the loop's end: a path from there back to the loop's start
    // (which cannot run, but ptxas does not know) would refill set 0 while its products
    // run, and ptxas would then serialise every wgmma (C7513).
    const std::string done = p.reg('p'), more = p.reg('p'), k_end = p.label("c_k_end");
    k_block(0);
    p.op("setp.ge.u32 ", done, ", ", kb, ", ", w.kb1);
    p.op("@", done, " bra ", k_end);
    k_block(1);
    p.op("setp.lt.u32 ", more, ", ", kb, ", ", w.kb1);
    p.op("@", more, " bra ", k_loop);
    p.place(k_end);
  }
  if (l.pingpong) {
    // Every full barrier of this tile has been waited on: the other warpgroup may start on
    // the next unit, if there is one (else nobody would wait for this arrival).
    const std::string next = p.reg('r'), none = p.reg('p'), no_arrive = p.label("c_no_turn");
    p.op("add.u32 ", next, ", ", unit, ", ", step);
    p.op("setp.ge.u32 ", none, ", ", next, ", ", c.num_units);
    p.op("@", none, " bra ", no_arrive);
    p.op("bar.arrive ", bar_other, ", 256");
    p.place(no_arrive);
  }
  p.op("wgmma.wait_group.sync.aligned 0");
  release(lane0, prev);
  if (l.pingpong) {
    skip();
    p.op("mov.u32 ", waits, ", 1");
  }
  const std::string item_end = p.label("c_item_end");
  if (c.split_tail) {
    store_part(p, c, w, tid, item_end);
    add_parts(p, c, w, tid);
  }

  if (l.tf32) {
    epilogue_f32(p, c, act, d, bias, n, m_blk, n_blk, box_index, quad, chunk);
  } else {
    const TileOut o = tile_out(p, c, d, bias, n, m_blk, n_blk, row_t, quad);
    epilogue(p, c, act, o, l.tile_n / 32 - df.groups, b1, b0);
    if (df.groups > 0) defer_groups(p, c, o, df);
  }
  p.place(item_end);
  work_next(p, c, w, unit_step, unit_loop, flush);
  if (df.groups > 0) {
    // No unit left: the last tile's deferred units, then exit.
    const std::string none = p.reg('p');
    p.place(flush);
    p.op("setp.ge.u32 ", none, ", ", df.pending, ", ", df.units());
    p.op("@", none, " bra ", c.exit);
    deferred_unit(p, c, act, df, b1, b0);
    p.op("bra ", flush);
  }
}

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

std::string Sm90GemmConfig::name() const {
  const Layout l = layout_of(*this);
  return std::string("sm90_gemm_") + (l.tf32 ? "tf32_" : "bf16_") +
         std::string(activation_name(act)) + "_" + (l.pingpong ? "pp" : "") +
         std::to_string(T::kM) + "x" + std::to_string(l.tile_n) + "x" + std::to_string(l.k_step) +
         "_s" + std::to_string(l.stages) +
         (group_rows > 0 ? "_g" + std::to_string(group_rows) : "") +
         (store_width != 16 && !l.tf32 ? "_w" + std::to_string(store_width) : "") +
         (split_division && (act == Activation::Gelu || act == Activation::Silu) ? "_rcp" : "") +
         (reciprocal_group > 1 && (act == Activation::Gelu || act == Activation::Silu)
              ? "_q" + std::to_string(reciprocal_group)
              : "") +
         (deferred_groups > 0 ? "_d" + std::to_string(deferred_groups) : "") +
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
  if (config.group_rows < 0)
    fail<BackendError>(kOp, "group_rows ", config.group_rows, " (0 or more)");
  if (config.store_width != 8 && config.store_width != 16)
    fail<BackendError>(kOp, "store_width ", config.store_width, " (8 or 16)");
  if (config.bias_dtype != DType::F32 &&
      (config.bias_dtype != DType::BF16 || config.dtype != DType::BF16))
    fail<BackendError>(kOp, "bias dtype ", dtype_name(config.bias_dtype),
                       " (F32, or BF16 with BF16 operands)");
  if (config.deferred_groups < 0 || config.deferred_groups > kGroups ||
      (config.deferred_groups > 0 && (layout.pingpong || layout.tf32)))
    fail<BackendError>(kOp, "deferred_groups ", config.deferred_groups, " (0 .. ", kGroups,
                       ", and 0 unless cooperative BF16)");
  if (config.reciprocal_group != 1 && config.reciprocal_group != 2 && config.reciprocal_group != 4)
    fail<BackendError>(kOp, "reciprocal_group ", config.reciprocal_group, " (1, 2 or 4)");
  if (config.reciprocal_group > 1 && (layout.tf32 || !config.split_division))
    fail<BackendError>(kOp, "reciprocal_group ", config.reciprocal_group,
                       " needs BF16 and split_division");
  if (config.split_tail && (layout.pingpong || layout.tf32 || config.cluster != 1))
    fail<BackendError>(kOp, "split_tail needs the cooperative BF16 kernel with clusters of 1");
  if (layout.stages < 2 || layout.shared_bytes > kSharedLimit)
    fail<BackendError>(kOp, layout.stages, " stages of ", layout.stage_bytes,
                       " bytes do not fit in shared memory");
  const std::string name = config.name();
  const std::string pa = name + "_tmap_a", pb = name + "_tmap_b", pd = name + "_d",
                    pbias = name + "_bias", pn = name + "_n", ptn = name + "_tiles_n",
                    pnu = name + "_num_units", pkb = name + "_k_blocks";

  Ptx p;
  Common c;
  c.l = layout;
  c.cluster = config.cluster;
  c.group_rows = config.group_rows;
  c.store_width = config.store_width;
  c.split_division = config.split_division;
  c.reciprocal_group = config.reciprocal_group;
  c.deferred_groups = config.deferred_groups;
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
    // Every consumer warp of every CTA that reads this CTA's stage (through multicast).
    p.op("mbarrier.init.shared::cta.b64 [", c.bar_empty, "+", 8 * s, "], ",
         4 * layout.readers * c.cluster);
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
  if (config.deferred_groups > 0)
    os << "    .reg .f32 %pv<" << 16 * config.deferred_groups << ">;\n";
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
                        .schedule = Sm90Schedule::Cooperative,
                        .store_width = 16,
                        .reciprocal_group = dtype == DType::BF16 ? 2 : 1,
                        .dtype = dtype,
                        .deferred_groups = dtype == DType::BF16 ? 5 : 0,
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
  // A call that splits no tile runs the kernel without split tail: its item loop is not
  // free (0.3-0.4% of the call at 8192 x 4096 x 4096 on an H100).
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
