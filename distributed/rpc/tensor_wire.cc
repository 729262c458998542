#include "distributed/rpc/tensor_wire.h"

#include <cstring>
#include <limits>

#include "absl/base/attributes.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace sluice {

// Tensor bytes are sent as they lie in memory; the wire is little-endian.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "Sluice's wire format assumes a little-endian host");

namespace {

// The errors of the checks below, built out of line: the checks run on
// every tensor received, and the frames of the StrCat calls inline in them
// were most of their cost.
ABSL_ATTRIBUTE_NOINLINE absl::Status BadDtype(int32_t dtype) {
  if (!tensorflow::DataType_IsValid(dtype)) {
    return absl::InvalidArgumentError(absl::StrCat("tensor on the wire has unknown dtype ", dtype));
  }
  return absl::InvalidArgumentError(absl::StrCat("tensor on the wire has dtype ",
                                                 DataTypeName(static_cast<DataType>(dtype)),
                                                 ", which cannot travel"));
}

ABSL_ATTRIBUTE_NOINLINE absl::Status BadShape(absl::Span<const int64_t> dims) {
  if (dims.size() > static_cast<size_t>(TensorShape::kMaxRank)) {
    return absl::InvalidArgumentError(absl::StrCat("tensor on the wire has rank ", dims.size(),
                                                   "; at most ", TensorShape::kMaxRank));
  }
  for (int64_t d : dims) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor on the wire has a negative dimension ", d));
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "tensor on the wire has too many elements: shape ", TensorShape(dims).DebugString()));
}

ABSL_ATTRIBUTE_NOINLINE absl::Status OverTwoGiB(DataType dtype, const TensorShape& shape) {
  return absl::InvalidArgumentError(absl::StrCat("a ", DataTypeName(dtype), " tensor of shape ",
                                                 shape.DebugString(),
                                                 " is over the 2 GiB a message can carry"));
}

}  // namespace

absl::StatusOr<DataType> DataTypeFromWire(int32_t dtype) {
  // DataTypeSize (inline) is nonzero only for known, fixed-size types.
  const DataType t = static_cast<DataType>(dtype);
  if (t == DT_STRING || (!IsRefType(t) && DataTypeSize(t) > 0)) return t;
  return BadDtype(dtype);
}

absl::StatusOr<TensorShape> ShapeFromWire(absl::Span<const int64_t> dims) {
  // num_elements() is -1 for a negative dimension and past kMaxElements.
  if (dims.size() <= static_cast<size_t>(TensorShape::kMaxRank)) {
    TensorShape shape(dims);
    if (shape.num_elements() >= 0) return shape;
  }
  return BadShape(dims);
}

absl::StatusOr<int64_t> WireByteCount(DataType dtype, const TensorShape& shape) {
  if (dtype == DT_STRING) return -1;
  const int64_t n = shape.num_elements();
  const int64_t size = DataTypeSize(dtype);
  if (n > std::numeric_limits<int32_t>::max() / size) return OverTwoGiB(dtype, shape);
  return n * size;
}

std::string EncodeStringElements(const Tensor& tensor) {
  std::string out;
  size_t total = 0;
  for (const std::string& s : tensor.flat<std::string>()) total += 4 + s.size();
  out.reserve(total);
  for (const std::string& s : tensor.flat<std::string>()) {
    const uint32_t len = static_cast<uint32_t>(s.size());
    out.append(reinterpret_cast<const char*>(&len), 4);
    out.append(s);
  }
  return out;
}

absl::Status DecodeStringElements(absl::string_view bytes, Tensor* tensor) {
  size_t pos = 0;
  int64_t i = 0;
  for (std::string& s : tensor->flat<std::string>()) {
    uint32_t len;
    if (bytes.size() - pos < 4) {
      return absl::InvalidArgumentError(absl::StrCat(
          "string tensor on the wire ends at element ", i, " of ", tensor->NumElements()));
    }
    std::memcpy(&len, bytes.data() + pos, 4);
    pos += 4;
    if (bytes.size() - pos < len) {
      return absl::InvalidArgumentError(absl::StrCat(
          "string tensor on the wire: element ", i, " of ", len, " bytes runs past the end"));
    }
    s.assign(bytes.data() + pos, len);
    pos += len;
    ++i;
  }
  if (pos != bytes.size()) {
    return absl::InvalidArgumentError(absl::StrCat("string tensor on the wire has ", bytes.size() - pos,
                                                   " bytes after its ", i, " elements"));
  }
  return absl::OkStatus();
}

absl::Status TensorToWire(const Tensor& tensor, rpc::TensorWire* wire) {
  if (!tensor.IsInitialized()) {
    return absl::InvalidArgumentError("cannot send an uninitialized tensor");
  }
  RETURN_IF_ERROR(DataTypeFromWire(static_cast<int32_t>(tensor.dtype())).status());
  wire->dtype = static_cast<int32_t>(tensor.dtype());
  wire->shape = tensor.shape().dims();
  if (tensor.dtype() == DT_STRING) {
    wire->data = EncodeStringElements(tensor);
  } else {
    ASSIGN_OR_RETURN(int64_t bytes, WireByteCount(tensor.dtype(), tensor.shape()));
    wire->data.assign(static_cast<const char*>(tensor.raw_data()), static_cast<size_t>(bytes));
  }
  wire->__isset.dtype = wire->__isset.shape = wire->__isset.data = true;
  return absl::OkStatus();
}

absl::StatusOr<Tensor> TensorFromWire(const rpc::TensorWire& wire, Allocator* allocator) {
  ASSIGN_OR_RETURN(DataType dtype, DataTypeFromWire(wire.dtype));
  ASSIGN_OR_RETURN(TensorShape shape, ShapeFromWire(wire.shape));
  ASSIGN_OR_RETURN(int64_t bytes, WireByteCount(dtype, shape));
  if (bytes >= 0 && static_cast<int64_t>(wire.data.size()) != bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor on the wire: a ", DataTypeName(dtype), " tensor of shape ", shape.DebugString(),
        " has ", bytes, " bytes, but ", wire.data.size(), " came"));
  }
  // Each string element takes at least its 4-byte length on the wire: a
  // shape that claims more elements than the bytes can hold is refused
  // before any string is constructed.
  if (dtype == DT_STRING && shape.num_elements() > static_cast<int64_t>(wire.data.size() / 4)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor on the wire: a string tensor of shape ", shape.DebugString(), " needs at least ",
        shape.num_elements(), " 4-byte lengths, but ", wire.data.size(), " bytes came"));
  }
  ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(allocator != nullptr ? allocator : DefaultCpuAllocator(),
                                              dtype, shape));
  if (dtype == DT_STRING) {
    RETURN_IF_ERROR(DecodeStringElements(wire.data, &t));
  } else if (bytes > 0) {
    std::memcpy(t.raw_data(), wire.data.data(), static_cast<size_t>(bytes));
  }
  return t;
}

rpc::RpcError ToRpcError(const absl::Status& status) {
  rpc::RpcError e;
  e.code = static_cast<int32_t>(status.ok() ? absl::StatusCode::kUnknown : status.code());
  e.message = std::string(status.message());
  e.__isset.code = e.__isset.message = true;
  return e;
}

absl::Status FromRpcError(const rpc::RpcError& error) {
  absl::StatusCode code = static_cast<absl::StatusCode>(error.code);
  if (error.code <= 0 || error.code > static_cast<int32_t>(absl::StatusCode::kUnauthenticated)) {
    code = absl::StatusCode::kUnknown;
  }
  return absl::Status(code, error.message);
}

}  // namespace sluice
