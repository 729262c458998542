// TensorFlow 2's loops over TensorLists recorded whole (runtime/step_replay.h)
// on the fake recording device "REC": the list kernels are the device
// kernels (ops/control_flow/tensor_list_ops.h), lists in host memory and
// elements in REC's, moved and zeroed through its queue as a GPU's copies
// are. A forward loop writes each iteration's value into a reserved list
// (SetItem; one element is never set and reads as zeros) and pushes it onto
// another (PushBack); Stack gives them all; a backward loop reads the first
// list (GetItem) and pops the second (PopBack). Each replay must equal a
// session that never records.
#include <memory>
#include <string>
#include <vector>

#include "graph/scope.h"
#include "gtest/gtest.h"
#include "ops/control_flow/control_flow_builders.h"
#include "ops/control_flow/control_flow_ops.h"
#include "ops/control_flow/tensor_list_ops.h"
#include "runtime/recording_device_testutil.h"
#include "runtime/session.h"
#include "session/rec_session_testutil.h"

namespace sluice {
namespace {

using testing_rec::kRec;

class ListLoopReplayTest : public RecSessionTest {
 protected:
  void SetUp() override {
    RecSessionTest::SetUp();
    ASSERT_TRUE(RegisterControlFlowOps(&ops_).ok());
    ASSERT_TRUE(RegisterTensorListOps(&ops_).ok());
    RegisterControlFlowDeviceKernels(&kernels_, kRec, {DT_FLOAT});
    RegisterTensorListDeviceKernels(&kernels_, kRec, {DT_FLOAT}, &testing_rec::kRecArrayOps);
    Finish();
  }

  // x, y fed (float [n]); both loops run n times. Fetches "x_out" (x * y^n),
  // "all" (the n + 1 elements of the reserved list, the last zeros) and
  // "p_out" (x_out times every value, each read back twice).
  std::unique_ptr<Session> NewListSession(bool capture) {
    Graph g(&ops_);
    Scope s = Scope::NewRootScope(&g);
    auto int_const = [&](int64_t v) {
      return s.Op("IntConst").Attr("value", v).Finalize1();
    };
    Output x = s.WithOpName("x").Op("Input").Finalize1();
    Output y = s.WithOpName("y").Op("Input").Finalize1();
    Output n = s.WithOpName("n").Op("ToInt").Input(s.Op("Size").Input(x).Finalize1()).Finalize1();
    Output zero = int_const(0), unknown = int_const(-1);
    Output reserved = s.WithOpName("reserved")
                          .Op("TensorListReserve")
                          .Input(unknown)
                          .Input(s.Op("IntAdd").Input(n).Input(int_const(1)).Finalize1())
                          .Attr("element_dtype", DT_FLOAT)
                          .Finalize1();
    Output empty = s.WithOpName("empty")
                       .Op("EmptyTensorList")
                       .Input(unknown)
                       .Input(unknown)
                       .Attr("element_dtype", DT_FLOAT)
                       .Finalize1();
    auto less_than_n = [n](const Scope& c, const Output& i) {
      return c.Op("IntLess").Input(i).Input(n).Finalize1();
    };
    auto plus_one = [](const Scope& b, const Output& i) {
      Output one = b.Op("IntConst").Attr("value", int64_t{1}).Finalize1();
      return b.Op("IntAdd").Input(i).Input(one).Finalize1();
    };
    absl::StatusOr<std::vector<Output>> forward = ops::WhileLoop(
        s, {zero, x, reserved, empty},
        [&](const Scope& c, absl::Span<const Output> v) { return less_than_n(c, v[0]); },
        [&](const Scope& b, absl::Span<const Output> v) {
          Output next = b.Op("Mul").Input(v[1]).Input(y).Finalize1();
          Output set = b.Op("TensorListSetItem").Input(v[2]).Input(v[0]).Input(next).Finalize1();
          Output pushed = b.Op("TensorListPushBack").Input(v[3]).Input(next).Finalize1();
          return std::vector<Output>{plus_one(b, v[0]), next, set, pushed};
        },
        {.name = "forward"});
    EXPECT_TRUE(forward.ok()) << forward.status();
    if (!forward.ok()) return nullptr;
    Output x_out = s.WithOpName("x_out").Op("Identity").Input((*forward)[1]).Finalize1();
    s.WithOpName("all")
        .Op("TensorListStack")
        .Input((*forward)[2])
        .Input(unknown)
        .Attr("element_dtype", DT_FLOAT)
        .Finalize();
    absl::StatusOr<std::vector<Output>> backward = ops::WhileLoop(
        s, {x_out, zero, (*forward)[3]},
        [&](const Scope& c, absl::Span<const Output> v) { return less_than_n(c, v[1]); },
        [&](const Scope& b, absl::Span<const Output> v) {
          std::vector<Output> popped = b.Op("TensorListPopBack")
                                           .Input(v[2])
                                           .Input(b.Op("IntConst").Attr("value", int64_t{-1})
                                                      .Finalize1())
                                           .Attr("element_dtype", DT_FLOAT)
                                           .FinalizeAll();
          Output read = b.Op("TensorListGetItem")
                            .Input((*forward)[2])
                            .Input(v[1])
                            .Input(b.Op("IntConst").Attr("value", int64_t{-1}).Finalize1())
                            .Attr("element_dtype", DT_FLOAT)
                            .Finalize1();
          Output p = b.Op("Mul").Input(b.Op("Mul").Input(v[0]).Input(popped[1]).Finalize1())
                         .Input(read)
                         .Finalize1();
          return std::vector<Output>{p, plus_one(b, v[1]), popped[0]};
        },
        {.name = "backward"});
    EXPECT_TRUE(backward.ok()) << backward.status();
    if (!backward.ok()) return nullptr;
    s.WithOpName("p_out").Op("Identity").Input((*backward)[0]).Finalize();
    EXPECT_TRUE(s.ok()) << s.status();
    GraphDef def;
    g.ToGraphDef(&def);
    return NewRecSession(def, capture);
  }
};

TEST_F(ListLoopReplayTest, LoopsOverListsAreRecordedWholeAndReplayRight) {
  std::unique_ptr<Session> replaying = NewListSession(true);
  std::unique_ptr<Session> plain = NewListSession(false);
  ASSERT_NE(replaying, nullptr);
  ASSERT_NE(plain, nullptr);
  for (int step = 0; step < 6; ++step) {
    const float a = 1.0f + 0.25f * step;
    const Tensor x = Floats({a, -a, 0.5f});
    const Tensor y = Floats({0.5f, a, 2.0f});
    const Fetched got = Step(replaying.get(), x, y);
    const Fetched want = Step(plain.get(), x, y);
    EXPECT_FALSE(want.replayed);
    EXPECT_EQ(got.values, want.values) << "step " << step;
    EXPECT_EQ(got.replayed, step >= 2) << "step " << step;
    ASSERT_EQ(got.values.size(), 3u);
    const int n = 3;
    // all: the n values x * y^(k+1), then the element never set (zeros).
    ASSERT_EQ(got.values[1].size(), static_cast<size_t>((n + 1) * n));
    std::vector<float> value(x.data<float>(), x.data<float>() + n);
    for (int k = 0; k < n; ++k) {
      for (int i = 0; i < n; ++i) {
        value[i] *= y.data<float>()[i];
        EXPECT_FLOAT_EQ(got.values[1][k * n + i], value[i]) << "step " << step;
      }
    }
    for (int i = 0; i < n; ++i) EXPECT_EQ(got.values[1][n * n + i], 0.0f) << "step " << step;
    // p_out: x_out times every value twice (popped in reverse, read in order).
    for (int i = 0; i < n; ++i) {
      EXPECT_FLOAT_EQ(got.values[0][i], value[i]);
      float p = value[i];
      for (int k = 0; k < n; ++k) p *= got.values[1][k * n + i] * got.values[1][k * n + i];
      EXPECT_FLOAT_EQ(got.values[2][i], p) << "step " << step << ", element " << i;
    }
  }
}

}  // namespace
}  // namespace sluice
