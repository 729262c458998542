// The Example parser (ops/parsing/example_parser.h) on arbitrary bytes, as
// one serialized Example (dense fixed and variable length, sparse, ragged)
// and as one SequenceExample: no crash, no unbounded allocation; a failure
// is InvalidArgument.
#include <cstdlib>
#include <string>

#include "fuzz/fuzz_target.h"
#include "ops/parsing/example_parser.h"

namespace {

const sluice::ExampleParseConfig& Config() {
  static const sluice::ExampleParseConfig* config = [] {
    auto* c = new sluice::ExampleParseConfig;
    c->dense.push_back({"image", sluice::DT_FLOAT, sluice::TensorShape({2, 3}),
                        sluice::Tensor(sluice::DT_FLOAT, sluice::TensorShape({0}))});
    c->dense.push_back({"label", sluice::DT_INT64, sluice::TensorShape({}),
                        sluice::Tensor::Scalar<int64_t>(-1)});
    c->dense.push_back({"tokens", sluice::DT_STRING, sluice::TensorShape({-1}),
                        sluice::Tensor::Scalar<std::string>("")});
    c->sparse.push_back({"tags", sluice::DT_STRING});
    c->sparse.push_back({"ids", sluice::DT_INT64});
    c->ragged.push_back({"weights", sluice::DT_FLOAT, sluice::DT_INT32});
    if (!c->Finish().ok()) std::abort();
    return c;
  }();
  return *config;
}

void CheckStatus(const absl::Status& s) {
  if (!s.ok() && s.code() != absl::StatusCode::kInvalidArgument) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  sluice::Tensor serialized = sluice::Tensor::FromVector<std::string>({bytes, bytes});
  CheckStatus(sluice::ParseExamples(Config(), serialized, sluice::Tensor()).status());
  CheckStatus(sluice::ParseExamples(Config(), sluice::Tensor::Scalar<std::string>(bytes),
                                    sluice::Tensor())
                  .status());
  sluice::FeatureListConfig lists;
  lists.dense.push_back({"frames", sluice::DT_FLOAT, sluice::TensorShape({2}), sluice::Tensor()});
  lists.sparse.push_back({"words", sluice::DT_STRING});
  lists.missing_assumed_empty = {"frames"};
  sluice::ExampleParseConfig context;
  context.sparse.push_back({"id", sluice::DT_INT64});
  if (!context.Finish().ok()) std::abort();
  CheckStatus(sluice::ParseSequenceExamples(context, lists, serialized, sluice::Tensor()).status());
  return 0;
}
