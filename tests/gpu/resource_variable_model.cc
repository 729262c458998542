#include "tests/gpu/resource_variable_model.h"

#include <cmath>

#include "base/status_macros.h"

namespace sluice::gpu_test {
namespace {

// A resource variable `name` of `shape` set from its fed initial value.
Output NewVariable(const Scope& s, const std::string& name, DataType dtype,
                   const TensorShape& shape, ResourceModel* m, std::vector<Node*>* assigns) {
  Output handle = ops::VarHandleOp(s.WithOpName(name), dtype, shape);
  Output initial = ops::Placeholder(s.WithOpName(name + "/initial_value"), dtype);
  assigns->push_back(ops::AssignVariableOp(s.WithOpName(name + "/assign"), handle, initial));
  m->initial_values.push_back({name, initial, dtype, shape});
  m->reads.push_back(ops::ReadVariableOp(s.WithOpName(name + "/value"), handle, dtype));
  return handle;
}

}  // namespace

absl::StatusOr<ResourceModel> BuildResourceModel(const Scope& s) {
  using M = ResourceModel;
  ResourceModel m;
  std::vector<Node*> assigns;
  const Output table = NewVariable(s, "table", DT_FLOAT, {M::kRows, M::kEmbed}, &m, &assigns);
  const TensorShape w_shape({M::kEmbed + M::kDense, M::kOut});
  const Output w = NewVariable(s, "w", DT_FLOAT, w_shape, &m, &assigns);
  const Output w_m = NewVariable(s, "w/adam_m", DT_FLOAT, w_shape, &m, &assigns);
  const Output w_v = NewVariable(s, "w/adam_v", DT_FLOAT, w_shape, &m, &assigns);
  const Output b = NewVariable(s, "b", DT_FLOAT, {M::kOut}, &m, &assigns);
  const Output b_accum = NewVariable(s, "b/momentum", DT_FLOAT, {M::kOut}, &m, &assigns);
  const Output c = NewVariable(s, "c", DT_FLOAT, {M::kOut}, &m, &assigns);
  const Output c_velocity = NewVariable(s, "c/velocity", DT_FLOAT, {M::kOut}, &m, &assigns);
  const Output steps = NewVariable(s, "steps", DT_INT64, {}, &m, &assigns);
  m.init = ops::NoOp(s.WithOpName("init").WithControlDependencies(assigns));

  m.ids = ops::Placeholder(s.WithOpName("ids"), DT_INT64);
  m.x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  m.y = ops::Placeholder(s.WithOpName("y"), DT_FLOAT);
  const Output rows = ops::ResourceGather(s.WithOpName("rows"), table, m.ids, DT_FLOAT);
  const Output w_read = ops::ReadVariableOp(s.WithOpName("w/read"), w, DT_FLOAT);
  const Output b_read = ops::ReadVariableOp(s.WithOpName("b/read"), b, DT_FLOAT);
  const Output c_read = ops::ReadVariableOp(s.WithOpName("c/read"), c, DT_FLOAT);
  const Output h = ops::ConcatV2(s, {rows, m.x}, int32_t{1});
  const Output out = ops::Add(s, ops::BiasAdd(s, ops::MatMul(s, h, w_read), b_read), c_read);
  m.loss = ops::Mean(s.WithOpName("loss"), ops::Square(s, ops::Sub(s, out, m.y)), {0, 1});
  ASSIGN_OR_RETURN(std::vector<Output> grads,
                   AddGradients(s, {m.loss}, {rows, w_read, b_read, c_read}));

  auto f = [&](float v) { return ops::Const(s, v); };
  std::vector<Node*> updates;
  updates.push_back(ops::ResourceScatterSub(s.WithOpName("table/update"), table, m.ids,
                                            ops::Mul(s, f(0.5f), grads[0])));
  updates.push_back(s.WithOpName("w/update")
                        .Op("ResourceApplyAdam")
                        .Input(w)
                        .Input(w_m)
                        .Input(w_v)
                        .Input(f(0.9f))    // beta1_power
                        .Input(f(0.99f))   // beta2_power
                        .Input(f(0.05f))   // lr
                        .Input(f(0.9f))    // beta1
                        .Input(f(0.999f))  // beta2
                        .Input(f(1e-7f))   // epsilon
                        .Input(grads[1])
                        .Finalize());
  updates.push_back(s.WithOpName("b/update")
                        .Op("ResourceApplyMomentum")
                        .Input(b)
                        .Input(b_accum)
                        .Input(f(0.1f))  // lr
                        .Input(grads[2])
                        .Input(f(0.9f))  // momentum
                        .Finalize());
  updates.push_back(s.WithOpName("c/update")
                        .Op("ResourceApplyKerasMomentum")
                        .Input(c)
                        .Input(c_velocity)
                        .Input(f(0.1f))  // lr
                        .Input(grads[3])
                        .Input(f(0.8f))  // momentum
                        .Attr("use_nesterov", true)
                        .Finalize());
  updates.push_back(
      ops::AssignAddVariableOp(s.WithOpName("steps/update"), steps, ops::Const(s, int64_t{1})));
  m.train = ops::NoOp(s.WithOpName("train").WithControlDependencies(updates));
  RETURN_IF_ERROR(s.status());
  return m;
}

std::vector<std::pair<Output, Tensor>> InitialFeeds(const ResourceModel& m, std::mt19937& rng) {
  std::uniform_real_distribution<float> uniform(-0.5f, 0.5f);
  std::vector<std::pair<Output, Tensor>> feeds;
  for (const ResourceModel::InitialValue& v : m.initial_values) {
    if (v.dtype == DT_INT64) {  // the counter
      feeds.push_back({v.placeholder, Tensor::Scalar<int64_t>(0)});
      continue;
    }
    std::vector<float> values(v.shape.num_elements());
    // Adam's second moment starts non-negative, as it stays.
    for (float& e : values) e = v.name == "w/adam_v" ? std::abs(uniform(rng)) : uniform(rng);
    feeds.push_back({v.placeholder, Tensor::FromVector(values, v.shape)});
  }
  return feeds;
}

}  // namespace sluice::gpu_test
