-- Numerics: no silently wrong model, no NaN or Infinity from finite input.
-- Overflow is 22003 naming what overflowed; an untrustworthy fit is 22000.
SET extra_float_digits = 0;
\set SHOW_CONTEXT never

-- Re-raise an error with its SQLSTATE in front of the message; with_detail
-- false leaves out a detail whose numbers depend on rounding.
CREATE FUNCTION expect_error(q text, with_detail boolean DEFAULT true)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  EXECUTE q;
  RAISE NOTICE 'no error';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
                          det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
  IF with_detail AND det <> '' AND hnt <> '' THEN
    RAISE EXCEPTION '%: %', st, msg USING ERRCODE = st, DETAIL = det, HINT = hnt;
  ELSIF with_detail AND det <> '' THEN
    RAISE EXCEPTION '%: %', st, msg USING ERRCODE = st, DETAIL = det;
  ELSIF hnt <> '' THEN
    RAISE EXCEPTION '%: %', st, msg USING ERRCODE = st, HINT = hnt;
  END IF;
  RAISE EXCEPTION '%: %', st, msg USING ERRCODE = st;
END $$;

CREATE TABLE houses AS
SELECT i AS id, ARRAY[sin(i), cos(0.7 * i), (i % 7) / 7.0]::float8[] AS f,
       sin(i) + cos(0.7 * i) ^ 2 + 0.1 * (i % 7) AS y
FROM generate_series(1, 200) i;

-- kernel_eval: every kernel's overflow is an error
SELECT expect_error($$SELECT kernel_eval('{1e200}', '{1e200}', '{"kernel": "linear"}')$$);
SELECT expect_error($$SELECT kernel_eval('{1e100, 1}', '{1e10, 1}', '{"kernel": "poly", "degree": 3}')$$);
SELECT expect_error($$SELECT kernel_eval('{1e100}', '{1e10}', '{"kernel": "polysum", "degree": 3}')$$);
SELECT expect_error($$SELECT kernel_eval('{1e200}', '{-1e200}', '{"kernel": "rbf"}')$$);
SELECT expect_error($$SELECT kernel_eval('{1.7e308}', '{-1.7e308}', '{"kernel": "laplacian"}')$$);
SELECT expect_error($$SELECT kernel_eval('{1e200}', '{1e200}', '{"kernel": "sigmoid"}')$$);
SELECT expect_error($$SELECT kernel_eval('{1.7e308, 1.7e308}', '{1.7e308, 1.7e308}', '{"kernel": "min"}')$$);

-- cosine scales before taking norms: exact answers at both ends of the range
SELECT kernel_eval('{1e300,1e300}', '{-1e300,-1e300}', '{"kernel": "cosine"}') AS minus_one,
       kernel_eval('{1e-300,1e-300}', '{2e-300,2e-300}', '{"kernel": "cosine"}') AS one,
       kernel_eval('{1e300,0}', '{0,1e300}', '{"kernel": "cosine"}') AS zero;
SELECT kernel_matrix(f, '{"kernel": "cosine"}') AS huge_rows
FROM (VALUES (1, '{1e300,1e300}'::float8[]), (2, '{-1e300,-1e300}'), (3, '{1e300,0}')) v(i, f);
SELECT k->>'is_psd' AS is_psd, round((k->>'max_eigenvalue')::numeric, 10) AS max_eigenvalue
FROM (SELECT kernel_check(f, '{"kernel": "cosine", "standardize": false}') AS k
      FROM (VALUES ('{1e300,1e300}'::float8[]), ('{-1e300,-1e300}'), ('{1e300,0}')) v(f)) c;
SELECT round(kernel_predict(kernel_train(f, y, '{"kernel": "cosine", "standardize": false}'),
                            '{-1e300,-1e300}')::numeric, 10) AS cosine_predict
FROM (VALUES ('{1e300,1e300}'::float8[], 1.0), ('{1e300,-1e300}', 2.0), ('{1e300,0}', 3.0)) v(f, y);

-- kernel_matrix and kernel_check on an overflowing Gram matrix (0.1.0: Infinity, and 22P02)
SELECT expect_error($$SELECT kernel_matrix(ARRAY[f[1] * 1e200, f[2]], '{"kernel": "linear"}') FROM houses WHERE id <= 3$$);
SELECT expect_error($$SELECT kernel_check(ARRAY[f[1] * 1e200, f[2]], '{"kernel": "linear", "standardize": false}') FROM houses$$);
SELECT expect_error($$SELECT kernel_check(ARRAY[f[1] * 1e3, f[2]], '{"kernel": "poly", "degree": 100, "standardize": false}') FROM houses$$);

-- kernel_train: overflowing kernels for ridge, lms and selection
SELECT expect_error($$SELECT kernel_train(ARRAY[f[1] * 1e200, f[2]], y, '{"kernel": "linear", "standardize": false}') FROM houses$$);
SELECT expect_error($$SELECT kernel_train(ARRAY[f[1] * 1e200, f[2]], y, '{"kernel": "linear", "standardize": false, "method": "lms"}') FROM houses$$);
SELECT expect_error($$SELECT kernel_train(ARRAY[f[1] * 1e200, f[2]], y, '{"kernel": "rbf", "standardize": false}') FROM houses$$);
SELECT expect_error($$SELECT kernel_train(ARRAY[f[1] * 1e200, f[2]], y, '{"kernel": "linear", "standardize": false, "lambda": [0.1, 1], "cv": 3}') FROM houses$$);
SELECT expect_error($$SELECT kernel_train(f, t, '{}') FROM (VALUES ('{1}'::float8[], 1.7e308), ('{2}', -1.7e308), ('{3}', 1.7e308)) v(f, t)$$);

-- standardizing features of +-1e200 is exact (0.1.0: scale Infinity, then 22P03):
-- the model predicts as the one trained on the unscaled features
SELECT max(abs(kernel_predict((SELECT kernel_train(ARRAY[f[1] * 1e200, f[2]], y) FROM houses), ARRAY[f[1] * 1e200, f[2]])
             - kernel_predict((SELECT kernel_train(ARRAY[f[1], f[2]], y) FROM houses), ARRAY[f[1], f[2]]))) < 1e-9 AS scale_invariant
FROM houses;

-- kernel_predict: overflow in the standardized row and in the kernel row
CREATE TABLE models AS
SELECT (SELECT kernel_train(f, y, '{"kernel": "poly", "degree": 3}') FROM houses) AS poly3,
       (SELECT kernel_train(ARRAY[f[3] * 1e-300], y) FROM houses) AS tiny_scale;
SELECT expect_error($$SELECT kernel_predict(poly3, '{1e120, 1, 1}') FROM models$$);
SELECT expect_error($$SELECT kernel_predict(tiny_scale, '{1e10}') FROM models$$);

-- no silently wrong model: degree 100 (0.1.0 reported train_rmse 0.0001)
SELECT expect_error($$SELECT kernel_train(f, y, '{"kernel": "poly", "degree": 100}') FROM houses$$, false);
SELECT expect_error($$SELECT kernel_train(f, y, '{"kernel": "polysum", "degree": 100}') FROM houses$$, false);
-- its detail gives the relative residual and the condition estimate
DO $$
DECLARE
  det text;
BEGIN
  PERFORM kernel_train(f, y, '{"kernel": "poly", "degree": 100}') FROM houses;
  RAISE NOTICE 'no error';
EXCEPTION WHEN data_exception THEN
  GET STACKED DIAGNOSTICS det = PG_EXCEPTION_DETAIL;
  RAISE NOTICE 'detail has the numbers: %',
    det ~ '^The coefficients leave a relative residual \|\|y - \(K \+ lambda I\) alpha\|\| / \|\|y\|\| of [0-9.e+-]+ with lambda = 1 \(at most 1e-06 is accepted\); the reciprocal condition number of K \+ lambda I is about [0-9.e+-]+ \(1-norm [0-9.e+-]+\)\.$';
END $$;
-- ordinary fits down to lambda 1e-6 still pass
SELECT o->>'lambda' AS lambda, kernel_train(f, y, o) IS NOT NULL AS fitted
FROM houses, (VALUES ('{"lambda": 1e-6}'::jsonb), ('{"lambda": 1e-6, "gamma": 0.1}'),
                     ('{"lambda": 0, "gamma": 0.01}')) v(o)
GROUP BY o ORDER BY o::text;

-- train_rmse is the real error of the model returned: the RMSE of its
-- predictions on its own training rows, within 1e-9 relative
CREATE TABLE fits AS
SELECT o, (SELECT kernel_train(f, y, o) FROM houses) AS model
FROM (VALUES ('{}'::jsonb),
             ('{"lambda": 1e-4, "gamma": 1}'),
             ('{"kernel": "poly", "degree": 3, "lambda": 0.01}'),
             ('{"kernel": "poly", "degree": 8, "lambda": 1e-3}'),
             ('{"kernel": "laplacian", "gamma": 0.3, "lambda": 1e-3, "standardize": false}'),
             ('{"kernel": "linear", "lambda": 1e-3, "fit_intercept": false}'),
             ('{"kernel": "polysum", "degree": 4, "lambda": 0.1}'),
             ('{"kernel": "cosine", "lambda": 0.01}'),
             ('{"method": "lms", "max_iter": 300}'),
             ('{"method": "lms", "kernel": "laplacian", "gamma": 0.5, "lambda": 0.1}'),
             ('{"lambda": "auto", "gamma": "auto"}'),
             ('{"lambda": [1e-3, 1], "cv": 4}')) v(o);
SELECT f.o::text AS options,
       abs((kernel_model_info(f.model)->>'train_rmse')::float8 - r.rmse) <= 1e-9 * r.rmse AS real_rmse,
       r.rmse > 1e-6 AS not_trivial
FROM fits f,
     LATERAL (SELECT sqrt(avg((kernel_predict(f.model, h.f) - h.y) ^ 2)) AS rmse FROM houses h) r
ORDER BY 1;

DROP TABLE houses, models, fits;
DROP FUNCTION expect_error(text, boolean);
