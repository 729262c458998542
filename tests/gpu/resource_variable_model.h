// A small model written with resource variables, as a TF graph with
// use_resource or a Keras layer writes it, for the GPU tests: an embedding
// table read by ResourceGather and updated by ResourceScatterSub, a dense
// layer whose kernel is updated by ResourceApplyAdam and whose bias by
// ResourceApplyMomentum, a second bias updated by ResourceApplyKerasMomentum
// (Nesterov), and an int64 step counter bumped by
// AssignAddVariableOp. Every variable is set by AssignVariableOp from a fed
// value ("<name>/initial_value"), so two sessions can start alike.
//
//   absl::StatusOr<ResourceModel> m = BuildResourceModel(root.WithDevice(kGpu0));
//   session->Run(m->InitialFeeds(rng), {}, {m->init});
//   session->Run({{m->ids, ids}, {m->x, x}, {m->y, y}}, {m->loss}, {m->train});
//
// Test-only; thread-compatible.
#ifndef SLUICE_TESTS_GPU_RESOURCE_VARIABLE_MODEL_H_
#define SLUICE_TESTS_GPU_RESOURCE_VARIABLE_MODEL_H_

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "sluice.h"

namespace sluice::gpu_test {

struct ResourceModel {
  static constexpr int64_t kRows = 10;   // table rows
  static constexpr int64_t kEmbed = 4;   // table columns
  static constexpr int64_t kDense = 3;   // x's columns
  static constexpr int64_t kOut = 2;     // y's columns

  Output ids;  // int64 [batch], distinct (ResourceScatterSub adds duplicates' updates)
  Output x;    // float [batch, kDense]
  Output y;    // float [batch, kOut]
  Output loss;
  Node* train = nullptr;
  Node* init = nullptr;
  // Each variable's initial value, fed to `init`; and a read of each.
  struct InitialValue {
    std::string name;  // the variable's
    Output placeholder;
    DataType dtype;
    TensorShape shape;
  };
  std::vector<InitialValue> initial_values;
  std::vector<Output> reads;
};

// Builds the model in `device` (a scope pinned to the device under test);
// the placeholders too.
absl::StatusOr<ResourceModel> BuildResourceModel(const Scope& device);

// Random initial values for m.initial_values (the counter starts at 0).
std::vector<std::pair<Output, Tensor>> InitialFeeds(const ResourceModel& m, std::mt19937& rng);

}  // namespace sluice::gpu_test

#endif  // SLUICE_TESTS_GPU_RESOURCE_VARIABLE_MODEL_H_
