#include "backends/cuda/module.h"

#include <cstdint>
#include <cstring>
#include <set>
#include <sstream>

#include "backends/cuda/context.h"
#include "backends/cuda/driver.h"
#include "core/op_scope.h"
#include "numr/error.h"

namespace numr::cuda {
namespace {

constexpr size_t kLogBytes = 64 * 1024;

std::string trimmed(const char* buf) {
  std::string s(buf, strnlen(buf, kLogBytes));
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// The PTX lines a JIT log refers to ("ptxas application ptx input, line 12; error : ..."),
// numbered, so the message shows the offending text without the reader regenerating it.
std::string quoted_lines(const std::string& log, const std::string& ptx) {
  std::set<long> wanted;
  for (size_t at = log.find("line "); at != std::string::npos; at = log.find("line ", at + 5)) {
    char* end = nullptr;
    const long n = std::strtol(log.c_str() + at + 5, &end, 10);
    if (end != log.c_str() + at + 5 && n > 0 && wanted.size() < 10) wanted.insert(n);
  }
  if (wanted.empty()) return {};
  std::ostringstream os;
  std::istringstream in(ptx);
  std::string text;
  for (long n = 1; std::getline(in, text) && n <= *wanted.rbegin(); ++n)
    if (wanted.count(n)) os << "\n  " << n << " | " << text;
  return os.str();
}

}  // namespace

Module::Module(CudaDevice& dev, const std::string& ptx, std::string_view label) : dev_(dev) {
  const Driver& d = driver();
  dev.make_current();
  std::vector<char> error_log(kLogBytes, '\0'), info_log(kLogBytes, '\0');
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_LOG_VERBOSE};
  // Sizes and flags travel in the pointer-sized option slots themselves, as the driver
  // API specifies.
  void* values[] = {error_log.data(), reinterpret_cast<void*>(uintptr_t(kLogBytes - 1)),
                    info_log.data(), reinterpret_cast<void*>(uintptr_t(kLogBytes - 1)),
                    reinterpret_cast<void*>(uintptr_t(1))};
  const CUresult r =
      d.module_load_data_ex(&module_, ptx.c_str(), unsigned(std::size(options)), options, values);
  info_log_ = trimmed(info_log.data());
  if (r == CUDA_SUCCESS) return;
  module_ = nullptr;
  const std::string errors = trimmed(error_log.data());
  std::ostringstream os;
  os << "cuModuleLoadDataEx (" << label << "): " << error_text(d, r);
  if (r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
    os << " (this driver compiles PTX ISA up to " << dev.props().ptx_version() << ")";
  os << "\nJIT error log:\n" << (errors.empty() ? "(empty)" : errors);
  if (!info_log_.empty()) os << "\nJIT info log:\n" << info_log_;
  if (const std::string lines = quoted_lines(errors, ptx); !lines.empty())
    os << "\nPTX lines named in the log:" << lines;
  if (r == CUDA_ERROR_OUT_OF_MEMORY) fail<OutOfMemory>(current_op("cuda"), os.str());
  fail<BackendError>("cuda", os.str());
}

Module::~Module() {
  if (!module_) return;
  const Driver* d = try_driver();
  if (d && d->ctx_set_current(dev_.context()) == CUDA_SUCCESS) (void)d->module_unload(module_);
}

CUfunction Module::function(const std::string& name) const {
  dev_.make_current();
  CUfunction f = nullptr;
  check(driver().module_get_function(&f, module_, name.c_str()),
        "cuModuleGetFunction (" + name + ")");
  return f;
}

KernelCache::KernelCache(CudaDevice& dev) : dev_(dev) {}
KernelCache::~KernelCache() = default;

CUfunction KernelCache::get_or_build(const std::string& key,
                                     const std::function<GeneratedKernel()>& generate) {
  std::lock_guard lock(mu_);
  if (auto it = functions_.find(key); it != functions_.end()) return it->second;
  const GeneratedKernel kernel = generate();
  auto module = std::make_unique<Module>(dev_, kernel.ptx, kernel.name + ", key " + key);
  const CUfunction f = module->function(kernel.name);
  modules_.push_back(std::move(module));
  functions_.emplace(key, f);
  return f;
}

size_t KernelCache::size() const {
  std::lock_guard lock(mu_);
  return functions_.size();
}

}  // namespace numr::cuda
