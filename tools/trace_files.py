#!/usr/bin/env python3
"""trace_files.py TREE SO EDGES...: the files a traced training walks through.

EDGES are files written by test/bench/trace_hook.c (each distinct pair of a
call site in kernel_ml.so and the function it enters, in the order first
seen, as offsets in SO).  Each pair is mapped to the caller's file and the
callee's file (addr2line on SO's debug information; a call site inside an
inlined function counts for the function it was inlined into) and the
layer of each file is TREE's own (its tools/include_graph.py).  Pairs inside
one file are dropped.  Prints:
  files    distinct files of src/ entered
  climbs   pairs whose callee sits in a higher layer than its caller (a call
           back up: a hook or a table of another layer's functions)
  returns  pairs entering a file entered before (by another pair)
  edges    distinct caller-file -> callee-file arrows
"""
import importlib.util
import os
import subprocess
import sys


def main():
    tree, so, edge_files = sys.argv[1], sys.argv[2], sys.argv[3:]
    spec = importlib.util.spec_from_file_location("ig", os.path.join(tree, "tools/include_graph.py"))
    ig = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ig)
    pairs = []
    for f in sorted(edge_files, key=lambda p: int(os.path.basename(p).split(".")[0])):
        for line in open(f):
            fn, site = (int(x, 16) for x in line.split())
            pairs.append((fn, site))
    addrs = sorted({a for p in pairs for a in p if a})
    out = subprocess.run(["addr2line", "-i", "-f", "-e", so] + [hex(a) for a in addrs],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    # with -i each address gives one or more (function, file:line) pairs, the
    # outermost (the function the code was inlined into) last; addresses are
    # separated by asking again one at a time when the counts disagree
    where = {}
    if len(out) == 2 * len(addrs):
        for i, a in enumerate(addrs):
            where[a] = out[2 * i + 1]
    else:
        for a in addrs:
            o = subprocess.run(["addr2line", "-i", "-f", "-e", so, hex(a)],
                               capture_output=True, text=True, check=True).stdout.splitlines()
            where[a] = o[-1]

    def src(a):
        if not a:
            return None
        path = where[a].split(":")[0]
        if path.startswith("src/"):
            return path
        i = path.find("/src/")
        return path[i + 1:] if i >= 0 else None

    def lay(path):
        mod = path.rsplit(".", 1)[0]
        mod = ig.MODULE_OF_FILE.get(mod, mod) if hasattr(ig, "MODULE_OF_FILE") else mod
        return ig.layer(mod)

    entered, arrows, up = [], set(), {}
    climbs = returns = 0
    for fn, site in pairs:
        a, b = src(site), src(fn)
        if b is None or a == b:
            continue
        if a is not None:
            arrows.add((a, b))
            if lay(b) > lay(a):
                climbs += 1
                up[(a, b)] = up.get((a, b), 0) + 1
        if b in entered:
            returns += 1
        else:
            entered.append(b)
    print(f"files {len(entered)}  climbs {climbs}  returns {returns}  edges {len(arrows)}")
    if os.environ.get("KM_TRACE_VERBOSE"):
        for f in entered:
            print("  " + f)
        for (a, b), k in sorted(up.items(), key=lambda x: -x[1]):
            print(f"  climb {a} -> {b}: {k}")


if __name__ == "__main__":
    main()
