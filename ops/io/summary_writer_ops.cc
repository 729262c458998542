// TF2 summary writer ops: definitions, CPU kernels and wrappers
// (ops/io/summary_writer_ops.h).
#include "ops/io/summary_writer_ops.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/proto/event.pb.h"
#include "graph/proto/graph.pb.h"
#include "graph/shape_inference.h"
#include "ops/io/internal/summary_file_writer.h"
#include "ops/internal/index_tensors.h"
#include "ops/io/internal/summary_values.h"
#include "runtime/kernel.h"
#include "runtime/resource_handle.h"

namespace sluice {
namespace {

using ::tensorflow::Summary;

constexpr char kWriter[] = "summary writer";
constexpr char kCreateHint[] = "run its CreateSummaryFileWriter first";

absl::StatusOr<SummaryFileWriter*> WriterInput(OpKernelContext* ctx) {
  return LookupResourceInput<SummaryFileWriter>(ctx, 0, kWriter, kCreateHint);
}

// Input `i` as a scalar of T ("step must be a scalar, got shape [2]").
template <typename T>
absl::StatusOr<const T*> Scalar(OpKernelContext* ctx, int i, const char* what) {
  return internal::ScalarOf<T>(ctx->input(i), what);
}

class SummaryWriterOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(container_, ctx.GetAttr<std::string>("container"));
    ASSIGN_OR_RETURN(name_, ctx.GetAttr<std::string>("shared_name"));
    if (name_.empty()) name_ = absl::StrCat("_summary_writer_", ctx.node().name());
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    RETURN_IF_ERROR(ctx->resource_manager()
                        ->LookupOrCreate<SummaryFileWriter>(
                            container_, name_,
                            [this]() -> absl::StatusOr<std::unique_ptr<SummaryFileWriter>> {
                              return std::make_unique<SummaryFileWriter>(name_);
                            })
                        .status());
    ASSIGN_OR_RETURN(Tensor * handle, ctx->allocate_output(0, TensorShape()));
    handle->scalar<std::string>() = MakeResourceHandle(container_, name_);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  std::string container_, name_;
};

class CreateSummaryFileWriterOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(SummaryFileWriter * w, WriterInput(ctx));
    SummaryFileWriter::Options o;
    ASSIGN_OR_RETURN(const std::string* logdir, Scalar<std::string>(ctx, 1, "logdir"));
    ASSIGN_OR_RETURN(const int32_t* max_queue, Scalar<int32_t>(ctx, 2, "max_queue"));
    ASSIGN_OR_RETURN(const int32_t* flush_millis, Scalar<int32_t>(ctx, 3, "flush_millis"));
    ASSIGN_OR_RETURN(const std::string* suffix, Scalar<std::string>(ctx, 4, "filename_suffix"));
    o.logdir = *logdir;
    o.max_queue = *max_queue;
    o.flush_millis = *flush_millis;
    o.filename_suffix = *suffix;
    return w->Open(o);
  }
};

// The ops that write one Summary at a step: inputs (writer, step, tag, ...).
class WriteTaggedSummaryOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(SummaryFileWriter * w, WriterInput(ctx));
    ASSIGN_OR_RETURN(const int64_t* step, Scalar<int64_t>(ctx, 1, "step"));
    Summary s;
    RETURN_IF_ERROR(Fill(ctx, &s));
    return w->WriteSummary(*step, std::move(s));
  }

 protected:
  virtual absl::Status Fill(OpKernelContext* ctx, Summary* s) = 0;
};

// WriteSummary(writer, step, tensor, tag, summary_metadata).
class WriteSummaryOp : public WriteTaggedSummaryOp {
  absl::Status Fill(OpKernelContext* ctx, Summary* s) override {
    ASSIGN_OR_RETURN(const std::string* tag, Scalar<std::string>(ctx, 3, "tag"));
    ASSIGN_OR_RETURN(const std::string* metadata, Scalar<std::string>(ctx, 4, "summary_metadata"));
    return summary::AddTensor(ctx->input(2), *tag, *metadata, s);
  }
};

class WriteScalarSummaryOp : public WriteTaggedSummaryOp {
  absl::Status Fill(OpKernelContext* ctx, Summary* s) override {
    ASSIGN_OR_RETURN(const std::string* tag, Scalar<std::string>(ctx, 2, "tag"));
    return summary::AddScalar(ctx->input(3), *tag, s);
  }
};

class WriteHistogramSummaryOp : public WriteTaggedSummaryOp {
  absl::Status Fill(OpKernelContext* ctx, Summary* s) override {
    ASSIGN_OR_RETURN(const std::string* tag, Scalar<std::string>(ctx, 2, "tag"));
    return summary::AddHistogram(ctx->input(3), *tag, s);
  }
};

class WriteImageSummaryOp : public WriteTaggedSummaryOp {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(max_images_, ctx.GetAttr<int64_t>("max_images"));
    return absl::OkStatus();
  }

 private:
  absl::Status Fill(OpKernelContext* ctx, Summary* s) override {
    ASSIGN_OR_RETURN(const std::string* tag, Scalar<std::string>(ctx, 2, "tag"));
    const Tensor& bad_color = ctx->input(4);
    if (bad_color.dims() != 1) {
      return absl::InvalidArgumentError(absl::StrCat("bad_color must be a vector, got shape ",
                                                     bad_color.shape().DebugString()));
    }
    return summary::AddImages(ctx->input(3), *tag, max_images_, bad_color, s);
  }
  int64_t max_images_ = 3;
};

class WriteAudioSummaryOp : public WriteTaggedSummaryOp {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(max_outputs_, ctx.GetAttr<int64_t>("max_outputs"));
    return absl::OkStatus();
  }

 private:
  absl::Status Fill(OpKernelContext* ctx, Summary* s) override {
    ASSIGN_OR_RETURN(const std::string* tag, Scalar<std::string>(ctx, 2, "tag"));
    ASSIGN_OR_RETURN(const float* rate, Scalar<float>(ctx, 4, "sample_rate"));
    return summary::AddAudio(ctx->input(3), *tag, max_outputs_, *rate, s);
  }
  int64_t max_outputs_ = 3;
};

class WriteRawProtoSummaryOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(SummaryFileWriter * w, WriterInput(ctx));
    ASSIGN_OR_RETURN(const int64_t* step, Scalar<int64_t>(ctx, 1, "step"));
    absl::Span<const std::string> protos = ctx->input(2).flat<std::string>();
    for (size_t i = 0; i < protos.size(); ++i) {
      Summary s;
      if (!s.ParseFromString(protos[i])) {
        return absl::DataLossError(
            absl::StrCat("Bad tf.Summary binary proto tensor string at index ", i));
      }
      RETURN_IF_ERROR(w->WriteSummary(*step, std::move(s)));
    }
    return absl::OkStatus();
  }
};

class WriteGraphSummaryOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(SummaryFileWriter * w, WriterInput(ctx));
    ASSIGN_OR_RETURN(const int64_t* step, Scalar<int64_t>(ctx, 1, "step"));
    ASSIGN_OR_RETURN(const std::string* graph, Scalar<std::string>(ctx, 2, "tensor"));
    ::tensorflow::GraphDef check;
    if (!check.ParseFromString(*graph)) {
      return absl::DataLossError("Bad tf.GraphDef binary proto tensor string");
    }
    return w->WriteGraph(*step, *graph);
  }
};

class ImportEventOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(SummaryFileWriter * w, WriterInput(ctx));
    ASSIGN_OR_RETURN(const std::string* bytes, Scalar<std::string>(ctx, 1, "event"));
    ::tensorflow::Event event;
    if (!event.ParseFromString(*bytes)) {
      return absl::DataLossError("Bad tf.Event binary proto tensor string");
    }
    return w->WriteEvent(std::move(event));
  }
};

class FlushSummaryWriterOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(SummaryFileWriter * w, WriterInput(ctx));
    return w->Flush();
  }
};

class CloseSummaryWriterOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(SummaryFileWriter * w, WriterInput(ctx));
    return w->Close();
  }
};

absl::Status NoOutputs(InferenceContext*) { return absl::OkStatus(); }

// TensorFlow's realnumbertypes (and bool), in its order.
constexpr char kRealTypes[] =
    "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, "
    "uint64}";
constexpr char kRealOrBoolTypes[] =
    "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, "
    "uint64, bool} = float";

}  // namespace

absl::Status RegisterSummaryWriterOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("SummaryWriter")
                                    .Output("writer: resource")
                                    .Attr("shared_name: string = ''")
                                    .Attr("container: string = ''")
                                    .SetIsStateful()
                                    .SetShapeFn([](InferenceContext* c) {
                                      c->set_output(0, TensorShape());
                                      return absl::OkStatus();
                                    })));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("CreateSummaryFileWriter")
                                    .Input("writer: resource")
                                    .Input("logdir: string")
                                    .Input("max_queue: int32")
                                    .Input("flush_millis: int32")
                                    .Input("filename_suffix: string")
                                    .SetIsStateful()
                                    .SetShapeFn(NoOutputs)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("WriteSummary")
                                    .Input("writer: resource")
                                    .Input("step: int64")
                                    .Input("tensor: T")
                                    .Input("tag: string")
                                    .Input("summary_metadata: string")
                                    .Attr("T: type")
                                    .SetIsStateful()
                                    .SetShapeFn(NoOutputs)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("WriteRawProtoSummary")
                                    .Input("writer: resource")
                                    .Input("step: int64")
                                    .Input("tensor: string")
                                    .SetIsStateful()
                                    .SetShapeFn(NoOutputs)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("WriteScalarSummary")
                                    .Input("writer: resource")
                                    .Input("step: int64")
                                    .Input("tag: string")
                                    .Input("value: T")
                                    .Attr(kRealTypes)
                                    .SetIsStateful()
                                    .SetShapeFn(NoOutputs)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("WriteHistogramSummary")
                                    .Input("writer: resource")
                                    .Input("step: int64")
                                    .Input("tag: string")
                                    .Input("values: T")
                                    .Attr(kRealOrBoolTypes)
                                    .SetIsStateful()
                                    .SetShapeFn(NoOutputs)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("WriteImageSummary")
                                    .Input("writer: resource")
                                    .Input("step: int64")
                                    .Input("tag: string")
                                    .Input("tensor: T")
                                    .Input("bad_color: uint8")
                                    .Attr("max_images: int >= 1 = 3")
                                    .Attr("T: {uint8, double, float, half} = float")
                                    .SetIsStateful()
                                    .SetShapeFn(NoOutputs)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("WriteAudioSummary")
                                    .Input("writer: resource")
                                    .Input("step: int64")
                                    .Input("tag: string")
                                    .Input("tensor: float")
                                    .Input("sample_rate: float")
                                    .Attr("max_outputs: int >= 1 = 3")
                                    .SetIsStateful()
                                    .SetShapeFn(NoOutputs)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("WriteGraphSummary")
                                    .Input("writer: resource")
                                    .Input("step: int64")
                                    .Input("tensor: string")
                                    .SetIsStateful()
                                    .SetShapeFn(NoOutputs)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ImportEvent")
                                    .Input("writer: resource")
                                    .Input("event: string")
                                    .SetIsStateful()
                                    .SetShapeFn(NoOutputs)));
  for (const char* op : {"FlushSummaryWriter", "CloseSummaryWriter"}) {
    RETURN_IF_ERROR(ops->Register(
        OpDefBuilder(op).Input("writer: resource").SetIsStateful().SetShapeFn(NoOutputs)));
  }
  for (const char* op :
       {"SummaryWriter", "CreateSummaryFileWriter", "WriteSummary", "WriteRawProtoSummary",
        "WriteScalarSummary", "WriteHistogramSummary", "WriteImageSummary", "WriteAudioSummary",
        "WriteGraphSummary", "ImportEvent", "FlushSummaryWriter", "CloseSummaryWriter"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

void RegisterSummaryWriterKernels(KernelRegistry* k) {
  auto cpu = [](const char* op) { return KernelDef(op, kDeviceTypeCpu); };
  k->Register<SummaryWriterOp>(cpu("SummaryWriter"));
  k->Register<CreateSummaryFileWriterOp>(cpu("CreateSummaryFileWriter"));
  k->Register<WriteSummaryOp>(cpu("WriteSummary"));
  k->Register<WriteRawProtoSummaryOp>(cpu("WriteRawProtoSummary"));
  k->Register<WriteScalarSummaryOp>(cpu("WriteScalarSummary"));
  k->Register<WriteHistogramSummaryOp>(cpu("WriteHistogramSummary"));
  k->Register<WriteImageSummaryOp>(cpu("WriteImageSummary"));
  k->Register<WriteAudioSummaryOp>(cpu("WriteAudioSummary"));
  k->Register<WriteGraphSummaryOp>(cpu("WriteGraphSummary"));
  k->Register<ImportEventOp>(cpu("ImportEvent"));
  k->Register<FlushSummaryWriterOp>(cpu("FlushSummaryWriter"));
  k->Register<CloseSummaryWriterOp>(cpu("CloseSummaryWriter"));
}

namespace ops {

Output SummaryWriter(const Scope& s, const std::string& shared_name, std::source_location loc) {
  return s.Op("SummaryWriter", loc).Attr("shared_name", shared_name).Finalize1();
}

Node* CreateSummaryFileWriter(const Scope& s, Input writer, Input logdir, Input max_queue,
                              Input flush_millis, Input filename_suffix,
                              std::source_location loc) {
  return s.Op("CreateSummaryFileWriter", loc)
      .Input(writer)
      .Input(logdir)
      .Input(max_queue)
      .Input(flush_millis)
      .Input(filename_suffix)
      .Finalize();
}

Node* WriteSummary(const Scope& s, Input writer, Input step, Input tensor, Input tag,
                   Input summary_metadata, std::source_location loc) {
  return s.Op("WriteSummary", loc)
      .Input(writer)
      .Input(step)
      .Input(tensor)
      .Input(tag)
      .Input(summary_metadata)
      .Finalize();
}

Node* WriteScalarSummary(const Scope& s, Input writer, Input step, Input tag, Input value,
                         std::source_location loc) {
  return s.Op("WriteScalarSummary", loc).Input(writer).Input(step).Input(tag).Input(value)
      .Finalize();
}

Node* WriteHistogramSummary(const Scope& s, Input writer, Input step, Input tag, Input values,
                            std::source_location loc) {
  return s.Op("WriteHistogramSummary", loc).Input(writer).Input(step).Input(tag).Input(values)
      .Finalize();
}

Node* WriteImageSummary(const Scope& s, Input writer, Input step, Input tag, Input images,
                        Input bad_color, int64_t max_images, std::source_location loc) {
  return s.Op("WriteImageSummary", loc)
      .Input(writer)
      .Input(step)
      .Input(tag)
      .Input(images)
      .Input(bad_color)
      .Attr("max_images", max_images)
      .Finalize();
}

Node* WriteAudioSummary(const Scope& s, Input writer, Input step, Input tag, Input audio,
                        Input sample_rate, int64_t max_outputs, std::source_location loc) {
  return s.Op("WriteAudioSummary", loc)
      .Input(writer)
      .Input(step)
      .Input(tag)
      .Input(audio)
      .Input(sample_rate)
      .Attr("max_outputs", max_outputs)
      .Finalize();
}

Node* WriteRawProtoSummary(const Scope& s, Input writer, Input step, Input summaries,
                           std::source_location loc) {
  return s.Op("WriteRawProtoSummary", loc).Input(writer).Input(step).Input(summaries).Finalize();
}

Node* WriteGraphSummary(const Scope& s, Input writer, Input step, Input graph_def,
                        std::source_location loc) {
  return s.Op("WriteGraphSummary", loc).Input(writer).Input(step).Input(graph_def).Finalize();
}

Node* ImportEvent(const Scope& s, Input writer, Input event, std::source_location loc) {
  return s.Op("ImportEvent", loc).Input(writer).Input(event).Finalize();
}

Node* FlushSummaryWriter(const Scope& s, Input writer, std::source_location loc) {
  return s.Op("FlushSummaryWriter", loc).Input(writer).Finalize();
}

Node* CloseSummaryWriter(const Scope& s, Input writer, std::source_location loc) {
  return s.Op("CloseSummaryWriter", loc).Input(writer).Finalize();
}

}  // namespace ops
}  // namespace sluice
