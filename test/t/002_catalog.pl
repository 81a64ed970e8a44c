# Named models across sessions and roles: concurrent training of one name,
# ownership with two non-superuser roles, failed trainings that leave the
# catalog as it was, a running statement that keeps its version while
# another session deploys, and pg_dump / restore giving identical
# predictions.
#
# Uses PostgreSQL::Test::Cluster (its own cluster) and the installed
# extension; run it with test/tap.sh.
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

my $db = "kml_catalog_$$";
my $db2 = "kml_catalog_restore_$$";
my $db3 = "kml_catalog_data_$$";
my $alice = "kml_alice_$$";
my $bob = "kml_bob_$$";
my $dumpfile = "$PostgreSQL::Test::Utils::tmp_check/kml_catalog.dump";

my $bindir = `pg_config --bindir`;
chomp $bindir;
(my $install = $bindir) =~ s{/bin$}{};

my $node = PostgreSQL::Test::Cluster->new('catalog', install_path => $install);
$node->init;
$node->append_conf('postgresql.conf', "max_worker_processes = 16\nmax_parallel_workers = 8\n");
$node->start;

# Start a psql session in the background (-X -q -At, not stopping at
# errors) that runs the SQL commands in database $d, one -c each; return a
# handle whose output (stdout and stderr together) finish() collects.
sub start_psql
{
	my ($d, @sql) = @_;
	my $out = '';
	my $h = IPC::Run::start(
		[ 'psql', '-X', '-q', '-At', '-v', 'ON_ERROR_STOP=0', '-d', $node->connstr($d),
			map { ('-c', $_) } @sql ],
		'<', \undef, '>&', \$out);
	return { h => $h, out => \$out, start => time() };
}

sub finish
{
	my ($h) = @_;
	$h->{h}->finish;
	my $rc = $? >> 8;
	my $out = ${ $h->{out} };
	chomp $out;
	return ($out, $rc, time() - $h->{start});
}

# Run SQL statements in one session in database $d, not stopping at
# errors; return (stdout and stderr joined, exit code, seconds).
sub psql
{
	my ($d, @sql) = @_;
	my $start = time();
	my ($rc, $stdout, $stderr) =
	  $node->psql($d, join(";\n", @sql) . ";\n", on_error_stop => 0);
	my $out = join("\n", grep { $_ ne '' } ($stdout, $stderr));
	return ($out, $rc, time() - $start);
}

# Run SQL in database $d; die on error (setup steps).
sub psql_ok
{
	my ($d, @sql) = @_;
	return $node->safe_psql($d, join(";\n", @sql) . ";\n");
}

# One query's single value (or rows joined by newlines) in $db.
sub value { my ($sql, $d) = @_; return psql_ok($d // $db, $sql); }

# Run SQL as a role (SET ROLE from the superuser session: every check in
# kernel_ml uses the current user, as for a role that logged in).
sub as_role
{
	my ($role, @sql) = @_;
	return psql($db, "SET ROLE $role", @sql);
}

# pg_restore the dump into database $d; return (its output, exit code).
sub restore
{
	my ($d) = @_;
	my $out = '';
	IPC::Run::run([ 'pg_restore', '-d', $node->connstr($d), $dumpfile ], '<', \undef, '>&', \$out);
	my $rc = $? >> 8;
	chomp $out;
	return ($out, $rc);
}

# A fingerprint of the whole catalog.
my $catalog_state = "SELECT coalesce(string_agg(name || ':' || version || ':' || deployed || ':' || md5(model), ',' ORDER BY name, version), 'empty') FROM kernel_models";

psql_ok('postgres', "DROP DATABASE IF EXISTS $db", "DROP DATABASE IF EXISTS $db2",
	"DROP DATABASE IF EXISTS $db3", "CREATE DATABASE $db",
	"DROP ROLE IF EXISTS $alice", "DROP ROLE IF EXISTS $bob",
	"CREATE ROLE $alice", "CREATE ROLE $bob");
psql_ok($db, 'CREATE EXTENSION kernel_ml',
	'CREATE TABLE houses AS SELECT i AS id, '
	  . 'ARRAY[sin(i), cos(0.7 * i), (i % 7) / 7.0]::float8[] AS f, '
	  . '2 * sin(i) + cos(0.7 * i) * (i % 7) / 7.0 AS y FROM generate_series(1, 400) i',
	"GRANT SELECT ON houses TO $alice, $bob");
pass('created a database, the extension, a table and two roles');

# ---- ownership ------------------------------------------------------------
my ($out, $rc) = as_role($alice,
	q{SELECT version, deployed FROM kernel_model_train('shared', 'SELECT f, y FROM houses', '{"lambda": 0.01}')});
is($out, '1|t', 'alice trains "shared" version 1') or diag($out);
is(value("SELECT owner FROM kernel_models WHERE name = 'shared'"), $alice,
	'the name belongs to alice');
my $before = value($catalog_state);

for my $case (
	[ 'retrain', q{SELECT * FROM kernel_model_retrain('shared')} ],
	[ 'overwrite', q{SELECT * FROM kernel_model_train('shared', 'SELECT f, y FROM houses', '{"deploy": "always"}')} ],
	[ 'deploy', q{SELECT kernel_model_deploy('shared', 1)} ],
	[ 'drop a version of', q{SELECT kernel_model_drop('shared', 1)} ],
	[ 'drop', q{SELECT kernel_model_drop('shared')} ])
{
	($out) = as_role($bob, $case->[1]);
	like($out, qr/ERROR:  permission denied for model "shared"/, "bob cannot $case->[0] alice's model")
	  or diag($out);
}
($out) = as_role($bob, q{SELECT kernel_predict('shared', ARRAY[0.1, 0.2, 0.3])});
like($out, qr/permission denied for model "shared"/, 'bob cannot score with it before a grant') or diag($out);
($out) = as_role($bob, q{SELECT count(*) FROM kernel_models});
like($out, qr/permission denied for table kernel_models/, 'bob cannot read the table') or diag($out);
($out) = as_role($bob,
	q{INSERT INTO kernel_models (name, version, owner, source_query, model, metrics, n_train, n_features) SELECT 'shared', 9, current_user::regrole, '', '\x', '{}', 1, 1});
like($out, qr/permission denied for table kernel_models/, 'bob cannot write the table directly') or diag($out);
($out) = as_role($bob, q{SELECT count(*) FROM kernel_models_overview});
is($out, '0', 'the overview shows bob nothing of alice') or diag($out);
is(value($catalog_state), $before, 'the catalog is unchanged');

psql_ok($db, "GRANT SELECT ON kernel_models TO $bob");
my $expected = value(q{SET extra_float_digits = 3; SELECT kernel_predict('shared', f) FROM houses ORDER BY id});
($out) = as_role($bob, 'SET extra_float_digits = 3', q{SELECT kernel_predict('shared', f) FROM houses ORDER BY id});
is($out, $expected, 'after GRANT SELECT ON kernel_models, bob scores with alice\'s model');
($out) = as_role($bob, q{SELECT kernel_model_deploy('shared', 1)});
like($out, qr/permission denied for model "shared"/, 'but still cannot deploy it') or diag($out);
($out) = as_role($bob, q{SELECT name, owner FROM kernel_models_overview});
is($out, "shared|$alice", 'and sees it in the overview') or diag($out);

($out) = as_role($bob,
	q{SELECT version FROM kernel_model_train('bobs', 'SELECT f, y FROM houses WHERE id % 2 = 0')});
is($out, '1', 'bob trains a model of his own') or diag($out);
($out) = as_role($alice, q{SELECT kernel_model_drop('bobs')});
like($out, qr/permission denied for model "bobs"/, 'alice cannot drop bob\'s model') or diag($out);
($out) = as_role($alice, q{SELECT kernel_predict('bobs', ARRAY[0.1, 0.2, 0.3]) IS NOT NULL});
like($out, qr/permission denied for model "bobs"/, 'nor score with it without a grant') or diag($out);
($out) = as_role($alice, q{SELECT version, deployed FROM kernel_model_retrain('shared')},
	q{SELECT kernel_model_deploy('shared', 1)}, q{SELECT kernel_model_drop('shared', 2)});
is($out, "2|f\n\n1", 'alice retrains, deploys and drops her own') or diag($out);

# A retraining runs the stored query as the model's owner: a superuser's
# scheduled job does not run alice's query with superuser rights.
($out) = as_role($alice,
	qq{SELECT version FROM kernel_model_train('whoami', 'SELECT f, y FROM houses WHERE current_user = ''$alice''')});
is($out, '1', 'alice trains a model whose query sees rows only as alice') or diag($out);
($out) = psql($db, q{SELECT version FROM kernel_model_retrain('whoami')});
is($out, '2', 'the superuser retrains it: the query ran as alice') or diag($out);
($out) = psql($db,
	qq{SELECT count(*) FROM kernel_model_train('whoami2', 'SELECT f, y FROM houses WHERE current_user = ''$alice''')});
like($out, qr/no usable rows/, 'while a query given to kernel_model_train runs as the caller') or diag($out);

# ---- concurrent training of one name ---------------------------------------
# Session A trains and holds its transaction open; B trains the same name
# meanwhile and must wait for A's commit, then take the next version.
my $train_conc = q{SELECT version FROM kernel_model_train('conc', 'SELECT f, y FROM houses', '{"deploy": "always"}')};
my $sa = start_psql($db, 'BEGIN', $train_conc, 'SELECT pg_sleep(2)', 'COMMIT');
sleep(0.7);
my $sb = start_psql($db, $train_conc);
my ($out_a) = finish($sa);
my ($out_b, $rc_b, $time_b) = finish($sb);
unlike("$out_a\n$out_b", qr/ERROR/, 'two concurrent trainings of one name both succeed')
  or diag("A: $out_a\nB: $out_b");
my ($va) = $out_a =~ /^(\d+)$/m;
is_deeply([ sort ($va // 0, $out_b) ], [ 1, 2 ], 'with versions 1 and 2')
  or diag("A: $out_a\nB: $out_b");
cmp_ok($time_b, '>', 0.8, sprintf('the second waited for the first to commit (%.2f s)', $time_b));

# four at once, with no explicit transaction
my @h = map { start_psql($db, $train_conc) } 1 .. 4;
my @versions = map { my ($o) = finish($_); $o } @h;
is_deeply([ sort { $a <=> $b } @versions ], [ 3, 4, 5, 6 ], 'four more at once get versions 3 to 6')
  or diag(join("\n", @versions));
is(value(q{SELECT count(*) FROM kernel_models WHERE name = 'conc' AND deployed}), '1',
	'and exactly one version is deployed');

# ---- failed trainings leave the catalog as it was -------------------------
psql_ok($db, q{SELECT kernel_model_deploy('conc', 2)},
	'SELECT setseed(0.25)',
	'CREATE TABLE big AS SELECT i AS id, ARRAY(SELECT random() FROM generate_series(1, 20) WHERE i > 0) AS f, random() AS y FROM generate_series(1, 6000) i');
$before = value($catalog_state);
my @failures = (
	[ 'a bad query', q{SELECT * FROM kernel_model_train('conc', 'SELECT f, y / (id - 200) * 0 / 0 FROM houses')}, qr/division by zero/ ],
	[ 'bad rows', q{SELECT * FROM kernel_model_train('conc', 'SELECT f, CASE WHEN id = 300 THEN ''Infinity'' ELSE y END FROM houses')}, qr/target values must be finite/ ],
	[ 'a new name and bad rows', q{SELECT * FROM kernel_model_train('fresh', 'SELECT CASE WHEN id = 9 THEN ARRAY[1.0] ELSE f END, y FROM houses')}, qr/same length/ ],
	[ 'a cancel', q{SET statement_timeout = '300ms'; SELECT * FROM kernel_model_train('conc', 'SELECT f, y FROM big', '{"deploy": "always"}')}, qr/canceling statement due to statement timeout/ ],
);
for my $f (@failures)
{
	($out) = psql($db, $f->[1]);
	like($out, $f->[2], "training fails on $f->[0]") or diag($out);
	is(value($catalog_state), $before, "and leaves the catalog and the deployed version as they were");
}

# ---- a running statement keeps the version it started with ----------------
psql_ok($db,
	q{SELECT version FROM kernel_model_train('live', 'SELECT f, y FROM houses', '{"lambda": 0.01, "deploy": "always"}')},
	q{SELECT version FROM kernel_model_train('live', 'SELECT f, -y FROM houses', '{"lambda": 1, "deploy": "never"}')});
my $v1 = value(q{SET extra_float_digits = 3; SELECT string_agg(kernel_predict(model, f)::text, ',' ORDER BY id) FROM houses, kernel_models WHERE id <= 200 AND name = 'live' AND version = 1});
my $v2 = value(q{SET extra_float_digits = 3; SELECT string_agg(kernel_predict(model, f)::text, ',' ORDER BY id) FROM houses, kernel_models WHERE id <= 200 AND name = 'live' AND version = 2});
isnt($v1, $v2, 'versions 1 and 2 of "live" predict differently');
# 200 rows at 10 ms each: the deployment below lands in the middle
my $scoring = q{SELECT string_agg(p::text, ',' ORDER BY id) FROM (SELECT id, kernel_predict('live', f) AS p FROM houses WHERE id <= 200 AND pg_sleep(0.01) IS NOT NULL) s};
my $long = start_psql($db, 'SET extra_float_digits = 3', $scoring, $scoring);
sleep(0.8);
($out, $rc) = psql($db, q{SELECT kernel_model_deploy('live', 2)});
is($rc, 0, 'another session deploys version 2 while the statement runs') or diag($out);
($out) = finish($long);
my @results = split /\n/, $out;
is(scalar(@results), 2, 'the scoring session ran two statements') or diag($out);
ok(defined $results[0] && $results[0] eq $v1, 'the running statement finished with version 1');
ok(defined $results[1] && $results[1] eq $v2, 'the next statement used version 2');

# ---- pg_dump and restore give identical predictions ----------------------
my $scores = q{SET extra_float_digits = 3; SELECT string_agg(name || ':' || kernel_predict(name, f)::text, ',' ORDER BY name, id) FROM houses, (SELECT DISTINCT name FROM kernel_models) n};
my $orig = value($scores);
IPC::Run::run([ 'pg_dump', '-Fc', '-d', $node->connstr($db), '-f', $dumpfile ]) or die 'pg_dump failed';
psql_ok('postgres', "CREATE DATABASE $db2");
($out, $rc) = restore($db2);
is($rc, 0, 'pg_restore into a fresh database succeeds') or diag($out);
is(value($catalog_state, $db2), value($catalog_state), 'the restored catalog has the same versions, deployments and models');
is(value($scores, $db2), $orig, 'and every model predicts identically');
is(value(q{SELECT owner FROM kernel_models WHERE name = 'shared' LIMIT 1}, $db2), $alice, 'ownership survives');
($out) = psql($db2, "SET ROLE $bob", q{SELECT kernel_model_drop('shared')});
like($out, qr/permission denied for model "shared"/, 'and is enforced after the restore') or diag($out);
($out) = psql($db2, q{SELECT version, deployed FROM kernel_model_train('conc', 'SELECT f, y FROM houses', '{"deploy": "never"}')});
is($out, '7|f', 'training continues with the next version after the restore') or diag($out);

# the other way: CREATE EXTENSION first in a fresh database, then the dump
psql_ok('postgres', "CREATE DATABASE $db3");
psql_ok($db3, 'CREATE EXTENSION kernel_ml');
($out, $rc) = restore($db3);
is($rc, 0, 'the dump also restores into a database where CREATE EXTENSION was run first') or diag($out);
is(value($scores, $db3), $orig, 'and predicts identically too');

psql_ok('postgres', "DROP DATABASE $db", "DROP DATABASE $db2", "DROP DATABASE $db3",
	"DROP ROLE $alice", "DROP ROLE $bob");
unlink $dumpfile;
pass('cleaned up');

$node->stop;
done_testing();
