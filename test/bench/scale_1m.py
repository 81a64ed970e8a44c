#!/usr/bin/python3
"""
Held-out error against training time at 1M rows, d = 20 (issue 31, benchmark
2): kernel_ml's one-pass nystrom ridge (m = 500 ... 4,000), its "solver":
"cg" (m = 4,000, 8,000), scikit-learn's Nystroem + Ridge, and Falkon's
algorithm (Rudi, Carratino & Rosasco 2017, Algorithm 1, written here in
NumPy / SciPy: uniform Nystrom centres, the preconditioner from
T = chol(K_mm + eps m I) and A = chol(T T' / m + lambda I), 20 CG
iterations, K_nm never stored: each iteration one blockwise pass), on the
same rows (big_rows.py: uniform [0, 1]^20, a smooth target, noise sd 0.1)
and the same two cores.

All fit rbf with gamma 1 / d on standardized features and the same ridge
(kernel_ml's lambda 0.1 = scikit-learn's alpha = Falkon's lambda * n).
kernel_ml runs by name (kernel_model_train) with max_parallel_workers_per_gather
= 2 and parallel_setup_cost 0 (its passes in 2 workers and the leader; CG's
iterations counted from its progress NOTICEs); scikit-learn with 2 BLAS threads; the
NumPy Falkon with its row blocks on 2 Python threads (NumPy releases the GIL
in BLAS and in exp), BLAS 1 thread each.  Each point is one run; the load
average is printed beside it.  Training time only (prediction excluded).

Seeds: one uniform sample of m centres is one draw; at m = 2,000 the held-out
RMSE of kernel_ml's and Falkon's fits moves by several per cent from one
sample to the next (scale_1m_gap.py), more than the systems differ.  So each
kernel_ml one-pass and Falkon point may be run for several seeds (kernel_ml's
"seed" option, Falkon's rng seed) and the curves and the dominance check use
the median over the seeds of each m.
Falkon's own code needs PyTorch (not importable here: checked at start).

Writes test/bench/scale_1m.json and docs/scale_1m.svg (matplotlib, if
importable; else only the table).

Environment: KM_SCALE_N (training rows, default 1,000,000), KM_SCALE_TEST
(held out, 20,000), KM_SCALE_ONEPASS / KM_SCALE_CG / KM_SCALE_SK /
KM_SCALE_FALKON (comma lists of m; empty to skip), KM_SCALE_SEEDS (comma list
of seeds for the one-pass and Falkon points; default "0": kernel_ml's default
seed and Falkon's rng seed 0), KM_SCALE_OUT (json path), KM_SCALE_APPEND=1 (add
to the json's results).
KM_BENCH_QUICK=1: 60,000 rows and small m.
"""

import json
import os
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import psycopg2
import scipy.linalg as sla
from threadpoolctl import threadpool_limits

import big_rows

QUICK = os.environ.get("KM_BENCH_QUICK") == "1"
N = int(os.environ.get("KM_SCALE_N", "60000" if QUICK else "1000000"))
NTEST = int(os.environ.get("KM_SCALE_TEST", "5000" if QUICK else "20000"))
LAMBDA = 0.1
GAMMA = 1.0 / big_rows.D
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.environ.get("KM_SCALE_OUT", os.path.join(HERE, "scale_1m.json"))
PLOT = os.path.join(HERE, "..", "..", "docs", "scale_1m.svg")


def ms(name, default, quick):
    v = os.environ.get(name, quick if QUICK else default)
    return [int(x) for x in v.split(",") if x.strip()]


ONEPASS = ms("KM_SCALE_ONEPASS", "500,1000,2000,4000", "250,500")
CG = ms("KM_SCALE_CG", "4000,8000", "1000")
SK = ms("KM_SCALE_SK", "250,500", "250,500")
FALKON = ms("KM_SCALE_FALKON", "1000,2000,4000", "250,1000")
SEEDS = ms("KM_SCALE_SEEDS", "0", "0")


NAMES = []


class CgIterations:
    """Progress NOTICE sink keeping the last CG iteration ("cg k: residual r")."""

    def __init__(self):
        self.last = None

    def append(self, msg):
        it = re.search(r"; cg (\d+): residual", msg)
        if it:
            self.last = int(it.group(1))


def load1():
    return os.getloadavg()[0]


def km_run(cur, label, m, opts, seed=None):
    name = "kmb_s1m_%d" % len(NAMES)
    NAMES.append(name)
    la = load1()
    its = cur.connection.notices = CgIterations()
    t0 = time.perf_counter()
    cur.execute("SELECT kernel_model_train(%s, 'SELECT f, y FROM kmb_s1m_train', %s::jsonb) "
                "IS NOT NULL", (name, json.dumps(opts)))
    secs = time.perf_counter() - t0
    cur.execute("SELECT sqrt(avg((kernel_predict(%s, f) - y) ^ 2)) FROM kmb_s1m_test", (name,))
    rmse = float(cur.fetchone()[0])
    cur.connection.notices = []
    return dict(system=label, m=m, seconds=secs, rmse=rmse, iterations=its.last, load=la,
                seed=seed)


def sk_run(Xtr, ytr, Xte, yte, m):
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    la = load1()
    with threadpool_limits(2):
        t0 = time.perf_counter()
        p = make_pipeline(StandardScaler(), Nystroem(kernel="rbf", gamma=GAMMA, n_components=m,
                                                     random_state=0),
                          Ridge(alpha=LAMBDA)).fit(Xtr, ytr)
        secs = time.perf_counter() - t0
        pred = p.predict(Xte)
    return dict(system="scikit-learn Nystroem + Ridge", m=m, seconds=secs,
                rmse=float(np.sqrt(np.mean((pred - yte) ** 2))), iterations=None, load=la)


# Falkon (Rudi et al. 2017, Algorithm 1), float64, blockwise
BLOCK = 4096


def rbf_block(Xb, C, cn, gamma):
    K = Xb @ C.T
    K *= 2.0 * gamma
    K -= gamma * np.einsum("ij,ij->i", Xb, Xb)[:, None]
    K -= gamma * cn[None, :]
    np.minimum(K, 0.0, out=K)
    np.exp(K, out=K)
    return K


def knm_times_vector(X, C, cn, u, v, pool):
    """sum over row blocks of Kr' (Kr u + v_block), Falkon's KnmTimesVector."""
    def part(lo):
        hi = min(lo + BLOCK, X.shape[0])
        Kr = rbf_block(X[lo:hi], C, cn, GAMMA)
        return Kr.T @ (Kr @ u + v[lo:hi])
    w = np.zeros(C.shape[0])
    for r in pool.map(part, range(0, X.shape[0], BLOCK)):
        w += r
    return w


def falkon_fit(X, y, m, iters=20, seed=0):
    n = X.shape[0]
    rng = np.random.default_rng(seed)
    C = X[np.sort(rng.choice(n, m, replace=False))]
    cn = np.einsum("ij,ij->i", C, C)
    lam = LAMBDA / n
    with threadpool_limits(2):
        Kmm = rbf_block(C, C, cn, GAMMA)
        T = sla.cholesky(Kmm + np.finfo(float).eps * m * np.eye(m), lower=False)
        A = sla.cholesky(T @ T.T / m + lam * np.eye(m), lower=False)
    tri = sla.solve_triangular
    with threadpool_limits(1), ThreadPoolExecutor(2) as pool:
        zeros = np.zeros(n)

        def bhb(u):
            au = tri(A, u)
            w = knm_times_vector(X, C, cn, tri(T, au), zeros, pool) / n
            return tri(A, tri(T, w, trans="T") + lam * au, trans="T")

        r = tri(A, tri(T, knm_times_vector(X, C, cn, np.zeros(m), y / n, pool), trans="T"),
                trans="T")
        # conjgrad (the paper's, t iterations, no early stop)
        beta = np.zeros(m)
        p = r.copy()
        rs = r @ r
        for _ in range(iters):
            Ap = bhb(p)
            a = rs / (p @ Ap)
            beta += a * p
            r -= a * Ap
            rsn = r @ r
            p = r + (rsn / rs) * p
            rs = rsn
        alpha = tri(T, tri(A, beta))
    return C, cn, alpha


def falkon_run(Xtr, ytr, Xte, yte, m, seed=0):
    la = load1()
    t0 = time.perf_counter()
    mu, sd = Xtr.mean(axis=0), Xtr.std(axis=0)
    Xs = (Xtr - mu) / sd
    ym = ytr.mean()
    C, cn, alpha = falkon_fit(Xs, ytr - ym, m, seed=seed)
    secs = time.perf_counter() - t0
    pred = rbf_block((Xte - mu) / sd, C, cn, GAMMA) @ alpha + ym
    return dict(system="Falkon (NumPy, 20 CG iterations)", m=m, seconds=secs,
                rmse=float(np.sqrt(np.mean((pred - yte) ** 2))), iterations=20, load=la,
                seed=seed)


def medians(res, system):
    """(median seconds, median RMSE, m, seeds) per m of a system, by m."""
    out = []
    for m in sorted({r["m"] for r in res if r["system"] == system}):
        rs = [r for r in res if r["system"] == system and r["m"] == m]
        out.append((float(np.median([r["seconds"] for r in rs])),
                    float(np.median([r["rmse"] for r in rs])), m, len(rs)))
    return out


def plot(res, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        matplotlib.rcParams["svg.fonttype"] = "none"   # text as text: a small file
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for system, mark in (("kernel_ml one-pass", "o-"), ("kernel_ml cg", "s-"),
                         ("scikit-learn Nystroem + Ridge", "^--"),
                         ("Falkon (NumPy, 20 CG iterations)", "d--")):
        pts = medians(res, system)
        if not pts:
            continue
        line, = ax.plot([p[0] for p in pts], [p[1] for p in pts], mark, label=system)
        each = [(r["seconds"], r["rmse"]) for r in res if r["system"] == system]
        if len(each) > len(pts):		# the seeds behind the medians
            ax.plot([e[0] for e in each], [e[1] for e in each], ".", color=line.get_color(),
                    alpha=0.5, markersize=4)
        for s, e, m, k in pts:
            ax.annotate("%d" % m + (" (%d seeds)" % k if k > 1 else ""), (s, e),
                        textcoords="offset points", xytext=(4, 4), fontsize=7)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("training time, s (2 cores)")
    ax.set_ylabel("held-out RMSE")
    ax.set_title("%s rows, d = 20 (labels: m; lines: medians over seeds, dots: each seed)"
                 % format(N, ","), fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    return True


def main():
    try:
        import torch  # noqa: F401
        print("note: PyTorch is importable; Falkon's own code could run too")
    except ImportError:
        print("note: PyTorch / falkon not importable: Falkon's algorithm runs in NumPy here")
    db = bool(ONEPASS or CG)		# the peers alone need no cluster
    if db:
        conn = psycopg2.connect("")
        conn.autocommit = True
        cur = conn.cursor()
        # notice: CG's progress NOTICEs carry its iterations
        cur.execute("SET client_min_messages = notice")
        cur.execute("CREATE EXTENSION IF NOT EXISTS kernel_ml")
        for s in ("max_parallel_workers_per_gather = 2", "parallel_setup_cost = 0",
                  "kernel_ml.progress = on", "kernel_ml.progress_interval = 0"):
            cur.execute("SET " + s)
        t0 = time.perf_counter()
        big_rows.load(cur, "kmb_s1m_train", big_rows.chunks(N, 31))
        big_rows.load(cur, "kmb_s1m_test", big_rows.chunks(NTEST, 3131))
        print("loaded %d + %d rows in %.0f s" % (N, NTEST, time.perf_counter() - t0))
    Xtr, ytr = big_rows.rows(N, 31)
    Xte, yte = big_rows.rows(NTEST, 3131)
    res = []
    if os.path.exists(OUT) and os.environ.get("KM_SCALE_APPEND") == "1":
        with open(OUT) as fh:
            res = json.load(fh)["results"]

    def emit(r):
        res.append(r)
        print("  %-34s m = %6d  %8.1f s  RMSE %.5f%s  (load %.2f)"
              % (r["system"], r["m"], r["seconds"], r["rmse"],
                 "  %s iterations" % r["iterations"] if r["iterations"] else "", r["load"]),
              flush=True)
        with open(OUT, "w") as fh:
            json.dump(dict(n=N, test=NTEST, d=big_rows.D, gamma=GAMMA, lam=LAMBDA,
                           results=res), fh, indent=1)

    base = {"approximation": "nystrom", "lambda": LAMBDA, "test_fraction": 0,
            "deploy": "always"}
    for m in ONEPASS:
        for seed in SEEDS:
            emit(km_run(cur, "kernel_ml one-pass", m, dict(base, components=m, seed=seed), seed))
    for m in CG:
        emit(km_run(cur, "kernel_ml cg", m, dict(base, components=m, solver="cg")))
    avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    for m in SK:
        # Nystroem's features and Ridge's centred copy: 2 n m doubles
        if 16.0 * N * m > 0.6 * avail:
            print("  scikit-learn m = %d skipped: needs ~%.1f GB, %.1f GB free"
                  % (m, 16.0 * N * m / 2 ** 30, avail / 2 ** 30))
            continue
        emit(sk_run(Xtr, ytr, Xte, yte, m))
    for m in FALKON:
        for seed in SEEDS:
            emit(falkon_run(Xtr, ytr, Xte, yte, m, seed))
    if db:
        for name in NAMES:
            cur.execute("SELECT kernel_model_drop(%s)", (name,))
        cur.execute("DROP TABLE kmb_s1m_train, kmb_s1m_test")
        conn.close()
    if plot(res, PLOT):
        print("plot: docs/scale_1m.svg")
    # dominance, on the medians over seeds: at each other system's point, the
    # best kernel_ml point no slower has lower error
    systems = sorted({r["system"] for r in res})
    km = [p for s in systems if s.startswith("kernel_ml") for p in medians(res, s)]
    for system in systems:
        if system.startswith("kernel_ml"):
            continue
        for secs, err, m, k in medians(res, system):
            faster = [p[1] for p in km if p[0] <= secs]
            best = min(faster) if faster else None
            print("  %s m = %d (%d seeds: median %.0f s, %.4f): best kernel_ml median within its "
                  "time %s: %s" % (system, m, k, secs, err,
                                   "%.4f" % best if best is not None else "none",
                                   "below" if best is not None and best < err else "NOT below"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
