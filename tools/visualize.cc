// visualize: draws a graph's device placement as SVG, PNG or Graphviz source
// (see tools/visualize_lib.h for the flags and the picture).
//
//   bazel run //tools:visualize -- --graph=model.pbtxt --devices=CPU:0,CPU:1 --auto
//       --out=placement.svg
#include <iostream>
#include <string>
#include <vector>

#include "tools/visualize_lib.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return sluice::VisualizeMain(args, std::cout, std::cerr);
}
