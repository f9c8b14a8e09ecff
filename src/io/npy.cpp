// NumPy .npy: the magic "\x93NUMPY", a version, a little-endian header length, a Python
// dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...)} padded with spaces to
// a multiple of 64 bytes and ended by '\n', then the raw elements.
#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <optional>
#include <vector>

#include "core/backend.h"
#include "core/op_scope.h"
#include "io/file.h"
#include "numr/io.h"
#include "numr/ops.h"

namespace numr {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
// numpy itself refuses headers over 10000 bytes by default; this wider limit still keeps a
// corrupt length from becoming an allocation.
constexpr uint64_t kMaxHeaderBytes = 1 << 20;

struct Descr {
  std::string_view code;  // without the byte-order character
  DType dtype;
};
constexpr std::array<Descr, 9> kDescrs = {{{"c16", DType::Complex128},
                                           {"c8", DType::Complex64},
                                           {"f8", DType::F64},
                                           {"f4", DType::F32},
                                           {"f2", DType::F16},
                                           {"i8", DType::I64},
                                           {"i4", DType::I32},
                                           {"u1", DType::U8},
                                           {"b1", DType::Bool}}};

struct NpyHeader {
  DType dtype = DType::F32;
  bool big_endian = false;
  bool fortran_order = false;
  Shape shape;
};

// The dict literal numpy writes: string keys, and string, True/False or tuple-of-integer
// values. Anything else is refused.
class DictParser {
 public:
  DictParser(std::string_view op, const std::string& path, std::string_view text)
      : op_(op), path_(path), s_(text) {}

  NpyHeader parse() {
    std::optional<std::string> descr;
    std::optional<bool> fortran;
    std::optional<Shape> shape;
    ws();
    expect('{');
    for (;;) {
      ws();
      if (peek() == '}') break;
      const std::string key = string();
      ws();
      expect(':');
      ws();
      if (key == "descr") {
        if (descr) error("duplicate key 'descr'");
        if (peek() == '[')
          fail<UnsupportedDType>(op_, "'", path_,
                                 "' holds a structured array, which numr cannot "
                                 "represent");
        descr = string();
      } else if (key == "fortran_order") {
        if (fortran) error("duplicate key 'fortran_order'");
        fortran = boolean();
      } else if (key == "shape") {
        if (shape) error("duplicate key 'shape'");
        shape = tuple();
      } else {
        error("unexpected key '" + key + "'");
      }
      ws();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      ws();
      if (peek() != '}') error("expected ',' or '}'");
    }
    expect('}');
    ws();
    if (i_ != s_.size()) error("unexpected text after the dict");
    if (!descr || !fortran || !shape) error("'descr', 'fortran_order' and 'shape' are required");

    NpyHeader h;
    h.fortran_order = *fortran;
    h.shape = *shape;
    const std::string& d = *descr;
    const auto found = d.size() == 3 || d.size() == 4
                           ? std::find_if(kDescrs.begin(), kDescrs.end(),
                                          [&](const Descr& x) { return d.substr(1) == x.code; })
                           : kDescrs.end();
    const char order = d.empty() ? '\0' : d[0];
    const bool one_byte = found != kDescrs.end() && dtype_size(found->dtype) == 1;
    const bool order_ok =
        order == '<' || order == '>' || order == '=' || (order == '|' && one_byte);
    if (found == kDescrs.end() || !order_ok)
      fail<UnsupportedDType>(op_, "'", path_, "' has dtype '", d,
                             "', which numr does not read (it reads '<f8' '<f4' '<f2' '<i8' "
                             "'<i4' '|u1' '|b1' '<c8' '<c16' and their big-endian forms)");
    h.dtype = found->dtype;
    h.big_endian = order == '>' && !one_byte;
    return h;
  }

 private:
  [[noreturn]] void error(const std::string& what) const {
    fail<IoError>(op_, "'", path_, "': malformed header at byte ", i_, ": ", what);
  }
  bool at_end() const { return i_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[i_]; }
  void ws() {
    while (!at_end() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_;
  }
  void expect(char c) {
    if (peek() != c || at_end()) error(std::string("expected '") + c + "'");
    ++i_;
  }
  std::string string() {
    const char q = peek();
    if (q != '\'' && q != '"') error("expected a quoted string");
    ++i_;
    std::string out;
    while (!at_end() && s_[i_] != q) {
      if (s_[i_] == '\\') error("escapes are not supported");
      out += s_[i_++];
    }
    expect(q);
    return out;
  }
  bool boolean() {
    if (s_.substr(i_, 4) == "True") return i_ += 4, true;
    if (s_.substr(i_, 5) == "False") return i_ += 5, false;
    error("expected True or False");
  }
  int64_t integer() {
    if (peek() < '0' || peek() > '9') error("expected a non-negative integer");
    int64_t n = 0;
    while (peek() >= '0' && peek() <= '9') {
      if (__builtin_mul_overflow(n, 10, &n) || __builtin_add_overflow(n, peek() - '0', &n))
        error("integer out of the 64-bit range");
      ++i_;
    }
    return n;
  }
  // (), (n,), (a, b), (a, b,)
  Shape tuple() {
    expect('(');
    Shape shape;
    ws();
    if (peek() == ')') return ++i_, shape;
    for (;;) {
      ws();
      shape.push_back(integer());
      ws();
      if (peek() == ',') {
        ++i_;
        ws();
        if (peek() == ')') break;
        continue;
      }
      if (shape.size() == 1) error("a one-element tuple needs a trailing comma");
      break;
    }
    expect(')');
    return shape;
  }

  std::string_view op_;
  const std::string& path_;
  std::string_view s_;
  size_t i_ = 0;
};

void byte_swap(char* p, int64_t count, size_t size) {
  for (int64_t k = 0; k < count; ++k, p += size) std::reverse(p, p + size);
}

}  // namespace

Tensor load_npy(const std::string& path, Device device) {
  const OpScope scope("load_npy");
  constexpr std::string_view op = "load_npy";
  backend_for(device);  // an unusable device fails before the file is read
  const io::InFile file(op, path);
  if (file.size() < kMagicLen + 4)
    fail<IoError>(op, "'", path, "' is ", file.size(), " bytes long, too short for a .npy file");
  uint8_t pre[12] = {};
  file.read(0, pre, std::min<uint64_t>(12, file.size()));
  if (std::memcmp(pre, kMagic, kMagicLen) != 0)
    fail<IoError>(op, "'", path, "' is not a .npy file (no \\x93NUMPY magic)");
  const int major = pre[6], minor = pre[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    fail<IoError>(op, "'", path, "' is .npy version ", major, ".", minor,
                  ", numr reads 1.0, 2.0 and 3.0");
  const uint64_t prefix = major == 1 ? 10 : 12;
  if (file.size() < prefix) fail<IoError>(op, "'", path, "' ends inside its header length");
  const uint64_t hlen = major == 1 ? uint64_t(pre[8]) | uint64_t(pre[9]) << 8
                                   : uint64_t(pre[8]) | uint64_t(pre[9]) << 8 |
                                         uint64_t(pre[10]) << 16 | uint64_t(pre[11]) << 24;
  if (hlen > file.size() - prefix)
    fail<IoError>(op, "'", path, "': header length ", hlen, " reaches past the end of the ",
                  file.size(), "-byte file");
  if (hlen > kMaxHeaderBytes)
    fail<IoError>(op, "'", path, "': header length ", hlen, " is over the limit of ",
                  kMaxHeaderBytes, " bytes");
  std::string text(size_t(hlen), '\0');
  file.read(prefix, text.data(), text.size());
  if (text.empty() || text.back() != '\n')
    fail<IoError>(op, "'", path, "': the header does not end with a newline");
  const NpyHeader h = DictParser(op, path, text).parse();

  int64_t numel = 1;
  for (const int64_t d : h.shape)
    if (__builtin_mul_overflow(numel, d, &numel) || numel > kMaxNumel)
      fail<IoError>(op, "'", path, "': shape ", shape_str(h.shape), " has too many elements");
  const uint64_t nbytes = uint64_t(numel) * dtype_size(h.dtype);
  const uint64_t data_start = prefix + hlen, have = file.size() - data_start;
  if (have != nbytes)
    fail<IoError>(op, "'", path, "': ", dtype_name(h.dtype), " of shape ", shape_str(h.shape),
                  " needs ", nbytes, " bytes of data, the file has ", have);

  // Fortran order is row-major order of the reversed shape; transposed back below.
  Shape stored = h.shape;
  if (h.fortran_order) std::reverse(stored.begin(), stored.end());
  Tensor t = Tensor::empty(stored, h.dtype, Device::cpu());
  if (nbytes > 0) file.read(data_start, io::host_bytes(t), nbytes);
  if (h.big_endian) {  // a complex value is two numbers, each swapped on its own
    const size_t unit = dtype_size(complex_part_dtype(h.dtype));
    byte_swap(io::host_bytes(t), numel * int64_t(dtype_size(h.dtype) / unit), unit);
  }
  if (h.dtype == DType::Bool) {  // numr's Bool is 0 or 1; any nonzero byte reads as true
    auto* p = reinterpret_cast<uint8_t*>(io::host_bytes(t));
    for (int64_t k = 0; k < numel; ++k) p[k] = p[k] != 0;
  }
  if (h.fortran_order && t.dim() > 1) {
    std::vector<int64_t> dims(size_t(t.dim()));
    for (int64_t d = 0; d < t.dim(); ++d) dims[size_t(d)] = t.dim() - 1 - d;
    t = t.permute(dims).contiguous();
  }
  return device.is_cpu() ? t : t.to(device);
}

void save_npy(const std::string& path, const Tensor& t) {
  const OpScope scope("save_npy");
  constexpr std::string_view op = "save_npy";
  if (!t.defined()) fail<InvalidArgument>(op, "undefined tensor");
  std::string_view descr;
  switch (t.dtype()) {
    case DType::F64: descr = "<f8"; break;
    case DType::F32: descr = "<f4"; break;
    case DType::F16: descr = "<f2"; break;
    case DType::I64: descr = "<i8"; break;
    case DType::I32: descr = "<i4"; break;
    case DType::U8: descr = "|u1"; break;
    case DType::Bool: descr = "|b1"; break;
    case DType::Complex64: descr = "<c8"; break;
    case DType::Complex128: descr = "<c16"; break;
    case DType::BF16:
      fail<UnsupportedDType>(op,
                             "BF16 has no NumPy dtype; cast to F32 first "
                             "(t.cast(DType::F32)) to save it losslessly");
  }
  std::string dict = "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': (";
  for (size_t d = 0; d < t.shape().size(); ++d) {
    if (d) dict += ", ";
    dict += std::to_string(t.shape()[d]);
  }
  if (t.shape().size() == 1) dict += ',';
  dict += "), }";
  // Spaces, then '\n', pad magic + version + length + header to a multiple of 64 bytes.
  const auto padding = [&](size_t prefix) { return (64 - (prefix + dict.size() + 1) % 64) % 64; };
  const bool v1 = dict.size() + 1 + padding(10) <= 65535;  // version 1.0's length is a u16
  const size_t prefix = v1 ? 10 : 12;
  dict.append(padding(prefix), ' ');
  dict += '\n';

  io::OutFile file(op, path);
  std::string pre(kMagic, kMagicLen);
  pre += char(v1 ? 1 : 2);
  pre += char(0);
  const uint64_t n = dict.size();
  for (size_t k = 0; k < prefix - 8; ++k) pre += char(uint8_t(n >> (8 * k)));
  file.write(pre.data(), pre.size());
  file.write(dict.data(), dict.size());
  file.write_tensor(t);
  file.commit();
}

}  // namespace numr
