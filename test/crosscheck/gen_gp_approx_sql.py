#!/usr/bin/python3
"""Reference numbers of test/sql/gp_approx.sql from NumPy.

Run against a database with kernel_ml (libpq environment, as crosscheck.py):
    /usr/bin/python3 test/crosscheck/gen_gp_approx_sql.py
It trains the test's nystrom (20 centres) and rff (40 features) models on the
test's rows, reads their features from kernel_model_export (centres, or the
random weights and offsets, and the scaler), and computes in NumPy, with no
kernel_ml code: the amplitude s2, the log marginal likelihood and the
predictive standard deviation at the test's query rows of the DTC sparse GP
(nystrom: prior s2 k, noise s2 lambda, Q = K_nm K_mm^-1 K_mn) and of Bayesian
linear regression on z(x) (rff: prior N(0, s2 I), Q = Z Z').  It prints the
VALUES lists the test compares against (to 1e-9 relative).
"""
import json

import numpy as np
import psycopg2

ROWS = """SELECT i AS id, ARRAY[sin(i), cos(0.7 * i), (i % 7) / 7.0]::float8[] AS f,
       sin(i) + 0.5 * cos(0.7 * i) + ((i * 7919) % 100) / 500.0 AS y
FROM generate_series(1, 80) i"""
QUERY = """SELECT a AS id, ARRAY[a * 0.3, -a * 0.2, a * 0.1]::float8[] AS f
FROM generate_series(-5, 5) a"""
OPTS = {
    "nys": '{"lambda": 0.1, "gamma": 0.5, "approximation": "nystrom", "components": 20}',
    "rff": '{"lambda": 0.1, "gamma": 0.5, "approximation": "rff", "components": 40}',
}


def rbf(A, B, g):
    return np.exp(-g * ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))


def lml(yc, C):
    return float(-0.5 * yc @ np.linalg.solve(C, yc) - 0.5 * np.linalg.slogdet(C)[1]
                 - 0.5 * len(yc) * np.log(2 * np.pi))


def main():
    con = psycopg2.connect("")
    cur = con.cursor()
    cur.execute("SELECT f, y FROM (%s) r ORDER BY id" % ROWS)
    data = cur.fetchall()
    X = np.array([r[0] for r in data], dtype=float)
    y = np.array([r[1] for r in data], dtype=float)
    cur.execute("SELECT id, f FROM (%s) q ORDER BY id" % QUERY)
    qrows = cur.fetchall()
    Xq = np.array([r[1] for r in qrows], dtype=float)
    yc = y - y.mean()
    n = len(y)
    for key, opts in OPTS.items():
        cur.execute("SELECT kernel_model_export(kernel_train(f, y, %%s)) FROM (%s) r" % ROWS.replace("%", "%%"), (opts,))
        ex = cur.fetchone()[0]
        if isinstance(ex, str):
            ex = json.loads(ex)
        o = json.loads(opts)
        lam, gamma = o["lambda"], o["gamma"]
        mean, scale = np.array(ex["mean"]), np.array(ex["scale"])
        Xs, Xqs = (X - mean) / scale, (Xq - mean) / scale
        if key == "nys":
            C = np.array(ex["centers"])
            Kmm, Knm, ks = rbf(C, C, gamma), rbf(Xs, C, gamma), rbf(Xqs, C, gamma)
            Q = Knm @ np.linalg.solve(Kmm, Knm.T)
            s2 = float(yc @ np.linalg.solve(Q + lam * np.eye(n), yc)) / n
            Sig = s2 * lam * np.linalg.inv(Knm.T @ Knm + lam * Kmm)
            q = np.einsum("ij,ij->i", ks, np.linalg.solve(Kmm, ks.T).T)
            var = s2 * (1.0 - q + lam) + np.einsum("ij,jk,ik->i", ks, Sig, ks)
        else:
            W, b = np.array(ex["weights"]), np.array(ex["offsets"])
            D = len(b)
            Z = np.sqrt(2.0 / D) * np.cos(Xs @ W + b)
            Zq = np.sqrt(2.0 / D) * np.cos(Xqs @ W + b)
            Q = Z @ Z.T
            s2 = float(yc @ np.linalg.solve(Q + lam * np.eye(n), yc)) / n
            Sw = s2 * lam * np.linalg.inv(Z.T @ Z + lam * np.eye(D))
            var = s2 * lam + np.einsum("ij,jk,ik->i", Zq, Sw, Zq)
        like = lml(yc, s2 * (Q + lam * np.eye(n)))
        print("-- %s: amplitude, log_marginal_likelihood" % key)
        print("(%.17g, %.17g)" % (s2, like))
        print("-- %s: (id, std)" % key)
        print(",\n".join("(%d, %.17g)" % (r[0], v) for r, v in zip(qrows, np.sqrt(var))))


if __name__ == "__main__":
    main()
