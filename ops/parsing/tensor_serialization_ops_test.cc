// SerializeTensor writes the bytes TensorFlow 2.21's tf.io.serialize_tensor
// writes for the same tensors; ParseTensor reads them and TensorFlow's
// compact *_val protos back; bad bytes and types are errors.
#include "ops/parsing/tensor_serialization_ops.h"

#include <string>

#include "gmock/gmock.h"
#include "graph/proto/tensor.pb.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/testutil/math_test_util.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using testing_util::Eval;
using testing_util::ExpectTensor;
using testing_util::TryEval;

std::string Bytes(const char* s, size_t n) { return std::string(s, n); }

TEST(TensorSerializationTest, WritesTensorFlowsBytes) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  auto serialized = [&](const Tensor& t) {
    return Eval(s, {}, ops::SerializeTensor(s, ops::Const(s, t))).scalar<std::string>();
  };
  EXPECT_EQ(serialized(Tensor::FromVector<float>({1.5f, 2, 3, 4}, TensorShape({2, 2}))),
            Bytes("\x08\x01\x12\x08\x12\x02\x08\x02\x12\x02\x08\x02\"\x10\x00\x00\xc0?\x00\x00\x00@"
                  "\x00\x00@@\x00\x00\x80@",
                  30));
  EXPECT_EQ(serialized(Tensor::FromVector<std::string>({"a", "bc"}, TensorShape({2}))),
            Bytes("\x08\x07\x12\x04\x12\x02\x08\x02" "B\x01" "aB\x02" "bc", 15));
  EXPECT_EQ(serialized(Tensor::Scalar<int64_t>(7)),
            Bytes("\x08\x09\x12\x00\"\x08\x07\x00\x00\x00\x00\x00\x00\x00", 14));
  EXPECT_EQ(serialized(Tensor(DT_INT32, TensorShape({0, 2}))),
            Bytes("\x08\x03\x12\x06\x12\x00\x12\x02\x08\x02", 10));
  EXPECT_EQ(serialized(Tensor::FromVector<bool>({true, false}, TensorShape({2}))),
            Bytes("\x08\x0a\x12\x04\x12\x02\x08\x02\"\x02\x01\x00", 12));
}

TEST(TensorSerializationTest, ParsesWhatItWritesAndCompactProtos) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Tensor image(DT_UINT8, TensorShape({2, 3, 1}));
  for (int i = 0; i < 6; ++i) image.data<uint8_t>()[i] = static_cast<uint8_t>(40 * i);
  Output back = ops::ParseTensor(s, ops::SerializeTensor(s, ops::Const(s, image)), DT_UINT8);
  ExpectTensor<uint8_t>(Eval(s, {}, back), TensorShape({2, 3, 1}), {0, 40, 80, 120, 160, 200});
  Output words = ops::ParseTensor(
      s, ops::SerializeTensor(s, ops::Const(s, Tensor::FromVector<std::string>({"x", ""}))),
      DT_STRING);
  Tensor w = Eval(s, {}, words);
  EXPECT_EQ(w.flat<std::string>()[0], "x");
  EXPECT_EQ(w.flat<std::string>()[1], "");
  // A compact proto: one float_val fills the shape.
  ::tensorflow::TensorProto proto;
  proto.set_dtype(DT_FLOAT);
  proto.mutable_tensor_shape()->add_dim()->set_size(3);
  proto.add_float_val(0.5f);
  Output compact = ops::ParseTensor(s, ops::Const(s, proto.SerializeAsString()), DT_FLOAT);
  ExpectTensor<float>(Eval(s, {}, compact), TensorShape({3}), {0.5f, 0.5f, 0.5f});
}

TEST(TensorSerializationTest, BadBytesAndTypesAreErrors) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  auto message = [&](Output y) { return std::string(TryEval(s, {}, y).status().message()); };
  Output bytes = ops::SerializeTensor(s, ops::Const(s, 1.0f));
  EXPECT_THAT(message(ops::ParseTensor(s, bytes, DT_DOUBLE)),
              HasSubstr("Type mismatch between parsed tensor (float) and dtype (double)"));
  EXPECT_THAT(message(ops::ParseTensor(s, ops::Const(s, std::string("\xff\xff\xff", 3)), DT_FLOAT)),
              HasSubstr("Could not parse `serialized` as TensorProto"));
  // A vector fed where the shape was not known when the graph was built.
  Output fed = ops::Placeholder(s, DT_STRING);
  absl::StatusOr<Tensor> r = TryEval(s, {{fed, Tensor::FromVector<std::string>({"a", "b"})}},
                                     ops::ParseTensor(s, fed, DT_FLOAT));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("Expected `serialized` to be a scalar"));
  // Content that does not fit the shape.
  ::tensorflow::TensorProto proto;
  proto.set_dtype(DT_FLOAT);
  proto.mutable_tensor_shape()->add_dim()->set_size(4);
  proto.set_tensor_content(std::string(8, '\0'));
  EXPECT_THAT(message(ops::ParseTensor(s, ops::Const(s, proto.SerializeAsString()), DT_FLOAT)),
              HasSubstr("needs 16"));
}

}  // namespace
}  // namespace sluice
