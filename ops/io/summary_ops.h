// Summary ops for TensorBoard (TensorFlow's names, args and attrs): each
// emits a scalar string holding a serialized tensorflow.Summary
// (graph/proto/summary.proto), which an event writer
// (training/summary/summary_writer.h) appends to an event file.
//
//   ScalarSummary(tags: string, values: T) -> summary: string
//       one Value{tag, simple_value} per element; tags and values have the
//       same shape. T in {float, double, int32, int64}.
//   HistogramSummary(tag: string, values: T = float) -> summary: string
//       one Value{tag, histo} over every element (ops/io/histogram.h);
//       non-finite values are an error.
//   ImageSummary(tag: string, tensor: T = float) -> summary: string
//       attrs max_images >= 1 (3), bad_color (uint8 tensor, opaque red);
//       images [batch, h, w, 1|3|4] as PNGs, "tag/image[/i]" (rescaling and
//       errors: ops/io/internal/summary_values.h). T in {uint8, float,
//       half, double}.
//   AudioSummaryV2(tag: string, tensor: float, sample_rate: float)
//       -> summary: string; attr max_outputs >= 1 (3); clips [batch,
//       frames(, channels)] as 16-bit WAVs, "tag/audio[/i]".
//       AudioSummary: the same with sample_rate an attr (TF1's form).
//   TensorSummaryV2(tag: string, tensor: T, serialized_summary_metadata:
//       string) -> summary: string; one Value{tag, tensor, metadata}: what
//       TensorBoard's plugins (text, PR curves, ...) read. TensorSummary:
//       TF1's form, the node's name as Value.node_name, no metadata.
//   MergeSummary(inputs: N * string) -> summary: string
//       the Values of every serialized Summary in every input, in order;
//       a tag seen twice is an error.
//
//   Scope s = Scope::NewRootScope(BuiltinOps());
//   Output a = ops::ScalarSummary(s, "loss", loss);
//   Output b = ops::HistogramSummary(s, "fc1/weights", w);
//   Output all = ops::MergeSummary(s, {a, b});
//   ... fetch `all`, then summary_writer->Add(fetched.scalar<std::string>(), step);
//
// Errors (InvalidArgument): a non-scalar tag, metadata or sample rate;
// tags/values shape mismatch (at build time when
// both shapes are known), a non-scalar histogram tag, a non-finite histogram
// value, an input of MergeSummary that is not a serialized Summary, a
// duplicate tag (the message names it). None of these ops has a gradient.
//
// Thread-safety: register functions may run concurrently on different
// registries; kernels keep no state. Ownership: registries own what is
// registered; wrappers' nodes belong to the scope's Graph.
#ifndef SLUICE_OPS_IO_SUMMARY_OPS_H_
#define SLUICE_OPS_IO_SUMMARY_OPS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "base/source_location.h"
#include "absl/types/span.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

// Definitions and shape functions; AlreadyExists when one is registered.
absl::Status RegisterSummaryOps(OpRegistry* ops);
// CPU kernels (ScalarSummary and HistogramSummary for T in {float, double,
// int32, int64}).
void RegisterSummaryKernels(KernelRegistry* kernels);

namespace ops {

Output ScalarSummary(const Scope& scope, Input tags, Input values,
                     std::source_location loc = std::source_location::current());
Output HistogramSummary(const Scope& scope, Input tag, Input values,
                        std::source_location loc = std::source_location::current());
Output ImageSummary(const Scope& scope, Input tag, Input images, int64_t max_images = 3,
                    std::source_location loc = std::source_location::current());
Output AudioSummaryV2(const Scope& scope, Input tag, Input audio, Input sample_rate,
                      int64_t max_outputs = 3,
                      std::source_location loc = std::source_location::current());
Output TensorSummaryV2(const Scope& scope, Input tag, Input tensor, Input serialized_metadata,
                       std::source_location loc = std::source_location::current());
Output MergeSummary(const Scope& scope, absl::Span<const Output> inputs,
                    std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_IO_SUMMARY_OPS_H_
