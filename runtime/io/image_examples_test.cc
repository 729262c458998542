#include "runtime/io/image_examples.h"

#include <filesystem>
#include <memory>
#include <string>

#include "graph/proto/example.pb.h"
#include "gtest/gtest.h"
#include "runtime/io/record_reader.h"

namespace sluice {
namespace {

std::string TempPrefix(const std::string& name) {
  return (std::filesystem::path(testing::TempDir()) / name).string();
}

std::vector<::tensorflow::Example> ReadExamples(const std::string& path) {
  std::vector<::tensorflow::Example> out;
  absl::StatusOr<std::unique_ptr<RecordReader>> r = RecordReader::Open(path);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return out;
  while (true) {
    absl::StatusOr<std::string> rec = (*r)->ReadRecord();
    if (!rec.ok()) {
      EXPECT_EQ(rec.status().code(), absl::StatusCode::kOutOfRange) << rec.status();
      break;
    }
    ::tensorflow::Example e;
    EXPECT_TRUE(e.ParseFromString(*rec));
    out.push_back(e);
  }
  return out;
}

TEST(ImageExamplesTest, NamesShardsAsTensorFlowDoes) {
  EXPECT_EQ(ShardedFileNames("/d/train", 2),
            (std::vector<std::string>{"/d/train-00000-of-00002.tfrecord",
                                      "/d/train-00001-of-00002.tfrecord"}));
}

TEST(ImageExamplesTest, WritesOneExamplePerImageRoundRobin) {
  Tensor images(DT_UINT8, TensorShape({3, 2, 2}));
  for (int i = 0; i < 12; ++i) images.flat<uint8_t>()[i] = static_cast<uint8_t>(i * 20);
  Tensor labels = Tensor::FromVector<uint8_t>({7, 8, 9});
  const std::vector<std::string> files = ShardedFileNames(TempPrefix("rr"), 2);
  ASSERT_TRUE(WriteImageExamples(images, labels, files).ok());
  std::vector<::tensorflow::Example> first = ReadExamples(files[0]);
  std::vector<::tensorflow::Example> second = ReadExamples(files[1]);
  ASSERT_EQ(first.size(), 2u);  // examples 0 and 2
  ASSERT_EQ(second.size(), 1u);  // example 1
  const auto& f = first[1].features().feature();
  EXPECT_EQ(f.at("label").int64_list().value(0), 9);
  EXPECT_EQ(f.at("image_raw").bytes_list().value(0),
            std::string({char(160), char(180), char(200), char(220)}));
  EXPECT_EQ(f.at("height").int64_list().value(0), 2);
  EXPECT_EQ(f.at("width").int64_list().value(0), 2);
  EXPECT_EQ(f.at("depth").int64_list().value(0), 1);
  EXPECT_EQ(second[0].features().feature().at("label").int64_list().value(0), 8);
  // No temporary file left behind.
  for (const auto& entry : std::filesystem::directory_iterator(testing::TempDir())) {
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
  }
}

TEST(ImageExamplesTest, BadInputsAreErrors) {
  Tensor images(DT_UINT8, TensorShape({2, 2, 2}));
  const std::vector<std::string> files = ShardedFileNames(TempPrefix("bad"), 1);
  EXPECT_EQ(WriteImageExamples(images, Tensor::FromVector<uint8_t>({1}), files).code(),
            absl::StatusCode::kInvalidArgument);  // 2 images, 1 label
  EXPECT_EQ(WriteImageExamples(Tensor(DT_FLOAT, TensorShape({2, 2, 2})),
                               Tensor::FromVector<uint8_t>({1, 2}), files)
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(WriteImageExamples(images, Tensor::FromVector<uint8_t>({1, 2}), {}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(
      WriteImageExamples(images, Tensor::FromVector<uint8_t>({1, 2}), {"/nonexistent/dir/x"}).ok());
}

}  // namespace
}  // namespace sluice
