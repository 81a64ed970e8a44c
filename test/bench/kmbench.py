"""
What the Python benchmarks share (imported from test/bench/*.py, which
Python runs with this directory first on sys.path).
"""

import io


def copy_table(cur, name, X, y):
    """(Re)create table name (id int, f float8[], y float8) from the rows of
    X and the values of y by COPY, frozen and analyzed (stable plans and no
    hint-bit writes during a timed run)."""
    cur.execute("DROP TABLE IF EXISTS %s" % name)
    cur.execute("CREATE TABLE %s (id int, f float8[], y float8)" % name)
    buf = io.StringIO()
    for i, (row, t) in enumerate(zip(X.tolist(), y.tolist())):
        # repr() is the shortest string that reads back to the same double
        buf.write("%d\t{%s}\t%r\n" % (i + 1, ",".join(map(repr, row)), t))
    buf.seek(0)
    cur.copy_expert("COPY %s (id, f, y) FROM STDIN" % name, buf)
    cur.execute("VACUUM (FREEZE, ANALYZE) %s" % name)


def backend_hwm(cur):
    """Peak resident memory (VmHWM, bytes) of the backend of cur (NaN if
    its /proc entry cannot be read: another host or user)."""
    cur.execute("SELECT pg_backend_pid()")
    pid = cur.fetchone()[0]
    try:
        with open("/proc/%d/status" % pid) as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return float("nan")
