"""What every op library under ops/ depends on: the graph it adds nodes to,
the Scope builder, OpDefs and the kernel API."""

OP_DEPS = [
    "//base:status_macros",
    "//graph:attr_value",
    "//graph:graph",
    "//graph:op_def",
    "//graph:scope",
    "//runtime:kernel",
]
