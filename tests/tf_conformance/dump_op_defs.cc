// Writes every op Sluice registers as TensorFlow's OpList proto (binary) to
// the file named by its argument, for the conformance suite to compare
// with TensorFlow's own OpDefs.
//
//   dump_op_defs /tmp/sluice_ops.pb
#include <cstdio>
#include <string>

#include "graph/op_def_proto.h"
#include "graph/proto/meta_graph.pb.h"
#include "ops/builtins.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: dump_op_defs OUT.pb\n");
    return 2;
  }
  ::tensorflow::OpList list;
  const sluice::OpRegistry* registry = sluice::BuiltinOps();
  for (const std::string& name : registry->ListOps()) {
    *list.add_op() = sluice::OpDefToProto(*registry->Find(name));
  }
  std::FILE* f = std::fopen(argv[1], "wb");
  if (f == nullptr) {
    std::perror(argv[1]);
    return 1;
  }
  const std::string bytes = list.SerializeAsString();
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  if (std::fclose(f) != 0 || !written) {
    std::perror(argv[1]);
    return 1;
  }
  return 0;
}
