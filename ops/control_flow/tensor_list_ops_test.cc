#include "ops/control_flow/tensor_list_ops.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "graph/scope.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/testutil/gradient_checker.h"
#include "runtime/tensor.h"

namespace sluice {
namespace {

// The list op wrappers a test needs (TensorFlow's names and attrs).
struct Lists {
  Scope s = Scope::NewRootScope(BuiltinOps());

  Output Shape(std::vector<int32_t> dims) { return ops::Const(s, dims); }
  Output UnknownShape() { return ops::Const(s, int32_t{-1}); }
  Output FromTensor(Output t, Output shape) {
    return s.Op("TensorListFromTensor").Input(t).Input(shape).Finalize1();
  }
  Output Reserve(Output shape, int32_t n, DataType dtype) {
    return s.Op("TensorListReserve").Input(shape).Input(ops::Const(s, n))
        .Attr("element_dtype", dtype).Finalize1();
  }
  Output Empty(Output shape, int32_t max, DataType dtype) {
    return s.Op("EmptyTensorList").Input(shape).Input(ops::Const(s, max))
        .Attr("element_dtype", dtype).Finalize1();
  }
  Output Push(Output l, Output t) {
    return s.Op("TensorListPushBack").Input(l).Input(t).Finalize1();
  }
  std::vector<Output> Pop(Output l, DataType dtype, Output shape) {
    return s.Op("TensorListPopBack").Input(l).Input(shape).Attr("element_dtype", dtype)
        .FinalizeAll();
  }
  Output Get(Output l, int32_t i, DataType dtype, Output shape) {
    return s.Op("TensorListGetItem").Input(l).Input(ops::Const(s, i)).Input(shape)
        .Attr("element_dtype", dtype).Finalize1();
  }
  Output Set(Output l, int32_t i, Output t) {
    return s.Op("TensorListSetItem").Input(l).Input(ops::Const(s, i)).Input(t).Finalize1();
  }
  Output Stack(Output l, DataType dtype, Output shape, int64_t n = -1) {
    return s.Op("TensorListStack").Input(l).Input(shape).Attr("element_dtype", dtype)
        .Attr("num_elements", n).Finalize1();
  }
  Output Gather(Output l, std::vector<int32_t> rows, DataType dtype, Output shape) {
    return s.Op("TensorListGather").Input(l).Input(ops::Const(s, rows)).Input(shape)
        .Attr("element_dtype", dtype).Finalize1();
  }
  Output Length(Output l) { return s.Op("TensorListLength").Input(l).Finalize1(); }

  absl::StatusOr<Tensor> Eval(Output y, std::vector<Output> xs = {},
                              std::vector<Tensor> values = {}) {
    return EvalWithFeeds(s, xs, values, y);
  }
};

std::vector<float> Floats(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.NumElements());
}

Output Matrix(const Scope& s) {  // [[1, 2], [3, 4], [5, 6]]
  return ops::Const(s, std::vector<float>{1, 2, 3, 4, 5, 6}, TensorShape({3, 2}));
}

TEST(TensorListOpsTest, FromTensorReadsBackRowsAndStacksToTheTensor) {
  Lists l;
  Output list = l.FromTensor(Matrix(l.s), l.UnknownShape());
  absl::StatusOr<Tensor> row = l.Eval(l.Get(list, 1, DT_FLOAT, l.UnknownShape()));
  ASSERT_TRUE(row.ok()) << row.status();
  EXPECT_EQ(Floats(*row), (std::vector<float>{3, 4}));
  absl::StatusOr<Tensor> n = l.Eval(l.Length(list));
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(n->data<int32_t>()[0], 3);
  absl::StatusOr<Tensor> stacked = l.Eval(l.Stack(list, DT_FLOAT, l.UnknownShape(), 3));
  ASSERT_TRUE(stacked.ok()) << stacked.status();
  EXPECT_EQ(stacked->shape(), TensorShape({3, 2}));
  EXPECT_EQ(Floats(*stacked), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  absl::StatusOr<Tensor> gathered = l.Eval(l.Gather(list, {2, 0}, DT_FLOAT, l.UnknownShape()));
  ASSERT_TRUE(gathered.ok()) << gathered.status();
  EXPECT_EQ(Floats(*gathered), (std::vector<float>{5, 6, 1, 2}));
  // The element shape is the op's, as given ([-1]), not the rows' ([2]).
  Output shape = l.s.Op("TensorListElementShape").Input(l.FromTensor(Matrix(l.s), l.Shape({-1})))
                     .Attr("shape_type", DT_INT64).Finalize1();
  absl::StatusOr<Tensor> es = l.Eval(shape);
  ASSERT_TRUE(es.ok()) << es.status();
  ASSERT_EQ(es->dtype(), DT_INT64);
  EXPECT_EQ(es->data<int64_t>()[0], -1);  // as given: TensorFlow keeps the op's shape
}

TEST(TensorListOpsTest, ReservedElementsNotSetReadAsZeros) {
  Lists l;
  Output list = l.Set(l.Reserve(l.Shape({2}), 3, DT_FLOAT), 1,
                      ops::Const(l.s, std::vector<float>{7, 8}));
  absl::StatusOr<Tensor> stacked = l.Eval(l.Stack(list, DT_FLOAT, l.UnknownShape()));
  ASSERT_TRUE(stacked.ok()) << stacked.status();
  EXPECT_EQ(Floats(*stacked), (std::vector<float>{0, 0, 7, 8, 0, 0}));
  // With an unknown element shape, the op's shape decides; none: an error.
  Output open = l.Reserve(l.UnknownShape(), 2, DT_FLOAT);
  absl::StatusOr<Tensor> zeros = l.Eval(l.Get(open, 0, DT_FLOAT, l.Shape({3})));
  ASSERT_TRUE(zeros.ok()) << zeros.status();
  EXPECT_EQ(Floats(*zeros), (std::vector<float>{0, 0, 0}));
  absl::StatusOr<Tensor> unknown = l.Eval(l.Get(open, 0, DT_FLOAT, l.UnknownShape()));
  ASSERT_FALSE(unknown.ok());
  EXPECT_TRUE(absl::StrContains(unknown.status().message(), "never set")) << unknown.status();
  // Or the elements that are set say it, as in TensorFlow.
  Output partly = l.Set(open, 1, ops::Const(l.s, std::vector<float>{5, 6}));
  absl::StatusOr<Tensor> inferred = l.Eval(l.Get(partly, 0, DT_FLOAT, l.UnknownShape()));
  ASSERT_TRUE(inferred.ok()) << inferred.status();
  EXPECT_EQ(Floats(*inferred), (std::vector<float>{0, 0}));
  absl::StatusOr<Tensor> gathered = l.Eval(l.Gather(partly, {0}, DT_FLOAT, l.UnknownShape()));
  ASSERT_TRUE(gathered.ok()) << gathered.status();
  EXPECT_EQ(gathered->shape(), TensorShape({1, 2}));
}

TEST(TensorListOpsTest, PushBackAndPopBackAreLastInFirstOut) {
  Lists l;
  Output list = l.Empty(l.Shape({}), -1, DT_FLOAT);
  list = l.Push(l.Push(list, ops::Const(l.s, 1.0f)), ops::Const(l.s, 2.0f));
  std::vector<Output> top = l.Pop(list, DT_FLOAT, l.UnknownShape());
  std::vector<Output> next = l.Pop(top[0], DT_FLOAT, l.UnknownShape());
  absl::StatusOr<Tensor> a = l.Eval(top[1]);
  absl::StatusOr<Tensor> b = l.Eval(next[1]);
  absl::StatusOr<Tensor> n = l.Eval(l.Length(next[0]));
  ASSERT_TRUE(a.ok() && b.ok() && n.ok());
  EXPECT_EQ(a->data<float>()[0], 2.0f);
  EXPECT_EQ(b->data<float>()[0], 1.0f);
  EXPECT_EQ(n->data<int32_t>()[0], 0);
  // The input list is not changed by a push (lists are values).
  absl::StatusOr<Tensor> still = l.Eval(l.Length(list));
  ASSERT_TRUE(still.ok());
  EXPECT_EQ(still->data<int32_t>()[0], 2);
}

// The list kernels change a list in place when they alone hold it (a
// chain of appends, as in a loop); a list with other readers in the same
// step is copied, so that each reader sees its own value.
TEST(TensorListOpsTest, ChangesInPlaceNeverShowToOtherReaders) {
  Lists l;
  Output l0 = l.Empty(l.Shape({}), -1, DT_FLOAT);
  Output l1 = l.Push(l0, ops::Const(l.s, 1.0f));
  Output l2 = l.Push(l1, ops::Const(l.s, 2.0f));
  Output l1b = l.Set(l1, 0, ops::Const(l.s, 5.0f));
  std::vector<Output> popped = l.Pop(l2, DT_FLOAT, l.UnknownShape());
  auto one = [&](Output x) { return ops::Reshape(l.s, x, ops::Const(l.s, std::vector<int32_t>{1})); };
  absl::StatusOr<Tensor> lengths = l.Eval(ops::ConcatV2(
      l.s, {one(l.Length(l0)), one(l.Length(l1)), one(l.Length(l2)), one(l.Length(l1b)),
            one(l.Length(popped[0]))},
      ops::Const(l.s, 0)));
  ASSERT_TRUE(lengths.ok()) << lengths.status();
  EXPECT_EQ(std::vector<int32_t>(lengths->data<int32_t>(), lengths->data<int32_t>() + 5),
            (std::vector<int32_t>{0, 1, 2, 1, 1}));
  absl::StatusOr<Tensor> items = l.Eval(ops::ConcatV2(
      l.s, {one(l.Get(l1, 0, DT_FLOAT, l.UnknownShape())),
            one(l.Get(l2, 0, DT_FLOAT, l.UnknownShape())),
            one(l.Get(l2, 1, DT_FLOAT, l.UnknownShape())),
            one(l.Get(l1b, 0, DT_FLOAT, l.UnknownShape())), one(popped[1])},
      ops::Const(l.s, 0)));
  ASSERT_TRUE(items.ok()) << items.status();
  EXPECT_EQ(Floats(*items), (std::vector<float>{1, 1, 2, 5, 2}));

  // A chain of sole holders: each append may reuse the list before it.
  Output chain = l.Empty(l.Shape({}), -1, DT_FLOAT);
  for (int i = 0; i < 5; ++i) chain = l.Push(chain, ops::Const(l.s, float(i)));
  chain = l.Set(chain, 1, ops::Const(l.s, 9.0f));
  absl::StatusOr<Tensor> stacked = l.Eval(l.Stack(chain, DT_FLOAT, l.UnknownShape()));
  ASSERT_TRUE(stacked.ok()) << stacked.status();
  EXPECT_EQ(Floats(*stacked), (std::vector<float>{0, 9, 2, 3, 4}));
}

TEST(TensorListOpsTest, ScattersResizeAndSums) {
  Lists l;
  Output rows = Matrix(l.s);
  Output scattered = l.s.Op("TensorListScatterV2").Input(rows).Input(ops::Const(l.s, std::vector<int32_t>{4, 0, 2}))
                         .Input(l.Shape({2})).Input(ops::Const(l.s, int32_t{6})).Finalize1();
  absl::StatusOr<Tensor> st = l.Eval(l.Stack(scattered, DT_FLOAT, l.UnknownShape()));
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(Floats(*st), (std::vector<float>{3, 4, 0, 0, 5, 6, 0, 0, 1, 2, 0, 0}));
  Output into = l.s.Op("TensorListScatterIntoExistingList")
                    .Input(l.Reserve(l.Shape({2}), 2, DT_FLOAT))
                    .Input(ops::Const(l.s, std::vector<float>{9, 9}, TensorShape({1, 2})))
                    .Input(ops::Const(l.s, std::vector<int32_t>{3}))
                    .Finalize1();
  absl::StatusOr<Tensor> n = l.Eval(l.Length(into));
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(n->data<int32_t>()[0], 4);  // grown to fit index 3
  Output resized = l.s.Op("TensorListResize").Input(into).Input(ops::Const(l.s, int32_t{1}))
                       .Finalize1();
  n = l.Eval(l.Length(resized));
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->data<int32_t>()[0], 1);
  // AddN of lists adds element by element (an element not set counts as 0).
  Output a = l.Set(l.Reserve(l.Shape({2}), 2, DT_FLOAT), 0, ops::Const(l.s, std::vector<float>{1, 1}));
  Output b = l.FromTensor(ops::Const(l.s, std::vector<float>{1, 2, 3, 4}, TensorShape({2, 2})),
                          l.Shape({2}));
  absl::StatusOr<Tensor> sum = l.Eval(l.Stack(ops::AddN(l.s, {a, b}), DT_FLOAT, l.UnknownShape()));
  ASSERT_TRUE(sum.ok()) << sum.status();
  EXPECT_EQ(Floats(*sum), (std::vector<float>{2, 3, 3, 4}));
  absl::StatusOr<Tensor> zeros =
      l.Eval(l.Stack(ops::ZerosLike(l.s, b), DT_FLOAT, l.UnknownShape()));
  ASSERT_TRUE(zeros.ok()) << zeros.status();
  EXPECT_EQ(Floats(*zeros), (std::vector<float>{0, 0, 0, 0}));
}

TEST(TensorListOpsTest, BadUsesFailNamingTheOp) {
  struct Case {
    const char* what;
    std::function<Output(Lists&)> build;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"pop from empty",
       [](Lists& l) { return l.Pop(l.Empty(l.Shape({}), -1, DT_FLOAT), DT_FLOAT, l.UnknownShape())[1]; },
       "TensorListPopBack: pop from an empty list"},
      {"index outside",
       [](Lists& l) { return l.Get(l.FromTensor(Matrix(l.s), l.UnknownShape()), 3, DT_FLOAT, l.UnknownShape()); },
       "TensorListGetItem: index 3 is outside a list of 3"},
      {"wrong dtype",
       [](Lists& l) { return l.Push(l.Empty(l.Shape({}), -1, DT_FLOAT), ops::Const(l.s, 1)); },
       "the list holds float, the op reads int32"},
      {"wrong shape",
       [](Lists& l) {
         return l.Length(l.Set(l.Reserve(l.Shape({2}), 2, DT_FLOAT), 0, ops::Const(l.s, 1.0f)));
       },
       "does not fit the list's element shape"},
      {"full",
       [](Lists& l) {
         return l.Length(l.Push(l.Push(l.Empty(l.Shape({}), 1, DT_FLOAT), ops::Const(l.s, 1.0f)),
                                ops::Const(l.s, 2.0f)));
       },
       "the list is full (max_num_elements 1)"},
      {"num_elements",
       [](Lists& l) { return l.Stack(l.FromTensor(Matrix(l.s), l.UnknownShape()), DT_FLOAT, l.UnknownShape(), 2); },
       "the list has 3 elements, num_elements is 2"},
      {"set outside",
       [](Lists& l) { return l.Length(l.Set(l.Reserve(l.Shape({}), 1, DT_FLOAT), 4, ops::Const(l.s, 1.0f))); },
       "TensorListSetItem: index 4 is outside a list of 1"},
      {"read as another dtype",
       [](Lists& l) { return l.Get(l.FromTensor(Matrix(l.s), l.UnknownShape()), 0, DT_DOUBLE, l.UnknownShape()); },
       "the list holds float, the op reads double"},
      {"index not a scalar",
       [](Lists& l) {
         return l.s.Op("TensorListGetItem").Input(l.FromTensor(Matrix(l.s), l.UnknownShape()))
             .Input(ops::Const(l.s, std::vector<int32_t>{0})).Input(l.UnknownShape())
             .Attr("element_dtype", DT_FLOAT).Finalize1();
       },
       "index must be an int32 scalar"},
      {"max below -1",
       [](Lists& l) { return l.Length(l.Empty(l.Shape({}), -2, DT_FLOAT)); },
       "max_num_elements is -2"},
      {"bad shape tensor",
       [](Lists& l) { return l.Length(l.Reserve(ops::Const(l.s, int32_t{3}), 1, DT_FLOAT)); },
       "a scalar element shape must be -1"},
  };
  for (const Case& c : cases) {
    Lists l;
    Output y = c.build(l);
    ASSERT_TRUE(l.s.ok()) << c.what << ": " << l.s.status();
    absl::StatusOr<Tensor> out = l.Eval(y);
    ASSERT_FALSE(out.ok()) << c.what;
    EXPECT_TRUE(absl::StrContains(out.status().message(), c.message))
        << c.what << ": " << out.status();
  }
}

// Gradients against central differences, through each op and its mirror.
TEST(TensorListOpsTest, GradientsMatchFiniteDifferences) {
  const Tensor x_value =
      Tensor::FromVector<double>({0.5, -1.0, 2.0, 0.25, 1.5, -0.75}, TensorShape({3, 2}));
  const Tensor v_value = Tensor::FromVector<double>({0.3, -0.2}, TensorShape({2}));
  struct Case {
    const char* what;
    std::function<Output(Lists&, Output x, Output v)> build;
  };
  const std::vector<Case> cases = {
      {"FromTensor, GetItem",
       [](Lists& l, Output x, Output v) {
         Output list = l.FromTensor(x, l.UnknownShape());
         return ops::Mul(l.s, l.Get(list, 2, DT_DOUBLE, l.UnknownShape()),
                         l.Get(list, 0, DT_DOUBLE, l.UnknownShape()));
       }},
      {"SetItem, Stack",
       [](Lists& l, Output x, Output v) {
         Output list = l.Set(l.FromTensor(x, l.UnknownShape()), 1, ops::Mul(l.s, v, v));
         return ops::Square(l.s, l.Stack(list, DT_DOUBLE, l.UnknownShape()));
       }},
      {"PushBack, PopBack",
       [](Lists& l, Output x, Output v) {
         Output list = l.Push(l.Push(l.Empty(l.Shape({2}), -1, DT_DOUBLE), v),
                              ops::Square(l.s, v));
         std::vector<Output> top = l.Pop(list, DT_DOUBLE, l.Shape({2}));
         std::vector<Output> next = l.Pop(top[0], DT_DOUBLE, l.Shape({2}));
         return ops::Mul(l.s, top[1], next[1]);
       }},
      {"SetItem growing the list, Stack",
       [](Lists& l, Output x, Output v) {
         Output list = l.FromTensor(x, l.UnknownShape());
         Output grown = l.s.Op("TensorListSetItem").Input(list).Input(ops::Const(l.s, 4))
                            .Input(ops::Square(l.s, v)).Attr("resize_if_index_out_of_bounds", true)
                            .Finalize1();
         Output all = ops::Const(l.s, std::vector<int32_t>{0, 1});
         return ops::Add(l.s, ops::Sum(l.s, ops::Square(l.s, l.Stack(grown, DT_DOUBLE, l.Shape({2}))), all),
                         ops::Sum(l.s, l.Stack(list, DT_DOUBLE, l.UnknownShape()), all));
       }},
      {"Gather, ScatterIntoExistingList",
       [](Lists& l, Output x, Output v) {
         Output list = l.FromTensor(x, l.UnknownShape());
         Output scattered = l.s.Op("TensorListScatterIntoExistingList")
                                .Input(list)
                                .Input(ops::Mul(l.s, x, x))
                                .Input(ops::Const(l.s, std::vector<int32_t>{2, 1, 0}))
                                .Finalize1();
         return ops::Add(l.s, l.Gather(scattered, {0, 2}, DT_DOUBLE, l.UnknownShape()),
                         l.Gather(list, {1, 0}, DT_DOUBLE, l.UnknownShape()));
       }},
  };
  for (const Case& c : cases) {
    Lists l;
    Output x = ops::Placeholder(l.s.WithOpName("x"), DT_DOUBLE);
    Output v = ops::Placeholder(l.s.WithOpName("v"), DT_DOUBLE);
    Output y = c.build(l, x, v);
    ASSERT_TRUE(l.s.ok()) << c.what << ": " << l.s.status();
    absl::StatusOr<double> err = MaxGradientError(l.s, {x, v}, {x_value, v_value}, y);
    ASSERT_TRUE(err.ok()) << c.what << ": " << err.status();
    EXPECT_LT(*err, 1e-6) << c.what;
  }
}

}  // namespace
}  // namespace sluice
