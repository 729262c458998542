// Kernels of the iterator ops: handles (IteratorV2, AnonymousIteratorV2/V3,
// OneShotIterator, the string handle ops), MakeIterator, IteratorGetNext
// (asynchronous: the element is made on the iterator's own thread) and
// IteratorGetNextSync, DeleteIterator, SerializeIterator and
// DeserializeIterator. The iterator itself is runtime/data/iterator_resource.h,
// kept in the device's ResourceMgr; a handle is "<container>\x1f<name>".
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "ops/data/captured_function.h"
#include "ops/data/dataset_kernel.h"
#include "ops/data/internal/dataset_kernels.h"
#include "runtime/data/iterator_resource.h"
#include "runtime/resource_handle.h"

namespace sluice {
namespace data {
namespace {

Tensor ResourceHandle(std::string handle) {
  Tensor t(DT_RESOURCE, TensorShape({}));
  t.scalar<std::string>() = std::move(handle);
  return t;
}

absl::StatusOr<IteratorResource*> LookupIterator(ResourceMgr* rm, const std::string& handle,
                                                 const Device& device) {
  ASSIGN_OR_RETURN(ResourceName n, ParseResourceHandle(handle, "iterator"));
  IteratorResource* r = rm->Find<IteratorResource>(n.container, n.name);
  if (r == nullptr) {
    return absl::NotFoundError(absl::StrCat("iterator '", n.name,
                                            "' does not exist on ", device.name(),
                                            " (deleted, or made by another device)"));
  }
  return r;
}

absl::StatusOr<IteratorResource*> IteratorInput(OpKernelContext* ctx, int i) {
  const Tensor& t = ctx->input(i);
  if (t.dtype() != DT_RESOURCE || t.NumElements() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected an iterator's resource handle, got ", t.DebugString(1)));
  }
  return LookupIterator(ctx->resource_manager(), t.flat<std::string>()[0], *ctx->device());
}

IteratorContext::Params ContextParams(OpKernelContext* ctx, FunctionRuntime* fr) {
  IteratorContext::Params p;
  p.allocator = ctx->device()->allocator();
  p.function_runtime = fr;
  return p;
}

// Reads output_types / output_shapes once.
struct Signature {
  DataTypeVector dtypes;
  std::vector<TensorShape> shapes;
  absl::Status Init(const OpKernelConstruction& ctx) {
    ASSIGN_OR_RETURN(dtypes, ctx.GetAttr<std::vector<DataType>>("output_types"));
    ASSIGN_OR_RETURN(shapes, ctx.GetAttr<std::vector<TensorShape>>("output_shapes"));
    return absl::OkStatus();
  }
};

absl::StatusOr<IteratorResource*> CreateIterator(OpKernelContext* ctx, const std::string& container,
                                                 const std::string& name, const Signature& sig,
                                                 FunctionRuntime* fr) {
  ASSIGN_OR_RETURN(IteratorResource * r,
                   ctx->resource_manager()->LookupOrCreate<IteratorResource>(
                       container, name, [&]() -> absl::StatusOr<std::unique_ptr<IteratorResource>> {
                         return std::make_unique<IteratorResource>(name, sig.dtypes, sig.shapes,
                                                                   ContextParams(ctx, fr));
                       }));
  if (r->output_dtypes() != sig.dtypes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "iterator '", name, "' exists with other output_types: ", r->DebugString()));
  }
  return r;
}

// IteratorV2 (and Iterator): the iterator `shared_name` in `container`, or,
// without a shared_name, one private to the node ("_iterator_<node>").
class IteratorHandleOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    RETURN_IF_ERROR(sig_.Init(ctx));
    ASSIGN_OR_RETURN(container_, ctx.GetAttr<std::string>("container"));
    ASSIGN_OR_RETURN(name_, ctx.GetAttr<std::string>("shared_name"));
    if (name_.empty()) name_ = absl::StrCat("_iterator_", ctx.node().name());
    fr_ = ctx.function_runtime();
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    RETURN_IF_ERROR(CreateIterator(ctx, container_, name_, sig_, fr_).status());
    ctx->set_output(0, ResourceHandle(MakeResourceHandle(container_, name_)));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  Signature sig_;
  std::string container_, name_;
  FunctionRuntime* fr_ = nullptr;
};

// An empty variant: AnonymousIteratorV2's deleter output (DeleteIterator
// deletes the iterator; the deleter itself owns nothing).
class IteratorDeleter : public VariantValue {
 public:
  std::string TypeName() const override { return "IteratorDeleter"; }
};

// AnonymousIterator, AnonymousIteratorV2 (kDeleter) and AnonymousIteratorV3:
// a new iterator per run.
template <bool kDeleter>
class AnonymousIteratorOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    RETURN_IF_ERROR(sig_.Init(ctx));
    fr_ = ctx.function_runtime();
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    static std::atomic<int64_t> next{0};
    const std::string name = absl::StrCat("_AnonymousIterator", next.fetch_add(1));
    RETURN_IF_ERROR(CreateIterator(ctx, "", name, sig_, fr_).status());
    ctx->set_output(0, ResourceHandle(MakeResourceHandle("", name)));
    if (kDeleter) {
      Tensor d(::tensorflow::DT_VARIANT, TensorShape({}));
      d.scalar<Variant>() = Variant(std::make_shared<IteratorDeleter>());
      ctx->set_output(1, d);
    }
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  Signature sig_;
  FunctionRuntime* fr_ = nullptr;
};

class DeleteIteratorOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    if (t.dtype() != DT_RESOURCE || t.NumElements() != 1) {
      return absl::InvalidArgumentError("DeleteIterator needs an iterator handle");
    }
    const std::string& h = t.flat<std::string>()[0];
    RETURN_IF_ERROR(LookupIterator(ctx->resource_manager(), h, *ctx->device()).status());
    ASSIGN_OR_RETURN(ResourceName n, ParseResourceHandle(h, "iterator"));
    ctx->resource_manager()->Delete(n.container, n.name);
    return absl::OkStatus();
  }
};

class MakeIteratorOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(std::shared_ptr<const DatasetBase> ds, DatasetInput(ctx, 0, "dataset"));
    ASSIGN_OR_RETURN(IteratorResource * r, IteratorInput(ctx, 1));
    return r->SetIteratorFromDataset(std::move(ds));
  }
};

// The op's outputs from what GetNext gave: its error, the end of the data
// (OutOfRange, as in TensorFlow), or the element's components.
absl::Status SetOutputs(OpKernelContext* ctx, const absl::Status& got, bool end,
                        std::vector<Tensor>& element) {
  if (!got.ok()) return got;
  if (end) return absl::OutOfRangeError("End of sequence");
  if (static_cast<int>(element.size()) != ctx->num_outputs()) {
    return absl::InvalidArgumentError(absl::StrCat("the iterator produced ", element.size(),
                                                   " components, the op expects ",
                                                   ctx->num_outputs()));
  }
  for (int i = 0; i < ctx->num_outputs(); ++i) {
    if (element[i].dtype() != ctx->node().output_type(i)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "component ", i, " is a ", DataTypeName(element[i].dtype()), ", output_types says ",
          DataTypeName(ctx->node().output_type(i))));
    }
    ctx->set_output(i, std::move(element[i]));
  }
  return absl::OkStatus();
}

// An element ready now (prefetched) is taken at once; otherwise it is made
// on the iterator's own thread, never on an executor thread. (Always going
// through that thread cost the Fashion-MNIST workers a thread hop per step:
// 4-5 % of their step time in "input wait" on a busy machine.)
class IteratorGetNextOp : public AsyncOpKernel {
 public:
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    absl::StatusOr<IteratorResource*> r = IteratorInput(ctx, 0);
    if (!r.ok()) {
      done(r.status());
      return;
    }
    IteratorResource* it = *r;
    {
      std::vector<Tensor> element;
      bool end = false;
      absl::Status got;
      if (it->TryGetNext(&element, &end, &got)) {
        done(SetOutputs(ctx, got, end, element));
        return;
      }
    }
    it->background_pool()->Schedule([ctx, it, done = std::move(done)] {
      std::vector<Tensor> element;
      bool end = false;
      const absl::Status got = it->GetNext(&element, &end);
      done(SetOutputs(ctx, got, end, element));
    });
  }
};

class IteratorGetNextSyncOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(IteratorResource * it, IteratorInput(ctx, 0));
    std::vector<Tensor> element;
    bool end = false;
    const absl::Status got = it->GetNext(&element, &end);
    return SetOutputs(ctx, got, end, element);
  }
};

// OneShotIterator: its first run calls dataset_factory for the dataset and
// starts a pass over it; every later run hands out the same iterator.
class OneShotIteratorOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    RETURN_IF_ERROR(sig_.Init(ctx));
    ASSIGN_OR_RETURN(container_, ctx.GetAttr<std::string>("container"));
    ASSIGN_OR_RETURN(name_, ctx.GetAttr<std::string>("shared_name"));
    if (name_.empty()) name_ = absl::StrCat("_one_shot_iterator_", ctx.node().name());
    ASSIGN_OR_RETURN(factory_, FunctionSpec::Instantiate(ctx, "dataset_factory"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    absl::MutexLock l(&mu_);
    if (ctx->resource_manager()->Find<IteratorResource>(container_, name_) == nullptr) {
      CapturedFunction factory(factory_, {});
      std::vector<Tensor> rets;
      RETURN_IF_ERROR(factory.Run({}, &rets));
      if (rets.size() != 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "dataset_factory '", factory_.function, "' returned ", rets.size(),
            " values, expected one dataset"));
      }
      ASSIGN_OR_RETURN(std::shared_ptr<const DatasetBase> ds, DatasetFromTensor(rets[0]));
      ASSIGN_OR_RETURN(IteratorResource * r,
                       CreateIterator(ctx, container_, name_, sig_, factory_.runtime.get()));
      RETURN_IF_ERROR(r->SetIteratorFromDataset(std::move(ds)));
    }
    ctx->set_output(0, ResourceHandle(MakeResourceHandle(container_, name_)));
    return absl::OkStatus();
  }

 private:
  Signature sig_;
  std::string container_, name_;
  FunctionSpec factory_;
  absl::Mutex mu_;  // one factory call per iterator
};

class IteratorToStringHandleOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    RETURN_IF_ERROR(IteratorInput(ctx, 0).status());
    ctx->set_output(0, Tensor::Scalar<std::string>(ctx->input(0).flat<std::string>()[0]));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

class IteratorFromStringHandleOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(dtypes_, ctx.GetAttr<std::vector<DataType>>("output_types"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    if (t.dtype() != DT_STRING || t.NumElements() != 1) {
      return absl::InvalidArgumentError("string_handle must be a string scalar");
    }
    const std::string& h = t.flat<std::string>()[0];
    ASSIGN_OR_RETURN(IteratorResource * r,
                     LookupIterator(ctx->resource_manager(), h, *ctx->device()));
    if (!dtypes_.empty() && dtypes_ != r->output_dtypes()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the string handle names an iterator of other types: ", r->DebugString()));
    }
    ctx->set_output(0, ResourceHandle(h));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  DataTypeVector dtypes_;
};

class SerializeIteratorOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(IteratorResource * r, IteratorInput(ctx, 0));
    ASSIGN_OR_RETURN(IteratorStateMap state, r->Save());
    ctx->set_output(0, IteratorStateTensor(std::move(state)));
    return absl::OkStatus();
  }
};

class DeserializeIteratorOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(IteratorResource * r, IteratorInput(ctx, 0));
    ASSIGN_OR_RETURN(const IteratorStateValue* state, IteratorStateFromTensor(ctx->input(1)));
    return r->Restore(state->values());
  }
};

}  // namespace

namespace internal {
void RegisterIteratorKernels(KernelRegistry* kernels) {
  auto cpu = [](const char* op) { return KernelDef(op, kDeviceTypeCpu); };
  kernels->Register<IteratorHandleOp>(cpu("Iterator"));
  kernels->Register<IteratorHandleOp>(cpu("IteratorV2"));
  kernels->Register<AnonymousIteratorOp<false>>(cpu("AnonymousIterator"));
  kernels->Register<AnonymousIteratorOp<true>>(cpu("AnonymousIteratorV2"));
  kernels->Register<AnonymousIteratorOp<false>>(cpu("AnonymousIteratorV3"));
  kernels->Register<DeleteIteratorOp>(cpu("DeleteIterator"));
  kernels->Register<MakeIteratorOp>(cpu("MakeIterator"));
  kernels->Register<OneShotIteratorOp>(cpu("OneShotIterator"));
  kernels->Register<IteratorGetNextOp>(cpu("IteratorGetNext"));
  kernels->Register<IteratorGetNextSyncOp>(cpu("IteratorGetNextSync"));
  kernels->Register<IteratorToStringHandleOp>(cpu("IteratorToStringHandle"));
  kernels->Register<IteratorFromStringHandleOp>(cpu("IteratorFromStringHandle"));
  kernels->Register<IteratorFromStringHandleOp>(cpu("IteratorFromStringHandleV2"));
  kernels->Register<SerializeIteratorOp>(cpu("SerializeIterator"));
  kernels->Register<DeserializeIteratorOp>(cpu("DeserializeIterator"));
}
}  // namespace internal

}  // namespace data
}  // namespace sluice
