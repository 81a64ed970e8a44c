# Named training and retraining as the first statement of fresh
# connections, repeated: regression, classification and approximate models
# (exact, Nyström, rff).  Each statement is a new psql, so a new backend:
# its memory is laid out as a nightly pg_cron job's is, where a result read
# after SPI_finish() freed it crashed the server (issue 20).  The checks:
# every call returns its row, the server never restarted, and (test/tap.sh)
# no server log has a TRAP or a backend terminated by a signal.  On the
# assert-enabled server (test/debug_server.sh) freed memory is clobbered,
# so a read of it fails every time, not now and then.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $bindir = `pg_config --bindir`;
chomp $bindir;
(my $install = $bindir) =~ s{/bin$}{};

my $node = PostgreSQL::Test::Cluster->new('fresh', install_path => $install);
$node->init;
$node->append_conf('postgresql.conf', "max_worker_processes = 16\nmax_parallel_workers = 8\n");
$node->start;

$node->safe_psql('postgres', q{
CREATE EXTENSION kernel_ml;
CREATE TABLE reg AS
  SELECT ARRAY[sin(i), cos(0.7 * i), (i % 7)::float8]::float8[] AS f,
         sin(i) + cos(0.7 * i) AS y
  FROM generate_series(1, 240) i;
CREATE TABLE cls AS
  SELECT ARRAY[sin(i), cos(0.7 * i)]::float8[] AS f,
         CASE WHEN sin(i) + cos(0.7 * i) > 0 THEN 'up' ELSE 'down' END AS label
  FROM generate_series(1, 240) i;
});

my $postmaster_start = $node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');

my %runs = (
	exact_regression => [ 'SELECT f, y FROM reg', '{"lambda": 0.01, "seed": 1}' ],
	exact_svm => [ 'SELECT f, label FROM cls', '{"method": "svm", "lambda": 0.01, "seed": 1}' ],
	exact_logistic => [ 'SELECT f, label FROM cls', '{"method": "logistic", "lambda": 0.01, "seed": 1}' ],
	nystrom_regression =>
	  [ 'SELECT f, y FROM reg', '{"approximation": "nystrom", "components": 20, "seed": 1}' ],
	rff_regression => [ 'SELECT f, y FROM reg', '{"approximation": "rff", "components": 30, "seed": 1}' ],
	nystrom_logistic => [ 'SELECT f, label FROM cls',
		'{"method": "logistic", "approximation": "nystrom", "components": 20, "seed": 1}' ],
	rff_svm => [ 'SELECT f, label FROM cls',
		'{"method": "svm", "approximation": "rff", "components": 30, "seed": 1}' ],
);

my $repeats = 3;
for my $name (sort keys %runs)
{
	my ($query, $options) = @{ $runs{$name} };
	(my $q = $query) =~ s/'/''/g;
	for my $i (1 .. $repeats)
	{
		# a new connection each time: train first, then retrain first
		my $sql = $i == 1
		  ? "SELECT version, jsonb_typeof(metrics) FROM kernel_model_train('$name', '$q', '$options')"
		  : "SELECT version, jsonb_typeof(metrics) FROM kernel_model_retrain('$name')";
		my ($ret, $out, $err) = $node->psql('postgres', $sql);
		is("$ret|$out", "0|$i|object", "$name: call $i in a fresh connection returns version $i and its metrics")
		  or diag($err);
	}
	# the stored metrics are the returned ones, intact
	is($node->safe_psql('postgres',
			"SELECT count(*) FROM kernel_models WHERE name = '$name' AND metrics ? 'deploy' AND metrics ? 'rows'"),
		$repeats, "$name: every stored version has whole metrics");
}

is($node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()'), $postmaster_start,
	'the server never restarted');

$node->stop;
done_testing();
