"""Finds the CUDA toolkit at configure time and exposes it as @local_cuda.

    load("//bazel:cuda_configure.bzl", "cuda_configure")
    cuda_configure(name = "local_cuda")

The toolkit is looked for in $CUDA_PATH, else /usr/local/cuda. When found,
@local_cuda has cc_library targets for the headers (declared, so Bazel's
inclusion check accepts them) and cudart, and @local_cuda//:defs.bzl says
CUDA_FOUND = True, where nvcc is and where the libraries are (CUDA_LIB_DIR).
cuBLAS and NCCL are not linked: the GPU backend opens them when it first
needs them (runtime/gpu/cublas_library.h), looking in CUDA_LIB_DIR last. When not
found the targets are empty and CUDA_FOUND = False: GPU code is left out and
everything CPU still builds.
"""

def _lib_dir(ctx, root):
    for sub in ["lib64", "lib", "targets/x86_64-linux/lib"]:
        if ctx.path(root + "/" + sub + "/libcudart.so").exists:
            return root + "/" + sub
    return None

def _cuda_configure_impl(ctx):
    root = ctx.os.environ.get("CUDA_PATH", "").rstrip("/") or "/usr/local/cuda"
    nvcc = root + "/bin/nvcc"
    lib = _lib_dir(ctx, root)
    found = (ctx.path(nvcc).exists and lib != None and
             ctx.path(root + "/include/cuda_runtime.h").exists and
             ctx.path(lib + "/libcublas.so").exists)
    if not found:
        ctx.file("BUILD.bazel", """package(default_visibility = ["//visibility:public"])
# No CUDA toolkit at {root}: empty stand-ins.
cc_library(name = "cuda_headers")
cc_library(name = "cudart")
""".format(root = root))
        ctx.file("defs.bzl", "CUDA_FOUND = False\nNVCC = \"\"\nCUDA_ROOT = \"\"\nCUDA_LIB_DIR = \"\"\nNCCL_FOUND = False\n")
        return
    ctx.symlink(root + "/include", "include")
    has_nccl = ctx.path(lib + "/libnccl.so").exists and ctx.path(root + "/include/nccl.h").exists
    link = '"-L{lib}", "-Wl,-rpath,{lib}"'.format(lib = lib)
    ctx.file("BUILD.bazel", """package(default_visibility = ["//visibility:public"])
# The CUDA toolkit at {root}.
cc_library(
    name = "cuda_headers",
    hdrs = glob(["include/**"]),
    includes = ["include"],
)
cc_library(name = "cudart", linkopts = [{link}, "-lcudart"], deps = [":cuda_headers"])
""".format(root = root, link = link))
    ctx.file("defs.bzl", "CUDA_FOUND = True\nNVCC = \"{nvcc}\"\nCUDA_ROOT = \"{root}\"\nCUDA_LIB_DIR = \"{lib}\"\nNCCL_FOUND = {nccl}\n".format(
        nvcc = nvcc, root = root, lib = lib, nccl = "True" if has_nccl else "False"))

cuda_configure = repository_rule(
    implementation = _cuda_configure_impl,
    environ = ["CUDA_PATH"],
    local = True,
)
