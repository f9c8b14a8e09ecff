// .npy: round trips, files saved by NumPy (read exactly, and written byte for byte the
// same), numr's files read by NumPy, and a table of malformed files.
#include <cmath>
#include <complex>
#include <limits>

#include "io_test_util.h"

namespace numr {
namespace {

using namespace io_test;

constexpr const char* kLoad = "load_npy";

const std::vector<DType> kNpyDTypes = {DType::F64, DType::F32, DType::F16, DType::I64,
                                       DType::I32, DType::U8,  DType::Bool};

Tensor specials(DType dtype, const Shape& shape) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> pool = {std::nan(""), -0.0, inf, -inf, 1.5, -2.25, 7.0, 0.125};
  std::vector<double> v(size_t(shape_numel(shape)));
  for (size_t k = 0; k < v.size(); ++k)
    v[k] = is_floating(dtype) ? pool[k % pool.size()] : double(k * 3 % 7);
  return Tensor::from_vector(v, shape).cast(dtype);
}

void expect_same(const Tensor& got, const Tensor& want) {
  EXPECT_EQ(got.dtype(), want.dtype());
  EXPECT_EQ(got.shape(), want.shape());
  EXPECT_TRUE(got.is_contiguous());
  EXPECT_EQ(bytes_of(got), bytes_of(want));
}

TEST(IoNpy, RoundTripEveryDType) {
  ScratchDir dir;
  for (const DType t : kNpyDTypes) {
    SCOPED_TRACE(dtype_name(t));
    for (const Shape& shape : std::vector<Shape>{{}, {0}, {5}, {2, 3}, {2, 0, 4}, {2, 3, 4}}) {
      const Tensor x = specials(t, shape);
      save_npy(dir.file("x.npy"), x);
      expect_same(load_npy(dir.file("x.npy")), x);
    }
  }
}

TEST(IoNpy, ViewsAreWrittenInRowMajorOrder) {
  ScratchDir dir;
  const Tensor base = specials(DType::F32, {4, 6});
  for (const Tensor& v : {base.transpose(0, 1), base.narrow(1, 2, 3), base.flip({0, 1}),
                          full({}, 3.0, DType::I32).broadcast_to({3, 2})}) {
    save_npy(dir.file("v.npy"), v);
    expect_same(load_npy(dir.file("v.npy")), v.contiguous());
  }
}

TEST(IoNpy, Bf16IsRefusedWithAHint) {
  ScratchDir dir;
  const std::string p = dir.file("b.npy");
  expect_error<UnsupportedDType>(
      "save_npy", [&] { save_npy(p, full({2}, 1.0, DType::BF16)); }, "cast to F32");
  EXPECT_FALSE(fs::exists(p));
  expect_error<InvalidArgument>("save_npy", [&] { save_npy(p, Tensor()); });
  expect_error<IoError>(
      "save_npy", [&] { save_npy(dir.file("no/dir/x.npy"), full({1}, 1.0)); },
      dir.file("no/dir/x.npy"));
  expect_error<IoError>(
      kLoad, [&] { load_npy(dir.file("absent.npy")); }, dir.file("absent.npy"));
}

// A write that fails midway (a full disk) names the path; a device is written, never removed.
TEST(IoNpy, FullDiskIsAnIoError) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  expect_error<IoError>(
      "save_npy", [] { save_npy("/dev/full", zeros({64})); }, "/dev/full");
  expect_error<IoError>(
      "save_safetensors",
      [] {
        save_safetensors("/dev/full", {{"x", zeros({64})}});
      },
      "/dev/full");
  EXPECT_TRUE(fs::exists("/dev/full"));
  save_npy("/dev/null", zeros({4}));  // succeeds, and /dev/null stays
  EXPECT_TRUE(fs::exists("/dev/null"));
}

// The files scripts/io_fixtures.py saved with NumPy.
TEST(IoNpy, ReadsNumpyFiles) {
  const std::vector<std::pair<std::string, DType>> plain = {
      {"f8.npy", DType::F64},    {"f4.npy", DType::F32},         {"f2.npy", DType::F16},
      {"i8.npy", DType::I64},    {"i4.npy", DType::I32},         {"u1.npy", DType::U8},
      {"b1.npy", DType::Bool},   {"be_f8.npy", DType::F64},      {"be_i4.npy", DType::I32},
      {"be_f2.npy", DType::F16}, {"fortran_f4.npy", DType::F32}, {"v2_i4.npy", DType::I32},
      {"v3_f4.npy", DType::F32}};
  for (const auto& [name, dtype] : plain) {
    SCOPED_TRACE(name);
    expect_same(load_npy(fixture(name)), fx_tensor(dtype, {2, 3}));
  }
  // Spelled out once, independently of the helper.
  EXPECT_EQ(load_npy(fixture("be_i4.npy")).to_vector<int32_t>(),
            (std::vector<int32_t>{3, -4, -11, -18, -25, -32}));
  EXPECT_EQ(load_npy(fixture("fortran_f4.npy")).to_vector<float>(),
            (std::vector<float>{-1, -0.5, 0, 0.5, 1, 1.5}));
  expect_same(load_npy(fixture("fortran_i8_3d.npy")), fx_tensor(DType::I64, {2, 3, 4}));
  EXPECT_EQ(load_npy(fixture("fortran_i8_3d.npy")).to_vector<int64_t>()[23], 23'000'000'156);
  const Tensor s = load_npy(fixture("scalar_f8.npy"));
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.item<double>(), 3.5);
  EXPECT_EQ(load_npy(fixture("empty_f4.npy")).shape(), (Shape{0, 3}));
  expect_error<UnsupportedDType>(
      kLoad, [] { load_npy(fixture("i1.npy")); }, "'|i1'");
  // NumPy's complex64: arange(4) + 0j.
  EXPECT_EQ(load_npy(fixture("c8.npy")).to_vector<std::complex<float>>(),
            (std::vector<std::complex<float>>{{0, 0}, {1, 0}, {2, 0}, {3, 0}}));
}

// numr writes what NumPy writes: the same header, padding and data, byte for byte.
TEST(IoNpy, WritesWhatNumpyWrites) {
  ScratchDir dir;
  const std::vector<std::pair<std::string, DType>> files = {
      {"f8.npy", DType::F64}, {"f4.npy", DType::F32}, {"f2.npy", DType::F16},
      {"i8.npy", DType::I64}, {"i4.npy", DType::I32}, {"u1.npy", DType::U8},
      {"b1.npy", DType::Bool}};
  for (const auto& [name, dtype] : files) {
    SCOPED_TRACE(name);
    save_npy(dir.file(name), fx_tensor(dtype, {2, 3}));
    EXPECT_EQ(read_bytes(dir.file(name)), read_bytes(fixture(name)));
  }
  save_npy(dir.file("s.npy"), full({}, 3.5, DType::F64));
  EXPECT_EQ(read_bytes(dir.file("s.npy")), read_bytes(fixture("scalar_f8.npy")));
  save_npy(dir.file("e.npy"), zeros({0, 3}, DType::F32));
  EXPECT_EQ(read_bytes(dir.file("e.npy")), read_bytes(fixture("empty_f4.npy")));
}

TEST(IoNpy, NumpyReadsNumrFiles) {
  const auto python = python_with_numpy();
  if (!python) GTEST_SKIP() << "no python3 with numpy (Debian: python3-numpy)";
  ScratchDir dir;
  const std::vector<std::pair<std::string, Tensor>> files = {
      {"f8", fx_tensor(DType::F64, {2, 3})}, {"f4", fx_tensor(DType::F32, {3, 2}).transpose(0, 1)},
      {"f2", fx_tensor(DType::F16, {2, 3})}, {"i8", fx_tensor(DType::I64, {2, 3})},
      {"i4", fx_tensor(DType::I32, {2, 3})}, {"u1", fx_tensor(DType::U8, {2, 3})},
      {"b1", fx_tensor(DType::Bool, {2, 3})}};
  for (const auto& [name, t] : files) save_npy(dir.file(name + ".npy"), t);
  save_npy(dir.file("scalar.npy"), full({}, -4.0, DType::I32));
  const std::string script = R"(
import os, sys
import numpy as np
d = sys.argv[1]
k = np.arange(6)
f = (k * 0.5 - 1).reshape(2, 3)
want = {"f8": ("<f8", f), "f4": ("<f4", (k * 0.5 - 1).reshape(3, 2).T), "f2": ("<f2", f),
        "i8": ("<i8", (k * 1000000007 - 5).reshape(2, 3)), "i4": ("<i4", (k * -7 + 3).reshape(2, 3)),
        "u1": ("|u1", (k * 40).reshape(2, 3)), "b1": ("|b1", (k % 3 == 0).reshape(2, 3)),
        "scalar": ("<i4", np.array(-4))}
for name, (descr, values) in want.items():
    a = np.load(os.path.join(d, name + ".npy"), allow_pickle=False)
    assert a.dtype == np.dtype(descr), (name, a.dtype)
    assert a.shape == values.shape, (name, a.shape)
    assert (a == values).all(), name
print("ok", len(want))
)";
  EXPECT_EQ(run_python(*python, script, dir.file("")), "ok 8\n");
}

// ---- malformed files ----

// A version 1.0 file with this header dict (padded as NumPy pads) and data bytes.
std::vector<uint8_t> npy_with(const std::string& dict, size_t data_bytes, int major = 1) {
  std::string h = dict;
  const size_t prefix = major == 1 ? 10 : 12;
  h.append((64 - (prefix + h.size() + 1) % 64) % 64, ' ');
  h += '\n';
  std::vector<uint8_t> f = {0x93, 'N', 'U', 'M', 'P', 'Y', uint8_t(major), 0};
  for (size_t k = 0; k < prefix - 8; ++k) f.push_back(uint8_t(h.size() >> (8 * k)));
  f.insert(f.end(), h.begin(), h.end());
  f.resize(f.size() + data_bytes, 0);
  return f;
}

TEST(IoNpy, MalformedFilesTable) {
  ScratchDir dir;
  const auto valid = [](const std::string& shape) {
    return "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  };
  struct Row {
    std::string name;
    std::vector<uint8_t> bytes;
    bool dtype_error;
    std::string needle;
  };
  std::vector<uint8_t> bad_magic = npy_with(valid("(1,)"), 4);
  bad_magic[1] = 'X';
  std::vector<uint8_t> v11 = npy_with(valid("(1,)"), 4);
  v11[7] = 1;
  std::vector<uint8_t> no_newline = npy_with(valid("(1,)"), 4);
  no_newline[no_newline.size() - 5] = ' ';
  std::vector<uint8_t> long_header = npy_with(valid("(1,)"), 4);
  long_header[8] = 0xFF, long_header[9] = 0xFF;
  std::vector<uint8_t> huge_v2 = npy_with(valid("(1,)"), 4, 2);
  huge_v2[8] = huge_v2[9] = huge_v2[10] = huge_v2[11] = 0xFF;
  const std::vector<Row> rows = {
      {"empty_file", {}, false, "too short"},
      {"bad_magic", bad_magic, false, "magic"},
      {"version_1_1", v11, false, "version 1.1"},
      {"version_4", npy_with(valid("(1,)"), 4, 4), false, "version 4.0"},
      {"header_past_end", long_header, false, "reaches past the end"},
      {"header_past_end_v2", huge_v2, false, "reaches past the end"},
      {"no_newline", no_newline, false, "newline"},
      {"not_a_dict", npy_with("['descr']", 0), false, "expected '{'"},
      {"missing_shape", npy_with("{'descr': '<f4', 'fortran_order': False}", 4), false, "required"},
      {"missing_descr", npy_with("{'fortran_order': False, 'shape': (1,)}", 4), false, "required"},
      {"extra_key", npy_with("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", 4),
       false, "unexpected key 'x'"},
      {"duplicate_key",
       npy_with("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", 4),
       false, "duplicate"},
      {"fortran_not_bool", npy_with("{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}", 4),
       false, "True or False"},
      {"shape_not_tuple", npy_with("{'descr': '<f4', 'fortran_order': False, 'shape': [1]}", 4),
       false, "expected '('"},
      {"negative_extent", npy_with(valid("(-1,)"), 0), false, "non-negative"},
      {"float_extent", npy_with(valid("(2, 1.5)"), 4), false, "expected ')'"},
      {"one_tuple_no_comma", npy_with(valid("(1)"), 4), false, "trailing comma"},
      {"extent_overflow", npy_with(valid("(99999999999999999999,)"), 4), false, "64-bit range"},
      {"product_overflow", npy_with(valid("(4294967296, 4294967296, 4294967296)"), 4), false,
       "too many elements"},
      {"data_past_file", npy_with(valid("(1000000000, 1000)"), 64), false,
       "needs 4000000000000 bytes"},
      {"data_short", npy_with(valid("(2, 3)"), 20), false, "needs 24 bytes"},
      {"data_long", npy_with(valid("(2, 3)"), 28), false, "the file has 28"},
      {"unterminated_string", npy_with("{'descr: '<f4'}", 4), false, "malformed header"},
      {"escape", npy_with("{'descr': '<f\\4', 'fortran_order': False, 'shape': (1,)}", 4), false,
       "escapes"},
      {"text_after_dict", npy_with(valid("(1,)") + " x", 4), false, "after the dict"},
      {"u2", npy_with("{'descr': '<u2', 'fortran_order': False, 'shape': (1,)}", 2), true, "'<u2'"},
      {"pipe_f4", npy_with("{'descr': '|f4', 'fortran_order': False, 'shape': (1,)}", 4), true,
       "'|f4'"},
      {"bare_f4", npy_with("{'descr': 'f4', 'fortran_order': False, 'shape': (1,)}", 4), true,
       "'f4'"},
      {"string_dtype", npy_with("{'descr': '<U5', 'fortran_order': False, 'shape': (1,)}", 20),
       true, "'<U5'"},
      {"structured",
       npy_with("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}", 4), true,
       "structured"},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(r.name);
    const std::string p = dir.file(r.name + ".npy");
    write_bytes(p, r.bytes);
    if (r.dtype_error)
      expect_error<UnsupportedDType>(
          kLoad, [&] { load_npy(p); }, r.needle);
    else
      expect_error<IoError>(
          kLoad, [&] { load_npy(p); }, r.needle);
  }
}

TEST(IoNpy, EveryTruncationIsAnIoError) {
  ScratchDir dir;
  for (const std::string name : {"f4.npy", "fortran_i8_3d.npy", "v2_i4.npy"}) {
    SCOPED_TRACE(name);
    const auto bytes = read_bytes(fixture(name));
    ASSERT_GT(bytes.size(), 64u);
    const std::string cut = dir.file("cut.npy");
    expect_truncations_and_flips(bytes, cut, kLoad, [&] { load_npy(cut); });
  }
}

}  // namespace
}  // namespace numr
