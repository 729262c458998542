// NumPy .npy encoding and decoding. See npy.h.
//
// Layout: "\x93NUMPY", major, minor, header length (uint16 LE for 1.0,
// uint32 LE for 2.0/3.0), then a Python dict literal
// "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" padded with
// spaces and a final '\n' so the data starts on a 64-byte boundary, then the
// raw elements in C order.
#include "runtime/npy.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace sluice {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
constexpr size_t kAlignment = 64;

struct DescrEntry {
  const char* code;  // kind and size without the byte-order character
  DataType dtype;
};
constexpr DescrEntry kDescrs[] = {
    {"f2", DT_HALF},   {"f4", DT_FLOAT},  {"f8", DT_DOUBLE}, {"i1", DT_INT8},
    {"i2", DT_INT16},  {"i4", DT_INT32},  {"i8", DT_INT64},  {"u1", DT_UINT8},
    {"u2", DT_UINT16}, {"u4", ::tensorflow::DT_UINT32}, {"u8", ::tensorflow::DT_UINT64},
    {"b1", DT_BOOL},
};

absl::Status Malformed(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("not a valid .npy file: ", std::string(what)));
}

// The header's Python literal: a dict of str -> (str | bool | tuple of int).
struct NpyHeader {
  std::optional<std::string> descr;
  std::optional<bool> fortran_order;
  std::optional<std::vector<int64_t>> shape;
};

class HeaderParser {
 public:
  explicit HeaderParser(absl::string_view text) : text_(text) {}

  absl::StatusOr<NpyHeader> Parse() {
    NpyHeader header;
    RETURN_IF_ERROR(Expect('{'));
    while (true) {
      SkipSpace();
      if (Peek() == '}') {
        ++pos_;
        break;
      }
      ASSIGN_OR_RETURN(std::string key, ParseString());
      RETURN_IF_ERROR(Expect(':'));
      SkipSpace();
      if (key == "descr") {
        if (Peek() != '\'' && Peek() != '"') {
          return absl::UnimplementedError(
              "unsupported .npy dtype: structured arrays are not supported");
        }
        ASSIGN_OR_RETURN(header.descr, ParseString());
      } else if (key == "fortran_order") {
        ASSIGN_OR_RETURN(header.fortran_order, ParseBool());
      } else if (key == "shape") {
        ASSIGN_OR_RETURN(header.shape, ParseTuple());
      } else {
        return Malformed(absl::StrCat("unexpected header key '", key, "'"));
      }
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
      } else if (Peek() != '}') {
        return Malformed(absl::StrCat("expected ',' or '}' in header at offset ", pos_));
      }
    }
    SkipSpace();
    if (pos_ != text_.size()) return Malformed("trailing characters after the header dict");
    return header;
  }

 private:
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void SkipSpace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t' ||
            text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  absl::Status Expect(char c) {
    SkipSpace();
    if (Peek() != c) {
      return Malformed(absl::StrCat("expected '", std::string(1, c), "' in header at offset ",
                                    pos_));
    }
    ++pos_;
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> ParseString() {
    SkipSpace();
    char quote = Peek();
    if (quote != '\'' && quote != '"') {
      return Malformed(absl::StrCat("expected a string in header at offset ", pos_));
    }
    size_t end = text_.find(quote, pos_ + 1);
    if (end == absl::string_view::npos) return Malformed("unterminated string in header");
    std::string s(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return s;
  }
  absl::StatusOr<bool> ParseBool() {
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    return Malformed("fortran_order is neither True nor False");
  }
  absl::StatusOr<std::vector<int64_t>> ParseTuple() {
    RETURN_IF_ERROR(Expect('('));
    std::vector<int64_t> dims;
    while (true) {
      SkipSpace();
      if (Peek() == ')') {
        ++pos_;
        return dims;
      }
      if (Peek() < '0' || Peek() > '9') {
        return Malformed(absl::StrCat("bad dimension in shape at offset ", pos_));
      }
      int64_t v = 0;
      while (Peek() >= '0' && Peek() <= '9') {
        if (v > (std::numeric_limits<int64_t>::max() - 9) / 10) {
          return Malformed("dimension too large in shape");
        }
        v = v * 10 + (Peek() - '0');
        ++pos_;
      }
      if (Peek() == 'L') ++pos_;  // Python 2 longs
      dims.push_back(v);
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
      } else if (Peek() != ')') {
        return Malformed(absl::StrCat("expected ',' or ')' in shape at offset ", pos_));
      }
    }
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

absl::StatusOr<DataType> DescrToDataType(const std::string& descr) {
  if (descr.size() < 2) return Malformed(absl::StrCat("bad descr '", descr, "'"));
  char order = descr[0];
  std::string code = descr.substr(1);
  if (order != '<' && order != '>' && order != '|' && order != '=') {
    // numpy always writes a byte-order character; be lenient about "f4".
    order = '=';
    code = descr;
  }
  for (const DescrEntry& e : kDescrs) {
    if (code != e.code) continue;
    bool one_byte = DataTypeSize(e.dtype) == 1;
    if (order == '>' && !one_byte) {
      return absl::UnimplementedError(absl::StrCat(
          "big-endian .npy data ('", descr, "') is not supported; save it little-endian, ",
          "e.g. with a.astype(a.dtype.newbyteorder('<'))"));
    }
    if (order == '|' && !one_byte) {
      return Malformed(absl::StrCat("descr '", descr, "' lacks a byte order"));
    }
    return e.dtype;  // '<', '=' (this host is little-endian) or any for 1 byte
  }
  return absl::UnimplementedError(absl::StrCat(
      "unsupported .npy dtype '", descr,
      "' (supported: float16/32/64, int8/16/32/64, uint8/16, bool)"));
}

absl::Status ErrnoStatus(int err, absl::string_view what, const std::string& path) {
  std::string msg = absl::StrCat(std::string(what), " '", path, "': ", std::strerror(err));
  if (err == ENOENT || err == ENOTDIR) return absl::NotFoundError(msg);
  if (err == EACCES || err == EPERM || err == EROFS) return absl::PermissionDeniedError(msg);
  return absl::InvalidArgumentError(msg);
}

struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f != nullptr) std::fclose(f);
  }
};

}  // namespace

std::string NpyDescr(DataType dtype) {
  for (const DescrEntry& e : kDescrs) {
    if (e.dtype == dtype) {
      return absl::StrCat(DataTypeSize(dtype) == 1 ? "|" : "<", e.code);
    }
  }
  return "";
}

absl::StatusOr<Tensor> ParseNpy(absl::string_view bytes) {
  if (bytes.size() < kMagicLen + 2 || bytes.substr(0, kMagicLen) != absl::string_view(kMagic)) {
    return Malformed("bad magic (expected \"\\x93NUMPY\")");
  }
  const auto* u = reinterpret_cast<const unsigned char*>(bytes.data());
  int major = u[6];
  int minor = u[7];
  size_t header_len = 0;
  size_t prefix = 0;
  if (major == 1) {
    if (bytes.size() < 10) return Malformed("truncated header");
    header_len = u[8] | (u[9] << 8);
    prefix = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return Malformed("truncated header");
    header_len = static_cast<size_t>(u[8]) | (static_cast<size_t>(u[9]) << 8) |
                 (static_cast<size_t>(u[10]) << 16) | (static_cast<size_t>(u[11]) << 24);
    prefix = 12;
  } else {
    return absl::UnimplementedError(
        absl::StrCat("unsupported .npy format version ", major, ".", minor));
  }
  if (bytes.size() - prefix < header_len) return Malformed("truncated header");
  ASSIGN_OR_RETURN(NpyHeader header,
                   HeaderParser(bytes.substr(prefix, header_len)).Parse());
  if (!header.descr || !header.fortran_order || !header.shape) {
    return Malformed("header lacks one of 'descr', 'fortran_order', 'shape'");
  }
  // NumPy's fixed-width bytes ("|S8"): DT_STRING, each element's trailing
  // NULs dropped as NumPy drops them.
  int64_t string_width = -1;
  const std::string& d = *header.descr;
  if (d.size() >= 3 && (d[0] == '|' || d[0] == '<' || d[0] == '=') && d[1] == 'S') {
    if (!absl::SimpleAtoi(d.substr(2), &string_width) || string_width < 1 ||
        string_width > (int64_t{1} << 30)) {
      return Malformed(absl::StrCat("bad bytes width in descr '", d, "'"));
    }
  }
  DataType dtype = DT_STRING;
  if (string_width < 0) {
    ASSIGN_OR_RETURN(dtype, DescrToDataType(d));
  }

  TensorShape shape;
  int64_t num_elements = 1;
  bool overflow = false;
  bool empty = false;  // a zero dimension: no elements, however large the others
  for (int64_t d : *header.shape) {
    shape.AddDim(d);
    if (d == 0) {
      empty = true;
    } else if (!overflow && __builtin_mul_overflow(num_elements, d, &num_elements)) {
      overflow = true;  // found by fuzz/npy_fuzzer: the product used to wrap
    }
  }
  if (empty) {
    num_elements = 0;
    overflow = false;
  }
  const int64_t elem = string_width > 0 ? string_width : DataTypeSize(dtype);
  if (overflow || num_elements > std::numeric_limits<int64_t>::max() / elem) {
    return Malformed(absl::StrCat("shape ", shape.DebugString(), " is too large"));
  }
  if (*header.fortran_order && shape.rank() > 1) {
    return absl::UnimplementedError(
        "Fortran-order .npy data is not supported; save it with np.ascontiguousarray(a)");
  }
  const size_t data_bytes = static_cast<size_t>(num_elements * elem);
  const absl::string_view data = bytes.substr(prefix + header_len);
  if (data.size() < data_bytes) {
    return Malformed(absl::StrCat("truncated data: ", shape.DebugString(), " ", DataTypeName(dtype),
                                  " needs ", data_bytes, " bytes, the file has ", data.size()));
  }
  ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(DefaultCpuAllocator(), dtype, shape));
  if (data_bytes > 0) {
    if (dtype == DT_STRING) {
      std::string* out = t.data<std::string>();
      for (int64_t i = 0; i < num_elements; ++i) {
        absl::string_view e = data.substr(static_cast<size_t>(i * elem), static_cast<size_t>(elem));
        const size_t end = e.find_last_not_of('\0');
        out[i] = std::string(e.substr(0, end == absl::string_view::npos ? 0 : end + 1));
      }
    } else if (dtype == DT_BOOL) {
      bool* out = t.data<bool>();
      for (size_t i = 0; i < data_bytes; ++i) out[i] = data[i] != 0;
    } else {
      std::memcpy(t.raw_data(), data.data(), data_bytes);
    }
  }
  return t;
}

absl::StatusOr<std::string> EncodeNpy(const Tensor& tensor) {
  std::string descr = NpyDescr(tensor.dtype());
  size_t string_width = 0;
  if (tensor.dtype() == DT_STRING) {
    string_width = 1;  // NumPy's narrowest bytes dtype
    for (const std::string& v : tensor.flat<std::string>()) string_width = std::max(string_width, v.size());
    descr = absl::StrCat("|S", string_width);
  }
  if (descr.empty()) {
    return absl::UnimplementedError(absl::StrCat("cannot write a ", DataTypeName(tensor.dtype()),
                                                 " tensor to .npy"));
  }
  std::vector<std::string> dims;
  for (int64_t d : tensor.shape().dims()) dims.push_back(absl::StrCat(d));
  std::string shape = absl::StrCat("(", absl::StrJoin(dims, ", "), dims.size() == 1 ? ",)" : ")");
  std::string dict = absl::StrCat("{'descr': '", descr, "', 'fortran_order': False, 'shape': ",
                                  shape, ", }");
  // Pad with spaces and a '\n' so magic + version + length + dict is aligned.
  size_t prefix = kMagicLen + 2 + 2;
  bool v2 = false;
  size_t total = prefix + dict.size() + 1;
  size_t padded = (total + kAlignment - 1) / kAlignment * kAlignment;
  if (padded - prefix > 0xffff) {
    v2 = true;
    prefix += 2;
    total = prefix + dict.size() + 1;
    padded = (total + kAlignment - 1) / kAlignment * kAlignment;
  }
  dict.append(padded - total, ' ');
  dict.push_back('\n');
  const size_t header_len = dict.size();

  std::string out(kMagic, kMagicLen);
  out.push_back(static_cast<char>(v2 ? 2 : 1));
  out.push_back(0);
  const int len_bytes = v2 ? 4 : 2;
  for (int i = 0; i < len_bytes; ++i) {
    out.push_back(static_cast<char>((header_len >> (8 * i)) & 0xff));
  }
  out += dict;
  if (tensor.dtype() == DT_STRING) {
    for (const std::string& v : tensor.flat<std::string>()) {
      out += v;
      out.append(string_width - v.size(), '\0');
    }
  } else if (tensor.TotalBytes() > 0) {
    if (tensor.dtype() == DT_BOOL) {
      for (bool b : tensor.flat<bool>()) out.push_back(b ? 1 : 0);
    } else {
      out.append(static_cast<const char*>(tensor.raw_data()), tensor.TotalBytes());
    }
  }
  return out;
}

absl::StatusOr<Tensor> ReadNpyFile(const std::string& path) {
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (f == nullptr) return ErrnoStatus(errno, "cannot open .npy file", path);
  std::string bytes;
  char buf[1 << 16];
  while (true) {
    size_t n = std::fread(buf, 1, sizeof(buf), f.get());
    bytes.append(buf, n);
    if (n < sizeof(buf)) break;
  }
  if (std::ferror(f.get())) return ErrnoStatus(errno, "cannot read .npy file", path);
  absl::StatusOr<Tensor> t = ParseNpy(bytes);
  if (!t.ok()) return AddContext(t.status(), absl::StrCat("'", path, "'"));
  return t;
}

absl::Status WriteNpyFile(const Tensor& tensor, const std::string& path) {
  absl::StatusOr<std::string> bytes = EncodeNpy(tensor);
  if (!bytes.ok()) return AddContext(bytes.status(), absl::StrCat("writing '", path, "'"));
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return ErrnoStatus(errno, "cannot create .npy file", path);
  size_t written = std::fwrite(bytes->data(), 1, bytes->size(), f);
  int write_errno = errno;
  bool closed = std::fclose(f) == 0;
  if (written != bytes->size()) return ErrnoStatus(write_errno, "cannot write .npy file", path);
  if (!closed) return ErrnoStatus(errno, "cannot write .npy file", path);
  return absl::OkStatus();
}

}  // namespace sluice
