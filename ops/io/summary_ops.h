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
// Errors (InvalidArgument): tags/values shape mismatch (at build time when
// both shapes are known), a non-scalar histogram tag, a non-finite histogram
// value, an input of MergeSummary that is not a serialized Summary, a
// duplicate tag (the message names it). None of these ops has a gradient.
//
// Thread-safety: register functions may run concurrently on different
// registries; kernels keep no state. Ownership: registries own what is
// registered; wrappers' nodes belong to the scope's Graph.
#ifndef SLUICE_OPS_IO_SUMMARY_OPS_H_
#define SLUICE_OPS_IO_SUMMARY_OPS_H_

#include "base/source_location.h"

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

// Definitions and shape functions; AlreadyExists when one is registered.
absl::Status RegisterSummaryOps(OpRegistry* ops);
// CPU kernels for T in {float, double, int32, int64}.
void RegisterSummaryKernels(KernelRegistry* kernels);

namespace ops {

Output ScalarSummary(const Scope& scope, Input tags, Input values,
                     std::source_location loc = std::source_location::current());
Output HistogramSummary(const Scope& scope, Input tag, Input values,
                        std::source_location loc = std::source_location::current());
Output MergeSummary(const Scope& scope, absl::Span<const Output> inputs,
                    std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_IO_SUMMARY_OPS_H_
