// Test helpers shared by the strategies' equivalence tests: a two-layer
// regression net as a ReplicaFn, deterministic batches, and the reference a
// strategy must equal (the net trained on one device on the whole batch).
//
//   std::vector<Tensor> want = TrainOnOneDevice(8, [] { return NewSgd(); });
//   ... train with a strategy on kBatch examples per step ...
//   EXPECT_LT(MaxAbsDiff(got[v], want[v]), 1e-5f);
//
// Thread-compatible.
#ifndef SLUICE_TRAINING_STRATEGY_TESTUTIL_H_
#define SLUICE_TRAINING_STRATEGY_TESTUTIL_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "graph/scope.h"
#include "ops/training/optimizers.h"
#include "runtime/session.h"
#include "session/session_config.h"
#include "runtime/tensor.h"
#include "training/mirrored_strategy.h"

namespace sluice {
namespace strategy_testing {

constexpr int64_t kIn = 4;
constexpr int64_t kOut = 3;
constexpr int kBatch = 12;  // divides between 2 and 3 replicas
constexpr int kSteps = 5;
constexpr double kLearningRate = 0.1;

// "/job:localhost/replica:0/task:0/device:CPU:<i>", and CPU:0 .. CPU:k-1.
std::string Cpu(int i);
std::vector<std::string> Cpus(int k);

// A local session with 3 virtual CPUs of one thread each.
SessionConfig ThreeCpuOptions();

// x [kIn] -> relu(x w1 + b1) w2 + b2 -> [kOut], loss the mean squared error
// against in[1], metric the mean absolute error. Each call (replica) starts
// from different values, shifted by 0.25 per call when `calls` is given
// (and counted there); with calls == nullptr every call starts equal.
ReplicaFn MakeNet(int64_t hidden, int* calls);

struct Data {
  Tensor x;  // float [kBatch, kIn]
  Tensor y;  // float [kBatch, kOut]
};
Data StepData(int step);

float MaxAbsDiff(const Tensor& a, const Tensor& b);

using OptimizerFactory = std::function<std::unique_ptr<Optimizer>()>;
std::unique_ptr<Optimizer> NewSgd();
std::unique_ptr<Optimizer> NewMomentum();  // momentum 0.9

// The reference: MakeNet(hidden, nullptr) on CPU:0 trained kSteps steps of
// StepData with a new optimizer from `optimizer`; the variables' values.
std::vector<Tensor> TrainOnOneDevice(int64_t hidden, const OptimizerFactory& optimizer);

}  // namespace strategy_testing
}  // namespace sluice

#endif  // SLUICE_TRAINING_STRATEGY_TESTUTIL_H_
