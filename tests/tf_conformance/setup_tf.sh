#!/usr/bin/env bash
# Installs TensorFlow's CPU wheel (the judge of tests/tf_conformance) into
# ~/.cache/sluice-tf-venv. Idempotent; CI runs it before the tests. Needs
# PyPI; TensorFlow is never a runtime dependency of Sluice.
set -euo pipefail
VENV="${HOME}/.cache/sluice-tf-venv"
TF_SPEC="${SLUICE_TF_SPEC:-tensorflow-cpu==2.21.*}"
if [[ -x "$VENV/bin/python" ]] && "$VENV/bin/python" -c "import tensorflow" 2>/dev/null; then
  echo "setup_tf: TensorFlow present in $VENV"
  exit 0
fi
python3 -m venv "$VENV"
"$VENV/bin/pip" install -q --disable-pip-version-check "$TF_SPEC"
"$VENV/bin/python" -c "import tensorflow as tf; print('setup_tf: TensorFlow', tf.__version__)"
