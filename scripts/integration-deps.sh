#!/usr/bin/env bash
# Find, or install without root where it can, what the integration suites
# (the tests built with `go test -tags integration`) need, and write the
# variables that name it to ENV_FILE, as `export NAME='value'` lines that
# make test sources before it runs the tests:
#
#   PLANNER_MCP_FILESYSTEM_BIN  npm's reference MCP filesystem server, pinned
#                               (tools/mcp, cmd/planner). Installed with
#                               `npm install --prefix` into the user's cache
#                               folder when npm is on PATH.
#   PLANNER_CHROMIUM            Chromium (server/browsertest). Found on PATH;
#                               it needs root to install: apt-get install
#                               chromium (.ci/run does).
#   PLANNER_NPM_CLIENTS         the node_modules folder holding the official
#                               npm clients, pinned: openai and
#                               @modelcontextprotocol/sdk (server,
#                               cmd/planner: the OpenAI-compatible endpoint
#                               and planner as an MCP server). Installed
#                               with npm like the MCP server.
#   PLANNER_TEMPORAL_BIN        the Temporal CLI, whose dev server the Temporal
#                               tests start (internal/temporaltest, temporal,
#                               cmd/planner). Found on PATH, else built, pinned,
#                               with `go install` into the user's cache folder
#                               (a few minutes, once).
#
# A variable already set names the binary to use: it is checked, not
# replaced. The pinned versions are read from the harnesses
# (tools/mcp/mcptest, internal/temporaltest), so they are written once.
# The npm server goes where mcptest looks for it, so that a later
# `go test -tags integration ./tools/mcp` finds it too.
#
# Usage: scripts/integration-deps.sh ENV_FILE
# Exit status: 0 everything found; 1 something is missing (each missing
# thing is named, with how to get it); 2 usage.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -ne 1 ]; then
  echo "usage: scripts/integration-deps.sh ENV_FILE" >&2
  exit 2
fi
env_file=$1

say() { echo "integration-deps: $*"; }
missing=()
miss() { missing+=("$1"); }

# pinned NAME FILE: the string constant NAME of the Go file FILE.
pinned() {
  local v
  v=$(sed -n "s/^[[:space:]]*\(const[[:space:]][[:space:]]*\)\{0,1\}$1[[:space:]]*=[[:space:]]*\"\([^\"]*\)\".*/\2/p" "$2" | head -n1)
  if [ -z "$v" ]; then
    echo "integration-deps: no constant $1 in $2" >&2
    exit 1
  fi
  echo "$v"
}

# The user's cache folder, as Go's os.UserCacheDir finds it.
if [ "$(uname -s)" = Darwin ]; then
  cache="$HOME/Library/Caches"
else
  cache="${XDG_CACHE_HOME:-$HOME/.cache}"
fi

# --- npm's MCP filesystem server -------------------------------------------
mcp_pkg=$(pinned FilesystemPackage tools/mcp/mcptest/mcptest.go)
mcp_ver=$(pinned FilesystemVersion tools/mcp/mcptest/mcptest.go)
mcp_bin=""
if [ -n "${PLANNER_MCP_FILESYSTEM_BIN:-}" ]; then
  if [ -x "$PLANNER_MCP_FILESYSTEM_BIN" ]; then
    mcp_bin=$PLANNER_MCP_FILESYSTEM_BIN
  else
    miss "MCP filesystem server: PLANNER_MCP_FILESYSTEM_BIN=$PLANNER_MCP_FILESYSTEM_BIN is not an executable file; unset it to have $mcp_pkg@$mcp_ver installed with npm"
  fi
else
  prefix="$cache/planner-test/npm"
  bin="$prefix/node_modules/.bin/mcp-server-filesystem"
  marker="$prefix/.installed-server-filesystem@$mcp_ver" # as mcptest writes it after a complete install
  if [ -x "$bin" ] && [ -e "$marker" ]; then
    mcp_bin=$bin
  elif command -v npm >/dev/null 2>&1; then
    say "installing $mcp_pkg@$mcp_ver with npm into $prefix"
    mkdir -p "$prefix"
    log="$prefix/install.log"
    install() { npm install --no-audit --no-fund --prefix "$prefix" "$mcp_pkg@$mcp_ver" >"$log" 2>&1; }
    if command -v flock >/dev/null 2>&1; then
      # The lock mcptest takes around its own install.
      ok=0; (flock 9 && install) 9>"$prefix/.install.lock" || ok=$?
    else
      ok=0; install || ok=$?
    fi
    if [ "$ok" -eq 0 ] && [ -x "$bin" ]; then
      touch "$marker"
      mcp_bin=$bin
    else
      miss "MCP filesystem server: npm install $mcp_pkg@$mcp_ver failed (offline? see $log); or set PLANNER_MCP_FILESYSTEM_BIN to an installed mcp-server-filesystem"
    fi
  else
    miss "MCP filesystem server: npm is not on PATH to install $mcp_pkg@$mcp_ver; install Node.js and npm (Debian: apt-get install nodejs npm; .ci/run does), or set PLANNER_MCP_FILESYSTEM_BIN to an installed mcp-server-filesystem"
  fi
fi
if [ -n "$mcp_bin" ] && ! command -v node >/dev/null 2>&1; then
  miss "MCP filesystem server: node, which runs $mcp_bin, is not on PATH; install Node.js (Debian: apt-get install nodejs)"
  mcp_bin=""
fi

# --- the official npm clients (openai, the MCP TypeScript SDK) -------------
oai_ver=$(pinned OpenAIVersion internal/npmclients/npmclients.go)
sdk_ver=$(pinned MCPVersion internal/npmclients/npmclients.go)
clients=""
if [ -n "${PLANNER_NPM_CLIENTS:-}" ]; then
  if [ -f "$PLANNER_NPM_CLIENTS/openai/package.json" ] && [ -f "$PLANNER_NPM_CLIENTS/@modelcontextprotocol/sdk/package.json" ]; then
    clients=$PLANNER_NPM_CLIENTS
  else
    miss "npm clients: PLANNER_NPM_CLIENTS=$PLANNER_NPM_CLIENTS does not hold both openai and @modelcontextprotocol/sdk; unset it to have them installed with npm"
  fi
else
  prefix="$cache/planner-test/npm-clients"
  marker="$prefix/.installed-openai@$oai_ver-sdk@$sdk_ver"
  if [ -e "$marker" ] && [ -f "$prefix/node_modules/openai/package.json" ]; then
    clients="$prefix/node_modules"
  elif command -v npm >/dev/null 2>&1; then
    say "installing openai@$oai_ver and @modelcontextprotocol/sdk@$sdk_ver with npm into $prefix"
    mkdir -p "$prefix"
    log="$prefix/install.log"
    if npm install --no-audit --no-fund --prefix "$prefix" "openai@$oai_ver" "@modelcontextprotocol/sdk@$sdk_ver" >"$log" 2>&1 &&
      [ -f "$prefix/node_modules/openai/package.json" ] && [ -f "$prefix/node_modules/@modelcontextprotocol/sdk/package.json" ]; then
      touch "$marker"
      clients="$prefix/node_modules"
    else
      miss "npm clients: npm install openai@$oai_ver @modelcontextprotocol/sdk@$sdk_ver failed (offline? see $log); or set PLANNER_NPM_CLIENTS to a node_modules folder holding both"
    fi
  else
    miss "npm clients: npm is not on PATH to install openai and @modelcontextprotocol/sdk; install Node.js and npm (Debian: apt-get install nodejs npm; .ci/run does)"
  fi
fi

# --- Chromium --------------------------------------------------------------
chromium=""
if [ -n "${PLANNER_CHROMIUM:-}" ]; then
  if [ -x "$PLANNER_CHROMIUM" ]; then
    chromium=$PLANNER_CHROMIUM
  else
    miss "Chromium: PLANNER_CHROMIUM=$PLANNER_CHROMIUM is not an executable file"
  fi
else
  for b in chromium chromium-browser google-chrome google-chrome-stable; do
    if command -v "$b" >/dev/null 2>&1; then chromium=$(command -v "$b"); break; fi
  done
  if [ -z "$chromium" ]; then
    miss "Chromium (the browser tests of server/browsertest): none on PATH, and installing it needs root; install it with apt-get install chromium (Debian/Ubuntu; .ci/run does), or set PLANNER_CHROMIUM to a Chrome or Chromium binary"
  fi
fi

# --- the Temporal CLI ------------------------------------------------------
temporal_ver=$(pinned CLIVersion internal/temporaltest/temporaltest.go)
temporal=""
gobin="$cache/planner-test/temporal/$temporal_ver" # named by its version: a binary built by go install says 0.0.0-DEV
if [ -n "${PLANNER_TEMPORAL_BIN:-}" ]; then
  if [ -x "$PLANNER_TEMPORAL_BIN" ]; then
    temporal=$PLANNER_TEMPORAL_BIN
  else
    miss "Temporal CLI: PLANNER_TEMPORAL_BIN=$PLANNER_TEMPORAL_BIN is not an executable file; unset it to have the CLI $temporal_ver built with go install"
  fi
elif [ -x "$gobin/temporal" ]; then
  temporal="$gobin/temporal"
elif command -v temporal >/dev/null 2>&1; then
  temporal=$(command -v temporal)
else
  say "building the Temporal CLI $temporal_ver with go install into $gobin (a few minutes, once)"
  mkdir -p "$gobin"
  log="$gobin/install.log"
  # GOFLAGS cleared: flags meant for this module (-mod=..., -race) do not
  # apply to go install of another module.
  if GOFLAGS="" GOBIN="$gobin" "${GO:-go}" install "github.com/temporalio/cli/cmd/temporal@$temporal_ver" >"$log" 2>&1 &&
    [ -x "$gobin/temporal" ]; then
    temporal="$gobin/temporal"
  else
    miss "Temporal CLI: go install github.com/temporalio/cli/cmd/temporal@$temporal_ver failed (offline? see $log); or put temporal on PATH, or set PLANNER_TEMPORAL_BIN to it"
  fi
fi

if [ ${#missing[@]} -gt 0 ]; then
  {
    echo "integration-deps: the integration suites cannot run; missing:"
    for m in "${missing[@]}"; do echo "  - $m"; done
    echo "make unit runs the tests without the integration suites."
  } >&2
  exit 1
fi

# quote VALUE: VALUE in single quotes, for sh.
quote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
mkdir -p "$(dirname "$env_file")"
{
  echo "# Written by scripts/integration-deps.sh: what the integration suites use."
  echo "export PLANNER_MCP_FILESYSTEM_BIN=$(quote "$mcp_bin")"
  echo "export PLANNER_CHROMIUM=$(quote "$chromium")"
  echo "export PLANNER_TEMPORAL_BIN=$(quote "$temporal")"
  echo "export PLANNER_NPM_CLIENTS=$(quote "$clients")"
} >"$env_file"
say "MCP filesystem server: $mcp_bin ($mcp_pkg@$mcp_ver, node $(node --version 2>/dev/null))"
say "Chromium: $chromium ($("$chromium" --version 2>/dev/null | head -n1))"
say "npm clients: $clients (openai@$oai_ver, @modelcontextprotocol/sdk@$sdk_ver)"
say "Temporal CLI: $temporal ($("$temporal" --version 2>/dev/null | head -n1))"
