#include "examples/fashion_mnist_input.h"

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/function_builder.h"
#include "ops/data/dataset_builder.h"
#include "ops/parsing/decode_ops.h"
#include "ops/parsing/parsing_ops.h"

namespace sluice {
namespace {

// The Map function: a batch of serialized Examples -> images scaled to
// [0, 1] and labels, as TensorFlow's tutorials parse them (ParseExample of
// the whole batch: one call per batch, not per image).
absl::StatusOr<::tensorflow::NameAttrList> DefineParse(const Scope& s, const ImageInputOptions& o) {
  return DefineFunction(
      s, "parse_images", {DT_STRING},
      [&o](const Scope& f, const std::vector<Output>& args) -> absl::StatusOr<std::vector<Output>> {
        Output required_string = ops::Const(f, Tensor(DT_STRING, TensorShape({0})));
        Output required_int = ops::Const(f, Tensor(DT_INT64, TensorShape({0})));
        ops::ParseExampleOutputs parsed =
            ops::ParseExample(f, args[0], ops::Const(f, Tensor(DT_STRING, TensorShape({0}))), {},
                              {"image_raw", "label"}, {required_string, required_int}, {},
                              {TensorShape({}), TensorShape({})});
        Output pixels = ops::Cast(f, ops::DecodeRaw(f, parsed.dense_values[0], DT_UINT8), DT_FLOAT);
        Output images =
            ops::Reshape(f, ops::Mul(f, pixels, 1.0f / 255.0f),
                         ops::Const(f, std::vector<int64_t>{-1, o.height, o.width, o.channels}));
        RETURN_IF_ERROR(f.status());
        return std::vector<Output>{images, parsed.dense_values[1]};
      });
}

}  // namespace

absl::StatusOr<std::unique_ptr<ImageInput>> ImageInput::Create(const ImageInputOptions& o) {
  if (o.files.empty()) return absl::InvalidArgumentError("ImageInput: no files");
  if (o.batch < 1) return absl::InvalidArgumentError("ImageInput: batch must be positive");
  Scope s = Scope::NewRootScope(BuiltinOps());
  ASSIGN_OR_RETURN(::tensorflow::NameAttrList parse, DefineParse(s, o));
  data::Dataset ds = data::TFRecordDataset(s, ops::Const(s, o.files));
  if (o.shuffle) ds = ds.Shuffle(o.shuffle_buffer, o.seed);
  if (o.repeat) ds = ds.Repeat();
  ds = ds.Batch(o.batch, /*drop_remainder=*/o.repeat);
  data::ElementSpec spec{{DT_FLOAT, DT_INT64},
                         {TensorShape({-1, o.height, o.width, o.channels}), TensorShape({-1})}};
  ds = ds.Map(parse, spec, {.num_parallel_calls = o.parallel_calls});
  ds = ds.Prefetch(o.prefetch);
  ASSIGN_OR_RETURN(std::unique_ptr<BatchSession> batches,
                   BatchSession::Create(s, ds, o.cpu_threads));
  return std::unique_ptr<ImageInput>(new ImageInput(std::move(batches)));
}

absl::StatusOr<ImageBatch> ImageInput::Next() {
  ASSIGN_OR_RETURN(std::vector<Tensor> b, batches_->Next());
  return ImageBatch{b[0], b[1]};
}

absl::StatusOr<std::vector<ImageBatch>> ImageInput::ReadAll() {
  ASSIGN_OR_RETURN(std::vector<std::vector<Tensor>> all, batches_->ReadAll());
  std::vector<ImageBatch> out;
  for (std::vector<Tensor>& b : all) out.push_back(ImageBatch{std::move(b[0]), std::move(b[1])});
  return out;
}

}  // namespace sluice
