// TransferAttrs: what a _Send or _Recv kernel (CPU or GPU) reads from its
// attrs once, and the rendezvous key of one run of it.
//
//   absl::Status Init(const OpKernelConstruction& ctx) override { return attrs_.Init(ctx); }
//   ... ctx->rendezvous()->Send(attrs_.Key(*ctx), ctx->input(0));
//
// The key names the step and the loop iteration of the run (a transfer
// inside a while loop happens once per iteration). Thread-compatible;
// immutable after Init.
#ifndef SLUICE_RUNTIME_TRANSFER_ATTRS_H_
#define SLUICE_RUNTIME_TRANSFER_ATTRS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "runtime/kernel.h"

namespace sluice {

class TransferAttrs {
 public:
  absl::Status Init(const OpKernelConstruction& ctx);
  std::string Key(const OpKernelContext& ctx) const;
  const std::string& send_device() const { return send_device_; }
  const std::string& recv_device() const { return recv_device_; }

 private:
  std::string tensor_name_;
  std::string send_device_;
  std::string recv_device_;
  uint64_t incarnation_ = 0;
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_TRANSFER_ATTRS_H_
