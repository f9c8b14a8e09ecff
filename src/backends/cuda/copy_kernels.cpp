#include "backends/cuda/copy_kernels.h"

#include <cctype>
#include <memory>

#include "backends/cuda/elementwise_kernels.h"
#include "codegen/ptx/element_io.h"

namespace numr::cuda {

using ptx::Cmp;
using ptx::KernelBuilder;
using ptx::PtxType;
using ptx::Reg;

namespace {

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& ch : r) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  return r;
}

// A raw element of dtype src (a register of storage_reg_type(src)) converted to dtype dst by
// element_io's rules, which are the CPU's.
Reg convert_element(KernelBuilder& b, Reg raw, DType src, DType dst) {
  const PtxType compute = elementwise_compute_type(src);
  ptx::FormulaScope scope(b, compute);
  return ptx::to_storage(b, ptx::from_storage(b, raw, src, compute), dst);
}

}  // namespace

std::string copy_key(const CopyConfig& c) {
  return "copy_" + lower(dtype_name(c.dst)) + "_of_" + lower(dtype_name(c.src)) + "_" +
         c.shape.key();
}

GeneratedKernel generate_copy(const CopyConfig& c, const ptx::Target& target) {
  MapSpec spec;
  spec.name = copy_key(c);
  spec.outs = {c.dst};
  spec.ins = {c.src};
  spec.shape = c.shape;
  spec.body = [c](KernelBuilder& b, std::span<const Reg> raw, Reg) -> std::vector<Reg> {
    if (c.src == c.dst) return {raw[0]};  // the bits as they are (NaN payloads, Bool bytes)
    return {convert_element(b, raw[0], c.src, c.dst)};
  };
  return generate_map(spec, target);
}

bool transpose_copy_pairs_possible(DType src, DType dst) {
  const size_t s = dtype_size(src), d = dtype_size(dst);
  if (src == dst) return s == 2;
  return (s == 2 || s == 4) && (d == 2 || d == 4) && std::min(s, d) == 2;
}

std::string transpose_copy_key(const TransposeCopyConfig& c) {
  if (c.src != c.dst)
    return "transpose_cast_" + lower(dtype_name(c.dst)) + "_of_" + lower(dtype_name(c.src)) +
           (c.pairs ? "_x2" : "");
  return "transpose_copy_b" + std::to_string(8 * dtype_size(c.src)) + (c.pairs ? "x2" : "");
}

GeneratedKernel generate_transpose_copy(const TransposeCopyConfig& c, const ptx::Target& target) {
  constexpr int kRowsPerPass = 8;
  const int es = int(dtype_size(c.src)), ds = int(dtype_size(c.dst)), P = c.pairs ? 2 : 1;
  const bool cast = c.src != c.dst;
  const int T = transpose_copy_tile(c);
  const int pitch = T + P;  // elements; keeps pairs 4-byte aligned, spreads columns over banks
  PtxType mem = PtxType::b32;
  switch (es) {
    case 1: mem = PtxType::u8; break;
    case 2: mem = PtxType::b16; break;
    case 4: mem = PtxType::b32; break;
    case 8: mem = PtxType::b64; break;
    default: fail<BackendError>("cuda", "copy: no transposing copy of ", es, "-byte elements");
  }
  if (c.pairs && !transpose_copy_pairs_possible(c.src, c.dst))
    fail<BackendError>("cuda", "copy: no pairs of ", dtype_name(c.src), " to ", dtype_name(c.dst));
  // A pair's bits, on either side.
  const auto pair_type = [](int size) { return size == 2 ? PtxType::b32 : PtxType::b64; };
  // A cast moves typed elements (storage_mem_type: u8 into u32 registers, f16, ...); a copy
  // moves the bits.
  const PtxType src_mem = cast ? ptx::storage_mem_type(c.src) : mem;
  KernelBuilder b(transpose_copy_key(c), target);
  const Reg src = b.param_ptr("src"), dst = b.param_ptr("dst");
  const Reg rows = b.param(PtxType::u64, "rows"), cols = b.param(PtxType::u64, "cols");
  const Reg s_l = b.param(PtxType::u64, "s_l"), d_d = b.param(PtxType::u64, "d_d");
  const Reg s_b = b.param(PtxType::u64, "s_b"), d_b = b.param(PtxType::u64, "d_b");
  const Reg tile = b.address_of(b.shared_array(mem, int64_t(T) * pitch, "tile", 8));
  const auto wide = [&](Reg r) { return b.cvt(r, PtxType::u64); };
  const Reg tx = b.tid_x(), ty = b.tid_y();
  const Reg i0 = b.mul(wide(b.ctaid_y()), T), j0 = b.mul(wide(b.ctaid_x()), T);
  const Reg batch = wide(b.special(ptx::SpecialReg::ctaid_z));
  const Reg sb = b.add(src, b.mul(b.mul(batch, s_b), es));
  const Reg db = b.add(dst, b.mul(b.mul(batch, d_b), ds));
  // tile[r][col] at tile + (r * pitch + col) * es.
  const auto slot = [&](Reg r, Reg col) { return b.add(tile, b.mul(b.mad(r, pitch, col), es)); };
  // Source elements (i, j) of the tile: i = i0 + P tx (and i + 1) along d (contiguous),
  // j = j0 + r. With pairs, rows and cols are even, so a pair is all in or all out.
  const Reg pt = b.mul(tx, P);
  const Reg i = b.add(i0, wide(pt));
  const Reg i_in = b.setp(Cmp::lt, i, rows);
  for (int k = 0; k < T; k += kRowsPerPass) {
    const Reg r = b.add(ty, k);
    const Reg j = b.add(j0, wide(r));
    b.if_then(b.and_(i_in, b.setp(Cmp::lt, j, cols)), [&] {
      const Reg at = b.add(sb, b.mul(b.mad(j, s_l, i), es));
      if (c.pairs)
        b.st(ptx::Space::shared, pair_type(es), slot(r, pt), b.ld_global_nc(pair_type(es), at));
      else  // u8: from a u32 register
        b.st(ptx::Space::shared, src_mem, slot(r, pt), b.ld_global_nc(src_mem, at));
    });
  }
  b.bar_sync();
  // Result elements (i0 + r, j) and (i0 + r, j + 1), j = j0 + P tx: tile[j - j0][r], ...
  const Reg j = b.add(j0, wide(pt));
  const Reg j_in = b.setp(Cmp::lt, j, cols);
  for (int k = 0; k < T; k += kRowsPerPass) {
    const Reg r = b.add(ty, k);
    const Reg ir = b.add(i0, wide(r));
    b.if_then(b.and_(j_in, b.setp(Cmp::lt, ir, rows)), [&] {
      const Reg at = b.add(db, b.mul(b.mad(ir, d_d, j), ds));
      if (cast && c.pairs) {
        const PtxType half = ds == 2 ? PtxType::b16 : PtxType::b32;
        const auto converted = [&](Reg col) {
          return b.bitcast(convert_element(b, b.ld_shared(src_mem, slot(col, r)), c.src, c.dst),
                           half);
        };
        const Reg lo = converted(pt), hi = converted(b.add(pt, 1));
        b.st(ptx::Space::global, pair_type(ds), at, b.pack(lo, hi));
      } else if (cast) {
        const Reg raw = b.ld_shared(src_mem, slot(pt, r));
        b.st(ptx::Space::global, ptx::storage_mem_type(c.dst), at,
             convert_element(b, raw, c.src, c.dst));
      } else if (c.pairs) {
        const Reg lo = b.ld_shared(mem, slot(pt, r)), hi = b.ld_shared(mem, slot(b.add(pt, 1), r));
        b.st(ptx::Space::global, PtxType::b32, at, b.pack(lo, hi));
      } else {
        b.st(ptx::Space::global, mem, at, b.ld_shared(mem, slot(pt, r)));
      }
    });
  }
  return {transpose_copy_key(c), b.finish()};
}

std::string fill_key(const FillConfig& c) {
  return "fill_" + lower(dtype_name(c.dst)) + "_" + c.shape.key();
}

GeneratedKernel generate_fill(const FillConfig& c, const ptx::Target& target) {
  MapSpec spec;
  spec.name = fill_key(c);
  spec.outs = {c.dst};
  spec.shape = c.shape;
  auto value = std::make_shared<Reg>();
  spec.setup = [c, value](KernelBuilder& b) {
    const Reg v = b.param(PtxType::f64, "value");
    ptx::FormulaScope scope(b, PtxType::f64);
    *value = ptx::to_storage(b, ptx::Value(v), c.dst);
  };
  spec.body = [value](KernelBuilder&, std::span<const Reg>, Reg) -> std::vector<Reg> {
    return {*value};
  };
  return generate_map(spec, target);
}

}  // namespace numr::cuda
