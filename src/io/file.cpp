#include "io/file.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace numr::io {

InFile::InFile(std::string_view op, const std::string& path) : op_(op), path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) fail<IoError>(op, "cannot open '", path, "': ", std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    fail<IoError>(op, "'", path, "' is not a regular file");
  }
  size_ = uint64_t(st.st_size);
}

InFile::~InFile() { ::close(fd_); }

void InFile::read(uint64_t offset, void* dst, size_t n) const {
  char* out = static_cast<char*>(dst);
  while (n > 0) {
    const ssize_t got = ::pread(fd_, out, n, off_t(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail<IoError>(op_, "cannot read '", path_, "': ", std::strerror(errno));
    if (got == 0) fail<IoError>(op_, "'", path_, "' ended early (it shrank while being read)");
    out += got;
    offset += uint64_t(got);
    n -= size_t(got);
  }
}

OutFile::OutFile(std::string_view op, const std::string& path) : op_(op), path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd_ < 0) fail<IoError>(op, "cannot create '", path, "': ", std::strerror(errno));
  struct stat st {};
  regular_ = ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode);
}

OutFile::~OutFile() {
  if (fd_ >= 0) {  // not committed: an exception is on its way, leave no partial file
    ::close(fd_);
    discard();
  }
}

void OutFile::discard() const {
  if (regular_) ::unlink(path_.c_str());  // never a device such as /dev/null
}

void OutFile::write(const void* src, size_t n) {
  const char* in = static_cast<const char*>(src);
  while (n > 0) {
    const ssize_t put = ::write(fd_, in, n);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) fail<IoError>(op_, "cannot write '", path_, "': ", std::strerror(errno));
    in += put;
    n -= size_t(put);
  }
}

void OutFile::write_tensor(const Tensor& t) {
  if (t.numel() == 0) return;
  const Tensor host = t.contiguous().to(Device::cpu());
  write(host_bytes(host), size_t(host.numel()) * dtype_size(host.dtype()));
}

void OutFile::commit() {
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    const int err = errno;
    discard();
    fail<IoError>(op_, "cannot write '", path_, "': ", std::strerror(err));
  }
}

bool valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = uint8_t(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    int extra = 0;
    uint32_t cp = 0, min = 0;
    if ((c & 0xE0) == 0xC0) {
      extra = 1, cp = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2, cp = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3, cp = c & 0x07, min = 0x10000;
    } else {
      return false;
    }
    if (i + size_t(extra) >= s.size()) return false;  // cut short
    for (int k = 1; k <= extra; ++k) {
      const auto d = uint8_t(s[i + size_t(k)]);
      if ((d & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += size_t(extra) + 1;
  }
  return true;
}

}  // namespace numr::io
