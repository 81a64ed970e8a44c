#!/usr/bin/python3
"""
Why Falkon's m = 2,000 point lay below kernel_ml's one-pass curve in
scale_1m.py (issue 31, benchmark 2): the same Nystrom ridge (rbf, gamma 1/d,
lambda 0.1, uniform centres) measured four ways on big_rows.py's rows, at a
scale where a fit takes a minute:

  km seed s       kernel_ml one-pass (kernel_model_train, "seed": s);
  exact km s      the exact NumPy / LAPACK solve of the same Nystrom ridge on
                  the SAME centres (kernel_model_export's centres, mean, scale):
                  kernel_ml's documented system (README "nystrom", crosscheck
                  h) (K_nm' K_nm + lambda K_mm) a = K_nm' (y - mean y),
                  b = mean y, through K_mm = U S U' (every eigenvalue
                  > 1e-14 max kept); the relative difference of its held-out
                  predictions from kernel_ml's is printed, and the RMSE of
                  min ||y - b - K_nm a||^2 + lambda a' K_mm a with b free
                  (K_nm's columns centred too: scikit-learn Ridge's intercept)
                  as rmse_free_intercept;
  falkon seed s   scale_1m.py's Falkon (20 CG iterations) with rng seed s;
  exact falkon s  the exact solve on Falkon's centres (same formula);
  km gcv          kernel_ml with "cv": "gcv" over a lambda grid.

Environment: KM_GAP_N (training rows, 100,000), KM_GAP_TEST (20,000),
KM_GAP_M (2,000), KM_GAP_SEEDS (kernel_ml seeds, "1,2,3,4,5"),
KM_GAP_FSEEDS (Falkon seeds, "0,1,2,3,4"), KM_GAP_EXACT (how many of each
to solve exactly, 2), KM_GAP_GCV (1: run the gcv fit), KM_GAP_OUT (json).
"""

import json
import os
import sys
import time

import numpy as np
import psycopg2
import scipy.linalg as sla
from threadpoolctl import threadpool_limits

import big_rows
import scale_1m as s1m

N = int(os.environ.get("KM_GAP_N", "100000"))
NTEST = int(os.environ.get("KM_GAP_TEST", "20000"))
M = int(os.environ.get("KM_GAP_M", "2000"))
SEEDS = [int(x) for x in os.environ.get("KM_GAP_SEEDS", "1,2,3,4,5").split(",") if x.strip()]
FSEEDS = [int(x) for x in os.environ.get("KM_GAP_FSEEDS", "0,1,2,3,4").split(",") if x.strip()]
NEXACT = int(os.environ.get("KM_GAP_EXACT", "2"))
GCV = os.environ.get("KM_GAP_GCV", "1") == "1"
OUT = os.environ.get("KM_GAP_OUT", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                 "scale_1m_gap.json"))
LAMBDA, GAMMA = s1m.LAMBDA, s1m.GAMMA
GRID = [1e-3, 1e-2, 0.1, 1.0, 10.0, 100.0]


def exact_solve(Xs, y, C, lam=LAMBDA):
    """The exact Nystrom ridge on centres C (standardized rows Xs): predictor's (C, a, b)."""
    cn = np.einsum("ij,ij->i", C, C)
    m = C.shape[0]
    with threadpool_limits(2):
        Kmm = s1m.rbf_block(C, C, cn, GAMMA)
        s, U = np.linalg.eigh(Kmm)
        keep = s > 1e-14 * s.max()
        W = U[:, keep] / np.sqrt(s[keep])			# z(x) = W' k(C, x)
        k = W.shape[1]
        G = np.zeros((k, k))
        zs = np.zeros(k)
        zy = np.zeros(k)
        ys = 0.0
        for lo in range(0, Xs.shape[0], s1m.BLOCK):
            Z = s1m.rbf_block(Xs[lo:lo + s1m.BLOCK], C, cn, GAMMA) @ W
            yb = y[lo:lo + s1m.BLOCK]
            G += Z.T @ Z
            zs += Z.sum(axis=0)
            zy += Z.T @ yb
            ys += yb.sum()
        n = Xs.shape[0]
        zbar, ybar = zs / n, ys / n
        rc = zy - n * zbar * ybar
        # kernel_ml's documented system (README, crosscheck h): y centred,
        # b = mean(y); and the unpenalized intercept (z centred too, Ridge's)
        w0 = sla.solve(G + lam * np.eye(k), rc, assume_a="pos")
        w = sla.solve(G - n * np.outer(zbar, zbar) + lam * np.eye(k), rc, assume_a="pos")
    return (W @ w0, ybar), (W @ w, ybar - zbar @ w), k, int(m - k)


def predict(Xs, C, a, b):
    cn = np.einsum("ij,ij->i", C, C)
    with threadpool_limits(2):
        return s1m.rbf_block(Xs, C, cn, GAMMA) @ a + b


def rmse(p, y):
    return float(np.sqrt(np.mean((p - y) ** 2)))


def main():
    conn = psycopg2.connect("")
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("CREATE EXTENSION IF NOT EXISTS kernel_ml")
    for s in ("max_parallel_workers_per_gather = 2", "parallel_setup_cost = 0"):
        cur.execute("SET " + s)
    big_rows.load(cur, "kmb_s1m_train", big_rows.chunks(N, 31))
    big_rows.load(cur, "kmb_s1m_test", big_rows.chunks(NTEST, 3131))
    Xtr, ytr = big_rows.rows(N, 31)
    Xte, yte = big_rows.rows(NTEST, 3131)
    res = []

    def emit(r):
        res.append(r)
        print("  %-16s %8.1f s  RMSE %.5f  %s" % (r["run"], r["seconds"], r["rmse"],
              " ".join("%s %s" % (k, r[k]) for k in r if k not in ("run", "seconds", "rmse"))),
              flush=True)
        with open(OUT, "w") as fh:
            json.dump(dict(n=N, test=NTEST, m=M, gamma=GAMMA, lam=LAMBDA, load=os.getloadavg()[0],
                           results=res), fh, indent=1)

    base = {"approximation": "nystrom", "lambda": LAMBDA, "test_fraction": 0,
            "deploy": "always", "components": M}
    for i, seed in enumerate(SEEDS):
        la = os.getloadavg()[0]
        t0 = time.perf_counter()
        cur.execute("SELECT kernel_model_train('kmb_gap', 'SELECT f, y FROM kmb_s1m_train', %s::jsonb)"
                    " IS NOT NULL", (json.dumps(dict(base, seed=seed)),))
        secs = time.perf_counter() - t0
        cur.execute("SELECT kernel_model_export(model)::text, kernel_model_info(model)::text "
                    "FROM kernel_models WHERE name = 'kmb_gap' ORDER BY version DESC LIMIT 1")
        ex, info = cur.fetchone()
        ex, info = json.loads(ex), json.loads(info)
        cur.execute("SELECT sqrt(avg((kernel_predict('kmb_gap', f) - y) ^ 2)) FROM kmb_s1m_test")
        sql_rmse = float(cur.fetchone()[0])
        cur.execute("SELECT kernel_model_drop('kmb_gap')")
        mu, sd = np.array(ex["mean"]), np.array(ex["scale"])
        C = np.array(ex["centers"])
        pk = predict((Xte - mu) / sd, C, np.array(ex["coef"]), ex["intercept"])
        emit(dict(run="km seed %d" % seed, seconds=secs, rmse=sql_rmse, export_rmse=rmse(pk, yte),
                  eps=info.get("approximation_eps"), rank=info.get("rank"), load=la))
        if i < NEXACT:
            t0 = time.perf_counter()
            (a0, b0), (a, b), k, dropped = exact_solve((Xtr - mu) / sd, ytr, C)
            p0 = predict((Xte - mu) / sd, C, a0, b0)
            pe = predict((Xte - mu) / sd, C, a, b)
            emit(dict(run="exact km %d" % seed, seconds=time.perf_counter() - t0,
                      rmse=rmse(p0, yte), rank=k, dropped=dropped,
                      rel_pred_diff=float(np.linalg.norm(p0 - pk) / np.linalg.norm(p0)),
                      rmse_free_intercept=rmse(pe, yte)))
    if GCV:
        la = os.getloadavg()[0]
        t0 = time.perf_counter()
        cur.execute("SELECT kernel_model_train('kmb_gap', 'SELECT f, y FROM kmb_s1m_train', %s::jsonb)"
                    " IS NOT NULL", (json.dumps(dict(base, seed=SEEDS[0], cv="gcv", **{"lambda": GRID})),))
        secs = time.perf_counter() - t0
        cur.execute("SELECT kernel_model_info(model)->>'lambda' FROM kernel_models "
                    "WHERE name = 'kmb_gap' ORDER BY version DESC LIMIT 1")
        lam = float(cur.fetchone()[0])
        cur.execute("SELECT sqrt(avg((kernel_predict('kmb_gap', f) - y) ^ 2)) FROM kmb_s1m_test")
        emit(dict(run="km gcv seed %d" % SEEDS[0], seconds=secs, rmse=float(cur.fetchone()[0]),
                  picked_lambda=lam, grid=GRID, load=la))
        cur.execute("SELECT kernel_model_drop('kmb_gap')")
    mu, sd = Xtr.mean(axis=0), Xtr.std(axis=0)
    Xs, Xts = (Xtr - mu) / sd, (Xte - mu) / sd
    ym = ytr.mean()
    for i, seed in enumerate(FSEEDS):
        la = os.getloadavg()[0]
        t0 = time.perf_counter()
        C, cn, alpha = s1m.falkon_fit(Xs, ytr - ym, M, seed=seed)
        secs = time.perf_counter() - t0
        pf = predict(Xts, C, alpha, ym)
        emit(dict(run="falkon seed %d" % seed, seconds=secs, rmse=rmse(pf, yte), load=la))
        if i < NEXACT:
            t0 = time.perf_counter()
            (a0, b0), (a, b), k, dropped = exact_solve(Xs, ytr, C)
            p0 = predict(Xts, C, a0, b0)
            pe = predict(Xts, C, a, b)
            emit(dict(run="exact falkon %d" % seed, seconds=time.perf_counter() - t0,
                      rmse=rmse(p0, yte), rank=k, dropped=dropped,
                      rel_pred_diff=float(np.linalg.norm(p0 - pf) / np.linalg.norm(p0)),
                      rmse_free_intercept=rmse(pe, yte)))
    cur.execute("DROP TABLE kmb_s1m_train, kmb_s1m_test")
    conn.close()
    for kind in ("km seed", "falkon seed", "exact km", "exact falkon"):
        v = [r["rmse"] for r in res if r["run"].startswith(kind)]
        if v:
            print("  %-12s n %d  mean %.5f  sd %.5f  min %.5f  max %.5f"
                  % (kind, len(v), np.mean(v), np.std(v, ddof=1) if len(v) > 1 else 0.0,
                     min(v), max(v)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
