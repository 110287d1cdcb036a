#!/usr/bin/env bash
# package: 'dpkg-buildpackage -us -uc -b' builds a netrig .deb from a scratch copy of the
# source tree (the repository is never written), 'dpkg -x' installs it into a scratch root,
# and the installed binary runs. Checks the files, their places, the package's dependencies,
# that the daemon's unit is installed disabled, and that the version agrees everywhere.
# Skipped (77) without dpkg-buildpackage or debhelper. The binary argument is only used to
# compare versions: the package builds its own.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# ---- cmake --install of the build under test into a prefix: the same files, paths fitted
BUILD=$(dirname "$NETRIG")
if [[ -f $BUILD/cmake_install.cmake && -z ${NETRIG_VALGRIND:-} ]]; then
    P=$T/prefix
    cmake --install "$BUILD" --prefix "$P" >"$T/install.log" 2>&1 || fail "cmake --install failed: $(tail -5 "$T/install.log")"
    for f in bin/netrig share/man/man1/netrig.1 share/bash-completion/completions/netrig \
        lib/systemd/system/netrig.service etc/default/netrig share/doc/netrig/exporter.md; do
        check "cmake --install puts PREFIX/$f" test -e "$P/$f"
    done
    check "the prefix's unit runs the prefix's binary" grep -qx "ExecStart=$P/bin/netrig serve \$NETRIG_SERVE_OPTS" "$P/lib/systemd/system/netrig.service"
    check "the prefix's unit reads the prefix's options file" grep -qx "EnvironmentFile=-$P/etc/default/netrig" "$P/lib/systemd/system/netrig.service"
fi

command -v dpkg-buildpackage >/dev/null || skip "dpkg-buildpackage (dpkg-dev) is not installed"
command -v dh >/dev/null || skip "debhelper is not installed"
[[ -d $ROOT/debian ]] || { echo "no debian/ directory in $ROOT" >&2; exit 1; }

# ---- a scratch copy of the source: no build trees, no VCS, no earlier package output
mkdir -p "$T/src"
tar -C "$ROOT" --exclude='./build*' --exclude='./.git' --exclude='./obj-*' \
    --exclude='./debian/netrig' --exclude='./debian/.debhelper' --exclude='./debian/tmp' \
    --exclude='./debian/files' --exclude='./debian/*.substvars' --exclude='./debian/*.log' \
    -cf - . | tar -C "$T/src" -xf -

if ! (cd "$T/src" && dpkg-checkbuilddeps -Pnocheck) >"$T/deps.log" 2>&1; then
    echo "build dependencies missing (install them: see .ci/packages): $(cat "$T/deps.log")" >&2
    exit 1
fi

# nocheck: the unit tests run from the build tree already; noopt (-O0): what is checked here is
# the packaging (files, paths, fields, the installed binary runs), which the optimiser does not
# change, and -O0 compiles in about half the CPU time beside the other tests
log "building the package (nocheck noopt)"
start=$(now_ms)
if ! (cd "$T/src" && DEB_BUILD_OPTIONS="nocheck noopt parallel=$(nproc)" DEB_BUILD_PROFILES=nocheck \
        dpkg-buildpackage -us -uc -b) >"$T/build.log" 2>&1; then
    echo "dpkg-buildpackage failed; the end of its log:" >&2
    tail -n 40 "$T/build.log" >&2
    exit 1
fi
log "built in $((($(now_ms) - start) / 1000)) s"

debs=("$T"/netrig_*.deb)
check "one netrig .deb was built next to the scratch tree (${debs[*]})" test -f "${debs[0]}"
DEB=${debs[0]}
dpkg-deb -f "$DEB" Package Version Depends >"$T/fields"
check "package is named netrig ($(tr '\n' ' ' <"$T/fields"))" grep -qx 'Package: netrig' "$T/fields"
for lib in libcjson libssl libmicrohttpd libsqlite3 libpci zlib1g libc6; do
    check "Depends names $lib (from shlibs: $(grep Depends "$T/fields"))" grep -q "Depends:.*$lib" "$T/fields"
done

# ---- install into a scratch root and look
R=$T/root
dpkg -x "$DEB" "$R"
for f in usr/bin/netrig usr/share/man/man1/netrig.1.gz usr/share/bash-completion/completions/netrig \
    lib/systemd/system/netrig.service etc/default/netrig usr/share/doc/netrig/README.md.gz \
    usr/share/doc/netrig/exporter.md.gz usr/share/doc/netrig/fleet.md.gz \
    usr/share/netrig/prometheus/netrig.rules.yml usr/share/netrig/grafana/netrig-fleet.json; do
    check "the package installs /$f" test -e "$R/$f"
done
check "the man page is a valid roff page" bash -c "zcat '$R/usr/share/man/man1/netrig.1.gz' | head -5 | grep -q '^\.TH NETRIG'"
dpkg-deb -e "$DEB" "$T/control"
check "/etc/default/netrig is a conffile" grep -qx /etc/default/netrig "$T/control/conffiles"
unit=$R/lib/systemd/system/netrig.service
check "the unit runs the daemon in the foreground from /usr/bin" grep -qE '^ExecStart=/usr/bin/netrig serve \$NETRIG_SERVE_OPTS$' "$unit"
check "the unit reads /etc/default/netrig" grep -qx 'EnvironmentFile=-/etc/default/netrig' "$unit"
check "the unit is hardened (NoNewPrivileges, ProtectSystem)" bash -c "grep -qx NoNewPrivileges=yes '$unit' && grep -q '^ProtectSystem=' '$unit'"
check "the unit does not detach (-D)" bash -c "! grep -q '^ExecStart=.* -D' '$unit'"
# debhelper's postinst re-enables the unit on upgrade only where the admin had enabled it
if [[ -f $T/control/postinst ]]; then
    check "postinst does not start the daemon" bash -c "! grep -q 'deb-systemd-invoke' '$T/control/postinst'"
    check "postinst enables the daemon only where it was enabled before" test \
        "$(grep -c 'deb-systemd-helper enable' "$T/control/postinst")" -eq \
        "$(grep -c 'deb-systemd-helper --quiet was-enabled' "$T/control/postinst")"
fi

# ---- the installed binary runs
BIN=$R/usr/bin/netrig
"$BIN" --version >"$T/version" 2>&1 || fail "installed netrig --version failed: $(cat "$T/version")"
pkgver=$(dpkg-deb -f "$DEB" Version)
check "installed --version names the package version $pkgver ($(head -1 "$T/version"))" \
    grep -qx "netrig ${pkgver%%-*}" <(head -1 "$T/version")
check "the built binary under test has the same version" grep -qx "netrig ${pkgver%%-*}" <("$NETRIG" --version | head -1)
check "installed --version lists the metrics feature" grep -q 'metrics' "$T/version"
rc=0
HOME=$T timeout 30 "$BIN" stream -t 0.5 -J --no-save >"$T/run.json" 2>"$T/run.err" || rc=$?
check "installed netrig stream -t 0.5 exits 0 (got $rc: $(head -c 300 "$T/run.err"))" test "$rc" -eq 0
check_jq "installed netrig measured something" "$T/run.json" '.summary.throughput_bps > 0'

# ---- the completion loads in bash and completes
out=$(bash -c "source '$R/usr/share/bash-completion/completions/netrig'; COMP_WORDS=(netrig se); COMP_CWORD=1; _netrig; echo \"\${COMPREPLY[*]}\"")
check "installed completion completes 'netrig se' ($out)" grep -qw serve <<<"$out"
finish
