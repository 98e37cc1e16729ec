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
# Prints pytest's summary and the kit's per-requirement tally; exits with pytest's status.
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
cleanup() {
  for pid in $operator_pid $server_pid; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [ -n "${A2A_TCK_KEEP_LOGS:-}" ]; then
    mkdir -p "$A2A_TCK_KEEP_LOGS" && cp "$work"/*.log "$A2A_TCK_KEEP_LOGS"/ 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

(
  cd "$SERVICE_DIR"
  export PORT="$port" HOST=127.0.0.1 BASE_URL="$base" DATA_DIR="$work/data" LOG_LEVEL=warn
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

echo "a2a-tck: kit $KIT ($(cat "$KIT/KIT_COMMIT" 2>/dev/null || echo 'commit unknown')), level $LEVEL, service $SERVICE_DIR at $base"
mkdir -p "$KIT/reports" && rm -f "$KIT/reports/compatibility.json"
status=0
(cd "$KIT" && "$PY" -m pytest "${args[@]}" "$@") || status=$?

# The kit's own per-requirement verdicts, grouped by the requirement id's family.
"$PY" - "$KIT/reports/compatibility.json" <<'EOF' || true
import collections, json, sys
try:
    report = json.load(open(sys.argv[1]))
except OSError:
    sys.exit(0)
reqs = report.get("per_requirement", {})
print("a2a-tck: requirements by transport (the kit's reports/compatibility.json)")
for transport, t in sorted(report.get("per_transport", {}).items()):
    print(f"  {transport:<11} {t['passed']} passed, {t['failed']} failed, {t['skipped']} skipped of {t['total']}")
tally = collections.defaultdict(collections.Counter)
for rid, r in reqs.items():
    tally["-".join(rid.split("-")[:2])][r.get("status", "?")] += 1
print("a2a-tck: requirement verdicts by family")
for family, counts in sorted(tally.items()):
    print(f"  {family:<17} " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
for rid, r in sorted(reqs.items()):
    if r.get("status") == "FAIL":
        bad = [t for t, v in sorted(r.get("transports", {}).items()) if v == "FAIL"]
        print(f"  FAIL {rid} ({r.get('level', '?')}) on {', '.join(bad)}")
EOF
exit "$status"
