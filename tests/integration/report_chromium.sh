#!/usr/bin/env bash
# report_chromium: `netrig report` pages load in headless Chromium: the DOM has the title, the
# tables and an inline SVG chart (a mesh plan's page: its matrix, coloured, one cell per pair of
# its three loopback daemons), the console shows no errors (the page's CSP would report any
# attempt to fetch something), and a screenshot is taken (kept in the test's output dir when
# NETRIG_ARTIFACTS is set). Skipped when chromium or gnuplot is not installed.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[[ -n $CHROMIUM ]] || skip "chromium is not installed (Debian: apt-get install chromium)"
command -v gnuplot >/dev/null 2>&1 || skip "gnuplot is not installed (apt-get install gnuplot-nox)"

DB=$T/report.db
nr() { "$NETRIG" "$@" --db "$DB"; }
nr stream -t 0.5 -i 0.1 -P 2 --title before >/dev/null 2>&1 || fail "stream 1 failed"
nr stream -t 0.5 -i 0.1 -P 2 --title after >/dev/null 2>&1 || fail "stream 2 failed"
nr sweep stream -t 0.3 --vary flows=1,2 --repeat 2 >/dev/null 2>&1 || fail "sweep failed"
nr report 1 -o "$T/run.html" || fail "report run"
nr report sweep:1 -o "$T/sweep.html" || fail "report sweep"
nr report compare 1 2 -o "$T/compare.html" || fail "report compare"
# a mesh plan across three daemons on loopback, each running its cells for this controller
mesh_hosts=""
for h in a b c; do
    start_server --allow-third-party 127.0.0.1/32
    mesh_hosts+="${mesh_hosts:+,}{\"name\":\"$h\",\"address\":\"127.0.0.1\",\"port\":$SRV_PORT}"
done
echo "{\"hosts\":[$mesh_hosts],\"tests\":[{\"test\":\"rr\",\"params\":{\"duration_s\":0.3}}]}" >"$T/plan.json"
nr mesh "$T/plan.json" >/dev/null 2>"$T/mesh.err" || fail "mesh failed: $(tail -2 "$T/mesh.err")"
nr report mesh:1 -o "$T/mesh.html" || fail "report mesh"

# chromium [args...]: headless, no network services, a private profile, bounded in time
chrome() {
    local profile
    profile=$(mktemp -d "$T/profile.XXXXXX")
    timeout 90 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
        --disable-component-update --disable-sync --no-first-run --disable-dev-shm-usage \
        --user-data-dir="$profile" --enable-logging=stderr --v=0 "$@"
}

for page in run sweep compare mesh; do
    url="file://$T/$page.html"
    rc=0
    chrome --dump-dom "$url" >"$T/$page.dom" 2>"$T/$page.console" || rc=$?
    check "$page: chromium loads it (exit $rc)" test "$rc" -eq 0
    check "$page: the DOM has the report title" grep -q '<h1>netrig ' "$T/$page.dom"
    if [[ $page == mesh ]]; then
        check "mesh: the DOM has the 3x3 matrix" \
            test "$(grep -o 'class="cell ' "$T/$page.dom" | wc -l)" -eq 9
        check "mesh: 6 cells coloured by their latency" \
            test "$(grep -o 'class="cell ok" style="background:hsl(' "$T/$page.dom" | wc -l)" -eq 6
    else
        check "$page: the DOM has an inline SVG chart" grep -q '<svg' "$T/$page.dom"
    fi
    check "$page: the DOM has its tables" grep -q '<table>' "$T/$page.dom"
    # Chromium logs every console message, CSP violations included, as ":CONSOLE:"
    check "$page: no console messages or blocked fetches ($(grep -m1 -E 'CONSOLE|violates|Uncaught' "$T/$page.console" | cut -c1-200 || true))" \
        bash -c "! grep -qE 'CONSOLE|violates the following Content Security|Uncaught' '$T/$page.console'"
    rc=0
    chrome --window-size=1100,1600 --screenshot="$T/$page.png" "$url" >/dev/null 2>&1 || rc=$?
    check "$page: screenshot taken (exit $rc)" test -s "$T/$page.png"
    check "$page: screenshot is a PNG" \
        test "$(head -c 8 "$T/$page.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a
    if [[ -n ${NETRIG_ARTIFACTS:-} ]]; then
        mkdir -p "$NETRIG_ARTIFACTS" && cp "$T/$page.png" "$T/$page.html" "$NETRIG_ARTIFACTS/"
    fi
done
log "screenshots: $(cd "$T" && ls ./*.png | tr '\n' ' ')"
finish
