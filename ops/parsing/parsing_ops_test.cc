// The Example parsing ops in graphs, against what TensorFlow 2.21 returned
// for the same TFRecords of Examples it serialized (testdata/, written by
// testdata/make_fixtures.py): ParseExample, ParseExampleV2 (sparse, ragged,
// scalar input), ParseSingleExample, ParseSequenceExample; and their errors.
#include "ops/parsing/parsing_ops.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "graph/proto/example.pb.h"
#include "gtest/gtest.h"
#include "builtin_session.h"
#include "ops/array/array_ops.h"
#include "ops/data_flow/queue_ops.h"
#include "ops/io/reader_ops.h"
#include "runtime/session.h"
#include "session/direct_session.h"
#include "ops/builtins.h"
#include "ops/testutil/math_test_util.h"
#include "runtime/io/record_reader.h"
#include "runtime/io/record_writer.h"
#include "runtime/npy.h"

namespace sluice {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing_util::Eval;
using testing_util::TryEval;

constexpr char kDir[] = "ops/parsing/testdata/";

std::vector<std::string> Records(const std::string& name) {
  absl::StatusOr<std::vector<std::string>> r = ReadAllRecords(kDir + name);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : std::vector<std::string>();
}

Tensor Npy(const std::string& name) {
  absl::StatusOr<Tensor> t = ReadNpyFile(kDir + name + ".npy");
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : Tensor();
}

template <typename T>
void ExpectEqualTensors(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.shape(), want.shape()) << got.DebugString() << " vs " << want.DebugString();
  ASSERT_EQ(got.dtype(), want.dtype());
  for (int64_t i = 0; i < got.NumElements(); ++i) {
    EXPECT_EQ(got.data<T>()[i], want.data<T>()[i]) << "at " << i;
  }
}

template <typename T>
std::vector<T> Values(const Tensor& t) {
  auto f = t.flat<T>();
  return std::vector<T>(f.begin(), f.end());
}

Output EmptyFloat(const Scope& s) {
  return ops::Const(s, Tensor(DT_FLOAT, TensorShape({0})));
}

class ParsingOpsTest : public ::testing::Test {
 protected:
  Scope s_ = Scope::NewRootScope(BuiltinOps());
};

TEST_F(ParsingOpsTest, ParseExampleMatchesTensorFlow) {
  std::vector<std::string> records = Records("examples.tfrecord");
  ASSERT_EQ(records.size(), 4u);
  Output serialized = ops::Const(s_, Tensor::FromVector<std::string>(records));
  Output names = ops::Const(s_, Tensor(DT_STRING, TensorShape({0})));
  ops::ParseExampleOutputs p = ops::ParseExample(
      s_, serialized, names, {"tags"}, {"image", "label", "weight"},
      {EmptyFloat(s_), ops::Const(s_, Tensor(DT_INT64, TensorShape({0}))),
       ops::Const(s_, -1.0f)},
      {DT_STRING}, {TensorShape({2, 3}), TensorShape({}), TensorShape({})});
  ASSERT_TRUE(s_.ok()) << s_.status();
  EXPECT_EQ(p.dense_values[0].node->output_shape(p.dense_values[0].index), TensorShape({4, 2, 3}))
      << p.dense_values[0].node->output_shape(p.dense_values[0].index).DebugString();
  ExpectEqualTensors<float>(Eval(s_, {}, p.dense_values[0]), Npy("ex_image"));
  ExpectEqualTensors<int64_t>(Eval(s_, {}, p.dense_values[1]), Npy("ex_label"));
  ExpectEqualTensors<float>(Eval(s_, {}, p.dense_values[2]), Npy("ex_weight"));
  ExpectEqualTensors<int64_t>(Eval(s_, {}, p.sparse_indices[0]), Npy("ex_tags_indices"));
  ExpectEqualTensors<int64_t>(Eval(s_, {}, p.sparse_shapes[0]), Npy("ex_tags_shape"));
  EXPECT_THAT(Values<std::string>(Eval(s_, {}, p.sparse_values[0])),
              ElementsAre("t0", "t0", "t1", "t0", "t1", "t2"));
}

TEST_F(ParsingOpsTest, ParseExampleV2RaggedAndScalar) {
  std::vector<std::string> records = Records("examples.tfrecord");
  Output serialized = ops::Const(s_, Tensor::FromVector<std::string>(records));
  Output names = ops::Const(s_, Tensor(DT_STRING, TensorShape({0})));
  ops::ParseExampleOutputs p = ops::ParseExampleV2(
      s_, serialized, names, {}, {"label"}, {"tags"},
      {ops::Const(s_, Tensor(DT_INT64, TensorShape({0})))},
      {.dense_shapes = {TensorShape({})},
       .ragged_value_types = {DT_STRING},
       .ragged_split_types = {DT_INT32}});
  ASSERT_TRUE(s_.ok()) << s_.status();
  ExpectEqualTensors<int32_t>(Eval(s_, {}, p.ragged_row_splits[0]), Npy("ex_tags_splits"));
  EXPECT_EQ(Eval(s_, {}, p.ragged_values[0]).NumElements(), 6);
  ExpectEqualTensors<int64_t>(Eval(s_, {}, p.dense_values[0]), Npy("ex_label"));

  // A scalar: unbatched outputs.
  Output one = ops::Const(s_, Tensor::Scalar<std::string>(records[3]));
  ops::ParseExampleOutputs q = ops::ParseExampleV2(
      s_, one, names, {"tags"}, {"image"}, {}, {EmptyFloat(s_)},
      {.sparse_types = {DT_STRING}, .dense_shapes = {TensorShape({6})}});
  ASSERT_TRUE(s_.ok()) << s_.status();
  testing_util::ExpectTensor<float>(Eval(s_, {}, q.dense_values[0]), TensorShape({6}),
                                    {3, 3.25, 3.5, 3.75, 4, 4.25});
  EXPECT_THAT(Values<int64_t>(Eval(s_, {}, q.sparse_indices[0])), ElementsAre(0, 1, 2));
  EXPECT_THAT(Values<int64_t>(Eval(s_, {}, q.sparse_shapes[0])), ElementsAre(3));
}

TEST_F(ParsingOpsTest, ParseSingleExample) {
  std::vector<std::string> records = Records("examples.tfrecord");
  Output x = ops::Placeholder(s_, DT_STRING);
  ops::ParseExampleOutputs p = ops::ParseSingleExample(
      s_, x, {ops::Const(s_, Tensor(DT_INT64, TensorShape({0}))), ops::Const(s_, 7.0f)},
      {"tags"}, {"label", "weight"}, {DT_STRING}, {TensorShape({}), TensorShape({})});
  ASSERT_TRUE(s_.ok()) << s_.status();
  for (int i = 0; i < 4; ++i) {
    Tensor rec = Tensor::Scalar<std::string>(records[i]);
    EXPECT_EQ(Eval(s_, {{x, rec}}, p.dense_values[0]).scalar<int64_t>(), 3 * i);
    EXPECT_EQ(Eval(s_, {{x, rec}}, p.dense_values[1]).scalar<float>(), i == 2 ? 7.0f : 0.5f * i);
    EXPECT_EQ(Eval(s_, {{x, rec}}, p.sparse_shapes[0]).data<int64_t>()[0], i);
  }
  // Not a scalar, and bytes that are no Example.
  absl::StatusOr<Tensor> r =
      TryEval(s_, {{x, Tensor::FromVector<std::string>({records[0]})}}, p.dense_values[0]);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("Expected serialized to be a scalar"));
  r = TryEval(s_, {{x, Tensor::Scalar<std::string>(records[0].substr(0, 9))}}, p.dense_values[0]);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("Could not parse example input"));
}

TEST_F(ParsingOpsTest, ParseSequenceExampleMatchesTensorFlow) {
  std::vector<std::string> records = Records("sequence_examples.tfrecord");
  ASSERT_EQ(records.size(), 2u);
  Output serialized = ops::Const(s_, Tensor::FromVector<std::string>(records));
  Output names = ops::Const(s_, Tensor::FromVector<std::string>({"a", "b"}));
  ops::ParseSequenceExampleOutputs p = ops::ParseSequenceExample(
      s_, serialized, names, {ops::Const(s_, Tensor(DT_INT64, TensorShape({0})))},
      {.context_dense_keys = {"id"},
       .context_dense_shapes = {TensorShape({})},
       .feature_list_dense_keys = {"frames"},
       .feature_list_dense_types = {DT_FLOAT},
       .feature_list_dense_shapes = {TensorShape({2})}});
  ASSERT_TRUE(s_.ok()) << s_.status();
  ExpectEqualTensors<int64_t>(Eval(s_, {}, p.context_dense_values[0]), Npy("seq_id"));
  ExpectEqualTensors<float>(Eval(s_, {}, p.feature_list_dense_values[0]), Npy("seq_frames"));
  ExpectEqualTensors<int64_t>(Eval(s_, {}, p.feature_list_dense_lengths[0]), Npy("seq_lengths"));
}

// TensorFlow 1.x's input pipeline: file names in a FIFO queue, a
// TFRecordReaderV2 reading the TensorFlow-written records in batches,
// ParseExample on each batch.
TEST_F(ParsingOpsTest, QueueReaderParsePipeline) {
  const std::string path = std::string(kDir) + "examples.tfrecord";
  Output files = ops::FIFOQueueV2(s_, {DT_STRING});
  Node* enqueue = ops::QueueEnqueueManyV2(
      s_, files, {ops::Const(s_, Tensor::FromVector<std::string>({path, path}))});
  Node* close = ops::QueueCloseV2(s_, files);
  ops::ReaderReadOutputs rec =
      ops::ReaderReadUpToV2(s_, ops::TFRecordReaderV2(s_), files, ops::Const(s_, int64_t{3}));
  ops::ParseExampleOutputs p = ops::ParseExample(
      s_, rec.value, ops::Const(s_, Tensor(DT_STRING, TensorShape({0}))), {}, {"label"},
      {ops::Const(s_, Tensor(DT_INT64, TensorShape({0})))}, {}, {TensorShape({})});
  ASSERT_TRUE(s_.ok()) << s_.status();
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s_.graph());
  ASSERT_TRUE(sess.ok()) << sess.status();
  ASSERT_TRUE((*sess)->Run({}, {}, {enqueue}).ok());
  ASSERT_TRUE((*sess)->Run({}, {}, {close}).ok());
  std::vector<int64_t> labels;
  while (true) {
    absl::StatusOr<std::vector<Tensor>> r = (*sess)->Run({}, {p.dense_values[0], rec.key}, {});
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), absl::StatusCode::kOutOfRange) << r.status();
      break;
    }
    for (int64_t v : Values<int64_t>((*r)[0])) labels.push_back(v);
  }
  EXPECT_THAT(labels, ElementsAre(0, 3, 6, 9, 0, 3, 6, 9));
}

// With the reader's keys as names, a record that is no Example is named by
// its file and byte offset.
TEST_F(ParsingOpsTest, BadRecordNamedByFileAndOffset) {
  std::vector<std::string> records = Records("examples.tfrecord");
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp != nullptr ? tmp : "/tmp") + "/bad_example.tfrecord";
  {
    absl::StatusOr<std::unique_ptr<RecordWriter>> w = RecordWriter::Create(path);
    ASSERT_TRUE(w.ok()) << w.status();
    ASSERT_TRUE((*w)->WriteRecord(records[0]).ok());
    ASSERT_TRUE((*w)->WriteRecord("\x0a\x09not an example").ok());
    ASSERT_TRUE((*w)->Close().ok());
  }
  Output files = ops::FIFOQueueV2(s_, {DT_STRING});
  Node* enqueue = ops::QueueEnqueueV2(s_, files, {ops::Const(s_, Tensor::Scalar<std::string>(path))});
  ops::ReaderReadOutputs rec =
      ops::ReaderReadUpToV2(s_, ops::TFRecordReaderV2(s_), files, ops::Const(s_, int64_t{2}));
  ops::ParseExampleOutputs p = ops::ParseExample(
      s_, rec.value, rec.key, {}, {"label"}, {ops::Const(s_, Tensor(DT_INT64, TensorShape({0})))},
      {}, {TensorShape({})});
  ASSERT_TRUE(s_.ok()) << s_.status();
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s_.graph());
  ASSERT_TRUE(sess.ok()) << sess.status();
  ASSERT_TRUE((*sess)->Run({}, {}, {enqueue}).ok());
  absl::StatusOr<std::vector<Tensor>> r = (*sess)->Run({}, {p.dense_values[0]}, {});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  const size_t second = 16 + records[0].size();
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr(absl::StrCat("Name: ", path, ":", second, ", Index: 1.  Could not parse")));
}

TEST_F(ParsingOpsTest, ErrorsNameTheRecord) {
  std::vector<std::string> records = Records("examples.tfrecord");
  Output x = ops::Placeholder(s_, DT_STRING);
  Output names = ops::Const(s_, Tensor::FromVector<std::string>({"r0", "r1"}));
  ops::ParseExampleOutputs p =
      ops::ParseExample(s_, x, names, {}, {"image"}, {EmptyFloat(s_)}, {}, {TensorShape({5})});
  ASSERT_TRUE(s_.ok()) << s_.status();
  absl::StatusOr<Tensor> r =
      TryEval(s_, {{x, Tensor::FromVector<std::string>(records)}}, p.dense_values[0]);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("len(names) == len(serialized)"));
  r = TryEval(s_, {{x, Tensor::FromVector<std::string>({records[0], records[1]})}},
              p.dense_values[0]);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("Name: r0, Key: image, Index: 0."));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("Values size: 6 but output shape: [5]"));
  r = TryEval(s_, {{x, Tensor::FromVector<std::string>({records[0], "\x0a\x7f"})}},
              p.dense_values[0]);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("Name: r1, Index: 1.  Could not parse example"));
  // A default of the wrong shape is refused when the kernel runs.
  ops::ParseExampleOutputs q = ops::ParseExample(
      s_, x, names, {}, {"image"}, {ops::Const(s_, Tensor(DT_FLOAT, TensorShape({2})))}, {},
      {TensorShape({6})});
  r = TryEval(s_, {{x, Tensor::FromVector<std::string>({records[0], records[1]})}},
              q.dense_values[0]);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("default_value has shape [2]"));
}

}  // namespace
}  // namespace sluice
