# Named approximate svr with a grid (lambda x gamma, k-fold) selects by SQL
# passes too (issue 23 point 2): per gamma a basis pass, per candidate and
# fold the Newton passes over the training rows not in the fold and a pass
# scoring the fold, then the winner fitted by the passes of a single-lambda
# model.  Its memory is O(m^2), not O(rows): checked with
# kernel_ml.max_memory lowered to 4MB, at which the in-memory road (the
# kernel_train aggregate with the same grid) is refused.  A row's fold is
# its hash modulo the folds (not the aggregate's rank rule), so the named
# grid may pick another candidate than the aggregate's; the winner's model
# equals the aggregate's with the winner's gamma and lambda and no grid over
# the same training rows within 1e-8 (the aggregate adds its rows in
# row-hash order, the passes in the query's order: rounding apart).
#
# Uses PostgreSQL::Test::Cluster and the installed extension; run it with
# test/tap.sh.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $bindir = `pg_config --bindir`;
chomp $bindir;
(my $install = $bindir) =~ s{/bin$}{};

my $node = PostgreSQL::Test::Cluster->new('named_svr_grid_passes', install_path => $install);
$node->init;
$node->start;

# 30,000 rows of 16 features: 3.8 MB of features alone
$node->safe_psql('postgres', q{
CREATE EXTENSION kernel_ml;
CREATE TABLE big AS
  SELECT ARRAY(SELECT sin(i * j * 0.37) FROM generate_series(1, 16) j)::float8[] AS f,
         sin(i * 0.37) + cos(i * 0.74) AS y
  FROM generate_series(1, 30000) i;
});

my $low = "SET kernel_ml.max_memory = '4MB';";
my $opts = '{"method": "svr", "approximation": "nystrom", "components": 30, "lambda": [0.0001, 0.01, 1], "gamma": [0.05, 0.5], "cv": 3, "epsilon": 0.05, "seed": 7}';

# the in-memory road (the aggregate collects the rows) is refused at 4MB
my ($ret, $out, $err) = $node->psql('postgres', $low . qq{
SELECT kernel_train(f, y, '$opts') IS NOT NULL FROM big});
isnt($ret, 0, 'the in-memory road with a grid is refused at 4MB');
like($err, qr/needs more memory than kernel_ml.max_memory allows/, 'refused for its memory');

is($node->safe_psql('postgres', $low . qq{
SELECT version, deployed, (metrics->'holdout'->>'rmse')::float8 < 0.8
FROM kernel_model_train('grid_svr', 'SELECT f, y FROM big', '$opts')}),
	'1|t|t', 'the grid trains and deploys by passes at 4MB');

# the selection: every candidate scored, finite; the winner the lowest
is($node->safe_psql('postgres', q{
WITH s AS (SELECT kernel_model_info(kernel_model_get('grid_svr'))->'selection' AS s),
c AS (SELECT (e->>'score')::float8 AS score, (e->>'score_std')::float8 AS sd, ord - 1 AS i
      FROM s, jsonb_array_elements(s->'candidates') WITH ORDINALITY AS x(e, ord))
SELECT s->>'cv', s->>'folds', count(*), bool_and(score > 0 AND score < 'infinity'::float8 AND sd >= 0),
       (SELECT i FROM c ORDER BY score, i LIMIT 1) = (s->>'best')::int
FROM s, c GROUP BY s}), 'kfold|3|6|t|t', 'every candidate scored and finite, the best the lowest');

# the winner equals the aggregate with its gamma and lambda, no grid, on the same training rows
my ($g, $l) = split /\|/, $node->safe_psql('postgres', q{
WITH s AS (SELECT kernel_model_info(kernel_model_get('grid_svr'))->'selection' AS s)
SELECT s->'candidates'->((s->>'best')::int)->>'gamma', s->'candidates'->((s->>'best')::int)->>'lambda' FROM s});
my $single = qq({"method": "svr", "approximation": "nystrom", "components": 30, "lambda": $l, "gamma": $g, "epsilon": 0.05, "seed": 7});
like($node->safe_psql('postgres', qq{
SET kernel_ml.max_memory = '512MB';
WITH tr AS (SELECT f, y FROM big WHERE NOT _kernel_ml_holdout(f, y, 7, 0.2)),
agg AS (SELECT kernel_train(f, y, '$single') AS m FROM tr)
SELECT count(*), max(abs(kernel_predict(agg.m, tr.f) - kernel_predict('grid_svr'::text, tr.f))) < 1e-8
FROM tr, agg}), qr/^2[0-9]{4}\|t$/,
	"the winner (gamma $g, lambda $l) equals the aggregate's without a grid within 1e-8");

# refit: the winner over every usable row
(my $refit = $opts) =~ s/\}$/, "refit": true}/;
is($node->safe_psql('postgres', $low . qq{
SELECT version, deployed FROM kernel_model_train('grid_refit', 'SELECT f, y FROM big',
  '$refit')}), '1|t', 'refit with a grid at 4MB');
like($node->safe_psql('postgres', qq{
SET kernel_ml.max_memory = '512MB';
WITH agg AS (SELECT kernel_train(f, y, '$single') AS m FROM big)
SELECT max(abs(kernel_predict(agg.m, big.f) - kernel_predict('grid_refit'::text, big.f))) < 1e-9,
       kernel_model_info(kernel_model_get('grid_refit'))->'selection'->>'best'
         = kernel_model_info(kernel_model_get('grid_svr'))->'selection'->>'best'
FROM big, agg}), qr/^t\|t$/, 'refit: the winner over every row, the same selection');

$node->stop;
done_testing();
