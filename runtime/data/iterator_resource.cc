#include "runtime/data/iterator_resource.h"

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace sluice {
namespace data {
namespace {

IteratorContext::Params WithPool(IteratorContext::Params p, ThreadPool* pool) {
  p.background_pool = pool;
  return p;
}

std::string TypesString(const DataTypeVector& types) {
  std::string s = "[";
  for (size_t i = 0; i < types.size(); ++i) absl::StrAppend(&s, i ? ", " : "", DataTypeName(types[i]));
  return s + "]";
}

}  // namespace

IteratorResource::IteratorResource(std::string name, DataTypeVector dtypes,
                                   std::vector<TensorShape> shapes,
                                   IteratorContext::Params params)
    : name_(std::move(name)),
      dtypes_(std::move(dtypes)),
      shapes_(std::move(shapes)),
      ctx_(IteratorContext::Params{}),
      pool_(std::make_unique<ThreadPool>("iterator", 1)) {
  if (params.function_runtime != nullptr) {
    function_runtime_ = params.function_runtime->weak_from_this().lock();
  }
  ctx_ = IteratorContext(WithPool(params, pool_.get()));
}

IteratorResource::~IteratorResource() {
  pool_.reset();  // finishes a GetNext under way first
  absl::MutexLock l(&mu_);
  pass_.reset();
}

std::string IteratorResource::DebugString() const {
  return absl::StrCat("Iterator '", name_, "' of ", TypesString(dtypes_));
}

std::shared_ptr<IteratorResource::Pass> IteratorResource::current() const {
  absl::MutexLock l(&mu_);
  return pass_;
}

absl::Status IteratorResource::CheckTypes(const DatasetBase& dataset) const {
  if (dataset.output_dtypes() != dtypes_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the dataset's element types ", TypesString(dataset.output_dtypes()),
        " differ from the iterator's ", TypesString(dtypes_), " (iterator '", name_, "')"));
  }
  return absl::OkStatus();
}

absl::Status IteratorResource::SetIteratorFromDataset(std::shared_ptr<const DatasetBase> dataset) {
  RETURN_IF_ERROR(CheckTypes(*dataset));
  auto pass = std::make_shared<Pass>();
  pass->dataset = dataset;
  ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> it, dataset->MakeIterator(&ctx_, "Iterator"));
  {
    absl::MutexLock l(&pass->mu);
    pass->iterator = std::move(it);
  }
  std::shared_ptr<Pass> old;
  {
    absl::MutexLock l(&mu_);
    old = std::move(pass_);
    pass_ = std::move(pass);
  }
  return absl::OkStatus();  // `old` (its threads) goes here, outside mu_
}

absl::Status IteratorResource::GetNext(std::vector<Tensor>* out, bool* end_of_sequence) {
  std::shared_ptr<Pass> pass = current();
  if (pass == nullptr) {
    return absl::FailedPreconditionError(
        "GetNext() failed because the iterator has not been initialized. Ensure that you have "
        "run the initializer operation for this iterator before getting the next element.");
  }
  absl::MutexLock l(&pass->mu);
  return pass->iterator->GetNext(&ctx_, out, end_of_sequence);
}

bool IteratorResource::TryGetNext(std::vector<Tensor>* out, bool* end_of_sequence,
                                  absl::Status* status) {
  std::shared_ptr<Pass> pass = current();
  if (pass == nullptr || !pass->mu.TryLock()) return false;
  const bool ready = pass->iterator->TryGetNext(&ctx_, out, end_of_sequence, status);
  pass->mu.Unlock();
  return ready;
}

absl::StatusOr<IteratorStateMap> IteratorResource::Save() {
  std::shared_ptr<Pass> pass = current();
  if (pass == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot save iterator '", name_, "': it has not been initialized"));
  }
  IteratorStateWriter w;
  absl::MutexLock l(&pass->mu);
  RETURN_IF_ERROR(pass->iterator->Save(&w));
  return w.release();
}

absl::Status IteratorResource::Restore(const IteratorStateMap& state) {
  std::shared_ptr<Pass> pass = current();
  if (pass == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot restore iterator '", name_, "': it has no dataset yet (run its initializer)"));
  }
  auto restored = std::make_shared<Pass>();
  restored->dataset = pass->dataset;
  ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> it,
                   restored->dataset->MakeIterator(&ctx_, "Iterator"));
  IteratorStateReader reader(state);
  RETURN_IF_ERROR(it->Restore(&ctx_, reader));
  {
    absl::MutexLock l(&restored->mu);
    restored->iterator = std::move(it);
  }
  std::shared_ptr<Pass> old;
  {
    absl::MutexLock l(&mu_);
    old = std::move(pass_);
    pass_ = std::move(restored);
  }
  return absl::OkStatus();
}

}  // namespace data
}  // namespace sluice
