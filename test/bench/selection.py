#!/usr/bin/python3
"""
kernel_ml model-selection benchmark (issue 6, "Speed and quality targets").

Started by test/bench/run.sh (`make bench`) inside a throwaway cluster, or on
its own:

    cd /work/main && make -s && make -s install &&
        pg_virtualenv -t /usr/bin/python3 test/bench/selection.py

The connection comes from the libpq environment (PGHOST, PGPORT, ...).  Run
with Debian's Python (/usr/bin/python3: numpy, scipy, scikit-learn,
threadpoolctl, psycopg2).  Everything printed is also saved to
test/bench/results-selection-latest.txt.

Setting: d = 20 features, RBF kernel at one gamma = 1/d, features z-scored
with the training mean and population standard deviation and the target
centred on its training mean (kernel_ml's defaults standardize = true,
fit_intercept = true; scikit-learn gets exactly the same preprocessed
problem: StandardScaler fitted on the training rows, then the centred
target, then KernelRidge without intercept).  Fixed-seed synthetic data:
a nonlinear target plus Gaussian noise, N training rows in a table and a
separate held-out set.  The same 20-value lambda grid, log-spaced from 1e-4
to 1e2, on both sides.  Two BLAS threads everywhere: `SET
kernel_ml.blas_threads = 2`, threadpoolctl.threadpool_limits(2) around
scikit-learn, openblas_set_num_threads(2) in the LAPACK helper.  Training
runs with max_parallel_workers_per_gather = 0 and JIT off.

Measured:
  1. kernel_train with the 20-lambda grid and cv "loo" (the eigen route),
     median of RUNS, vs GridSearchCV(KernelRidge, cv=5) over the same grid
     (fit and refit, SK_RUNS runs).  Target: kernel_ml >= 3x faster.
  2. Held-out RMSE of each side's refitted winner (kernel_ml's scored in SQL
     with kernel_predict).  Target: ours <= 1.01 x scikit-learn's.
  3. The whole kernel_train (Gram matrix, eigendecomposition, every lambda,
     refit) vs one LAPACK dsyevd('V') of the same Gram matrix, timed by
     test/bench/eig.c (LAPACKE_dsyevd_work through the same libopenblas as
     the backend; compiled here with gcc -O2 -llapacke -lopenblas).  Target:
     <= 1.5x.  dsyevd('N'), dpotrf, dpotri and dtrtri of the same matrix are
     timed for the record.
  4. GCV and 5-fold over the same grid, for the record.
  5. Crossover between the Cholesky-per-lambda route and the eigen route for
     L = 1, 2, 5, 10, 20, 40 lambdas.  The extension picks the route by L
     (KM_EIGEN_MIN_LAMBDAS in src/core/fit/select.h) and has no option to force it,
     so each L is timed in the route the extension takes, and the other
     route is estimated two ways: from the extension's own times (a + b L
     fitted to the Cholesky-route times at L < threshold; the eigen route's
     times at L >= threshold) and from LAPACK alone (L x (dpotrf + dpotri)
     vs one dsyevd).

Environment:
  KM_BENCH_QUICK=1   n = 1500, held-out 1000, one run each (development)
  KM_BENCH_RUNS=k    runs of the kernel_ml LOO and dsyevd('V') (default 3)
  KM_BENCH_SK_RUNS=k runs of GridSearchCV (default 1: about a minute each)
"""

import os
import sys

# OpenBLAS picks its kernels when the library loads.  The server's backends
# start with a clean environment (CPU detection), so drop any OPENBLAS_*
# settings (OPENBLAS_CORETYPE in particular) before NumPy loads, for this
# process and the LAPACK helper alike -- as test/bench/run.sh does.
_BLAS_ENV = [k for k in os.environ
             if k.startswith(("OPENBLAS_", "GOTO_")) or k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")]
if _BLAS_ENV and os.environ.get("KM_BENCH_SEL_REEXEC") != "1":
    env = {k: v for k, v in os.environ.items() if k not in _BLAS_ENV}
    env["KM_BENCH_SEL_REEXEC"] = "1"
    env["KM_BENCH_SEL_DROPPED"] = ",".join(sorted(_BLAS_ENV))
    os.execve(sys.executable, [sys.executable] + sys.argv, env)

import json
import platform
import re
import shutil
import statistics
import subprocess
import tempfile
import time
import traceback

import numpy as np
import psycopg2
import scipy
import sklearn
import threadpoolctl
from sklearn.kernel_ridge import KernelRidge
from sklearn.model_selection import GridSearchCV
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_info, threadpool_limits

from kmbench import copy_table

QUICK = os.environ.get("KM_BENCH_QUICK") == "1"
RUNS = int(os.environ.get("KM_BENCH_RUNS", "1" if QUICK else "3"))
SK_RUNS = int(os.environ.get("KM_BENCH_SK_RUNS", "1"))
THREADS = 2
D = 20
GAMMA = 1.0 / D
SEED = 20240606
N = 1500 if QUICK else 5000
N_TEST = 1000 if QUICK else 2000
GRID = [float(v) for v in np.logspace(-4, 2, 20)]
CROSS_L = [1, 2, 5, 10, 20, 40]
FOLDS = 5
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(HERE, "results-selection-latest.txt")

LINES = []
ROWS = []


def say(*args):
    s = " ".join(str(a) for a in args)
    print(s, flush=True)
    LINES.append(s)


def section(title):
    say("")
    say("== " + title)


def fmt_s(t):
    if t is None:
        return "-"
    if t >= 100:
        return "%.0f s" % t
    if t >= 10:
        return "%.1f s" % t
    if t >= 1:
        return "%.2f s" % t
    return "%.0f ms" % (t * 1000)


def fmt_runs(ts):
    return "[" + ", ".join("%.3f" % t for t in ts) + "]"


def med(ts):
    return statistics.median(ts)


def add_row(measure, km, peer, ratio, target, met):
    ROWS.append((measure, km, peer, ratio, target, met))


def yes(b):
    return "yes" if b else "**no**"


def km_threshold():
    """KM_EIGEN_MIN_LAMBDAS as compiled (read from the source)."""
    try:
        with open(os.path.join(ROOT, "src", "core", "select.h")) as f:
            m = re.search(r"#define\s+KM_EIGEN_MIN_LAMBDAS\s+(\d+)", f.read())
        if m:
            return int(m.group(1)), "src/core/fit/select.h"
    except OSError:
        pass
    return 10, "assumed (src/core/fit/select.h not found)"


def lam_json(grid):
    return "[" + ", ".join(repr(float(v)) for v in grid) + "]"


def km_opts(grid, cv):
    o = '{"kernel": "rbf", "gamma": %r, "lambda": %s' % (GAMMA, lam_json(grid))
    if cv is not None:
        o += ', "cv": %s' % (json.dumps(cv))
    return o + "}"


# ---------------------------------------------------------------- data

def make_data(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, D))
    # a few features carry a nonlinear signal (interactions, periodic,
    # bumps), the rest are noise dimensions; features on different scales
    # so that standardization matters
    f = (np.sin(1.5 * X[:, 0]) + 0.8 * X[:, 1] * X[:, 2] + 0.5 * X[:, 3] ** 2
         + np.exp(-X[:, 4] ** 2) - 0.7 * np.abs(X[:, 5]) + 0.3 * X[:, 6])
    y = 3.0 + f + 0.4 * rng.standard_normal(n)
    scales = np.linspace(0.5, 20.0, D)
    return X * scales + np.arange(D), y


# ---------------------------------------------------------------- database

def connect():
    conn = psycopg2.connect("")
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("CREATE EXTENSION IF NOT EXISTS kernel_ml")
    cur.execute("SET kernel_ml.blas_threads = %d" % THREADS)
    cur.execute("SET jit = off")
    cur.execute("SET max_parallel_workers_per_gather = 0")
    return conn, cur


def km_train(cur, name, grid, cv):
    """Time one kernel_train into bench_sel_models; returns seconds."""
    cur.execute("DELETE FROM bench_sel_models WHERE name = %s", (name,))
    sql = ("INSERT INTO bench_sel_models (name, model) "
           "SELECT %s, kernel_train(f, y, %s) FROM bench_sel_train")
    t0 = time.perf_counter()
    cur.execute(sql, (name, km_opts(grid, cv)))
    return time.perf_counter() - t0


def km_info(cur, name):
    cur.execute("SELECT kernel_model_info(model) FROM bench_sel_models WHERE name = %s", (name,))
    info = cur.fetchone()[0]
    return info if isinstance(info, dict) else json.loads(info)


def km_predict(cur, name):
    cur.execute("SELECT t.id, kernel_predict(m.model, t.f) FROM bench_sel_test t, "
                "(SELECT model FROM bench_sel_models WHERE name = %s) m ORDER BY t.id", (name,))
    return np.array([r[1] for r in cur.fetchall()])


def picked(info):
    sel = info.get("selection") or {}
    best = sel.get("best")
    cands = sel.get("candidates") or []
    if best is None or not (0 <= int(best) < len(cands)):
        return info.get("lambda"), None
    c = cands[int(best)]
    return float(c["lambda"]), float(c["score"])


def rmse(a, b):
    return float(np.sqrt(np.mean((np.asarray(a) - np.asarray(b)) ** 2)))


# ---------------------------------------------------------------- LAPACK helper

def build_eig(tmpdir):
    src = os.path.join(HERE, "eig.c")
    exe = os.path.join(tmpdir, "eig")
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        raise RuntimeError("no C compiler")
    subprocess.run([cc, "-O2", "-o", exe, src, "-llapacke", "-lopenblas", "-lm"],
                   check=True, capture_output=True, text=True)
    return exe


def eig_run(exe, xfile, n, lam, reps, ops):
    """Run the helper; returns {op: [seconds...]} and the OpenBLAS core name."""
    p = subprocess.run([exe, xfile, str(n), str(D), repr(GAMMA), repr(lam), str(THREADS),
                        str(reps)] + ops, check=True, capture_output=True, text=True)
    out = {}
    core = "?"
    for line in p.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] == "seconds":
            out.setdefault(parts[0], []).append(float(parts[2]))
        elif line.startswith("corename "):
            core = line.split(" ", 1)[1]
    return out, core


# ---------------------------------------------------------------- main

def print_table():
    hdr = ("measure", "kernel_ml", "peer", "ratio", "target", "met")
    rows = [hdr] + [tuple(str(c) for c in r) for r in ROWS]
    w = [max(len(r[i]) for r in rows) for i in range(len(hdr))]

    def line(r):
        return "| " + " | ".join(r[i].ljust(w[i]) for i in range(len(hdr))) + " |"

    say(line(hdr))
    say("|" + "|".join("-" * (w[i] + 2) for i in range(len(hdr))) + "|")
    for r in rows[1:]:
        say(line(r))


def main():
    t_start = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix="km_sel_") as tmpdir:
            run(tmpdir)
    except Exception:
        say("ERROR: " + traceback.format_exc())
        save()
        return 1
    say("")
    say("selection benchmark took %s" % fmt_s(time.perf_counter() - t_start))
    save()
    return 0


def save():
    try:
        with open(OUT, "w") as f:
            f.write("\n".join(LINES) + "\n")
        print("(saved to %s)" % os.path.relpath(OUT, os.getcwd()), flush=True)
    except OSError as e:
        print("could not save %s: %s" % (OUT, e), file=sys.stderr)


def run(tmpdir):
    thr, thr_src = km_threshold()
    say("# kernel_ml model-selection benchmark (issue 6)")
    section("machine and setting")
    say("date:        %s" % time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()))
    say("nproc:       %d" % os.cpu_count())
    say("load avg:    %s at start (other work on the machine makes timings noisy)"
        % " ".join("%.2f" % x for x in os.getloadavg()))
    blas = [i for i in threadpool_info() if i.get("internal_api") == "openblas"]
    say("OpenBLAS:    %s" % ("; ".join("%s %s (%s)" % (b.get("version"), b.get("architecture"),
                                                        b.get("filepath")) for b in blas) or "not found"))
    if os.environ.get("KM_BENCH_SEL_DROPPED"):
        say("             (dropped %s from the environment so that OpenBLAS detects the CPU "
            "as in the backend)" % os.environ["KM_BENCH_SEL_DROPPED"])
    say("Python:      %s; NumPy %s; SciPy %s; scikit-learn %s; threadpoolctl %s; psycopg2 %s"
        % (platform.python_version(), np.__version__, scipy.__version__, sklearn.__version__,
           threadpoolctl.__version__, psycopg2.__version__.split()[0]))
    say("mode:        %s; n = %d training rows, %d held-out, d = %d, rbf gamma = 1/d = %g"
        % ("QUICK" if QUICK else "full", N, N_TEST, D, GAMMA))
    say("             %d BLAS threads everywhere; kernel_ml LOO and dsyevd: %d run(s), medians; "
        "GridSearchCV: %d run(s)" % (THREADS, RUNS, SK_RUNS))
    say("lambda grid: %d values log-spaced %g .. %g" % (len(GRID), GRID[0], GRID[-1]))
    say("route:       KM_EIGEN_MIN_LAMBDAS = %d (%s): LOO/GCV with fewer lambdas use one Cholesky "
        "per lambda, from %d on one dsyevd per gamma" % (thr, thr_src, thr))

    X, y = make_data(N + N_TEST, SEED)
    Xtr, ytr, Xte, yte = X[:N], y[:N], X[N:], y[N:]
    # the problem both sides solve: z-scored features, centred target
    scaler = StandardScaler().fit(Xtr)
    Xs, Xts = scaler.transform(Xtr), scaler.transform(Xte)
    ymean = float(ytr.mean())
    yc = ytr - ymean
    xfile = os.path.join(tmpdir, "x.bin")
    np.ascontiguousarray(Xs, dtype=np.float64).tofile(xfile)

    conn, cur = connect()
    cur.execute("SELECT version(), (SELECT extversion FROM pg_extension WHERE extname = 'kernel_ml')")
    v, ev = cur.fetchone()
    say("PostgreSQL:  %s; kernel_ml %s" % (v.split(",")[0], ev))
    t0 = time.perf_counter()
    copy_table(cur, "bench_sel_train", Xtr, ytr)
    copy_table(cur, "bench_sel_test", Xte, yte)
    cur.execute("DROP TABLE IF EXISTS bench_sel_models")
    cur.execute("CREATE TABLE bench_sel_models (name text PRIMARY KEY, model bytea)")
    say("data:        y = 3 + sin(1.5 x0) + 0.8 x1 x2 + 0.5 x3^2 + exp(-x4^2) - 0.7 |x5| + 0.3 x6 "
        "+ N(0, 0.4^2), x ~ N(0, I) then scaled and shifted per feature; seed %d; tables "
        "bench_sel_train, bench_sel_test loaded in %s" % (SEED, fmt_s(time.perf_counter() - t0)))
    # load the library and touch the code paths once (not timed)
    cur.execute("SELECT length(kernel_train(f, y, %s)) FROM (SELECT * FROM bench_sel_train "
                "ORDER BY id LIMIT 200) s", (km_opts(GRID[:3], "loo"),))

    exe = build_eig(tmpdir)

    # ------------------------------------------------ 1 + 3: LOO vs dsyevd, interleaved
    section("1, 3. kernel_ml LOO over %d lambdas (eigen route) and one LAPACK dsyevd('V') "
            "of the same Gram matrix, interleaved run by run" % len(GRID))
    say("kernel_ml: INSERT INTO bench_sel_models SELECT 'loo', kernel_train(f, y, '%s') "
        "FROM bench_sel_train" % km_opts(GRID, "loo").replace(lam_json(GRID), "[20 lambdas]"))
    say("dsyevd:    test/bench/eig.c: LAPACKE_dsyevd_work('V', 'L') of K = exp(-gamma ||xi - xj||^2) "
        "on the standardized training rows; gcc -O2 -llapacke -lopenblas, openblas_set_num_threads(%d)"
        % THREADS)
    km_loo, evd_v = [], []
    core = "?"
    for r in range(RUNS):
        km_loo.append(km_train(cur, "loo", GRID, "loo"))
        res, core = eig_run(exe, xfile, N, 1.0, 1, ["evd_v"])
        evd_v += res["evd_v"]
        say("  run %d: kernel_ml %.3f s   dsyevd('V') %.3f s" % (r + 1, km_loo[-1], evd_v[-1]))
    say("OpenBLAS core of the helper: %s (this Python: %s)"
        % (core, ",".join(sorted({b.get("architecture", "?") for b in blas}))))
    info_loo = km_info(cur, "loo")
    lam_loo, score_loo = picked(info_loo)
    sel = info_loo.get("selection") or {}
    say("kernel_ml picked lambda = %g (LOO MSE %.5g, cv %s, %d candidates); model lambda %s"
        % (lam_loo, score_loo, sel.get("cv"), len(sel.get("candidates") or []), info_loo.get("lambda")))

    section("LAPACK, same matrix, same thread count, for the record")
    lam_mid = lam_loo if lam_loo else 1.0
    res, _ = eig_run(exe, xfile, N, lam_mid, RUNS, ["evd_n", "potrf", "potri", "trtri"])
    lap = {k: med(v) for k, v in res.items()}
    lap["evd_v"] = med(evd_v)
    say("dsyevd('V') %s  median %s" % (fmt_runs(evd_v), fmt_s(lap["evd_v"])))
    for op, label in (("evd_n", "dsyevd('N')"), ("potrf", "dpotrf"), ("potri", "dpotri"),
                      ("trtri", "dtrtri")):
        say("%-11s %s  median %s" % (label, fmt_runs(res[op]), fmt_s(lap[op])))
    say("dsyevd('V') / dpotrf = %.1f; dsyevd('N') / dpotrf = %.1f; dsyevd('V') / (dpotrf + dpotri) = %.1f"
        % (lap["evd_v"] / lap["potrf"], lap["evd_n"] / lap["potrf"],
           lap["evd_v"] / (lap["potrf"] + lap["potri"])))

    # single fit, no selection: what the refit inside every kernel_train costs
    t_fit = []
    for r in range(RUNS):
        t_fit.append(km_train(cur, "fit", [lam_mid], None))
    say("kernel_ml single fit (lambda %g, no selection; the refit every kernel_train above includes): "
        "%s median %s" % (lam_mid, fmt_runs(t_fit), fmt_s(med(t_fit))))

    # ------------------------------------------------ 2: scikit-learn
    section("1, 2. scikit-learn GridSearchCV(KernelRidge(kernel='rbf', gamma=1/d), alpha grid, cv=%d, "
            "scoring='neg_mean_squared_error', refit=True)" % FOLDS)
    say("on the same problem: StandardScaler fitted on the training rows, target centred on its "
        "training mean (timed with the search); GridSearchCV's default KFold (no shuffle), n_jobs=None, "
        "threadpool_limits(%d)" % THREADS)
    sk_times = []
    gs = None
    with threadpool_limits(THREADS):
        for r in range(SK_RUNS):
            t0 = time.perf_counter()
            sc = StandardScaler().fit(Xtr)
            Xs_ = sc.transform(Xtr)
            yc_ = ytr - ytr.mean()
            gs = GridSearchCV(KernelRidge(kernel="rbf", gamma=GAMMA), {"alpha": GRID}, cv=FOLDS,
                              scoring="neg_mean_squared_error", refit=True)
            gs.fit(Xs_, yc_)
            sk_times.append(time.perf_counter() - t0)
            say("  run %d: %.2f s" % (r + 1, sk_times[-1]))
        sk_pred = gs.predict(Xts) + ymean
    lam_sk = float(gs.best_params_["alpha"])
    say("scikit-learn picked alpha = %g (5-fold MSE %.5g); %d fits + refit"
        % (lam_sk, -gs.best_score_, len(GRID) * FOLDS))

    km_pred = km_predict(cur, "loo")
    rm_km, rm_sk = rmse(km_pred, yte), rmse(sk_pred, yte)
    say("held-out RMSE (%d rows): kernel_ml (lambda %g, scored in SQL with kernel_predict) %.5f; "
        "scikit-learn (alpha %g) %.5f; predicting the mean: %.5f"
        % (N_TEST, lam_loo, rm_km, lam_sk, rm_sk, rmse(np.full(N_TEST, ymean), yte)))
    # same problem? scikit-learn at kernel_ml's lambda must give the same predictions
    with threadpool_limits(THREADS):
        same = KernelRidge(kernel="rbf", gamma=GAMMA, alpha=lam_loo).fit(Xs, yc).predict(Xts) + ymean
    say("check: KernelRidge(alpha = kernel_ml's lambda) on the same data vs kernel_predict: "
        "max |diff| = %.2e over %d held-out rows" % (float(np.max(np.abs(same - km_pred))), N_TEST))

    # ------------------------------------------------ 4: GCV and k-fold
    section("4. GCV (%d run(s)) and %d-fold (one run) over the same grid, for the record" % (RUNS, FOLDS))
    gcv_runs = [km_train(cur, "gcv", GRID, "gcv") for _ in range(RUNS)]
    t_gcv = med(gcv_runs)
    lam_gcv, sc_gcv = picked(km_info(cur, "gcv"))
    rm_gcv = rmse(km_predict(cur, "gcv"), yte)
    say("gcv:    %s median %s (eigen route, no GEMMs after dsyevd), picked lambda %g, held-out RMSE %.5f"
        % (fmt_runs(gcv_runs), fmt_s(t_gcv), lam_gcv, rm_gcv))
    t_kf = km_train(cur, "kfold", GRID, FOLDS)
    lam_kf, sc_kf = picked(km_info(cur, "kfold"))
    rm_kf = rmse(km_predict(cur, "kfold"), yte)
    say("%d-fold: %s, picked lambda %g (fold MSE %.5g), held-out RMSE %.5f (kernel_ml's folds are "
        "seeded shuffles, scikit-learn's are contiguous blocks)" % (FOLDS, fmt_s(t_kf), lam_kf, sc_kf, rm_kf))

    # ------------------------------------------------ 5: crossover
    section("5. crossover: Cholesky per lambda vs one eigendecomposition, n = %d (one run per L)" % N)
    cross = {}
    for L in CROSS_L:
        grid = [0.1] if L == 1 else [float(v) for v in np.logspace(-4, 2, L)]
        cross[L] = km_train(cur, "cross", grid, "loo")
        say("  L = %2d: %s route, %.3f s" % (L, "eigen" if L >= thr else "Cholesky", cross[L]))
    chol_L = [L for L in CROSS_L if L < thr]
    eig_L = [L for L in CROSS_L if L >= thr]

    def linfit(Ls):
        if len(Ls) >= 2:
            b, a = np.polyfit(Ls, [cross[L] for L in Ls], 1)
            return float(a), float(b)
        if len(Ls) == 1:
            return cross[Ls[0]], 0.0
        return None, None

    ca, cb = linfit(chol_L)     # Cholesky route, measured: a + b L
    ea, eb = linfit(eig_L)      # eigen route, measured: a + b L (b: the GEMMs, small)
    per_lap = lap["potrf"] + lap["potri"]
    per_lap_t = lap["potrf"] + lap["trtri"]
    say("extension, Cholesky route fitted on L = %s: %.3f s + %.3f s x L; eigen route fitted on L = %s: "
        "%.3f s + %.4f s x L" % (chol_L, ca or 0, cb or 0, eig_L, ea or 0, eb or 0))
    say("LAPACK per lambda: dpotrf + dpotri %.3f s (dpotrf + dtrtri %.3f s, closer to select.c, which "
        "forms L^-1 with dtrsm and never the full inverse); eigen: dsyevd('V') %.3f s; neither includes "
        "the Gram matrix (rebuilt per lambda by the Cholesky route) nor the refit" % (per_lap, per_lap_t, lap["evd_v"]))
    say("")
    hdr = ("L", "route taken", "measured", "Cholesky route (ext. fit)", "eigen route (ext.)",
           "L x (dpotrf+dpotri)", "dsyevd('V')", "faster (ext.)", "faster (LAPACK)")
    rows = []
    for L in CROSS_L:
        c_est = ca + cb * L if ca is not None else None
        e_est = ea + eb * L if ea is not None else None
        c_show = cross[L] if L < thr else c_est
        e_show = cross[L] if L >= thr else e_est
        f_ext = "-" if c_show is None or e_show is None else ("Cholesky" if c_show < e_show else "eigen")
        f_lap = "Cholesky" if L * per_lap < lap["evd_v"] else "eigen"
        rows.append((str(L), "eigen" if L >= thr else "Cholesky", "%.3f s" % cross[L],
                     ("%.3f s" % c_show if c_show is not None else "-") + ("" if L < thr else " (est.)"),
                     ("%.3f s" % e_show if e_show is not None else "-") + ("" if L >= thr else " (est.)"),
                     "%.3f s (est.)" % (L * per_lap), "%.3f s (est.)" % lap["evd_v"], f_ext, f_lap))
    w = [max(len(r[i]) for r in [hdr] + rows) for i in range(len(hdr))]
    cross_lines = ["| " + " | ".join(r[i].ljust(w[i]) for i in range(len(hdr))) + " |" for r in [hdr] + rows]
    cross_lines.insert(1, "|" + "|".join("-" * (w[i] + 2) for i in range(len(hdr))) + "|")

    # crossover points
    lstar_lap = lap["evd_v"] / per_lap
    lstar_lap_t = lap["evd_v"] / per_lap_t
    lstar_ext = None
    if ca is not None and ea is not None and cb > eb:
        lstar_ext = (ea - ca) / (cb - eb)
    cross_notes = [
        "crossover from the extension's own times: L* = %s (Cholesky route a + b L meets the eigen route)"
        % ("%.1f" % lstar_ext if lstar_ext is not None else "n/a"),
        "crossover from LAPACK alone: L* = dsyevd('V') / (dpotrf + dpotri) = %.1f "
        "(with dtrtri instead of dpotri: %.1f)" % (lstar_lap, lstar_lap_t),
    ]
    lstar = lstar_ext if lstar_ext is not None else lstar_lap
    if 0.8 * thr <= lstar <= 1.25 * thr:
        verdict = ("KM_EIGEN_MIN_LAMBDAS = %d matches the measured crossover L* = %.1f at n = %d "
                   "(within 20%%; near L* the two routes cost about the same)" % (thr, lstar, N))
    else:
        verdict = ("KM_EIGEN_MIN_LAMBDAS = %d does NOT match the measured crossover L* = %.1f at n = %d: "
                   "a threshold of %d would pick the faster route here (the ratio grows with n: "
                   "dsyevd is memory-bound, dpotrf is not)" % (thr, lstar, N, int(np.ceil(lstar))))
    cross_notes.append(verdict)
    if ca is not None and ea is not None:
        # what the fixed threshold costs against always taking the faster route (fitted models)
        worst, worst_L = 1.0, None
        for L in range(1, 65):
            c, e = ca + cb * L, ea + eb * L
            taken, best = (e if L >= thr else c), min(c, e)
            if best > 0 and taken / best > worst:
                worst, worst_L = taken / best, L
        cross_notes.append("cost of the fixed threshold for 1..64 lambdas (fitted times): %s"
                           % ("none, it always takes the faster route" if worst_L is None else
                              "at worst %.0f%% slower than the faster route, at L = %d"
                              % (100 * (worst - 1), worst_L)))

    # ------------------------------------------------ table
    km_t, sk_t = med(km_loo), med(sk_times)
    speed = sk_t / km_t
    add_row("LOO, %d lambdas, n = %d: time (median of %d) vs GridSearchCV cv=5 (%d run%s)"
            % (len(GRID), N, RUNS, SK_RUNS, "" if SK_RUNS == 1 else "s"),
            fmt_s(km_t), fmt_s(sk_t), "%.1fx faster" % speed, ">= 3x faster", yes(speed >= 3))
    add_row("held-out RMSE (%d rows) of the refitted pick" % N_TEST, "%.5f" % rm_km, "%.5f" % rm_sk,
            "%.4f" % (rm_km / rm_sk), "<= 1.01", yes(rm_km <= 1.01 * rm_sk))
    add_row("picked lambda (LOO vs 5-fold)", "%g" % lam_loo, "%g" % lam_sk, "", "", "")
    ratio_floor = km_t / lap["evd_v"]
    add_row("whole kernel_train (LOO, %d lambdas) vs one dsyevd('V')" % len(GRID), fmt_s(km_t),
            fmt_s(lap["evd_v"]), "%.2fx" % ratio_floor, "<= 1.5x", yes(ratio_floor <= 1.5))
    add_row("  record: single fit (no selection) vs dpotrf", fmt_s(med(t_fit)), fmt_s(lap["potrf"]),
            "%.2fx" % (med(t_fit) / lap["potrf"]), "", "")
    add_row("  record: GCV, %d lambdas (picked %g) vs dsyevd('N')" % (len(GRID), lam_gcv), fmt_s(t_gcv),
            fmt_s(lap["evd_n"]), "%.2fx" % (t_gcv / lap["evd_n"]), "", "")
    add_row("  record: GCV vs dsyevd('V')", fmt_s(t_gcv), fmt_s(lap["evd_v"]),
            "%.2fx" % (t_gcv / lap["evd_v"]), "", "")
    add_row("  record: %d-fold, %d lambdas (picked %g) vs GridSearchCV cv=5" % (FOLDS, len(GRID), lam_kf),
            fmt_s(t_kf), fmt_s(sk_t), "%.2fx faster" % (sk_t / t_kf), "", "")
    add_row("  record: dsyevd('V') / dpotrf, same matrix", "", "", "%.1f" % (lap["evd_v"] / lap["potrf"]),
            "", "")

    section("results (n = %d, d = %d, %d BLAS threads; load avg now %s)"
            % (N, D, THREADS, " ".join("%.2f" % x for x in os.getloadavg())))
    print_table()
    say("")
    say("crossover (times in seconds; 'est.' = estimated, see section 5):")
    for line in cross_lines:
        say(line)
    for line in cross_notes:
        say(line)
    conn.close()


if __name__ == "__main__":
    sys.exit(main())
