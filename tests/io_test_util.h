// Helpers shared by the I/O tests: scratch files, the checked-in fixtures, the element
// formulas of scripts/io_fixtures.py, and a Python with NumPy when there is one.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

#include "numr/numr.h"

namespace numr::io_test {

namespace fs = std::filesystem;

// A fresh directory removed at the end of the test.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (fs::temp_directory_path() / "numr_io_XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }

 private:
  fs::path dir_;
};

inline std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}
inline void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

// tests/data/<dir>/<name>, found by walking up from the test program (build trees live
// inside the source tree), or under NUMR_TEST_DATA when set.
inline std::string fixture_in(const std::string& dir, const std::string& name) {
  if (const char* env = std::getenv("NUMR_TEST_DATA")) return (fs::path(env) / dir / name).string();
  std::error_code ec;
  for (fs::path p = fs::read_symlink("/proc/self/exe", ec).parent_path(); !p.empty();
       p = p.parent_path()) {
    const fs::path candidate = p / "tests" / "data" / dir / name;
    if (fs::exists(candidate)) return candidate.string();
    if (p == p.root_path()) break;
  }
  ADD_FAILURE() << "fixture tests/data/" << dir << "/" << name
                << " not found above the test program";
  return "/nonexistent/" + name;
}
// tests/data/io/<name>.
inline std::string fixture(const std::string& name) { return fixture_in("io", name); }

// The bytes of t's elements in row-major order.
inline std::vector<uint8_t> bytes_of(const Tensor& t) {
  const Tensor c = t.contiguous().to(Device::cpu());
  const size_t n = size_t(c.numel()) * dtype_size(c.dtype());
  std::vector<uint8_t> out(n);
  if (n)
    std::memcpy(out.data(),
                static_cast<const char*>(c.storage()->handle()) +
                    c.offset() * int64_t(dtype_size(c.dtype())),
                n);
  return out;
}

// Element k of the fixtures, per scripts/io_fixtures.py.
inline double fx_float(int64_t k) { return double(k) * 0.5 - 1.0; }
inline int64_t fx_i64(int64_t k) { return k * 1'000'000'007 - 5; }
inline int32_t fx_i32(int64_t k) { return int32_t(k * -7 + 3); }
inline uint8_t fx_u8(int64_t k) { return uint8_t(k * 40); }
inline bool fx_bool(int64_t k) { return k % 3 == 0; }

// The fixture values as a numr tensor of `dtype` and `shape` (built here, not read).
inline Tensor fx_tensor(DType dtype, const Shape& shape) {
  const int64_t n = shape_numel(shape);
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    switch (dtype) {
      case DType::I64: v[size_t(k)] = double(fx_i64(k)); break;
      case DType::I32: v[size_t(k)] = fx_i32(k); break;
      case DType::U8: v[size_t(k)] = fx_u8(k); break;
      case DType::Bool: v[size_t(k)] = fx_bool(k); break;
      default: v[size_t(k)] = fx_float(k);
    }
  }
  if (dtype == DType::I64) {
    std::vector<int64_t> iv(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) iv[size_t(k)] = fx_i64(k);
    return Tensor::from_vector(iv, shape);
  }
  return Tensor::from_vector(v, shape).cast(dtype);
}

// A python3 that imports numpy ("python3" first, then Debian's), or nothing.
inline std::optional<std::string> python_with_numpy() {
  for (const char* py : {"python3", "/usr/bin/python3"}) {
    const std::string cmd = std::string(py) + " -c 'import numpy' >/dev/null 2>&1";
    if (std::system(cmd.c_str()) == 0) return std::string(py);
  }
  return std::nullopt;
}

// Runs `python -c script arg` and returns its standard output; fails the test on a
// nonzero exit.
inline std::string run_python(const std::string& python, const std::string& script,
                              const std::string& arg) {
  const std::string cmd = python + " -c '" + script + "' '" + arg + "' 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) {
    ADD_FAILURE() << "popen failed";
    return "";
  }
  std::string out;
  char buf[512];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int rc = ::pclose(p);
  EXPECT_EQ(rc, 0) << out;
  return out;
}

// Runs f, which must throw E whose message starts with "[op] " and contains `needle`.
template <class E>
void expect_error(const std::string& op, const std::function<void()>& f,
                  const std::string& needle = "") {
  try {
    f();
    ADD_FAILURE() << "expected " << op << " to throw";
  } catch (const E& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("[" + op + "] ", 0), 0u) << msg;
    if (!needle.empty()) {
      EXPECT_NE(msg.find(needle), std::string::npos) << msg;
    }
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong error type: " << e.what();
  }
}

// Every truncation of a valid file's bytes gives an IoError from op, and every single
// corrupted byte either an error naming op or a clean load; load reads the file at path.
inline void expect_truncations_and_flips(const std::vector<uint8_t>& bytes, const std::string& path,
                                         const std::string& op, const std::function<void()>& load) {
  for (size_t n = 0; n < bytes.size(); ++n) {
    SCOPED_TRACE(n);
    write_bytes(path, std::vector<uint8_t>(bytes.begin(), bytes.begin() + int64_t(n)));
    expect_error<IoError>(op, load);
  }
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::vector<uint8_t> f = bytes;
    f[i] ^= 0x5A;
    write_bytes(path, f);
    try {
      load();
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("[" + op + "] ", 0), 0u) << e.what();
    }
  }
}

}  // namespace numr::io_test
