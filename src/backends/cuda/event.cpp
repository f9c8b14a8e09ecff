#include "backends/cuda/event.h"

#include "backends/cuda/context.h"
#include "backends/cuda/driver.h"

namespace numr::cuda {

Event::Event(CudaDevice& dev) : dev_(dev) {
  dev.make_current();
  check(driver().event_create(&event_, CU_EVENT_DEFAULT), "cuEventCreate");
}

Event::~Event() {
  const Driver* d = try_driver();
  if (d && d->ctx_set_current(dev_.context()) == CUDA_SUCCESS) (void)d->event_destroy(event_);
}

void Event::record() {
  dev_.make_current();
  check(driver().event_record(event_, dev_.stream()), "cuEventRecord");
}

void Event::synchronize() {
  dev_.make_current();
  check(driver().event_synchronize(event_), "cuEventSynchronize");
}

float Event::elapsed_ms_since(const Event& start) {
  synchronize();
  float ms = 0.f;
  check(driver().event_elapsed_time(&ms, start.event_, event_), "cuEventElapsedTime");
  return ms;
}

}  // namespace numr::cuda
