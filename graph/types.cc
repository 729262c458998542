#include "graph/types.h"

#include <cmath>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace sluice {
namespace {

uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float BitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

struct TypeName {
  DataType type;
  const char* name;
};

// The first name of each type is its canonical spelling.
constexpr TypeName kNames[] = {
    {DT_FLOAT, "float"},     {DT_DOUBLE, "double"},  {DT_INT32, "int32"},
    {DT_UINT8, "uint8"},     {DT_INT16, "int16"},    {DT_INT8, "int8"},
    {DT_STRING, "string"},   {::tensorflow::DT_COMPLEX64, "complex64"},
    {DT_INT64, "int64"},     {DT_BOOL, "bool"},      {DT_BFLOAT16, "bfloat16"},
    {DT_UINT16, "uint16"},   {::tensorflow::DT_COMPLEX128, "complex128"},
    {DT_HALF, "half"},       {DT_RESOURCE, "resource"},
    {::tensorflow::DT_VARIANT, "variant"},      {::tensorflow::DT_UINT32, "uint32"},
    {::tensorflow::DT_UINT64, "uint64"},        {DT_FLOAT, "float32"},
    {DT_DOUBLE, "float64"},  {DT_HALF, "float16"},
};

}  // namespace

Half Half::FromFloat(float f) {
  uint32_t x = FloatBits(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffffu;
  Half h;
  if (((x >> 23) & 0xff) == 0xff) {  // inf or nan
    h.bits = static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0));
  } else if (exp >= 31) {  // overflow to inf
    h.bits = static_cast<uint16_t>(sign | 0x7c00u);
  } else if (exp <= 0) {  // subnormal or zero
    if (exp < -10) {
      h.bits = static_cast<uint16_t>(sign);
    } else {
      mant |= 0x800000u;
      uint32_t shift = static_cast<uint32_t>(14 - exp);
      uint32_t half_mant = mant >> shift;
      uint32_t rem = mant & ((1u << shift) - 1);
      uint32_t halfway = 1u << (shift - 1);
      if (rem > halfway || (rem == halfway && (half_mant & 1))) ++half_mant;
      h.bits = static_cast<uint16_t>(sign | half_mant);
    }
  } else {
    uint32_t half_mant = mant >> 13;
    uint32_t rem = mant & 0x1fffu;
    uint32_t bits = sign | (static_cast<uint32_t>(exp) << 10) | half_mant;
    if (rem > 0x1000u || (rem == 0x1000u && (half_mant & 1))) ++bits;  // may carry into exp
    h.bits = static_cast<uint16_t>(bits);
  }
  return h;
}

float Half::ToFloat() const {
  uint32_t sign = (bits & 0x8000u) << 16;
  uint32_t exp = (bits >> 10) & 0x1fu;
  uint32_t mant = bits & 0x3ffu;
  if (exp == 0) {
    float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return BitsFloat(sign | 0x7f800000u | (mant << 13));
  return BitsFloat(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

BFloat16 BFloat16::FromFloat(float f) {
  uint32_t x = FloatBits(f);
  BFloat16 b;
  if ((x & 0x7fffffffu) > 0x7f800000u) {  // nan stays nan
    b.bits = static_cast<uint16_t>((x >> 16) | 0x40u);
    return b;
  }
  uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  b.bits = static_cast<uint16_t>((x + rounding) >> 16);
  return b;
}

float BFloat16::ToFloat() const { return BitsFloat(static_cast<uint32_t>(bits) << 16); }

std::string DataTypeName(DataType t) {
  if (t == DT_INVALID) return "invalid";
  DataType base = BaseType(t);
  for (const TypeName& n : kNames) {
    if (n.type == base) return IsRefType(t) ? absl::StrCat(n.name, "_ref") : n.name;
  }
  return absl::StrCat("unknown_type_", static_cast<int>(t));
}

absl::StatusOr<DataType> DataTypeFromString(absl::string_view name) {
  std::string lower = absl::AsciiStrToLower(name);
  absl::string_view s = lower;
  if (absl::StartsWith(s, "dt_")) s.remove_prefix(3);
  bool ref = false;
  if (absl::EndsWith(s, "_ref")) {
    ref = true;
    s.remove_suffix(4);
  }
  for (const TypeName& n : kNames) {
    if (s == n.name) return ref ? MakeRefType(n.type) : n.type;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown data type '", name, "'"));
}

DataType MakeRefType(DataType t) {
  return IsRefType(t) ? t : static_cast<DataType>(static_cast<int>(t) + 100);
}

bool IsFloatingType(DataType t) {
  DataType b = BaseType(t);
  return b == DT_FLOAT || b == DT_DOUBLE || b == DT_HALF || b == DT_BFLOAT16;
}

bool IsIntegerType(DataType t) {
  DataType b = BaseType(t);
  return b == DT_INT32 || b == DT_INT64 || b == DT_INT8 || b == DT_UINT8 || b == DT_INT16 ||
         b == DT_UINT16 || b == ::tensorflow::DT_UINT32 || b == ::tensorflow::DT_UINT64;
}

}  // namespace sluice
