// Definitions of tf.data's ops: TensorFlow's names, inputs, outputs and attrs
// (core/ops/dataset_ops.cc, TF 2.x spelling with `metadata`), so that graph
// files TensorFlow wrote import unchanged. Kernels: *_dataset*.cc,
// iterator_kernels.cc.
#include "ops/data/dataset_ops.h"

#include <string>
#include <vector>

#include "base/status_macros.h"
#include "graph/shape_inference.h"

namespace sluice {
namespace {

absl::Status ScalarShape(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, TensorShape());
  return absl::OkStatus();
}

absl::Status NoOutputs(InferenceContext*) { return absl::OkStatus(); }

// IteratorGetNext's outputs: the shapes its output_shapes attr declares.
absl::Status DeclaredShapes(InferenceContext* c) {
  ASSIGN_OR_RETURN(std::vector<TensorShape> shapes,
                   c->GetAttr<std::vector<TensorShape>>("output_shapes"));
  for (int i = 0; i < c->num_outputs(); ++i) {
    c->set_output(i, i < static_cast<int>(shapes.size()) ? shapes[i] : TensorShape::Unknown());
  }
  return absl::OkStatus();
}

// A dataset op: inputs as given, a variant handle out, the element
// signature attrs and `metadata`.
OpDefBuilder DatasetOp(const char* name, std::vector<const char*> inputs,
                       bool typed_output = true) {
  OpDefBuilder b(name);
  for (const char* in : inputs) b.Input(in);
  b.Output("handle: variant");
  if (typed_output) {
    b.Attr("output_types: list(type) >= 1").Attr("output_shapes: list(shape) >= 1");
  }
  b.Attr("metadata: string = ''").SetShapeFn(ScalarShape);
  return b;
}

// Source datasets are stateful in TensorFlow (no constant folding of them).
OpDefBuilder SourceOp(const char* name, std::vector<const char*> inputs, bool typed = true) {
  OpDefBuilder b = DatasetOp(name, std::move(inputs), typed);
  b.SetIsStateful();
  return b;
}

constexpr const char* kDataset = "input_dataset: variant";
constexpr const char* kOtherArgs = "other_arguments: Targuments";

absl::Status RegisterDatasetDefs(OpRegistry* ops) {
  // Sources.
  RETURN_IF_ERROR(ops->Register(SourceOp("TensorDataset", {"components: Toutput_types"}, false)
                                    .Attr("Toutput_types: list(type) >= 1")
                                    .Attr("output_shapes: list(shape) >= 1")));
  RETURN_IF_ERROR(
      ops->Register(SourceOp("TensorSliceDataset", {"components: Toutput_types"}, false)
                        .Attr("Toutput_types: list(type) >= 1")
                        .Attr("output_shapes: list(shape) >= 1")
                        .Attr("is_files: bool = false")
                        .Attr("replicate_on_split: bool = false")));
  RETURN_IF_ERROR(ops->Register(
      SourceOp("RangeDataset", {"start: int64", "stop: int64", "step: int64"})
          .Attr("replicate_on_split: bool = false")));
  RETURN_IF_ERROR(ops->Register(SourceOp(
      "TFRecordDataset", {"filenames: string", "compression_type: string", "buffer_size: int64"},
      false)));
  RETURN_IF_ERROR(ops->Register(SourceOp("TFRecordDatasetV2",
                                         {"filenames: string", "compression_type: string",
                                          "buffer_size: int64", "byte_offsets: int64"},
                                         false)));
  RETURN_IF_ERROR(ops->Register(SourceOp(
      "TextLineDataset", {"filenames: string", "compression_type: string", "buffer_size: int64"},
      false)));
  RETURN_IF_ERROR(ops->Register(
      SourceOp("FixedLengthRecordDataset", {"filenames: string", "header_bytes: int64",
                                            "record_bytes: int64", "footer_bytes: int64",
                                            "buffer_size: int64"},
               false)));
  RETURN_IF_ERROR(ops->Register(SourceOp(
      "FixedLengthRecordDatasetV2",
      {"filenames: string", "header_bytes: int64", "record_bytes: int64", "footer_bytes: int64",
       "buffer_size: int64", "compression_type: string"},
      false)));

  // Functions over elements.
  RETURN_IF_ERROR(ops->Register(DatasetOp("MapDataset", {kDataset, kOtherArgs})
                                    .Attr("f: func")
                                    .Attr("Targuments: list(type) >= 0")
                                    .Attr("use_inter_op_parallelism: bool = true")
                                    .Attr("preserve_cardinality: bool = false")
                                    .Attr("force_synchronous: bool = false")));
  RETURN_IF_ERROR(ops->Register(
      DatasetOp("ParallelMapDataset", {kDataset, kOtherArgs, "num_parallel_calls: int32"})
          .Attr("f: func")
          .Attr("Targuments: list(type) >= 0")
          .Attr("use_inter_op_parallelism: bool = true")
          .Attr("sloppy: bool = false")
          .Attr("preserve_cardinality: bool = false")));
  RETURN_IF_ERROR(ops->Register(
      DatasetOp("ParallelMapDatasetV2", {kDataset, kOtherArgs, "num_parallel_calls: int64"})
          .Attr("f: func")
          .Attr("Targuments: list(type) >= 0")
          .Attr("use_inter_op_parallelism: bool = true")
          .Attr("deterministic: string = 'default'")
          .Attr("preserve_cardinality: bool = false")
          .Attr("use_unbounded_threadpool: bool = false")));
  RETURN_IF_ERROR(ops->Register(DatasetOp("FilterDataset", {kDataset, kOtherArgs})
                                    .Attr("predicate: func")
                                    .Attr("Targuments: list(type) >= 0")));
  RETURN_IF_ERROR(ops->Register(DatasetOp("FlatMapDataset", {kDataset, kOtherArgs})
                                    .Attr("f: func")
                                    .Attr("Targuments: list(type) >= 0")));
  RETURN_IF_ERROR(ops->Register(
      DatasetOp("InterleaveDataset",
                {kDataset, kOtherArgs, "cycle_length: int64", "block_length: int64"})
          .Attr("f: func")
          .Attr("Targuments: list(type) >= 0")));
  RETURN_IF_ERROR(ops->Register(
      DatasetOp("ParallelInterleaveDatasetV2", {kDataset, kOtherArgs, "cycle_length: int64",
                                                "block_length: int64",
                                                "num_parallel_calls: int64"})
          .Attr("f: func")
          .Attr("Targuments: list(type) >= 0")
          .Attr("sloppy: bool = false")));
  RETURN_IF_ERROR(ops->Register(
      DatasetOp("ParallelInterleaveDatasetV3", {kDataset, kOtherArgs, "cycle_length: int64",
                                                "block_length: int64",
                                                "num_parallel_calls: int64"})
          .Attr("f: func")
          .Attr("Targuments: list(type) >= 0")
          .Attr("deterministic: string = 'default'")));
  RETURN_IF_ERROR(ops->Register(
      DatasetOp("ParallelInterleaveDatasetV4",
                {kDataset, kOtherArgs, "cycle_length: int64", "block_length: int64",
                 "buffer_output_elements: int64", "prefetch_input_elements: int64",
                 "num_parallel_calls: int64"})
          .Attr("f: func")
          .Attr("Targuments: list(type) >= 0")
          .Attr("deterministic: string = 'default'")));

  // Batching.
  RETURN_IF_ERROR(ops->Register(
      DatasetOp("BatchDatasetV2", {kDataset, "batch_size: int64", "drop_remainder: bool"})
          .Attr("parallel_copy: bool = false")));
  RETURN_IF_ERROR(ops->Register(
      DatasetOp("PaddedBatchDatasetV2",
                {kDataset, "batch_size: int64", "padded_shapes: N * int64",
                 "padding_values: Toutput_types", "drop_remainder: bool"},
                false)
          .Attr("parallel_copy: bool = false")
          .Attr("Toutput_types: list(type) >= 1")
          .Attr("output_shapes: list(shape) >= 1")
          .Attr("N: int >= 1")));

  // Order and count.
  RETURN_IF_ERROR(ops->Register(
      DatasetOp("ShuffleDataset",
                {kDataset, "buffer_size: int64", "seed: int64", "seed2: int64"})
          .Attr("reshuffle_each_iteration: bool = true")));
  RETURN_IF_ERROR(ops->Register(DatasetOp(
      "ShuffleDatasetV2", {kDataset, "buffer_size: int64", "seed_generator: resource"})));
  RETURN_IF_ERROR(ops->Register(
      DatasetOp("ShuffleDatasetV3", {kDataset, "buffer_size: int64", "seed: int64",
                                     "seed2: int64", "seed_generator: resource"})
          .Attr("reshuffle_each_iteration: bool = true")));
  RETURN_IF_ERROR(ops->Register(
      DatasetOp("ShuffleAndRepeatDatasetV2",
                {kDataset, "buffer_size: int64", "seed: int64", "seed2: int64", "count: int64",
                 "seed_generator: resource"})
          .Attr("reshuffle_each_iteration: bool = true")));
  RETURN_IF_ERROR(ops->Register(
      DatasetOp("ShuffleAndRepeatDataset",
                {kDataset, "buffer_size: int64", "seed: int64", "seed2: int64", "count: int64"})
          .Attr("reshuffle_each_iteration: bool = true")));
  for (const char* name : {"RepeatDataset", "TakeDataset", "SkipDataset"}) {
    RETURN_IF_ERROR(ops->Register(DatasetOp(name, {kDataset, "count: int64"})));
  }
  RETURN_IF_ERROR(ops->Register(
      DatasetOp("ShardDataset", {kDataset, "num_shards: int64", "index: int64"})
          .Attr("require_non_empty: bool = false")));
  RETURN_IF_ERROR(ops->Register(DatasetOp("PrefetchDataset", {kDataset, "buffer_size: int64"})
                                    .Attr("slack_period: int = 0")
                                    .Attr("legacy_autotune: bool = true")
                                    .Attr("buffer_size_min: int = 0")));
  RETURN_IF_ERROR(ops->Register(DatasetOp("CacheDataset", {kDataset, "filename: string"})));
  RETURN_IF_ERROR(ops->Register(DatasetOp("ZipDataset", {"input_datasets: N * variant"})
                                    .Attr("N: int >= 1")));
  RETURN_IF_ERROR(ops->Register(
      DatasetOp("ConcatenateDataset", {kDataset, "another_dataset: variant"})));

  // Pass-through: Sluice runs the pipeline as written.
  {
    OpDefBuilder b("OptimizeDataset");
    b.Input(kDataset)
        .Input("optimizations: string")
        .Output("handle: variant")
        .Attr("output_types: list(type) >= 1")
        .Attr("output_shapes: list(shape) >= 1")
        .Attr("optimization_configs: list(string) = []")
        .SetShapeFn(ScalarShape);
    RETURN_IF_ERROR(ops->Register(b));
  }
  {
    OpDefBuilder b("OptimizeDatasetV2");
    b.Input(kDataset)
        .Input("optimizations_enabled: string")
        .Input("optimizations_disabled: string")
        .Input("optimizations_default: string")
        .Output("handle: variant")
        .Attr("output_types: list(type) >= 1")
        .Attr("output_shapes: list(shape) >= 1")
        .Attr("optimization_configs: list(string) = []")
        .SetShapeFn(ScalarShape);
    RETURN_IF_ERROR(ops->Register(b));
  }
  RETURN_IF_ERROR(ops->Register(
      DatasetOp("OptionsDataset", {kDataset}).Attr("serialized_options: string")));
  RETURN_IF_ERROR(ops->Register(
      DatasetOp("PrivateThreadPoolDataset", {kDataset, "num_threads: int64"}, true)));
  RETURN_IF_ERROR(ops->Register(DatasetOp("MaxIntraOpParallelismDataset",
                                          {kDataset, "max_intra_op_parallelism: int64"})));
  {
    OpDefBuilder b("ModelDataset");
    b.Input(kDataset)
        .Output("handle: variant")
        .Attr("algorithm: int = 0")
        .Attr("cpu_budget: int = 0")
        .Attr("ram_budget: int = 0")
        .Attr("output_types: list(type) >= 1")
        .Attr("output_shapes: list(shape) >= 1")
        .SetShapeFn(ScalarShape);
    RETURN_IF_ERROR(ops->Register(b));
  }
  return absl::OkStatus();
}

OpDefBuilder Stateful(const char* name) {
  OpDefBuilder b(name);
  b.SetIsStateful();
  return b;
}

absl::Status RegisterIteratorDefs(OpRegistry* ops) {
  for (const char* name : {"Iterator", "IteratorV2"}) {
    RETURN_IF_ERROR(ops->Register(Stateful(name)
                                      .Output("handle: resource")
                                      .Attr("shared_name: string")
                                      .Attr("container: string")
                                      .Attr("output_types: list(type) >= 1")
                                      .Attr("output_shapes: list(shape) >= 1")
                                      .SetShapeFn(ScalarShape)));
  }
  RETURN_IF_ERROR(ops->Register(Stateful("AnonymousIterator")
                                    .Output("handle: resource")
                                    .Attr("output_types: list(type) >= 1")
                                    .Attr("output_shapes: list(shape) >= 1")
                                    .SetShapeFn(ScalarShape)));
  RETURN_IF_ERROR(ops->Register(Stateful("AnonymousIteratorV2")
                                    .Output("handle: resource")
                                    .Output("deleter: variant")
                                    .Attr("output_types: list(type) >= 1")
                                    .Attr("output_shapes: list(shape) >= 1")
                                    .SetShapeFn(ScalarShape)));
  RETURN_IF_ERROR(ops->Register(Stateful("AnonymousIteratorV3")
                                    .Output("handle: resource")
                                    .Attr("output_types: list(type) >= 1")
                                    .Attr("output_shapes: list(shape) >= 1")
                                    .SetShapeFn(ScalarShape)));
  RETURN_IF_ERROR(ops->Register(Stateful("DeleteIterator")
                                    .Input("handle: resource")
                                    .Input("deleter: variant")
                                    .SetShapeFn(NoOutputs)));
  RETURN_IF_ERROR(ops->Register(Stateful("MakeIterator")
                                    .Input("dataset: variant")
                                    .Input("iterator: resource")
                                    .SetShapeFn(NoOutputs)));
  RETURN_IF_ERROR(ops->Register(Stateful("OneShotIterator")
                                    .Output("handle: resource")
                                    .Attr("dataset_factory: func")
                                    .Attr("output_types: list(type) >= 1")
                                    .Attr("output_shapes: list(shape) >= 1")
                                    .Attr("container: string = ''")
                                    .Attr("shared_name: string = ''")
                                    .SetShapeFn(ScalarShape)));
  for (const char* name : {"IteratorGetNext", "IteratorGetNextSync"}) {
    RETURN_IF_ERROR(ops->Register(Stateful(name)
                                      .Input("iterator: resource")
                                      .Output("components: output_types")
                                      .Attr("output_types: list(type) >= 1")
                                      .Attr("output_shapes: list(shape) >= 1")
                                      .SetShapeFn(DeclaredShapes)));
  }
  RETURN_IF_ERROR(ops->Register(Stateful("IteratorToStringHandle")
                                    .Input("resource_handle: resource")
                                    .Output("string_handle: string")
                                    .SetShapeFn(ScalarShape)));
  for (const char* name : {"IteratorFromStringHandle", "IteratorFromStringHandleV2"}) {
    RETURN_IF_ERROR(ops->Register(Stateful(name)
                                      .Input("string_handle: string")
                                      .Output("resource_handle: resource")
                                      .Attr("output_types: list(type) >= 0 = []")
                                      .Attr("output_shapes: list(shape) >= 0 = []")
                                      .SetShapeFn(ScalarShape)));
  }
  RETURN_IF_ERROR(ops->Register(Stateful("SerializeIterator")
                                    .Input("resource_handle: resource")
                                    .Output("serialized: variant")
                                    .Attr("external_state_policy: int = 0")
                                    .SetShapeFn(ScalarShape)));
  RETURN_IF_ERROR(ops->Register(Stateful("DeserializeIterator")
                                    .Input("resource_handle: resource")
                                    .Input("serialized: variant")
                                    .SetShapeFn(NoOutputs)));
  // The seed generators ShuffleDatasetV2/V3 take (TF 2's shuffle).
  RETURN_IF_ERROR(ops->Register(Stateful("AnonymousSeedGenerator")
                                    .Input("seed: int64")
                                    .Input("seed2: int64")
                                    .Input("reshuffle: bool")
                                    .Output("handle: resource")
                                    .Output("deleter: variant")
                                    .SetShapeFn(ScalarShape)));
  RETURN_IF_ERROR(ops->Register(
      Stateful("DummySeedGenerator").Output("handle: resource").SetShapeFn(ScalarShape)));
  RETURN_IF_ERROR(ops->Register(Stateful("DeleteSeedGenerator")
                                    .Input("handle: resource")
                                    .Input("deleter: variant")
                                    .SetShapeFn(NoOutputs)));
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterDatasetOps(OpRegistry* ops) {
  RETURN_IF_ERROR(RegisterDatasetDefs(ops));
  RETURN_IF_ERROR(RegisterIteratorDefs(ops));
  for (absl::string_view op : DatasetOpNames()) RETURN_IF_ERROR(ops->SetNoGradient(op));
  return absl::OkStatus();
}

std::vector<absl::string_view> DatasetOpNames() {
  return {"TensorDataset", "TensorSliceDataset", "RangeDataset", "TFRecordDataset",
          "TFRecordDatasetV2", "TextLineDataset", "FixedLengthRecordDataset",
          "FixedLengthRecordDatasetV2", "MapDataset", "ParallelMapDataset",
          "ParallelMapDatasetV2", "FilterDataset", "FlatMapDataset", "InterleaveDataset",
          "ParallelInterleaveDatasetV2", "ParallelInterleaveDatasetV3",
          "ParallelInterleaveDatasetV4", "BatchDatasetV2", "PaddedBatchDatasetV2",
          "ShuffleDataset", "ShuffleDatasetV2", "ShuffleDatasetV3", "ShuffleAndRepeatDataset",
          "ShuffleAndRepeatDatasetV2", "AnonymousSeedGenerator", "DummySeedGenerator",
          "DeleteSeedGenerator", "RepeatDataset", "TakeDataset",
          "SkipDataset", "ShardDataset", "PrefetchDataset", "CacheDataset", "ZipDataset",
          "ConcatenateDataset", "OptimizeDataset", "OptimizeDatasetV2", "ModelDataset",
          "OptionsDataset", "PrivateThreadPoolDataset", "MaxIntraOpParallelismDataset",
          "Iterator", "IteratorV2", "AnonymousIterator", "AnonymousIteratorV2",
          "AnonymousIteratorV3", "DeleteIterator", "MakeIterator", "OneShotIterator",
          "IteratorGetNext", "IteratorGetNextSync", "IteratorToStringHandle",
          "IteratorFromStringHandle", "IteratorFromStringHandleV2", "SerializeIterator",
          "DeserializeIterator"};
}

}  // namespace sluice
