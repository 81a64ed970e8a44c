#!/usr/bin/python3
"""
Fixtures for test_logistic.c: optima of the classification objectives of
src/core/methods/logistic.h, sgd.h and primal.h found by direct SciPy minimisation
(independent of the C code), written to test/unit/fixtures/logistic_data.h.

    /usr/bin/python3 test/unit/gen_logistic_fixtures.py

Objective: (1/W) sum_i w_i L(f_i, y_i) + (lambda/2) penalty, f = K a + b.
The exact problems are minimised over theta with f = U L^1/2 theta + b
(K = U L U^T, penalty ||theta||^2 = a^T K a), which avoids K's bad
conditioning in a; the probabilities are compared, not a.
"""
import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, logsumexp, log_expit
from sklearn.datasets import load_breast_cancer, load_wine
from sklearn.svm import SVC

LAM = 1e-3
OUT = "test/unit/fixtures/logistic_data.h"


def std(X):
    return (X - X.mean(0)) / np.where(X.std(0) > 0, X.std(0), 1.0)


def rbf(A, B, gamma):
    d2 = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2 * A @ B.T
    return np.exp(-gamma * np.maximum(d2, 0))


def root(K):
    lam, U = np.linalg.eigh(K)
    keep = lam > 1e-13 * lam.max()
    return U[:, keep] * np.sqrt(lam[keep])


def binary(K, y, w, intercept):
    M = root(K)
    n, r = M.shape
    t = 2.0 * y - 1.0
    W = w.sum()

    def parts(x):
        th, b = x[:r], (x[r] if intercept else 0.0)
        return th, M @ th + b

    def fun(x):
        th, f = parts(x)
        return (w * -log_expit(t * f)).sum() / W + 0.5 * LAM * th @ th

    def jac(x):
        th, f = parts(x)
        g = w * (expit(f) - y) / W
        out = M.T @ g + LAM * th
        return np.append(out, g.sum()) if intercept else out

    def hess(x):
        th, f = parts(x)
        p = expit(f)
        d = w * p * (1 - p) / W
        Mt = np.hstack([M, np.ones((n, 1))]) if intercept else M
        H = Mt.T @ (d[:, None] * Mt)
        H[np.arange(r), np.arange(r)] += LAM
        return H

    x0 = np.zeros(r + (1 if intercept else 0))
    res = minimize(fun, x0, jac=jac, hess=hess, method="trust-exact",
                   options={"gtol": 1e-13, "maxiter": 1000})
    th, f = parts(res.x)
    print("binary", intercept, res.status, res.nit, np.abs(jac(res.x)).max())
    return expit(f), fun(res.x)


def multinomial(K, y, k):
    M = root(K)
    n, r = M.shape
    Y = np.eye(k)[y]
    Mt = np.hstack([M, np.ones((n, 1))])

    def parts(x):
        Th = x[:r * k].reshape(k, r).T
        b = np.concatenate([[0.0], x[r * k:]])
        return Th, M @ Th + b

    def fun(x):
        Th, F = parts(x)
        return (logsumexp(F, axis=1) - (F * Y).sum(1)).mean() + 0.5 * LAM * (Th * Th).sum()

    def jac(x):
        Th, F = parts(x)
        G = (np.exp(F - logsumexp(F, axis=1)[:, None]) - Y) / n
        return np.concatenate([(M.T @ G + LAM * Th).T.ravel(), G.sum(0)[1:]])

    def hess(x):
        Th, F = parts(x)
        P = np.exp(F - logsumexp(F, axis=1)[:, None])
        H = np.zeros((k * (r + 1), k * (r + 1)))
        blocks = [[Mt.T @ (((c == e) * P[:, c] - P[:, c] * P[:, e])[:, None] / n * Mt)
                   for e in range(k)] for c in range(k)]
        # theta blocks first (k r), then b_1..b_{k-1}
        Hf = np.zeros_like(H)
        for c in range(k):
            for e in range(k):
                Hf[c * (r + 1):(c + 1) * (r + 1), e * (r + 1):(e + 1) * (r + 1)] = blocks[c][e]
        order = [c * (r + 1) + j for c in range(k) for j in range(r)] + \
                [c * (r + 1) + r for c in range(1, k)]
        H = Hf[np.ix_(order, order)]
        H[np.arange(r * k), np.arange(r * k)] += LAM
        return H

    x0 = np.zeros(r * k + k - 1)
    res = minimize(fun, x0, jac=jac, hess=hess, method="trust-exact",
                   options={"gtol": 1e-13, "maxiter": 1000})
    Th, F = parts(res.x)
    print("multinomial", res.status, res.nit, np.abs(jac(res.x)).max())
    return np.exp(F - logsumexp(F, axis=1)[:, None]), fun(res.x)


def primal(Z, R, y, loss):
    n, m = Z.shape
    t = 2.0 * y - 1.0
    Zt = np.hstack([Z, np.ones((n, 1))])

    def fun(x):
        f = Zt @ x
        if loss == "logistic":
            L = -log_expit(t * f)
        else:
            L = np.maximum(0, 1 - t * f) ** 2
        return L.mean() + 0.5 * LAM * x[:m] @ R @ x[:m]

    def jac(x):
        f = Zt @ x
        if loss == "logistic":
            g = expit(f) - y
        else:
            g = -2 * t * np.maximum(0, 1 - t * f)
        out = Zt.T @ g / n
        out[:m] += LAM * R @ x[:m]
        return out

    def hess(x):
        f = Zt @ x
        if loss == "logistic":
            p = expit(f)
            h = p * (1 - p)
        else:
            h = 2.0 * (1 - t * f > 0)
        H = Zt.T @ (h[:, None] * Zt) / n
        H[:m, :m] += LAM * R
        return H

    res = minimize(fun, np.zeros(m + 1), jac=jac, hess=hess, method="trust-exact",
                   options={"gtol": 1e-14, "maxiter": 1000})
    res2 = minimize(fun, res.x, jac=jac, method="L-BFGS-B",
                    options={"gtol": 1e-15, "ftol": 0, "maxiter": 10000})
    print("primal", loss, res.status, res.nit, np.abs(jac(res.x)).max(),
          np.abs(res.x - res2.x).max())
    return res.x, fun(res.x)


def c_array(name, v, fmt="%.17g"):
    v = np.asarray(v, dtype=float).ravel()
    body = ",\n".join(",".join(fmt % x for x in v[i:i + 8]) for i in range(0, len(v), 8))
    return "static const double %s[%d] = {\n%s\n};\n" % (name, len(v), body)


def c_ints(name, v):
    v = np.asarray(v).ravel()
    body = ",\n".join(",".join("%d" % x for x in v[i:i + 30]) for i in range(0, len(v), 30))
    return "static const uint32_t %s[%d] = {\n%s\n};\n" % (name, len(v), body)


def main():
    out = []
    bc = load_breast_cancer()
    X, y = bc.data, bc.target
    n, d = X.shape
    Xs = std(X)
    K = rbf(Xs, Xs, 1.0 / d)
    w_bal = n / (2.0 * np.bincount(y))[y]
    p1, J1 = binary(K, y, np.ones(n), True)
    p2, J2 = binary(K, y, np.ones(n), False)
    p3, J3 = binary(K, y, w_bal, True)
    svc = SVC(C=1.0 / (n * LAM), kernel="precomputed", tol=1e-10).fit(K, y)
    f_svm = svc.decision_function(K)
    a_svm = np.zeros(n)
    a_svm[svc.support_] = svc.dual_coef_[0]
    J_svm = np.maximum(0, 1 - (2 * y - 1) * f_svm).mean() + 0.5 * LAM * (LAM * n) ** 2 * a_svm @ K @ a_svm
    # SVC's f = sum_i dual_i K + b with dual = y alpha (C scale): ours a = dual * n lambda? no:
    # f = K a + b with a = dual_coef (SVC minimises 1/2||w||^2 + C sum hinge = (1/lambda n)(our J n)),
    # so its f is our f and ||f||^2 = dual^T K dual.
    J_svm = np.maximum(0, 1 - (2 * y - 1) * f_svm).mean() + 0.5 * LAM * a_svm @ K @ a_svm
    print("svm objective", J_svm)

    m = 20
    Z = K[:, :m]
    R = K[:m, :m]
    c_log, Jp_log = primal(Z, R, y, "logistic")
    c_sqh, Jp_sqh = primal(Z, R, y, "sqhinge")

    wine = load_wine()
    Xw, yw = wine.data, wine.target
    Kw = rbf(std(Xw), std(Xw), 1.0 / Xw.shape[1])
    Pw, Jw = multinomial(Kw, yw, 3)

    out.append("/* generated by test/unit/gen_logistic_fixtures.py: do not edit */\n")
    out.append("#define FX_LAMBDA %.17g\n" % LAM)
    out.append("#define FX_BC_N %d\n#define FX_BC_D %d\n" % (n, d))
    out.append(c_array("fx_bc_X", X, "%r"))
    out.append(c_ints("fx_bc_y", y))
    out.append(c_array("fx_bc_p_intercept", p1, "%.15g"))
    out.append(c_array("fx_bc_p_nointercept", p2, "%.15g"))
    out.append(c_array("fx_bc_p_balanced", p3, "%.15g"))
    out.append("static const double fx_bc_J[3] = {%.17g, %.17g, %.17g};\n" % (J1, J2, J3))
    out.append("static const double fx_bc_J_svm = %.17g;\n" % J_svm)
    out.append("#define FX_PRIMAL_M %d\n" % m)
    out.append(c_array("fx_primal_logistic", c_log))
    out.append(c_array("fx_primal_sqhinge", c_sqh))
    out.append("static const double fx_primal_J[2] = {%.17g, %.17g};\n" % (Jp_log, Jp_sqh))
    out.append("#define FX_WINE_N %d\n#define FX_WINE_D %d\n" % Xw.shape)
    out.append(c_array("fx_wine_X", Xw, "%r"))
    out.append(c_ints("fx_wine_y", yw))
    out.append(c_array("fx_wine_p", Pw, "%.15g"))
    out.append("static const double fx_wine_J = %.17g;\n" % Jw)
    with open(OUT, "w") as fh:
        fh.write("".join(out).replace("%r", ""))


if __name__ == "__main__":
    main()
