-- kernel_eval and kernel_matrix: definitions, options, casts, errors
SET extra_float_digits = 0;

-- one value per kernel, x = (1, 2), z = (3, 4): <x,z> = 11, ||x-z||^2 = 8, ||x-z||_1 = 4
SELECT k, round(kernel_eval('{1,2}', '{3,4}', o)::numeric, 12) AS value
FROM (VALUES
  ('linear',    '{"kernel": "linear"}'::jsonb),
  ('poly',      '{"kernel": "poly", "gamma": 0.5, "degree": 2, "coef0": 1}'),
  ('rbf',       '{"kernel": "rbf", "gamma": 0.5}'),
  ('laplacian', '{"kernel": "laplacian", "gamma": 0.5}'),
  ('sigmoid',   '{"kernel": "sigmoid", "gamma": 0.5, "coef0": 1}'),
  ('cosine',    '{"kernel": "cosine"}'),
  ('min',       '{"kernel": "min"}'),
  ('polysum',   '{"kernel": "polysum", "degree": 3}')
) AS t(k, o);

-- the same values from their definitions
SELECT round(exp(-4)::numeric, 12) AS rbf, round(exp(-2)::numeric, 12) AS laplacian,
       round(tanh(6.5)::numeric, 12) AS sigmoid, round((11 / (sqrt(5) * 5))::numeric, 12) AS cosine;

-- defaults: rbf with gamma = 1 / number of features
SELECT round(kernel_eval('{1,2}', '{3,4}')::numeric, 12) = round(exp(-8.0 / 2)::numeric, 12) AS default_is_rbf;

-- int[], real[] and numeric[] arrays are cast implicitly
SELECT kernel_eval(ARRAY[1,2], ARRAY[3,4], '{"kernel": "linear"}') AS int_arrays,
       kernel_eval(ARRAY[1,2]::real[], ARRAY[3,4]::real[], '{"kernel": "linear"}') AS real_arrays,
       kernel_eval(ARRAY[1.5,2]::numeric[], ARRAY[3,4]::numeric[], '{"kernel": "linear"}') AS numeric_arrays;

-- STRICT: NULL in, NULL out
SELECT kernel_eval(NULL, '{1}') IS NULL AS null_in_null_out;

-- kernel_matrix: rows and columns in aggregate input order
CREATE TABLE pts (id int, f float8[]);
INSERT INTO pts VALUES (1, '{0,0}'), (2, '{1,0}'), (3, '{0,2}');
SELECT kernel_matrix(f, '{"kernel": "linear"}' ORDER BY id) FROM pts;
SELECT kernel_matrix(f, '{"kernel": "linear"}' ORDER BY id DESC) FROM pts;
SELECT kernel_matrix(f, '{"kernel": "rbf", "gamma": 1}' ORDER BY id)::numeric(10,8)[] FROM pts;
-- symmetric for every kernel
SELECT k, (SELECT bool_and(m[i][j] = m[j][i]) FROM generate_series(1,3) i, generate_series(1,3) j) AS symmetric
FROM (SELECT k, kernel_matrix(f, jsonb_build_object('kernel', k) ORDER BY id) AS m
      FROM pts, unnest(ARRAY['linear','poly','rbf','laplacian','sigmoid','cosine','min','polysum']) k
      GROUP BY k) s ORDER BY k;
-- no rows: NULL
SELECT kernel_matrix(f, '{}') IS NULL AS empty_is_null FROM pts WHERE false;

-- errors: options
SELECT kernel_eval('{1}', '{2}', '{"kernel": "gaussian"}');
SELECT kernel_eval('{1}', '{2}', '{"kernal": "rbf"}');
SELECT kernel_eval('{1}', '{2}', '{"gamma": -1}');
SELECT kernel_eval('{1}', '{2}', '{"gamma": "big"}');
SELECT kernel_eval('{1}', '{2}', '{"kernel": "poly", "degree": 0}');
SELECT kernel_eval('{1}', '{2}', '{"kernel": "poly", "degree": 2.5}');
SELECT kernel_eval('{1}', '{2}', '{"kernel": "rbf", "degree": 2}');
SELECT kernel_eval('{1}', '{2}', '{"kernel": "linear", "gamma": 2}');
SELECT kernel_eval('{1}', '{2}', '{"standardize": "yes"}');
SELECT kernel_eval('{1}', '{2}', '[1, 2]');
SELECT kernel_eval('{1}', '{2}', '{"kernel": 3}');
-- errors: arrays
SELECT kernel_eval('{1,2}', '{2}');
SELECT kernel_eval('{1,NULL}', '{2,3}');
SELECT kernel_eval('{1,NaN}', '{2,3}');
SELECT kernel_eval('{{1,2},{3,4}}', '{2,3}');
SELECT kernel_eval('{}', '{}');
SELECT kernel_eval('{1,Infinity}', '{2,3}');
INSERT INTO pts VALUES (4, '{1,2,3}');
SELECT kernel_matrix(f, '{}' ORDER BY id) FROM pts;
INSERT INTO pts VALUES (5, NULL);
SELECT kernel_matrix(f, '{}' ORDER BY id) FROM pts WHERE id <> 4;
DROP TABLE pts;
