// runner: runs a GraphDef file with .npy feeds and fetches (see
// tools/runner_lib.h for the flags and behaviour).
//
//   bazel run //tools:runner -- --graph=model.pbtxt --feed=x=x.npy
//       --init=init --target=train --steps=10 --fetch=loss --out_dir=out
#include <iostream>
#include <string>
#include <vector>

#include "tools/runner_lib.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return sluice::RunnerMain(args, std::cout, std::cerr);
}
