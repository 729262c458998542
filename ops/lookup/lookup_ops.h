// TensorFlow's table ops (its core/ops/lookup_ops.cc), the vocabularies and
// id maps of feature columns: HashTableV2 (filled once by InitializeTableV2
// or InitializeTableFromTextFileV2), MutableHashTableV2,
// MutableDenseHashTableV2, and LookupTable{Find,Insert,Import,Export,Size}V2
// on any of them. Tables live in the device's ResourceMgr (lookup_table.h);
// a handle is a DT_RESOURCE scalar "<container>\x1f<name>". No op has a
// gradient.
//
//   Output table = ops::HashTable(s, DT_STRING, DT_INT64);
//   Node* init = ops::InitializeTableFromTextFile(s, table, "/data/vocab.txt", -2, -1);
//   Output ids = ops::LookupTableFind(s, table, words, ops::Const(s, int64_t{-1}));
//
// InitializeTableFromTextFileV2 reads its file through the graph file fence
// (ops/io/file_write_policy.h: a server's graphs read only under the job's
// roots), regular files only. Columns: key_index / value_index name a
// field (split by `delimiter`), -1 the line number, -2 the whole line;
// vocab_size (-1: all lines) and offset (added to line numbers) as
// TensorFlow's. Errors: TensorFlow's ("Table not initialized.", a key or
// value of the wrong dtype, "Using the empty_key as a table key is not
// allowed"), NotFound naming a table that is not there, InvalidArgument
// naming the line of a text file that does not parse.
//
// Thread-safety: as Scope; tables lock themselves.
#ifndef SLUICE_OPS_LOOKUP_LOOKUP_OPS_H_
#define SLUICE_OPS_LOOKUP_LOOKUP_OPS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterLookupOps(OpRegistry* ops);
void RegisterLookupKernels(KernelRegistry* kernels);

namespace ops {

struct TableAttrs {
  std::string container;
  std::string shared_name;
  bool use_node_name_sharing = false;
};
Output HashTable(const Scope& scope, DataType key_dtype, DataType value_dtype,
                 const TableAttrs& attrs = {},
                 std::source_location loc = std::source_location::current());
Output MutableHashTable(const Scope& scope, DataType key_dtype, DataType value_dtype,
                        const TableAttrs& attrs = {},
                        std::source_location loc = std::source_location::current());
Output MutableDenseHashTable(const Scope& scope, Input empty_key, Input deleted_key,
                             DataType value_dtype, const TensorShape& value_shape,
                             const TableAttrs& attrs = {},
                             std::source_location loc = std::source_location::current());
Node* InitializeTable(const Scope& scope, Input table, Input keys, Input values,
                          std::source_location loc = std::source_location::current());
Node* InitializeTableFromTextFile(const Scope& scope, Input table, Input filename,
                                      int64_t key_index, int64_t value_index,
                                      int64_t vocab_size = -1, const std::string& delimiter = "\t",
                                      int64_t offset = 0,
                                      std::source_location loc = std::source_location::current());
Output LookupTableFind(const Scope& scope, Input table, Input keys, Input default_value,
                       std::source_location loc = std::source_location::current());
Node* LookupTableInsert(const Scope& scope, Input table, Input keys, Input values,
                            std::source_location loc = std::source_location::current());
Node* LookupTableImport(const Scope& scope, Input table, Input keys, Input values,
                            std::source_location loc = std::source_location::current());
struct LookupTableExportOutputs {
  Output keys, values;
};
LookupTableExportOutputs LookupTableExport(const Scope& scope, Input table, DataType key_dtype,
                                           DataType value_dtype,
                                           std::source_location loc = std::source_location::current());
Output LookupTableSize(const Scope& scope, Input table,
                       std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_LOOKUP_LOOKUP_OPS_H_
