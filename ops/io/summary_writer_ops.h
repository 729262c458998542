// TensorFlow 2's summary writer ops (what tf.summary.create_file_writer,
// tf.summary.scalar/histogram/image/audio/text and writer.flush() put in a
// graph), under TensorFlow's names, inputs and attrs. The writer is a
// resource of the device it runs on (a CPU), holding one event file
// (ops/io/internal/summary_file_writer.h); every op after SummaryWriter
// takes its handle first. All are stateful and have no gradient.
//
//   SummaryWriter() -> writer: resource      attrs shared_name, container
//       ("" shares the node's own writer)
//   CreateSummaryFileWriter(writer, logdir: string, max_queue: int32,
//       flush_millis: int32, filename_suffix: string)
//       opens the event file; a second run keeps the first file
//   WriteSummary(writer, step: int64, tensor: T, tag: string,
//       summary_metadata: string)          the TF2 form: Value{tag, tensor,
//       metadata} (what TensorBoard's plugins write)
//   WriteScalarSummary(writer, step, tag, value: T)         simple_value
//   WriteHistogramSummary(writer, step, tag, values: T = float)   histo
//   WriteImageSummary(writer, step, tag, tensor: T = float, bad_color:
//       uint8) attr max_images >= 1 (3)
//   WriteAudioSummary(writer, step, tag, tensor: float, sample_rate: float)
//       attr max_outputs >= 1 (3)
//   WriteRawProtoSummary(writer, step, tensor: string)  each element a
//       serialized Summary, one event each
//   WriteGraphSummary(writer, step, tensor: string)   a serialized GraphDef
//   ImportEvent(writer, event: string)   a serialized Event, as given
//   FlushSummaryWriter(writer)    CloseSummaryWriter(writer)
// Value conversions as the TF1 summary ops (ops/io/internal/summary_values.h).
//
//   Output w = ops::SummaryWriter(s);
//   Node* init = ops::CreateSummaryFileWriter(s, w, "/tmp/logs/run1");
//   Node* loss_summary = ops::WriteScalarSummary(s, w, step, "loss", loss);
//   Node* flush = ops::FlushSummaryWriter(s, w);
//   // run init once, loss_summary with each step, flush at the end
//   // then: tensorboard --logdir /tmp/logs
//
// Errors: a writer not created or closed (FailedPrecondition naming it), a
// handle to no writer (NotFound naming it and the device), a non-scalar
// step, tag, logdir or sample rate, an unparsable Summary, GraphDef, Event
// or metadata (InvalidArgument / DataLoss), a logdir outside the write
// roots of a cluster task (PermissionDenied), file errors naming the path.
// Thread-safety: as Scope; the writer locks itself.
#ifndef SLUICE_OPS_IO_SUMMARY_WRITER_OPS_H_
#define SLUICE_OPS_IO_SUMMARY_WRITER_OPS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterSummaryWriterOps(OpRegistry* ops);
void RegisterSummaryWriterKernels(KernelRegistry* kernels);

namespace ops {

Output SummaryWriter(const Scope& scope, const std::string& shared_name = "",
                     std::source_location loc = std::source_location::current());
// The nodes below have no outputs (run them as targets); nullptr on error.
Node* CreateSummaryFileWriter(const Scope& scope, Input writer, Input logdir,
                              Input max_queue = 10, Input flush_millis = 120000,
                              Input filename_suffix = std::string(".v2"),
                              std::source_location loc = std::source_location::current());
Node* WriteSummary(const Scope& scope, Input writer, Input step, Input tensor, Input tag,
                   Input summary_metadata,
                   std::source_location loc = std::source_location::current());
Node* WriteScalarSummary(const Scope& scope, Input writer, Input step, Input tag, Input value,
                         std::source_location loc = std::source_location::current());
Node* WriteHistogramSummary(const Scope& scope, Input writer, Input step, Input tag,
                            Input values,
                            std::source_location loc = std::source_location::current());
Node* WriteImageSummary(const Scope& scope, Input writer, Input step, Input tag, Input images,
                        Input bad_color, int64_t max_images = 3,
                        std::source_location loc = std::source_location::current());
Node* WriteAudioSummary(const Scope& scope, Input writer, Input step, Input tag, Input audio,
                        Input sample_rate, int64_t max_outputs = 3,
                        std::source_location loc = std::source_location::current());
Node* WriteRawProtoSummary(const Scope& scope, Input writer, Input step, Input summaries,
                           std::source_location loc = std::source_location::current());
Node* WriteGraphSummary(const Scope& scope, Input writer, Input step, Input graph_def,
                        std::source_location loc = std::source_location::current());
Node* ImportEvent(const Scope& scope, Input writer, Input event,
                  std::source_location loc = std::source_location::current());
Node* FlushSummaryWriter(const Scope& scope, Input writer,
                         std::source_location loc = std::source_location::current());
Node* CloseSummaryWriter(const Scope& scope, Input writer,
                         std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_IO_SUMMARY_WRITER_OPS_H_
