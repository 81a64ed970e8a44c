# Named approximate classifiers (logistic, svm over nystrom or rff
# features) train by passes over the stored query (issue 23): a basis and
# classes pass, one Newton pass per step, a scoring pass, so that their
# memory is O(m^2) per class, not O(rows).  Checked here, with
# kernel_ml.max_memory lowered to 4MB, below what the rows take in memory:
# the in-memory road (the kernel_train aggregate) is refused, while
# the named model trains and deploys, and its predictions on its training
# rows equal those of the kernel_train aggregate over the same rows
# (selected by _kernel_ml_holdout with the same seed and fraction) within
# 1e-9: the sums add in another order (the aggregate adds the rows in hash
# order), so equal up to rounding, not bit for bit.
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

my $node = PostgreSQL::Test::Cluster->new('named_approx_passes', install_path => $install);
$node->init;
$node->start;

# 30,000 rows of 16 features: 3.8 MB of features alone, so that the
# collected rows (and their hash-ordered copy) exceed 4 MB
$node->safe_psql('postgres', q{
CREATE EXTENSION kernel_ml;
CREATE TABLE big AS
  SELECT ARRAY(SELECT sin(i * j * 0.37) FROM generate_series(1, 16) j)::float8[] AS f,
         (CASE WHEN sin(i * 0.37) + cos(i * 0.74) > 0.3 THEN 1 ELSE 0 END)::float8 AS y
  FROM generate_series(1, 30000) i;
});

my $low = "SET kernel_ml.max_memory = '4MB';";

# the in-memory road (the kernel_train aggregate collects the rows) is
# refused at 4MB; a named grid selects by passes (019)
my ($ret, $out, $err) = $node->psql('postgres', $low . q{
SELECT kernel_train(f, y, '{"method": "logistic", "approximation": "nystrom", "components": 40, "lambda": 0.01}') IS NOT NULL FROM big});
isnt($ret, 0, 'the in-memory road is refused at 4MB');
like($err, qr/needs more memory than kernel_ml.max_memory allows/, 'refused for its memory');

my %runs = (
	nystrom_logistic => '{"method": "logistic", "approximation": "nystrom", "components": 40, "lambda": 0.001, "seed": 7}',
	nystrom_svm => '{"method": "svm", "approximation": "nystrom", "components": 40, "lambda": 0.001, "seed": 7}',
	rff_logistic => '{"method": "logistic", "approximation": "rff", "components": 60, "lambda": 0.001, "gamma": 0.1, "seed": 7}',
	rff_svm => '{"method": "svm", "approximation": "rff", "components": 60, "lambda": 0.001, "gamma": 0.1, "seed": 7}',
);

for my $name (sort keys %runs)
{
	my $opts = $runs{$name};
	my $trained = $node->safe_psql('postgres', $low . qq{
SELECT deployed, metrics->>'split', (metrics->>'train_rows')::int + (metrics->>'holdout_rows')::int,
       (metrics->'holdout'->>'accuracy')::float8 > 0.8
FROM kernel_model_train('$name', 'SELECT f, y FROM big', '$opts')});
	is($trained, 't|row_hash|30000|t', "$name: trains and deploys at 4MB, scored on both sides");

	# the aggregate over the same training rows (the default split: seed 7, 0.2)
	my $cmp = $node->safe_psql('postgres', qq{
SET kernel_ml.max_memory = '512MB';
WITH tr AS (SELECT f, y FROM big WHERE NOT _kernel_ml_holdout(f, y, 7, 0.2)),
agg AS (SELECT kernel_train(f, y, '$opts') AS m FROM tr)
SELECT count(*),
       max(abs(kernel_predict(agg.m, tr.f) - kernel_predict('$name'::text, tr.f))) < 1e-9,
       bool_and(kernel_predict_class(agg.m, tr.f) = kernel_predict_class('$name'::text, tr.f)),
       (SELECT (kernel_model_info(m)->>'rows_seen')::int FROM agg)
         = (kernel_model_info(kernel_model_get('$name'))->>'rows_seen')::int
FROM tr, agg});
	like($cmp, qr/^2[0-9]{4}\|t\|t\|t$/,
		"$name: predictions equal the aggregate's on the same training rows within 1e-9");
}

# logistic probabilities too
is($node->safe_psql('postgres', q{
WITH tr AS (SELECT f, y FROM big WHERE NOT _kernel_ml_holdout(f, y, 7, 0.2)),
agg AS (SELECT kernel_train(f, y, '{"method": "logistic", "approximation": "nystrom", "components": 40, "lambda": 0.001, "seed": 7}') AS m FROM tr)
SELECT max(abs((kernel_predict_proba(agg.m, tr.f)->>'1')::float8
               - (kernel_predict_proba('nystrom_logistic'::text, tr.f)->>'1')::float8)) < 1e-9
FROM tr, agg}), 't', 'nystrom_logistic: probabilities equal the aggregate\'s within 1e-9');

# retrain by passes, compared on the same held-out rows (a tie keeps version 1)
is($node->safe_psql('postgres', $low . q{
SELECT version, deployed, metrics->'deploy'->>'criterion'
FROM kernel_model_retrain('nystrom_logistic')}), '2|f|log_loss',
	'retrain at 4MB: compared with the deployed version by a held-out pass');

$node->stop;
done_testing();
