#!/usr/bin/env python3
"""include_graph.py [--verbose] [ROOT]: import circles and back-up imports in src/.

A node is a module: src/<dir>/<stem> (foo.c and foo.h together).  Module A
imports module B when a file of A #includes "b.h" (resolved as the Makefile's
-I order does: src/core, src/pg, src/sql, src/catalog) or when a .c file of A
names a function or a table (data at file scope) that a .c file of B defines
without "static" (a call, a function pointer in a table, a row that points at
another module's table).  The second catches a core file that calls a
function declared in a core header but defined in the glue (a link-time hook).

Prints the strongly connected components with more than one module (import
circles), the imports of a host (src/pg/host_*) beyond the core's base layer,
the pass and the learner's entry, and the imports that run back up a layer: src/core < src/pg <
src/sql < src/catalog, and inside src/core the order of its layer folders
(CORE_ORDER below).  A core file outside a layer folder is reported.  Ends with "N circles (M modules), K back-up imports, H host
imports".
"""
import os
import re
import sys

MODULE_OF_FILE = {f"src/core/methods/options_{part}": "src/core/methods/options_core"
                  for part in ("check", "suggest", "internal")}
MODULE_OF_FILE["src/core/methods/svm_prob"] = "src/core/methods/svm"     # the SVM's probabilities
DIRS = ["core", "pg", "sql", "catalog"]          # -I order, and layer order
# The core's layers are its folders, from the bottom (the Makefile's
# KM_CORE_LAYERS): a file's layer is the folder it sits in, so a new file
# gets a layer by where it is put, and no table says otherwise.
#   base     errors, finiteness, CRC, metrics, progress, linear algebra, grids,
#            the column encoder, the class types (data only)
#   kernels  the kernel table, Gram panels, the element-wise maps
#   repr     the representations (exact, nystrom, rff): the table, basis,
#            features, centres, Gram diagnostics
#   tasks    the task table (regression, classification, transform,
#            novelty) and the classifier's labels, weights and decisions
#   methods  the method interface, registry and options, one file per
#            method, and the solvers they share (SMO, Newton, SGD, primal)
#   fit      the exact fits and their selection (LOO, GCV, k-fold)
#   model    the bytea format and its sections, scoring, the GP reading,
#            the drift test
#   learn    the learner, its passes, the Newton and CG over passes, and the
#            roads it composes (pipeline*)
CORE_ORDER = ["base", "kernels", "repr", "tasks", "methods", "fit", "model", "learn"]
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
# PostgreSQL style: the return type on its own line, the name at column 0
DEFN = re.compile(r'^([A-Za-z_]\w*)\s*\([^;]*$', re.M)
IDENT = re.compile(r'[A-Za-z_]\w*')
COMMENT = re.compile(r'/\*.*?\*/|//[^\n]*', re.S)
STRING = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'')
# data at file scope, not static: "const km_task_train km_regression_train = {",
# "const km_section_ops *const km_task_sections[] = {"
DATA = re.compile(r'^(?!static\b|typedef\b|extern\b)(?:const\s+)?(?:struct\s+|union\s+|enum\s+)?[A-Za-z_]\w*'
                  r'[\s*]+(?:const\s+)?\**\s*([A-Za-z_]\w*)\s*(?:\[[^\]\n]*\]\s*)*=', re.M)
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "PG_FUNCTION_INFO_V1",
            "PG_MODULE_MAGIC", "KM_STATIC_ASSERT"}


def split_mod(mod):
    """src/core/methods/svr -> ("core", "svr", "methods"); sub is None at the top."""
    parts = mod.split("/")[1:]
    return parts[0], parts[-1], (parts[1] if len(parts) > 2 else None)


def core_layer(stem, sub):
    return sub if sub in CORE_ORDER else None


def layer(mod):
    d, stem, sub = split_mod(mod)
    if d != "core":
        return (DIRS.index(d), 0)
    if core_layer(stem, sub) is None:
        sys.exit(f"include_graph.py: {mod} is not in a layer folder of src/core ({', '.join(CORE_ORDER)})")
    return (0, CORE_ORDER.index(core_layer(stem, sub)))


def layer_name(mod):
    d, stem, sub = split_mod(mod)
    return f"core/{core_layer(stem, sub)}" if d == "core" else d


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    verbose = "--verbose" in sys.argv
    root = args[0] if args else os.path.join(os.path.dirname(__file__), "..")
    files = {}                                    # "src/core/x.c" -> text
    for d in DIRS:
        p = os.path.join(root, "src", d)
        for sub, _, names in sorted(os.walk(p)):
            rel = os.path.relpath(sub, os.path.join(root, "src"))
            for f in sorted(names):
                if f.endswith((".c", ".h")):
                    with open(os.path.join(sub, f), encoding="utf-8") as fh:
                        files[f"src/{rel}/{f}"] = fh.read()
    # One module in several files: the options validator is options_core.c
    # with its cross-key checks (options_check.c), its did-you-mean hints
    # (options_suggest.c) and the declarations they share
    # (options_internal.h), split only to keep each file under 1,000 lines;
    # likewise the SVM (svm.c, and svm_prob.c: Platt and the coupling).
    def mod_of(path):
        mod = path.rsplit(".", 1)[0]
        return MODULE_OF_FILE.get(mod, mod)
    header = {}                                   # "x.h" or "sub/x.h" -> module, first -I wins
    for d in DIRS:
        for path in files:
            if path.startswith(f"src/{d}/") and path.endswith(".h"):
                header.setdefault(os.path.relpath(path, f"src/{d}"), mod_of(path))
                header.setdefault(os.path.basename(path), mod_of(path))

    defined = {}                                  # function -> module
    prev_static = re.compile(r'(^|\n)static\b[^\n]*\n([A-Za-z_]\w*)\s*\(')
    for path, text in files.items():
        if not path.endswith(".c"):
            continue
        body = COMMENT.sub(" ", text)
        statics = {m.group(2) for m in prev_static.finditer(body)}
        for m in DEFN.finditer(body):
            name = m.group(1)
            if name not in statics and name not in KEYWORDS:
                defined.setdefault(name, mod_of(path))
        # tables and other data defined without "static" (a row that points
        # at another module's table imports it as a call does)
        for m in DATA.finditer(body):
            defined.setdefault(m.group(1), mod_of(path))

    edges = {}                                    # (a, b) -> reasons
    for path, text in files.items():
        a = mod_of(path)
        for inc in INCLUDE.findall(text):
            # the including file's own folder first, as the compiler does
            b = header.get(os.path.relpath(os.path.join(os.path.dirname(path), inc), "src/core")
                           if path.startswith("src/core/") else inc) or header.get(inc)
            if b and b != a:
                edges.setdefault((a, b), set()).add(f"{os.path.basename(path)} includes {inc}")
        if path.endswith(".c"):
            body = STRING.sub(" ", COMMENT.sub(" ", text))
            for name in set(IDENT.findall(body)):
                b = defined.get(name)
                if b and b != a and not any(r.startswith("calls") for r in edges.get((a, b), ())):
                    edges.setdefault((a, b), set()).add(f"calls {name}")

    mods = sorted({mod_of(p) for p in files})
    succ = {m: sorted(b for (a, b) in edges if a == m) for m in mods}

    # Tarjan's strongly connected components
    index, low, stack, on, sccs = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in succ[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            sccs.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for m in mods:
        if m not in index:
            visit(m)
    circles = [c for c in sccs if len(c) > 1]

    print(f"{len(mods)} modules, {len(edges)} imports")
    for c in circles:
        print(f"circle ({len(c)} modules): " + " ".join(c))
        if verbose:
            for (a, b), why in sorted(edges.items()):
                if a in c and b in c:
                    print(f"    {a} -> {b}: {'; '.join(sorted(why))}")
    backup = sorted((a, b) for (a, b) in edges if layer(a) < layer(b))
    for a, b in backup:
        print(f"back-up import: {a} ({layer_name(a)}) -> {b} ({layer_name(b)}): "
              + "; ".join(sorted(edges[(a, b)])))
    # A host (host_*: the memory, cursor and aggregate hosts, and the pass
    # aggregate's descriptor and functions, pass_desc and pass_agg) runs the
    # learner's passes and knows no task, method or representation: from the core it imports the base layer, the pass
    # and the learner's entry only (issue 28).
    host_ok = {"src/core/learn/pass", "src/core/learn/learner"}
    hosts = sorted((a, b) for (a, b) in edges
                   if (split_mod(a)[1].startswith("host_") or split_mod(a)[1] in ("pass_desc", "pass_agg"))
                   and split_mod(a)[0] != "core"
                   and split_mod(b)[0] == "core" and b not in host_ok
                   and layer(b) != (0, CORE_ORDER.index("base")))
    for a, b in hosts:
        print(f"host import: {a} -> {b} ({layer_name(b)}): " + "; ".join(sorted(edges[(a, b)])))
    print(f"{len(circles)} circles ({sum(len(c) for c in circles)} modules), "
          f"{len(backup)} back-up imports, {len(hosts)} host imports")


if __name__ == "__main__":
    main()
