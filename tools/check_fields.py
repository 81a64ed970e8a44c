#!/usr/bin/env python3
"""check_fields.py [--verify] [--tighten] [ROOT]: the field rule (issue 28).

A task's fields (task.h km_task_ops: classes, score_metric, target,
sign_labels, verbs) and a representation's flags
(repr.h km_repr_ops: approximate, kernels, centres, drawn, keeps_rows) are
read only by their own modules: src/core/tasks/, and
src/core/repr/.  Their identity (id, name) and a
representation's steps (features, features_doubles) are what every caller
asks and are not counted.

Both rules are at 0 (issue 28): READERS below is empty and must stay so
(a READERS row is itself a failure), and any read of a field outside its
module fails.  Give the owner the step its caller performs instead
(DESIGN-0.4.md, "Not to do"); --tighten still rewrites READERS to today's
counts, never up.

A read is FIELD after "->" whose left side is a km_task_ops / km_repr_ops
pointer: a call of a function declared to return one (km_task_lookup,
km_repr_get, ...), a name declared as one in the same file, or a struct
member declared as one (km_train_plan's task).  Comments and strings are
blanked first.  --verify checks that reading against the compiler: it
copies src/ with the fields renamed, compiles every .c file (syntax only,
PostgreSQL's server headers from pg_config) and compares the compiler's
"no member named" errors with the sites found here (about 10 s).

Prints "ok - ..." / "not ok - ..." lines and the counts; exit status 1 when
one fails.
"""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from csource import blank, sources  # noqa: E402
import tempfile

TABLES = {
    "task": {
        "type": "km_task_ops", "header": "src/core/tasks/task.h",
        "fields": ["classes", "score_metric", "target", "sign_labels", "verbs"],
        "own": re.compile(r"src/core/(task\.[ch]|tasks/.*)"),
    },
    "repr": {
        "type": "km_repr_ops", "header": "src/core/repr/repr.h",
        "fields": ["approximate", "kernels", "centres", "drawn", "keeps_rows"],
        "own": re.compile(r"src/core/(repr\.[ch]|repr/.*)"),
    },
}

# The readers outside the owners today: file -> (task reads, repr reads).
# Lower a number when a read moves to its owner; never raise one: give the
# owner the step its caller performs instead (DESIGN-0.4.md, "Not to do").
# BEGIN READERS (tools/check_fields.py --tighten rewrites this block)
READERS = {
}
# END READERS


def ident_before(t, p):
    """The identifier ending just before p (spaces skipped), and where it starts."""
    q = p
    while q > 0 and t[q - 1] in " \t\n":
        q -= 1
    s = q
    while s > 0 and (t[s - 1].isalnum() or t[s - 1] == "_"):
        s -= 1
    return t[s:q], s, q


def open_paren(t, close):
    """Index of the "(" matching the ")" at close, or -1."""
    depth = 0
    for i in range(close, -1, -1):
        if t[i] == ")":
            depth += 1
        elif t[i] == "(":
            depth -= 1
            if depth == 0:
                return i
    return -1


def scan(root):
    """[(file, line, col, table, field)] of every read, and the texts."""
    texts = {}
    for f in sources(root):
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
            texts[f] = blank(fh.read())
    funcs, members, local = {}, {}, {}
    for name, tb in TABLES.items():
        ty = tb["type"]
        decl = re.compile(r"\b(?:struct\s+)?" + ty + r"\s*\*\s*(?:const\s+)?(\w+)\s*([(;,)=\[]?)")
        for f, t in texts.items():
            for m in decl.finditer(t):
                ident, nxt = m.group(1), m.group(2)
                if nxt == "(":
                    funcs[ident] = name        # a function returning the pointer
                elif f.endswith(".h") and nxt == ";":
                    members[ident] = name      # a struct member (km_train_plan's task)
                else:
                    local.setdefault(f, {})[ident] = name
            # a function whose return type ends the line before its name
            for m in re.finditer(r"\b" + ty + r"\s*\*\s*\n(\w+)\s*\(", t):
                funcs[m.group(1)] = name
    field_of = {fl: name for name, tb in TABLES.items() for fl in tb["fields"]}
    arrow = re.compile(r"->\s*(" + "|".join(field_of) + r")\b")
    reads = []
    for f, t in texts.items():
        starts = [0] + [i + 1 for i, c in enumerate(t) if c == "\n"]
        for m in arrow.finditer(t):
            fl = m.group(1)
            want = field_of[fl]
            p = m.start()
            q = p
            while q > 0 and t[q - 1] in " \t\n":
                q -= 1
            kind = None
            if q > 0 and t[q - 1] == ")":
                o = open_paren(t, q - 1)
                fn, _, _ = ident_before(t, o) if o >= 0 else ("", 0, 0)
                kind = funcs.get(fn)
            else:
                ident, s, _ = ident_before(t, p)
                if ident:
                    b = s
                    while b > 0 and t[b - 1] in " \t\n":
                        b -= 1
                    via_member = t[max(0, b - 2):b] == "->" or (b > 0 and t[b - 1] == ".")
                    kind = members.get(ident) if via_member else local.get(f, {}).get(ident)
            if kind == want:
                line = next(i for i in range(len(starts) - 1, -1, -1) if starts[i] <= p)
                reads.append((f, line + 1, p - starts[line], want, fl))
    return reads, texts


def compiler_reads(root):
    """The same reads as gcc sees them: fields renamed, "no member named" errors."""
    inc = subprocess.run(["pg_config", "--includedir-server"], capture_output=True,
                         text=True, check=True).stdout.strip()
    tmp = tempfile.mkdtemp(prefix="check_fields.")
    try:
        shutil.copytree(os.path.join(root, "src"), os.path.join(tmp, "src"))
        for name, tb in TABLES.items():
            path = os.path.join(tmp, tb["header"])
            s = open(path).read()
            a = s.index("typedef struct " + tb["type"])
            b = s.index("} " + tb["type"] + ";")
            body = blank(s[a:b])
            for fl in tb["fields"]:
                body = re.sub(r"(?<![\w.>])" + fl + r"\b(?=\s*(?:\[[^\]]*\])?\s*;)", "zz_" + fl, body)
            open(path, "w").write(s[:a] + body + s[b:])
        out = []
        rx = re.compile(r"^(src/[^:]+):(\d+):(\d+): error: .*?\b(km_task_ops|km_repr_ops)\b.*?"
                        r"has no member named .(\w+).")
        types = {tb["type"]: name for name, tb in TABLES.items()}
        dirs = ["-Isrc/core"] + ["-Isrc/core/" + l for l in sorted(os.listdir(os.path.join(tmp, "src/core"))) if os.path.isdir(os.path.join(tmp, "src/core", l))] + ["-Isrc/pg", "-Isrc/sql", "-Isrc/catalog", "-I" + inc]
        for f in sources(tmp):
            if not f.endswith(".c"):
                continue
            r = subprocess.run(["gcc", "-std=gnu99", "-fsyntax-only", "-fmax-errors=0",
                                "-DKM_VERSION_STRING=\"x\""] + dirs + [f],
                               cwd=tmp, capture_output=True, text=True)
            for line in r.stderr.splitlines():
                m = rx.match(line)
                if m:
                    out.append((m.group(1), int(m.group(2)), types[m.group(4)], m.group(5)))
        return sorted(set(out))
    finally:
        shutil.rmtree(tmp)


def tighten(path, counts):
    s = open(path).read()
    a = s.index("READERS = {", s.index("# BEGIN READERS"))
    b = s.index("}\n# END READERS")
    rows = []
    for f, (nt, nr) in sorted(READERS.items()):
        ht, hr = counts.get(f, (0, 0))
        nt, nr = min(nt, ht), min(nr, hr)
        if nt or nr:
            rows.append(f'    "{f}": ({nt}, {nr}),\n')
    open(path, "w").write(s[:a] + "READERS = {\n" + "".join(rows) + s[b:])


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    reads, _ = scan(root)
    failed = 0
    counts = {}
    per_field = {}
    own_reads = {name: 0 for name in TABLES}
    for f, ln, col, table, fl in reads:
        if TABLES[table]["own"].fullmatch(f):
            own_reads[table] += 1
            continue
        c = counts.setdefault(f, [0, 0])
        c[0 if table == "task" else 1] += 1
        per_field[(table, fl)] = per_field.get((table, fl), 0) + 1

    if "--verify" in sys.argv:
        # the owners' registries initialise their rows (.classes = ...): not compared
        def other(f, t):
            return f.endswith(".c") and not TABLES[t]["own"].fullmatch(f)
        mine = sorted(set((f, ln, t, fl) for f, ln, _, t, fl in reads if other(f, t)))
        cc = [r for r in compiler_reads(root) if other(r[0], r[2])]
        missed = sorted(set(cc) - set(mine))
        extra = sorted(set(mine) - set(cc))
        if missed or extra:
            failed += 1
            print(f"not ok - the reading agrees with the compiler ({len(cc)} sites by gcc, {len(mine)} here):")
            for r in missed:
                print("  missed here: %s:%d %s.%s" % r)
            for r in extra:
                print("  not a read for gcc: %s:%d %s.%s" % r)
        else:
            print(f"ok - the reading agrees with the compiler ({len(cc)} file:line:field sites)")

    if "--tighten" in sys.argv:
        tighten(os.path.abspath(__file__), counts)
        print("# READERS lowered to today's counts")
        return 0

    # The rule is 0 for both tables (issue 28): READERS may not list a reader again.
    listed = {f: c for f, c in READERS.items() if any(c)}
    if listed:
        failed += 1
        print("not ok - READERS of tools/check_fields.py is empty (task and representation fields are "
              "read only by their own modules): it lists " + ", ".join(sorted(listed)))
    else:
        print("ok - READERS of tools/check_fields.py is empty: no task or representation field is read "
              "outside its module")

    for name, idx in (("task", 0), ("repr", 1)):
        tb = TABLES[name]
        bad, lower = [], []
        for f in sorted(set(counts) | set(READERS)):
            have = counts.get(f, [0, 0])[idx]
            allow = READERS.get(f, (0, 0))[idx]
            if have > allow:
                sites = ["    %s:%d: ->%s" % (g, ln, fl) for g, ln, _, t, fl in reads if g == f and t == name]
                bad.append(f"  {f}: {have} reads, {allow} allowed\n" + "\n".join(sites))
            elif have < allow:
                lower.append(f"{f} {allow} -> {have}")
        total = sum(c[idx] for c in counts.values())
        files = sum(1 for c in counts.values() if c[idx])
        fields = ", ".join(f"{fl} {per_field.get((name, fl), 0)}" for fl in tb["fields"])
        if bad:
            failed += 1
            print(f"not ok - {name} fields ({tb['type']}) read outside their module: {total} reads in {files} "
                  f"files ({fields}), beyond READERS of tools/check_fields.py (give the owner the step instead):")
            print("\n".join(bad))
        else:
            print(f"ok - {name} fields ({tb['type']}) read outside their module: {total} reads in {files} files, "
                  f"none beyond the ratchet ({fields})")
        if lower:
            print(f"# {name}: fewer reads than allowed, run python3 tools/check_fields.py --tighten: "
                  + "; ".join(lower))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
