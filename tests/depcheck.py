#!/usr/bin/python3
"""Every program, Python module and library the tests and benchmarks use comes from a package
named in .ci/packages (the list a fresh machine installs before tests/run.sh).

It collects:
  - the external commands the shell scripts run (tests/**/*.sh, bench/*, .ci/install, .ci/run):
    words in command position (line start, after | && || ; $( ( ` then do else ! and after
    the wrappers timeout, exec, command, env, nice, xargs, setarch, ip netns exec NS), minus
    shell builtins and keywords, functions the scripts define, variables and the project's own
    tools (netrig, wanem);
  - the programs the Python scripts start (subprocess/Popen with a list whose first item is a
    string literal) and the modules they import (beyond the standard library);
  - the pkg-config modules CMakeLists.txt files ask for (pkg_check_modules).
and checks that a package provides each: a package listed in the file, one of its Depends
(recursively, as apt installs them), or one every Debian system has (Essential or
Priority: required). It fails naming every command (and the files using it) that none does.

  tests/depcheck.py [--packages FILE] [--root DIR] [-v]
  (--packages: another list, e.g. .ci/packages with a line removed, to see it fail)
"""
import argparse
import glob
import os
import re
import subprocess
import sys

# Words a script runs that are not programs: bash builtins and keywords (compgen -bk)
BUILTINS = set("""
. : [ [[ ]] alias bg bind break builtin caller case cd command compgen complete compopt continue
coproc declare dirs disown do done echo elif else enable esac eval exec exit export false fc fg
fi for function getopts hash help history if in jobs kill let local logout mapfile popd printf
pushd pwd read readarray readonly return select set shift shopt source suspend test then time
times trap true type typeset ulimit umask unalias unset until wait while { } !
""".split())
# The project's own programs (built by CMake; the tests get their paths as arguments)
OWN = {"netrig", "wanem"}
# Words after which the next word is again a command
LEAD = {"|", "||", "&&", ";", "&", "$(", "(", "`", "then", "do", "else", "elif", "if", "while",
        "until", "!", "{", "time", "exec", "command", "nice", "xargs", "env", "sudo", "nohup",
        "setsid", "stdbuf", "unshare", "chroot", "taskset"}
BIN_DIRS = ("/usr/bin/", "/bin/", "/usr/sbin/", "/sbin/", "/usr/local/bin/")
WORD = re.compile(r"^[A-Za-z][A-Za-z0-9._+-]*$")
ABS = re.compile(r"^/(?:usr/)?s?bin/([A-Za-z][A-Za-z0-9._+-]*)$")
# Names a script may look for that no Debian package needs to provide, each with its reason
OPTIONAL = {
    "chromium-browser": "Ubuntu's name for chromium; the tests look for chromium first",
    "netperf": "Debian's non-free component, which .ci/packages cannot name (CI installs from "
    "main only): flent_side_by_side skips (77) naming it, and bench/rr, bench/crr and "
    "bench/stream, which run it beside netrig, install it themselves (bench/netperf.sh adds "
    "non-free for the benchmark machine only)",
    "netserver": "netperf's server, same package and reason as netperf",
    "kubectl": "Debian's kubernetes-client (1.20) renders deploy/kubernetes, but it cannot be "
    "installed beside the kubectl package that images with Kubernetes' or Google's repository "
    "ship (both hold /usr/bin/kubectl), so .ci/packages names neither: .ci/install installs "
    "kubernetes-client when no kubectl is there, and the kubernetes test uses whichever is there "
    "and skips (77) naming kubernetes-client when none is",
}


def _inner(text, i):
    """The end of the $( ... ) whose body starts at text[i] (parentheses balanced)."""
    depth, n = 1, len(text)
    while i < n and depth:
        c = text[i]
        if c == "\\":
            i += 1
        elif c == "'":
            i = text.find("'", i + 1) % (n + 1)
        elif c == '"':
            i = _dquote(text, i + 1) - 1
        else:
            depth += {"(": 1, ")": -1}.get(c, 0)
        i += 1
    return i


def _dquote(text, i):
    """The end (after the closing quote) of the double-quoted string whose body starts at i."""
    n = len(text)
    while i < n and text[i] != '"':
        if text[i] == "\\":
            i += 2
        elif text.startswith("$(", i):
            i = _inner(text, i + 2)
        else:
            i += 1
    return i + 1


def strip_shell(text):
    """The script without comments, here-document bodies, quoted strings (each a placeholder
    word Q) and arithmetic; the $( ... ) inside double quotes are kept, as lines of their own."""
    out, extra, i, n, heredocs = [], [], 0, len(text), []
    while i < n:
        c = text[i]
        if c == "\\":
            out.append(" ")
            i += 2
        elif c == "#" and (i == 0 or text[i - 1] in " \t\n;(|&"):
            while i < n and text[i] != "\n":
                i += 1
        elif c == "'":
            j = text.find("'", i + 1)
            i = n if j < 0 else j + 1
            out.append(" Q ")
        elif c == '"':
            i += 1
            while i < n and text[i] != '"':
                if text[i] == "\\":
                    i += 2
                elif text.startswith("$((", i):
                    i = _inner(text, i + 3)
                elif text.startswith("$(", i):
                    j = _inner(text, i + 2)
                    extra.append(strip_shell(text[i + 2:j - 1]))
                    i = j
                else:
                    i += 1
            i += 1
            out.append(" Q ")
        elif text.startswith("$((", i) or text.startswith("((", i):
            i = _inner(text, i + 2 if text[i] == "(" else i + 3)
            i = i + 1 if i < n and text[i] == ")" else i
            out.append(" Q ")
        elif text.startswith("${", i):
            j = text.find("}", i)
            i = n if j < 0 else j + 1
            out.append("Q")
        elif text.startswith("<<<", i):
            out.append(" ")
            i += 3
        elif text.startswith("<<", i):
            m = re.match(r"<<-?\s*['\"]?([A-Za-z_]+)['\"]?", text[i:])
            if m:
                heredocs.append(m.group(1))
                i += m.end()
            else:
                i += 2
            out.append(" ")
        elif c == "\n" and heredocs:
            out.append("\n")
            for tag in heredocs:
                m = re.compile(r"^[ \t]*" + tag + r"[ \t]*$", re.M).search(text, i + 1)
                i = n if not m else m.end()
            heredocs = []
        else:
            out.append(c)
            i += 1
    lines = []
    for line in "".join(out).split("\n"):
        # a case pattern (word | word) before its commands
        line = re.sub(r"^\s*[^()\s][^()]*?\)(?=\s|$)", " ", line) if "(" not in line.split(")")[0] \
            and re.match(r"^\s*[^()=\s]+(\s*\|\s*[^()\s]+)*\)", line) else line
        lines.append(line)
    return "\n".join(lines + extra)


def tokens(line):
    line = re.sub(r"(\|\||&&|\$\(|[|;&()`])", r" \1 ", line)
    line = line.replace("$ (", "$(")
    return line.split()


def shell_commands(text):
    """(set of command words, set of functions defined) in a shell script."""
    body = strip_shell(text)
    funcs = set(re.findall(r"^\s*(?:function\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*\(\)", body, re.M))
    funcs |= set(re.findall(r"^\s*function\s+([A-Za-z_][A-Za-z0-9_-]*)", body, re.M))
    cmds = {}
    pattern = False
    for line in body.splitlines():
        toks = tokens(line)
        expect = True
        i = 0
        while i < len(toks):
            t = toks[i]
            if t == "case" and expect:  # case WORD in PATTERN) ...: the patterns are no commands
                while i < len(toks) and toks[i] != "in":
                    i += 1
                pattern = True
                i += 1
                continue
            if t == ";" and toks[i + 1:i + 2] == [";"]:
                pattern = True
                i += 2
                continue
            if pattern:
                pattern = t not in (")", "esac")
                if t == "esac" or not pattern:
                    expect = True
                i += 1
                continue
            if expect:
                if t.endswith("=") and toks[i + 1:i + 2] == ["("]:  # VAR=(array words)
                    while i < len(toks) and toks[i] != ")":
                        i += 1
                    i += 1
                    continue
                if "=" in t and not t.startswith("="):  # VAR=value before a command
                    i += 1
                    continue
                if t in ("timeout",):
                    cmds.setdefault(t, line.strip())
                    i += 1
                    while i < len(toks) and toks[i].startswith("-"):
                        i += 2 if toks[i] in ("-k", "-s") else 1
                    i += 1  # the duration
                    continue
                if t == "ip" and toks[i + 1:i + 3] == ["netns", "exec"]:
                    cmds.setdefault("ip", line.strip())
                    i += 4  # ip netns exec NS
                    continue
                if t == "setarch" and i + 1 < len(toks):
                    cmds.setdefault(t, line.strip())
                    i += 2
                    while i < len(toks) and toks[i].startswith("-"):
                        i += 1
                    continue
                if t in LEAD:
                    if t not in BUILTINS and WORD.match(t):
                        cmds.setdefault(t, line.strip())
                    i += 1
                    while t in ("xargs", "env", "nice", "taskset") and i < len(toks) \
                            and toks[i].startswith("-"):
                        i += 1
                    continue
                if ABS.match(t):  # the program itself (/usr/bin/time, not bash's time)
                    cmds.setdefault(t, line.strip())
                elif WORD.match(t) and t != "Q":
                    cmds.setdefault(t, line.strip())
                expect = False
            elif t in ("|", "||", "&&", ";", "&", "$(", "(", "`", "then", "do", "else",
                       "elif", "{", "!"):
                expect = True
            i += 1
    # programs run through a variable with a default (SOCKPERF=${SOCKPERF:-sockperf})
    for m in re.finditer(r"\b([A-Z0-9_]+)=\$\{\1:-([a-z][a-z0-9._+-]*)\}", text):
        cmds.setdefault(m.group(2), m.group(0))
    # programs looked up (command -v A B, type -P A) though run through a variable
    for m in re.finditer(r"(?:command\s+-v|type\s+-P)((?:\s+[A-Za-z/][A-Za-z0-9._+/-]*)+)", body):
        for w in m.group(1).split():
            w = ABS.match(w).group(1) if ABS.match(w) else w
            if WORD.match(w) and w != "Q":
                cmds.setdefault(w, m.group(0))
    return cmds, funcs


PY_RUN = re.compile(r"(?:subprocess\.(?:run|call|check_call|check_output|Popen)|Popen)\(\s*"
                    r"\[\s*[\"']([A-Za-z][A-Za-z0-9._+-]*)[\"']")
PY_IMPORT = re.compile(r"^(?:import|from)\s+([A-Za-z_][A-Za-z0-9_]*)", re.M)


def dpkg_db(root):
    """{package: (essential_or_required, [depends alternatives], provides)} and
    {path: set of packages} from dpkg's database."""
    status = os.path.join(root, "var/lib/dpkg/status")
    pkgs, provided_by = {}, {}
    with open(status, encoding="utf-8", errors="replace") as fh:
        for block in fh.read().split("\n\n"):
            f = {}
            key = None
            for line in block.splitlines():
                if line[:1] in (" ", "\t") and key:
                    f[key] += " " + line.strip()
                elif ":" in line:
                    key, _, v = line.partition(":")
                    f[key] = v.strip()
            name = f.get("Package")
            if not name or "installed" not in f.get("Status", "").split()[-1:]:
                continue
            deps = []
            for field in ("Depends", "Pre-Depends"):
                for alt in filter(None, (d.strip() for d in f.get(field, "").split(","))):
                    deps.append([re.sub(r"[\s(:].*", "", a.strip()) for a in alt.split("|")])
            base = f.get("Essential") == "yes" or f.get("Priority") == "required"
            pkgs[name] = (base, deps)
            for p in filter(None, (x.strip() for x in f.get("Provides", "").split(","))):
                provided_by.setdefault(re.sub(r"[\s(].*", "", p), set()).add(name)
    owner = {}
    for lst in glob.glob(os.path.join(root, "var/lib/dpkg/info/*.list")):
        pkg = os.path.basename(lst)[:-5].split(":")[0]
        with open(lst, encoding="utf-8", errors="replace") as fh:
            for path in fh.read().split("\n"):
                owner.setdefault(path, set()).add(pkg)
    return pkgs, provided_by, owner


def closure(names, pkgs, provided_by):
    """The listed packages and every package they depend on, recursively (as installed)."""
    seen, todo = set(), list(names)
    while todo:
        n = todo.pop()
        cands = [n] if n in pkgs else sorted(provided_by.get(n, ()))
        for c in cands:
            if c in seen or c not in pkgs:
                continue
            seen.add(c)
            for alt in pkgs[c][1]:
                todo.extend(alt)
    return seen


def owners_of_command(cmd, owner, root):
    found = set()
    if cmd.startswith("/"):
        return owner.get(cmd, set()) | owner.get(cmd[4:] if cmd.startswith("/usr/") else
                                                 "/usr" + cmd, set())
    for d in BIN_DIRS:
        path = d + cmd
        found |= owner.get(path, set())
        # alternatives (awk -> mawk) and usrmerge links: the file the link ends at
        real = os.path.realpath(os.path.join(root, path.lstrip("/")))
        rel = "/" + os.path.relpath(real, root) if root != "/" else real
        found |= owner.get(rel, set())
        if rel.startswith("/usr/") and not found:
            found |= owner.get(rel[4:], set())
    return found


def self_test(packages):
    """Runs the check on the list as it is (must pass), then without iputils-ping (must fail
    naming ping) and with a package that does not exist (must fail naming it)."""
    import tempfile
    me = [sys.executable, os.path.abspath(__file__)]
    with open(packages, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    bad = 0
    cases = [("the list as it is", lines, 0, "commands"),
             ("without iputils-ping", [x for x in lines if x.strip() != "iputils-ping"], 1,
              "command 'ping'"),
             ("with no-such-package-netrig", lines + ["no-such-package-netrig"], 1,
              "no-such-package-netrig")]
    for desc, content, want_rc, want_text in cases:
        with tempfile.NamedTemporaryFile("w", suffix=".packages", delete=False) as tmp:
            tmp.write("\n".join(content) + "\n")
        r = subprocess.run(me + ["--packages", tmp.name], capture_output=True, text=True)
        os.unlink(tmp.name)
        out = r.stdout + r.stderr
        ok = r.returncode == want_rc and want_text in out
        print(f"depcheck self-test: {desc}: exit {r.returncode} (want {want_rc}), "
              f"{'names' if want_text in out else 'does not name'} {want_text!r}: "
              f"{'ok' if ok else 'WRONG'}")
        if not ok:
            print(out, file=sys.stderr)
            bad += 1
    return 1 if bad else 0


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    top = os.path.dirname(here)
    ap = argparse.ArgumentParser()
    ap.add_argument("--packages", default=os.path.join(top, ".ci", "packages"))
    ap.add_argument("--root", default="/", help="the system whose dpkg database is read")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--self-test", action="store_true",
                    help="check that the check fails when a needed package is left out")
    a = ap.parse_args()
    if a.self_test:
        return self_test(a.packages)
    if not os.path.exists(os.path.join(a.root, "var/lib/dpkg/status")):
        print("depcheck: no dpkg database here: not a Debian system, skipped", file=sys.stderr)
        return 77
    with open(a.packages, encoding="utf-8") as fh:
        listed = [ln.split("#")[0].strip() for ln in fh if ln.split("#")[0].strip()]
    pkgs, provided_by, owner = dpkg_db(a.root)
    missing_pkgs = [p for p in listed if p not in pkgs and p not in provided_by]
    ok_pkgs = closure(listed, pkgs, provided_by) | {p for p, (base, _) in pkgs.items() if base}
    ok_pkgs |= closure([p for p, (base, _) in pkgs.items() if base], pkgs, provided_by)

    scripts = sorted(set(glob.glob(os.path.join(top, "tests", "**", "*.sh"), recursive=True)))
    scripts += sorted(p for p in glob.glob(os.path.join(top, "bench", "*"))
                      if os.path.isfile(p) and not p.endswith(".md"))
    scripts += [os.path.join(top, ".ci", n) for n in ("install", "run")]
    used, funcs, seen_in = {}, set(), {}
    for s in scripts:
        with open(s, encoding="utf-8") as fh:
            cmds, fs = shell_commands(fh.read())
        funcs |= fs
        for c, line in cmds.items():
            used.setdefault(c, set()).add(os.path.relpath(s, top))
            seen_in.setdefault(c, line)
    pyfiles = sorted(glob.glob(os.path.join(top, "tests", "**", "*.py"), recursive=True))
    pyfiles += sorted(glob.glob(os.path.join(top, "bench", "*.py")))
    imports = {}
    for p in pyfiles:
        with open(p, encoding="utf-8") as fh:
            text = fh.read()
        for c in PY_RUN.findall(text):
            used.setdefault(c, set()).add(os.path.relpath(p, top))
        for m in PY_IMPORT.findall(text):
            imports.setdefault(m, set()).add(os.path.relpath(p, top))

    errors = [f".ci/packages names {p}, which is not installed here" for p in missing_pkgs]
    checked = 0
    for cmd in sorted(used):
        if cmd in BUILTINS or cmd in OWN or cmd in funcs or cmd in OPTIONAL:
            continue
        have = owners_of_command(cmd, owner, a.root)
        good = have & ok_pkgs
        checked += 1
        if a.verbose:
            print(f"command {cmd}: {' '.join(sorted(good or have)) or '-'}")
        if not good:
            hint = (f"provided here by {', '.join(sorted(have))}, which is not listed"
                    if have else "no installed package provides it")
            errors.append(f"command '{cmd}' ({', '.join(sorted(used[cmd]))}): {hint}")
            if a.verbose:
                print(f"  seen as: {seen_in.get(cmd, '?')[:160]}")

    stdlib = set(getattr(sys, "stdlib_module_names", ()))
    for mod in sorted(imports):
        if mod in stdlib or mod in sys.builtin_module_names:
            continue
        have = set()
        for pat in ("usr/lib/python3/dist-packages/%s", "usr/lib/python3/dist-packages/%s.py"):
            have |= owner.get("/" + pat % mod, set())
        if not have & ok_pkgs:
            errors.append(f"python module '{mod}' ({', '.join(sorted(imports[mod]))}): "
                          "no listed package provides it")

    for cm in sorted(glob.glob(os.path.join(top, "**", "CMakeLists.txt"), recursive=True)):
        if "/build" in os.path.relpath(cm, top):
            continue
        with open(cm, encoding="utf-8") as fh:
            text = fh.read()
        for args in re.findall(r"pkg_check_modules\(([^)]*)\)", text):
            for name in args.split()[1:]:
                if name.isupper():
                    continue
                have = set()
                for d in ("usr/lib/*/pkgconfig", "usr/lib/pkgconfig", "usr/share/pkgconfig"):
                    for pc in glob.glob(os.path.join(a.root, d, name + ".pc")):
                        have |= owner.get("/" + os.path.relpath(pc, a.root), set())
                if a.verbose:
                    print(f"pkg-config {name}: {' '.join(sorted(have & ok_pkgs)) or '-'}")
                if not have & ok_pkgs:
                    errors.append(f"pkg-config module '{name}' ({os.path.relpath(cm, top)}): "
                                  "no listed package provides it")
    for e in errors:
        print(f"depcheck: {e}", file=sys.stderr)
    if errors:
        print(f"depcheck: {len(errors)} dependency(ies) not covered by {a.packages}: add the "
              "package that provides each", file=sys.stderr)
        return 1
    print(f"depcheck: {checked} external commands, {len(imports)} python modules and the pkg-config "
          f"modules are provided by the {len(listed)} packages of {a.packages}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
