#include "distributed/rpc/recv_tensor_reply.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <thrift/TApplicationException.h>
#include <thrift/protocol/TProtocolException.h>
#include <thrift/transport/TTransportException.h>

#include "absl/base/attributes.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "distributed/rpc/framed_transport.h"
#include "distributed/rpc/gen-cpp/sluice_types.h"
#include "distributed/rpc/recv_tensor_frames.h"
#include "distributed/rpc/tensor_wire.h"
#include "base/status_macros.h"
#include "runtime/rendezvous.h"

namespace sluice {

using apache::thrift::TApplicationException;
using apache::thrift::protocol::TMessageType;
using apache::thrift::protocol::TProtocol;
using apache::thrift::protocol::TProtocolException;
using apache::thrift::protocol::TType;
using apache::thrift::transport::TTransport;
using apache::thrift::transport::TTransportException;

namespace {

using recv_tensor_field::kResponseIsDead;
using recv_tensor_field::kResponseTensor;
using recv_tensor_field::kResultError;
using recv_tensor_field::kResultSuccess;
using recv_tensor_field::kWireData;
using recv_tensor_field::kWireDtype;
using recv_tensor_field::kWireShape;

template <typename Transport>
void SkipBytes(Transport& in, int64_t n) {
  uint8_t scratch[16 << 10];
  while (n > 0) {
    const uint32_t chunk = static_cast<uint32_t>(std::min<int64_t>(n, sizeof(scratch)));
    in.readAll(scratch, chunk);
    n -= chunk;
  }
}

// A fresh large buffer faults in 4 KiB pages as the socket fills it (64 MiB:
// ~40 ms of faults and zeroing against ~20 ms of transfer). Transparent huge
// pages on its 2 MiB-aligned interior cut the faults 512-fold. A hint:
// errors (memory that is not anonymous, THP disabled) are ignored. Reusing
// buffers (RecvBufferPool) avoids the faults altogether.
constexpr size_t kHugePage = 2 << 20;
constexpr size_t kHugePageHintMin = 8 << 20;
// Below this no transport sends without a copy (a FramedTransport's
// zero_copy_bytes is megabytes): small tensors skip the type check.
constexpr size_t kMinKeptBytes = 64 << 10;

void AdviseHugePages(void* data, size_t bytes) {
  if (bytes < kHugePageHintMin) return;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + kHugePage - 1) & ~(kHugePage - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(kHugePage - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

// Out of line: TensorForData runs for every tensor received.
ABSL_ATTRIBUTE_NOINLINE absl::Status WrongByteCount(DataType dtype, const TensorShape& shape,
                                                    int64_t bytes, int32_t len) {
  return absl::InvalidArgumentError(absl::StrCat("tensor on the wire: a ", DataTypeName(dtype),
                                                 " tensor of shape ", shape.DebugString(), " has ",
                                                 bytes, " bytes, but ", len, " came"));
}

// True when the wire checks below all hold, found in one pass: a fixed-size
// dtype, at most kMaxRank dims, none negative, and their product times the
// size equal to `len`. Every tensor received takes this path.
bool PlainData(int32_t wire_dtype, absl::Span<const int64_t> dims, int32_t len) {
  const DataType dtype = static_cast<DataType>(wire_dtype);
  const int64_t size = IsRefType(dtype) ? 0 : DataTypeSize(dtype);
  if (size == 0 || dims.size() > static_cast<size_t>(TensorShape::kMaxRank)) return false;
  int64_t n = 1;
  for (int64_t d : dims) {
    // n stays within `len` (an int32), so n * size cannot wrap.
    if (d < 0 || __builtin_mul_overflow(n, d, &n) || n > len) return false;
  }
  return n * size == len;
}

// A tensor for `len` bytes of data of this dtype and shape as they came
// (landing's buffer when it fits); not DT_STRING. The data is not read.
absl::StatusOr<Tensor> TensorForData(int32_t wire_dtype, absl::Span<const int64_t> dims,
                                     int32_t len, Allocator* allocator, const Tensor* landing) {
  DataType dtype = static_cast<DataType>(wire_dtype);
  TensorShape shape;
  if (PlainData(wire_dtype, dims, len)) {
    shape = TensorShape(dims);
  } else {  // the checks one by one, to say which fails
    ASSIGN_OR_RETURN(dtype, DataTypeFromWire(wire_dtype));
    ASSIGN_OR_RETURN(shape, ShapeFromWire(dims));
    ASSIGN_OR_RETURN(int64_t bytes, WireByteCount(dtype, shape));
    if (bytes != len) return WrongByteCount(dtype, shape, bytes, len);
  }
  if (landing != nullptr && landing->IsInitialized() && landing->dtype() == dtype &&
      landing->NumElements() == shape.num_elements() && !landing->on_device()) {
    return landing->Reshaped(shape);
  }
  return Tensor::Allocate(allocator != nullptr ? allocator : DefaultCpuAllocator(), dtype,
                          std::move(shape));
}

// The `len` bytes of a `data` field whose dtype and shape came before it,
// straight into a tensor (landing's buffer when it fits). Not DT_STRING.
// `Transport`: TTransport, or FramedTransport for direct calls.
template <typename Transport>
absl::StatusOr<Tensor> ReadDataInto(Transport& in, int32_t wire_dtype,
                                    absl::Span<const int64_t> dims, int32_t len,
                                    Allocator* allocator, const Tensor* landing) {
  absl::StatusOr<Tensor> t = TensorForData(wire_dtype, dims, len, allocator, landing);
  if (!t.ok()) {
    SkipBytes(in, len);  // keeps the connection in step
    return t.status();
  }
  if (len > 0) {
    AdviseHugePages(t->raw_data(), static_cast<size_t>(len));
    in.readAll(static_cast<uint8_t*>(t->raw_data()), static_cast<uint32_t>(len));
  }
  return t;
}

// The tensor's bytes after its head: written by reference (WriteKept) when
// the transport sends them without a copy while `tensor` holds its buffer
// (which also keeps kernels from writing into it in place), else copied or
// referenced until the caller's flush (FramedTransport's write()).
void WriteTensorBytes(FramedTransport& out, const Tensor& tensor, const uint8_t* data,
                      size_t len) {
  if (len == 0) return;
  if (tensor.dtype() != DT_STRING && out.WouldKeep(len)) {
    out.WriteKept(data, static_cast<uint32_t>(len), std::make_shared<const Tensor>(tensor));
  } else {
    out.write(data, static_cast<uint32_t>(len));
  }
}

void WriteTensorBytes(TTransport& out, const Tensor& tensor, const uint8_t* data, size_t len) {
  if (len >= kMinKeptBytes) {
    if (auto* framed = dynamic_cast<FramedTransport*>(&out)) {
      WriteTensorBytes(*framed, tensor, data, len);
      return;
    }
  }
  if (len > 0) out.write(data, static_cast<uint32_t>(len));
}

[[noreturn]] void ThrowTooLarge(size_t len) {
  throw TApplicationException(TApplicationException::INTERNAL_ERROR,
                              absl::StrCat("tensor of ", len, " bytes is over the 2 GiB a message can carry"));
}

absl::StatusOr<Tensor> ReadResponse(TProtocol* in, Allocator* allocator) {
  std::string name;
  TType ftype;
  int16_t fid;
  absl::StatusOr<Tensor> result;
  bool have_tensor = false;
  in->readStructBegin(name);
  while (true) {
    in->readFieldBegin(name, ftype, fid);
    if (ftype == apache::thrift::protocol::T_STOP) break;
    if (fid == kResponseTensor && ftype == apache::thrift::protocol::T_STRUCT) {
      result = ReadTensorWireStruct(in, allocator);
      have_tensor = true;
    } else if (fid == kResponseIsDead && ftype == apache::thrift::protocol::T_BOOL) {
      bool is_dead = false;
      in->readBool(is_dead);
      if (is_dead) {
        result = Tensor();  // dead: runtime/rendezvous.h
        have_tensor = true;
      }
    } else {
      in->skip(ftype);
    }
    in->readFieldEnd();
  }
  in->readStructEnd();
  if (!have_tensor) return absl::InternalError("RecvTensor reply without a tensor");
  return result;
}

}  // namespace

absl::StatusOr<Tensor> ReadTensorWireStruct(TProtocol* in, Allocator* allocator,
                                            const Tensor* landing) {
  std::string name;
  TType ftype;
  int16_t fid;
  int32_t dtype = 0;
  bool have_dtype = false, have_shape = false, have_data = false;
  std::vector<int64_t> dims;
  absl::StatusOr<Tensor> direct;  // set when the data field is read in place
  rpc::TensorWire late;  // data that came before dtype and shape, or strings
  bool late_data = false;
  absl::Status bad;

  in->readStructBegin(name);
  while (true) {
    in->readFieldBegin(name, ftype, fid);
    if (ftype == apache::thrift::protocol::T_STOP) break;
    if (fid == kWireDtype && ftype == apache::thrift::protocol::T_I32) {
      in->readI32(dtype);
      have_dtype = true;
    } else if (fid == kWireShape && ftype == apache::thrift::protocol::T_LIST) {
      TType etype;
      uint32_t size;
      in->readListBegin(etype, size);
      dims.clear();
      if (size > static_cast<uint32_t>(TensorShape::kMaxRank)) {
        bad = absl::InvalidArgumentError(absl::StrCat("tensor on the wire has rank ", size,
                                                      "; at most ", TensorShape::kMaxRank));
      }
      for (uint32_t i = 0; i < size; ++i) {
        if (etype == apache::thrift::protocol::T_I64 && bad.ok()) {
          int64_t d;
          in->readI64(d);
          dims.push_back(d);
        } else {
          in->skip(etype);
          if (bad.ok()) {
            bad = absl::InvalidArgumentError(
                "tensor on the wire has a shape that is not a list of i64");
          }
        }
      }
      in->readListEnd();
      have_shape = bad.ok();
    } else if (fid == kWireData && ftype == apache::thrift::protocol::T_STRING) {
      if (have_dtype && have_shape && dtype != static_cast<int32_t>(DT_STRING)) {
        int32_t len;
        in->readI32(len);
        if (len < 0) throw TProtocolException(TProtocolException::NEGATIVE_SIZE);
        direct = ReadDataInto(*in->getTransport(), dtype, dims, len, allocator, landing);
      } else {
        in->readBinary(late.data);
        late_data = true;
      }
      have_data = true;
    } else {
      in->skip(ftype);
    }
    in->readFieldEnd();
  }
  in->readStructEnd();

  if (!bad.ok()) return bad;
  if (have_data && !late_data) return direct;
  late.dtype = dtype;
  late.shape = std::move(dims);
  if (!have_dtype) return absl::InvalidArgumentError("tensor on the wire has no dtype");
  return TensorFromWire(late, allocator);  // no data field: only an empty tensor fits
}

void WriteTensorWireStruct(TProtocol* out, const Tensor& tensor, std::string* strings) {
  using namespace apache::thrift::protocol;  // NOLINT: T_* type tags
  const uint8_t* data = static_cast<const uint8_t*>(tensor.raw_data());
  size_t len = tensor.TotalBytes();
  if (tensor.dtype() == DT_STRING) {
    *strings = EncodeStringElements(tensor);
    data = reinterpret_cast<const uint8_t*>(strings->data());
    len = strings->size();
  }
  if (len > static_cast<size_t>(INT32_MAX)) ThrowTooLarge(len);
  out->writeStructBegin("TensorWire");
  out->writeFieldBegin("dtype", T_I32, kWireDtype);
  out->writeI32(static_cast<int32_t>(tensor.dtype()));
  out->writeFieldEnd();
  out->writeFieldBegin("shape", T_LIST, kWireShape);
  out->writeListBegin(T_I64, static_cast<uint32_t>(tensor.dims()));
  for (int i = 0; i < tensor.dims(); ++i) out->writeI64(tensor.dim_size(i));
  out->writeListEnd();
  out->writeFieldEnd();
  // writeBinary of the binary protocol: the length, then the bytes.
  out->writeFieldBegin("data", T_STRING, kWireData);
  out->writeI32(static_cast<int32_t>(len));
  WriteTensorBytes(*out->getTransport(), tensor, data, len);
  out->writeFieldEnd();
  out->writeFieldStop();
  out->writeStructEnd();
}

void WriteRecvTensorCall(FramedTransport& out, int64_t step_id, absl::string_view key,
                         int64_t timeout_ms) {
  if (key.size() > static_cast<size_t>(INT32_MAX) - RecvTensorCallBytes(0)) ThrowTooLarge(key.size());
  const size_t n = RecvTensorCallBytes(key.size());
  EncodeRecvTensorCall(RecvTensorCall{/*seqid=*/0, step_id, key, timeout_ms},
                       out.WriteSpace(static_cast<uint32_t>(n)));
  out.writeEnd();
  out.flush();
}

namespace {

// Room for `n` bytes of the frame: in a FramedTransport's own buffer, or
// in `scratch` (written out by Commit) for any other transport.
class Space {
 public:
  static uint8_t* Take(FramedTransport& out, size_t n, std::vector<uint8_t>* /*scratch*/) {
    return out.WriteSpace(static_cast<uint32_t>(n));
  }
  static void Commit(FramedTransport& /*out*/, const std::vector<uint8_t>& /*scratch*/) {}
  static uint8_t* Take(TTransport& /*out*/, size_t n, std::vector<uint8_t>* scratch) {
    scratch->resize(n);
    return scratch->data();
  }
  static void Commit(TTransport& out, const std::vector<uint8_t>& scratch) {
    out.write(scratch.data(), static_cast<uint32_t>(scratch.size()));
  }
};

template <typename Transport>
void WriteReply(Transport& out, int32_t seqid, const Tensor& tensor) {
  // A dead tensor: an empty TensorWire (dtype 0, no dims, no data), as the
  // generated code sends it.
  const bool dead = IsDeadValue(tensor);
  std::string strings;  // DT_STRING elements, alive until the flush
  const uint8_t* data = nullptr;
  size_t len = 0;
  absl::Span<const int64_t> dims;
  if (!dead) {
    data = static_cast<const uint8_t*>(tensor.raw_data());
    len = tensor.TotalBytes();
    if (tensor.dtype() == DT_STRING) {
      strings = EncodeStringElements(tensor);
      data = reinterpret_cast<const uint8_t*>(strings.data());
      len = strings.size();
    }
    if (len > static_cast<size_t>(INT32_MAX)) ThrowTooLarge(len);
    dims = tensor.shape().dims();
    if (dims.size() > static_cast<size_t>(TensorShape::kMaxRank)) {
      throw TApplicationException(TApplicationException::INTERNAL_ERROR,
                                  absl::StrCat("tensor of rank ", dims.size(), "; at most ",
                                               TensorShape::kMaxRank, " travel"));
    }
  }
  std::vector<uint8_t> scratch;
  const size_t head_bytes = RecvTensorReplyHeadBytes(static_cast<int>(dims.size()));
  EncodeRecvTensorReplyHead(seqid, dead ? 0 : static_cast<int32_t>(tensor.dtype()), dims,
                            static_cast<int32_t>(len), Space::Take(out, head_bytes, &scratch));
  Space::Commit(out, scratch);
  WriteTensorBytes(out, tensor, data, len);
  EncodeRecvTensorReplyTail(dead, Space::Take(out, kRecvTensorReplyTailBytes, &scratch));
  Space::Commit(out, scratch);
  out.writeEnd();
  out.flush();
}

}  // namespace

void WriteRecvTensorReply(TTransport& out, int32_t seqid, const Tensor& tensor) {
  WriteReply(out, seqid, tensor);
}

void WriteRecvTensorReply(FramedTransport& out, int32_t seqid, const Tensor& tensor) {
  WriteReply(out, seqid, tensor);
}

namespace {

// The generic reader: any layout Thrift's generated code accepts.
absl::StatusOr<Tensor> ReadReplyThroughProtocol(TProtocol* in, Allocator* allocator) {
  std::string fname;
  TMessageType mtype;
  int32_t seqid;
  in->readMessageBegin(fname, mtype, seqid);
  if (mtype == apache::thrift::protocol::T_EXCEPTION) {
    TApplicationException x;
    x.read(in);
    in->readMessageEnd();
    in->getTransport()->readEnd();
    throw x;
  }
  if (mtype != apache::thrift::protocol::T_REPLY || fname != "RecvTensor") {
    in->skip(apache::thrift::protocol::T_STRUCT);
    in->readMessageEnd();
    in->getTransport()->readEnd();
    throw TApplicationException(TApplicationException::INVALID_MESSAGE_TYPE,
                                absl::StrCat("expected the reply to RecvTensor, got message '", fname,
                                             "' of type ", static_cast<int>(mtype)));
  }
  absl::StatusOr<Tensor> result;
  bool have_result = false, have_error = false;
  rpc::RpcError error;
  std::string name;
  TType ftype;
  int16_t fid;
  in->readStructBegin(name);
  while (true) {
    in->readFieldBegin(name, ftype, fid);
    if (ftype == apache::thrift::protocol::T_STOP) break;
    if (fid == kResultSuccess && ftype == apache::thrift::protocol::T_STRUCT) {
      result = ReadResponse(in, allocator);
      have_result = true;
    } else if (fid == kResultError && ftype == apache::thrift::protocol::T_STRUCT) {
      error.read(in);
      have_error = true;
    } else {
      in->skip(ftype);
    }
    in->readFieldEnd();
  }
  in->readStructEnd();
  in->readMessageEnd();
  in->getTransport()->readEnd();
  if (have_error) throw error;
  if (!have_result) return absl::InternalError("RecvTensor reply with neither a tensor nor an error");
  return result;
}

using HeadDims = absl::InlinedVector<int64_t, 8>;

HeadDims DimsOf(const RecvTensorReplyHead& head) {
  HeadDims dims(static_cast<size_t>(head.rank));
  for (int i = 0; i < head.rank; ++i) dims[static_cast<size_t>(i)] = head.dim(i);
  return dims;
}

// A DT_STRING tensor from its encoded elements.
absl::StatusOr<Tensor> StringTensor(const HeadDims& dims, std::string encoded,
                                    Allocator* allocator) {
  rpc::TensorWire wire;
  wire.dtype = static_cast<int32_t>(DT_STRING);
  wire.shape.assign(dims.begin(), dims.end());
  wire.data = std::move(encoded);
  return TensorFromWire(wire, allocator);
}

// The tensor a hand-parsed head announces, its bytes read from `in`.
absl::StatusOr<Tensor> ReadHeadTensor(FramedTransport& in, const RecvTensorReplyHead& head,
                                      Allocator* allocator) {
  const HeadDims dims = DimsOf(head);
  if (head.dtype != static_cast<int32_t>(DT_STRING)) {
    return ReadDataInto(in, head.dtype, absl::MakeConstSpan(dims), head.data_bytes, allocator,
                        /*landing=*/nullptr);
  }
  std::string encoded(static_cast<size_t>(head.data_bytes), '\0');
  if (head.data_bytes > 0) {
    in.readAll(reinterpret_cast<uint8_t*>(encoded.data()), static_cast<uint32_t>(head.data_bytes));
  }
  return StringTensor(dims, std::move(encoded), allocator);
}

// The tensor of a reply that lies whole in memory, `data` its data bytes.
absl::StatusOr<Tensor> TensorFromBuffered(const RecvTensorReplyHead& head, const uint8_t* data,
                                          Allocator* allocator) {
  const HeadDims dims = DimsOf(head);
  if (head.dtype == static_cast<int32_t>(DT_STRING)) {
    return StringTensor(
        dims, std::string(reinterpret_cast<const char*>(data), static_cast<size_t>(head.data_bytes)),
        allocator);
  }
  absl::StatusOr<Tensor> t =
      TensorForData(head.dtype, absl::MakeConstSpan(dims), head.data_bytes, allocator, nullptr);
  if (t.ok() && head.data_bytes > 0) {
    std::memcpy(t->raw_data(), data, static_cast<size_t>(head.data_bytes));
  }
  return t;
}

// Reads the rest of a reply after its tensor's data: the canonical tail,
// or, when a peer laid it out otherwise (fields a newer peer added, say),
// the rest of TensorWire, RecvTensorResponse and the result through the
// protocol, as the generic reader would take them. Returns is_dead.
bool ReadTail(FramedTransport& in, TProtocol* protocol) {
  if (in.frame_remaining() == 0) {
    throw TTransportException(TTransportException::CORRUPTED_DATA,
                              "the RecvTensor reply's frame ends inside its structs");
  }
  size_t len;
  const uint8_t* tail = in.PeekFrame(kRecvTensorReplyTailBytes, &len);
  bool dead = false;
  if (ParseRecvTensorReplyTail(absl::MakeConstSpan(tail, len), &dead)) {
    in.consume(static_cast<uint32_t>(kRecvTensorReplyTailBytes));
    return dead;
  }
  std::string name;
  TType ftype;
  int16_t fid;
  bool have_error = false;
  rpc::RpcError error;
  for (int level = 0; level < 3; ++level) {  // TensorWire, RecvTensorResponse, result
    while (true) {
      protocol->readFieldBegin(name, ftype, fid);
      if (ftype == apache::thrift::protocol::T_STOP) break;
      if (level == 1 && fid == kResponseIsDead && ftype == apache::thrift::protocol::T_BOOL) {
        protocol->readBool(dead);
      } else if (level == 2 && fid == kResultError && ftype == apache::thrift::protocol::T_STRUCT) {
        error.read(protocol);
        have_error = true;
      } else {
        protocol->skip(ftype);
      }
      protocol->readFieldEnd();
    }
    protocol->readStructEnd();
  }
  if (have_error) {
    in.readEnd();
    throw error;
  }
  return dead;
}

}  // namespace

absl::StatusOr<Tensor> ReadRecvTensorReply(FramedTransport& in, TProtocol* protocol,
                                           Allocator* allocator) {
  size_t len;
  const uint8_t* prefix = in.PeekFrame(kMaxRecvTensorReplyHeadBytes, &len);
  if (prefix == nullptr) {
    throw TTransportException(TTransportException::END_OF_FILE, "connection closed before the reply");
  }
  RecvTensorReplyHead head;
  const size_t head_bytes = ParseRecvTensorReplyHead(absl::MakeConstSpan(prefix, len), &head);
  if (head_bytes == 0) return ReadReplyThroughProtocol(protocol, allocator);
  // A small reply lies whole in the buffer: one pass over it.
  const size_t reply_bytes =
      head_bytes + static_cast<size_t>(head.data_bytes) + kRecvTensorReplyTailBytes;
  bool dead = false;
  if (reply_bytes == len && len == in.frame_remaining() &&
      ParseRecvTensorReplyTail(
          absl::MakeConstSpan(prefix + head_bytes + head.data_bytes, kRecvTensorReplyTailBytes),
          &dead)) {
    absl::StatusOr<Tensor> result =
        dead ? Tensor() : TensorFromBuffered(head, prefix + head_bytes, allocator);
    in.ConsumeFrame();
    return result;
  }
  in.consume(static_cast<uint32_t>(head_bytes));
  if (static_cast<uint64_t>(head.data_bytes) >= in.frame_remaining()) {
    // No room for the data and the tail: refused before a tensor is sized
    // for it.
    throw TTransportException(TTransportException::CORRUPTED_DATA,
                              absl::StrCat("a RecvTensor reply announces ", head.data_bytes,
                                           " bytes of data in a frame with ",
                                           in.frame_remaining(), " left"));
  }
  // A dead tensor comes as an empty TensorWire of dtype 0 and is_dead: its
  // check waits for the tail.
  const bool maybe_dead = head.dtype == 0 && head.rank == 0 && head.data_bytes == 0;
  absl::StatusOr<Tensor> result = maybe_dead ? Tensor() : ReadHeadTensor(in, head, allocator);
  dead = ReadTail(in, protocol);
  in.readEnd();
  if (dead) return Tensor();  // runtime/rendezvous.h
  if (maybe_dead) return ReadHeadTensor(in, head, allocator);  // reads no bytes: the error
  return result;
}

}  // namespace sluice
