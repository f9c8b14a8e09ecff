// OpenBLAS called from numr's pool threads, one small product or factorisation per task.
#pragma once

namespace numr::cpu {

// Holds OpenBLAS to one thread while it lives. Concurrent callers of a threaded OpenBLAS
// share its thread server and buffer table, which is not safe from many pool threads at
// once; numr's pool already takes the cores.
class BlasSingleThreaded {
 public:
  BlasSingleThreaded();
  ~BlasSingleThreaded();
  BlasSingleThreaded(const BlasSingleThreaded&) = delete;
  BlasSingleThreaded& operator=(const BlasSingleThreaded&) = delete;

 private:
  int saved_;
};

}  // namespace numr::cpu
