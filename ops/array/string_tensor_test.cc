// DT_STRING tensors through a session: string Consts (built in C++ and read
// back from a GraphDef), feeds, buffer-sharing kernels, the kernels that
// index and rearrange them (Transpose, Tile, Slice, StridedSlice, GatherV2,
// ConcatV2, Split, Unpack), and the in-process
// _Send/_Recv between devices.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "builtin_session.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "session/direct_session.h"
#include "runtime/session.h"

namespace sluice {
namespace {

constexpr char kPrefix[] = "/job:localhost/replica:0/task:0";
std::string Cpu(int id) { return absl::StrCat(kPrefix, "/device:CPU:", id); }

std::vector<std::string> Strings(const Tensor& t) {
  absl::Span<std::string> v = t.flat<std::string>();
  return std::vector<std::string>(v.begin(), v.end());
}

TEST(StringTensorTest, FetchesAStringConstFromAGraphDef) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::Const(s.WithOpName("scalar"), "hello");
  ops::Const(s.WithOpName("vec"), {std::string("a"), std::string(300, 'z'), std::string()});
  ops::Const(s.WithOpName("mat"),
             Tensor::FromVector<std::string>({"p", "q", "r", "s"}, TensorShape({2, 2})));
  absl::StatusOr<GraphDef> def = s.ToGraphDef();
  ASSERT_TRUE(def.ok()) << def.status();
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *def);
  ASSERT_TRUE(sess.ok()) << sess.status();
  absl::StatusOr<std::vector<Tensor>> out = (*sess)->Run({}, {"scalar", "vec", "mat:0"}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 3u);
  EXPECT_EQ((*out)[0].dtype(), DT_STRING);
  EXPECT_EQ((*out)[0].dims(), 0);
  EXPECT_EQ((*out)[0].scalar<std::string>(), "hello");
  EXPECT_EQ(Strings((*out)[1]), (std::vector<std::string>{"a", std::string(300, 'z'), ""}));
  EXPECT_EQ((*out)[2].shape(), TensorShape({2, 2}));
  EXPECT_EQ((*out)[2].flat<std::string>()[3], "s");
  EXPECT_EQ((*out)[2].DebugString(), "string [2,2] [\"p\" \"q\" \"r\" \"s\"]");
}

TEST(StringTensorTest, FeedsAndBufferSharingKernels) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_STRING);
  Output r = ops::Reshape(s, ops::Identity(s, x), {2, 2});
  Output e = ops::ExpandDims(s, r, 0);
  Output shape = ops::Shape(s, e);
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s.graph());
  ASSERT_TRUE(sess.ok()) << sess.status();
  Tensor fed = Tensor::FromVector<std::string>({"w", "x", "y", "z"});
  absl::StatusOr<std::vector<Tensor>> out = (*sess)->Run({{x, fed}}, {r, e, shape});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({2, 2}));
  EXPECT_TRUE((*out)[0].SharesBufferWith(fed));
  EXPECT_EQ(Strings((*out)[1]), Strings(fed));
  EXPECT_EQ((*out)[2].flat<int32_t>()[0], 1);
}

TEST(StringTensorTest, IndexingAndRearrangingKernelsMoveStrings) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  // Long strings, so a bytewise copy of std::string objects would show.
  std::vector<std::string> words;
  for (int i = 0; i < 6; ++i) words.push_back(std::string(40, static_cast<char>('a' + i)));
  Output x = ops::Const(s, Tensor::FromVector<std::string>(words, TensorShape({2, 3})));
  Output t = ops::Transpose(s, x, {1, 0});
  Output tile = ops::Tile(s, x, {1, 2});
  Output slice = ops::Slice(s, x, {0, 1}, {2, 2});
  Output strided = ops::StridedSlice(s, x, {1, 2}, {2, -4}, {1, -2}, {.shrink_axis_mask = 1});
  Output gather = ops::GatherV2(s, x, ops::Const(s, std::vector<int32_t>{2, 0, 2}), 1);
  Output concat = ops::ConcatV2(s, {x, x}, 0);
  std::vector<Output> parts = ops::Split(s, 1, x, 3);
  std::vector<Output> rows = ops::Unpack(s, x, 2);
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s.graph());
  ASSERT_TRUE(sess.ok()) << sess.status();
  absl::StatusOr<std::vector<Tensor>> out =
      (*sess)->Run({}, {t, tile, slice, strided, gather, concat, parts[1], rows[1]});
  ASSERT_TRUE(out.ok()) << out.status();
  const auto& w = words;  // [[a b c] [d e f]]
  EXPECT_EQ(Strings((*out)[0]), (std::vector<std::string>{w[0], w[3], w[1], w[4], w[2], w[5]}));
  EXPECT_EQ(Strings((*out)[1]),
            (std::vector<std::string>{w[0], w[1], w[2], w[0], w[1], w[2], w[3], w[4], w[5], w[3],
                                      w[4], w[5]}));
  EXPECT_EQ(Strings((*out)[2]), (std::vector<std::string>{w[1], w[2], w[4], w[5]}));
  EXPECT_EQ(Strings((*out)[3]), (std::vector<std::string>{w[5], w[3]}));
  EXPECT_EQ(Strings((*out)[4]), (std::vector<std::string>{w[2], w[0], w[2], w[5], w[3], w[5]}));
  EXPECT_EQ(Strings((*out)[5]).size(), 12u);
  EXPECT_EQ(Strings((*out)[5])[7], w[1]);
  EXPECT_EQ(Strings((*out)[6]), (std::vector<std::string>{w[1], w[4]}));
  EXPECT_EQ(Strings((*out)[7]), (std::vector<std::string>{w[3], w[4], w[5]}));
}

TEST(StringTensorTest, CrossesDevicesThroughSendRecv) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output c = ops::Const(s.WithOpName("c").WithDevice(Cpu(1)),
                        {std::string("left"), std::string(100, 'r')});
  Output id = ops::Identity(s.WithOpName("id").WithDevice(Cpu(2)), c);
  Output back = ops::Reshape(s.WithOpName("back").WithDevice(Cpu(0)), id, {2, 1});
  ASSERT_TRUE(s.ok()) << s.status();
  SessionConfig opts = BuiltinSessionConfig();
  opts.devices.num_virtual_cpus = 2;
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(opts, *s.graph());
  ASSERT_TRUE(sess.ok()) << sess.status();
  for (int step = 0; step < 3; ++step) {  // the Const's buffer is reused every step
    RunMetadata meta;
    RunOptions ro;
    ro.output_partition_graphs = true;
    absl::StatusOr<std::vector<Tensor>> out = (*sess)->Run({}, {id, back}, {}, ro, &meta);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].flat<std::string>()[0], "left");
    EXPECT_EQ((*out)[1].shape(), TensorShape({2, 1}));
    EXPECT_EQ((*out)[1].flat<std::string>()[1], std::string(100, 'r'));
    EXPECT_GE(meta.partition_graphs.size(), 2u);  // really crossed devices
  }
}

TEST(StringTensorTest, StringLiteralIntoANumericInputIsAnError) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::Reshape(s, ops::Const(s, {1.f, 2.f}), "not a shape");
  EXPECT_FALSE(s.ok());
}

}  // namespace
}  // namespace sluice
