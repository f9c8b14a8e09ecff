// CUDA events on a device's stream, for timing GPU work (the benchmark) and for waiting on
// a point in the stream.
#pragma once

#include "backends/cuda/driver_api.h"

namespace numr::cuda {

class CudaDevice;

class Event {
 public:
  explicit Event(CudaDevice& dev);  // a timing event (CU_EVENT_DEFAULT)
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  // Marks the current end of the device's stream.
  void record();
  // Waits until the work before the last record() has finished.
  void synchronize();
  // Milliseconds of GPU time between `start`'s record and this event's; waits for this
  // event. Both must have been recorded.
  float elapsed_ms_since(const Event& start);

 private:
  CudaDevice& dev_;
  CUevent event_ = nullptr;
};

}  // namespace numr::cuda
