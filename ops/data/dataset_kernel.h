// DatasetOpKernel: the shell of every kernel that makes a dataset (TensorFlow's
// DatasetOpKernel): it reads output_types / output_shapes (or
// Toutput_types) once, asks the subclass for the dataset and outputs it as
// a DT_VARIANT scalar. Input helpers read scalars and datasets with errors
// that name the input.
//
//   class TakeOp : public UnaryDatasetOpKernel {
//     absl::StatusOr<std::shared_ptr<const data::DatasetBase>> MakeDataset(
//         OpKernelContext* ctx, std::shared_ptr<const data::DatasetBase> input) override {
//       ASSIGN_OR_RETURN(int64_t count, Int64Input(ctx, 1, "count"));
//       return std::make_shared<TakeDataset>(node(), std::move(input), count);
//     }
//   };
//
// Thread-safe as every kernel: Init-time state is read-only.
#ifndef SLUICE_OPS_DATA_DATASET_KERNEL_H_
#define SLUICE_OPS_DATA_DATASET_KERNEL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/data/dataset.h"
#include "runtime/kernel.h"

namespace sluice {

class DatasetOpKernel : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) final;
  absl::Status Compute(OpKernelContext* ctx) final;
  bool IsExpensive() const override { return false; }

 protected:
  virtual absl::Status InitDataset(const OpKernelConstruction& ctx) { return absl::OkStatus(); }
  virtual absl::StatusOr<std::shared_ptr<const data::DatasetBase>> MakeDataset(
      OpKernelContext* ctx) = 0;

  const std::string& node() const { return node_; }
  const std::string& op() const { return op_; }
  const data::DataTypeVector& dtypes() const { return dtypes_; }
  const std::vector<TensorShape>& shapes() const { return shapes_; }

 private:
  std::string node_;
  std::string op_;
  data::DataTypeVector dtypes_;
  std::vector<TensorShape> shapes_;
};

// A dataset kernel whose input 0 is a dataset.
class UnaryDatasetOpKernel : public DatasetOpKernel {
 protected:
  absl::StatusOr<std::shared_ptr<const data::DatasetBase>> MakeDataset(
      OpKernelContext* ctx) final;
  virtual absl::StatusOr<std::shared_ptr<const data::DatasetBase>> MakeDataset(
      OpKernelContext* ctx, std::shared_ptr<const data::DatasetBase> input) = 0;
};

// The dataset on input i; InvalidArgument naming the input otherwise.
absl::StatusOr<std::shared_ptr<const data::DatasetBase>> DatasetInput(OpKernelContext* ctx, int i,
                                                                      absl::string_view name);
// An int64 (or int32) scalar input; InvalidArgument naming the input.
absl::StatusOr<int64_t> Int64Input(OpKernelContext* ctx, int i, absl::string_view name);
absl::StatusOr<bool> BoolInput(OpKernelContext* ctx, int i, absl::string_view name);
// A string scalar or vector input, as a list (filenames).
absl::StatusOr<std::vector<std::string>> StringsInput(OpKernelContext* ctx, int i,
                                                      absl::string_view name);

// Checks an element against a dataset's declared dtypes (and the known dims
// of its shapes): InvalidArgument "<what> produced ... expected ...".
absl::Status CheckElement(const std::vector<Tensor>& element, const data::DataTypeVector& dtypes,
                          const std::vector<TensorShape>& shapes, absl::string_view what);

}  // namespace sluice

#endif  // SLUICE_OPS_DATA_DATASET_KERNEL_H_
