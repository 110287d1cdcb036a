#!/usr/bin/env bash
# completion: contrib/netrig.bash-completion cannot drift from the program.
#  - its command list is the one 'netrig --help' prints;
#  - for every command, its long options are exactly those 'netrig help CMD' lists;
#  - every long option in the getopt tables of src/cli/cli_measure.c, cli_load.c,
#    cli_serve.c and cli_exporter.c is completed, and every one that takes a value is known to
#    take one;
#  - completing in a real bash gives the expected words.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
COMP=$ROOT/contrib/netrig.bash-completion
[[ -r $COMP ]] || { echo "no $COMP" >&2; exit 1; }

# shellcheck source=/dev/null
source "$COMP"

words() { tr -s ' \n\t' '\n' | grep -v '^$' | sort -u; }
longs() { grep -oE -- '--[a-z][a-z0-9-]*' | grep -vx -- '--help' | sort -u || true; }
# the options a help text defines: those that start a line of its option list (not prose)
# and those of its usage lines
defined() {
    awk '/^usage:/ { u = 1 } u && !/^usage:/ && !/^ +\[/ { u = 0 } u' "$1" | longs
    grep -oE -- '^ +(-[A-Za-z0-9], )?--[a-z][a-z0-9-]*' "$1" | longs
}

# ---- commands
"$NETRIG" --help >"$T/main_help"
sed -n '/^commands:/,/^$/p' "$T/main_help" | awk 'NR > 1 && $1 ~ /^[a-z]+$/ {print $1}' |
    sort -u >"$T/cmds_help"
words <<<"$_netrig_commands" >"$T/cmds_comp"
check "completion's commands are 'netrig --help''s: $(diff "$T/cmds_help" "$T/cmds_comp" | grep '^[<>]' | tr '\n' ' ')" \
    diff -q "$T/cmds_help" "$T/cmds_comp"

# ---- long options of every command against its help text
for cmd in $_netrig_commands; do
    [[ $cmd == help ]] && continue
    var=_netrig_opts_$cmd
    if ! "$NETRIG" help "$cmd" >"$T/help_$cmd" 2>&1; then
        fail "'netrig help $cmd' failed: $(head -c 200 "$T/help_$cmd")"
        continue
    fi
    defined "$T/help_$cmd" | sort -u >"$T/h_$cmd"
    words <<<"${!var:-}" | longs >"$T/c_$cmd"
    check "$cmd: completion and 'netrig help $cmd' name the same long options: $(diff "$T/h_$cmd" "$T/c_$cmd" | grep '^[<>]' | sed 's/^</help only:/; s/^>/completion only:/' | tr '\n' ' ')" \
        diff -q "$T/h_$cmd" "$T/c_$cmd"
done

# ---- getopt tables in the source
table() { grep -oE '\{"[a-z0-9-]+", *(no|required|optional)_argument' "$1" | sed -E 's/\{"([^"]+)", *([a-z]+)_argument/\1 \2/'; }
check_table() { # FILE OPTION_LIST
    local file=$1 list=$2 name kind
    [[ -r $file ]] || { fail "no $file"; return; }
    while read -r name kind; do
        [[ $name == help ]] && continue
        [[ " $(tr -s '\n\t' '  ' <<<"$list") " == *" --$name "* ]] ||
            fail "$(basename "$file"): --$name is not completed"
        if [[ $kind == required ]]; then
            [[ " $(tr -s '\n\t' '  ' <<<"$_netrig_takes_value") " == *" --$name "* ]] ||
                fail "$(basename "$file"): --$name takes a value but the completion does not know it"
        fi
    done < <(table "$file")
}
check_table "$ROOT/src/cli/cli_measure.c" "$_netrig_opts_stream $_netrig_opts_rr $_netrig_opts_crr"
check_table "$ROOT/src/cli/cli_load.c" "$_netrig_opts_load"
check_table "$ROOT/src/cli/cli_serve.c" "$_netrig_opts_serve"
check_table "$ROOT/src/cli/cli_exporter.c" "$_netrig_opts_exporter"

# ---- completing in bash
complete_line() { # the words of a command line, the last one being completed
    COMP_WORDS=("$@")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMPREPLY=()
    _netrig
    ((${#COMPREPLY[@]} == 0)) || printf '%s\n' "${COMPREPLY[@]}" | sort -u | tr '\n' ' '
}
expect_comp() { # WANT WORDS...
    local want=$1 got
    shift
    got=$(complete_line "$@")
    check "completing '$*' gives '$want' (got '$got')" test "$got" == "$want "
}
expect_comp "stream" netrig str
expect_comp "exporter" netrig help exporte
expect_comp "export exporter" netrig help expo
expect_comp "--live" netrig stream --li
expect_comp "--metrics" netrig serve --me
expect_comp "--depth" netrig sweep rr -c HOST --dep
expect_comp "--config" netrig exporter --con
expect_comp "--probe-rate" netrig load --prob
expect_comp "cdf" netrig plot 3 --chart cd
expect_comp "rrul" netrig load --classes r
expect_comp "crr" netrig sweep cr
got=$(complete_line netrig stream -C "")
check "congestion control names are completed after -C (got '$got')" test -n "$got"
got=$(complete_line netrig stream -t "")
check "nothing is offered for the value of -t (got '$got')" test -z "$got"
finish
