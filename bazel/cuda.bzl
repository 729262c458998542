"""CUDA code in Sluice's BUILD files.

    load("//bazel:cuda.bzl", "cuda_library", "if_cuda")

    cuda_library(
        name = "cwise_gpu",
        srcs = ["gpu/cwise.cu"],        # compiled by nvcc
        hdrs = ["gpu/cwise.cu.h"],      # plain C++: what g++-compiled callers see
    )
    sluice_cc_library(name = "x", srcs = if_cuda(["x_gpu.cc"], ["x_nogpu.cc"]))

nvcc runs in a genrule (sm_90, position-independent host code, the
system g++ as host compiler); the object files become a cc_library linked
with cudart. .cu files include only the CUDA headers, the standard library
and the plain headers listed in `hdrs`, so nvcc never sees Abseil or
protobuf. Without a CUDA toolkit (@local_cuda's CUDA_FOUND is False)
cuda_library is an empty library and if_cuda picks its second argument.
"""

load("@local_cuda//:defs.bzl", "CUDA_FOUND", "CUDA_LIB_DIR", "NCCL_FOUND", "NVCC")

# Where the forwarding functions of cuBLAS and NCCL look last for the
# libraries (runtime/gpu/cublas_library.h).
CUDA_LIB_DIR_COPTS = ["-DSLUICE_CUDA_LIB_DIR=\\\"%s\\\"" % CUDA_LIB_DIR]

CUDA_ARCH_FLAGS = ["-gencode=arch=compute_90,code=sm_90"]

NVCC_FLAGS = [
    "-O3",
    "-std=c++17",
    "-Xcompiler=-fPIC",
    "-Xcompiler=-O2",
    "--expt-relaxed-constexpr",
    "-Wno-deprecated-gpu-targets",
]

def if_cuda(if_true, if_false = []):
    return if_true if CUDA_FOUND else if_false

def if_nccl(if_true, if_false = []):
    return if_true if CUDA_FOUND and NCCL_FOUND else if_false

def cuda_library(name, srcs, hdrs = [], deps = [], visibility = None, testonly = False):
    if not CUDA_FOUND:
        native.cc_library(name = name, hdrs = hdrs, deps = deps, visibility = visibility,
                          testonly = testonly)
        return
    repo = native.repository_name().lstrip("@")
    root = "external/" + repo if repo else "."
    gen_root = "$(GENDIR)/external/" + repo if repo else "$(GENDIR)"
    objs = []
    for src in srcs:
        base = src[:-len(".cu")] if src.endswith(".cu") else src
        obj = base + ".cu.o"
        native.genrule(
            name = name + "_" + base.replace("/", "_") + "_nvcc",
            srcs = [src] + hdrs,
            outs = [obj],
            cmd = " ".join([NVCC, "-c"] + NVCC_FLAGS + CUDA_ARCH_FLAGS + [
                "-I" + root,
                "-I" + gen_root,
                "$(location %s)" % src,
                "-o $(location %s)" % obj,
            ]),
            testonly = testonly,
            message = "nvcc " + src,
        )
        objs.append(obj)
    native.cc_library(
        name = name,
        srcs = objs,
        hdrs = hdrs,
        deps = deps + ["@local_cuda//:cudart"],
        visibility = visibility,
        testonly = testonly,
        alwayslink = True,
    )
