# The image tools:launch --k8s names: Sluice's example programs, tools:server
# and tools:runner on Debian 12, built from this source tree with Debian's
# packages (setup.sh) and nothing else.
#
#   docker build -t me/sluice:1 .                  (CPU)
#   docker build --target gpu -t me/sluice-gpu:1 . (the CUDA backend, for
#                                                   --gpus_per_worker pods)
#   bazel run //tools:launch -- --ps=1 --workers=4 --k8s=/tmp/k8s --image=me/sluice:1 \
#       -- /app/between_graph_mlp --logdir=/data/logs
#
# /data is the job's shared volume (the manifests' storage.yaml): the ps
# tasks and the chief write each checkpoint there, and a restarted chief
# resumes from it.

ARG TARGETS="//examples:between_graph_mlp //examples:multi_worker_mlp \
    //examples:model_parallel_mlp //examples:mlp \
    //tools:server //tools:runner"
ARG PROGRAMS="examples/between_graph_mlp examples/multi_worker_mlp \
    examples/model_parallel_mlp examples/mlp \
    tools/server tools/runner"

FROM debian:12 AS build
ARG TARGETS
ARG PROGRAMS
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends ca-certificates sudo
WORKDIR /src
COPY . .
RUN SLUICE_SKIP_TORCH=1 bash setup.sh && \
    bazel build --curses=no ${TARGETS} && \
    mkdir -p /app && for p in ${PROGRAMS}; do cp "bazel-bin/$p" /app/; done

# The same programs with the GPU backend: bazel/cuda_configure.bzl finds the
# CUDA toolkit at /usr/local/cuda (NVIDIA's Debian 12 packages) and compiles
# the kernels with nvcc; cuBLAS and NCCL are opened at run time.
FROM debian:12 AS build-gpu
ARG TARGETS
ARG PROGRAMS
RUN apt-get update -qq && \
    apt-get install -y -qq --no-install-recommends ca-certificates sudo wget && \
    wget -q https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/cuda-keyring_1.1-1_all.deb && \
    dpkg -i cuda-keyring_1.1-1_all.deb && rm cuda-keyring_1.1-1_all.deb && \
    apt-get update -qq && \
    apt-get install -y -qq --no-install-recommends cuda-toolkit-13-0 libnccl-dev
WORKDIR /src
COPY . .
RUN SLUICE_SKIP_TORCH=1 bash setup.sh && \
    bazel build --curses=no ${TARGETS} && \
    mkdir -p /app && for p in ${PROGRAMS}; do cp "bazel-bin/$p" /app/; done

FROM debian:12-slim AS runtime-base
# The shared libraries the programs link (protobuf, Abseil, Thrift, OpenSSL,
# OpenBLAS, oneDNN, Graphviz, zlib, libjpeg, libpng, FarmHash).
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends \
        libprotobuf32 libabsl20220623 libthrift-0.17.0 libssl3 libopenblas0 libdnnl2 libgvc6 \
        zlib1g libjpeg62-turbo libpng16-16 libfarmhash0 ca-certificates && \
    rm -rf /var/lib/apt/lists/*
# Checkpoints and event files belong on the job's shared volume (the
# manifests mount it at /data); each pod's TLS key comes from its Secret.
VOLUME /data
ENTRYPOINT []

FROM runtime-base AS gpu
# The CUDA runtime, cuBLAS and NCCL from NVIDIA's Debian 12 repository; the
# driver comes from the node (the NVIDIA container toolkit mounts it).
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends wget && \
    wget -q https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/cuda-keyring_1.1-1_all.deb && \
    dpkg -i cuda-keyring_1.1-1_all.deb && rm cuda-keyring_1.1-1_all.deb && \
    apt-get update -qq && \
    apt-get install -y -qq --no-install-recommends cuda-cudart-13-0 libcublas-13-0 libnccl2 && \
    apt-get purge -y -qq wget && rm -rf /var/lib/apt/lists/*
ENV LD_LIBRARY_PATH=/usr/local/cuda/lib64 \
    NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility
COPY --from=build-gpu /app /app

# The default target: the CPU image.
FROM runtime-base AS cpu
COPY --from=build /app /app
