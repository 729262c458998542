#include "runtime/io/idx_file.h"

#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace sluice {
namespace {

// The IDX type code of a dtype; 0 for one IDX has none of.
int TypeCode(DataType dtype) {
  switch (dtype) {
    case DT_UINT8: return 0x08;
    case DT_INT8: return 0x09;
    case DT_INT16: return 0x0B;
    case DT_INT32: return 0x0C;
    case DT_FLOAT: return 0x0D;
    case DT_DOUBLE: return 0x0E;
    default: return 0;
  }
}

absl::StatusOr<DataType> DtypeOfCode(int code, const std::string& path) {
  for (DataType t : {DT_UINT8, DT_INT8, DT_INT16, DT_INT32, DT_FLOAT, DT_DOUBLE}) {
    if (TypeCode(t) == code) return t;
  }
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": unknown IDX element type 0x", absl::Hex(code)));
}

// Swaps each element of `n` elements of `size` bytes between big-endian and
// the host's (little-endian) order.
void SwapBytes(char* data, int64_t n, int size) {
  if (size == 1) return;
  for (int64_t i = 0; i < n; ++i) {
    char* e = data + i * size;
    for (int a = 0, b = size - 1; a < b; ++a, --b) std::swap(e[a], e[b]);
  }
}

struct GzCloser {
  void operator()(gzFile f) const { gzclose(f); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

// Reads exactly `n` bytes; false at a short read.
bool ReadFully(gzFile f, char* out, size_t n) {
  while (n > 0) {
    const unsigned chunk = static_cast<unsigned>(std::min<size_t>(n, 1u << 30));
    const int got = gzread(f, out, chunk);
    if (got <= 0) return false;
    out += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

}  // namespace

absl::StatusOr<Tensor> ReadIdxFile(const std::string& path) {
  // gzread reads plain files as they are, so one path serves both.
  GzFile f(gzopen(path.c_str(), "rb"));
  if (f == nullptr) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  unsigned char magic[4];
  if (!ReadFully(f.get(), reinterpret_cast<char*>(magic), 4)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": shorter than an IDX header"));
  }
  if (magic[0] != 0 || magic[1] != 0 || magic[3] == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not an IDX file (its magic number does not start with two zero "
                           "bytes and a type)"));
  }
  ASSIGN_OR_RETURN(DataType dtype, DtypeOfCode(magic[2], path));
  const int rank = magic[3];
  std::vector<int64_t> dims(rank);
  for (int i = 0; i < rank; ++i) {
    unsigned char d[4];
    if (!ReadFully(f.get(), reinterpret_cast<char*>(d), 4)) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": the header ends before dimension ", i, " of ", rank));
    }
    dims[i] = (int64_t{d[0]} << 24) | (int64_t{d[1]} << 16) | (int64_t{d[2]} << 8) | d[3];
  }
  absl::StatusOr<Tensor> allocated =
      Tensor::Allocate(DefaultCpuAllocator(), dtype, TensorShape(dims));
  if (!allocated.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", allocated.status().message()));
  }
  Tensor t = *std::move(allocated);
  char* data = static_cast<char*>(t.raw_data());
  if (!ReadFully(f.get(), data, t.TotalBytes())) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": truncated: the header promises ",
                                                   t.TotalBytes(), " bytes of elements"));
  }
  char extra;
  if (gzread(f.get(), &extra, 1) > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": has bytes past the ", t.TotalBytes(), " its header promises"));
  }
  SwapBytes(data, t.NumElements(), DataTypeSize(dtype));
  return t;
}

absl::Status WriteIdxFile(const Tensor& t, const std::string& path) {
  const int code = TypeCode(t.dtype());
  if (code == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("IDX files have no ", DataTypeName(t.dtype()), " elements"));
  }
  if (t.dims() < 1 || t.dims() > 255) {
    return absl::InvalidArgumentError(absl::StrCat("IDX files hold rank 1..255, not ", t.dims()));
  }
  std::string out = {0, 0, static_cast<char>(code), static_cast<char>(t.dims())};
  for (int i = 0; i < t.dims(); ++i) {
    const uint32_t d = static_cast<uint32_t>(t.dim_size(i));
    for (int shift : {24, 16, 8, 0}) out.push_back(static_cast<char>((d >> shift) & 0xff));
  }
  const size_t head = out.size();
  out.append(static_cast<const char*>(t.raw_data()), t.TotalBytes());
  SwapBytes(out.data() + head, t.NumElements(), DataTypeSize(t.dtype()));
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(out.data(), static_cast<std::streamsize>(out.size()));
  file.close();
  if (!file) return absl::InternalError(absl::StrCat(path, ": cannot write"));
  return absl::OkStatus();
}

}  // namespace sluice
