#!/usr/bin/env bash
# The source checks, first step of tests/run.sh (and runnable alone): every C file is
# clang-formatted; no banned function (sprintf strcpy strcat atoi gets); files within 800
# lines and functions within 80, but for the exceptions in tests/checksrc.allow; and every
# #include "..." in src/ respects the layer rule of src/layers.txt (the build enforces it
# too; this is the second line of defence, and it names the offending line).
set -uo pipefail
cd "$(dirname "$0")/.."
fail=0
bad() { printf 'checksrc: %s\n' "$*" >&2; fail=1; }

mapfile -t files < <(git ls-files -co --exclude-standard -- 'src/*.[ch]' 'tests/*.[ch]' | sort)

# 1. format
if command -v clang-format >/dev/null; then
    for f in "${files[@]}"; do
        clang-format --dry-run --Werror "$f" >/dev/null 2>&1 ||
            bad "$f: not clang-formatted (run: clang-format -i $f)"
    done
else
    echo "checksrc: clang-format not installed: format not checked" >&2
fi

# 2. banned functions, outside comments and string literals
banned='(^|[^A-Za-z0-9_])(sprintf|strcpy|strcat|atoi|gets)[[:space:]]*\('
while IFS= read -r where; do
    bad "$where: banned function (use snprintf, strtol, ...)"
done < <(for f in "${files[@]}"; do
    sed -E 's#//.*$##; s#"([^"\\]|\\.)*"#""#g' "$f" | grep -nE "$banned" | sed "s#^\([0-9]*\):.*#$f:\1#"
done)

# 2b. no include reaches out of its folder by a relative path: "../x.h" hides which folder (and
# so which layer) a header belongs to from the layer check below; include paths come from CMake
while IFS= read -r where; do
    bad "$where: #include \"../...\": name the header alone (the build's include path finds it)"
done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"\.\./' "${files[@]}" /dev/null | cut -d: -f1,2)

# 3. sizes
allowed() { grep -qxF "$1" tests/checksrc.allow 2>/dev/null; }
for f in "${files[@]}"; do
    case $f in *.c) ;; *) continue ;; esac
    n=$(wc -l <"$f")
    [ "$n" -le 800 ] || allowed "file $f" || bad "$f: $n lines (limit 800: split it by responsibility)"
done
while read -r where name len; do
    allowed "function ${where%%:*} $name" ||
        bad "$where: function $name is $len lines (limit 80)"
done < <(awk -v max=80 '
    FNR == 1 { start = 0 }
    /^[A-Za-z_].*\(/ && !/;[ \t]*$/ { sig = $0; sigline = FNR }
    /^\{[ \t]*$/ { start = FNR; name = sig; sub(/\(.*/, "", name); sub(/.*[ *]/, "", name); next }
    /^\}/ && start { len = FNR - start - 1
                     if (len > max) printf "%s:%d %s %d\n", FILENAME, sigline, name, len
                     start = 0 }' $(printf '%s\n' "${files[@]}" | grep '\.c$'))

# 4. the layer rule
declare -A direct reach owner
while IFS= read -r line; do
    line=${line%%#*}
    [[ $line == *:* ]] || continue
    direct[${line%%:*}]=${line#*:}
done < src/layers.txt
closure() { # folder -> every folder it may include, itself included
    local todo=("$1") seen=" $1 " d x
    while [ ${#todo[@]} -gt 0 ]; do
        d=${todo[0]}; todo=("${todo[@]:1}")
        for x in ${direct[$d]-}; do
            case $seen in *" $x "*) ;; *) seen+="$x "; todo+=("$x") ;; esac
        done
    done
    echo "$seen"
}
for d in "${!direct[@]}"; do reach[$d]=$(closure "$d"); done
for f in src/*/*.h; do owner[$(basename "$f")]=$(basename "$(dirname "$f")"); done
for f in $(printf '%s\n' "${files[@]}" | grep '^src/[a-z_]*/'); do
    from=$(basename "$(dirname "$f")")
    [ -n "${direct[$from]+x}" ] || { bad "$f: folder '$from' is not in src/layers.txt"; continue; }
    while IFS=: read -r ln inc; do
        h=$(sed -E 's/.*#include "([^"]+)".*/\1/' <<<"$inc")
        to=${owner[$h]-}
        [ -n "$to" ] || continue
        case ${reach[$from]} in
            *" $to "*) ;;
            *) bad "$f:$ln: includes $h of $to/, which $from/ may not use (src/layers.txt)" ;;
        esac
    done < <(grep -n '#include "' "$f")
done

# 5. the test kinds: what a kind is lives in its table (model/test_kind.c, model/params.c) and
# its own files (flows/flow_*.c, the data paths); everyone else asks the descriptor
# (docs/architecture.md, "Adding a kind"). No kind comparison outside them: no PARAMS_TEST_
# constant, no kind named by string ("stream" == test), no branch on params' udp or mptcp (an
# assignment sets a variant; a stored column's value, cast to int64_t, is data)
kind_files='^src/model/(params|test_kind)\.[ch]:|^src/flows/flow_[a-z0-9_]+\.c:'
while IFS= read -r hit; do
    bad "${hit%%:*}:$(cut -d: -f2 <<<"$hit"): compares the test kind outside its table: ask the descriptor (model/test_kind.h)"
done < <(grep -nE 'PARAMS_TEST_[A-Z]+|strcmp\([^)]*"(stream|rr|crr)"|(\bp|params|\.p|->p)(\.|->)(udp|mptcp)\b' \
             $(printf '%s\n' "${files[@]}" | grep '^src/') /dev/null |
         grep -vE "$kind_files" | grep -vE '(\.|->)(udp|mptcp) *\|?= |\(int64_t\)[a-z>.-]*(\.|->)udp\b' |
         grep -vE '^src/model/params\.h:')

# the map stays current: docs/architecture.md names every module under its folder's heading
for f in src/*/*.c; do
    d=$(basename "$(dirname "$f")")
    awk -v h="### \`$d/\`" -v m="| \`$(basename "$f")\` |" \
        'index($0, h) == 1 {s = 1; next} /^### / {s = 0} s && index($0, m) == 1 {f = 1} END {exit !f}' \
        docs/architecture.md || bad "$f: not in docs/architecture.md under $d/ (the map of modules)"
done

[ "$fail" -eq 0 ] && echo "checksrc: ${#files[@]} files: format, banned functions, sizes, layers, kinds, map ok"
exit "$fail"
