#include "runtime/data/dataset.h"

#include "base/status_macros.h"

namespace sluice {
namespace data {

std::string DatasetBase::DebugString() const {
  return absl::StrCat(Name(), "Dataset '", node_, "'");
}

absl::StatusOr<std::unique_ptr<IteratorBase>> DatasetBase::MakeIterator(
    IteratorContext* ctx, absl::string_view parent_prefix) const {
  std::unique_ptr<IteratorBase> it =
      MakeIteratorInternal(absl::StrCat(parent_prefix, "::", Name()));
  RETURN_IF_ERROR(it->Initialize(ctx));
  return it;
}

Tensor DatasetTensor(std::shared_ptr<const DatasetBase> dataset) {
  Tensor t(::tensorflow::DT_VARIANT, TensorShape({}));
  t.scalar<Variant>() = Variant(std::move(dataset));
  return t;
}

absl::StatusOr<std::shared_ptr<const DatasetBase>> DatasetFromTensor(const Tensor& t) {
  if (t.dtype() != ::tensorflow::DT_VARIANT || t.dims() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected a dataset (a variant scalar), got ", t.DebugString(1)));
  }
  std::shared_ptr<const DatasetBase> ds = t.scalar<Variant>().share<DatasetBase>();
  if (ds == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected a dataset, got a ", t.scalar<Variant>().TypeName()));
  }
  return ds;
}

absl::Status SaveInput(IteratorStateWriter* writer, const IteratorBase& owner,
                       absl::string_view key, IteratorBase* input) {
  if (input == nullptr) {
    writer->WriteInt(owner.Key(absl::StrCat(key, "_exhausted")), 1);
    return absl::OkStatus();
  }
  return input->Save(writer);
}

absl::Status RestoreInput(IteratorContext* ctx, const IteratorStateReader& reader,
                          const IteratorBase& owner, absl::string_view key,
                          const DatasetBase& dataset, std::unique_ptr<IteratorBase>* input) {
  if (reader.Contains(owner.Key(absl::StrCat(key, "_exhausted")))) {
    input->reset();
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(*input, dataset.MakeIterator(ctx, owner.prefix()));
  return (*input)->Restore(ctx, reader);
}

void SaveElement(IteratorStateWriter* writer, const IteratorBase& owner, absl::string_view key,
                 const std::vector<Tensor>& element) {
  writer->WriteInt(owner.Key(absl::StrCat(key, ".size")), static_cast<int64_t>(element.size()));
  for (size_t i = 0; i < element.size(); ++i) {
    writer->WriteTensor(owner.Key(absl::StrCat(key, ".", i)), element[i]);
  }
}

absl::StatusOr<std::vector<Tensor>> RestoreElement(const IteratorStateReader& reader,
                                                   const IteratorBase& owner,
                                                   absl::string_view key) {
  ASSIGN_OR_RETURN(int64_t n, reader.ReadInt(owner.Key(absl::StrCat(key, ".size"))));
  std::vector<Tensor> element;
  element.reserve(n);
  for (int64_t i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(Tensor t, reader.ReadTensor(owner.Key(absl::StrCat(key, ".", i))));
    element.push_back(std::move(t));
  }
  return element;
}

void SaveStatus(IteratorStateWriter* writer, const IteratorBase& owner, absl::string_view key,
                const absl::Status& status) {
  writer->WriteInt(owner.Key(absl::StrCat(key, ".code")), static_cast<int64_t>(status.code()));
  if (!status.ok()) {
    writer->WriteString(owner.Key(absl::StrCat(key, ".message")), status.message());
  }
}

absl::StatusOr<absl::Status> RestoreStatus(const IteratorStateReader& reader,
                                           const IteratorBase& owner, absl::string_view key) {
  ASSIGN_OR_RETURN(int64_t code, reader.ReadInt(owner.Key(absl::StrCat(key, ".code"))));
  if (code == 0) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::string message,
                   reader.ReadString(owner.Key(absl::StrCat(key, ".message"))));
  return absl::Status(static_cast<absl::StatusCode>(code), message);
}

}  // namespace data
}  // namespace sluice
