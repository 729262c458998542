// PrintV2 and Print: op definitions (Print's gradient passes through), CPU
// kernels and wrappers (ops/io/print_ops.h).
#include "ops/io/print_ops.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "graph/attr_value.h"
#include "graph/shape_inference.h"
#include "ops/io/file_write_policy.h"
#include "ops/strings/internal/tensor_format.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

constexpr char kFilePrefix[] = "file://";
constexpr const char* kStreams[] = {"stdout", "stderr", "log(info)", "log(warning)",
                                    "log(error)"};

// Appends `text` to the regular file at `path` in one write, creating it
// 0600; a link at the path is refused (O_NOFOLLOW).
absl::Status AppendToFile(const std::string& path, const std::string& text) {
  RETURN_IF_ERROR(CheckGraphFileWrite(path));
  const int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int e = errno;
    return absl::ErrnoToStatus(e, absl::StrCat("PrintV2: cannot open ", path));
  }
  struct stat st;
  absl::Status status;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    status = absl::FailedPreconditionError(
        absl::StrCat("PrintV2: ", path, " is not a regular file"));
  } else {
    size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = write(fd, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        status = absl::ErrnoToStatus(errno, absl::StrCat("PrintV2: writing ", path));
        break;
      }
      done += static_cast<size_t>(n);
    }
  }
  close(fd);
  return status;
}

class PrintV2Op : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(stream_, ctx.GetAttr<std::string>("output_stream"));
    ASSIGN_OR_RETURN(end_, ctx.GetAttr<std::string>("end"));
    if (absl::StartsWith(stream_, kFilePrefix)) {
      path_ = stream_.substr(sizeof(kFilePrefix) - 1);
      if (path_.empty()) return absl::InvalidArgumentError("PrintV2: file:// names no file");
      return absl::OkStatus();
    }
    for (const char* s : kStreams) {
      if (stream_ == s) return absl::OkStatus();
    }
    std::string error = absl::StrCat("Unknown output stream: ", stream_, ", Valid streams are:");
    for (const char* s : kStreams) absl::StrAppend(&error, " ", s);
    absl::StrAppend(&error, " file://PATH");
    return absl::InvalidArgumentError(error);
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    if (input.dims() != 0) {
      return absl::InvalidArgumentError(absl::StrCat("Input is expected to be scalar, but got ",
                                                     input.shape().DebugString()));
    }
    const std::string line = absl::StrCat(input.scalar<std::string>(), end_);
    if (!path_.empty()) return AppendToFile(path_, line);
    if (stream_ == "stdout") {
      std::cout << line << std::flush;
    } else if (stream_ == "stderr") {
      std::cerr << line << std::flush;
    } else {
      // log(info) -> "INFO", ...: the level, upper case, before the line.
      std::string level = stream_.substr(4, stream_.size() - 5);
      for (char& c : level) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      std::cerr << absl::StrCat(level, " ", ctx->node().name(), ": ", line) << std::flush;
    }
    return absl::OkStatus();
  }

 private:
  std::string stream_, end_, path_;
};

class PrintOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(message_, ctx.GetAttr<std::string>("message"));
    ASSIGN_OR_RETURN(first_n_, ctx.GetAttr<int64_t>("first_n"));
    ASSIGN_OR_RETURN(summarize_, ctx.GetAttr<int64_t>("summarize"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    ctx->set_output(0, ctx->input(0));
    if (first_n_ >= 0) {
      absl::MutexLock lock(&mu_);
      if (printed_ >= first_n_) return absl::OkStatus();
      ++printed_;
    }
    std::string line = message_;
    for (int i = 1; i < ctx->num_inputs(); ++i) {
      absl::StrAppend(&line, "[", FormatTensorLegacy(ctx->input(i), summarize_), "]");
    }
    line.push_back('\n');
    std::cerr << line << std::flush;
    return absl::OkStatus();
  }

 private:
  std::string message_;
  int64_t first_n_ = -1, summarize_ = 3;
  absl::Mutex mu_;
  int64_t printed_ ABSL_GUARDED_BY(mu_) = 0;
};

// Seconds since the epoch, microsecond resolution (tf.timestamp).
class TimestampOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    out->data<double>()[0] = absl::ToUnixMicros(absl::Now()) / 1e6;
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

}  // namespace

absl::Status RegisterPrintOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Timestamp")
                                    .Output("ts: float64")
                                    .SetIsStateful()
                                    .SetShapeFn([](InferenceContext* c) {
                                      c->set_output(0, TensorShape());
                                      return absl::OkStatus();
                                    })));
  RETURN_IF_ERROR(ops->SetNoGradient("Timestamp"));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("PrintV2")
                                    .Input("input: string")
                                    .Attr("output_stream: string = 'stderr'")
                                    .Attr("end: string")
                                    .SetAttrDefault("end", MakeAttr("\n"))
                                    .SetIsStateful()
                                    .SetShapeFn([](InferenceContext* c) {
                                      return c->WithRank(0, 0);
                                    })));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Print")
                                    .Input("input: T")
                                    .Input("data: U")
                                    .Output("output: T")
                                    .Attr("T: type")
                                    .Attr("U: list(type) >= 0")
                                    .Attr("message: string = ''")
                                    .Attr("first_n: int = -1")
                                    .Attr("summarize: int = 3")
                                    .SetIsStateful()
                                    .SetShapeFn([](InferenceContext* c) {
                                      c->set_output(0, c->input(0));
                                      return absl::OkStatus();
                                    })));
  RETURN_IF_ERROR(ops->SetNoGradient("PrintV2"));
  return ops->SetGradient("Print", [](const Scope&, const Node& node,
                                      absl::Span<const Output> dy) {
    std::vector<Output> grads(node.num_inputs());
    grads[0] = dy[0];
    return absl::StatusOr<std::vector<Output>>(std::move(grads));
  });
}

void RegisterPrintKernels(KernelRegistry* k) {
  k->Register<PrintV2Op>(KernelDef("PrintV2", kDeviceTypeCpu));
  k->Register<PrintOp>(KernelDef("Print", kDeviceTypeCpu));
  k->Register<TimestampOp>(KernelDef("Timestamp", kDeviceTypeCpu));
}

namespace ops {

Output Timestamp(const Scope& s, std::source_location loc) { return s.Op("Timestamp", loc).Finalize1(); }

Node* PrintV2(const Scope& s, Input input, const PrintV2Attrs& a, std::source_location loc) {
  return s.Op("PrintV2", loc)
      .Input(input)
      .Attr("output_stream", a.output_stream)
      .Attr("end", a.end)
      .Finalize();
}

Output Print(const Scope& s, Input input, absl::Span<const Input> data, const PrintAttrs& a,
             std::source_location loc) {
  return s.Op("Print", loc)
      .Input(input)
      .InputList(data)
      .Attr("message", a.message)
      .Attr("first_n", a.first_n)
      .Attr("summarize", a.summarize)
      .Finalize1();
}

}  // namespace ops
}  // namespace sluice
