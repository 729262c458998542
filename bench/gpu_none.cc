// The GPU benchmarks (gpu_matmul, gpu_mlp_step, gpu_copy_bandwidth) when
// Sluice is built without the CUDA toolkit: one line saying so, exit 0.
#include <cstdio>

int main() {
  std::printf("gpu: none (built without CUDA)\n");
  return 0;
}
