#include "examples/click_input.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
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
  data::Dataset ds = data::TFRecordDataset(s, ops::Const(s, o.files));
  if (o.shuffle) ds = ds.Shuffle(o.shuffle_buffer, o.seed);
  if (o.repeat) ds = ds.Repeat();
  ds = ds.Batch(o.batch, /*drop_remainder=*/o.repeat);
  data::ElementSpec spec{{DT_INT64, DT_FLOAT}, {TensorShape({-1, o.features}), TensorShape({-1})}};
  ds = ds.Map(parse, spec, {.num_parallel_calls = o.parallel_calls});
  ds = ds.Prefetch(o.prefetch);
  data::Iterator it = ds.MakeInitializableIterator();
  std::vector<Output> next = it.GetNext();
  RETURN_IF_ERROR(s.status());
  SessionConfig config = BuiltinSessionConfig();
  config.devices.cpu_threads = o.cpu_threads;
  ASSIGN_OR_RETURN(GraphDef def, s.ToGraphDef());
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(config, def));
  RETURN_IF_ERROR(session->Run({}, {}, {it.initializer()->name()}).status());
  return std::unique_ptr<ClickInput>(new ClickInput(std::move(session),
                                                    absl::StrCat(next[0].node->name(), ":0"),
                                                    absl::StrCat(next[1].node->name(), ":1")));
}

absl::StatusOr<ClickBatch> ClickInput::Next() {
  const absl::Time start = absl::Now();
  absl::StatusOr<std::vector<Tensor>> out = session_->Run({}, {ids_, labels_}, {});
  wait_seconds_ += absl::ToDoubleSeconds(absl::Now() - start);
  if (!out.ok()) return out.status();
  return ClickBatch{(*out)[0], (*out)[1]};
}

absl::StatusOr<std::vector<ClickBatch>> ClickInput::ReadAll() {
  std::vector<ClickBatch> all;
  while (true) {
    absl::StatusOr<ClickBatch> b = Next();
    if (absl::IsOutOfRange(b.status())) return all;
    RETURN_IF_ERROR(b.status());
    all.push_back(*std::move(b));
  }
}

}  // namespace sluice
