#!/usr/bin/env bash
# Installs the Python client (clients/python) into a virtual environment and runs its pytest suite
# against a real service the suite starts itself (tsx src/server.ts, SQLite in a temporary DATA_DIR).
# Idempotent; works as root on a fresh machine. Needs node_modules (npm ci) and python3 >= 3.11.
# Dependencies come from the configured package index (pip); when it cannot be reached, from the
# Debian packages python3-httpx, python3-cryptography and python3-pytest, with a venv that sees
# the system's site-packages. Prints pytest's summary line; exits non-zero when a test fails.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLIENT="$ROOT/clients/python"
VENV="${PYTHON_CLIENT_VENV:-$CLIENT/.venv}"
PYTHON="${PYTHON:-python3}"

if ! "$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; then
  PYTHON=/usr/bin/python3
fi

venv_ok() { [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c 'import httpx, cryptography, pytest, human_task_client' 2>/dev/null; }

# One retry per index, not pip's five: on a machine whose configured indexes include one it cannot
# reach (this one's pypi.org beside local file indexes), pip waited ~7.5 s of back-off for each of
# the ~16 packages, over two minutes of CI, before taking them from the index that answers.
install_from_index() {
  "$PYTHON" -m venv "$VENV" &&
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --retries 1 -e "$CLIENT[test]"
}

install_from_debian() {
  echo "python-client-tests: the package index is not reachable; using Debian packages" >&2
  if command -v apt-get >/dev/null; then
    apt-get install -y -qq python3-venv python3-httpx python3-cryptography python3-pytest >/dev/null
  fi
  rm -rf "$VENV"
  /usr/bin/python3 -m venv --system-site-packages "$VENV"
  # The package itself has no build step worth an index: put it on the path directly.
  "$VENV/bin/python" -c 'import site, sys; print(site.getsitepackages()[0])' | {
    read -r site
    echo "$CLIENT" >"$site/human-task-client.pth"
  }
}

if ! venv_ok; then
  rm -rf "$VENV"
  install_from_index >/dev/null 2>&1 || install_from_debian
fi
venv_ok || { echo "python-client-tests: could not set up $VENV" >&2; exit 1; }

cd "$CLIENT"
set +e
output="$("$VENV/bin/python" -m pytest -q -p no:cacheprovider 2>&1)"
status=$?
set -e
if [ $status -ne 0 ]; then printf '%s\n' "$output"; fi
# pytest's summary line, e.g. "35 passed in 12.34s".
printf '%s\n' "$output" | tail -n 1
exit $status
