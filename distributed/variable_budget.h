// A task's memory budget for variables: a parameter server asked to hold
// more than it may (a whole embedding table) refuses the graph that declares
// them, naming the largest, instead of dying in an allocation half way
// through a step; the same table partitioned over more tasks fits.
//
//   RETURN_IF_ERROR(CheckVariableBudget(partitions, 256 << 20, "/job:ps/replica:0/task:0"));
//
// Counted: every VariableV2, Variable and VarHandleOp in the partitions with
// a fully defined shape and a fixed-size dtype (others are not known before
// they are assigned and are not counted). A variable registered by several
// graphs is counted in each (it is allocated once; each graph alone must
// fit).
//
// Errors: ResourceExhausted naming the task, the bytes needed, the budget
// and the largest variables. Thread-safety: a pure function.
#ifndef SLUICE_DISTRIBUTED_VARIABLE_BUDGET_H_
#define SLUICE_DISTRIBUTED_VARIABLE_BUDGET_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "graph/proto/graph.pb.h"

namespace sluice {

// `budget_bytes` <= 0: no budget.
absl::Status CheckVariableBudget(const std::map<std::string, tensorflow::GraphDef>& partitions,
                                 int64_t budget_bytes, const std::string& task);

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_VARIABLE_BUDGET_H_
