#!/usr/bin/env python3
"""check_loops.py [ROOT]: one training loop (issue 28, "One loop").

The learner (src/core/learn/) asks for passes; the three hosts run them; no
Newton step and no loop over rows anywhere else.  Checked on the text of
src/ with comments and string literals blanked (a regex pass, no compiler):

  asks    km_pass_run( is called only by the learner: src/core/learn/*.c and
          the core roads that compose a training today (src/core/learn/pipeline*.c).
  feeds   km_pass_feed( is called only by the hosts that feed blocks
          (src/pg/host_memory.c, src/catalog/host_cursor.c) and the learner.
  runs    a host's ->run( / .run( only in src/core/learn/pass.c (km_pass_run)
          and the hosts (the aggregate host delegates to the cursor host).
  steps   a pass's own steps, <..pass..>->add( / ->init( / ->combine(, only in
          src/core/learn/ and the aggregate host's transition and combine
          (src/pg/pass_desc.c, src/sql/pass_agg.c): no loop calls them past
          km_pass_feed.
  sums    a pass's features and sums (km_approx_features(, km_primal_block_features(,
          km_accum_gram_add() only in src/core/learn/: no file outside the learner
          maps rows to features or adds them into sums.
  newton  the Newton: km_newton_run( only in src/core/learn/ and the core roads;
          the step (km_primal_pass_step(, ->primal_step(, km_primal_step()
          only in src/core/learn/newton.c (and where a step is defined).
  rows    a file of src/catalog, src/sql or src/pg that loops over SPI results
          (SPI_cursor_fetch(, catalog_query_scan(, pass_rows_scan(, a for
          over SPI_processed) is in ROW_LOOPS with its count and the reason;
          a new file, or one more loop in a listed file, fails.

Each allow-list entry below says why.  Prints "ok - ..." / "not ok - ..."
lines (test/check_core.sh counts them); exit status 1 when one fails.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from csource import blank, sources  # noqa: E402

# -- allow-lists ------------------------------------------------------------
LEARN = r"src/core/learn/[^/]+\.c"
ROADS = r"src/core/learn/pipeline[a-z_]*\.c"   # km_train's roads: the learner's compositions today
HOSTS_FEED = r"src/pg/host_memory\.c|src/catalog/host_cursor\.c"
HOSTS = HOSTS_FEED + r"|src/catalog/host_agg\.c|src/sql/pass_agg\.c|src/pg/pass_desc\.c|src/pg/pass_state\.c"

# (rule, call pattern, allowed files regex, {file: reason} for one-off exceptions)
CALL_RULES = [
    ("asks", "km_pass_run", r"km_pass_run\s*\(", LEARN + "|" + ROADS, {}),
    ("feeds", "km_pass_feed", r"km_pass_feed\s*\(", LEARN + "|" + HOSTS_FEED, {}),
    ("runs", "a host's run", r"(?:->|\.)\s*run\s*\(", r"src/core/learn/pass\.c|" + HOSTS, {}),
    ("steps", "a pass's add / init / combine",
     r"\w*pass\w*\s*->\s*(?:add|init|combine)\s*\(",
     LEARN + r"|src/pg/pass_desc\.c|src/pg/pass_state\.c|src/sql/pass_agg\.c", {}),
    # a pass's features and sums are computed only by the learner's passes (learn/): no
    # glue, host or other core file maps rows to features or adds them into sums
    # (issue 28: the two-pass kernel_train's aggregate was the last, src/sql/approx.c)
    ("sums", "a pass's features and sums (km_approx_features, km_primal_block_features, km_accum_gram_add)",
     r"\b(?:km_approx_features|km_primal_block_features|km_accum_gram_add)\s*\(",
     LEARN, {
         "src/core/methods/primal_pass.c":
             "km_primal_block_features' own definition: a representation's features then the whitening, "
             "called by the learner's passes only",
     }),
    ("newton", "km_newton_run", r"km_newton_run\s*\(", LEARN + "|" + ROADS, {}),
    ("newton", "km_primal_pass_step", r"km_primal_pass_step\s*\(", r"src/core/learn/newton\.c", {}),
    ("newton", "a method's primal_step op", r"->\s*primal_step\s*\(", r"src/core/learn/newton\.c", {}),
    ("newton", "km_primal_step", r"km_primal_step\s*\(",
     r"src/core/learn/newton\.c|src/core/methods/primal\.c", {
         "src/core/methods/svr.c":
             "its primal_step op is the shared step with the epsilon-insensitive loss "
             "(the op's definition, one call, no loop)",
     }),
]

# Files of the glue that loop over SPI results, with the number of loop sites
# (SPI_cursor_fetch(, catalog_query_scan(, pass_rows_scan(, for over
# SPI_processed) and why.  The count is a ratchet: more fails, fewer asks
# for the number to be lowered here.
ROW_LOOPS = {
    "src/catalog/host_cursor.c": (3, "the cursor host: pass_rows_scan and its two scans (count, run)"),
    "src/catalog/host_agg.c": (1, "the aggregate host: the counting statement's rows, one per label and side"),
    "src/catalog/catalog_query.c": (3, "the statement runner: catalog_query_scan (the cursor host's and the "
                                       "scorers' fetch loop) and fetch_rows, the in-memory collect of a named "
                                       "exact model's rows (a gather into a RowSet for the memory host)"),
    "src/catalog/named_regression.c": (1, "the regression task's scoring: the score statement's rows, one per "
                                          "side (held out, train, skipped)"),
    "src/catalog/named_table.c": (2, "kernel_table_rows: a table's rows encoded as a set-returning function, no training"),
}
GLUE = re.compile(r"src/(catalog|sql|pg)/[^/]+\.[ch]$")
ROW_SITE = re.compile(r"SPI_cursor_fetch\s*\(|\bcatalog_query_scan\s*\(|\bpass_rows_scan\s*\("
                      r"|\b(?:for\s*\([^;{]*;|while\s*\()[^;{]*\bSPI_processed\b")


DECL_PREFIX = re.compile(r"\s*(?:(?:extern|static|const|struct|unsigned|signed)\s+)*"
                         r"[A-Za-z_]\w*[\s\*]+$")


def is_call(line, col):
    """False for a definition (name at column 0) or a prototype (a type before it)."""
    prefix = line[:col]
    if prefix == "":
        return False
    m = DECL_PREFIX.fullmatch(prefix)
    if m and prefix.split()[-1].rstrip("*") not in ("return", "else", "do", "case"):
        return False
    return True


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    texts = {}
    for f in sources(root):
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
            texts[f] = blank(fh.read())
    failed = 0

    for rule, what, pat, allowed, exceptions in CALL_RULES:
        rx, ok_rx = re.compile(pat), re.compile(allowed)
        bad, seen, excused = [], 0, set()
        for f, t in texts.items():
            for ln, line in enumerate(t.split("\n"), 1):
                for m in rx.finditer(line):
                    if not is_call(line, m.start()):
                        continue
                    seen += 1
                    if ok_rx.fullmatch(f):
                        continue
                    if f in exceptions:
                        excused.add(f)
                        continue
                    bad.append(f"  {f}:{ln}: {line.strip()}")
        stale = sorted(set(exceptions) - excused)
        if bad or stale:
            failed += 1
            print(f"not ok - {rule}: {what} " + ("called outside its allowed files" if bad else
                                                  "has a listed exception that no longer holds") +
                  f" ({allowed.replace(chr(92), '')}; exceptions in tools/check_loops.py):")
            if bad:
                print("\n".join(bad))
            for f in stale:
                print(f"  {f}: listed as an exception to {what} but no longer calls it: drop it from CALL_RULES")
        else:
            note = f", {len(excused)} listed exception" + ("s" if len(excused) != 1 else "") if excused else ""
            print(f"ok - {rule}: {what} called only where allowed ({seen} calls{note})")

    counts = {}
    lines = {}
    for f, t in texts.items():
        if not GLUE.match(f):
            continue
        for ln, line in enumerate(t.split("\n"), 1):
            sites = [m for m in ROW_SITE.finditer(line)
                     if m.group(0).startswith(("for", "while")) or is_call(line, m.start())]
            if sites:
                counts[f] = counts.get(f, 0) + len(sites)
                lines.setdefault(f, []).append(f"  {f}:{ln}: {line.strip()}")
    bad = []
    lower = []
    for f in sorted(set(counts) | set(ROW_LOOPS)):
        have, allow = counts.get(f, 0), ROW_LOOPS.get(f, (0, ""))[0]
        if have > allow:
            what = "a new file" if f not in ROW_LOOPS else f"{have} loop sites, {allow} allowed"
            bad.append(f"  {f} ({what}):\n" + "\n".join(lines[f]))
        elif have < allow:
            lower.append(f"{f} {allow} -> {have}")
    total = sum(counts.values())
    if bad:
        failed += 1
        print("not ok - rows: a loop over SPI results outside the allow-list (a training reads its rows "
              "through a host; list scoring or bookkeeping in ROW_LOOPS of tools/check_loops.py with a reason):")
        print("\n".join(bad))
    else:
        print(f"ok - rows: {total} loop sites over SPI results in {len(counts)} listed glue files")
    if lower:
        print("# rows: fewer loops than allowed, lower ROW_LOOPS in tools/check_loops.py: " + "; ".join(lower))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
