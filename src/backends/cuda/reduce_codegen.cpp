#include "backends/cuda/reduce_codegen.h"

#include "codegen/ptx/element_io.h"

namespace numr::cuda {

using ptx::Cmp;
using ptx::KernelBuilder;
using ptx::PtxType;
using ptx::Reg;

namespace {

constexpr int kRunUnroll = 4;

}  // namespace

int vector_width(DType d) { return 16 / int(dtype_size(d)); }

std::vector<Reg> load_raw_vector(KernelBuilder& b, DType d, Reg addr) {
  const int size = int(dtype_size(d));
  if (size >= 4) return b.ld_global_nc_v(ptx::storage_reg_type(d), 16 / size, addr);
  // 16- and 8-bit elements come as four 32-bit words, split here.
  const std::vector<Reg> words = b.ld_global_nc_v(PtxType::b32, 4, addr);
  std::vector<Reg> out;
  for (Reg w : words) {
    if (size == 2) {
      const auto [lo, hi] = b.unpack(w);
      const PtxType t = ptx::storage_reg_type(d);
      out.push_back(b.bitcast(lo, t));
      out.push_back(b.bitcast(hi, t));
    } else {
      const Reg u = b.bitcast(w, PtxType::u32);
      for (int k = 0; k < 4; ++k) out.push_back(b.and_(b.shr(u, 8 * k), 0xff));
    }
  }
  return out;
}

Reg load_raw(KernelBuilder& b, DType d, Reg addr) {
  return b.ld_global_nc(ptx::storage_mem_type(d), addr);
}

void store_raw_vector(KernelBuilder& b, DType d, Reg addr, const std::vector<Reg>& raw) {
  const int size = int(dtype_size(d));
  if (size >= 4) {
    b.st_global_v(addr, raw);
    return;
  }
  std::vector<Reg> words;
  if (size == 2) {
    for (size_t k = 0; k < raw.size(); k += 2)
      words.push_back(b.pack(b.bitcast(raw[k], PtxType::b16), b.bitcast(raw[k + 1], PtxType::b16)));
  } else {
    for (size_t k = 0; k < raw.size(); k += 4) {
      Reg w = b.and_(raw[k], 0xff);
      for (size_t j = 1; j < 4; ++j) w = b.or_(w, b.shl(b.and_(raw[k + j], 0xff), int(8 * j)));
      words.push_back(b.bitcast(w, PtxType::b32));
    }
  }
  b.st_global_v(addr, words);
}

void for_each_in_run(KernelBuilder& b, DType d, Reg base, Reg len, Reg g_tid, Reg g_size,
                     const std::function<void(const std::vector<Reg>&, Reg)>& visit) {
  const int size = int(dtype_size(d));
  const int vec = vector_width(d);
  // Elements before the first 16-byte boundary (addresses are multiples of the size).
  const Reg mis = b.and_(b.sub(b.mov(PtxType::u64, 16), b.and_(base, 15)), 15);
  const Reg head = b.min(size == 1 ? mis : b.div(mis, size), len);
  b.if_then(b.setp(Cmp::lt, g_tid, head),
            [&] { visit({load_raw(b, d, b.mad(g_tid, size, base))}, g_tid); });
  const Reg body = b.add(base, b.mul(head, size));
  const Reg n_vec = b.div(b.sub(len, head), vec);
  // kRunUnroll vectors per thread are loaded before any is visited, so that many 16-byte
  // loads are in flight per thread (one per iteration leaves the memory system idle while
  // the thread waits). The thread still visits v, v + g_size, ... in increasing order.
  const Reg v = b.mov(PtxType::u64, g_tid);
  const Reg span = b.mul(g_size, kRunUnroll - 1);
  b.while_loop([&] { return b.setp(Cmp::lt, b.add(v, span), n_vec); },
               [&] {
                 std::vector<std::vector<Reg>> raws;
                 std::vector<Reg> firsts;
                 Reg at = v;
                 for (int u = 0; u < kRunUnroll; ++u) {
                   if (u) at = b.add(at, g_size);
                   raws.push_back(load_raw_vector(b, d, b.mad(at, 16, body)));
                   firsts.push_back(at);
                 }
                 for (int u = 0; u < kRunUnroll; ++u)
                   visit(raws[size_t(u)], b.mad(firsts[size_t(u)], vec, head));
                 b.assign(v, b.add(at, g_size));
               });
  b.while_loop([&] { return b.setp(Cmp::lt, v, n_vec); },
               [&] {
                 visit(load_raw_vector(b, d, b.mad(v, 16, body)), b.mad(v, vec, head));
                 b.assign(v, b.add(v, g_size));
               });
  const Reg t = b.add(b.mad(n_vec, vec, head), g_tid);
  b.if_then(b.setp(Cmp::lt, t, len), [&] { visit({load_raw(b, d, b.mad(t, size, base))}, t); });
}

Reg strided_offset(KernelBuilder& b, Reg flat, const std::vector<Reg>& shape,
                   const std::vector<Reg>& strides) {
  Reg off = b.mov(PtxType::s64, 0);
  Reg rest = flat;
  for (size_t d = shape.size(); d-- > 1;) {
    const Reg q = b.div(rest, shape[d]);
    const Reg i = b.sub(rest, b.mul(q, shape[d]));
    off = b.mad(b.bitcast(i, PtxType::s64), strides[d], off);
    rest = q;
  }
  return b.mad(b.bitcast(rest, PtxType::s64), strides[0], off);
}

Reg wide(KernelBuilder& b, Reg u32) { return b.cvt(u32, PtxType::u64); }

}  // namespace numr::cuda
