-- Frictions of issue 30, section 4: the messages a newcomer meets.
SET extra_float_digits = 0;

CREATE TABLE fr AS
SELECT i AS id, ARRAY[sin(i), cos(0.7 * i)]::float8[] AS f,
       sin(i) + 0.5 * cos(0.7 * i) AS y
FROM generate_series(1, 40) i;

-- 7. scikit-learn's names are refused with their translation; typos of a
-- key or of any enumerated value get the closest spelling.
SELECT kernel_train(f, y, '{"C": 10}') FROM fr;
SELECT kernel_train(f, y, '{"alpha": 0.1}') FROM fr;
SELECT kernel_train(f, y, '{"n_components": 100}') FROM fr;
SELECT kernel_train(f, y, '{"random_state": 7}') FROM fr;
SELECT kernel_train(f, y, '{"lamda": 0.1}') FROM fr;
SELECT kernel_train(f, y, '{"Gamma": 0.5}') FROM fr;
SELECT kernel_train(f, y, '{"epsilom": 0.1}') FROM fr;
SELECT kernel_train(f, y, '{"xyz": 1}') FROM fr;
SELECT kernel_train(f, y, '{"kernel": "RBF"}') FROM fr;
SELECT kernel_train(f, y, '{"kernel": "polynomial"}') FROM fr;
SELECT kernel_train(f, y, '{"method": "SVC"}') FROM fr;
SELECT kernel_train(f, y, '{"method": "rige"}') FROM fr;
SELECT kernel_train(f, y, '{"approximation": "nystroem"}') FROM fr;
SELECT kernel_train(f, y, '{"approximation": "RBFSampler"}') FROM fr;
SELECT kernel_train(f, y, '{"cv": "LOO"}') FROM fr;
SELECT kernel_train(f, y, '{"gamma": "scale"}') FROM fr;
SELECT kernel_train(f, y, '{"lambda": "Auto"}') FROM fr;
SELECT kernel_train(f, y::text, '{"solver": "smoo"}') FROM fr;
SELECT kernel_train(f, y::text, '{"class_weight": "balance"}') FROM fr;
SELECT kernel_model_train('fr_typo', 'SELECT f, y FROM fr', '{"deploy": "alway"}');
