// TensorFlow 1.x's reader ops on resource handles, with its names, inputs
// and attrs (core/ops/io_ops.cc): TFRecordReaderV2, FixedLengthRecordReaderV2,
// ReaderReadV2, ReaderReadUpToV2, ReaderNumRecordsProducedV2,
// ReaderNumWorkUnitsCompletedV2, ReaderResetV2. CPU kernels in
// reader_kernels.cc; the reader's state is ops/io/internal/reader.h (its
// semantics and errors).
//
// The string_input_producer pattern:
//   Output files = ops::FIFOQueueV2(s, {DT_STRING});
//   Node* enqueue = ops::QueueEnqueueManyV2(s, files, {ops::Const(s, paths)});
//   Node* close = ops::QueueCloseV2(s, files);
//   Output reader = ops::TFRecordReaderV2(s, {.compression_type = "GZIP"});
//   ops::ReaderReadOutputs rec = ops::ReaderReadV2(s, reader, files);
//   // run enqueue and close once, then rec.key / rec.value per step until
//   // OutOfRange ("FIFOQueue '_0_...' is closed and has insufficient elements")
//
// The reader lives in the device's ResourceMgr under shared_name, else a
// name private to the node ("_reader_<node>"). ReaderReadV2 and
// ReaderReadUpToV2 are asynchronous: waiting for a file name holds no
// thread, and an aborted step (a RunOptions timeout: DeadlineExceeded)
// ends the wait. Thread-safety: kernels are thread-safe; graph building is
// thread-compatible. Ownership: the ResourceMgr owns readers.
#ifndef SLUICE_OPS_IO_READER_OPS_H_
#define SLUICE_OPS_IO_READER_OPS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterReaderOps(OpRegistry* ops);
void RegisterReaderKernels(KernelRegistry* kernels);

namespace ops {

struct TFRecordReaderAttrs {
  std::string container;
  std::string shared_name;
  std::string compression_type;  // "", "ZLIB" or "GZIP"
};
Output TFRecordReaderV2(const Scope& scope, const TFRecordReaderAttrs& attrs = {},
                        std::source_location loc = std::source_location::current());

struct FixedLengthRecordReaderAttrs {
  int64_t header_bytes = 0;
  int64_t record_bytes = 0;
  int64_t footer_bytes = 0;
  int64_t hop_bytes = 0;
  std::string container;
  std::string shared_name;
  std::string encoding;  // "", "ZLIB" or "GZIP"
};
Output FixedLengthRecordReaderV2(const Scope& scope, const FixedLengthRecordReaderAttrs& attrs,
                                 std::source_location loc = std::source_location::current());

struct ReaderReadOutputs {
  Output key, value;  // scalars (ReaderReadV2) or vectors (ReaderReadUpToV2)
};
ReaderReadOutputs ReaderReadV2(const Scope& scope, Input reader_handle, Input queue_handle,
                               std::source_location loc = std::source_location::current());
ReaderReadOutputs ReaderReadUpToV2(const Scope& scope, Input reader_handle, Input queue_handle,
                                   Input num_records,
                                   std::source_location loc = std::source_location::current());
Output ReaderNumRecordsProducedV2(const Scope& scope, Input reader_handle,
                                  std::source_location loc = std::source_location::current());
Output ReaderNumWorkUnitsCompletedV2(const Scope& scope, Input reader_handle,
                                     std::source_location loc = std::source_location::current());
Node* ReaderResetV2(const Scope& scope, Input reader_handle,
                    std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_IO_READER_OPS_H_
