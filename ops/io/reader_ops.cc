// Reader op definitions, shape functions and wrappers (kernels:
// reader_kernels.cc).
#include "ops/io/reader_ops.h"

#include "base/status_macros.h"
#include "graph/attr_value.h"
#include "graph/shape_inference.h"

namespace sluice {
namespace {

absl::Status Scalars(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, TensorShape());
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterReaderOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("TFRecordReaderV2")
                                    .Output("reader_handle: resource")
                                    .Attr("container: string = ''")
                                    .Attr("shared_name: string = ''")
                                    .Attr("compression_type: string = ''")
                                    .SetIsStateful()
                                    .SetShapeFn(Scalars)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("FixedLengthRecordReaderV2")
                                    .Output("reader_handle: resource")
                                    .Attr("header_bytes: int = 0")
                                    .Attr("record_bytes: int")
                                    .Attr("footer_bytes: int = 0")
                                    .Attr("hop_bytes: int = 0")
                                    .Attr("container: string = ''")
                                    .Attr("shared_name: string = ''")
                                    .Attr("encoding: string = ''")
                                    .SetIsStateful()
                                    .SetShapeFn(Scalars)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ReaderReadV2")
                                    .Input("reader_handle: resource")
                                    .Input("queue_handle: resource")
                                    .Output("key: string")
                                    .Output("value: string")
                                    .SetIsStateful()
                                    .SetShapeFn(Scalars)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ReaderReadUpToV2")
                                    .Input("reader_handle: resource")
                                    .Input("queue_handle: resource")
                                    .Input("num_records: int64")
                                    .Output("keys: string")
                                    .Output("values: string")
                                    .SetIsStateful()
                                    .SetShapeFn([](InferenceContext* c) {
                                      RETURN_IF_ERROR(c->WithRank(2, 0));
                                      c->set_output(0, TensorShape({-1}));
                                      c->set_output(1, TensorShape({-1}));
                                      return absl::OkStatus();
                                    })));
  for (const char* name : {"ReaderNumRecordsProducedV2", "ReaderNumWorkUnitsCompletedV2"}) {
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(name)
                                      .Input("reader_handle: resource")
                                      .Output(std::string(name) == "ReaderNumRecordsProducedV2"
                                                  ? "records_produced: int64"
                                                  : "units_completed: int64")
                                      .SetIsStateful()
                                      .SetShapeFn(Scalars)));
  }
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ReaderResetV2")
                                    .Input("reader_handle: resource")
                                    .SetIsStateful()
                                    .SetShapeFn(Scalars)));
  for (const char* op : {"TFRecordReaderV2", "FixedLengthRecordReaderV2", "ReaderReadV2",
                         "ReaderReadUpToV2", "ReaderNumRecordsProducedV2",
                         "ReaderNumWorkUnitsCompletedV2", "ReaderResetV2"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

namespace ops {

Output TFRecordReaderV2(const Scope& s, const TFRecordReaderAttrs& a, std::source_location loc) {
  return s.Op("TFRecordReaderV2", loc)
      .Attr("container", a.container)
      .Attr("shared_name", a.shared_name)
      .Attr("compression_type", a.compression_type)
      .Finalize1();
}

Output FixedLengthRecordReaderV2(const Scope& s, const FixedLengthRecordReaderAttrs& a,
                                 std::source_location loc) {
  return s.Op("FixedLengthRecordReaderV2", loc)
      .Attr("header_bytes", a.header_bytes)
      .Attr("record_bytes", a.record_bytes)
      .Attr("footer_bytes", a.footer_bytes)
      .Attr("hop_bytes", a.hop_bytes)
      .Attr("container", a.container)
      .Attr("shared_name", a.shared_name)
      .Attr("encoding", a.encoding)
      .Finalize1();
}

ReaderReadOutputs ReaderReadV2(const Scope& s, Input reader, Input queue,
                               std::source_location loc) {
  std::vector<Output> out = s.Op("ReaderReadV2", loc).Input(reader).Input(queue).FinalizeAll();
  return {out[0], out[1]};
}

ReaderReadOutputs ReaderReadUpToV2(const Scope& s, Input reader, Input queue, Input num_records,
                                   std::source_location loc) {
  std::vector<Output> out =
      s.Op("ReaderReadUpToV2", loc).Input(reader).Input(queue).Input(num_records).FinalizeAll();
  return {out[0], out[1]};
}

Output ReaderNumRecordsProducedV2(const Scope& s, Input reader, std::source_location loc) {
  return s.Op("ReaderNumRecordsProducedV2", loc).Input(reader).Finalize1();
}

Output ReaderNumWorkUnitsCompletedV2(const Scope& s, Input reader, std::source_location loc) {
  return s.Op("ReaderNumWorkUnitsCompletedV2", loc).Input(reader).Finalize1();
}

Node* ReaderResetV2(const Scope& s, Input reader, std::source_location loc) {
  return s.Op("ReaderResetV2", loc).Input(reader).Finalize();
}

}  // namespace ops
}  // namespace sluice
