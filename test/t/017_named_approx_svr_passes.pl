# Named approximate svr (epsilon-SVR over nystrom or rff features, the
# L2-loss primal by Newton) trains by passes over the stored query (issue
# 23): a basis pass, one Newton pass per step, a scoring pass, so that its
# memory is O(m^2), not O(rows), as the named approximate classifiers'
# (016).  Checked with kernel_ml.max_memory lowered to 4MB, below what the
# rows take in memory: the in-memory road (the kernel_train aggregate
# collects the rows) is refused, while the named model trains, deploys and
# predicts on its training rows as the kernel_train aggregate over the same
# rows (selected by _kernel_ml_holdout with the same seed and fraction)
# within 1e-8 (the aggregate adds its rows in row-hash order, the passes
# in the query's order: equal up to rounding).
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

my $node = PostgreSQL::Test::Cluster->new('named_svr_passes', install_path => $install);
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

# the in-memory road (the aggregate collects the rows) is refused at 4MB
my ($ret, $out, $err) = $node->psql('postgres', $low . q{
SELECT kernel_train(f, y, '{"method": "svr", "approximation": "nystrom", "components": 40, "lambda": 0.001, "seed": 7}') IS NOT NULL FROM big});
isnt($ret, 0, 'the in-memory road is refused at 4MB');
like($err, qr/needs more memory than kernel_ml.max_memory allows/, 'refused for its memory');

my %runs = (
	nystrom_svr => '{"method": "svr", "approximation": "nystrom", "components": 40, "lambda": 0.001, "epsilon": 0.05, "seed": 7}',
	rff_svr => '{"method": "svr", "approximation": "rff", "components": 60, "lambda": 0.001, "gamma": 0.1, "seed": 7}',
);

for my $name (sort keys %runs)
{
	my $opts = $runs{$name};
	my $trained = $node->safe_psql('postgres', $low . qq{
SELECT deployed, metrics->>'split', (metrics->>'train_rows')::int + (metrics->>'holdout_rows')::int,
       (metrics->'holdout'->>'rmse')::float8 < 0.8, (metrics->'holdout'->>'r2')::float8 > 0.2,
       (metrics->'train'->>'rmse')::float8 > 0, metrics->'holdout' ? 'accuracy'
FROM kernel_model_train('$name', 'SELECT f, y FROM big', '$opts')});
	is($trained, 't|row_hash|30000|t|t|t|f', "$name: trains and deploys at 4MB, regression metrics on both sides");

	# the aggregate over the same training rows (the default split: seed 7, 0.2)
	my $cmp = $node->safe_psql('postgres', qq{
SET kernel_ml.max_memory = '512MB';
WITH tr AS (SELECT f, y FROM big WHERE NOT _kernel_ml_holdout(f, y, 7, 0.2)),
agg AS (SELECT kernel_train(f, y, '$opts') AS m FROM tr)
SELECT count(*),
       max(abs(kernel_predict(agg.m, tr.f) - kernel_predict('$name'::text, tr.f))) < 1e-8,
       (SELECT kernel_model_info(m)->>'rows_seen' FROM agg)
         = kernel_model_info(kernel_model_get('$name'))->>'rows_seen',
       (SELECT kernel_model_info(m)->>'n_support' FROM agg)
         = kernel_model_info(kernel_model_get('$name'))->>'n_support',
       (SELECT kernel_model_info(m)->>'iterations' FROM agg)
         = kernel_model_info(kernel_model_get('$name'))->>'iterations'
FROM tr, agg});
	like($cmp, qr/^2[0-9]{4}\|t\|t\|t\|t$/,
		"$name: predictions equal the aggregate's on the same training rows within 1e-8");
}

# retrain by passes, compared on the same held-out rows (a tie keeps version 1)
is($node->safe_psql('postgres', $low . q{
SELECT version, deployed, metrics->'deploy'->>'criterion' IS NULL,
       (metrics->'holdout'->>'rmse')::float8 < 0.8
FROM kernel_model_retrain('nystrom_svr')}), '2|f|t|t',
	'retrain at 4MB: compared with the deployed version by a held-out pass');

# refit: the stored model is the aggregate's over every usable row
is($node->safe_psql('postgres', $low . q{
SELECT version, deployed FROM kernel_model_train('refit_svr', 'SELECT f, y FROM big',
  '{"method": "svr", "approximation": "rff", "components": 60, "lambda": 0.001, "gamma": 0.1, "seed": 7, "refit": true}')}),
	'1|t', 'refit at 4MB');
is($node->safe_psql('postgres', q{
SET kernel_ml.max_memory = '512MB';
WITH agg AS (SELECT kernel_train(f, y, '{"method": "svr", "approximation": "rff", "components": 60, "lambda": 0.001, "gamma": 0.1, "seed": 7}') AS m FROM big)
SELECT max(abs(kernel_predict(agg.m, big.f) - kernel_predict('refit_svr'::text, big.f))) < 1e-8
FROM big, agg}), 't', 'refit: predictions equal the aggregate\'s over every row within 1e-8');

$node->stop;
done_testing();
