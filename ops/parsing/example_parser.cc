#include "ops/parsing/example_parser.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "ops/parsing/example_wire.h"

namespace sluice {
namespace {

using example_wire::FeatureBytes;
using example_wire::Kind;

Kind KindOf(DataType dtype) {
  switch (dtype) {
    case DT_FLOAT: return Kind::kFloat;
    case DT_INT64: return Kind::kInt64;
    case DT_STRING: return Kind::kBytes;
    default: return Kind::kNone;
  }
}

// One configured key's feature in one example.
struct Slot {
  bool present = false;
  FeatureBytes feature;
};

std::string NameOf(const Tensor& names, int64_t i) {
  if (names.NumElements() == 0) return "<unknown>";
  return names.flat<std::string>()[i];
}

std::string Where(const Tensor& names, int64_t i, const std::string& key) {
  return absl::StrCat("Name: ", NameOf(names, i), ", Key: ", key, ", Index: ", i, ".  ");
}

absl::StatusOr<Tensor> Alloc(Allocator* a, DataType dtype, const TensorShape& shape) {
  if (a == nullptr) return Tensor(dtype, shape);
  return Tensor::Allocate(a, dtype, shape);
}

TensorShape Concat(const TensorShape& a, absl::Span<const int64_t> b) {
  std::vector<int64_t> dims = a.dims();
  dims.insert(dims.end(), b.begin(), b.end());
  return TensorShape(dims);
}

// Decodes f (of the dtype's kind, or kNone) into out's elements from `at`.
absl::Status ReadInto(const FeatureBytes& f, Tensor* out, int64_t at) {
  switch (out->dtype()) {
    case DT_FLOAT: return example_wire::ReadFloats(f, out->data<float>() + at);
    case DT_INT64: return example_wire::ReadInt64s(f, out->data<int64_t>() + at);
    default: return example_wire::ReadBytes(f, out->data<std::string>() + at);
  }
}

// Copies n elements of src from `from` to dst at `to`.
void CopyElements(const Tensor& src, int64_t from, Tensor* dst, int64_t to, int64_t n) {
  if (src.dtype() == DT_STRING) {
    const std::string* s = src.data<std::string>() + from;
    std::string* d = dst->data<std::string>() + to;
    for (int64_t k = 0; k < n; ++k) d[k] = s[k];
    return;
  }
  const size_t size = DataTypeSize(src.dtype());
  std::memcpy(static_cast<char*>(dst->raw_data()) + to * size,
              static_cast<const char*>(src.raw_data()) + from * size, n * size);
}

// Fills n elements of dst from `to` with src's element 0 (or zeros / "").
void FillWith(const Tensor& src, Tensor* dst, int64_t to, int64_t n) {
  const bool has = src.NumElements() > 0;
  switch (dst->dtype()) {
    case DT_FLOAT:
      std::fill_n(dst->data<float>() + to, n, has ? src.data<float>()[0] : 0.0f);
      break;
    case DT_INT64:
      std::fill_n(dst->data<int64_t>() + to, n, has ? src.data<int64_t>()[0] : int64_t{0});
      break;
    default:
      std::fill_n(dst->data<std::string>() + to, n,
                  has ? src.data<std::string>()[0] : std::string());
  }
}

// `where` builds the error's prefix (only on an error: this runs per example).
template <typename Where>
absl::Status CheckKind(const Slot& slot, DataType dtype, const Where& where) {
  if (!slot.present || slot.feature.kind == Kind::kNone || slot.feature.kind == KindOf(dtype)) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(where(), "Data types don't match. Data type: ",
                                                 example_wire::KindName(slot.feature.kind),
                                                 " but expected type: ", DataTypeName(dtype)));
}

template <typename Where>
absl::StatusOr<int64_t> Count(const Slot& slot, const Where& where) {
  if (!slot.present) return 0;
  absl::StatusOr<int64_t> n = example_wire::CountValues(slot.feature);
  if (!n.ok()) return absl::InvalidArgumentError(absl::StrCat(where(), n.status().message()));
  return *n;
}

// Records in slots[slot index] each configured feature of a Features message.
absl::Status CollectFeatures(absl::string_view features,
                             const absl::flat_hash_map<std::string, int>& keys, Slot* slots) {
  return example_wire::ForEachEntry(
      features, [&](absl::string_view key, absl::string_view value) -> absl::Status {
        auto it = keys.find(key);
        if (it == keys.end()) return absl::OkStatus();
        Slot& slot = slots[it->second];
        slot.present = true;
        absl::Status s = example_wire::ParseFeature(value, &slot.feature);
        if (!s.ok()) {
          return absl::InvalidArgumentError(absl::StrCat("feature '", key, "': ", s.message()));
        }
        return absl::OkStatus();
      });
}

// Fills the outputs of `config` for n examples of batch shape `batch` from
// slots[i * num_slots + slot].
absl::StatusOr<ExampleParseResult> FillOutputs(const ExampleParseConfig& config,
                                               const TensorShape& batch, int64_t n,
                                               const std::vector<Slot>& slots,
                                               const Tensor& names, Allocator* a,
                                               const std::vector<Tensor>* defaults) {
  const int num_slots = static_cast<int>(config.slots.size());
  ExampleParseResult r;
  // Dense.
  for (size_t j = 0; j < config.dense.size(); ++j) {
    const DenseFeatureSpec& spec = config.dense[j];
    const Tensor& default_value = defaults != nullptr ? (*defaults)[j] : spec.default_value;
    const int slot = static_cast<int>(j);
    const bool varlen = spec.shape.rank() > 0 && spec.shape.dim(0) < 0;
    int64_t stride = 1;  // elements of one row (varlen) or of the whole value
    for (int d = varlen ? 1 : 0; d < spec.shape.rank(); ++d) stride *= spec.shape.dim(d);
    std::vector<int64_t> counts(n);
    int64_t max_rows = 0;
    for (int64_t i = 0; i < n; ++i) {
      const Slot& s = slots[i * num_slots + slot];
      auto where = [&] { return Where(names, i, spec.key); };
      RETURN_IF_ERROR(CheckKind(s, spec.dtype, where));
      ASSIGN_OR_RETURN(counts[i], Count(s, where));
      if (varlen) {
        if (stride == 0 ? counts[i] != 0 : counts[i] % stride != 0) {
          return absl::InvalidArgumentError(absl::StrCat(
              where(), "Number of ", DataTypeName(spec.dtype), " values is not a multiple of ",
              stride, " (the elements of one row of shape ", spec.shape.DebugString(),
              "): values size: ", counts[i]));
        }
        max_rows = std::max(max_rows, stride == 0 ? 0 : counts[i] / stride);
      } else if (!s.present) {
        if (default_value.NumElements() == 0) {
          return absl::InvalidArgumentError(absl::StrCat(
              "Name: ", NameOf(names, i), ", Feature: ", spec.key, " (data type: ",
              DataTypeName(spec.dtype), ") is required but could not be found."));
        }
      } else if (counts[i] != stride) {
        return absl::InvalidArgumentError(absl::StrCat(
            where(), "Number of ", DataTypeName(spec.dtype), " values != expected.  Values size: ",
            counts[i], " but output shape: ", spec.shape.DebugString()));
      }
    }
    std::vector<int64_t> value_dims = spec.shape.dims();
    if (varlen) value_dims[0] = max_rows;
    const int64_t per_example = varlen ? max_rows * stride : stride;
    ASSIGN_OR_RETURN(Tensor out, Alloc(a, spec.dtype, Concat(batch, value_dims)));
    for (int64_t i = 0; i < n; ++i) {
      const Slot& s = slots[i * num_slots + slot];
      const int64_t at = i * per_example;
      if (varlen) {
        RETURN_IF_ERROR(ReadInto(s.feature, &out, at));
        FillWith(default_value, &out, at + counts[i], per_example - counts[i]);
      } else if (!s.present) {
        if (default_value.NumElements() == stride) {
          CopyElements(default_value, 0, &out, at, stride);
        } else {
          FillWith(default_value, &out, at, stride);
        }
      } else {
        absl::Status st = ReadInto(s.feature, &out, at);
        if (!st.ok()) return absl::InvalidArgumentError(absl::StrCat(Where(names, i, spec.key), st.message()));
      }
    }
    r.dense.push_back(std::move(out));
  }
  // Sparse and ragged: counts first, then one pass writing values.
  const int batch_rank = batch.rank();
  for (size_t j = 0; j < config.sparse.size() + config.ragged.size(); ++j) {
    const bool sparse = j < config.sparse.size();
    const std::string& key = sparse ? config.sparse[j].key : config.ragged[j - config.sparse.size()].key;
    const DataType dtype =
        sparse ? config.sparse[j].dtype : config.ragged[j - config.sparse.size()].dtype;
    const int slot = static_cast<int>(config.dense.size() + j);
    std::vector<int64_t> counts(n);
    int64_t total = 0, max_count = 0;
    for (int64_t i = 0; i < n; ++i) {
      const Slot& s = slots[i * num_slots + slot];
      auto where = [&] { return Where(names, i, key); };
      RETURN_IF_ERROR(CheckKind(s, dtype, where));
      ASSIGN_OR_RETURN(counts[i], Count(s, where));
      total += counts[i];
      max_count = std::max(max_count, counts[i]);
    }
    ASSIGN_OR_RETURN(Tensor values, Alloc(a, dtype, TensorShape({total})));
    int64_t at = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (counts[i] == 0) continue;
      RETURN_IF_ERROR(ReadInto(slots[i * num_slots + slot].feature, &values, at));
      at += counts[i];
    }
    if (sparse) {
      ASSIGN_OR_RETURN(Tensor indices, Alloc(a, DT_INT64, TensorShape({total, batch_rank + 1})));
      int64_t* idx = indices.data<int64_t>();
      std::vector<int64_t> batch_index(batch_rank, 0);
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t k = 0; k < counts[i]; ++k) {
          for (int d = 0; d < batch_rank; ++d) *idx++ = batch_index[d];
          *idx++ = k;
        }
        for (int d = batch_rank - 1; d >= 0; --d) {  // next batch index, row-major
          if (++batch_index[d] < batch.dim(d)) break;
          batch_index[d] = 0;
        }
      }
      ASSIGN_OR_RETURN(Tensor shape, Alloc(a, DT_INT64, TensorShape({batch_rank + 1})));
      for (int d = 0; d < batch_rank; ++d) shape.data<int64_t>()[d] = batch.dim(d);
      shape.data<int64_t>()[batch_rank] = max_count;
      r.sparse_indices.push_back(std::move(indices));
      r.sparse_values.push_back(std::move(values));
      r.sparse_shapes.push_back(std::move(shape));
    } else {
      const DataType splits_dtype = config.ragged[j - config.sparse.size()].splits_dtype;
      ASSIGN_OR_RETURN(Tensor splits, Alloc(a, splits_dtype, TensorShape({n + 1})));
      int64_t acc = 0;
      for (int64_t i = 0; i <= n; ++i) {
        if (splits_dtype == DT_INT32) {
          splits.data<int32_t>()[i] = static_cast<int32_t>(acc);
        } else {
          splits.data<int64_t>()[i] = acc;
        }
        if (i < n) acc += counts[i];
      }
      r.ragged_values.push_back(std::move(values));
      r.ragged_splits.push_back(std::move(splits));
    }
  }
  return r;
}

absl::Status CheckNames(const Tensor& serialized, const Tensor& names) {
  if (serialized.dtype() != DT_STRING) {
    return absl::InvalidArgumentError("serialized must be a string tensor");
  }
  if (names.IsInitialized() && names.NumElements() != 0 &&
      names.NumElements() != serialized.NumElements()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Expected len(names) == len(serialized), but got: ", names.NumElements(),
                     " vs. ", serialized.NumElements()));
  }
  return absl::OkStatus();
}

absl::Status NotAnExample(const Tensor& names, int64_t i, const char* what,
                          const absl::Status& s) {
  return absl::InvalidArgumentError(absl::StrCat("Name: ", NameOf(names, i), ", Index: ", i,
                                                 ".  Could not parse ", what, " input: ",
                                                 s.message()));
}

}  // namespace

absl::Status CheckDenseDefault(const DenseFeatureSpec& d, const Tensor& value) {
  if (!value.IsInitialized() || value.NumElements() == 0) return absl::OkStatus();
  const TensorShape& s = d.shape;
  if (value.dtype() != d.dtype) {
    return absl::InvalidArgumentError(absl::StrCat("dense feature '", d.key, "': default of type ",
                                                   DataTypeName(value.dtype()), ", expected ",
                                                   DataTypeName(d.dtype)));
  }
  const bool varlen = s.rank() > 0 && s.dim(0) < 0;
  if (varlen && value.NumElements() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("dense feature '", d.key,
                     "': a variable-length feature takes a scalar default (the padding), "
                     "got shape ", value.shape().DebugString()));
  }
  if (!varlen && value.NumElements() != 1 && value.NumElements() != s.num_elements()) {
    return absl::InvalidArgumentError(
        absl::StrCat("dense feature '", d.key, "': default_value has shape ",
                     value.shape().DebugString(), " but dense_shape is ", s.DebugString()));
  }
  return absl::OkStatus();
}

absl::Status ExampleParseConfig::Finish() {
  slots.clear();
  auto add = [&](const std::string& key, DataType dtype) -> absl::Status {
    if (KindOf(dtype) == Kind::kNone) {
      return absl::InvalidArgumentError(absl::StrCat("feature '", key, "': type ",
                                                     DataTypeName(dtype),
                                                     " is not one of float, int64, string"));
    }
    const int slot = static_cast<int>(slots.size());
    if (!slots.emplace(key, slot).second) {
      return absl::InvalidArgumentError(absl::StrCat("feature key '", key, "' is listed twice"));
    }
    return absl::OkStatus();
  };
  for (DenseFeatureSpec& d : dense) {
    RETURN_IF_ERROR(add(d.key, d.dtype));
    const TensorShape& s = d.shape;
    if (s.rank() < 0) {
      return absl::InvalidArgumentError(absl::StrCat("dense feature '", d.key, "': unknown rank"));
    }
    for (int k = 0; k < s.rank(); ++k) {
      if (s.dim(k) < 0 && k > 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("dense feature '", d.key, "': shape ", s.DebugString(),
                         " has an unknown dimension after the first"));
      }
    }
    RETURN_IF_ERROR(CheckDenseDefault(d, d.default_value));
  }
  for (const SparseFeatureSpec& s : sparse) RETURN_IF_ERROR(add(s.key, s.dtype));
  for (const RaggedFeatureSpec& r : ragged) {
    RETURN_IF_ERROR(add(r.key, r.dtype));
    if (r.splits_dtype != DT_INT32 && r.splits_dtype != DT_INT64) {
      return absl::InvalidArgumentError(
          absl::StrCat("ragged feature '", r.key, "': splits must be int32 or int64"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<ExampleParseResult> ParseExamples(const ExampleParseConfig& config,
                                                 const Tensor& serialized, const Tensor& names,
                                                 Allocator* allocator,
                                                 const std::vector<Tensor>* dense_defaults) {
  RETURN_IF_ERROR(CheckNames(serialized, names));
  if (dense_defaults != nullptr) {
    if (dense_defaults->size() != config.dense.size()) {
      return absl::InvalidArgumentError(absl::StrCat("expected ", config.dense.size(),
                                                     " dense defaults, got ",
                                                     dense_defaults->size()));
    }
    for (size_t j = 0; j < config.dense.size(); ++j) {
      RETURN_IF_ERROR(CheckDenseDefault(config.dense[j], (*dense_defaults)[j]));
    }
  }
  if (!config.ragged.empty() && serialized.dims() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ragged features need serialized of rank 0 or 1, got ", serialized.shape().DebugString()));
  }
  const int64_t n = serialized.NumElements();
  const size_t num_slots = config.slots.size();
  std::vector<Slot> slots(n * num_slots);
  const std::string* in = serialized.data<std::string>();
  for (int64_t i = 0; i < n; ++i) {
    absl::Status s = example_wire::ForEachSubmessage(in[i], 1, [&](absl::string_view features) {
      return CollectFeatures(features, config.slots, slots.data() + i * num_slots);
    });
    if (!s.ok()) return NotAnExample(names, i, "example", s);
  }
  return FillOutputs(config, serialized.shape(), n, slots, names, allocator, dense_defaults);
}

absl::StatusOr<SequenceExampleParseResult> ParseSequenceExamples(
    const ExampleParseConfig& context, const FeatureListConfig& lists, const Tensor& serialized,
    const Tensor& names, Allocator* allocator, const std::vector<Tensor>* dense_defaults) {
  RETURN_IF_ERROR(CheckNames(serialized, names));
  if (dense_defaults != nullptr) {
    if (dense_defaults->size() != context.dense.size()) {
      return absl::InvalidArgumentError("one context dense default per context dense key");
    }
    for (size_t j = 0; j < context.dense.size(); ++j) {
      RETURN_IF_ERROR(CheckDenseDefault(context.dense[j], (*dense_defaults)[j]));
    }
  }
  if (serialized.dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("serialized must be a vector, got ", serialized.shape().DebugString()));
  }
  absl::flat_hash_map<std::string, int> list_slots;
  for (const DenseFeatureSpec& d : lists.dense) {
    if (KindOf(d.dtype) == Kind::kNone || !d.shape.IsFullyDefined()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "feature list '", d.key, "': needs a float, int64 or string type and a full shape"));
    }
    if (!list_slots.emplace(d.key, list_slots.size()).second) {
      return absl::InvalidArgumentError(absl::StrCat("feature list key '", d.key, "' is listed twice"));
    }
  }
  for (const SparseFeatureSpec& s : lists.sparse) {
    if (KindOf(s.dtype) == Kind::kNone) {
      return absl::InvalidArgumentError(absl::StrCat("feature list '", s.key, "': bad type"));
    }
    if (!list_slots.emplace(s.key, list_slots.size()).second) {
      return absl::InvalidArgumentError(absl::StrCat("feature list key '", s.key, "' is listed twice"));
    }
  }
  const int64_t n = serialized.NumElements();
  const size_t num_context = context.slots.size();
  const size_t num_lists = list_slots.size();
  std::vector<Slot> context_slots(n * num_context);
  struct ListSlot {
    bool present = false;
    absl::string_view bytes;  // a FeatureList
  };
  std::vector<ListSlot> list_bytes(n * num_lists);
  const std::string* in = serialized.data<std::string>();
  for (int64_t i = 0; i < n; ++i) {
    absl::Status s = example_wire::ForEachSubmessage(in[i], 1, [&](absl::string_view features) {
      return CollectFeatures(features, context.slots, context_slots.data() + i * num_context);
    });
    if (s.ok()) {
      s = example_wire::ForEachSubmessage(in[i], 2, [&](absl::string_view feature_lists) {
        return example_wire::ForEachEntry(
            feature_lists, [&](absl::string_view key, absl::string_view value) {
              auto it = list_slots.find(key);
              if (it != list_slots.end()) list_bytes[i * num_lists + it->second] = {true, value};
              return absl::OkStatus();
            });
      });
    }
    if (!s.ok()) return NotAnExample(names, i, "sequence example", s);
  }
  SequenceExampleParseResult r;
  ASSIGN_OR_RETURN(r.context,
                   FillOutputs(context, serialized.shape(), n, context_slots, names, allocator,
                               dense_defaults));
  // Per list and example: the steps' features.
  auto steps_of = [&](const ListSlot& ls, const std::string& key, DataType dtype, int64_t i,
                      std::vector<FeatureBytes>* steps) -> absl::Status {
    steps->clear();
    if (!ls.present) return absl::OkStatus();
    absl::Status s = example_wire::ForEachSubmessage(ls.bytes, 1, [&](absl::string_view f) {
      FeatureBytes fb;
      RETURN_IF_ERROR(example_wire::ParseFeature(f, &fb));
      steps->push_back(fb);
      return absl::OkStatus();
    });
    if (!s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(Where(names, i, key), s.message()));
    }
    for (const FeatureBytes& fb : *steps) {
      RETURN_IF_ERROR(CheckKind({true, fb}, dtype, [&] { return Where(names, i, key); }));
    }
    return absl::OkStatus();
  };
  std::vector<FeatureBytes> steps;
  for (size_t j = 0; j < lists.dense.size(); ++j) {
    const DenseFeatureSpec& spec = lists.dense[j];
    const bool may_miss = std::find(lists.missing_assumed_empty.begin(),
                                    lists.missing_assumed_empty.end(),
                                    spec.key) != lists.missing_assumed_empty.end();
    const int64_t stride = spec.shape.num_elements();
    int64_t max_steps = 0;
    std::vector<int64_t> lengths(n);
    for (int64_t i = 0; i < n; ++i) {
      const ListSlot& ls = list_bytes[i * num_lists + j];
      if (!ls.present && !may_miss) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Name: ", NameOf(names, i), ", Feature list '", spec.key,
            "' is required but could not be found.  Did you mean to include it in "
            "feature_list_dense_missing_assumed_empty or feature_list_dense_defaults?"));
      }
      RETURN_IF_ERROR(steps_of(ls, spec.key, spec.dtype, i, &steps));
      for (size_t t = 0; t < steps.size(); ++t) {
        absl::StatusOr<int64_t> c = example_wire::CountValues(steps[t]);
        if (!c.ok() || *c != stride) {
          return absl::InvalidArgumentError(absl::StrCat(
              Where(names, i, spec.key), "Step ", t, ": number of ", DataTypeName(spec.dtype),
              " values != expected.  Values size: ", c.ok() ? absl::StrCat(*c) : std::string(c.status().message()),
              " but output shape: ", spec.shape.DebugString()));
        }
      }
      lengths[i] = static_cast<int64_t>(steps.size());
      max_steps = std::max(max_steps, lengths[i]);
    }
    std::vector<int64_t> dims = {n, max_steps};
    for (int64_t d : spec.shape.dims()) dims.push_back(d);
    ASSIGN_OR_RETURN(Tensor out, Alloc(allocator, spec.dtype, TensorShape(dims)));
    ASSIGN_OR_RETURN(Tensor len, Alloc(allocator, DT_INT64, TensorShape({n})));
    for (int64_t i = 0; i < n; ++i) {
      RETURN_IF_ERROR(steps_of(list_bytes[i * num_lists + j], spec.key, spec.dtype, i, &steps));
      const int64_t at = i * max_steps * stride;
      for (size_t t = 0; t < steps.size(); ++t) {
        RETURN_IF_ERROR(ReadInto(steps[t], &out, at + t * stride));
      }
      FillWith(Tensor(), &out, at + lengths[i] * stride, (max_steps - lengths[i]) * stride);
      len.data<int64_t>()[i] = lengths[i];
    }
    r.list_dense.push_back(std::move(out));
    r.list_dense_lengths.push_back(std::move(len));
  }
  for (size_t j = 0; j < lists.sparse.size(); ++j) {
    const SparseFeatureSpec& spec = lists.sparse[j];
    const size_t slot = lists.dense.size() + j;
    int64_t total = 0, max_steps = 0, max_count = 0;
    std::vector<std::vector<int64_t>> counts(n);
    for (int64_t i = 0; i < n; ++i) {
      RETURN_IF_ERROR(steps_of(list_bytes[i * num_lists + slot], spec.key, spec.dtype, i, &steps));
      for (const FeatureBytes& fb : steps) {
        absl::StatusOr<int64_t> c = example_wire::CountValues(fb);
        if (!c.ok()) {
          return absl::InvalidArgumentError(
              absl::StrCat(Where(names, i, spec.key), c.status().message()));
        }
        counts[i].push_back(*c);
        total += *c;
        max_count = std::max(max_count, *c);
      }
      max_steps = std::max<int64_t>(max_steps, steps.size());
    }
    ASSIGN_OR_RETURN(Tensor values, Alloc(allocator, spec.dtype, TensorShape({total})));
    ASSIGN_OR_RETURN(Tensor indices, Alloc(allocator, DT_INT64, TensorShape({total, 3})));
    int64_t at = 0;
    int64_t* idx = indices.data<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      RETURN_IF_ERROR(steps_of(list_bytes[i * num_lists + slot], spec.key, spec.dtype, i, &steps));
      for (size_t t = 0; t < steps.size(); ++t) {
        RETURN_IF_ERROR(ReadInto(steps[t], &values, at));
        for (int64_t k = 0; k < counts[i][t]; ++k) {
          *idx++ = i;
          *idx++ = static_cast<int64_t>(t);
          *idx++ = k;
        }
        at += counts[i][t];
      }
    }
    r.list_sparse_indices.push_back(std::move(indices));
    r.list_sparse_values.push_back(std::move(values));
    r.list_sparse_shapes.push_back(Tensor::FromVector<int64_t>({n, max_steps, max_count}));
  }
  return r;
}

}  // namespace sluice
