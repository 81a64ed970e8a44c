#!/usr/bin/python3
"""
Preconditioners for nystrom ridge by CG (issue 31): the iterations and the
condition number of the preconditioned system, Falkon's (the centres as the
sample: (n/m) L'L + lambda I) against the system's matrix on a sample of rows
((n/s) L^-1 G L^-T + lambda I, G = Z_S'Z_S), the centres plus (f - 1) m rows
and independent rows only, as src/core/learn/cg.c's km_cg_precondition_sample
builds it.  H = Z'Z over all rows is formed exactly (blocks of 20,000 rows),
so the counts are those of exact arithmetic's PCG to a relative preconditioned
residual of 1e-7 (kernel_ml's default tol).

Rows: big_rows.py (uniform [0, 1]^20, the scale benchmark's smooth target),
standardized, rbf gamma 1/d, lambda 0.1 (kernel_ml's: the system is
(Z'Z + lambda K_mm) a = Z'(y - mean y)), m uniform centres (rng seed 0).

Usage: /usr/bin/python3 test/bench/cg_precond.py N M [starts]
(200000 1000: about 30 s; 1000000 2000: about 3 minutes on 2 cores).
With "starts": samples of 16, 32, 64 and 128 m rows only, each from 0 and
from the sample's own ridge solution (x0 = P^-1 (n/s) W'(y_S - mean y_S),
P the preconditioner: kernel_ml's start), the residual measured against
the zero start's in both (500000 1000: about 20 s).
"""
import os
import sys
import time

import numpy as np
import scipy.linalg as sla

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import big_rows  # noqa: E402

LAMBDA = 0.1
TOL = 1e-7


def main():
    n, m = int(sys.argv[1]), int(sys.argv[2])
    X, y = big_rows.rows(n, 31)
    X = (X - X.mean(0)) / X.std(0)
    g = 1.0 / X.shape[1]
    C = X[np.random.default_rng(0).choice(n, m, replace=False)]
    cn = (C * C).sum(1)

    def kmap(A):
        an = (A * A).sum(1)
        return np.exp(-g * np.maximum(an[:, None] + cn[None, :] - 2 * A @ C.T, 0))

    t0 = time.time()
    H = np.zeros((m, m))
    b = np.zeros(m)
    yc = y - y.mean()
    for i in range(0, n, 20000):
        Z = kmap(X[i:i + 20000])
        H += Z.T @ Z
        b += Z.T @ yc[i:i + 20000]
    print("n = %d, m = %d: H in %.1f s" % (n, m, time.time() - t0), flush=True)
    Kmm = kmap(C)
    L = np.linalg.cholesky(Kmm + 1e-10 * np.trace(Kmm) / m * np.eye(m))
    Li = sla.solve_triangular(L, np.eye(m), lower=True)
    Hw = Li @ (H + LAMBDA * Kmm) @ Li.T
    bw = Li @ b

    def pcg(R, name, x0=None):
        def prec(x):
            return sla.solve_triangular(R, sla.solve_triangular(R, x, lower=True), lower=True,
                                        trans='T')
        r0 = np.sqrt(bw @ prec(bw))
        x = np.zeros(m) if x0 is None else x0.copy()
        r = bw - Hw @ x
        z = prec(r)
        p = z.copy()
        rz = r @ z
        k = 0
        for k in range(1, 500):
            if np.sqrt(rz) / r0 <= TOL:
                k -= 1
                break
            q = Hw @ p
            a = rz / (p @ q)
            x += a * p
            r -= a * q
            z = prec(r)
            rzn = r @ z
            if np.sqrt(rzn) / r0 <= TOL:
                break
            p = z + rzn / rz * p
            rz = rzn
        Ri = sla.solve_triangular(R, np.eye(m), lower=True)
        ev = np.linalg.eigvalsh(Ri @ Hw @ Ri.T)
        print("  %-32s iterations %3d  condition number %.3g" % (name, k, ev[-1] / ev[0]),
              flush=True)

    if len(sys.argv) > 3 and sys.argv[3] == "starts":
        for f in (16, 32, 64, 128):
            idx = np.random.default_rng(7).choice(n, f * m, replace=False)
            W = sla.solve_triangular(L, kmap(X[idx]).T, lower=True).T
            R = np.linalg.cholesky(n / (f * m) * (W.T @ W) + LAMBDA * np.eye(m))
            pcg(R, "%d m rows, from 0" % f)
            ys = y[idx] - y[idx].mean()
            pcg(R, "%d m rows, from the sample's" % f, sla.cho_solve((R, True), n / (f * m) * (W.T @ ys)))
        return 0
    pcg(np.linalg.cholesky(n / m * L.T @ L + LAMBDA * np.eye(m)), "Falkon's (centres)")
    for f in (2, 4, 8, 16):
        S = X[np.random.default_rng(7).choice(n, (f - 1) * m, replace=False)]
        W = sla.solve_triangular(L, kmap(S).T, lower=True).T
        P = n / (f * m) * (L.T @ L + W.T @ W) + LAMBDA * np.eye(m)
        pcg(np.linalg.cholesky(P), "centres + %d m rows" % (f - 1))
    for f in (1, 4, 16):
        S = X[np.random.default_rng(7).choice(n, f * m, replace=False)]
        W = sla.solve_triangular(L, kmap(S).T, lower=True).T
        P = n / (f * m) * (W.T @ W) + LAMBDA * np.eye(m)
        pcg(np.linalg.cholesky(P), "%d m rows only" % f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
