// Links against an installed numr and checks one result.
#include <numr/numr.h>

#include <cstdio>

int main() {
  using namespace numr;
  const Tensor a = Tensor::from_vector<float>({1.f, 2.f, 3.f}, {3});
  const Tensor b = full({3}, 2.0);
  const std::vector<float> c = (a * b + 1.0).to_vector<float>();
  if (c != std::vector<float>{3.f, 5.f, 7.f}) {
    std::puts("consumer: wrong result");
    return 1;
  }
  std::puts("consumer: find_package(numr) and numr::numr work");
  return 0;
}
