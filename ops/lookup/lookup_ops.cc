// Table op definitions and wrappers (kernels: lookup_kernels.cc).
#include "ops/lookup/lookup_ops.h"

#include <vector>

#include "base/status_macros.h"
#include "graph/attr_value.h"
#include "graph/shape_inference.h"

namespace sluice {
namespace {

absl::Status ScalarHandle(InferenceContext* c) {
  c->set_output(0, TensorShape({}));
  return absl::OkStatus();
}

OpDefBuilder TableOp(const char* name) {
  OpDefBuilder b(name);
  b.Output("table_handle: resource")
      .Attr("container: string = ''")
      .Attr("shared_name: string = ''")
      .Attr("use_node_name_sharing: bool = false")
      .Attr("key_dtype: type")
      .Attr("value_dtype: type")
      .SetIsStateful()
      .SetShapeFn(ScalarHandle);
  return b;
}

}  // namespace

absl::Status RegisterLookupOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(TableOp("HashTableV2")));
  RETURN_IF_ERROR(ops->Register(TableOp("MutableHashTableV2")));
  RETURN_IF_ERROR(ops->Register(TableOp("MutableDenseHashTableV2")
                                    .Input("empty_key: key_dtype")
                                    .Input("deleted_key: key_dtype")
                                    .Attr("value_shape: shape = []")
                                    .Attr("initial_num_buckets: int = 131072")
                                    .Attr("max_load_factor: float = 0.8")));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("InitializeTableV2")
                                    .Input("table_handle: resource")
                                    .Input("keys: Tkey")
                                    .Input("values: Tval")
                                    .Attr("Tkey: type")
                                    .Attr("Tval: type")
                                    .SetIsStateful()));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("InitializeTableFromTextFileV2")
                                    .Input("table_handle: resource")
                                    .Input("filename: string")
                                    .Attr("key_index: int >= -2")
                                    .Attr("value_index: int >= -2")
                                    .Attr("vocab_size: int >= -1 = -1")
                                    .Attr("delimiter: string = '\t'")
                                    .Attr("offset: int = 0")
                                    .SetIsStateful()));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("LookupTableFindV2")
                                    .Input("table_handle: resource")
                                    .Input("keys: Tin")
                                    .Input("default_value: Tout")
                                    .Output("values: Tout")
                                    .Attr("Tin: type")
                                    .Attr("Tout: type")
                                    .SetIsStateful()
                                    .SetShapeFn([](InferenceContext* c) {
                                      // keys' shape, and the table's value
                                      // shape (unknown here) after it.
                                      c->set_output(0, TensorShape::Unknown());
                                      return absl::OkStatus();
                                    })));
  for (const char* name : {"LookupTableInsertV2", "LookupTableImportV2"}) {
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(name)
                                      .Input("table_handle: resource")
                                      .Input("keys: Tin")
                                      .Input("values: Tout")
                                      .Attr("Tin: type")
                                      .Attr("Tout: type")
                                      .SetIsStateful()));
  }
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("LookupTableExportV2")
                                    .Input("table_handle: resource")
                                    .Output("keys: Tkeys")
                                    .Output("values: Tvalues")
                                    .Attr("Tkeys: type")
                                    .Attr("Tvalues: type")
                                    .SetIsStateful()
                                    .SetShapeFn([](InferenceContext* c) {
                                      c->set_output(0, TensorShape({-1}));
                                      c->set_output(1, TensorShape::Unknown());
                                      return absl::OkStatus();
                                    })));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("LookupTableSizeV2")
                                    .Input("table_handle: resource")
                                    .Output("size: int64")
                                    .SetIsStateful()
                                    .SetShapeFn(ScalarHandle)));
  for (const char* op :
       {"HashTableV2", "MutableHashTableV2", "MutableDenseHashTableV2", "InitializeTableV2",
        "InitializeTableFromTextFileV2", "LookupTableFindV2", "LookupTableInsertV2",
        "LookupTableImportV2", "LookupTableExportV2", "LookupTableSizeV2"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

namespace ops {
namespace {

OpBuilder& WithTableAttrs(OpBuilder& b, DataType key_dtype, DataType value_dtype,
                          const TableAttrs& a) {
  return b.Attr("container", a.container)
      .Attr("shared_name", a.shared_name)
      .Attr("use_node_name_sharing", a.use_node_name_sharing)
      .Attr("key_dtype", key_dtype)
      .Attr("value_dtype", value_dtype);
}

}  // namespace

Output HashTable(const Scope& s, DataType key_dtype, DataType value_dtype, const TableAttrs& a,
                 std::source_location loc) {
  OpBuilder b = s.Op("HashTableV2", loc);
  return WithTableAttrs(b, key_dtype, value_dtype, a).Finalize1();
}

Output MutableHashTable(const Scope& s, DataType key_dtype, DataType value_dtype,
                        const TableAttrs& a, std::source_location loc) {
  OpBuilder b = s.Op("MutableHashTableV2", loc);
  return WithTableAttrs(b, key_dtype, value_dtype, a).Finalize1();
}

Output MutableDenseHashTable(const Scope& s, Input empty_key, Input deleted_key,
                             DataType value_dtype, const TensorShape& value_shape,
                             const TableAttrs& a, std::source_location loc) {
  OpBuilder b = s.Op("MutableDenseHashTableV2", loc);
  b.Input(empty_key).Input(deleted_key).Attr("value_shape", value_shape);
  // key_dtype is inferred from empty_key.
  return b.Attr("container", a.container)
      .Attr("shared_name", a.shared_name)
      .Attr("use_node_name_sharing", a.use_node_name_sharing)
      .Attr("value_dtype", value_dtype)
      .Finalize1();
}

Node* InitializeTable(const Scope& s, Input table, Input keys, Input values,
                      std::source_location loc) {
  return s.Op("InitializeTableV2", loc).Input(table).Input(keys).Input(values).Finalize();
}

Node* InitializeTableFromTextFile(const Scope& s, Input table, Input filename, int64_t key_index,
                                  int64_t value_index, int64_t vocab_size,
                                  const std::string& delimiter, int64_t offset,
                                  std::source_location loc) {
  return s.Op("InitializeTableFromTextFileV2", loc)
      .Input(table)
      .Input(filename)
      .Attr("key_index", key_index)
      .Attr("value_index", value_index)
      .Attr("vocab_size", vocab_size)
      .Attr("delimiter", delimiter)
      .Attr("offset", offset)
      .Finalize();
}

Output LookupTableFind(const Scope& s, Input table, Input keys, Input default_value,
                       std::source_location loc) {
  return s.Op("LookupTableFindV2", loc).Input(table).Input(keys).Input(default_value).Finalize1();
}

Node* LookupTableInsert(const Scope& s, Input table, Input keys, Input values,
                        std::source_location loc) {
  return s.Op("LookupTableInsertV2", loc).Input(table).Input(keys).Input(values).Finalize();
}

Node* LookupTableImport(const Scope& s, Input table, Input keys, Input values,
                        std::source_location loc) {
  return s.Op("LookupTableImportV2", loc).Input(table).Input(keys).Input(values).Finalize();
}

LookupTableExportOutputs LookupTableExport(const Scope& s, Input table, DataType key_dtype,
                                           DataType value_dtype, std::source_location loc) {
  std::vector<Output> o = s.Op("LookupTableExportV2", loc)
                              .Input(table)
                              .Attr("Tkeys", key_dtype)
                              .Attr("Tvalues", value_dtype)
                              .FinalizeAll();
  o.resize(2);
  return {o[0], o[1]};
}

Output LookupTableSize(const Scope& s, Input table, std::source_location loc) {
  return s.Op("LookupTableSizeV2", loc).Input(table).Finalize1();
}

}  // namespace ops
}  // namespace sluice
