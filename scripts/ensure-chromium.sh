#!/usr/bin/env bash
# Browser tests drive Debian's Chromium (playwright-core never downloads a browser of its own).
# Runs before `npm test`: a no-op when Chromium is there; installs it with apt-get when it can.
set -euo pipefail
chromium="${CHROMIUM_PATH:-/usr/bin/chromium}"
[ -x "$chromium" ] && exit 0
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing Debian's chromium for the browser tests (apt-get install chromium)…" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  exit 0
fi
echo "The browser tests need Chromium at $chromium: install it (e.g. 'sudo apt-get install chromium') or set CHROMIUM_PATH." >&2
exit 1
