#!/usr/bin/env bash
# Render a compare report in headless Chromium with the network cut off and
# save a PNG screenshot, to check that the report's charts draw from the page
# alone (inline SVG, no scripts, no external assets). Chromium's network log
# is checked too: the page itself must request nothing (the browser's own
# housekeeping requests, which have no page origin, are ignored; all are
# blocked anyway).
#
# Usage: scripts/screenshot-report.sh [REPORT.html] [OUT.png]
#   REPORT.html  default out/compare/report.html (written by `make run`)
#   OUT.png      default: REPORT.html with .png in place of .html
# Environment:
#   CHROMIUM     browser binary (default: /usr/bin/chromium, then chromium
#                or chromium-browser on PATH)
#   WINDOW_SIZE  viewport as W,H in pixels (default 1200,1800)
#
# It installs nothing. Without Chromium it says so and exits 2; on Debian
# the browser is the `chromium` package (apt-get install chromium).
# Exit status: 0 screenshot written, 1 check failed, 2 usage or no browser.
set -euo pipefail

report=${1:-out/compare/report.html}
png=${2:-${report%.html}.png}
size=${WINDOW_SIZE:-1200,1800}

if [[ ! -f $report ]]; then
	echo "screenshot-report: $report not found (run \`make run\` first, or pass the report path)" >&2
	exit 2
fi

browser=${CHROMIUM:-}
if [[ -z $browser ]]; then
	for candidate in /usr/bin/chromium chromium chromium-browser; do
		if command -v "$candidate" >/dev/null 2>&1; then
			browser=$(command -v "$candidate")
			break
		fi
	done
fi
if [[ -z $browser ]] || ! command -v "$browser" >/dev/null 2>&1; then
	echo "screenshot-report: no Chromium found${browser:+ at $browser}; install Debian's chromium package or set CHROMIUM" >&2
	exit 2
fi

# The page must not need the network: no scripts, no URLs, no links to
# assets. (An SVG xmlns would be harmless, but the report drops those too.)
if grep -Eqi '<script|https?:|(src|href)[[:space:]]*=|url\(' "$report"; then
	echo "screenshot-report: $report refers to scripts or external resources:" >&2
	grep -Eoi '<script[^>]*>|https?:[^"'"'"' )]*|(src|href)[[:space:]]*=[^ >]*|url\([^)]*\)' "$report" | sort -u | head -20 >&2
	exit 1
fi
svgs=$(grep -o '<svg[ >]' "$report" | wc -l)
if [[ $svgs -lt 2 ]]; then
	echo "screenshot-report: expected 2 inline SVG charts in $report, found $svgs" >&2
	exit 1
fi

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
abs=$(cd "$(dirname "$report")" && pwd)/$(basename "$report")
mkdir -p "$(dirname "$png")"
rm -f "$png"

# Network off: every host resolves to nothing and every request goes to a
# proxy on the discard port, where nothing listens.
timeout 120 "$browser" \
	--headless --disable-gpu --no-sandbox --hide-scrollbars \
	--user-data-dir="$profile" --no-first-run --no-default-browser-check \
	--disable-extensions --disable-sync --disable-background-networking --disable-component-update \
	--proxy-server=127.0.0.1:9 --host-resolver-rules='MAP * ~NOTFOUND' \
	--log-net-log="$profile/net.json" \
	--window-size="$size" --screenshot="$png" \
	"file://$abs" >"$profile/chromium.log" 2>&1 || {
	echo "screenshot-report: $browser failed; its output:" >&2
	tail -20 "$profile/chromium.log" >&2
	exit 1
}

if [[ ! -s $png ]]; then
	echo "screenshot-report: $browser wrote no screenshot; its output:" >&2
	tail -20 "$profile/chromium.log" >&2
	exit 1
fi

# In the net log, requests made by a page carry the page's origin as
# initiator ("null" for a file:// page); the browser's own carry
# "not an origin".
if [[ ! -s $profile/net.json ]]; then
	echo "screenshot-report: $browser wrote no network log" >&2
	exit 1
fi
requested=$(grep '"initiator":' "$profile/net.json" | grep -v '"initiator":"not an origin"' |
	grep -o '"url":"[^"]*"' | sort -u || true)
if [[ -n $requested ]]; then
	echo "screenshot-report: the page tried to load from the network:" >&2
	echo "$requested" >&2
	exit 1
fi
echo "screenshot-report: $svgs inline charts, no network requests from the page" >&2
echo "$png"
