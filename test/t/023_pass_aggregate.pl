# The pass aggregate host (issue 28, DESIGN-0.4.md step 5): a named model's
# training asks the learner's passes as statements over the pass aggregate
# _kernel_ml_pass, whose fixed-size bytea states parallel workers fill and
# the learner's backend combines.  Checked here, with parallel query forced
# and the leader reading no row: a named nystrom logistic with a 2 x 3
# (lambda x gamma) k-fold grid and a named rff svr run every pass of the
# learner (basis, folds, Newton steps of every class and candidate,
# held-out losses, training metrics) as a Partial Aggregate under a Gather
# that launched workers; the models equal the serial ones and the in-memory
# road's (kernel_train over the same training rows) within 1e-9.
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

my $node = PostgreSQL::Test::Cluster->new('pass_aggregate', install_path => $install);
$node->init;
$node->append_conf('postgresql.conf', qq{
max_worker_processes = 16
max_parallel_workers = 8
});
$node->start;

sub sql_ok
{
	my ($sql) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', $sql);
	if ($ret != 0)
	{
		diag("failed: $sql\n$err");
		return "ERROR: $err";
	}
	return $out;
}

my $parallel = q{
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
};
my $explain = q{
LOAD 'auto_explain';
SET auto_explain.log_min_duration = 0;
SET auto_explain.log_nested_statements = on;
SET auto_explain.log_analyze = on;
SET auto_explain.log_level = notice;
};

sql_ok(q{
CREATE EXTENSION kernel_ml;
CREATE TABLE pts AS
SELECT i, ARRAY[sin(i * 0.01), cos(i * 0.037), (i % 13) / 13.0]::float8[] AS f,
       2 * sin(i * 0.01) + cos(i * 0.037) + 0.05 * sin(i) AS y,
       CASE WHEN sin(i * 0.01) + 0.5 * cos(i * 0.037) > 0.4 THEN 2.0
            WHEN (i % 13) > 6 THEN 1.0 ELSE 0.0 END::float8 AS label
FROM generate_series(1, 12000) i;
ANALYZE pts;
});

my %case = (
	logistic => [ 'SELECT f, label FROM pts',
		'{"method": "logistic", "approximation": "nystrom", "components": 30, "lambda": [0.001, 0.01], "gamma": [0.3, 1, 3], "cv": 3, "seed": 7}' ],
	svr => [ 'SELECT f, y FROM pts',
		'{"method": "svr", "approximation": "rff", "components": 40, "lambda": 0.001, "seed": 7}' ]);

for my $name (sort keys %case)
{
	my ($query, $opts) = @{ $case{$name} };

	sql_ok(qq{SET max_parallel_workers_per_gather = 0;
SELECT version FROM kernel_model_train('${name}_serial', '$query', '$opts');});
	my ($ret, $out, $err) = $node->psql('postgres', qq{$explain
$parallel
SELECT version FROM kernel_model_train('${name}_parallel', '$query', '$opts');});
	is($ret, 0, "$name: parallel named training succeeds") or diag($err);

	my @plans = split /NOTICE:\s+duration:/, $err;
	my @passes = grep { $_ =~ /\._kernel_ml_pass\(s\.f, s\.y, \$1\)/ } @plans;
	diag("$name: ", scalar @passes, ' pass statements');
	cmp_ok(scalar @passes, '>=', $name eq 'logistic' ? 30 : 4,
		"$name: the learner's passes ran as pass aggregate statements");
	is(scalar(grep { !/Partial Aggregate/ } @passes), 0,
		"$name: every pass aggregates partially");
	is(scalar(grep { !/Gather/ || !/Workers Launched: [1-9]/ || /Workers Launched: 0/ } @passes), 0,
		"$name: every pass ran under a Gather that launched workers");
	# the host counts the rows by an aggregate statement too
	my @counts = grep { /\._kernel_ml_row_side\(s\.f, s\.y, \$1, \$2, \$3\)/ } @plans;
	ok(@counts && !grep({ !/Partial (Hash|Group)?Aggregate/ || !/Workers Launched: [1-9]/ } @counts),
		"$name: the host's counting statement aggregates partially in parallel workers");
	# no pass of the learner reads the rows through a cursor of its own, nor
	# a classifier's scoring (its passes over the pass aggregate, issue 33)
	my @scans = grep { /SELECT s\.f, s\.y FROM/ } @plans;
	is(scalar @scans, 0, "$name: no row read by a scan, a classifier's scoring neither");
}

# the parallel models equal the serial ones and the in-memory road's, and
# so do a classifier's stored scores
is(sql_ok(q{
SELECT s.metrics->'holdout'->'confusion' = p.metrics->'holdout'->'confusion'
   AND s.metrics->'train'->'confusion' = p.metrics->'train'->'confusion'
   AND abs((s.metrics->'holdout'->>'log_loss')::float8 - (p.metrics->'holdout'->>'log_loss')::float8) < 1e-9
FROM kernel_models s, kernel_models p WHERE s.name = 'logistic_serial' AND p.name = 'logistic_parallel'}),
	't', 'logistic: the parallel scoring passes store the serial scores');
is(sql_ok(q{
SELECT max(abs((kernel_predict_proba('logistic_serial', f)->>'2')::float8
             - (kernel_predict_proba('logistic_parallel', f)->>'2')::float8)) < 1e-9
FROM pts}), 't', 'logistic: parallel equals serial within 1e-9');
is(sql_ok(q{
SELECT kernel_model_info(kernel_model_get('logistic_parallel'))->>'lambda',
       kernel_model_info(kernel_model_get('logistic_parallel'))->>'gamma'}),
	sql_ok(q{
SELECT kernel_model_info(kernel_model_get('logistic_serial'))->>'lambda',
       kernel_model_info(kernel_model_get('logistic_serial'))->>'gamma'}),
	'logistic: the same grid point chosen');
is(sql_ok(q{
WITH tr AS (SELECT f, label FROM pts WHERE NOT _kernel_ml_holdout(f, label, 7, 0.2)),
     m AS (SELECT kernel_train(f, label, '{"method": "logistic", "approximation": "nystrom", "components": 30, "lambda": [0.001, 0.01], "gamma": [0.3, 1, 3], "cv": 3, "seed": 7}') AS m FROM tr)
SELECT max(abs((kernel_predict_proba(m.m, p.f)->>'2')::float8
             - (kernel_predict_proba('logistic_parallel', p.f)->>'2')::float8)) < 1e-9
FROM m, pts p GROUP BY m.m}), 't', 'logistic: the parallel named model equals the in-memory road within 1e-9');
is(sql_ok(q{
SELECT max(abs(kernel_predict('svr_serial', f) - kernel_predict('svr_parallel', f))) < 1e-9
FROM pts}), 't', 'svr: parallel equals serial within 1e-9');
is(sql_ok(q{
WITH tr AS (SELECT f, y FROM pts WHERE NOT _kernel_ml_holdout(f, y, 7, 0.2)),
     m AS (SELECT kernel_train(f, y, '{"method": "svr", "approximation": "rff", "components": 40, "lambda": 0.001, "seed": 7}') AS m FROM tr)
SELECT max(abs(kernel_predict(m.m, p.f) - kernel_predict('svr_parallel', p.f))) < 1e-9
FROM m, pts p GROUP BY m.m}), 't', 'svr: the parallel named model equals the in-memory road within 1e-9');

# any role may call the pass aggregate: what it is given is untrusted
sql_ok(q{CREATE ROLE pass_caller LOGIN; GRANT SELECT ON pts TO pass_caller;});
for my $bad ("'\\x00'::bytea", "'\\x4b4d5044010000000000'::bytea",
	"pg_catalog.decode(pg_catalog.repeat('ab', 300), 'hex')")
{
	my ($ret, $out, $err) = $node->psql('postgres',
		"SELECT _kernel_ml_pass(f, y, $bad) FROM pts", extra_params => [ '-U', 'pass_caller' ]);
	like($err, qr/invalid pass descriptor/, "a crafted descriptor ($bad) is refused");
}
my ($r2, $o2, $e2) = $node->psql('postgres', "SELECT _kernel_ml_pass(f, y, NULL) FROM pts",
	extra_params => [ '-U', 'pass_caller' ]);
like($e2, qr/pass descriptor must not be null/, 'a null descriptor is refused');
($r2, $o2, $e2) = $node->psql('postgres', "SELECT _kernel_ml_pass_combine('\\x00'::bytea, '\\x00'::bytea)",
	extra_params => [ '-U', 'pass_caller' ]);
like($e2, qr/can only be called as part of an aggregate/, 'the combine function refuses a direct call');

$node->stop;
done_testing();
