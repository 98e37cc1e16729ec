#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance) against a service this
# script starts (tsx src/server.ts, SQLite in a temporary DATA_DIR, BASE_URL on localhost so the
# loopback rebinding protection is on). The suite needs Node >= 22 (fs.globSync): it runs under
# Node 24 from scripts/ensure-node24.sh; the service runs under the machine's Node.
# Scenarios: those of the package that apply to this server (tools, no resources/prompts/logging).
# The package (0.1.x) has no 2026-07-28 server scenario yet; the v2 client tests cover that revision.
# Exits non-zero when a scenario fails; prints one "N passed, N failed" line.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SCENARIOS=(${MCP_CONFORMANCE_SCENARIOS:-server-initialize ping tools-list dns-rebinding-protection})
NODE24="$(bash "$ROOT/scripts/ensure-node24.sh")"
SUITE="$ROOT/node_modules/@modelcontextprotocol/conformance/dist/index.js"

work="$(mktemp -d)"
port="$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

(
  cd "$ROOT"
  export PORT="$port" HOST=127.0.0.1 BASE_URL="http://localhost:$port" DATA_DIR="$work/data" LOG_LEVEL=warn
  # tsx itself, not through npx: npm exec runs it as a child and does not pass SIGTERM on, which left
  # the service running after every run.
  exec "$ROOT/node_modules/.bin/tsx" src/server.ts
) >"$work/server.log" 2>&1 &
server_pid=$!

for _ in $(seq 1 120); do
  if curl -fsS "http://127.0.0.1:$port/api/v1/health" >/dev/null 2>&1; then break; fi
  if ! kill -0 "$server_pid" 2>/dev/null; then cat "$work/server.log" >&2; echo "mcp-conformance: the service did not start" >&2; exit 1; fi
  sleep 0.5
done

passed=0
failed=0
for scenario in "${SCENARIOS[@]}"; do
  echo "== conformance: $scenario"
  if (cd "$work" && PATH="$NODE24:$PATH" node "$SUITE" server --url "http://localhost:$port/mcp" --scenario "$scenario"); then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "mcp-conformance: scenario $scenario failed" >&2
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
