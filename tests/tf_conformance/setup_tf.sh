#!/usr/bin/env bash
# Installs TensorFlow's CPU wheel (the judge of tests/tf_conformance) and
# TensorBoard (tf.summary's writers, and the reader of the event files the
# suite compares) into ~/.cache/sluice-tf-venv. Idempotent; CI runs it
# before the tests. Needs PyPI; neither is a runtime dependency of Sluice.
set -euo pipefail
VENV="${HOME}/.cache/sluice-tf-venv"
TF_SPEC="${SLUICE_TF_SPEC:-tensorflow-cpu==2.21.*}"
TB_SPEC="${SLUICE_TB_SPEC:-tensorboard==2.21.*}"
if [[ -x "$VENV/bin/python" ]] && "$VENV/bin/python" -c "import tensorflow, tensorboard" 2>/dev/null; then
  echo "setup_tf: TensorFlow and TensorBoard present in $VENV"
  exit 0
fi
[[ -x "$VENV/bin/python" ]] || python3 -m venv "$VENV"
"$VENV/bin/pip" install -q --disable-pip-version-check "$TF_SPEC" "$TB_SPEC"
"$VENV/bin/python" -c "import tensorflow as tf; print('setup_tf: TensorFlow', tf.__version__)"
