// ReadFile, WriteFile and MatchingFiles: op definitions, CPU kernels and
// wrappers (ops/io/file_ops.h).
#include "ops/io/file_ops.h"

#include <glob.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/internal/index_tensors.h"
#include "ops/io/file_write_policy.h"
#include "runtime/atomic_file.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

absl::StatusOr<const std::string*> ScalarString(const Tensor& t, const char* what) {
  return internal::ScalarOf<std::string>(t, what);
}

class ReadFileOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(const std::string* path, ScalarString(ctx->input(0), "filename"));
    ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(*path));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    out->scalar<std::string>() = std::move(bytes);
    return absl::OkStatus();
  }
};

class WriteFileOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(const std::string* path, ScalarString(ctx->input(0), "filename"));
    ASSIGN_OR_RETURN(const std::string* contents, ScalarString(ctx->input(1), "contents"));
    RETURN_IF_ERROR(CheckGraphFileWrite(*path));
    const size_t slash = path->rfind('/');
    if (slash != std::string::npos && slash > 0) {
      RETURN_IF_ERROR(CreateDirectories(path->substr(0, slash)));
    }
    return WriteFileAtomically(*path, *contents);
  }
};

// The paths matching one pattern, as glob(3) finds them.
absl::Status Glob(const std::string& pattern, std::vector<std::string>* out) {
  glob_t g{};
  const int rc = glob(pattern.c_str(), GLOB_PERIOD | GLOB_NOSORT, nullptr, &g);
  if (rc == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) out->emplace_back(g.gl_pathv[i]);
  }
  globfree(&g);
  if (rc == GLOB_NOSPACE) {
    return absl::ResourceExhaustedError(absl::StrCat("out of memory matching '", pattern, "'"));
  }
  return absl::OkStatus();  // GLOB_NOMATCH, and unreadable directories, match nothing
}

class MatchingFilesOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& patterns = ctx->input(0);
    if (patterns.dims() > 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input pattern tensor must be scalar or vector, but had shape: ",
                       patterns.shape().DebugString()));
    }
    std::vector<std::string> paths;
    for (const std::string& p : patterns.flat<std::string>()) RETURN_IF_ERROR(Glob(p, &paths));
    std::sort(paths.begin(), paths.end());
    ASSIGN_OR_RETURN(Tensor * out,
                     ctx->allocate_output(0, TensorShape({static_cast<int64_t>(paths.size())})));
    std::move(paths.begin(), paths.end(), out->data<std::string>());
    return absl::OkStatus();
  }
};

absl::Status ScalarOut(InferenceContext* c) {
  c->set_output(0, TensorShape());
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterFileOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ReadFile")
                                    .Input("filename: string")
                                    .Output("contents: string")
                                    .SetShapeFn([](InferenceContext* c) {
                                      RETURN_IF_ERROR(c->WithRank(0, 0));
                                      return ScalarOut(c);
                                    })));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("WriteFile")
                                    .Input("filename: string")
                                    .Input("contents: string")
                                    .SetIsStateful()
                                    .SetShapeFn([](InferenceContext* c) {
                                      RETURN_IF_ERROR(c->WithRank(0, 0));
                                      return c->WithRank(1, 0);
                                    })));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("MatchingFiles")
                                    .Input("pattern: string")
                                    .Output("filenames: string")
                                    .SetShapeFn([](InferenceContext* c) {
                                      c->set_output(0, TensorShape({-1}));
                                      return absl::OkStatus();
                                    })));
  for (const char* op : {"ReadFile", "WriteFile", "MatchingFiles"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

void RegisterFileKernels(KernelRegistry* k) {
  k->Register<ReadFileOp>(KernelDef("ReadFile", kDeviceTypeCpu));
  k->Register<WriteFileOp>(KernelDef("WriteFile", kDeviceTypeCpu));
  k->Register<MatchingFilesOp>(KernelDef("MatchingFiles", kDeviceTypeCpu));
}

namespace ops {

Output ReadFile(const Scope& s, Input filename, std::source_location loc) {
  return s.Op("ReadFile", loc).Input(filename).Finalize1();
}

Node* WriteFile(const Scope& s, Input filename, Input contents, std::source_location loc) {
  return s.Op("WriteFile", loc).Input(filename).Input(contents).Finalize();
}

Output MatchingFiles(const Scope& s, Input pattern, std::source_location loc) {
  return s.Op("MatchingFiles", loc).Input(pattern).Finalize1();
}

}  // namespace ops
}  // namespace sluice
