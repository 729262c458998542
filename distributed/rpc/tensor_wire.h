// Tensors and errors on Sluice's Thrift wire (distributed/rpc/sluice.thrift).
//
//   rpc::TensorWire wire;
//   RETURN_IF_ERROR(TensorToWire(tensor, &wire));          // copies the bytes
//   ASSIGN_OR_RETURN(Tensor back, TensorFromWire(wire));   // validates
//
//   throw ToRpcError(status);                     // in a service handler
//   absl::Status s = FromRpcError(err);           // in a client
//
// A TensorWire holds TensorFlow's dtype value, the dimensions and the raw
// little-endian element bytes. DT_STRING elements travel as, for each
// element, a 4-byte little-endian length and then its bytes.
//
// Thread-safe (pure functions). TensorFromWire allocates from `allocator`
// (the default CPU allocator when null); the result owns its buffer.
#ifndef SLUICE_DISTRIBUTED_RPC_TENSOR_WIRE_H_
#define SLUICE_DISTRIBUTED_RPC_TENSOR_WIRE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "distributed/rpc/gen-cpp/sluice_types.h"
#include "graph/tensor_shape.h"
#include "graph/types.h"
#include "runtime/allocator.h"
#include "runtime/tensor.h"

namespace sluice {

// Fills `wire` with the tensor's dtype, shape and a copy of its bytes.
// InvalidArgument for an uninitialized tensor or a dtype that cannot travel.
absl::Status TensorToWire(const Tensor& tensor, rpc::TensorWire* wire);

// A tensor with the wire's dtype, shape and bytes. InvalidArgument when the
// dtype is unknown or cannot travel, a dimension is negative, or the byte
// count does not match the shape; ResourceExhausted when the allocator refuses.
absl::StatusOr<Tensor> TensorFromWire(const rpc::TensorWire& wire, Allocator* allocator = nullptr);

// Pieces of the checks above, for readers that parse a TensorWire
// incrementally (see recv_tensor_reply.h).
absl::StatusOr<DataType> DataTypeFromWire(int32_t dtype);
absl::StatusOr<TensorShape> ShapeFromWire(absl::Span<const int64_t> dims);
// The byte count a tensor of this dtype and shape has on the wire; for
// DT_STRING, -1 (variable).
absl::StatusOr<int64_t> WireByteCount(DataType dtype, const TensorShape& shape);

// DT_STRING element encoding (length-prefixed elements, see above).
std::string EncodeStringElements(const Tensor& tensor);
absl::Status DecodeStringElements(absl::string_view bytes, Tensor* tensor);

// The code and message of `status` (which must not be OK) as an RpcError.
rpc::RpcError ToRpcError(const absl::Status& status);
// The status an RpcError carries; an unknown or OK code becomes Unknown.
absl::Status FromRpcError(const rpc::RpcError& error);

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_RPC_TENSOR_WIRE_H_
