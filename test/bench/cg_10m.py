#!/usr/bin/python3
"""
10M rows, d = 20, nystrom ridge m = 4,000 by "solver": "cg" with 2 parallel
workers (issue 31, benchmark 3; target: at most 10 minutes), against the
one-pass m = 1,000 on the same rows: held-out RMSE and training time.

Rows from big_rows.py (uniform [0, 1]^20, a smooth target, noise sd 0.1),
10,000,000 for training and 20,000 held out, loaded once by binary COPY.
Both models by name (kernel_model_train) with max_parallel_workers_per_gather
= 2 (parallel_setup_cost 0 so the planner takes the workers), lambda 0.1,
gamma 1 / d.  kernel_ml.progress = on: each progress NOTICE is printed with
the seconds since the training began (the CG iterations, their residuals),
so a run cut short still gives the time per pass (the last iteration seen
is the count of CG iterations: kernel_model_info does not keep it).

Environment: KM_10M_N (training rows), KM_10M_CG (m, default 4000),
KM_10M_DIRECT (m, default 1000; 0 to skip), KM_10M_MAXITER (CG's max_iter:
a short run that times the passes; the model is then stored with a warning), KM_10M_KEEP=1 (keep the tables:
a second run with KM_10M_REUSE=1 skips the load).  KM_BENCH_QUICK=1: 200,000
rows, m = 1,000 by CG and 500 in one pass.
"""

import json
import os
import re
import sys
import time

import psycopg2

import big_rows

QUICK = os.environ.get("KM_BENCH_QUICK") == "1"
N = int(os.environ.get("KM_10M_N", "200000" if QUICK else "10000000"))
NTEST = 20000
CG_M = int(os.environ.get("KM_10M_CG", "1000" if QUICK else "4000"))
DIRECT_M = int(os.environ.get("KM_10M_DIRECT", "500" if QUICK else "1000"))


class Notices:
    """Prints each progress phase (not the per-block row counts) with the
    seconds since the training began; keeps the last CG iteration seen."""

    def __init__(self):
        self.t0 = time.perf_counter()
        self.iterations = None

    def append(self, msg):
        msg = msg.strip()
        if re.search(r": \d+ of \d+ rows \(", msg) or "kernel rows" in msg:
            return
        it = re.search(r"; cg (\d+): residual", msg)
        if it:
            self.iterations = int(it.group(1))
        print("    %7.1f s  %s" % (time.perf_counter() - self.t0,
                                   msg.replace("NOTICE:  kernel_model_train: ", "")), flush=True)


def train(conn, cur, name, opts):
    la = os.getloadavg()[0]
    notices = conn.notices = Notices()
    t0 = time.perf_counter()
    cur.execute("SELECT kernel_model_train(%s, 'SELECT f, y FROM kmb_10m_train', %s::jsonb) "
                "IS NOT NULL", (name, json.dumps(opts)))
    secs = time.perf_counter() - t0
    conn.notices = []
    cur.execute("SELECT sqrt(avg((kernel_predict(%s, f) - y) ^ 2)) FROM kmb_10m_test", (name,))
    rmse = float(cur.fetchone()[0])
    it = notices.iterations
    print("  %-10s m = %5d  %7.1f s (%.1f min)  held-out RMSE %.5f%s  (load at start %.2f, "
          "at end %.2f)" % (opts.get("solver", "one-pass"), opts["components"], secs, secs / 60,
                            rmse, "  %s iterations" % it if it else "", la, os.getloadavg()[0]),
          flush=True)
    cur.execute("SELECT kernel_model_drop(%s)", (name,))


def main():
    conn = psycopg2.connect("")
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("SET client_min_messages = notice")
    cur.execute("CREATE EXTENSION IF NOT EXISTS kernel_ml")
    for s in ("max_parallel_workers_per_gather = 2", "parallel_setup_cost = 0",
              "kernel_ml.progress = on", "kernel_ml.progress_interval = 0"):
        cur.execute("SET " + s)
    if os.environ.get("KM_10M_REUSE") != "1":
        t0 = time.perf_counter()
        big_rows.load(cur, "kmb_10m_train", big_rows.chunks(N, 1031))
        big_rows.load(cur, "kmb_10m_test", big_rows.chunks(NTEST, 2031))
        print("loaded %s + %s rows in %.0f s" % (format(N, ","), format(NTEST, ","),
                                                 time.perf_counter() - t0), flush=True)
    base = {"approximation": "nystrom", "lambda": 0.1, "test_fraction": 0, "deploy": "always"}
    if CG_M:
        cg = dict(base, components=CG_M, solver="cg")
        if os.environ.get("KM_10M_MAXITER"):
            cg["max_iter"] = int(os.environ["KM_10M_MAXITER"])
        train(conn, cur, "kmb_10m_cg", cg)
    if DIRECT_M:
        train(conn, cur, "kmb_10m_direct", dict(base, components=DIRECT_M))
    if os.environ.get("KM_10M_KEEP") != "1":
        cur.execute("DROP TABLE kmb_10m_train, kmb_10m_test")
    conn.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
