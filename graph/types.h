// Element types of tensors, and the C++ types that hold them.
//
// DataType is TensorFlow's enum (graph/proto/types.proto), so values read from
// graph files need no translation.
//
//   DataType t = DataTypeToEnum<float>::value;        // DT_FLOAT
//   DataTypeSize(DT_INT64) == 8;
//   DataTypeName(DT_FLOAT) == "float";
//   absl::StatusOr<DataType> u = DataTypeFromString("int32");
//
// Thread-safe: everything here is pure.
#ifndef SLUICE_GRAPH_TYPES_H_
#define SLUICE_GRAPH_TYPES_H_

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "graph/proto/types.pb.h"

namespace sluice {

using DataType = ::tensorflow::DataType;
using ::tensorflow::DT_BFLOAT16;
using ::tensorflow::DT_BOOL;
using ::tensorflow::DT_DOUBLE;
using ::tensorflow::DT_FLOAT;
using ::tensorflow::DT_HALF;
using ::tensorflow::DT_INT16;
using ::tensorflow::DT_INT32;
using ::tensorflow::DT_INT64;
using ::tensorflow::DT_INT8;
using ::tensorflow::DT_INVALID;
using ::tensorflow::DT_RESOURCE;
using ::tensorflow::DT_STRING;
using ::tensorflow::DT_UINT16;
using ::tensorflow::DT_UINT8;
using ::tensorflow::DT_FLOAT_REF;

// IEEE 754 binary16, stored as raw bits. Representable and convertible; the
// CPU kernels compute in float32/float64 and do not take half inputs.
struct Half {
  uint16_t bits = 0;
  static Half FromFloat(float f);
  float ToFloat() const;
};

// The upper 16 bits of a float32 (round-to-nearest-even on conversion).
struct BFloat16 {
  uint16_t bits = 0;
  static BFloat16 FromFloat(float f);
  float ToFloat() const;
};

// Inline: every tensor allocation and every tensor on the wire asks these
// several times.
inline bool IsRefType(DataType t) { return static_cast<int>(t) > 100; }
inline DataType BaseType(DataType t) {  // strips _REF
  return IsRefType(t) ? static_cast<DataType>(static_cast<int>(t) - 100) : t;
}

// Size in bytes of one element; 0 for types with no fixed size (string,
// resource, invalid).
inline int DataTypeSize(DataType t) {
  switch (BaseType(t)) {
    case DT_FLOAT: return 4;
    case DT_DOUBLE: return 8;
    case DT_INT32: return 4;
    case DT_INT64: return 8;
    case DT_UINT8: return 1;
    case DT_INT8: return 1;
    case DT_INT16: return 2;
    case DT_UINT16: return 2;
    case DT_BOOL: return 1;
    case DT_HALF: return 2;
    case DT_BFLOAT16: return 2;
    case ::tensorflow::DT_UINT32: return 4;
    case ::tensorflow::DT_UINT64: return 8;
    case ::tensorflow::DT_COMPLEX64: return 8;
    case ::tensorflow::DT_COMPLEX128: return 16;
    default: return 0;
  }
}

// "float", "int32", "float_ref", ... (TensorFlow's spelling in op specs).
std::string DataTypeName(DataType t);

// Parses "float", "DT_FLOAT", "float32", "half", "bfloat16", ...
absl::StatusOr<DataType> DataTypeFromString(absl::string_view name);

DataType MakeRefType(DataType t);
bool IsFloatingType(DataType t);  // half, bfloat16, float, double
bool IsIntegerType(DataType t);

// Maps a C++ type to its DataType and back.
template <typename T> struct DataTypeToEnum;
template <DataType D> struct EnumToDataType;

#define SLUICE_MATCH_TYPE_AND_ENUM_(TYPE, ENUM)   \
  template <> struct DataTypeToEnum<TYPE> {        \
    static constexpr DataType value = ENUM;        \
  };                                               \
  template <> struct EnumToDataType<ENUM> {        \
    using Type = TYPE;                             \
  }

SLUICE_MATCH_TYPE_AND_ENUM_(float, DT_FLOAT);
SLUICE_MATCH_TYPE_AND_ENUM_(double, DT_DOUBLE);
SLUICE_MATCH_TYPE_AND_ENUM_(int32_t, DT_INT32);
SLUICE_MATCH_TYPE_AND_ENUM_(int64_t, DT_INT64);
SLUICE_MATCH_TYPE_AND_ENUM_(uint8_t, DT_UINT8);
SLUICE_MATCH_TYPE_AND_ENUM_(int8_t, DT_INT8);
SLUICE_MATCH_TYPE_AND_ENUM_(int16_t, DT_INT16);
SLUICE_MATCH_TYPE_AND_ENUM_(uint16_t, DT_UINT16);
SLUICE_MATCH_TYPE_AND_ENUM_(bool, DT_BOOL);
SLUICE_MATCH_TYPE_AND_ENUM_(Half, DT_HALF);
SLUICE_MATCH_TYPE_AND_ENUM_(BFloat16, DT_BFLOAT16);
SLUICE_MATCH_TYPE_AND_ENUM_(std::string, DT_STRING);  // no fixed size: DataTypeSize is 0

#undef SLUICE_MATCH_TYPE_AND_ENUM_

}  // namespace sluice

#endif  // SLUICE_GRAPH_TYPES_H_
