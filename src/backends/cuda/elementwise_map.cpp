#include "backends/cuda/elementwise_map.h"

#include <algorithm>
#include <bit>

#include "codegen/ptx/element_io.h"
#include "numr/error.h"

namespace numr::cuda {

using ptx::Cmp;
using ptx::KernelBuilder;
using ptx::PtxType;
using ptx::Reg;
using ptx::Space;

namespace {

// prefix followed by the number. (Appended, not `prefix + std::to_string(i)`: GCC 12 warns
// falsely, -Wrestrict, on that.)
std::string numbered(const char* prefix, uint64_t i) {
  std::string s(prefix);
  s += std::to_string(i);
  return s;
}

}  // namespace

std::string MapShape::key() const {
  if (layout == MapLayout::Strided) {
    std::string k = numbered("s", uint64_t(rank));
    if (wide) k += 'w';
    return k;
  }
  std::string k = numbered("c", uint64_t(vec));
  if (uniform) k += numbered("u", uniform);
  return k;
}

int map_vector_width(std::span<const int> element_sizes) {
  int largest = 1;
  for (int s : element_sizes) largest = std::max(largest, s);
  const int vec = 16 / largest;
  for (int s : element_sizes)
    if (vec * s < 4) return 1;
  return vec;
}

namespace {

// ---- moving a vector step's elements between 32-bit words and raw element registers ----

// Loads `words` b32 words (1, 2 or 4) at addr through the read-only cache.
std::vector<Reg> load_words(KernelBuilder& b, Reg addr, int words) {
  if (words == 1) return {b.ld_global_nc(PtxType::b32, addr)};
  return b.ld_global_nc_v(PtxType::b32, words, addr);
}

void store_words(KernelBuilder& b, Reg addr, const std::vector<Reg>& w) {
  if (w.size() == 1)
    b.st_global(addr, w[0]);
  else
    b.st_global_v(addr, w);
}

// The `vec` raw elements of dtype d held in the words (little-endian, element 0 lowest).
std::vector<Reg> split_words(KernelBuilder& b, const std::vector<Reg>& w, DType d, int vec) {
  const PtxType rt = ptx::storage_reg_type(d);
  std::vector<Reg> e;
  switch (dtype_size(d)) {
    case 8:
      for (int j = 0; j < vec; ++j) e.push_back(b.bitcast(b.pack(w[2 * j], w[2 * j + 1]), rt));
      break;
    case 4:
      for (int j = 0; j < vec; ++j) e.push_back(b.bitcast(w[j], rt));
      break;
    case 2:
      for (int j = 0; j < vec / 2; ++j) {
        const auto [lo, hi] = b.unpack(w[j]);
        e.push_back(b.bitcast(lo, rt));
        e.push_back(b.bitcast(hi, rt));
      }
      break;
    default:  // bytes, into u32 registers
      for (int j = 0; j < vec; ++j) {
        const Reg u = b.bitcast(w[j / 4], PtxType::u32);
        e.push_back(j % 4 == 0 ? b.and_(u, 0xff) : b.and_(b.shr(u, 8 * (j % 4)), 0xff));
      }
      break;
  }
  return e;
}

std::vector<Reg> join_words(KernelBuilder& b, const std::vector<Reg>& e, DType d) {
  const int vec = int(e.size());
  std::vector<Reg> w;
  switch (dtype_size(d)) {
    case 8:
      for (int j = 0; j < vec; ++j) {
        const auto [lo, hi] = b.unpack(b.bitcast(e[j], PtxType::b64));
        w.push_back(lo);
        w.push_back(hi);
      }
      break;
    case 4:
      for (int j = 0; j < vec; ++j) w.push_back(b.bitcast(e[j], PtxType::b32));
      break;
    case 2:
      for (int j = 0; j < vec; j += 2)
        w.push_back(b.pack(b.bitcast(e[j], PtxType::b16), b.bitcast(e[j + 1], PtxType::b16)));
      break;
    default:  // bytes: the raw registers may carry bits above the low byte (wrapped ints)
      for (int j = 0; j < vec; j += 4) {
        Reg word = b.and_(e[j], 0xff);
        for (int k = 1; k < 4; ++k) word = b.or_(word, b.shl(b.and_(e[j + k], 0xff), 8 * k));
        w.push_back(b.bitcast(word, PtxType::b32));
      }
      break;
  }
  return w;
}

Reg load_raw(KernelBuilder& b, Reg addr, DType d) {
  return b.ld_global(ptx::storage_mem_type(d), addr);
}

void store_raw(KernelBuilder& b, Reg addr, Reg raw, DType d) {
  b.st(Space::global, ptx::storage_mem_type(d), addr, raw);
}

void check_outputs(const MapSpec& spec, const std::vector<Reg>& r) {
  if (r.size() != spec.outs.size())
    fail<BackendError>("cuda", "map kernel ", spec.name, ": the body returned ", r.size(),
                       " values for ", spec.outs.size(), " outputs");
}

// ---- the two layouts ----

struct Pointers {
  std::vector<Reg> out, in;
};

void contiguous_body(KernelBuilder& b, const MapSpec& spec, const Pointers& p, Reg n) {
  const int vec = spec.shape.vec;
  const size_t n_in = spec.ins.size();
  const auto uniform = [&](size_t k) { return (spec.shape.uniform >> k) & 1u; };
  std::vector<Reg> held(n_in);  // the uniform inputs, read once
  for (size_t k = 0; k < n_in; ++k)
    if (uniform(k)) held[k] = load_raw(b, p.in[k], spec.ins[k]);

  const Reg gid = b.cvt(b.global_index_x(), PtxType::u64);
  const Reg gstride = b.mul_wide(b.ntid_x(), b.nctaid_x());
  Reg tail_start = b.mov(PtxType::u64, 0);

  if (vec > 1) {
    const int shift = std::countr_zero(unsigned(vec));
    // Vector step s: elements [s * vec, (s + 1) * vec).
    const auto load_step = [&](Reg s) {
      std::vector<std::vector<Reg>> in_elems(n_in);
      for (size_t k = 0; k < n_in; ++k) {
        if (uniform(k)) continue;
        const int bytes = vec * int(dtype_size(spec.ins[k]));
        const Reg addr = b.mad(s, bytes, p.in[k]);
        in_elems[k] = split_words(b, load_words(b, addr, bytes / 4), spec.ins[k], vec);
      }
      return in_elems;
    };
    const auto finish_step = [&](Reg s, const std::vector<std::vector<Reg>>& in_elems) {
      std::vector<std::vector<Reg>> out_elems(spec.outs.size());
      for (int j = 0; j < vec; ++j) {
        std::vector<Reg> x(n_in);
        for (size_t k = 0; k < n_in; ++k) x[k] = uniform(k) ? held[k] : in_elems[k][size_t(j)];
        const Reg index = spec.needs_index ? b.add(b.shl(s, shift), j) : Reg{};
        const std::vector<Reg> r = spec.body(b, x, index);
        check_outputs(spec, r);
        for (size_t o = 0; o < r.size(); ++o) out_elems[o].push_back(r[o]);
      }
      for (size_t o = 0; o < spec.outs.size(); ++o) {
        const int bytes = vec * int(dtype_size(spec.outs[o]));
        store_words(b, b.mad(s, bytes, p.out[o]), join_words(b, out_elems[o], spec.outs[o]));
      }
    };

    const Reg steps = b.shr(n, shift);
    const Reg s = b.mov(PtxType::u64, gid);
    b.while_loop([&] { return b.setp(Cmp::lt, s, steps); },
                 [&] {
                   finish_step(s, load_step(s));
                   b.assign(s, b.add(s, gstride));
                 });
    b.assign(tail_start, b.shl(steps, shift));
  }

  // The scalar loop: everything when vec == 1, else the last n mod vec elements.
  b.for_range(b.add(tail_start, gid), n, gstride, PtxType::u64, [&](Reg i) {
    std::vector<Reg> x(n_in);
    for (size_t k = 0; k < n_in; ++k)
      x[k] = uniform(k)
                 ? held[k]
                 : load_raw(b, ptx::element_address(b, p.in[k], i, spec.ins[k]), spec.ins[k]);
    const std::vector<Reg> r = spec.body(b, x, i);
    check_outputs(spec, r);
    for (size_t o = 0; o < r.size(); ++o)
      store_raw(b, ptx::element_address(b, p.out[o], i, spec.outs[o]), r[o], spec.outs[o]);
  });
}

void strided_body(KernelBuilder& b, const MapSpec& spec, const Pointers& p, Reg n,
                  const ptx::ParamArray& shape_param,
                  const std::vector<ptx::ParamArray>& stride_params) {
  const int rank = spec.shape.rank;
  const PtxType it = spec.shape.wide ? PtxType::u64 : PtxType::u32;
  std::vector<Reg> extent(static_cast<size_t>(rank));
  for (int d = 0; d < rank; ++d) extent[size_t(d)] = b.load_param(shape_param, d);
  std::vector<std::vector<Reg>> stride(stride_params.size());
  for (size_t k = 0; k < stride_params.size(); ++k)
    for (int d = 0; d < rank; ++d) stride[k].push_back(b.load_param(stride_params[k], d));

  Reg gid = b.global_index_x();
  Reg gstride = b.mul(b.ntid_x(), b.nctaid_x());
  Reg count = n;
  if (it == PtxType::u64) {
    gid = b.cvt(gid, PtxType::u64);
    gstride = b.cvt(gstride, PtxType::u64);
  } else {
    count = b.cvt(n, PtxType::u32);
  }

  b.for_range(gid, count, gstride, it, [&](Reg i) {
    // Row-major coordinates of element i (the last dim varies fastest).
    std::vector<Reg> coord(static_cast<size_t>(rank));
    Reg rest = i;
    for (int d = rank - 1; d > 0; --d) {
      const Reg q = b.div(rest, extent[size_t(d)]);
      coord[size_t(d)] = b.sub(rest, b.mul(q, extent[size_t(d)]));
      rest = q;
    }
    coord[0] = rest;
    std::vector<Reg> wide_coord(static_cast<size_t>(rank));
    for (int d = 0; d < rank; ++d) wide_coord[size_t(d)] = b.cvt(coord[size_t(d)], PtxType::s64);
    const auto address = [&](size_t k, Reg base, DType dt) {
      Reg off = b.mul(wide_coord[0], stride[k][0]);
      for (int d = 1; d < rank; ++d) off = b.mad(wide_coord[size_t(d)], stride[k][size_t(d)], off);
      return ptx::element_address(b, base, off, dt);
    };
    const size_t n_out = spec.outs.size();
    std::vector<Reg> x(spec.ins.size());
    for (size_t k = 0; k < spec.ins.size(); ++k)
      x[k] = load_raw(b, address(n_out + k, p.in[k], spec.ins[k]), spec.ins[k]);
    const Reg index = spec.needs_index ? b.cvt(i, PtxType::u64) : Reg{};
    const std::vector<Reg> r = spec.body(b, x, index);
    check_outputs(spec, r);
    for (size_t o = 0; o < n_out; ++o)
      store_raw(b, address(o, p.out[o], spec.outs[o]), r[o], spec.outs[o]);
  });
}

}  // namespace

GeneratedKernel generate_map(const MapSpec& spec, const ptx::Target& target) {
  const MapShape& sh = spec.shape;
  if (spec.outs.empty() || spec.outs.size() > size_t(kMapMaxOutputs) ||
      spec.ins.size() > size_t(kMapMaxInputs))
    fail<BackendError>("cuda", "map kernel ", spec.name, ": ", spec.outs.size(), " outputs and ",
                       spec.ins.size(), " inputs");
  if (sh.layout == MapLayout::Strided && (sh.rank < 1 || sh.rank > kMapMaxRank))
    fail<BackendError>("cuda", "map kernel ", spec.name, ": rank ", sh.rank);
  if (sh.layout == MapLayout::Contiguous) {
    if (sh.vec < 1 || sh.vec > 16 || !std::has_single_bit(unsigned(sh.vec)))
      fail<BackendError>("cuda", "map kernel ", spec.name, ": vector width ", sh.vec);
    if (sh.vec > 1) {
      std::vector<DType> all = spec.outs;
      for (size_t k = 0; k < spec.ins.size(); ++k)
        if (!((sh.uniform >> k) & 1u)) all.push_back(spec.ins[k]);
      for (DType d : all) {
        const int bytes = sh.vec * int(dtype_size(d));
        if (bytes != 4 && bytes != 8 && bytes != 16)
          fail<BackendError>("cuda", "map kernel ", spec.name, ": a vector step of ", bytes,
                             " bytes of ", dtype_name(d));
      }
    }
  }

  KernelBuilder b(spec.name, target);
  Pointers p;
  for (size_t o = 0; o < spec.outs.size(); ++o) p.out.push_back(b.param_ptr(numbered("out", o)));
  for (size_t k = 0; k < spec.ins.size(); ++k) p.in.push_back(b.param_ptr(numbered("in", k)));
  const Reg n = b.param(PtxType::u64, "n");
  ptx::ParamArray shape_param;
  std::vector<ptx::ParamArray> stride_params;
  if (sh.layout == MapLayout::Strided) {
    shape_param = b.param_array(sh.wide ? PtxType::u64 : PtxType::u32, sh.rank, "shape");
    for (size_t o = 0; o < spec.outs.size(); ++o)
      stride_params.push_back(b.param_array(PtxType::s64, sh.rank, numbered("st_out", o)));
    for (size_t k = 0; k < spec.ins.size(); ++k)
      stride_params.push_back(b.param_array(PtxType::s64, sh.rank, numbered("st_in", k)));
  }
  if (spec.setup) spec.setup(b);

  if (sh.layout == MapLayout::Contiguous)
    contiguous_body(b, spec, p, n);
  else
    strided_body(b, spec, p, n, shape_param, stride_params);
  return {spec.name, b.finish()};
}

}  // namespace numr::cuda
