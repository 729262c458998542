#include "examples/click_input.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "examples/click_logs.h"
#include "graph/function_builder.h"
#include "ops/data/dataset_builder.h"
#include "ops/io/io_ops.h"
#include "ops/parsing/parsing_ops.h"
#include "ops/strings/string_ops.h"

namespace sluice {
namespace {

// The Map function: a batch of serialized Examples -> hashed ids [n, F] and
// float labels [n].
absl::StatusOr<::tensorflow::NameAttrList> DefineParse(const Scope& s, const ClickInputOptions& o) {
  return DefineFunction(
      s, "parse_clicks", {DT_STRING},
      [&o](const Scope& f, const std::vector<Output>& args) -> absl::StatusOr<std::vector<Output>> {
        std::vector<std::string> keys = ClickFeatureNames(o.features);
        keys.push_back("label");
        std::vector<Output> defaults;
        std::vector<TensorShape> shapes;
        for (int k = 0; k < o.features; ++k) {
          defaults.push_back(ops::Const(f, Tensor(DT_STRING, TensorShape({0}))));  // required
          shapes.push_back(TensorShape({}));
        }
        defaults.push_back(ops::Const(f, Tensor(DT_INT64, TensorShape({0}))));
        shapes.push_back(TensorShape({}));
        ops::ParseExampleOutputs parsed =
            ops::ParseExample(f, args[0], ops::Const(f, Tensor(DT_STRING, TensorShape({0}))), {},
                              keys, defaults, {}, shapes);
        std::vector<Output> ids;
        for (int k = 0; k < o.features; ++k) {
          Output crossed = ops::StringJoin(
              f,
              {ops::Const(f, Tensor::FromVector<std::string>({keys[k]}, TensorShape({}))),
               parsed.dense_values[k]},
              {.separator = ":"});
          ids.push_back(ops::StringToHashBucketFast(f, crossed, o.buckets));
        }
        Output stacked = ops::Pack(f, absl::Span<const Output>(ids), {.axis = 1});
        Output labels = ops::Cast(f, parsed.dense_values[o.features], DT_FLOAT);
        RETURN_IF_ERROR(f.status());
        return std::vector<Output>{stacked, labels};
      });
}

}  // namespace

absl::StatusOr<std::unique_ptr<ClickInput>> ClickInput::Create(const ClickInputOptions& o) {
  if (o.files.empty()) return absl::InvalidArgumentError("ClickInput: no files");
  if (o.batch < 1) return absl::InvalidArgumentError("ClickInput: batch must be positive");
  if (o.features < 1 || o.buckets < 1) {
    return absl::InvalidArgumentError("ClickInput: features and buckets must be positive");
  }
  Scope s = Scope::NewRootScope(BuiltinOps());
  ASSIGN_OR_RETURN(::tensorflow::NameAttrList parse, DefineParse(s, o));
  const bool repeat = o.repeat && !o.preload;  // preloaded batches repeat in memory
  data::Dataset ds = data::TFRecordDataset(s, ops::Const(s, o.files));
  if (o.shuffle) ds = ds.Shuffle(o.shuffle_buffer, o.seed);
  if (repeat) ds = ds.Repeat();
  // Whole batches only when they repeat (preloaded ones repeat in memory).
  ds = ds.Batch(o.batch, /*drop_remainder=*/o.repeat || o.preload);
  data::ElementSpec spec{{DT_INT64, DT_FLOAT}, {TensorShape({-1, o.features}), TensorShape({-1})}};
  ds = ds.Map(parse, spec, {.num_parallel_calls = o.parallel_calls});
  ds = ds.Prefetch(o.prefetch);
  ASSIGN_OR_RETURN(std::unique_ptr<BatchSession> batches,
                   BatchSession::Create(s, ds, o.cpu_threads));
  std::unique_ptr<ClickInput> in(new ClickInput(std::move(batches), o.seed));
  if (!o.preload) return in;
  ASSIGN_OR_RETURN(in->held_, in->ReadAll());
  if (in->held_.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("ClickInput: no whole batch of ", o.batch,
                                                   " examples in ", o.files.size(), " files"));
  }
  in->batches_.reset();
  in->order_.resize(in->held_.size());
  for (size_t i = 0; i < in->order_.size(); ++i) in->order_[i] = i;
  in->reshuffle_ = o.shuffle;
  return in;
}

absl::StatusOr<ClickBatch> ClickInput::Next() {
  if (batches_ == nullptr) {  // preloaded: cycle through held_
    if (next_ == order_.size()) next_ = 0;
    if (next_ == 0 && reshuffle_) std::shuffle(order_.begin(), order_.end(), rng_);
    return held_[order_[next_++]];
  }
  ASSIGN_OR_RETURN(std::vector<Tensor> b, batches_->Next());
  return ClickBatch{b[0], b[1]};
}

absl::StatusOr<std::vector<ClickBatch>> ClickInput::ReadAll() {
  if (batches_ == nullptr) return held_;
  ASSIGN_OR_RETURN(std::vector<std::vector<Tensor>> all, batches_->ReadAll());
  std::vector<ClickBatch> out;
  for (std::vector<Tensor>& b : all) out.push_back(ClickBatch{std::move(b[0]), std::move(b[1])});
  return out;
}

}  // namespace sluice
