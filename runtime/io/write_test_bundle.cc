// Writes a small V2 checkpoint with BundleWriter, for the TensorFlow
// conformance suite to read with TensorFlow itself:
//
//   write_test_bundle PREFIX
//
// w float [2,2] {1, 2, 3, 4}; names string {"a", "", "bc"}; step int64 9;
// x double [3] {0.5, 1.5, 2.5}.
#include <cstdio>
#include <string>

#include "runtime/io/tensor_bundle.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_test_bundle PREFIX\n");
    return 2;
  }
  sluice::BundleWriter w(argv[1]);
  absl::Status s = w.Add("w", sluice::Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2}));
  if (s.ok()) s = w.Add("names", sluice::Tensor::FromVector<std::string>({"a", "", "bc"}));
  if (s.ok()) s = w.Add("step", sluice::Tensor::FromVector<int64_t>({9}, sluice::TensorShape({})));
  if (s.ok()) s = w.Add("x", sluice::Tensor::FromVector<double>({0.5, 1.5, 2.5}));
  if (s.ok()) s = w.Finish();
  if (!s.ok()) {
    std::fprintf(stderr, "write_test_bundle: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
