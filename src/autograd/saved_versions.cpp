// The autograd side of in-place writes: a node remembers the storage versions of the
// tensors its rule may read, and backward refuses to run the rule once one has moved on.
#include <algorithm>
#include <functional>

#include "autograd/node.h"

namespace numr {

void Node::save_versions(const Tensor& output) {
  std::vector<const std::shared_ptr<Storage>*> storages;
  for (const Var& in : inputs_)
    if (in.defined() && in.tensor().storage()) storages.push_back(&in.tensor().storage());
  if (output.storage()) storages.push_back(&output.storage());
  // One entry per storage (x * x, views of one tensor).
  auto raw = [](const std::shared_ptr<Storage>* p) { return p->get(); };
  std::sort(storages.begin(), storages.end(),
            [&](auto a, auto b) { return std::less<Storage*>()(raw(a), raw(b)); });
  storages.erase(std::unique(storages.begin(), storages.end(),
                             [&](auto a, auto b) { return raw(a) == raw(b); }),
                 storages.end());
  saved_versions_.reserve(storages.size());
  for (const std::shared_ptr<Storage>* s : storages)
    saved_versions_.push_back({*s, (*s)->version()});
}

void Node::check_versions() const {
  for (const SavedVersion& saved : saved_versions_) {
    // A storage that is gone belonged to a leaf since given a new value (Var::assign):
    // that replaces the tensor rather than writing into it.
    const std::shared_ptr<Storage> s = saved.storage.lock();
    if (s && s->version() != saved.version)
      fail<InvalidArgument>("backward", "a tensor saved by ", name_,
                            " was modified in place after it was saved (version ", s->version(),
                            ", expected ", saved.version,
                            "); compute the new value out of place, or record the graph again "
                            "after the write");
  }
}

}  // namespace numr
