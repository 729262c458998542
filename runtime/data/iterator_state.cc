#include "runtime/data/iterator_state.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/proto/tensor.pb.h"
#include "runtime/atomic_file.h"

namespace sluice {
namespace data {
namespace {

constexpr absl::string_view kMagic = "SLUICEIT1";

void PutLength(std::string* out, uint64_t n) {
  while (n >= 0x80) {
    out->push_back(static_cast<char>((n & 0x7f) | 0x80));
    n >>= 7;
  }
  out->push_back(static_cast<char>(n));
}

bool GetLength(absl::string_view* in, uint64_t* n) {
  *n = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (in->empty()) return false;
    const uint8_t b = static_cast<uint8_t>(in->front());
    in->remove_prefix(1);
    *n |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

bool GetBytes(absl::string_view* in, absl::string_view* bytes) {
  uint64_t n = 0;
  if (!GetLength(in, &n) || n > in->size()) return false;
  *bytes = in->substr(0, n);
  in->remove_prefix(n);
  return true;
}

absl::StatusOr<const Tensor*> Find(const IteratorStateMap& values, absl::string_view key) {
  auto it = values.find(key);
  if (it == values.end()) {
    return absl::NotFoundError(absl::StrCat("iterator state has no key '", key,
                                            "' (was it saved from another input pipeline?)"));
  }
  return &it->second;
}

}  // namespace

void IteratorStateWriter::WriteInt(absl::string_view key, int64_t value) {
  values_.insert_or_assign(std::string(key), Tensor::Scalar<int64_t>(value));
}

void IteratorStateWriter::WriteString(absl::string_view key, absl::string_view value) {
  values_.insert_or_assign(std::string(key), Tensor::Scalar<std::string>(std::string(value)));
}

void IteratorStateWriter::WriteTensor(absl::string_view key, Tensor value) {
  values_.insert_or_assign(std::string(key), std::move(value));
}

absl::StatusOr<int64_t> IteratorStateReader::ReadInt(absl::string_view key) const {
  absl::StatusOr<const Tensor*> t = Find(values_, key);
  if (!t.ok()) return t.status();
  if ((*t)->dtype() != DT_INT64 || (*t)->NumElements() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("iterator state key '", key, "' holds ", (*t)->DebugString(1),
                     ", not an int64 scalar"));
  }
  return (*t)->scalar<int64_t>();
}

absl::StatusOr<std::string> IteratorStateReader::ReadString(absl::string_view key) const {
  absl::StatusOr<const Tensor*> t = Find(values_, key);
  if (!t.ok()) return t.status();
  if ((*t)->dtype() != DT_STRING || (*t)->NumElements() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("iterator state key '", key, "' holds ", (*t)->DebugString(1),
                     ", not a string scalar"));
  }
  return (*t)->scalar<std::string>();
}

absl::StatusOr<Tensor> IteratorStateReader::ReadTensor(absl::string_view key) const {
  absl::StatusOr<const Tensor*> t = Find(values_, key);
  if (!t.ok()) return t.status();
  return **t;
}

std::string EncodeIteratorState(const IteratorStateMap& values) {
  std::string out(kMagic);
  PutLength(&out, values.size());
  ::tensorflow::TensorProto proto;
  std::string bytes;
  for (const auto& [key, tensor] : values) {
    PutLength(&out, key.size());
    out.append(key);
    proto.Clear();
    tensor.ToProto(&proto);
    bytes.clear();
    proto.SerializeToString(&bytes);
    PutLength(&out, bytes.size());
    out.append(bytes);
  }
  return out;
}

absl::StatusOr<IteratorStateMap> DecodeIteratorState(absl::string_view bytes) {
  auto bad = [](absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a saved iterator state (", what, ")"));
  };
  if (bytes.substr(0, kMagic.size()) != kMagic) return bad("no SLUICEIT1 header");
  bytes.remove_prefix(kMagic.size());
  uint64_t n = 0;
  if (!GetLength(&bytes, &n)) return bad("truncated count");
  IteratorStateMap values;
  ::tensorflow::TensorProto proto;
  for (uint64_t i = 0; i < n; ++i) {
    absl::string_view key, tensor;
    if (!GetBytes(&bytes, &key) || !GetBytes(&bytes, &tensor)) {
      return bad(absl::StrCat("truncated entry ", i));
    }
    if (!proto.ParseFromArray(tensor.data(), static_cast<int>(tensor.size()))) {
      return bad(absl::StrCat("bad tensor for key '", key, "'"));
    }
    absl::StatusOr<Tensor> t = Tensor::FromProto(proto);
    if (!t.ok()) return bad(absl::StrCat("key '", key, "': ", t.status().message()));
    values.insert_or_assign(std::string(key), *std::move(t));
  }
  if (!bytes.empty()) return bad("trailing bytes");
  return values;
}

std::string IteratorStateValue::DebugString() const {
  return absl::StrCat("IteratorState with ", values_.size(), " keys");
}

Tensor IteratorStateTensor(IteratorStateMap values) {
  Tensor t(::tensorflow::DT_VARIANT, TensorShape({}));
  t.scalar<Variant>() = Variant(std::make_shared<IteratorStateValue>(std::move(values)));
  return t;
}

absl::StatusOr<const IteratorStateValue*> IteratorStateFromTensor(const Tensor& t) {
  if (t.dtype() != ::tensorflow::DT_VARIANT || t.NumElements() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected a saved iterator state (a variant scalar), got ", t.DebugString(1)));
  }
  const IteratorStateValue* v = t.scalar<Variant>().get<IteratorStateValue>();
  if (v == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected a saved iterator state, got a ", t.scalar<Variant>().TypeName()));
  }
  return v;
}

absl::Status WriteIteratorStateFile(const std::string& path, const Tensor& state) {
  absl::StatusOr<const IteratorStateValue*> v = IteratorStateFromTensor(state);
  if (!v.ok()) return v.status();
  return WriteFileAtomically(path, EncodeIteratorState((*v)->values()));
}

absl::StatusOr<Tensor> ReadIteratorStateFile(const std::string& path) {
  absl::StatusOr<std::string> bytes = ReadFileToString(path);
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<IteratorStateMap> values = DecodeIteratorState(*bytes);
  if (!values.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", values.status().message()));
  }
  return IteratorStateTensor(*std::move(values));
}

}  // namespace data
}  // namespace sluice
