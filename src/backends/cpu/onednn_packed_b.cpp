#include "backends/cpu/onednn_packed_b.h"

#include <atomic>

namespace numr::cpu {
namespace {

std::atomic<int64_t> g_min_bytes{PackedB::kMinBytes};
std::atomic<int64_t> g_packs{0};

}  // namespace

bool PackedB::worth_it(int64_t calls, int64_t b_bytes) {
  return calls >= kMinCalls && b_bytes >= g_min_bytes.load(std::memory_order_relaxed);
}

void PackedB::pack(const dnnl::memory::desc& plain, const void* data,
                   const dnnl::memory::desc& layout, ScratchBuffer& buffer) {
  if (layout == plain) return;
  dnnl::engine& engine = onednn_engine();
  dnnl::stream stream(engine);
  // oneDNN only reads the source.
  dnnl::memory src(plain, engine, const_cast<void*>(data));
  dnnl::memory dst(layout, engine, buffer.get(layout.get_size()));
  dnnl::reorder(src, dst).execute(stream, src, dst);
  stream.wait();
  g_packs.fetch_add(1, std::memory_order_relaxed);
  layout_ = layout;
  data_ = dst.get_data_handle();
}

int64_t packed_b_count() { return g_packs.load(std::memory_order_relaxed); }
void set_packed_b_min_bytes_for_testing(int64_t bytes) {
  g_min_bytes.store(bytes, std::memory_order_relaxed);
}

}  // namespace numr::cpu
