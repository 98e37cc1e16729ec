#!/usr/bin/env bash
# The A2A project's own test kit (a2aproject/a2a-tck, branch 1.0-dev) against a service this script
# starts (tsx src/server.ts, SQLite in a temporary DATA_DIR, DEV_MODE so per-client limits are out
# of the way and loopback webhooks reach the kit's receiver). The kit scripts its agent by
# messageId prefix; scripts/a2a-tck-operator.mjs plays the operator through the admin API so
# tasks complete, ask for input or are rejected as the kit expects, and to see those messageIds it
# is a transparent proxy in front of the service: BASE_URL names it, so the agent card sends the
# kit through it (docs/a2a.md "Test kit").
#
#   scripts/a2a-tck.sh [KIT_DIR] [-- pytest args…]
#
# KIT_DIR (or A2A_TCK_DIR): an exported a2a-tck tree with a Python >= 3.11 venv in .venv (or a
# python3 that has its dependencies). Nothing is downloaded: without a kit the script says so and
# exits 0. A2A_TCK_LEVEL: must (default), should, may or all. A2A_TCK_SERVICE_DIR: the checkout
# whose src/server.ts is started (default: this one). A2A_TCK_TRANSPORT: the kit's --transport.
# A2A_TCK_POSTGRES_URL: run the service on a database of its own on that server (dropped after).
# A2A_TCK_KEEP_MESSAGE_IDS=1: pass the kit's reused messageIds on unchanged (scripts/a2a-tck-operator.mjs).
# Prints pytest's summary, then a tally by test module and by transport; exits with pytest's status.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KIT="${A2A_TCK_DIR:-}"
if [ $# -gt 0 ] && [ "$1" != "--" ]; then KIT="$1"; shift; fi
if [ $# -gt 0 ] && [ "$1" = "--" ]; then shift; fi
SERVICE_DIR="${A2A_TCK_SERVICE_DIR:-$ROOT}"
LEVEL="${A2A_TCK_LEVEL:-must}"

if [ -z "$KIT" ] || [ ! -d "$KIT/tests/compatibility" ]; then
  echo "a2a-tck: skipped: no test kit (pass an exported a2aproject/a2a-tck 1.0-dev tree as KIT_DIR or A2A_TCK_DIR; see docs/a2a.md \"Test kit\")"
  exit 0
fi
KIT="$(cd "$KIT" && pwd)"
PY="$KIT/.venv/bin/python"
[ -x "$PY" ] || PY="$(command -v python3)"
if ! "$PY" -c 'import sys, pytest, httpx, grpc, jsonschema; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "a2a-tck: skipped: $PY is not Python >= 3.11 with the kit's dependencies (pytest, httpx, grpcio, jsonschema)"
  exit 0
fi

work="$(mktemp -d)"
free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
port="$(free_port)"       # the service
proxy_port="$(free_port)" # the stand-in operator's proxy, which the card (BASE_URL) names
admin_key="tck-$(node -e 'console.log(require("crypto").randomBytes(16).toString("hex"))')"
base="http://localhost:$proxy_port"
server_pid=""
operator_pid=""
# A2A_TCK_POSTGRES_URL (postgres://user@host:port/db): a database of its own there instead of SQLite.
pg_db=""
pg() { (cd "$ROOT" && node -e 'const pg=require("pg");const c=new pg.Client(process.argv[1]);c.connect().then(()=>c.query(process.argv[2])).then(()=>c.end(),(e)=>{console.error(e.message);process.exit(1)})' "$A2A_TCK_POSTGRES_URL" "$1"); }
cleanup() {
  for pid in $operator_pid $server_pid; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [ -n "$pg_db" ]; then pg "DROP DATABASE IF EXISTS $pg_db" || true; fi
  if [ -n "${A2A_TCK_KEEP_LOGS:-}" ]; then
    mkdir -p "$A2A_TCK_KEEP_LOGS" && cp "$work"/*.log "$A2A_TCK_KEEP_LOGS"/ 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
database_url="sqlite:$work/data/service.db"
if [ -n "${A2A_TCK_POSTGRES_URL:-}" ]; then
  pg_db="a2a_tck_$(node -e 'console.log(require("crypto").randomBytes(6).toString("hex"))')"
  pg "CREATE DATABASE $pg_db"
  database_url="$(node -e 'const u=new URL(process.argv[1]);u.pathname="/"+process.argv[2];console.log(u.href)' "$A2A_TCK_POSTGRES_URL" "$pg_db")"
fi

(
  cd "$SERVICE_DIR"
  export PORT="$port" HOST=127.0.0.1 BASE_URL="$base" DATA_DIR="$work/data" DATABASE_URL="$database_url" LOG_LEVEL=warn
  export DEV_MODE=true ADMIN_KEY="$admin_key"
  # tsx itself, not through npx, so the kill below reaches the service (scripts/mcp-conformance.sh).
  exec "$SERVICE_DIR/node_modules/.bin/tsx" src/server.ts
) >"$work/server.log" 2>&1 &
server_pid=$!

for _ in $(seq 1 120); do
  if curl -fsS "http://127.0.0.1:$port/api/v1/health" >/dev/null 2>&1; then break; fi
  if ! kill -0 "$server_pid" 2>/dev/null; then cat "$work/server.log" >&2; echo "a2a-tck: the service did not start" >&2; exit 1; fi
  sleep 0.5
done

node "$ROOT/scripts/a2a-tck-operator.mjs" "$proxy_port" "http://127.0.0.1:$port" "$admin_key" >"$work/operator.log" 2>&1 &
operator_pid=$!
for _ in $(seq 1 40); do
  if curl -fsS "$base/api/v1/health" >/dev/null 2>&1; then break; fi
  sleep 0.25
done

args=(tests/compatibility/ "--sut-host=$base" --tb=short -q -p no:cacheprovider
  "--compatibility-report=reports/compatibility" "--junitxml=reports/junitreport.xml")
[ "$LEVEL" = "all" ] || args+=(-m "$LEVEL")
[ -z "${A2A_TCK_TRANSPORT:-}" ] || args+=("--transport=$A2A_TCK_TRANSPORT")
# run_tck.py always asks for pytest-html; the kit runs without it, so only ask when it is there.
if "$PY" -c 'import pytest_html' 2>/dev/null; then args+=("--html=reports/tck_report.html" --self-contained-html); fi

echo "a2a-tck: kit $KIT ($(cat "$KIT/KIT_COMMIT" 2>/dev/null || echo 'commit unknown')), level $LEVEL, service $SERVICE_DIR at $base, store ${database_url%%:*}"
mkdir -p "$KIT/reports" && rm -f "$KIT/reports/compatibility.json" "$KIT/reports/junitreport.xml"
status=0
(cd "$KIT" && "$PY" -m pytest "${args[@]}" "$@") || status=$?

# A tally by category (the kit's test module) and by transport, from the JUnit report pytest wrote.
"$PY" - "$KIT/reports/junitreport.xml" <<'EOF' || true
import collections, re, sys, xml.etree.ElementTree as ET
try:
    cases = list(ET.parse(sys.argv[1]).getroot().iter("testcase"))
except (OSError, ET.ParseError):
    sys.exit(0)
by_module, by_transport = collections.defaultdict(collections.Counter), collections.defaultdict(collections.Counter)
failing = []
for case in cases:
    failed = case.find("failure") is not None or case.find("error") is not None
    outcome = "failed" if failed else "skipped" if case.find("skipped") is not None else "passed"
    parts = case.get("classname", "").removeprefix("tests.compatibility.").split(".")
    module = ".".join(parts[:-1] if parts[-1].startswith("Test") else parts)
    found = re.search(r"(jsonrpc|http_json|grpc)", case.get("name", "") + " " + case.get("classname", ""))
    by_module[module][outcome] += 1
    by_transport[found.group(1) if found else "(card, any)"][outcome] += 1
    if failed:
        failing.append(f"{module}::{case.get('name')}")
line = lambda c: f"{c['passed']} passed, {c['failed']} failed, {c['skipped']} skipped"
print("a2a-tck: by category (test module)")
for module, counts in sorted(by_module.items()):
    print(f"  {module:<42} {line(counts)}")
print("a2a-tck: by transport")
for transport, counts in sorted(by_transport.items()):
    print(f"  {transport:<42} {line(counts)}")
print("a2a-tck: failing tests")
for name in failing:
    print(f"  {name}")
total = collections.Counter()
for counts in by_module.values():
    total.update(counts)
print(f"a2a-tck: {total['passed']} passed, {total['failed']} failed, {total['skipped']} skipped")
EOF
exit "$status"
