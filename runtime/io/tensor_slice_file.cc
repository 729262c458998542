#include "runtime/io/tensor_slice_file.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "graph/proto/saved_tensor_slice.pb.h"
#include "runtime/atomic_file.h"
#include "runtime/io/table_file.h"

namespace sluice {
namespace {

using ::tensorflow::SavedSlice;
using ::tensorflow::SavedSliceMeta;
using ::tensorflow::SavedTensorSlices;
using ::tensorflow::TensorProto;

// TensorFlow's checkpoint versions: files it writes say producer 1, and a
// reader of version 1 takes files whose min_consumer is at most 1.
constexpr int kCheckpointVersion = 1;

// LevelDB's table magic, the footer's last 8 bytes (little-endian).
constexpr char kTableMagic[8] = {'\x57', '\xfb', '\x80', '\x8b', '\x24', '\x75', '\x47', '\xdb'};

bool Storable(DataType t) {
  switch (t) {
    case DT_FLOAT:
    case DT_DOUBLE:
    case DT_INT32:
    case DT_INT64:
    case DT_INT16:
    case DT_INT8:
    case DT_UINT8:
    case DT_UINT16:
    case DT_BOOL:
    case DT_HALF:
    case DT_STRING:
    case ::tensorflow::DT_COMPLEX64:
    case ::tensorflow::DT_COMPLEX128:
      return true;
    default:
      return false;
  }
}

// How many values of its *_val field a slice of `n` elements of `t` needs,
// and how many `data` holds.
int64_t ValuesNeeded(DataType t, int64_t n) {
  return t == ::tensorflow::DT_COMPLEX64 || t == ::tensorflow::DT_COMPLEX128 ? 2 * n : n;
}

int64_t ValuesHeld(DataType t, const TensorProto& data) {
  switch (t) {
    case DT_FLOAT: return data.float_val_size();
    case DT_DOUBLE: return data.double_val_size();
    case DT_INT64: return data.int64_val_size();
    case DT_BOOL: return data.bool_val_size();
    case DT_HALF: return data.half_val_size();
    case DT_STRING: return data.string_val_size();
    case ::tensorflow::DT_COMPLEX64: return data.scomplex_val_size();
    case ::tensorflow::DT_COMPLEX128: return data.dcomplex_val_size();
    default: return data.int_val_size();  // int32 and the narrower integers
  }
}

template <typename T, typename Field>
void CopyNarrowing(const Field& from, Tensor* to) {
  T* out = to->data<T>();
  for (int i = 0; i < from.size(); ++i) out[i] = static_cast<T>(from[i]);
}

// `data`'s values (ValuesHeld checked to be ValuesNeeded) into `to`.
void DecodeValues(const TensorProto& data, Tensor* to) {
  switch (to->dtype()) {
    case DT_FLOAT: CopyNarrowing<float>(data.float_val(), to); break;
    case DT_DOUBLE: CopyNarrowing<double>(data.double_val(), to); break;
    case DT_INT32: CopyNarrowing<int32_t>(data.int_val(), to); break;
    case DT_INT64: CopyNarrowing<int64_t>(data.int64_val(), to); break;
    case DT_INT16: CopyNarrowing<int16_t>(data.int_val(), to); break;
    case DT_INT8: CopyNarrowing<int8_t>(data.int_val(), to); break;
    case DT_UINT8: CopyNarrowing<uint8_t>(data.int_val(), to); break;
    case DT_UINT16: CopyNarrowing<uint16_t>(data.int_val(), to); break;
    case DT_BOOL: CopyNarrowing<bool>(data.bool_val(), to); break;
    case DT_HALF: {
      Half* out = to->data<Half>();
      for (int i = 0; i < data.half_val_size(); ++i) {
        out[i].bits = static_cast<uint16_t>(data.half_val(i));
      }
      break;
    }
    case DT_STRING: {
      std::string* out = to->data<std::string>();
      for (int i = 0; i < data.string_val_size(); ++i) out[i] = data.string_val(i);
      break;
    }
    case ::tensorflow::DT_COMPLEX64:
      std::memcpy(to->raw_data(), data.scomplex_val().data(), to->TotalBytes());
      break;
    case ::tensorflow::DT_COMPLEX128:
      std::memcpy(to->raw_data(), data.dcomplex_val().data(), to->TotalBytes());
      break;
    default: break;  // refused by Storable before
  }
}

template <typename T, typename Field>
void AppendAll(const Tensor& from, Field* to) {
  const T* in = from.data<T>();
  to->Reserve(static_cast<int>(from.NumElements()));
  for (int64_t i = 0; i < from.NumElements(); ++i) to->Add(in[i]);
}

// The *_val field TensorFlow's V1 writer fills for `from`'s dtype.
void EncodeValues(const Tensor& from, TensorProto* data) {
  switch (from.dtype()) {
    case DT_FLOAT: AppendAll<float>(from, data->mutable_float_val()); break;
    case DT_DOUBLE: AppendAll<double>(from, data->mutable_double_val()); break;
    case DT_INT32: AppendAll<int32_t>(from, data->mutable_int_val()); break;
    case DT_INT64: AppendAll<int64_t>(from, data->mutable_int64_val()); break;
    case DT_INT16: AppendAll<int16_t>(from, data->mutable_int_val()); break;
    case DT_INT8: AppendAll<int8_t>(from, data->mutable_int_val()); break;
    case DT_UINT8: AppendAll<uint8_t>(from, data->mutable_int_val()); break;
    case DT_UINT16: AppendAll<uint16_t>(from, data->mutable_int_val()); break;
    case DT_BOOL: AppendAll<bool>(from, data->mutable_bool_val()); break;
    case DT_HALF: {
      const Half* in = from.data<Half>();
      for (int64_t i = 0; i < from.NumElements(); ++i) data->add_half_val(in[i].bits);
      break;
    }
    case DT_STRING: {
      const std::string* in = from.data<std::string>();
      for (int64_t i = 0; i < from.NumElements(); ++i) data->add_string_val(in[i]);
      break;
    }
    case ::tensorflow::DT_COMPLEX64: {
      const float* in = static_cast<const float*>(from.raw_data());
      data->mutable_scomplex_val()->Add(in, in + 2 * from.NumElements());
      break;
    }
    case ::tensorflow::DT_COMPLEX128: {
      const double* in = static_cast<const double*>(from.raw_data());
      data->mutable_dcomplex_val()->Add(in, in + 2 * from.NumElements());
      break;
    }
    default: break;  // refused by Storable before
  }
}

// A slice's identity: its tensor's name (which may hold any byte but ends
// where the resolved starts and lengths begin) and where it lies.
std::string SliceId(const std::string& name, const BundleSlice& s) {
  return absl::StrCat(absl::StrJoin(s.start, ","), ";", absl::StrJoin(s.length, ","), ";", name);
}

// Protocol buffers' strings hold UTF-8, and a name that is not does not
// parse back (TensorFlow's reader refuses the file): checked before writing.
bool IsUtf8(absl::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    int follow = 0;
    uint32_t code = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xe0) == 0xc0) {
      follow = 1;
      code = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      follow = 2;
      code = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      follow = 3;
      code = c & 0x07;
    } else {
      return false;
    }
    if (s.size() - i <= static_cast<size_t>(follow)) return false;
    for (int k = 1; k <= follow; ++k) {
      const auto x = static_cast<unsigned char>(s[i + k]);
      if ((x & 0xc0) != 0x80) return false;
      code = (code << 6) | (x & 0x3f);
    }
    // Overlong forms, surrogates and code points past U+10FFFF.
    static constexpr uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (code < kMin[follow] || (code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff) return false;
    i += follow + 1;
  }
  return true;
}

}  // namespace

bool IsTableFile(absl::string_view bytes) {
  return bytes.size() >= sizeof(kTableMagic) &&
         bytes.substr(bytes.size() - sizeof(kTableMagic)) ==
             absl::string_view(kTableMagic, sizeof(kTableMagic));
}

absl::StatusOr<std::vector<TensorSliceRecord>> ParseTensorSliceFile(absl::string_view bytes,
                                                                    const std::string& path,
                                                                    Allocator* allocator) {
  if (allocator == nullptr) allocator = DefaultCpuAllocator();
  auto loss = [&path](absl::string_view what) {
    return absl::DataLossError(absl::StrCat("V1 checkpoint file '", path, "' ", what));
  };
  ASSIGN_OR_RETURN(std::vector<TableEntry> table, ReadTableFile(bytes, path));
  if (table.empty() || !table[0].key.empty()) return loss("has no meta record (key \"\")");
  SavedTensorSlices head;
  if (!head.ParseFromString(table[0].value) || !head.has_meta()) {
    return loss("has a meta record that does not parse");
  }
  const ::tensorflow::VersionDef& v = head.meta().versions();
  if (v.min_consumer() > kCheckpointVersion ||
      std::find(v.bad_consumers().begin(), v.bad_consumers().end(), kCheckpointVersion) !=
          v.bad_consumers().end()) {
    return absl::FailedPreconditionError(
        absl::StrCat("V1 checkpoint file '", path, "' needs a reader of version ",
                     v.min_consumer(), " or one that is not among ",
                     absl::StrJoin(v.bad_consumers(), ","), "; this one is version ",
                     kCheckpointVersion));
  }
  // The slices the meta lists, by tensor name and slice; values to come.
  std::vector<TensorSliceRecord> out;
  std::vector<DataType> dtypes;
  absl::flat_hash_map<std::string, TensorShape> full_of;  // tensor name -> its full shape
  absl::flat_hash_map<std::string, size_t> slot;      // SliceId -> index in `out`
  for (const SavedSliceMeta& m : head.meta().tensor()) {
    const DataType dtype = static_cast<DataType>(m.type());
    if (m.name().empty()) return loss("lists a tensor without a name");
    if (!Storable(dtype)) {
      return loss(absl::StrCat("lists tensor '", m.name(), "' of dtype ",
                               ::tensorflow::DataType_Name(m.type()),
                               ", which V1 checkpoints do not hold"));
    }
    absl::StatusOr<TensorShape> full = TensorShape::FromProto(m.shape());
    if (!full.ok() || !full->IsFullyDefined()) {
      return loss(absl::StrCat("lists tensor '", m.name(), "' with a bad shape"));
    }
    if (!full_of.try_emplace(m.name(), *full).second) {
      return loss(absl::StrCat("lists tensor '", m.name(), "' twice"));
    }
    for (const ::tensorflow::TensorSliceProto& proto : m.slice()) {
      absl::StatusOr<BundleSlice> slice = internal::ResolveSliceProto(m.name(), *full, proto);
      if (!slice.ok()) return loss(absl::StrCat("is corrupt: ", slice.status().message()));
      if (!slot.try_emplace(SliceId(m.name(), *slice), out.size()).second) {
        return loss(absl::StrCat("lists a slice of tensor '", m.name(), "' twice"));
      }
      out.push_back({m.name(), *full, *std::move(slice), Tensor()});
      dtypes.push_back(dtype);
    }
  }
  // Each data record fills the slice it names.
  for (size_t i = 1; i < table.size(); ++i) {
    SavedTensorSlices record;
    if (!record.ParseFromString(table[i].value) || !record.has_data()) {
      return loss(absl::StrCat("has a record (", i, ") that is not a slice's values"));
    }
    const SavedSlice& s = record.data();
    auto full = full_of.find(s.name());
    if (full == full_of.end()) {
      return loss(absl::StrCat("holds values of tensor '", s.name(), "', which its meta lacks"));
    }
    absl::StatusOr<BundleSlice> slice =
        internal::ResolveSliceProto(s.name(), full->second, s.slice());
    if (!slice.ok()) return loss(absl::StrCat("is corrupt: ", slice.status().message()));
    auto it = slot.find(SliceId(s.name(), *slice));
    if (it == slot.end()) {
      return loss(absl::StrCat("holds values of a slice of tensor '", s.name(),
                               "' that its meta does not list"));
    }
    TensorSliceRecord& r = out[it->second];
    if (r.value.IsInitialized()) {
      return loss(absl::StrCat("holds one slice of tensor '", s.name(), "' twice"));
    }
    const DataType dtype = dtypes[it->second];
    const TensorShape shape(r.slice.length);
    const int64_t needed = ValuesNeeded(dtype, shape.num_elements());
    const int64_t have = ValuesHeld(dtype, s.data());
    if (have != needed) {
      return loss(absl::StrCat("holds ", have, " values for a slice of tensor '", s.name(),
                               "' of shape ", shape.DebugString(), " (", needed, " needed)"));
    }
    ASSIGN_OR_RETURN(r.value, Tensor::Allocate(allocator, dtype, shape));
    DecodeValues(s.data(), &r.value);
  }
  for (const TensorSliceRecord& r : out) {
    if (!r.value.IsInitialized()) {
      return loss(absl::StrCat("lists a slice of tensor '", r.name, "' without its values"));
    }
  }
  return out;
}

absl::StatusOr<std::string> EncodeTensorSliceFile(absl::Span<const TensorSliceRecord> records) {
  SavedTensorSlices head;
  ::tensorflow::SavedTensorSliceMeta* meta = head.mutable_meta();
  meta->mutable_versions()->set_producer(kCheckpointVersion);
  absl::flat_hash_map<std::string, int> tensor_of;  // name -> meta's tensor index
  std::map<std::string, std::string> data;          // key -> record, in key order
  for (const TensorSliceRecord& r : records) {
    auto bad = [&r](absl::string_view what) {
      return absl::InvalidArgumentError(absl::StrCat("V1 checkpoint tensor '", r.name, "': ", what));
    };
    if (r.name.empty()) return absl::InvalidArgumentError("a V1 checkpoint tensor needs a name");
    if (!IsUtf8(r.name)) return bad("a V1 checkpoint tensor's name must be UTF-8");
    if (!Storable(r.value.dtype())) {
      return bad(absl::StrCat("V1 checkpoints cannot hold ", DataTypeName(r.value.dtype()),
                              " (TensorFlow's Save refuses it too; SaveV2 writes it)"));
    }
    ::tensorflow::TensorSliceProto slice_proto;
    std::vector<int64_t> key_length;
    RETURN_IF_ERROR(
        internal::SliceToProto(r.name, r.full_shape, r.slice, &slice_proto, &key_length));
    if (r.value.shape() != TensorShape(r.slice.length)) {
      return bad(absl::StrCat("a slice of shape ", TensorShape(r.slice.length).DebugString(),
                              " given a tensor of shape ", r.value.shape().DebugString()));
    }
    auto [it, added] = tensor_of.try_emplace(r.name, meta->tensor_size());
    SavedSliceMeta* m = nullptr;
    if (added) {
      m = meta->add_tensor();
      m->set_name(r.name);
      r.full_shape.ToProto(m->mutable_shape());
      m->set_type(static_cast<::tensorflow::DataType>(r.value.dtype()));
    } else {
      m = meta->mutable_tensor(it->second);
      absl::StatusOr<TensorShape> had = TensorShape::FromProto(m->shape());
      if (static_cast<DataType>(m->type()) != r.value.dtype() || !had.ok() ||
          *had != r.full_shape) {
        return bad("slices with other dtypes or full shapes");
      }
    }
    *m->add_slice() = slice_proto;
    SavedTensorSlices record;
    SavedSlice* s = record.mutable_data();
    s->set_name(r.name);
    *s->mutable_slice() = std::move(slice_proto);
    EncodeValues(r.value, s->mutable_data());
    const std::string key = internal::EncodeTensorNameSlice(r.name, r.slice.start, key_length);
    if (!data.try_emplace(key, record.SerializeAsString()).second) {
      return bad("one slice stored twice");
    }
  }
  std::vector<TableEntry> entries;
  entries.reserve(data.size() + 1);
  entries.push_back({"", head.SerializeAsString()});
  for (auto& [key, value] : data) entries.push_back({key, std::move(value)});
  return WriteTableFile(entries);
}

absl::Status WriteTensorSliceFile(const std::string& path,
                                  absl::Span<const TensorSliceRecord> records) {
  ASSIGN_OR_RETURN(std::string bytes, EncodeTensorSliceFile(records));
  return WriteFileAtomically(path, bytes);
}

}  // namespace sluice
