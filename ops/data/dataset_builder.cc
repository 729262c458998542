#include "ops/data/dataset_builder.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/attr_value.h"

namespace sluice {
namespace data {
namespace {

constexpr int64_t kDefaultGraphSeed = 87654321;  // TensorFlow's

std::vector<TensorShape> ShapesOf(const ElementSpec& spec) {
  if (!spec.shapes.empty()) return spec.shapes;
  return std::vector<TensorShape>(spec.dtypes.size(), TensorShape::Unknown());
}

ElementSpec WithShapes(ElementSpec spec) {
  spec.shapes = ShapesOf(spec);
  return spec;
}

OpBuilder& Signature(OpBuilder& b, const ElementSpec& spec) {
  return b.SetAttr("output_types", MakeAttr(spec.dtypes))
      .SetAttr("output_shapes", MakeAttr(ShapesOf(spec)));
}

AttrValue FuncAttr(const ::tensorflow::NameAttrList& fn) {
  AttrValue v;
  *v.mutable_func() = fn;
  return v;
}

std::vector<DataType> TypesOf(absl::Span<const Output> outputs) {
  std::vector<DataType> types;
  for (const Output& o : outputs) types.push_back(o.valid() ? o.dtype() : DT_INVALID);
  return types;
}

TensorShape Batched(int64_t n, const TensorShape& shape) {
  if (shape.unknown_rank()) return shape;
  std::vector<int64_t> dims = {n};
  dims.insert(dims.end(), shape.dims().begin(), shape.dims().end());
  return TensorShape(dims);
}

std::pair<int64_t, int64_t> Seeds(std::optional<int64_t> seed) {
  if (!seed.has_value()) return {0, 0};
  return {kDefaultGraphSeed, *seed};
}

}  // namespace

Dataset Dataset::Unary(const char* op, std::vector<Input> inputs, ElementSpec out) const {
  OpBuilder b = scope_.Op(op);
  b.Input(handle_);
  for (const Input& in : inputs) b.Input(in);
  Signature(b, out);
  return Dataset(scope_, b.Finalize1(), WithShapes(std::move(out)));
}

Dataset Dataset::Map(const ::tensorflow::NameAttrList& fn, ElementSpec out,
                     const MapOptions& options, absl::Span<const Output> captured) const {
  const bool parallel = options.num_parallel_calls != 0;
  OpBuilder b = scope_.Op(parallel ? "ParallelMapDatasetV2" : "MapDataset");
  b.Input(handle_).InputList(captured);
  if (parallel) b.Input(Input(options.num_parallel_calls));
  b.SetAttr("f", FuncAttr(fn))
      .SetAttr("Targuments", MakeAttr(TypesOf(captured)))
      .Attr("use_inter_op_parallelism", true)
      .Attr("preserve_cardinality", options.preserve_cardinality);
  if (parallel) b.Attr("deterministic", options.deterministic ? "default" : "false");
  Signature(b, out);
  return Dataset(scope_, b.Finalize1(), WithShapes(std::move(out)));
}

Dataset Dataset::Filter(const ::tensorflow::NameAttrList& predicate,
                        absl::Span<const Output> captured) const {
  OpBuilder b = scope_.Op("FilterDataset");
  b.Input(handle_).InputList(captured);
  b.SetAttr("predicate", FuncAttr(predicate)).SetAttr("Targuments", MakeAttr(TypesOf(captured)));
  Signature(b, spec_);
  return Dataset(scope_, b.Finalize1(), spec_);
}

Dataset Dataset::FlatMap(const ::tensorflow::NameAttrList& fn, ElementSpec out,
                         absl::Span<const Output> captured) const {
  OpBuilder b = scope_.Op("FlatMapDataset");
  b.Input(handle_).InputList(captured);
  b.SetAttr("f", FuncAttr(fn)).SetAttr("Targuments", MakeAttr(TypesOf(captured)));
  Signature(b, out);
  return Dataset(scope_, b.Finalize1(), WithShapes(std::move(out)));
}

Dataset Dataset::Interleave(const ::tensorflow::NameAttrList& fn, ElementSpec out,
                            const InterleaveOptions& o, absl::Span<const Output> captured) const {
  const bool parallel = o.num_parallel_calls != 0;
  OpBuilder b = scope_.Op(parallel ? "ParallelInterleaveDatasetV4" : "InterleaveDataset");
  b.Input(handle_).InputList(captured);
  b.Input(Input(o.cycle_length)).Input(Input(o.block_length));
  if (parallel) {
    b.Input(Input(int64_t{-1}))   // buffer_output_elements: AUTOTUNE
        .Input(Input(int64_t{-1}))  // prefetch_input_elements: AUTOTUNE
        .Input(Input(o.num_parallel_calls));
    b.Attr("deterministic", o.deterministic ? "default" : "false");
  }
  b.SetAttr("f", FuncAttr(fn)).SetAttr("Targuments", MakeAttr(TypesOf(captured)));
  Signature(b, out);
  return Dataset(scope_, b.Finalize1(), WithShapes(std::move(out)));
}

Dataset Dataset::Batch(int64_t batch_size, bool drop_remainder) const {
  ElementSpec out = WithShapes(spec_);
  for (TensorShape& s : out.shapes) s = Batched(drop_remainder ? batch_size : -1, s);
  OpBuilder b = scope_.Op("BatchDatasetV2");
  b.Input(handle_).Input(Input(batch_size)).Input(Input(drop_remainder));
  b.Attr("parallel_copy", false);
  Signature(b, out);
  return Dataset(scope_, b.Finalize1(), std::move(out));
}

Dataset Dataset::PaddedBatch(int64_t batch_size,
                             const std::vector<std::vector<int64_t>>& padded_shapes,
                             absl::Span<const Output> padding_values, bool drop_remainder) const {
  ElementSpec out = WithShapes(spec_);
  std::vector<Input> shapes, values;
  for (size_t c = 0; c < spec_.dtypes.size(); ++c) {
    std::vector<int64_t> dims = c < padded_shapes.size() ? padded_shapes[c] : std::vector<int64_t>{};
    ::tensorflow::TensorProto p;
    p.set_dtype(DT_INT64);
    p.mutable_tensor_shape()->add_dim()->set_size(static_cast<int64_t>(dims.size()));
    for (int64_t d : dims) p.add_int64_val(d);
    shapes.push_back(Input(p));
    out.shapes[c] = Batched(drop_remainder ? batch_size : -1, TensorShape(dims));
    if (c < padding_values.size()) {
      values.push_back(padding_values[c]);
    } else {
      ::tensorflow::TensorProto zero;
      zero.set_dtype(spec_.dtypes[c]);
      zero.mutable_tensor_shape();
      values.push_back(Input(zero));
    }
  }
  OpBuilder b = scope_.Op("PaddedBatchDatasetV2");
  b.Input(handle_).Input(Input(batch_size)).InputList(shapes).InputList(values);
  b.Input(Input(drop_remainder));
  b.Attr("parallel_copy", false)
      .SetAttr("Toutput_types", MakeAttr(spec_.dtypes))
      .SetAttr("output_shapes", MakeAttr(out.shapes))
      .Attr("N", static_cast<int64_t>(spec_.dtypes.size()));
  return Dataset(scope_, b.Finalize1(), std::move(out));
}

Dataset Dataset::Shuffle(int64_t buffer_size, std::optional<int64_t> seed, bool reshuffle) const {
  const auto [s1, s2] = Seeds(seed);
  OpBuilder b = scope_.Op("ShuffleDataset");
  b.Input(handle_).Input(Input(buffer_size)).Input(Input(s1)).Input(Input(s2));
  b.Attr("reshuffle_each_iteration", reshuffle);
  Signature(b, spec_);
  return Dataset(scope_, b.Finalize1(), spec_);
}

Dataset Dataset::ShuffleAndRepeat(int64_t buffer_size, int64_t count,
                                  std::optional<int64_t> seed) const {
  const auto [s1, s2] = Seeds(seed);
  return Unary("ShuffleAndRepeatDataset",
               {Input(buffer_size), Input(s1), Input(s2), Input(count)}, spec_);
}

Dataset Dataset::Repeat(int64_t count) const { return Unary("RepeatDataset", {Input(count)}, spec_); }
Dataset Dataset::Take(int64_t count) const { return Unary("TakeDataset", {Input(count)}, spec_); }
Dataset Dataset::Skip(int64_t count) const { return Unary("SkipDataset", {Input(count)}, spec_); }

Dataset Dataset::Shard(int64_t num_shards, int64_t index) const {
  return Unary("ShardDataset", {Input(num_shards), Input(index)}, spec_);
}

Dataset Dataset::Prefetch(int64_t buffer_size) const {
  return Unary("PrefetchDataset", {Input(buffer_size)}, spec_);
}

Dataset Dataset::Cache(const std::string& filename) const {
  return Unary("CacheDataset", {Input(filename)}, spec_);
}

Dataset Dataset::Concatenate(const Dataset& other) const {
  return Unary("ConcatenateDataset", {Input(other.handle())}, spec_);
}

Iterator Dataset::MakeInitializableIterator(const std::string& shared_name) const {
  OpBuilder b = scope_.Op("IteratorV2");
  b.Attr("shared_name", shared_name).Attr("container", "");
  Signature(b, spec_);
  Output handle = b.Finalize1();
  Node* init = scope_.Op("MakeIterator").Input(handle_).Input(handle).Finalize();
  return Iterator(scope_, handle, init, spec_);
}

std::vector<Output> Iterator::GetNext() const {
  OpBuilder b = scope_.Op("IteratorGetNext");
  b.Input(handle_);
  Signature(b, spec_);
  return b.FinalizeAll();
}

Output Iterator::ToStringHandle() const {
  return scope_.Op("IteratorToStringHandle").Input(handle_).Finalize1();
}

Output Iterator::Serialize() const {
  return scope_.Op("SerializeIterator").Input(handle_).Finalize1();
}

Node* Iterator::Deserialize(Input state) const {
  return scope_.Op("DeserializeIterator").Input(handle_).Input(state).Finalize();
}

Dataset Range(const Scope& scope, int64_t start, int64_t stop, int64_t step) {
  ElementSpec spec{{DT_INT64}, {TensorShape()}};
  OpBuilder b = scope.Op("RangeDataset");
  b.Input(Input(start)).Input(Input(stop)).Input(Input(step));
  Signature(b, spec);
  return Dataset(scope, b.Finalize1(), spec);
}

namespace {
Dataset TensorsOrSlices(const Scope& scope, absl::Span<const Output> components, bool slices) {
  ElementSpec spec;
  for (const Output& c : components) {
    spec.dtypes.push_back(c.valid() ? c.dtype() : DT_INVALID);
    TensorShape shape = c.valid() ? c.shape() : TensorShape::Unknown();
    if (slices && !shape.unknown_rank() && shape.rank() > 0) shape.RemoveDim(0);
    spec.shapes.push_back(shape);
  }
  OpBuilder b = scope.Op(slices ? "TensorSliceDataset" : "TensorDataset");
  b.InputList(components)
      .SetAttr("Toutput_types", MakeAttr(spec.dtypes))
      .SetAttr("output_shapes", MakeAttr(spec.shapes));
  return Dataset(scope, b.Finalize1(), spec);
}

Dataset StringDataset(const Scope& scope, OpBuilder& b) {
  return Dataset(scope, b.Finalize1(), ElementSpec{{DT_STRING}, {TensorShape()}});
}
}  // namespace

Dataset Tensors(const Scope& scope, absl::Span<const Output> components) {
  return TensorsOrSlices(scope, components, false);
}

Dataset TensorSlices(const Scope& scope, absl::Span<const Output> components) {
  return TensorsOrSlices(scope, components, true);
}

Dataset TFRecordDataset(const Scope& scope, Input filenames, const std::string& compression,
                        int64_t buffer_size) {
  OpBuilder b = scope.Op("TFRecordDataset");
  b.Input(filenames).Input(Input(compression)).Input(Input(buffer_size));
  return StringDataset(scope, b);
}

Dataset TextLineDataset(const Scope& scope, Input filenames, const std::string& compression,
                        int64_t buffer_size) {
  OpBuilder b = scope.Op("TextLineDataset");
  b.Input(filenames).Input(Input(compression)).Input(Input(buffer_size));
  return StringDataset(scope, b);
}

Dataset FixedLengthRecordDataset(const Scope& scope, Input filenames, int64_t record_bytes,
                                 int64_t header_bytes, int64_t footer_bytes, int64_t buffer_size) {
  OpBuilder b = scope.Op("FixedLengthRecordDataset");
  b.Input(filenames)
      .Input(Input(header_bytes))
      .Input(Input(record_bytes))
      .Input(Input(footer_bytes))
      .Input(Input(buffer_size));
  return StringDataset(scope, b);
}

Dataset Zip(const Scope& scope, absl::Span<const Dataset> datasets) {
  ElementSpec spec;
  std::vector<Output> handles;
  for (const Dataset& d : datasets) {
    handles.push_back(d.handle());
    spec.dtypes.insert(spec.dtypes.end(), d.spec().dtypes.begin(), d.spec().dtypes.end());
    std::vector<TensorShape> shapes = ShapesOf(d.spec());
    spec.shapes.insert(spec.shapes.end(), shapes.begin(), shapes.end());
  }
  OpBuilder b = scope.Op("ZipDataset");
  b.InputList(handles).Attr("N", static_cast<int64_t>(handles.size()));
  Signature(b, spec);
  return Dataset(scope, b.Finalize1(), spec);
}

Iterator OneShotIterator(const Scope& scope, const ::tensorflow::NameAttrList& dataset_factory,
                         ElementSpec spec, const std::string& shared_name) {
  spec = WithShapes(std::move(spec));
  OpBuilder b = scope.Op("OneShotIterator");
  b.SetAttr("dataset_factory", FuncAttr(dataset_factory))
      .Attr("container", "")
      .Attr("shared_name", shared_name);
  Signature(b, spec);
  return Iterator(scope, b.Finalize1(), nullptr, std::move(spec));
}

}  // namespace data
}  // namespace sluice
