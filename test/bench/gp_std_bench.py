#!/usr/bin/python3
"""
Gaussian-process standard deviation scoring (issue 32, benchmark "GP std"):
kernel_predict_std of an exact ridge model over many rows in one backend,
against the arithmetic limit and scikit-learn, side by side in one run.

Data: by the same formula in SQL and NumPy, d = 20:
    f_j = sin(0.37 i (j + 1) + j),  y = 10 sin(pi f_1 f_2) + 20 (f_3 - 0.5)^2 + 10 f_4 + 5 f_5
training rows i = 1 .. M (M = 1000), scoring rows i = M + 1 .. M + N (N = 100,000).
The model: kernel_train(f, y, '{"gamma": 1/d, "lambda": 0.01}') (exact rbf
ridge, standardized rows, intercept).

1. kernel_ml: SELECT sum(kernel_predict_std(model, f)) over the N rows in one
   backend (serial plan), the model a parameter; rows/s (the first row builds
   the factor of K + lambda I, included).  Also SELECT sum(kernel_predict(...))
   for the cost of the mean alone.  Target: >= 80,000 rows/s on 2 cores.
2. The arithmetic limit: per row, k_x (m kernel values: 2 m d + 3 m flops and
   m exp) and the triangular solve L^-1 k_x (m^2 flops) and its norm (2 m):
   flops_per_row = m^2 + 2 m d + 5 m.  The machine's BLAS rates are measured
   here, in NumPy/SciPy (OpenBLAS) on 1 thread: dtrsv (one row at a time, the
   per-row limit) and dtrsm on blocks of 256 rows (the batched limit), both
   m x m lower triangular; the limits are rate / flops_per_row.
3. scikit-learn: GaussianProcessRegressor(ConstantKernel(s2) * RBF(l) +
   WhiteKernel(s2 lambda), optimizer=None, alpha=0) fitted on the standardized
   training rows and the centred target (s2 = the model's amplitude, lambda
   its lambda plus jitter, l = sqrt(1 / (2 gamma))); predict(X, return_std=True)
   on the N standardized rows, 2 BLAS threads, timed; its std agrees with
   kernel_predict_std's within 1e-8 relative.

4. kernel_predict_std_matrix (the batched form): the N rows in blocks of
   B = 1,000 .. 10,000 rows, one 2-D array per block
   (the arrays built first, array_agg(f) ... GROUP BY (i - M - 1) / B into a
   temporary table, untimed; then SELECT sum(cardinality(
   kernel_predict_std_matrix(model, a))) over it, timed), one backend, kernel_ml.blas_threads =
   KM_GP_BLAS_THREADS (default 2: the target's 2 cores; the setting's own
   default is 1); its values equal kernel_predict_std's within
   1e-12 relative.  Its arithmetic limit: per row the kernel block by DGEMM
   (2 m d flops, plus m exp) and the dtrsm (m^2) and the norm (2 m), at
   the DGEMM rate measured here (m x m x m, 1 and 2 threads):
   rate / (m^2 + 2 m d + 2 m).  kernel_predict_matrix (the mean) over the
   same blocks of 2,000 rows times the same kernel block (GEMM, exp,
   array_agg) without the solve: what the solve leaves to the rest.

KM_BENCH_QUICK=1: N = 20,000, one run.  KM_BENCH_RUNS (default 3): medians.
Run against any cluster with kernel_ml installed (libpq environment), or
through `make bench` (test/bench/run.sh).
"""

import json
import os
import statistics
import sys
import time

import numpy as np
import psycopg2
from scipy.linalg import blas as sblas
from threadpoolctl import threadpool_limits

QUICK = os.environ.get("KM_BENCH_QUICK") == "1"
RUNS = int(os.environ.get("KM_BENCH_RUNS", "1" if QUICK else "3"))
N = int(os.environ.get("KM_GP_ROWS", "20000" if QUICK else "100000"))
BLAS_THREADS = int(os.environ.get("KM_GP_BLAS_THREADS", str(min(2, os.cpu_count() or 1))))
M = 1000
D = 20
GAMMA = 1.0 / D
LAM = 0.01
TARGET = 80_000


def gen(lo, hi):
    ii = np.arange(lo, hi + 1, dtype=float)
    X = np.sin(0.37 * ii[:, None] * (np.arange(D) + 1.0)[None, :] + np.arange(D)[None, :])
    y = (10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3] + 5 * X[:, 4])
    return X, y


def make_table(cur):
    cur.execute("DROP TABLE IF EXISTS kmb_gp")
    cur.execute("""CREATE TABLE kmb_gp AS
        SELECT i, f, 10 * sin(pi() * f[1] * f[2]) + 20 * (f[3] - 0.5) ^ 2 + 10 * f[4] + 5 * f[5] AS y
        FROM (SELECT i, ARRAY[%s]::float8[] AS f FROM generate_series(1, %d) i) s"""
                % (", ".join("sin(0.37 * i * %d + %d)" % (j + 1, j) for j in range(D)), M + N))
    cur.execute("VACUUM (FREEZE, ANALYZE) kmb_gp")


def blas_rates(reps=3):
    """Flop rates (1 thread) of dtrsv and of dtrsm on 256 right-hand sides,
    m x m lower triangular: medians of reps timings."""
    rng = np.random.default_rng(32)
    A = rng.standard_normal((M, M)) / np.sqrt(M)
    L = np.asfortranarray(np.linalg.cholesky(A @ A.T + np.eye(M)))
    b = rng.standard_normal(M)
    B = np.asfortranarray(rng.standard_normal((M, 256)))
    flops_v = float(M) * M          # m(m+1)/2 multiply-adds
    with threadpool_limits(1):
        tv, tm = [], []
        for _ in range(reps):
            k = 2000
            t = time.perf_counter()
            for _ in range(k):
                sblas.dtrsv(L, b, lower=1)
            tv.append((time.perf_counter() - t) / k)
            k = 20
            t = time.perf_counter()
            for _ in range(k):
                sblas.dtrsm(1.0, L, B, lower=1)
            tm.append((time.perf_counter() - t) / k)
    return flops_v / statistics.median(tv), flops_v * 256 / statistics.median(tm)


def dgemm_rate(threads, reps=3):
    """Flop rate of an m x m x m DGEMM on threads BLAS threads (median)."""
    rng = np.random.default_rng(33)
    A = np.asfortranarray(rng.standard_normal((M, M)))
    B = np.asfortranarray(rng.standard_normal((M, M)))
    ts = []
    with threadpool_limits(threads):
        A @ B
        for _ in range(reps):
            t = time.perf_counter()
            for _ in range(5):
                A @ B
            ts.append((time.perf_counter() - t) / 5)
    return 2.0 * M * M * M / statistics.median(ts)


def ours_matrix(model, block, fn="kernel_predict_std_matrix"):
    """Seconds for kernel_predict_std_matrix over the N scoring rows in
    blocks of block rows, in a fresh backend; and the rows scored."""
    c2 = psycopg2.connect("")
    c2.autocommit = True
    cur = c2.cursor()
    cur.execute("SET client_min_messages = warning")
    cur.execute("SET jit = off")
    cur.execute("SET max_parallel_workers_per_gather = 0")
    # the batched form's BLAS threads: the 2 cores of the target (the
    # setting's default is 1; KM_GP_BLAS_THREADS to change)
    cur.execute("SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'kernel_ml'")
    cur.execute("LOAD 'kernel_ml'")
    cur.execute("SET kernel_ml.blas_threads = %d" % BLAS_THREADS)
    # the blocks as 2-D arrays first (untimed: building the arrays is the
    # query's work, not the scorer's), then the scorer over them
    cur.execute("CREATE TEMP TABLE kmb_blocks AS SELECT array_agg(f ORDER BY i) AS a "
                "FROM kmb_gp WHERE i > %d GROUP BY (i - %d) / %d" % (M, M + 1, block))
    t = time.time()
    cur.execute("SELECT sum(cardinality(%s(%%s::bytea, a))) FROM kmb_blocks" % fn,
                (psycopg2.Binary(model),))
    rows = cur.fetchone()[0]
    el = time.time() - t
    c2.close()
    return el, int(rows)


def ours(model, fn):
    """Seconds for fn over the N scoring rows in a fresh backend."""
    c2 = psycopg2.connect("")
    c2.autocommit = True
    cur = c2.cursor()
    cur.execute("SET client_min_messages = warning")
    cur.execute("SET jit = off")
    cur.execute("SET max_parallel_workers_per_gather = 0")
    t = time.time()
    cur.execute("SELECT sum(%s(%%s::bytea, f)) FROM kmb_gp WHERE i > %d" % (fn, M), (psycopg2.Binary(model),))
    cur.fetchone()
    el = time.time() - t
    c2.close()
    return el


def main():
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel
    from sklearn.preprocessing import StandardScaler

    conn = psycopg2.connect("")
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("SET client_min_messages = warning")
    cur.execute("SET extra_float_digits = 3")
    print("== GP std scoring (issue 32, test/bench/gp_std_bench.py%s): exact ridge, m = %d training rows, "
          "d = %d, %d scoring rows, medians of %d run(s), load average %s"
          % (", quick" if QUICK else "", M, D, N, RUNS, open("/proc/loadavg").read().split()[0]))
    make_table(cur)
    cur.execute("SELECT kernel_train(f, y, %s::jsonb) FROM kmb_gp WHERE i <= %s",
                (json.dumps({"gamma": GAMMA, "lambda": LAM}), M))
    model = bytes(cur.fetchone()[0])
    cur.execute("SELECT kernel_model_info(%s::bytea)", (psycopg2.Binary(model),))
    info = cur.fetchone()[0]
    info = info if isinstance(info, dict) else json.loads(info)
    s2 = float(info["amplitude"])
    lam = float(info["lambda"]) + float(info.get("jitter") or 0.0)
    gamma = float(info.get("gamma", GAMMA))

    # 1. kernel_ml, alternating with scikit-learn below
    Xtr, ytr = gen(1, M)
    Xq, _ = gen(M + 1, M + N)
    sc = StandardScaler().fit(Xtr)
    kern = (ConstantKernel(s2, "fixed") * RBF(np.sqrt(1.0 / (2.0 * gamma)), "fixed")
            + WhiteKernel(s2 * lam, "fixed"))
    gp = GaussianProcessRegressor(kern, optimizer=None, alpha=0.0).fit(sc.transform(Xtr), ytr - ytr.mean())
    Xqs = sc.transform(Xq)
    t_std, t_mean, t_sk = [], [], []
    blocks = [1000, 2000, 5000, 10000]
    t_mat = {b: [] for b in blocks}
    t_pm = []
    for _ in range(RUNS):
        t_std.append(ours(model, "kernel_predict_std"))
        t_mean.append(ours(model, "kernel_predict"))
        for b in blocks:
            el, rows = ours_matrix(model, b)
            assert rows == N, (rows, N)
            t_mat[b].append(el)
        t_pm.append(ours_matrix(model, 2000, "kernel_predict_matrix")[0])
        with threadpool_limits(2):
            t = time.time()
            _, std_sk = gp.predict(Xqs, return_std=True)
            t_sk.append(time.time() - t)
    # agreement on the first 1000 scoring rows
    cur.execute("SELECT kernel_predict_std(%%s::bytea, f) FROM kmb_gp WHERE i > %d AND i <= %d ORDER BY i"
                % (M, M + 1000), (psycopg2.Binary(model),))
    got = np.array([r[0] for r in cur.fetchall()])
    err = float(np.max(np.abs(got - std_sk[:1000]) / np.abs(std_sk[:1000])))
    cur.execute("SELECT kernel_predict_std_matrix(%%s::bytea, array_agg(f ORDER BY i)) FROM kmb_gp "
                "WHERE i > %d AND i <= %d" % (M, M + 1000), (psycopg2.Binary(model),))
    got_m = np.array(cur.fetchone()[0], dtype=float)
    err_m = float(np.max(np.abs(got_m - got) / np.abs(got)))
    err_msk = float(np.max(np.abs(got_m - std_sk[:1000]) / np.abs(std_sk[:1000])))

    # 2. the arithmetic limit
    rate_v, rate_m = blas_rates()
    fpr = float(M) * M + 2.0 * M * D + 5.0 * M
    ts, tm, tk = statistics.median(t_std), statistics.median(t_mean), statistics.median(t_sk)
    r_std, r_mean, r_sk = N / ts, N / tm, N / tk
    print("  flops per row m^2 + 2md + 5m = %.3g; BLAS on 1 thread: dtrsv %.2f GFLOP/s, dtrsm (256 rhs) %.2f GFLOP/s"
          % (fpr, rate_v / 1e9, rate_m / 1e9))
    print("  %-62s %10s %9s" % ("", "rows/s", "time s"))
    print("  %-62s %10.0f %9.2f" % ("kernel_predict_std, one backend (serial plan)", r_std, ts))
    print("  %-62s %10.0f %9.2f" % ("kernel_predict (the mean alone), one backend", r_mean, tm))
    print("  %-62s %10.0f %9.2f" % ("scikit-learn predict(return_std=True), 2 BLAS threads", r_sk, tk))
    print("  %-62s %10.0f" % ("arithmetic limit, dtrsv per row, 1 core", rate_v / fpr))
    print("  %-62s %10.0f" % ("arithmetic limit, dtrsv per row, 2 cores", 2 * rate_v / fpr))
    print("  %-62s %10.0f" % ("arithmetic limit, dtrsm batched, 2 cores", 2 * rate_m / fpr))
    print("  runs (s): kernel_predict_std %s; kernel_predict %s; scikit-learn %s" % (
        ", ".join("%.2f" % x for x in t_std), ", ".join("%.2f" % x for x in t_mean),
        ", ".join("%.2f" % x for x in t_sk)))
    print("  ratios: kernel_ml / scikit-learn %.2fx rows/s; kernel_ml / dtrsv limit (1 core) %.2f"
          % (r_std / r_sk, r_std / (rate_v / fpr)))
    print("  std vs scikit-learn on 1000 rows: max relative difference %.2g (want <= 1e-8)" % err)

    # 4. the batched form
    g1, g2 = dgemm_rate(1), dgemm_rate(2)
    fpb = float(M) * M + 2.0 * M * D + 2.0 * M
    print("  kernel_predict_std_matrix: flops per row m^2 + 2md + 2m = %.3g; DGEMM (m^3) %.2f GFLOP/s on 1 thread, "
          "%.2f on 2" % (fpb, g1 / 1e9, g2 / 1e9))
    print("  %-62s %10s %9s" % ("", "rows/s", "time s"))
    best = 0.0
    for b in blocks:
        tb = statistics.median(t_mat[b])
        best = max(best, N / tb)
        print("  %-62s %10.0f %9.2f" % ("kernel_predict_std_matrix, blocks of %d rows" % b, N / tb, tb))
    tpm = statistics.median(t_pm)
    print("  %-62s %10.0f %9.2f" % ("kernel_predict_matrix (the mean: same block, no solve), 2000", N / tpm, tpm))
    print("  %-62s %10.0f" % ("arithmetic limit at the DGEMM rate, 1 core", g1 / fpb))
    print("  %-62s %10.0f" % ("arithmetic limit at the DGEMM rate, 2 cores", g2 / fpb))
    for b in blocks:
        print("  runs (s), blocks of %d: %s" % (b, ", ".join("%.2f" % x for x in t_mat[b])))
    print("  ratios: best matrix / row form %.1fx; / scikit-learn %.1fx; / DGEMM limit (2 cores) %.2f"
          % (best / r_std, best / r_sk, best / (g2 / fpb)))
    print("  matrix vs row form on 1000 rows: max relative difference %.2g (want <= 1e-12); vs scikit-learn %.2g"
          % (err_m, err_msk))
    print("  target >= %d rows/s: row form %s, matrix form %s" % (
        TARGET, "met" if r_std >= TARGET else "NOT met", "met" if best >= TARGET else "NOT met"))
    cur.execute("DROP TABLE kmb_gp")
    conn.close()
    return 0 if err <= 1e-8 and err_m <= 1e-12 else 1


if __name__ == "__main__":
    sys.exit(main())
