#!/usr/bin/env bash
# Say which integration suites ran, from the log their harnesses write:
# each test that starts an npm MCP server (tools/mcp/mcptest), Chromium
# (server/browsertest), a Temporal dev server (internal/temporaltest) or
# the npm clients (internal/npmclients)
# appends "suite<TAB>binary<TAB>test folder<TAB>test name" to the file
# named by $PLANNER_INTEGRATION_LOG, which make test sets.
#
# Usage: scripts/integration-report.sh [--require-all] LOG
#   --require-all  exit 1 when a suite did not run (make test passes it
#                  when it tests every package)
# Exit status: 0 reported; 1 a suite did not run with --require-all; 2 usage.
set -euo pipefail
cd "$(dirname "$0")/.."

require_all=0
if [ "${1:-}" = --require-all ]; then
  require_all=1
  shift
fi
if [ $# -ne 1 ]; then
  echo "usage: scripts/integration-report.sh [--require-all] LOG" >&2
  exit 2
fi
log=$1
[ -f "$log" ] || log=/dev/null # no suite noted a run

echo "Integration suites (go test -tags integration; without what they need they fail, never skip):"
status=0
for entry in "mcp-filesystem:npm's MCP filesystem server" "chromium:Chromium" "temporal:Temporal dev server" \
  "openai-node:npm's openai client" "mcp-sdk-node:npm's MCP SDK client"; do
  suite=${entry%%:*}
  what=${entry#*:}
  line=$(awk -F'\t' -v suite="$suite" -v root="$PWD/" '
    $1 == suite {
      bin = $2; dir = $3
      if (!((dir, $4) in tests)) { tests[dir, $4] = 1; n++ }
      if (index(dir, root) == 1) dir = substr(dir, length(root) + 1)
      if (!(dir in seen)) { seen[dir] = 1; dirs = dirs (dirs == "" ? "" : ", ") dir }
    }
    END { if (n) printf "ran %d test%s in %s, with %s", n, (n == 1 ? "" : "s"), dirs, bin }' "$log")
  if [ -z "$line" ]; then
    line="DID NOT RUN: no test started it"
    status=1
  fi
  printf '  %-29s %s\n' "$what:" "$line"
done
if [ "$require_all" -eq 1 ] && [ "$status" -ne 0 ]; then
  echo "make test: an integration suite did not run" >&2
  exit 1
fi
