// TensorArray ops through a DirectSession: values, TensorFlow's errors
// (tensorflow/python/kernel_tests/tensor_array_ops_test.py checks the same
// rules: one write per index, one read with clear_after_read, zeros for an
// unwritten element of known shape, closed arrays), gradients by central
// differences, and an array written inside a while loop (dynamic_rnn's use).
#include "ops/control_flow/tensor_array_ops.h"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "builtin_session.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/control_flow/control_flow_builders.h"
#include "ops/control_flow/tensor_array.h"
#include "ops/math/math_ops.h"
#include "ops/testutil/gradient_checker.h"
#include "base/status_macros.h"
#include "session/direct_session.h"
#include "runtime/session.h"

namespace sluice {
namespace {

using ops::TensorArrayAttrs;

class TensorArrayTest : public ::testing::Test {
 protected:
  // Runs with no feeds; the status of the whole run.
  absl::StatusOr<std::vector<Tensor>> Run(const std::vector<Output>& fetches,
                                          const std::vector<Node*>& targets = {}) {
    if (!s_.ok()) return s_.status();
    ASSIGN_OR_RETURN(std::unique_ptr<Session> sess, NewSession(BuiltinSessionConfig(), *s_.graph()));
    std::vector<std::string> names, target_names;
    for (const Output& o : fetches) names.push_back(o.name());
    for (const Node* n : targets) target_names.push_back(n->name());
    return sess->Run({}, names, target_names);
  }
  // The error of running `fetch` (OK when it runs).
  absl::Status RunError(const Output& fetch) { return Run({fetch}).status(); }

  Output Floats(std::vector<float> v, TensorShape shape) {
    return ops::Const(s_, Tensor::FromVector<float>(v, shape));
  }

  Scope s_ = Scope::NewRootScope(BuiltinOps());
};

std::vector<float> Values(const Tensor& t) {
  absl::Span<const float> f = t.flat<float>();
  return std::vector<float>(f.begin(), f.end());
}

TEST_F(TensorArrayTest, WriteReadAndGather) {
  auto ta = ops::TensorArrayV3(s_, 3, DT_FLOAT);
  Output f = ops::TensorArrayWriteV3(s_, ta.handle, 0, Floats({1, 2}, {2}), ta.flow);
  f = ops::TensorArrayWriteV3(s_, ta.handle, 1, Floats({3, 4}, {2}), f);
  f = ops::TensorArrayWriteV3(s_, ta.handle, 2, Floats({5, 6}, {2}), f);
  Output all = ops::TensorArrayGatherV3(s_, ta.handle, {2, 0, 1}, f, DT_FLOAT);
  Output size = ops::TensorArraySizeV3(s_, ta.handle, f);
  absl::StatusOr<std::vector<Tensor>> out = Run({all, size});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({3, 2}));
  EXPECT_EQ(Values((*out)[0]), std::vector<float>({5, 6, 1, 2, 3, 4}));
  EXPECT_EQ((*out)[1].scalar<int32_t>(), 3);
}

TEST_F(TensorArrayTest, ScatterThenReadEachIntegerElement) {
  auto ta = ops::TensorArrayV3(s_, 2, DT_INT32);
  Output x = ops::Const(s_, Tensor::FromVector<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3}));
  Output f = ops::TensorArrayScatterV3(s_, ta.handle, {1, 0}, x, ta.flow);
  Output r0 = ops::TensorArrayReadV3(s_, ta.handle, 0, f, DT_INT32);
  Output r1 = ops::TensorArrayReadV3(s_, ta.handle, 1, f, DT_INT32);
  absl::StatusOr<std::vector<Tensor>> out = Run({r0, r1});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({3}));
  EXPECT_EQ((*out)[0].flat<int32_t>()[0], 4);
  EXPECT_EQ((*out)[1].flat<int32_t>()[2], 3);
}

TEST_F(TensorArrayTest, SplitAndConcatWithUnequalLengths) {
  auto ta = ops::TensorArrayV3(s_, 3, DT_FLOAT);
  Output x = Floats({1, 2, 3, 4, 5, 6}, {3, 2});
  Output lengths = ops::Const(s_, Tensor::FromVector<int64_t>({1, 0, 2}));
  Output f = ops::TensorArraySplitV3(s_, ta.handle, x, lengths, ta.flow);
  ops::TensorArrayConcatOutputs c = ops::TensorArrayConcatV3(s_, ta.handle, f, DT_FLOAT);
  absl::StatusOr<std::vector<Tensor>> out = Run({c.value, c.lengths});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({3, 2}));
  EXPECT_EQ(Values((*out)[0]), std::vector<float>({1, 2, 3, 4, 5, 6}));
  absl::Span<const int64_t> l = (*out)[1].flat<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(l.begin(), l.end()), std::vector<int64_t>({1, 0, 2}));
}

TEST_F(TensorArrayTest, ADynamicArrayGrowsOnWrite) {
  auto ta = ops::TensorArrayV3(s_, 1, DT_FLOAT, TensorArrayAttrs{.dynamic_size = true});
  Output f = ops::TensorArrayWriteV3(s_, ta.handle, 4, Floats({7}, {}), ta.flow);
  absl::StatusOr<std::vector<Tensor>> out = Run({ops::TensorArraySizeV3(s_, ta.handle, f)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<int32_t>(), 5);
}

TEST_F(TensorArrayTest, AnUnwrittenElementOfKnownShapeReadsAsZeros) {
  auto ta = ops::TensorArrayV3(s_, 2, DT_FLOAT, TensorArrayAttrs{.element_shape = TensorShape({2})});
  absl::StatusOr<std::vector<Tensor>> out =
      Run({ops::TensorArrayReadV3(s_, ta.handle, 1, ta.flow, DT_FLOAT)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values((*out)[0]), std::vector<float>({0, 0}));
}

TEST_F(TensorArrayTest, AnEmptyGatherNeedsAKnownElementShape) {
  auto known = ops::TensorArrayV3(s_, 0, DT_FLOAT, TensorArrayAttrs{.element_shape = TensorShape({2})});
  absl::StatusOr<std::vector<Tensor>> out =
      Run({ops::TensorArrayGatherV3(s_, known.handle, ops::Const(s_, std::vector<int32_t>{}),
                                    known.flow, DT_FLOAT)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({0, 2}));
  auto unknown = ops::TensorArrayV3(s_, 0, DT_FLOAT);
  absl::Status s = RunError(ops::TensorArrayGatherV3(
      s_, unknown.handle, ops::Const(s_, std::vector<int32_t>{}), unknown.flow, DT_FLOAT));
  EXPECT_NE(s.message().find("not fully defined"), std::string::npos) << s;
}

TEST_F(TensorArrayTest, WritingAnIndexTwiceIsAnError) {
  auto ta = ops::TensorArrayV3(s_, 2, DT_FLOAT);
  Output f = ops::TensorArrayWriteV3(s_, ta.handle, 0, 1.0f, ta.flow);
  f = ops::TensorArrayWriteV3(s_, ta.handle, 0, 2.0f, f);
  absl::Status s = RunError(f);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("already been written"), std::string::npos) << s;
}

TEST_F(TensorArrayTest, ReadingTwiceAfterAClearingReadIsAnError) {
  auto ta = ops::TensorArrayV3(s_, 1, DT_FLOAT);
  Output f = ops::TensorArrayWriteV3(s_, ta.handle, 0, 1.0f, ta.flow);
  Output first = ops::TensorArrayReadV3(s_, ta.handle, 0, f, DT_FLOAT);
  Output second = ops::TensorArrayReadV3(s_.WithControlDependencies({first}), ta.handle, 0, f, DT_FLOAT);
  absl::Status s = RunError(second);
  EXPECT_NE(s.message().find("clear_after_read"), std::string::npos) << s;

  Scope k = Scope::NewRootScope(BuiltinOps());
  s_ = k;
  auto kept = ops::TensorArrayV3(s_, 1, DT_FLOAT, TensorArrayAttrs{.clear_after_read = false});
  f = ops::TensorArrayWriteV3(s_, kept.handle, 0, 1.0f, kept.flow);
  first = ops::TensorArrayReadV3(s_, kept.handle, 0, f, DT_FLOAT);
  second = ops::TensorArrayReadV3(s_.WithControlDependencies({first}), kept.handle, 0, f, DT_FLOAT);
  EXPECT_TRUE(RunError(second).ok());
}

TEST_F(TensorArrayTest, BadWritesAndReadsNameTheArray) {
  TensorArrayAttrs named{.tensor_array_name = "my_ta"};
  auto ta = ops::TensorArrayV3(s_, 2, DT_FLOAT, named);
  // Out of range on a fixed-size array.
  absl::Status s = RunError(ops::TensorArrayWriteV3(s_, ta.handle, 2, 1.0f, ta.flow));
  EXPECT_NE(s.message().find("my_ta"), std::string::npos) << s;
  EXPECT_NE(s.message().find("not resizeable"), std::string::npos) << s;
  // Another dtype.
  s = RunError(ops::TensorArrayWriteV3(s_, ta.handle, 0, 1, ta.flow));
  EXPECT_NE(s.message().find("holds float"), std::string::npos) << s;
  // An unwritten element of unknown shape.
  s = RunError(ops::TensorArrayReadV3(s_, ta.handle, 0, ta.flow, DT_FLOAT));
  EXPECT_NE(s.message().find("never written"), std::string::npos) << s;
  // Out of range read.
  s = RunError(ops::TensorArrayReadV3(s_, ta.handle, -1, ta.flow, DT_FLOAT));
  EXPECT_NE(s.message().find("Tried to read from index -1"), std::string::npos) << s;
  // A value of a shape the array's element shape excludes.
  auto shaped = ops::TensorArrayV3(s_, 2, DT_FLOAT, TensorArrayAttrs{.element_shape = TensorShape({3})});
  s = RunError(ops::TensorArrayWriteV3(s_, shaped.handle, 0, Floats({1, 2}, {2}), shaped.flow));
  EXPECT_NE(s.message().find("incompatible"), std::string::npos) << s;
  // Scatter and split whose sizes disagree.
  s = RunError(ops::TensorArrayScatterV3(s_, ta.handle, {0}, Floats({1, 2}, {2}), ta.flow));
  EXPECT_NE(s.message().find("len(indices)"), std::string::npos) << s;
  s = RunError(ops::TensorArraySplitV3(s_, ta.handle, Floats({1, 2}, {2}),
                                       ops::Const(s_, Tensor::FromVector<int64_t>({1, 2})), ta.flow));
  EXPECT_NE(s.message().find("sum to 3"), std::string::npos) << s;
  // Elements of two shapes do not gather.
  auto mixed = ops::TensorArrayV3(s_, 2, DT_FLOAT);
  Output f = ops::TensorArrayWriteV3(s_, mixed.handle, 0, Floats({1}, {1}), mixed.flow);
  f = ops::TensorArrayWriteV3(s_, mixed.handle, 1, Floats({1, 2}, {2}), f);
  s = RunError(ops::TensorArrayGatherV3(s_, mixed.handle, {0, 1}, f, DT_FLOAT));
  EXPECT_NE(s.message().find("inconsistent shapes"), std::string::npos) << s;
  // A negative size.
  s = RunError(ops::TensorArrayV3(s_, -1, DT_FLOAT).flow);
  EXPECT_NE(s.message().find("< 0"), std::string::npos) << s;
}

TEST_F(TensorArrayTest, AClosedArrayCannotBeUsed) {
  auto ta = ops::TensorArrayV3(s_, 1, DT_FLOAT);
  Output f = ops::TensorArrayWriteV3(s_, ta.handle, 0, 1.0f, ta.flow);
  Node* close = ops::TensorArrayCloseV3(s_.WithControlDependencies({f}), ta.handle);
  Output size = ops::TensorArraySizeV3(s_.WithControlDependencies(std::vector<Node*>{close}), ta.handle, f);
  absl::Status s = RunError(size);
  EXPECT_NE(s.message().find("already been closed"), std::string::npos) << s;
}

TEST_F(TensorArrayTest, EachStepHasItsOwnArrays) {
  auto ta = ops::TensorArrayV3(s_.WithOpName("ta"), 1, DT_FLOAT);
  Output f = ops::TensorArrayWriteV3(s_, ta.handle, 0, 1.0f, ta.flow);
  ASSERT_TRUE(s_.ok());
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s_.graph());
  ASSERT_TRUE(sess.ok());
  // The same graph runs again: a new array each step (the last step's is gone).
  for (int i = 0; i < 3; ++i) ASSERT_TRUE((*sess)->Run({}, {f.name()}, {}).ok()) << i;
}

// ---- Gradients -------------------------------------------------------------------

Tensor Doubles(std::vector<double> v, TensorShape shape) { return Tensor::FromVector<double>(v, shape); }

TEST_F(TensorArrayTest, GatherOfScatterGradient) {
  Output x = ops::Placeholder(s_, DT_DOUBLE);
  auto ta = ops::TensorArrayV3(s_, 3, DT_DOUBLE);
  Output f = ops::TensorArrayScatterV3(s_, ta.handle, {2, 0, 1}, ops::Square(s_, x), ta.flow);
  Output y = ops::TensorArrayGatherV3(s_, ta.handle, {1, 2}, f, DT_DOUBLE);  // element 0 unread
  absl::StatusOr<double> err =
      MaxGradientError(s_, {x}, {Doubles({0.5, -1.5, 2.0, 0.1, 0.3, -0.7}, {3, 2})}, y);
  ASSERT_TRUE(err.ok()) << err.status();
  EXPECT_LT(*err, 1e-6);
}

TEST_F(TensorArrayTest, ConcatOfSplitGradient) {
  Output x = ops::Placeholder(s_, DT_DOUBLE);
  auto ta = ops::TensorArrayV3(s_, 2, DT_DOUBLE);
  Output f = ops::TensorArraySplitV3(s_, ta.handle, ops::Tanh(s_, x),
                                     ops::Const(s_, Tensor::FromVector<int64_t>({2, 1})), ta.flow);
  Output y = ops::Mul(s_, ops::TensorArrayConcatV3(s_, ta.handle, f, DT_DOUBLE).value, x);
  absl::StatusOr<double> err = MaxGradientError(s_, {x}, {Doubles({0.5, -1.5, 0.25}, {3})}, y);
  ASSERT_TRUE(err.ok()) << err.status();
  EXPECT_LT(*err, 1e-6);
}

TEST_F(TensorArrayTest, WriteThenReadGradient) {
  Output x = ops::Placeholder(s_, DT_DOUBLE);
  Output w = ops::Placeholder(s_, DT_DOUBLE);
  auto ta = ops::TensorArrayV3(s_, 2, DT_DOUBLE);
  Output f = ops::TensorArrayWriteV3(s_, ta.handle, 0, ops::Mul(s_, x, w), ta.flow);
  f = ops::TensorArrayWriteV3(s_, ta.handle, 1, ops::Exp(s_, x), f);
  Output y = ops::Add(s_, ops::TensorArrayReadV3(s_, ta.handle, 0, f, DT_DOUBLE),
                      ops::TensorArrayReadV3(s_, ta.handle, 1, f, DT_DOUBLE));
  absl::StatusOr<double> err =
      MaxGradientError(s_, {x, w}, {Doubles({0.5, -1.5}, {2}), Doubles({2.0, 0.3}, {2})}, y);
  ASSERT_TRUE(err.ok()) << err.status();
  EXPECT_LT(*err, 1e-6);
}

// dynamic_rnn's pattern: the inputs are scattered into one array before the
// loop and read in it; the outputs are written into another in the loop and
// gathered after it. Gradients flow back through both arrays and the loop.
TEST_F(TensorArrayTest, ArraysInAWhileLoopAndTheirGradients) {
  constexpr int kSteps = 4;
  Output x = ops::Placeholder(s_.WithOpName("x"), DT_DOUBLE);    // [kSteps, 2]
  Output w = ops::Placeholder(s_.WithOpName("w"), DT_DOUBLE);    // [2]
  Output h0 = ops::Placeholder(s_.WithOpName("h0"), DT_DOUBLE);  // [2]
  TensorArrayAttrs same{.identical_element_shapes = true};
  auto in = ops::TensorArrayV3(s_.WithOpName("rnn/TensorArray_1"), kSteps, DT_DOUBLE, same);
  auto out = ops::TensorArrayV3(s_.WithOpName("rnn/TensorArray"), kSteps, DT_DOUBLE, same);
  Output in_flow = ops::TensorArrayScatterV3(s_, in.handle, ops::Range(s_, 0, kSteps, 1), x, in.flow);
  absl::StatusOr<std::vector<Output>> loop = ops::WhileLoop(
      s_, {ops::Const(s_, 0), out.flow, h0},
      [&](const Scope& c, absl::Span<const Output> v) { return ops::Less(c, v[0], kSteps); },
      [&](const Scope& b, absl::Span<const Output> v) {
        Output xt = ops::TensorArrayReadV3(b, in.handle, v[0], in_flow, DT_DOUBLE);
        Output h = ops::Tanh(b, ops::Add(b, ops::Mul(b, xt, w), ops::Mul(b, v[2], 0.5)));
        Output flow = ops::TensorArrayWriteV3(b, out.handle, v[0], h, v[1]);
        return std::vector<Output>{ops::Add(b, v[0], 1), flow, h};
      },
      {.name = "rnn/while"});
  ASSERT_TRUE(loop.ok()) << loop.status();
  Output y = ops::TensorArrayGatherV3(s_, out.handle, ops::Range(s_, 0, kSteps, 1), (*loop)[1],
                                      DT_DOUBLE);
  // Forward: the recurrence by hand.
  const std::vector<double> xv = {0.5, -1.5, 2.0, 0.1, 0.3, -0.7, 0.9, 0.2};
  const std::vector<double> wv = {0.8, -0.4}, hv = {0.1, 0.2};
  absl::StatusOr<Tensor> got = EvalWithFeeds(
      s_, {x, w, h0}, {Doubles(xv, {kSteps, 2}), Doubles(wv, {2}), Doubles(hv, {2})}, y);
  ASSERT_TRUE(got.ok()) << got.status();
  std::vector<double> h = hv;
  for (int t = 0; t < kSteps; ++t) {
    for (int j = 0; j < 2; ++j) {
      h[j] = std::tanh(xv[2 * t + j] * wv[j] + 0.5 * h[j]);
      EXPECT_NEAR(got->flat<double>()[2 * t + j], h[j], 1e-12) << t << "," << j;
    }
  }
  absl::StatusOr<double> err = MaxGradientError(
      s_, {x, w, h0}, {Doubles(xv, {kSteps, 2}), Doubles(wv, {2}), Doubles(hv, {2})}, y);
  ASSERT_TRUE(err.ok()) << err.status();
  EXPECT_LT(*err, 1e-6);
}

// TensorArrayGradWithShape (TensorFlow's kernel, tensor_array_ops.cc:
// shape_to_prepend goes in front of the forward element shapes): an
// unwritten gradient element reads as zeros of the prepended shape, and a
// write must fit it.
TEST_F(TensorArrayTest, GradWithShapePrependsTheShape) {
  auto ta = ops::TensorArrayV3(s_, 2, DT_FLOAT, TensorArrayAttrs{.element_shape = TensorShape({2})});
  Output f = ops::TensorArrayWriteV3(s_, ta.handle, 0, Floats({1, 2}, {2}), ta.flow);
  auto grad = ops::TensorArrayGradWithShape(s_, ta.handle, f, ops::Const(s_, Tensor::FromVector<int32_t>({3}, TensorShape({1}))), "gradients");
  Output g = ops::TensorArrayWriteV3(s_, grad.handle, 1, Floats({1, 2, 3, 4, 5, 6}, {3, 2}),
                                     grad.flow);
  Output all = ops::TensorArrayGatherV3(s_, grad.handle, {0, 1}, g, DT_FLOAT);
  absl::StatusOr<std::vector<Tensor>> out = Run({all});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({2, 3, 2}));
  EXPECT_EQ(Values((*out)[0]), std::vector<float>({0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6}));

  auto grad2 = ops::TensorArrayGradWithShape(s_, ta.handle, f, ops::Const(s_, Tensor::FromVector<int32_t>({3}, TensorShape({1}))), "other");
  absl::Status st = RunError(ops::TensorArrayWriteV3(s_, grad2.handle, 0, Floats({1, 2}, {2}), grad2.flow));
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_NE(st.message().find("incompatible"), std::string::npos) << st;

  auto bad = ops::TensorArrayGradWithShape(s_, ta.handle, f, ops::Const(s_, Tensor::FromVector<int32_t>({3}, TensorShape({}))), "bad");
  st = RunError(bad.flow);
  EXPECT_NE(st.message().find("shape_to_prepend must be an int32 vector"), std::string::npos) << st;
}

// A gradient array on a device with memory of its own adds two writes to
// one index with the device's `add`, into a buffer of its own (the first
// write's buffer, which a reader may still hold, stays as it was); a
// device without `add` fails such a write, naming the array.
class HostBackedDevice : public Device {
 public:
  HostBackedDevice() : Device("/job:localhost/replica:0/task:0/device:FAKE:0", "FAKE") {}
  Allocator* allocator() override { return &memory_; }
  ThreadPool* thread_pool() override { return nullptr; }
  bool has_device_memory() const override { return true; }

 private:
  CpuAllocator memory_{"fake_device"};
};

int device_adds = 0;

absl::Status CopyOnFake(Device*, const Tensor& src, int64_t src_row, Tensor* dst, int64_t dst_row,
                        int64_t rows, int64_t row_elements) {
  CopyRows(src, src_row, dst, dst_row, rows, row_elements);
  return absl::OkStatus();
}
absl::Status ZeroOnFake(Device*, Tensor* t) {
  std::memset(t->raw_data(), 0, t->TotalBytes());
  return absl::OkStatus();
}
absl::Status AddOnFake(Device*, const Tensor& a, const Tensor& b, Tensor* sum) {
  if (a.dtype() != DT_FLOAT) return absl::UnimplementedError("FAKE adds only floats");
  ++device_adds;
  for (int64_t i = 0; i < a.NumElements(); ++i) {
    sum->data<float>()[i] = a.data<float>()[i] + b.data<float>()[i];
  }
  return absl::OkStatus();
}

TEST(TensorArrayDeviceTest, TwoWritesToOneIndexAddOnTheDevice) {
  HostBackedDevice device;
  const TensorArrayDeviceOps with_add{&CopyOnFake, &ZeroOnFake, &AddOnFake};
  TensorArray::Options o{.dtype = DT_FLOAT, .size = 2, .multiple_writes_aggregate = true};
  o.device = &device;
  o.device_ops = &with_add;
  TensorArray grad("grad", o);
  const Tensor first = Tensor::FromVector<float>({1, 2}, TensorShape({2}));
  const Tensor second = Tensor::FromVector<float>({10, 20}, TensorShape({2}));
  device_adds = 0;
  ASSERT_TRUE(grad.Write(0, first).ok());
  ASSERT_TRUE(grad.Write(0, second).ok());
  EXPECT_EQ(device_adds, 1);
  absl::StatusOr<Tensor> sum = grad.Read(0);
  ASSERT_TRUE(sum.ok()) << sum.status();
  EXPECT_EQ(Values(*sum), (std::vector<float>{11, 22}));
  EXPECT_NE(sum->raw_data(), first.raw_data());
  EXPECT_EQ(Values(first), (std::vector<float>{1, 2}));

  // A dtype the device cannot add, and a device without `add`.
  TensorArray::Options ints = o;
  ints.dtype = DT_INT64;
  TensorArray int_grad("int_grad", ints);
  const Tensor one = Tensor::FromVector<int64_t>({1}, TensorShape({1}));
  ASSERT_TRUE(int_grad.Write(1, one).ok());
  absl::Status s = int_grad.Write(1, one);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_NE(s.message().find("TensorArray 'int_grad'"), std::string::npos) << s;

  const TensorArrayDeviceOps no_add{&CopyOnFake, &ZeroOnFake};
  o.device_ops = &no_add;
  TensorArray plain("plain", o);
  ASSERT_TRUE(plain.Write(0, first).ok());
  s = plain.Write(0, second);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_NE(s.message().find("TensorArray 'plain'"), std::string::npos) << s;
  EXPECT_NE(s.message().find("device:FAKE:0 has no addition"), std::string::npos) << s;
}

}  // namespace
}  // namespace sluice
