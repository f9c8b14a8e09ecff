// Printing tensors, PyTorch style: nested brackets, one row of the last dim per line,
// every entry padded to one width, dtype and device at the end. Tensors of more than
// kSummarizeAbove elements show only the first and last kEdge entries of each long dim,
// and only those entries are copied to the host.
#include "core/print.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/op_scope.h"
#include "numr/complex.h"
#include "numr/ops.h"

namespace numr {
namespace {

constexpr int64_t kSummarizeAbove = 1000;
constexpr int64_t kEdge = 3;
constexpr size_t kLineWidth = 80;
constexpr std::string_view kPrefix = "tensor(";

std::string lower_name(DType t) {
  std::string s(dtype_name(t));
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The entries that will be printed, contiguous: every dim longer than 2 * kEdge keeps its
// first and last kEdge. Narrowing before copying keeps huge (even broadcast) tensors cheap.
Tensor gather_edges(const Tensor& t, int64_t d) {
  if (d == t.dim()) return t.contiguous();
  const int64_t n = t.size(d);
  if (n <= 2 * kEdge) return gather_edges(t, d + 1);
  return cat({gather_edges(t.narrow(d, 0, kEdge), d + 1),
              gather_edges(t.narrow(d, n - kEdge, kEdge), d + 1)},
             d);
}

// Floating values with 4 decimals, in scientific notation when their magnitudes (finite,
// nonzero) reach 1e8, go below 1e-4 or span more than 1000x, as PyTorch chooses.
std::vector<std::string> format_floats(const std::vector<double>& v) {
  double lo = INFINITY, hi = 0;
  for (double x : v) {
    const double a = std::fabs(x);
    if (std::isfinite(x) && a != 0) {
      lo = std::min(lo, a);
      hi = std::max(hi, a);
    }
  }
  const bool sci = hi > 0 && (hi >= 1e8 || lo < 1e-4 || hi / lo > 1000);
  std::vector<std::string> out;
  out.reserve(v.size());
  char buf[64];
  for (double x : v) {
    if (std::isnan(x)) {
      out.emplace_back("nan");
    } else if (std::isinf(x)) {
      out.emplace_back(x > 0 ? "inf" : "-inf");
    } else {
      std::snprintf(buf, sizeof buf, sci ? "%.4e" : "%.4f", x);
      out.emplace_back(buf);
    }
  }
  return out;
}

std::vector<std::string> format_values(const Tensor& g) {
  if (is_complex(g.dtype())) {  // re+imj, each part formatted as the floats of the tensor
    const std::vector<double> parts = view_as_real(g).cast(DType::F64).to_vector<double>();
    const std::vector<std::string> f = format_floats(parts);
    std::vector<std::string> out;
    for (size_t i = 0; i + 1 < f.size(); i += 2) {
      const bool minus = !f[i + 1].empty() && f[i + 1][0] == '-';
      out.push_back(f[i] + (minus ? "" : "+") + f[i + 1] + "j");
    }
    return out;
  }
  if (is_floating(g.dtype())) return format_floats(g.cast(DType::F64).to_vector<double>());
  const std::vector<int64_t> v = g.cast(DType::I64).to_vector<int64_t>();
  std::vector<std::string> out;
  out.reserve(v.size());
  for (int64_t x : v)
    out.push_back(g.dtype() == DType::Bool ? (x ? "true" : "false") : std::to_string(x));
  return out;
}

struct Printer {
  const std::vector<std::string>& cells;  // row-major over the gathered shape
  Shape shape;                            // the gathered shape
  std::vector<bool> cut;                  // whether dim d lost its middle
  size_t width = 0;                       // of the widest cell
  std::string out;

  void cell(int64_t i) {
    const std::string& c = cells[size_t(i)];
    out.append(width - c.size(), ' ');
    out += c;
  }

  // Dim d from flat offset `base` (in cells); its bracket sits at column `col`.
  void block(size_t d, int64_t base, size_t col) {
    const int64_t n = shape[d];
    int64_t stride = 1;
    for (size_t k = d + 1; k < shape.size(); ++k) stride *= shape[k];
    const bool last = d + 1 == shape.size();
    // Entries of the last dim per line, so that rows wrap at kLineWidth.
    const size_t room = kLineWidth > col + 1 ? kLineWidth - col - 1 : 1;
    const int64_t per_line = std::max<int64_t>(1, int64_t(room / (width + 2)));
    out += '[';
    int64_t on_line = 0;
    auto separate = [&] {
      if (!last) {
        out += ',';
        out.append(shape.size() - d - 1, '\n');
        out.append(col + 1, ' ');
      } else if (on_line == per_line) {
        out += ",\n";
        out.append(col + 1, ' ');
        on_line = 0;
      } else {
        out += ", ";
      }
    };
    for (int64_t i = 0; i < n; ++i) {
      if (i > 0) separate();
      if (cut[d] && i == kEdge) {
        out += "...";
        ++on_line;
        separate();
      }
      if (last) {
        cell(base + i);
        ++on_line;
      } else {
        block(d + 1, base + i * stride, col + 1);
      }
    }
    out += ']';
  }
};

}  // namespace

std::string format_tensor(const Tensor& t, std::string_view extra) {
  if (!t.defined()) return "tensor(undefined)";
  std::string suffix = ", dtype=" + lower_name(t.dtype()) + ", device=" + t.device().str();
  suffix += extra;
  suffix += ')';
  if (t.numel() == 0) {
    const std::string size = t.dim() == 1 ? "" : ", size=" + shape_str(t.shape());
    return std::string(kPrefix) + "[]" + size + suffix;
  }
  const bool summarize = t.numel() > kSummarizeAbove;
  const Tensor g = summarize ? gather_edges(t, 0) : t;
  const std::vector<std::string> cells = format_values(g);
  if (t.dim() == 0) return std::string(kPrefix) + cells[0] + suffix;
  Printer p{cells, g.shape(), {}, 0, {}};
  for (int64_t d = 0; d < t.dim(); ++d) p.cut.push_back(summarize && t.size(d) > 2 * kEdge);
  for (const std::string& c : cells) p.width = std::max(p.width, c.size());
  p.out = kPrefix;
  p.block(0, 0, kPrefix.size());
  return p.out + suffix;
}

std::string Tensor::to_string() const {
  const OpScope scope("to_string");
  return format_tensor(*this);
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.to_string(); }

}  // namespace numr
