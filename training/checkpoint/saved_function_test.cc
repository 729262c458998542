// Calling a TF2 SavedModel's functions by object path: testdata/module_methods
// (make_module_saved_model.py says what each function computes). Values
// are TensorFlow's, as its loader printed them when the file was written.
#include "training/checkpoint/saved_function.h"

#include <cstdlib>
#include <thread>

#include "absl/strings/str_cat.h"
#include "builtin_session.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string ModelDir() {
  return absl::StrCat(std::getenv("TEST_SRCDIR"), "/", std::getenv("TEST_WORKSPACE"),
                      "/training/checkpoint/testdata/module_methods");
}

Tensor Row(std::vector<float> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::FromVector<float>(v, TensorShape({1, n}));
}

class SavedFunctionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<SavedModelBundle> loaded =
        LoadSavedModel(BuiltinSessionConfig(), ModelDir(), {"serve"});
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    model_ = *std::move(loaded);
    functions_ = std::make_unique<SavedFunctions>(&model_);
  }

  SavedModelBundle model_;
  std::unique_ptr<SavedFunctions> functions_;
};

TEST_F(SavedFunctionTest, ListsTheFunctionsByPath) {
  // Not the signatures, not the table's private functions.
  EXPECT_THAT(functions_->Paths(), ElementsAre("enc.embed", "f", "g", "h", "lookup"));
}

TEST_F(SavedFunctionTest, CallsMethodsThatShareStateWithTheSignature) {
  // h captures enc.steps and enc.w (also the signature's), bias (its own,
  // restored when first called) and a constant.
  auto h = functions_->Call("h", {{"x", Row({1, 2, 3})}});
  ASSERT_TRUE(h.ok()) << h.status();
  ASSERT_EQ(h->size(), 2u);
  EXPECT_EQ((*h)[0].first, "0");
  EXPECT_THAT((*h)[0].second.flat<float>(), ElementsAre(2.25f, 4.25f));
  EXPECT_EQ((*h)[1].first, "1");
  EXPECT_THAT((*h)[1].second.flat<float>(), ElementsAre(2.0f, -2.0f));

  // f's outputs by dict key, sorted; steps was saved as 3, h added 1 and f 1.
  auto f = functions_->Call("f", {{"x", Row({1, 2, 3})}, {"b", Tensor::Scalar<float>(1.0f)}});
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ(f->size(), 2u);
  EXPECT_EQ((*f)[0].first, "n");
  EXPECT_EQ((*f)[0].second.scalar<int64_t>(), 5);
  EXPECT_EQ((*f)[1].first, "y");
  EXPECT_THAT((*f)[1].second.flat<float>(), ElementsAre(5.0f, 11.0f));

  // The signature reads the same counter; a nested call by its own path too.
  auto sig = RunSignature(model_, "serving_default",
                          {{"x", Row({0, 0, 1})}, {"b", Tensor::Scalar<float>(0.0f)}});
  ASSERT_TRUE(sig.ok()) << sig.status();
  EXPECT_EQ(sig->at("n").scalar<int64_t>(), 6);
  EXPECT_THAT(sig->at("y").flat<float>(), ElementsAre(2.0f, 3.0f));
  auto embed = functions_->Call("enc.embed", {{"x", Tensor::FromVector<float>(
                                                       {1, 0, 0, 0, 1, 0}, TensorShape({2, 3}))}});
  ASSERT_TRUE(embed.ok()) << embed.status();
  ASSERT_EQ(embed->size(), 1u);
  EXPECT_EQ((*embed)[0].first, "output");
  EXPECT_THAT((*embed)[0].second.flat<float>(), ElementsAre(-1.0f, -0.5f, 0.0f, 0.5f));
  f = functions_->Call("f", {{"x", Row({0, 0, 0})}, {"b", Tensor::Scalar<float>(0.0f)}});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ((*f)[0].second.scalar<int64_t>(), 8);
}

TEST_F(SavedFunctionTest, ConcurrentCallsAddEachTraceOnceAndCountEveryCall) {
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 5; ++i) {
        if (!functions_->Call("enc.embed", {{"x", Row({1, 1, 1})}}).ok()) ++failures;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  auto f = functions_->Call("f", {{"x", Row({0, 0, 0})}, {"b", Tensor::Scalar<float>(0.0f)}});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ((*f)[0].second.scalar<int64_t>(), 3 + 20 + 1);
}

TEST_F(SavedFunctionTest, BadPathsInputsAndCapturesAreClearErrors) {
  auto missing = functions_->Call("enc.nope", {});
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(),
              HasSubstr("'enc' has no child 'nope'; its children: embed, steps, w"));
  auto variable = functions_->Call("scale", {});
  EXPECT_EQ(variable.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(variable.status().message(), HasSubstr("is a variable, not a function"));

  // No trace takes int32, or a missing argument; two traces take x alone.
  auto wrong = functions_->Call("h", {{"x", Tensor::FromVector<int32_t>({1, 2, 3})}});
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(wrong.status().message(),
              HasSubstr("no trace takes (x: int32[3]); its traces: (x: float[?,3])"));
  EXPECT_EQ(functions_->Call("f", {{"x", Row({1, 2, 3})}}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(functions_->Call("h", {{"x", Row({1, 2})}}).status().code(),
            absl::StatusCode::kInvalidArgument);
  auto ambiguous = functions_->Call("g", {{"x", Tensor::FromVector<float>({1, 2})}});
  EXPECT_EQ(ambiguous.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(ambiguous.status().message(), HasSubstr("more than one trace"));
  EXPECT_THAT(ambiguous.status().message(), HasSubstr("1=True"));
  EXPECT_THAT(ambiguous.status().message(), HasSubstr("1=False"));

  auto table = functions_->Call("lookup", {{"keys", Tensor::FromVector<std::string>({"a"})}});
  EXPECT_EQ(table.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(table.status().message(), HasSubstr("captures a resource"));

  // A failed call leaves the others working.
  auto h = functions_->Call("h", {{"x", Row({1, 2, 3})}});
  ASSERT_TRUE(h.ok()) << h.status();
}

TEST(SavedFunctionsTf1Test, ATf1SavedModelHasNoFunctionsToCall) {
  absl::StatusOr<SavedModelBundle> model = LoadSavedModel(
      BuiltinSessionConfig(),
      absl::StrCat(std::getenv("TEST_SRCDIR"), "/", std::getenv("TEST_WORKSPACE"),
                   "/training/checkpoint/testdata/half_plus_two/00000123"),
      {"serve"});
  ASSERT_TRUE(model.ok()) << model.status();
  SavedFunctions functions(&*model);
  EXPECT_TRUE(functions.Paths().empty());
  EXPECT_EQ(functions.Call("f", {}).status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace sluice
