#!/usr/bin/env python3
"""The include graph of src/: cycles and back edges, for modules and for folders.

A module is a .c/.h pair (src/FOLDER/NAME.{c,h}); module A depends on module B when A's .c or
.h has `#include "B.h"`. A folder depends on another when one of its modules does. For each
graph it prints the strongly connected components of more than one node (each holds at least
one cycle), the number of elementary cycles and the number of back edges a depth-first search
meets (nodes in sorted order): both are 0 exactly when the graph has no cycle.

For folders it also lists the edges that src/layers.txt does not allow (the rule that
tests/checksrc.sh and the build enforce), when that file exists.

  tests/incgraph.py [--src DIR] [--folder NAME] [--allow FILE]
  (--folder, repeatable: also the graph of the modules inside NAME)

Exit status 1 when a graph has a cycle, but module cycles named in the allow-list (default
tests/incgraph.allow: `cycle: MODULE... | reason`, each with its reason) are accepted, with their
back edges; an allow-list entry matching no cycle (stale), or without a reason, is an error too.
"""
import argparse
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def modules(src):
    """{module: folder} and {module: set of included module names}."""
    folder, deps = {}, {}
    for d in sorted(os.listdir(src)):
        path = os.path.join(src, d)
        if not os.path.isdir(path):
            continue
        for f in sorted(os.listdir(path)):
            base, ext = os.path.splitext(f)
            if ext not in (".c", ".h"):
                continue
            folder[base] = d
            with open(os.path.join(path, f), encoding="utf-8") as fh:
                for inc in INCLUDE.findall(fh.read()):
                    deps.setdefault(base, set()).add(os.path.splitext(os.path.basename(inc))[0])
    return folder, {m: {n for n in ds if n in folder and n != m} for m, ds in deps.items()}


def sccs(nodes, edges):
    """Tarjan's strongly connected components, iteratively."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            pushed = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    pushed = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if pushed:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
    return out


def back_edges(nodes, edges):
    """Edges that a DFS (sorted order) finds pointing at a node still on its stack."""
    state, found = {}, []
    for root in sorted(nodes):
        if root in state:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        state[root] = 1
        while work:
            v, it = work[-1]
            for w in it:
                if state.get(w) == 1:
                    found.append((v, w))
                elif w not in state:
                    state[w] = 1
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    break
            else:
                state[v] = 2
                work.pop()
    return found


def count_cycles(nodes, edges, cap=1000000):
    """Elementary cycles (Johnson's algorithm through networkx when present), capped."""
    try:
        import networkx as nx
    except ImportError:
        return None
    g = nx.DiGraph()
    g.add_nodes_from(nodes)
    g.add_edges_from((a, b) for a, ds in edges.items() for b in ds)
    n = 0
    for _ in nx.simple_cycles(g):
        n += 1
        if n >= cap:
            break
    return n


def layers(path):
    """{folder: every folder it may include} from src/layers.txt, or None without one."""
    if not os.path.exists(path):
        return None
    direct = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.split("#", 1)[0]
            if ":" in line:
                name, deps = line.split(":", 1)
                direct[name.strip()] = deps.split()
    reach = {}
    for f in direct:
        seen, todo = {f}, [f]
        while todo:
            for g in direct.get(todo.pop(), ()):
                if g not in seen:
                    seen.add(g)
                    todo.append(g)
        reach[f] = seen
    return reach


def read_allow(path):
    """[(frozenset of modules, reason)] from the allow-list; errors for lines without a reason."""
    out, errors = [], []
    if not path or not os.path.exists(path):
        return out, errors
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            m = re.match(r"cycle:\s*([^|]+?)\s*\|\s*(\S.*)$", line)
            if not m:
                errors.append(f"{path}:{n}: not `cycle: MODULE... | reason`")
                continue
            out.append((frozenset(m.group(1).split()), m.group(2)))
    return out, errors


def report(title, nodes, edges, allow=()):
    comps = [c for c in sccs(nodes, edges) if len(c) > 1]
    back = back_edges(nodes, edges)
    allowed = {mods for mods, _ in allow}
    ok = [c for c in comps if frozenset(c) in allowed]
    for c in ok:
        print(f"  allowed cycle among {len(c)}: {' '.join(c)}")
    inside = {m: frozenset(c) for c in ok for m in c}
    back = [(a, b) for a, b in back if not (a in inside and inside[a] == inside.get(b))]
    comps = [c for c in comps if frozenset(c) not in allowed]
    ncyc = count_cycles(nodes, edges)
    nedges = sum(len(v) for v in edges.values())
    print(f"{title}: {len(nodes)} nodes, {nedges} edges, {len(comps)} cyclic component(s), "
          f"{'?' if ncyc is None else ncyc} elementary cycle(s), {len(back)} back edge(s)")
    for c in comps:
        print(f"  cycle among {len(c)}: {' '.join(c)}")
    for a, b in back:
        print(f"  back edge: {a} -> {b}")
    return len(comps) + len(back)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", default=os.path.join(os.path.dirname(__file__), "..", "src"))
    ap.add_argument("--folder", action="append", default=[])
    ap.add_argument("--allow", default=os.path.join(os.path.dirname(__file__), "incgraph.allow"))
    a = ap.parse_args()
    folder, deps = modules(a.src)
    allow, errors = read_allow(a.allow)
    live = {frozenset(c) for c in sccs(set(folder), deps) if len(c) > 1}
    for mods, _ in allow:
        if mods not in live:
            errors.append(f"{a.allow}: stale entry, no such cycle: {' '.join(sorted(mods))}")
    for e in errors:
        print(e)
    bad = len(errors) + report("modules (src/)", set(folder), deps, allow)
    fdeps = {}
    for m, ds in deps.items():
        for n in ds:
            if folder[m] != folder[n]:
                fdeps.setdefault(folder[m], set()).add(folder[n])
    bad += report("folders (src/)", set(folder.values()), fdeps)
    rule = layers(os.path.join(a.src, "layers.txt"))
    if rule is not None:
        wrong = sorted((f, g) for f, gs in fdeps.items() for g in gs if g not in rule.get(f, ()))
        print(f"folders: {len(wrong)} edge(s) that src/layers.txt does not allow")
        for f, g in wrong:
            print(f"  not allowed: {f} -> {g}")
        bad += len(wrong)
    for f in a.folder:
        inside = {m for m in folder if folder[m] == f}
        bad += report(f"modules inside {f}/", inside,
                      {m: {n for n in deps.get(m, ()) if n in inside} for m in inside})
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
