#include "runtime/transfer_attrs.h"

#include "base/status_macros.h"
#include "runtime/rendezvous.h"

namespace sluice {

absl::Status TransferAttrs::Init(const OpKernelConstruction& ctx) {
  ASSIGN_OR_RETURN(tensor_name_, ctx.GetAttr<std::string>("tensor_name"));
  ASSIGN_OR_RETURN(send_device_, ctx.GetAttr<std::string>("send_device"));
  ASSIGN_OR_RETURN(recv_device_, ctx.GetAttr<std::string>("recv_device"));
  ASSIGN_OR_RETURN(int64_t incarnation, ctx.GetAttr<int64_t>("send_device_incarnation"));
  incarnation_ = static_cast<uint64_t>(incarnation);
  return absl::OkStatus();
}

std::string TransferAttrs::Key(const OpKernelContext& ctx) const {
  return Rendezvous::CreateKey(ctx.step_id(), send_device_, incarnation_, recv_device_,
                               tensor_name_, ctx.frame_iter());
}

}  // namespace sluice
