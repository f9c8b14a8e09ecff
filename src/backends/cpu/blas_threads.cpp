#include "backends/cpu/blas_threads.h"

#include <cblas.h>

namespace numr::cpu {

BlasSingleThreaded::BlasSingleThreaded() : saved_(openblas_get_num_threads()) {
  if (saved_ != 1) openblas_set_num_threads(1);
}

BlasSingleThreaded::~BlasSingleThreaded() {
  if (saved_ != 1) openblas_set_num_threads(saved_);
}

}  // namespace numr::cpu
