// Files for the readers and writers of src/io: every failure is an IoError naming the op
// and the path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "numr/tensor.h"

namespace numr::io {

// A regular file opened for reading, read by absolute offsets.
class InFile {
 public:
  InFile(std::string_view op, const std::string& path);
  ~InFile();
  InFile(const InFile&) = delete;
  InFile& operator=(const InFile&) = delete;

  uint64_t size() const { return size_; }
  // Reads exactly n bytes at offset; the caller has checked that they lie in the file.
  void read(uint64_t offset, void* dst, size_t n) const;

 private:
  std::string_view op_;
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// A file created (or truncated) for writing; a regular file is removed again unless
// commit() ran.
class OutFile {
 public:
  OutFile(std::string_view op, const std::string& path);
  ~OutFile();
  OutFile(const OutFile&) = delete;
  OutFile& operator=(const OutFile&) = delete;

  void write(const void* src, size_t n);
  // Writes t's elements in row-major order (copied to the host one tensor at a time).
  void write_tensor(const Tensor& t);
  // Closes the file, reporting a failed close (a full disk may show only then).
  void commit();

 private:
  void discard() const;

  std::string_view op_;
  std::string path_;
  int fd_ = -1;
  bool regular_ = false;
};

// The bytes of a contiguous CPU tensor's first element.
inline char* host_bytes(const Tensor& t) {
  return static_cast<char*>(t.storage()->handle()) + t.offset() * int64_t(dtype_size(t.dtype()));
}

// Whether the bytes are valid UTF-8 (no overlong forms, surrogates or values past U+10FFFF).
bool valid_utf8(std::string_view s);

}  // namespace numr::io
