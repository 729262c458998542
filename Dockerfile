# The image tools:launch --k8s names: Sluice's example programs, tools:server
# and tools:runner on Debian 12, built from this source tree with Debian's
# packages (setup.sh) and nothing else.
#
#   docker build -t me/sluice:1 .
#   bazel run //tools:launch -- --ps=1 --workers=4 --k8s=/tmp/k8s --image=me/sluice:1 \
#       -- /app/between_graph_mlp --checkpoint_dir=/data/ckpt --logdir=/data/logs

FROM debian:12 AS build
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends ca-certificates sudo
WORKDIR /src
COPY . .
RUN SLUICE_SKIP_TORCH=1 bash setup.sh && \
    bazel build --curses=no //examples:between_graph_mlp //examples:multi_worker_mlp \
        //examples:model_parallel_mlp //examples:mlp //tools:server //tools:runner && \
    mkdir -p /app && \
    cp bazel-bin/examples/between_graph_mlp bazel-bin/examples/multi_worker_mlp \
       bazel-bin/examples/model_parallel_mlp bazel-bin/examples/mlp \
       bazel-bin/tools/server bazel-bin/tools/runner /app/

FROM debian:12-slim
# The shared libraries the programs link (protobuf, Abseil, Thrift, OpenSSL,
# OpenBLAS, Graphviz).
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends \
        libprotobuf32 libabsl20220623 libthrift-0.17.0 libssl3 libopenblas0 libdnnl2 libgvc6 && \
    rm -rf /var/lib/apt/lists/*
COPY --from=build /app /app
# Checkpoints and event files belong on the pod's volume (the manifests mount
# one at /data); the TLS credentials come from the job's Secret.
VOLUME /data
ENTRYPOINT []
