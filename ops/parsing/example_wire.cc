#include "ops/parsing/example_wire.h"

#include <cstring>

namespace sluice {
namespace example_wire {

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kBytes: return "bytes";
    case Kind::kFloat: return "float";
    case Kind::kInt64: return "int64";
    case Kind::kNone: break;
  }
  return "none";
}

absl::Status ParseFeature(absl::string_view feature, FeatureBytes* out) {
  *out = FeatureBytes();
  WireReader r(feature);
  while (!r.done()) {
    uint32_t f = 0, wt = 0;
    absl::Status s = r.ReadTag(&f, &wt);
    if (!s.ok()) return s;
    if (f >= 1 && f <= 3 && wt == 2) {
      s = r.ReadLengthDelimited(&out->list);
      if (!s.ok()) return s;
      out->kind = f == 1 ? Kind::kBytes : f == 2 ? Kind::kFloat : Kind::kInt64;
      continue;
    }
    s = r.Skip(wt);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

namespace {

absl::Status ListError(const absl::Status& s) {
  return absl::InvalidArgumentError(absl::StrCat("bad value list: ", s.message()));
}

// Visits the list's values: packed(bytes) for a packed run of field 1,
// one(reader) for an unpacked value (the reader positioned on it).
template <typename Packed, typename One>
absl::Status VisitList(absl::string_view list, uint32_t unpacked_wire_type, Packed&& packed,
                       One&& one) {
  WireReader r(list);
  while (!r.done()) {
    uint32_t f = 0, wt = 0;
    absl::Status s = r.ReadTag(&f, &wt);
    if (!s.ok()) return ListError(s);
    if (f == 1 && wt == 2) {
      absl::string_view run;
      s = r.ReadLengthDelimited(&run);
      if (s.ok()) s = packed(run);
    } else if (f == 1 && wt == unpacked_wire_type) {
      s = one(r);
    } else {
      s = r.Skip(wt);
    }
    if (!s.ok()) return ListError(s);
  }
  return absl::OkStatus();
}

// Decodes the varints of a packed run; n of them when out is null (count).
absl::Status PackedVarints(absl::string_view run, int64_t* out, int64_t* n) {
  WireReader r(run);
  while (!r.done()) {
    uint64_t v;
    if (!r.ReadVarint(&v)) return r.Malformed("truncated packed varint");
    if (out != nullptr) out[*n] = static_cast<int64_t>(v);
    ++*n;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<int64_t> CountValues(const FeatureBytes& f) {
  int64_t n = 0;
  absl::Status s;
  switch (f.kind) {
    case Kind::kNone:
      return 0;
    case Kind::kFloat:
      s = VisitList(
          f.list, 5,
          [&](absl::string_view run) {
            if (run.size() % 4 != 0) {
              return absl::InvalidArgumentError(
                  absl::StrCat("packed floats of ", run.size(), " bytes"));
            }
            n += run.size() / 4;
            return absl::OkStatus();
          },
          [&](WireReader& r) {
            uint32_t v;
            if (!r.ReadFixed32(&v)) return r.Malformed("truncated float");
            ++n;
            return absl::OkStatus();
          });
      break;
    case Kind::kInt64:
      s = VisitList(
          f.list, 0, [&](absl::string_view run) { return PackedVarints(run, nullptr, &n); },
          [&](WireReader& r) {
            uint64_t v;
            if (!r.ReadVarint(&v)) return r.Malformed("truncated varint");
            ++n;
            return absl::OkStatus();
          });
      break;
    case Kind::kBytes:
      s = VisitList(
          f.list, 2,
          [&](absl::string_view) {
            ++n;
            return absl::OkStatus();
          },
          [&](WireReader&) { return absl::OkStatus(); });
      break;
  }
  if (!s.ok()) return s;
  return n;
}

absl::Status ReadFloats(const FeatureBytes& f, float* out) {
  if (f.kind == Kind::kNone) return absl::OkStatus();
  if (f.kind != Kind::kFloat) return absl::InternalError("not a float list");
  int64_t n = 0;
  return VisitList(
      f.list, 5,
      [&](absl::string_view run) {
        if (run.size() % 4 != 0) {
          return absl::InvalidArgumentError(absl::StrCat("packed floats of ", run.size(), " bytes"));
        }
        // The wire is little-endian, as is every host Sluice builds for.
        std::memcpy(out + n, run.data(), run.size());
        n += run.size() / 4;
        return absl::OkStatus();
      },
      [&](WireReader& r) {
        uint32_t v;
        if (!r.ReadFixed32(&v)) return r.Malformed("truncated float");
        std::memcpy(out + n++, &v, 4);
        return absl::OkStatus();
      });
}

absl::Status ReadInt64s(const FeatureBytes& f, int64_t* out) {
  if (f.kind == Kind::kNone) return absl::OkStatus();
  if (f.kind != Kind::kInt64) return absl::InternalError("not an int64 list");
  int64_t n = 0;
  return VisitList(
      f.list, 0, [&](absl::string_view run) { return PackedVarints(run, out, &n); },
      [&](WireReader& r) {
        uint64_t v;
        if (!r.ReadVarint(&v)) return r.Malformed("truncated varint");
        out[n++] = static_cast<int64_t>(v);
        return absl::OkStatus();
      });
}

absl::Status ReadBytes(const FeatureBytes& f, std::string* out) {
  if (f.kind == Kind::kNone) return absl::OkStatus();
  if (f.kind != Kind::kBytes) return absl::InternalError("not a bytes list");
  int64_t n = 0;
  return VisitList(
      f.list, 2,
      [&](absl::string_view run) {
        out[n++].assign(run.data(), run.size());
        return absl::OkStatus();
      },
      [&](WireReader&) { return absl::OkStatus(); });
}

}  // namespace example_wire
}  // namespace sluice
