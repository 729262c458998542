#include "runtime/io/image_examples.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "graph/proto/example.pb.h"
#include "runtime/io/example_shards.h"

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
  ASSIGN_OR_RETURN(std::unique_ptr<ExampleShardWriter> writer, ExampleShardWriter::Create(paths));
  const char* pixel_bytes = static_cast<const char*>(images.raw_data());
  for (int64_t i = 0; i < n; ++i) {
    ::tensorflow::Example e;
    (*e.mutable_features()->mutable_feature())["image_raw"].mutable_bytes_list()->add_value(
        std::string(pixel_bytes + i * pixels, static_cast<size_t>(pixels)));
    SetInt(&e, "label", LabelAt(labels, i));
    SetInt(&e, "height", h);
    SetInt(&e, "width", w);
    SetInt(&e, "depth", c);
    RETURN_IF_ERROR(writer->Write(e));
  }
  return writer->Commit();
}

}  // namespace sluice
