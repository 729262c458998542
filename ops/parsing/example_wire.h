// Reading tf.train.Example / SequenceExample straight from their protobuf
// wire bytes (graph/proto/example.proto, feature.proto), without building a
// message: the parsing ops (ops/parsing/example_parser.h) look up only the
// keys they were asked for and decode each list into its output tensor.
//
//   absl::Status s = example_wire::ForEachEntry(features_bytes,
//       [&](absl::string_view key, absl::string_view value) -> absl::Status {
//         example_wire::FeatureBytes f;
//         RETURN_IF_ERROR(example_wire::ParseFeature(value, &f));
//         ASSIGN_OR_RETURN(int64_t n, example_wire::CountValues(f));
//         ...
//       });
//
// Protobuf rules kept: unknown fields are skipped; a message field that
// occurs several times is the merge of its occurrences (ForEachFeatures
// visits each); for a oneof the last kind set wins; lists accept packed and
// unpacked encodings. Errors are InvalidArgument naming what was malformed
// and the byte offset within the message being read (truncated varint,
// length past the end, wire type 3/4 groups, a packed float list whose
// length is not a multiple of 4). Thread-safe (no state). Ownership: the
// string_views handed out point into the caller's bytes, which must outlive
// them.
#ifndef SLUICE_OPS_PARSING_EXAMPLE_WIRE_H_
#define SLUICE_OPS_PARSING_EXAMPLE_WIRE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace sluice {
namespace example_wire {

// A cursor over one message's bytes.
class WireReader {
 public:
  explicit WireReader(absl::string_view bytes) : data_(bytes) {}
  bool done() const { return pos_ >= data_.size(); }
  size_t pos() const { return pos_; }

  // The next field's number and wire type.
  absl::Status ReadTag(uint32_t* field, uint32_t* wire_type) {
    uint64_t tag;
    if (!ReadVarint(&tag)) return Malformed("truncated tag");
    *field = static_cast<uint32_t>(tag >> 3);
    *wire_type = static_cast<uint32_t>(tag & 7);
    if (*field == 0) return Malformed("field number 0");
    return absl::OkStatus();
  }
  bool ReadVarint(uint64_t* v) {
    uint64_t result = 0;
    for (int shift = 0; shift < 64 && pos_ < data_.size(); shift += 7) {
      const uint8_t b = static_cast<uint8_t>(data_[pos_++]);
      result |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        *v = result;
        return true;
      }
    }
    return false;
  }
  absl::Status ReadLengthDelimited(absl::string_view* out) {
    uint64_t n;
    if (!ReadVarint(&n)) return Malformed("truncated length");
    if (n > data_.size() - pos_) {
      return Malformed(absl::StrCat("length ", n, " runs past the end (", data_.size() - pos_,
                                    " bytes left)"));
    }
    *out = data_.substr(pos_, n);
    pos_ += n;
    return absl::OkStatus();
  }
  bool ReadFixed32(uint32_t* v) {
    if (data_.size() - pos_ < 4) return false;
    const auto* p = reinterpret_cast<const uint8_t*>(data_.data() + pos_);
    *v = uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
    pos_ += 4;
    return true;
  }
  // Skips a field's value of the given wire type.
  absl::Status Skip(uint32_t wire_type) {
    uint64_t v;
    absl::string_view s;
    switch (wire_type) {
      case 0:
        if (!ReadVarint(&v)) return Malformed("truncated varint");
        return absl::OkStatus();
      case 1:
        if (data_.size() - pos_ < 8) return Malformed("truncated fixed64");
        pos_ += 8;
        return absl::OkStatus();
      case 2:
        return ReadLengthDelimited(&s);
      case 5:
        if (data_.size() - pos_ < 4) return Malformed("truncated fixed32");
        pos_ += 4;
        return absl::OkStatus();
      default:
        return Malformed(absl::StrCat("unsupported wire type ", wire_type));
    }
  }
  absl::Status Malformed(absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(what, " at byte ", pos_));
  }

 private:
  absl::string_view data_;
  size_t pos_ = 0;
};

// Calls fn(key, value_bytes) for each entry of a map<string, Message> field
// number `field` of `message` (Features.feature, FeatureLists.feature_list),
// in wire order; a key that repeats is visited again (the last one wins).
template <typename Fn>
absl::Status ForEachEntry(absl::string_view message, Fn&& fn, uint32_t field = 1) {
  WireReader r(message);
  while (!r.done()) {
    uint32_t f = 0, wt = 0;
    absl::Status s = r.ReadTag(&f, &wt);
    if (!s.ok()) return s;
    if (f != field || wt != 2) {
      s = r.Skip(wt);
      if (!s.ok()) return s;
      continue;
    }
    absl::string_view entry;
    s = r.ReadLengthDelimited(&entry);
    if (!s.ok()) return s;
    WireReader e(entry);
    absl::string_view key, value;
    while (!e.done()) {
      uint32_t ef = 0, ewt = 0;
      s = e.ReadTag(&ef, &ewt);
      if (s.ok()) {
        if (ef == 1 && ewt == 2) {
          s = e.ReadLengthDelimited(&key);
        } else if (ef == 2 && ewt == 2) {
          s = e.ReadLengthDelimited(&value);
        } else {
          s = e.Skip(ewt);
        }
      }
      if (!s.ok()) return absl::InvalidArgumentError(absl::StrCat("map entry: ", s.message()));
    }
    s = fn(key, value);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

// Calls fn(bytes) for every occurrence of length-delimited field `field` of
// `message` (Example.features, SequenceExample.context / feature_lists,
// FeatureList.feature).
template <typename Fn>
absl::Status ForEachSubmessage(absl::string_view message, uint32_t field, Fn&& fn) {
  WireReader r(message);
  while (!r.done()) {
    uint32_t f = 0, wt = 0;
    absl::Status s = r.ReadTag(&f, &wt);
    if (!s.ok()) return s;
    if (f != field || wt != 2) {
      s = r.Skip(wt);
      if (!s.ok()) return s;
      continue;
    }
    absl::string_view sub;
    s = r.ReadLengthDelimited(&sub);
    if (!s.ok()) return s;
    s = fn(sub);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

enum class Kind { kNone, kBytes, kFloat, kInt64 };
const char* KindName(Kind kind);  // "none", "bytes", "float", "int64"

// One Feature: its kind and the bytes of its list message.
struct FeatureBytes {
  Kind kind = Kind::kNone;
  absl::string_view list;
};

// Reads a Feature message.
absl::Status ParseFeature(absl::string_view feature, FeatureBytes* out);

// Number of values in the feature's list (0 for kNone).
absl::StatusOr<int64_t> CountValues(const FeatureBytes& f);

// Writes the list's values (exactly CountValues of them) to out. The
// feature's kind must match the destination.
absl::Status ReadFloats(const FeatureBytes& f, float* out);
absl::Status ReadInt64s(const FeatureBytes& f, int64_t* out);
absl::Status ReadBytes(const FeatureBytes& f, std::string* out);

}  // namespace example_wire
}  // namespace sluice

#endif  // SLUICE_OPS_PARSING_EXAMPLE_WIRE_H_
