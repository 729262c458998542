// The Summary values TensorBoard reads, made from tensors exactly as
// TensorFlow's summary ops and summary writers make them (its
// core/summary/summary_converter.cc): the TF1 summary ops (summary_ops.h)
// and the TF2 writer ops (summary_writer_ops.h) share these.
//
//   ::tensorflow::Summary s;
//   RETURN_IF_ERROR(summary::AddScalar(loss, "loss", &s));            // simple_value
//   RETURN_IF_ERROR(summary::AddImages(batch, "input", 3, red, &s));  // input/image/0..2
//
// Element types: bool, int8/16/32/64, uint8/16, half, bfloat16, float,
// double (Unimplemented for others).
//   AddScalar     Value{tag, simple_value = element 0 as float}
//   AddHistogram  Value{tag, histo} over every element (ops/io/histogram.h);
//                 InvalidArgument "Nan in summary histogram for: TAG" (or
//                 Infinity)
//   AddImages     [batch, h, w, depth in {1, 3, 4}] -> min(max_images,
//                 batch) Values "TAG/image" (max_images 1) or
//                 "TAG/image/I", each a PNG. uint8 as is; half, float and
//                 double rescaled per image: all >= 0 -> x * 255 / max, else
//                 x * 127 / max|x| + 128 (scale 0 under 1e-6), a pixel with a
//                 non-finite channel painted `bad_color` (its first depth
//                 bytes). InvalidArgument for another rank or depth, h * w
//                 of 2^29 or more, bad_color shorter than depth.
//   AddAudio      float [batch, frames] or [batch, frames, channels] ->
//                 min(max_outputs, batch) Values "TAG/audio[/I]", each a
//                 16-bit WAV at the sample rate rounded (at least 1);
//                 InvalidArgument for a rate <= 0
//   AddTensor     Value{tag, tensor, metadata}: strings as string_val, the
//                 rest as tensor_content; metadata parsed from its bytes
//                 (InvalidArgument when they are not a SummaryMetadata)
// Thread-safe: no state.
#ifndef SLUICE_OPS_IO_INTERNAL_SUMMARY_VALUES_H_
#define SLUICE_OPS_IO_INTERNAL_SUMMARY_VALUES_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "graph/proto/summary.pb.h"
#include "runtime/tensor.h"

namespace sluice {
namespace summary {

absl::Status AddScalar(const Tensor& t, absl::string_view tag, ::tensorflow::Summary* s);
absl::Status AddHistogram(const Tensor& t, absl::string_view tag, ::tensorflow::Summary* s);
absl::Status AddImages(const Tensor& t, absl::string_view tag, int64_t max_images,
                       const Tensor& bad_color, ::tensorflow::Summary* s);
absl::Status AddAudio(const Tensor& t, absl::string_view tag, int64_t max_outputs,
                      float sample_rate, ::tensorflow::Summary* s);
absl::Status AddTensor(const Tensor& t, absl::string_view tag,
                       absl::string_view serialized_metadata, ::tensorflow::Summary* s);

}  // namespace summary
}  // namespace sluice

#endif  // SLUICE_OPS_IO_INTERNAL_SUMMARY_VALUES_H_
