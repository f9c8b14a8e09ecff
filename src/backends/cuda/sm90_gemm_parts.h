// The parts of the sm_90a GEMM's generator (sm90_gemm.h) that its files share: the PTX text
// writer, the kernel's layout and settings, and the roles each file writes.
//
//   sm90_gemm.cpp             config, layout, the entry point and its setup; launch
//   sm90_gemm_schedule.cpp    stage ring, tile order, the CTA's work items (split tail's too)
//   sm90_gemm_producer.cpp    the TMA producer thread
//   sm90_gemm_consumer.cpp    the consumer warpgroups' wgmma main loop
//   sm90_gemm_epilogue.cpp    bias, conversion, stores, the deferred epilogue
//   sm90_gemm_activation.cpp  the activations in f32
//   sm90_gemm_split_tail.cpp  split tiles' partial sums through the workspace
//
// The PTX is written as text rather than through ptx::KernelBuilder: the kernel needs
// instructions the builder has no calls for (wgmma with 128 accumulator operands, mbarrier,
// bulk tensor copies, setmaxnreg, 64-byte aligned by-value parameters), and its
// warp-specialised control flow (one thread of the producer warpgroup runs a loop the others
// skip) is what the builder's barrier check is made to reject.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "backends/cuda/sm90_gemm.h"

namespace numr::cuda::sm90 {

inline constexpr const char* kOp = "sm90_gemm";
using T = Sm90GemmTile;

static_assert(T::kK * 2 == 128, "one stage row of A is one 128-byte swizzle row");
static_assert(T::kM == 2 * 64, "two m64 row blocks per CTA tile");

// Dynamic shared memory a block may opt into on sm_90 (227 KiB).
inline constexpr int kSharedLimit = 232448;
inline constexpr int kStages = 4;               // shared-memory ring depth
inline constexpr int kABytes = T::kM * 128;     // one A stage: 128 rows of 128 bytes
inline constexpr int kBBytes = 64 * T::kN * 2;  // one B stage: 64 k rows of 256 BF16 (or 32 of F32)
static_assert(kStages * (kABytes + kBBytes) + 2 * kStages * 8 + 32 + 1024 <= kSharedLimit,
              "the ring, its barriers and the split tail's table fit in shared memory");
// Tile order: groups of this many unit rows, M fastest inside a group, so that the tiles in
// flight at once read fewer column blocks of B from L2.
inline constexpr int kGroupRows = 16;
// TF32: columns of D (rows of D^T) per consumer warpgroup.
inline constexpr int kTf32WarpgroupN = 128;
// Column groups of 32 in a tile, and how many of them the BF16 kernel's deferred epilogue
// keeps (sm90_gemm_epilogue.cpp): as many as fit beside the accumulators without spills.
inline constexpr int kGroups = T::kN / 32;
inline constexpr int kDeferredGroups = 5;
// Split tail: the CTA's parts P and O as (unit, first k block, end k block, count of the
// parts before O), u32 each.
inline constexpr int kItemTableBytes = 32;
// Split tail: the consumers' named barrier (256 threads) around the workspace's use.
inline constexpr int kSplitBarrier = 1;
static_assert(kSplitTileBytes == 2 * 128 * 128 * 4, "256 threads x 128 accumulators of f32");

// Register counts: the producer needs few, the consumers 128 accumulators, 80 deferred
// values and the rest. 128 * 24 + 256 * 240 = 64512 <= 65536 registers of an SM.
inline constexpr int kProducerRegs = 24;
inline constexpr int kConsumerRegs = 240;

// Descriptor constants (the start address is or-ed in).
inline constexpr uint64_t kSwizzle128 = uint64_t(1) << 62;
constexpr uint64_t desc_bits(uint64_t leading_bytes, uint64_t stride_bytes) {
  return ((leading_bytes >> 4) << 16) | ((stride_bytes >> 4) << 32) | kSwizzle128;
}
inline constexpr uint64_t kDescA = desc_bits(16, 1024);
inline constexpr uint64_t kDescB = desc_bits(T::kK * 128, 1024);  // next 64 columns

// An f32 immediate, "0f3F800000".
inline std::string f32_hex(float v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0f%08X", std::bit_cast<uint32_t>(v));
  return buf;
}

inline int log2_of(int v) { return std::countr_zero(unsigned(v)); }

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

// The kernel's shape for a configuration.
struct Layout {
  bool tf32 = false;   // F32 operands multiplied as TF32 (B from registers)
  int tile_n = T::kN;  // columns of a tile
  int k_step = 64;     // K per stage: one 128-byte row of A (64 BF16, 32 F32)
  int box_n = 64;      // columns of B per bulk copy: one 128-byte row (64 BF16, 32 F32)
  int box_bytes = 0;   // one B box: k_step rows of 128 bytes
  int stages = kStages;
  int b_bytes = 0;      // one B stage: k_step rows (k) of tile_n elements
  int stage_bytes = 0;  // A + B
  int barrier_offset = 0;
  int table_offset = 0;  // split tail: the CTA's parts P and O
  int shared_bytes = 0;
  bool split_tail = false;
  int deferred_groups = 0;  // BF16: kDeferredGroups; TF32: 0
};
Layout layout_of(const Sm90GemmConfig& config);

// Registers and settings both roles use.
struct Common {
  Layout l;
  int cluster = 1;                  // CTAs per cluster: 1, or 2 sharing B through multicast copies
  std::string smem;                 // u32: the 1024-byte aligned dynamic shared base
  std::string bar_full, bar_empty;  // u32: full[0], empty[0]
  std::string rank;                 // u32: %cluster_ctarank (0 when cluster == 1)
  std::string tiles_n, num_units, k_blocks;
  std::string exit;
  bool bias_bf16 = false;   // Sm90GemmConfig::bias_dtype BF16
  bool split_tail = false;  // Sm90GemmConfig::split_tail
  // Split tail: the parameters (whole tiles, sequence number, flags, workspace).
  std::string p_dp_units, p_seq, p_flags, p_work;
};

// ---- sm90_gemm_schedule.cpp

// Waits until the mbarrier at `bar` (shared, u32) has completed the phase of parity `parity`.
void wait_parity(Ptx& p, const std::string& bar, const std::string& parity,
                 const std::string& hint);
// stage = (stage + 1) % stages; phase ^= 1 when it wraps.
void advance(Ptx& p, int stages, const std::string& stage, const std::string& phase);
// The tile (m_blk, n_blk) of this CTA in work unit `unit`.
void tile_coords(Ptx& p, const Common& c, const std::string& unit, const std::string& m_blk,
                 const std::string& n_blk);

// Split tail: thread 0 writes the CTA's parts P and O to the table in shared memory.
void write_item_table(Ptx& p, const Common& c);

// The CTA's work, one item at a time: tile `unit`, k blocks kb0 .. kb1 - 1. Without split
// tail, units first_unit, then `step` on (kb0 0, kb1 k_blocks); with it, the whole tiles
// ctaid + j nctaid, then the parts P and O.
struct Work {
  std::string unit, step, kb0, kb1;
  std::string it, last;  // split tail: the item's index, and "this is the CTA's last"
};
Work work_start(Ptx& p, const Common& c);
// At the head of the work loop: the next item, or a branch to `done` when none is left.
void work_item(Ptx& p, const Common& c, const Work& w, const std::string& done);
// At the end of the work loop: on to the loop's head, `head`, or to `done` after the CTA's
// last item.
void work_next(Ptx& p, const Common& c, const Work& w, const std::string& head,
               const std::string& done);

// ---- sm90_gemm_split_tail.cpp

// A part this CTA does not own: its accumulators to the workspace and its flag set, in place
// of the epilogue; then on to `next`.
void store_part(Ptx& p, const Common& c, const Work& w, const std::string& tid,
                const std::string& next);
// The part this CTA owns, when it does not start its tile: the other parts' accumulators
// added to this thread's.
void add_parts(Ptx& p, const Common& c, const Work& w, const std::string& tid);

// ---- sm90_gemm_producer.cpp

// Warpgroup 0's thread 0: the bulk tensor copies of every (tile, k block) of this CTA.
void producer(Ptx& p, const Common& c, const std::string& tmap_a, const std::string& tmap_b);

// ---- sm90_gemm_consumer.cpp

// Warpgroups 1 and 2: the products of every tile of this CTA, and their epilogue.
void consumer(Ptx& p, const Common& c, Activation act, const std::string& tid, const std::string& d,
              const std::string& bias, const std::string& n);

// ---- sm90_gemm_activation.cpp

bool supported_activation(Activation act);
// act(x) in f32, and, where it divides, the quotient's operands (den empty: no division).
struct Activated {
  std::string y;
  std::string x, den;
};
Activated activate(Ptx& p, Activation act, const std::string& x);
// Redoes a batch's quotients with div.full.f32 where a den is out of the reciprocal's range.
void split_division_check(Ptx& p, const std::vector<Activated>& batch);
// Gelu or Silu of 8 values with one reciprocal per pair of them.
std::vector<Activated> activate_pairs(Ptx& p, Activation act, const std::string (&v)[8]);

// ---- sm90_gemm_epilogue.cpp

// Where this thread's part of a BF16 tile (m_blk, n_blk) goes: D at its rows row_t and
// row_t + 8, dr[r], at its first column after the quad's exchange; and the bias at the
// thread's first column pair (bp).
struct TileOut {
  std::string dr[2];
  std::string bp;
};
TileOut tile_out(Ptx& p, const Common& c, const std::string& d, const std::string& bias,
                 const std::string& n, const std::string& m_blk, const std::string& n_blk,
                 const std::string& row_t, const std::string& quad);
// The lane bits of `quad` as predicates (b1: bit 1, b0: bit 0).
void quad_bits(Ptx& p, const std::string& quad, std::string& b1, std::string& b0);
// D = act(acc + bias) as BF16 for column groups 0 .. groups - 1 of this thread's rows.
void epilogue(Ptx& p, const Common& c, Activation act, const TileOut& o, int groups,
              const std::string& b1, const std::string& b0);

// The BF16 kernel's deferred epilogue: the tile's last `groups` column groups wait in %pv as
// acc + bias while the next tile's products run. A unit is one row set of one group;
// `pending` counts the units done (units(): none left); `rows` are the tile's two row
// addresses.
struct Deferred {
  int groups = 0;
  std::string pending;
  std::string rows[2];
  int units() const { return 2 * groups; }
};
// Saves the deferred groups of the tile just computed (acc + bias) and its row addresses.
void defer_groups(Ptx& p, const Common& c, const TileOut& o, const Deferred& df);
// Runs deferred unit `pending` (which must be one left) and counts it done.
void deferred_unit(Ptx& p, Activation act, const Deferred& df, const std::string& b1,
                   const std::string& b0);

// D = act(acc + bias) as F32 for the TF32 kernel's tile (m_blk, n_blk).
void epilogue_f32(Ptx& p, const Common& c, Activation act, const std::string& d,
                  const std::string& bias, const std::string& n, const std::string& m_blk,
                  const std::string& n_blk, const std::string& box_index, const std::string& quad,
                  const std::string& chunk);

}  // namespace numr::cuda::sm90
