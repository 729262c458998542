#include "runtime/io/image_examples.h"

#include <unistd.h>

#include <filesystem>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "graph/proto/example.pb.h"
#include "runtime/io/record_writer.h"

namespace sluice {
namespace {

int64_t LabelAt(const Tensor& labels, int64_t i) {
  switch (labels.dtype()) {
    case DT_UINT8: return labels.flat<uint8_t>()[i];
    case DT_INT32: return labels.flat<int32_t>()[i];
    default: return labels.flat<int64_t>()[i];
  }
}

void SetInt(::tensorflow::Example* e, const std::string& name, int64_t v) {
  (*e->mutable_features()->mutable_feature())[name].mutable_int64_list()->add_value(v);
}

}  // namespace

std::vector<std::string> ShardedFileNames(const std::string& prefix, int num_shards) {
  std::vector<std::string> names;
  for (int k = 0; k < num_shards; ++k) {
    names.push_back(absl::StrFormat("%s-%05d-of-%05d.tfrecord", prefix, k, num_shards));
  }
  return names;
}

absl::Status WriteImageExamples(const Tensor& images, const Tensor& labels,
                                const std::vector<std::string>& paths) {
  if (images.dtype() != DT_UINT8 || images.dims() < 3 || images.dims() > 4) {
    return absl::InvalidArgumentError(absl::StrCat("images must be uint8 [n, h, w(, c)], not ",
                                                   DataTypeName(images.dtype()), " ",
                                                   images.shape().DebugString()));
  }
  if (labels.dims() != 1 || labels.dim_size(0) != images.dim_size(0) ||
      (labels.dtype() != DT_UINT8 && labels.dtype() != DT_INT32 && labels.dtype() != DT_INT64)) {
    return absl::InvalidArgumentError(
        absl::StrCat("labels must be one integer per image (", images.dim_size(0), "), not ",
                     DataTypeName(labels.dtype()), " ", labels.shape().DebugString()));
  }
  if (paths.empty()) return absl::InvalidArgumentError("no output files");
  const int64_t n = images.dim_size(0), h = images.dim_size(1), w = images.dim_size(2);
  const int64_t c = images.dims() == 4 ? images.dim_size(3) : 1;
  const int64_t pixels = h * w * c;
  std::vector<std::unique_ptr<RecordWriter>> writers;
  std::vector<std::string> temps;
  for (const std::string& path : paths) {
    temps.push_back(absl::StrCat(path, ".tmp.", getpid()));
    std::filesystem::remove(temps.back());
    ASSIGN_OR_RETURN(std::unique_ptr<RecordWriter> writer, RecordWriter::Create(temps.back()));
    writers.push_back(std::move(writer));
  }
  const char* pixel_bytes = static_cast<const char*>(images.raw_data());
  std::string serialized;
  for (int64_t i = 0; i < n; ++i) {
    ::tensorflow::Example e;
    (*e.mutable_features()->mutable_feature())["image_raw"].mutable_bytes_list()->add_value(
        std::string(pixel_bytes + i * pixels, static_cast<size_t>(pixels)));
    SetInt(&e, "label", LabelAt(labels, i));
    SetInt(&e, "height", h);
    SetInt(&e, "width", w);
    SetInt(&e, "depth", c);
    // Deterministic bytes: the same files from every converting process.
    serialized.clear();
    {
      google::protobuf::io::StringOutputStream out(&serialized);
      google::protobuf::io::CodedOutputStream coded(&out);
      coded.SetSerializationDeterministic(true);
      e.SerializeToCodedStream(&coded);
    }
    RETURN_IF_ERROR(writers[i % writers.size()]->WriteRecord(serialized));
  }
  for (size_t k = 0; k < writers.size(); ++k) {
    RETURN_IF_ERROR(writers[k]->Close());
    std::error_code ec;
    std::filesystem::rename(temps[k], paths[k], ec);
    if (ec) {
      return absl::InternalError(
          absl::StrCat("cannot rename ", temps[k], " to ", paths[k], ": ", ec.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace sluice
