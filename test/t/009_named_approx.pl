# Named approximate models (issue 12): kernel_model_train and
# kernel_model_retrain with an "approximation" run the learner's passes over the
# stored query (the pass aggregate _kernel_ml_pass, issue 28; a scoring aggregate), each of
# which may use a parallel plan.  Checked here: with parallel query forced,
# auto_explain shows every pass as a Partial Aggregate under a Gather whose
# workers were launched, and the model equals the serial one within 1e-10;
# the passes run the stored query as the model's owner in a
# security-restricted operation, in the workers too (a query that reads a
# table the owner cannot read, or tries SET ROLE or a temporary table,
# fails, and stores nothing).
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

my $node = PostgreSQL::Test::Cluster->new('named_approx', install_path => $install);
$node->init;
$node->append_conf('postgresql.conf', qq{
max_worker_processes = 16
max_parallel_workers = 8
});
$node->start;

sub run_sql
{
	my ($sql, $role) = @_;
	my @extra = $role ? ('-U', $role) : ();
	my ($ret, $out, $err) = $node->psql('postgres', $sql, extra_params => \@extra);
	return ($ret, $out, $err);
}

sub sql_ok
{
	my ($sql, $role) = @_;
	my ($ret, $out, $err) = run_sql($sql, $role);
	if ($ret != 0)
	{
		diag("failed: $sql\n$err");
		return "ERROR: $err";
	}
	return $out;
}

# a well-conditioned m x m system: the parallel sums differ from the serial
# ones in rounding only, and so do the models (m = 200, lambda 0.001 here
# differ by 1e-4, m = 50, gamma 0.5 by 2e-10: rounding amplified by the
# conditioning of K_mm; here 2e-13)
my $opts = '{"approximation": "nystrom", "components": 50, "lambda": 1, "gamma": 5}';
# the workers, not the leader, read every row: the sums really are split
my $parallel = q{
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
};
sql_ok(qq{
CREATE EXTENSION kernel_ml;
CREATE TABLE big AS
SELECT i, ARRAY[sin(i * 0.01), cos(i * 0.037), (i % 13) / 13.0]::float8[] AS f,
       2 * sin(i * 0.01) + cos(i * 0.037) + 0.05 * sin(i) AS y
FROM generate_series(1, 40000) i;
ANALYZE big;
});

# serial: no parallel worker
sql_ok(qq{
SET max_parallel_workers_per_gather = 0;
SELECT version FROM kernel_model_train('serial', 'SELECT f, y FROM big', '$opts');
});

# parallel forced, every nested statement's plan sent back as a NOTICE
my ($ret, $out, $err) = run_sql(qq{
LOAD 'auto_explain';
SET auto_explain.log_min_duration = 0;
SET auto_explain.log_nested_statements = on;
SET auto_explain.log_analyze = on;
SET auto_explain.log_level = notice;
$parallel
SELECT version FROM kernel_model_train('parallel', 'SELECT f, y FROM big', '$opts');
});
is($ret, 0, 'parallel named training succeeds') or diag($err);
is($out, '1', 'parallel named training stores version 1');

# split the NOTICEs into one plan per nested statement
my @plans = split /NOTICE:\s+duration:/, $err;
# the learner's passes (basis, statistics, and the scoring's error sums)
# are statements over the pass aggregate (issue 28): the basis and
# statistics for each of the fit and the refit, and the scoring pass
my @learner = grep { $_ =~ qr/\._kernel_ml_pass\(s\.f, s\.y, \$1\)/ } @plans;
cmp_ok(scalar @learner, '>=', 3, 'the basis, statistics and scoring passes were logged as pass aggregates');
is(scalar(grep { $_ =~ qr/\.kernel_predict\(/ } @plans), 0,
	'no statement scores the rows one kernel_predict call at a time');
my %pass;
$pass{"learner's pass $_"} = [ $learner[$_ - 1] ] for 1 .. scalar @learner;
for my $name (sort keys %pass)
{
	my ($plan) = @{ $pass{$name} };
	ok(defined $plan, "the $name was logged") or next;
	like($plan, qr/Partial (Hash|Group)?Aggregate/, "the $name aggregates partially");
	like($plan, qr/Workers Launched: [1-9]/, "the $name launched parallel workers");
	unlike($plan, qr/Workers Launched: 0/, "no Gather of the $name ran without workers");
}

diag('parallel vs serial, largest prediction difference: ', sql_ok(q{
SELECT max(abs(kernel_predict('parallel', f) - kernel_predict('serial', f))) FROM big}));
is(sql_ok(q{
SELECT max(abs(kernel_predict('parallel', f) - kernel_predict('serial', f))) < 1e-10
FROM big}), 't', 'the parallel model equals the serial one within 1e-10');
is(sql_ok(q{
SELECT a.metrics->'holdout_rows' = b.metrics->'holdout_rows'
   AND abs((a.metrics->'holdout'->>'rmse')::float8 - (b.metrics->'holdout'->>'rmse')::float8) < 1e-12
FROM kernel_models a, kernel_models b WHERE a.name = 'serial' AND b.name = 'parallel'}),
	't', 'the parallel passes hold out the same rows and score the same');

# the same model as the two-pass SQL over the training rows
is(sql_ok(qq{
CREATE TABLE ref AS
WITH tr AS (SELECT f, y FROM big WHERE NOT _kernel_ml_holdout(f, y, 0, 0.2))
SELECT kernel_train(f, y, '$opts', (SELECT kernel_basis(f, '$opts') FROM tr)) AS m FROM tr;
SELECT max(abs(kernel_predict(r.m, b.f) - kernel_predict('parallel', b.f))) < 1e-10 FROM ref r, big b;
}), 't', 'the named model equals the two-pass kernel_train over its training rows within 1e-10');

# retrain, parallel too
($ret, $out, $err) = run_sql(qq{
$parallel
SELECT version, deployed FROM kernel_model_retrain('parallel');
});
is($out, '2|f', 'retrain stores version 2, not deployed: the same hold-out RMSE is not lower')
  or diag($err);

# security: a stored query of alice, retrained by the superuser, runs as alice
sql_ok(q{
CREATE ROLE alice LOGIN;
CREATE TABLE secret AS SELECT 1 AS x;
REVOKE ALL ON secret FROM PUBLIC;
GRANT CREATE ON SCHEMA public TO alice;
});
sql_ok(q{
CREATE TABLE alice_data AS SELECT f, y FROM (VALUES
  (ARRAY[0.0, 1.0], 1.0), (ARRAY[1.0, 0.5], 2.0), (ARRAY[2.0, 0.1], 2.5),
  (ARRAY[3.0, 0.7], 1.5), (ARRAY[4.0, 0.2], 0.5), (ARRAY[5.0, 0.9], 1.0),
  (ARRAY[6.0, 0.3], 2.0), (ARRAY[7.0, 0.4], 3.0)) v(f, y);
CREATE FUNCTION alice_f(x float8) RETURNS float8 LANGUAGE plpgsql PARALLEL SAFE
AS $$ BEGIN RETURN x; END $$;
SELECT version FROM kernel_model_train('alice_m', 'SELECT f, alice_f(y) FROM alice_data',
       '{"approximation": "nystrom", "components": 4, "test_fraction": 0.25}');
}, 'alice');
is(sql_ok(q{SELECT count(*) FROM kernel_models WHERE name = 'alice_m'}), '1',
	'alice trained an approximate model');

my %attack = (
	'reads a table alice cannot read' =>
	  [q{PERFORM count(*) FROM secret;}, qr/permission denied for table secret/],
	'tries SET ROLE' =>
	  [q{EXECUTE 'SET ROLE postgres';}, qr/cannot set parameter "role" within security-restricted operation|permission denied to set role/],
	'creates a temporary table' =>
	  [q{CREATE TEMP TABLE IF NOT EXISTS t_evil (x int);}, qr/cannot create temporary table within security-restricted operation/]);
for my $what (sort keys %attack)
{
	my ($body, $expect) = @{ $attack{$what} };
	sql_ok(qq{
CREATE OR REPLACE FUNCTION alice_f(x float8) RETURNS float8 LANGUAGE plpgsql PARALLEL SAFE
AS \$\$ BEGIN $body RETURN x; END \$\$;
}, 'alice');
	for my $in_parallel (0, 1)
	{
		my $set = $in_parallel ? "$parallel\nSET force_parallel_mode = on;" : '';
		my ($r, $o, $e) = run_sql(qq{$set
SELECT version FROM kernel_model_retrain('alice_m');
});
		isnt($r, 0, "superuser retrain: alice's query that $what fails"
			  . ($in_parallel ? ' (parallel)' : ''));
		# in a parallel worker, SET and CREATE are refused even earlier
		like($e, $in_parallel ? qr/$expect|cannot execute (SET|CREATE TABLE) during a parallel operation/ : $expect,
			"... with the expected error" . ($in_parallel ? ' (parallel)' : ''));
	}
}
is(sql_ok(q{SELECT count(*) FROM kernel_models WHERE name = 'alice_m'}), '1',
	'no version was stored by the failed retrains');

$node->stop;
done_testing();
