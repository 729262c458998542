// IteratorResource: an iterator as a resource of a device's ResourceMgr
// (TensorFlow's IteratorResource), what IteratorV2 / AnonymousIteratorV2
// handles name. It keeps the current pass over its dataset; MakeIterator
// starts a new pass, GetNext advances it, Save / Restore checkpoint it.
//
//   auto* r = new IteratorResource({DT_INT64}, {TensorShape({})}, params);  // via ResourceMgr
//   RETURN_IF_ERROR(r->SetIteratorFromDataset(dataset));
//   r->background_pool()->Schedule([&] { s = r->GetNext(&out, &end); });
//
// GetNext calls are serialized per resource; the iterator ops run them on
// the resource's own background thread (background_pool()), never on an
// executor's. Errors: FailedPrecondition "GetNext() failed because the
// iterator has not been initialized" before the first MakeIterator (TF's
// words); InvalidArgument when a dataset's element types differ from the
// resource's.
//
// Thread-safe. Ownership: the ResourceMgr owns the resource; the resource
// owns its iterator and shares its dataset; a running GetNext keeps the
// pass it started alive even if MakeIterator replaces it meanwhile.
#ifndef SLUICE_RUNTIME_DATA_ITERATOR_RESOURCE_H_
#define SLUICE_RUNTIME_DATA_ITERATOR_RESOURCE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "runtime/data/dataset.h"
#include "runtime/data/iterator_context.h"
#include "runtime/data/iterator_state.h"
#include "runtime/resource_mgr.h"
#include "runtime/thread_pool.h"

namespace sluice {
namespace data {

class IteratorResource : public ResourceBase {
 public:
  // `params`' background_pool is replaced by the resource's own thread.
  IteratorResource(std::string name, DataTypeVector dtypes, std::vector<TensorShape> shapes,
                   IteratorContext::Params params);
  ~IteratorResource() override;

  std::string DebugString() const override;
  const DataTypeVector& output_dtypes() const { return dtypes_; }
  const std::vector<TensorShape>& output_shapes() const { return shapes_; }
  // The thread GetNext should run on.
  ThreadPool* background_pool() { return pool_.get(); }

  // A new pass over `dataset` (MakeIterator).
  absl::Status SetIteratorFromDataset(std::shared_ptr<const DatasetBase> dataset);
  absl::Status GetNext(std::vector<Tensor>* out, bool* end_of_sequence);
  // GetNext without waiting (IteratorBase::TryGetNext): false when the
  // element is not ready, the iterator is busy or not initialized.
  bool TryGetNext(std::vector<Tensor>* out, bool* end_of_sequence, absl::Status* status);
  // The current pass's position; FailedPrecondition before MakeIterator.
  absl::StatusOr<IteratorStateMap> Save();
  // Continues the current dataset from a saved position (a new pass over it,
  // restored).
  absl::Status Restore(const IteratorStateMap& state);

 private:
  struct Pass {
    std::shared_ptr<const DatasetBase> dataset;
    absl::Mutex mu;
    std::unique_ptr<IteratorBase> iterator ABSL_GUARDED_BY(mu);
  };
  std::shared_ptr<Pass> current() const;
  absl::Status CheckTypes(const DatasetBase& dataset) const;

  const std::string name_;
  const DataTypeVector dtypes_;
  const std::vector<TensorShape> shapes_;
  // Keeps the context's function runtime alive when it is shared-owned
  // (the executor that made the resource may go before it).
  std::shared_ptr<FunctionRuntime> function_runtime_;
  IteratorContext ctx_;
  mutable absl::Mutex mu_;
  std::shared_ptr<Pass> pass_ ABSL_GUARDED_BY(mu_);
  // Last: destroyed first, finishing a GetNext under way while the rest lives.
  std::unique_ptr<ThreadPool> pool_;
};

}  // namespace data
}  // namespace sluice

#endif  // SLUICE_RUNTIME_DATA_ITERATOR_RESOURCE_H_
