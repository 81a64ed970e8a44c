#!/usr/bin/python3
"""
Scoring a matrix (issue 30 section 3): rows per second of
kernel_predict_matrix(model, features float8[][]) against per-row
kernel_predict, scikit-learn's batch predict, and the arithmetic limit.

An exact RBF ridge model of N_TRAIN rows of d features (d 20, 100, 500) scores
ROWS rows per call:

  per-row    SELECT sum(kernel_predict(m, f)) over ROWS rows of a table
  matrix     SELECT kernel_predict_matrix(m, x) with x the ROWS x d array
             stored in a table (server time: the array detoasted, validated,
             scored a panel at a time, the result built)
  client     the same with x sent by psycopg2 as a 2-D list (its text
             form parsed by the server: what a client pays)
  sklearn    KernelRidge(kernel="rbf").predict on the same standardized rows
             and the same number of training rows (one rbf_kernel block and
             one dot)
  limit      the arithmetic limit, from two rates measured on this machine
             side by side with the runs (medians): dgemm's (NumPy, rows x d
             times d x N_TRAIN, one thread, the faster of 2,048 rows and
             the scorer's own panel of rows) and
             the vectorised exp's (libmvec, the loop v[i] = exp(-g v[i])
             compiled here with -O3 -ffast-math as src/core/kernels/kernel_maps.c
             is, AVX2 when the CPU has it; its object must call libmvec).
             A row costs 2 N_TRAIN d + 2 N_TRAIN flops (the kernel block and
             the outputs) at dgemm's rate plus N_TRAIN exp at exp's rate:
               dgemm-only limit = dgemm rate / flops of a row (the exp
                                  left out: out of reach when d is small)
               full limit       = 1 / (flops / dgemm rate + N_TRAIN / exp rate)
             Both ratios are printed; the target is met against the full
             limit, the arithmetic the computation cannot avoid.

One BLAS thread everywhere (kernel_ml.blas_threads = 1, threadpoolctl).
Times are CPU seconds (the backend's from /proc/PID/schedstat, so the script must run on
the server's host; the client's for scikit-learn, dgemm and the list
formatting of "client"), median of RUNS runs, the variants alternating:
on a shared machine wall time measures the neighbours.  "(wall)" is the
matrix form's wall-clock rate.  Prints rows/s and the
ratios matrix / per-row, matrix / sklearn and matrix / limit (target >=
0.8 at 10,000 rows per call); checks the values agree with kernel_predict
within 1e-12 relative.

Run against any cluster with kernel_ml installed, from the libpq
environment, with Debian's Python:
    /usr/bin/python3 test/bench/matrix_scoring.py
Environment: KM_BENCH_RUNS (default 5), KM_BENCH_QUICK=1 (N_TRAIN 1,000,
d 20 and 100, one run).
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import psycopg2
from threadpoolctl import threadpool_limits

import kmbench

QUICK = os.environ.get("KM_BENCH_QUICK") == "1"
N_TRAIN = 1000 if QUICK else 2000
ROWS = 10000
DIMS = (20, 100) if QUICK else (20, 100, 500)
RUNS = 1 if QUICK else int(os.environ.get("KM_BENCH_RUNS", "5"))
PANEL = 2048            # a shape of the limit's dgemm: a large one
PANEL_BYTES = 4 * 1024 * 1024   # predict_matrix.c's PANEL_BYTES
SEED = 20261127
TARGET = 0.8
TABLE = "km_bench_mx"


def backend_cpu(pid):
    """CPU seconds the backend has run so far (/proc/PID/schedstat, in ns)."""
    with open("/proc/%d/schedstat" % pid) as fh:
        return int(fh.read().split()[0]) / 1e9


def timed(cur, sql, args=None):
    """Wall seconds and the backend's CPU seconds of one statement."""
    c0 = backend_cpu(PID)
    start = time.perf_counter()
    cur.execute(sql, args)
    cur.fetchone()
    return time.perf_counter() - start, backend_cpu(PID) - c0


def panel_rows(d):
    """Rows of the panels kernel_predict_matrix scores (predict_matrix.c's
    4 MB of work: d + N_TRAIN + 1 + 1 doubles a row, one output)."""
    return min(ROWS, int(PANEL_BYTES // (8.0 * (d + N_TRAIN + 2))))


def dgemm_rate(d):
    """Flop/s of dgemm, one thread, by CPU time: the faster of a panel of
    PANEL rows and a panel of the scorer's own shape, d x N_TRAIN on the
    right (at d = 20 the smaller panel runs faster; the limit takes the
    best dgemm does)."""
    rng = np.random.default_rng(SEED)
    B = rng.normal(size=(d, N_TRAIN))
    best = 0.0
    for rows in (PANEL, panel_rows(d)):
        A = rng.normal(size=(rows, d))
        C = np.empty((rows, N_TRAIN))
        reps = max(1, int(2e9 / (2.0 * rows * d * N_TRAIN)))
        start = time.process_time()
        for _ in range(reps):
            np.matmul(A, B, out=C)
        best = max(best, reps * 2.0 * rows * d * N_TRAIN / (time.process_time() - start))
    return best


EXP_SOURCE = r"""
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* the map of src/core/kernels/kernel_maps.c: one libmvec call per vector of rows */
__attribute__((noinline)) static void
map_exp(double *restrict o, const double *restrict v, size_t n, double g)
{
	for (size_t i = 0; i < n; i++)
		o[i] = exp(-g * v[i]);
}

int
main(int argc, char **argv)
{
	enum {N = %d};
	static double v[N], o[N];
	long		reps = atol(argv[1]);
	double		s = 0.0;
	struct timespec t0, t1;

	for (int i = 0; i < N; i++)
		v[i] = (double) (i %% 400) / 10.0;	/* squared distances 0 to 40 */
	map_exp(o, v, N, 0.05);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	for (long r = 0; r < reps; r++)
	{
		map_exp(o, v, N, 0.05 + 1e-9 * (double) (r & 1));
		s += o[r %% N];
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
	printf("%%.17g %%.17g\n", (double) reps * N /
		   ((double) (t1.tv_sec - t0.tv_sec) + 1e-9 * (double) (t1.tv_nsec - t0.tv_nsec)), s);
	return 0;
}
"""


def build_exp_rate(tmp):
    """The exp-rate program, built as kernel_maps.c is; its libmvec entry."""
    src = os.path.join(tmp, "exp_rate.c")
    exe = os.path.join(tmp, "exp_rate")
    with open(src, "w") as fh:
        fh.write(EXP_SOURCE % N_TRAIN)
    with open("/proc/cpuinfo") as fh:
        avx2 = " avx2" in fh.read()
    flags = ["-O3", "-ffast-math"] + (["-mavx2", "-mfma"] if avx2 else [])
    subprocess.run([os.environ.get("CC", "cc")] + flags + ["-o", exe, src, "-lm"], check=True)
    with open(exe, "rb") as fh:
        image = fh.read()
    entry = next((e for e in ("_ZGVdN4v_exp", "_ZGVbN2v_exp") if e.encode() in image), None)
    if entry is None:
        sys.exit("the exp loop did not compile to a libmvec call: no vectorised exp to measure")
    return exe, entry


def exp_rate(exe):
    """exp per CPU second of the libmvec loop, rows of N_TRAIN in cache."""
    out = subprocess.run([exe, str(int(1.5e8 / N_TRAIN))], check=True, capture_output=True, text=True)
    return float(out.stdout.split()[0])


def bench_dim(cur, d, exe):
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(SEED + d)
    X = rng.normal(size=(N_TRAIN + ROWS, d))
    y = np.sin(X[:, 0]) + 0.1 * X[:, 1:].sum(axis=1) + 0.1 * rng.normal(size=len(X))
    kmbench.copy_table(cur, TABLE, X, y)
    gamma = 1.0 / d
    cur.execute(f"DROP TABLE IF EXISTS {TABLE}_model")
    cur.execute(f"CREATE TABLE {TABLE}_model AS SELECT kernel_train(f, y, "
                f"'{{\"lambda\": 0.1, \"gamma\": {gamma}}}') AS model "
                f"FROM {TABLE} WHERE id <= {N_TRAIN}")
    cur.execute(f"DROP TABLE IF EXISTS {TABLE}_x")
    cur.execute(f"CREATE TABLE {TABLE}_x AS SELECT array_agg(f ORDER BY id) AS x "
                f"FROM {TABLE} WHERE id > {N_TRAIN}")
    cur.execute(f"VACUUM (FREEZE, ANALYZE) {TABLE}_model, {TABLE}_x")

    per_row = (f"SELECT sum(kernel_predict(m.model, t.f)) FROM {TABLE} t, {TABLE}_model m "
               f"WHERE t.id > {N_TRAIN}")
    matrix = (f"SELECT (SELECT sum(v) FROM unnest(kernel_predict_matrix(m.model, x.x)) v) "
              f"FROM {TABLE}_model m, {TABLE}_x x")
    client = f"SELECT (SELECT sum(v) FROM unnest(kernel_predict_matrix(m.model, %s::float8[])) v) FROM {TABLE}_model m"
    rows_list = X[N_TRAIN:].tolist()

    # the values: within 1e-12 of kernel_predict (the matrix scored once)
    cur.execute(f"DROP TABLE IF EXISTS {TABLE}_v")
    cur.execute(f"CREATE TABLE {TABLE}_v AS SELECT kernel_predict_matrix(m.model, x.x) AS v "
                f"FROM {TABLE}_model m, {TABLE}_x x")
    cur.execute(f"SELECT max(abs(p.v[t.id - {N_TRAIN}] - kernel_predict(m.model, t.f))) "
                f"/ max(abs(kernel_predict(m.model, t.f))) "
                f"FROM {TABLE} t, {TABLE}_model m, {TABLE}_v p WHERE t.id > {N_TRAIN}")
    rel = cur.fetchone()[0]
    if not rel < 1e-12:
        sys.exit(f"d = {d}: kernel_predict_matrix differs from kernel_predict by {rel:.3g} (relative)")

    scaler = StandardScaler().fit(X[:N_TRAIN])
    kr = KernelRidge(alpha=0.1 * N_TRAIN, kernel="rbf", gamma=gamma).fit(scaler.transform(X[:N_TRAIN]), y[:N_TRAIN])
    Xs = scaler.transform(X[N_TRAIN:])

    # CPU seconds (the backend's; the client's for scikit-learn and the
    # client form, which formats and sends the list): robust on a machine
    # shared with other work, where wall time is not
    times = {k: [] for k in ("per-row", "matrix", "client", "sklearn")}
    rates = {"dgemm": [], "exp": []}
    wall = []
    for sql in (per_row, matrix):
        timed(cur, sql)                      # warm-up: buffers, TOAST pages
    timed(cur, client, (rows_list,))
    for _ in range(RUNS):
        times["per-row"].append(timed(cur, per_row)[1])
        w, c = timed(cur, matrix)
        times["matrix"].append(c)
        wall.append(w)
        c0 = time.process_time()
        _, c = timed(cur, client, (rows_list,))
        times["client"].append(c + time.process_time() - c0)
        with threadpool_limits(limits=1):
            start = time.process_time()
            kr.predict(Xs)
            times["sklearn"].append(time.process_time() - start)
            rates["dgemm"].append(dgemm_rate(d))
        rates["exp"].append(exp_rate(exe))
    rate = statistics.median(rates["dgemm"])
    erate = statistics.median(rates["exp"])
    flops = 2.0 * N_TRAIN * d + 2.0 * N_TRAIN
    limits = {"dgemm": rate / flops, "full": 1.0 / (flops / rate + N_TRAIN / erate)}
    rps = {k: ROWS / max(statistics.median(v), 1e-9) for k, v in times.items()}
    rps["matrix wall"] = ROWS / statistics.median(wall)
    return rps, limits, rate, erate, rel


def main():
    conn = psycopg2.connect("")
    conn.autocommit = True
    cur = conn.cursor()
    global PID
    cur.execute("SELECT pg_backend_pid()")
    PID = cur.fetchone()[0]
    cur.execute("CREATE EXTENSION IF NOT EXISTS kernel_ml")
    for s in ("jit = off", "max_parallel_workers_per_gather = 0", "kernel_ml.blas_threads = 1"):
        cur.execute("SET " + s)
    print(f"matrix scoring: exact rbf ridge of {N_TRAIN:,} rows, {ROWS:,} rows per call, "
          f"one BLAS thread; median of {RUNS} runs, rows per CPU second (backend; client for sklearn)")
    print()
    print(f"{'d':>4} {'per-row':>10} {'matrix':>10} {'(wall)':>10} {'client':>10} {'sklearn':>10} "
          f"{'dgemm lim':>10} {'full lim':>10} {'dgemm GF/s':>11} {'exp G/s':>8} {'x per-row':>10} "
          f"{'x sklearn':>10} {'x dgemm':>8} {'x full':>7} {'max rel diff':>13}")
    worst = {"dgemm": float("inf"), "full": float("inf")}
    with tempfile.TemporaryDirectory() as tmp:
        exe, entry = build_exp_rate(tmp)
        for d in DIMS:
            rps, limits, rate, erate, rel = bench_dim(cur, d, exe)
            ratio = {k: rps["matrix"] / v for k, v in limits.items()}
            for k in worst:
                worst[k] = min(worst[k], ratio[k])
            print(f"{d:>4} {rps['per-row']:>10,.0f} {rps['matrix']:>10,.0f} {rps['matrix wall']:>10,.0f} "
                  f"{rps['client']:>10,.0f} {rps['sklearn']:>10,.0f} {limits['dgemm']:>10,.0f} "
                  f"{limits['full']:>10,.0f} {rate / 1e9:>11.1f} {erate / 1e9:>8.2f} "
                  f"{rps['matrix'] / rps['per-row']:>10.2f} {rps['matrix'] / rps['sklearn']:>10.2f} "
                  f"{ratio['dgemm']:>8.2f} {ratio['full']:>7.2f} {rel:>13.2g}")
    for t in ("", "_model", "_x", "_v"):
        cur.execute(f"DROP TABLE IF EXISTS {TABLE}{t}")
    print()
    print(f"exp: libmvec's {entry}")
    print(f"matrix / dgemm-only limit, worst: {worst['dgemm']:.2f}")
    print(f"matrix / full limit (dgemm + exp), worst: {worst['full']:.2f} (target >= {TARGET}): "
          f"{'met' if worst['full'] >= TARGET else 'not met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
