# The Citus stage (issue 33): a coordinator and two workers on loopback,
# with Citus built from ../shared/citus/ by tools/build-citus.sh (test/run.sh
# builds and installs it first, cached per machine).  Skipped, saying so,
# where the server has no citus.so.
#
# What holds today, each checked with citus.coordinator_aggregation_strategy
# = 'disabled' (a pass that would gather rows on the coordinator is then an
# error, not a slow success) and citus.log_remote_commands (no worker runs a
# plain SELECT of the features of a shard):
# - kernel_basis and the 4-argument kernel_train(f, y, options, basis) for
#   ridge are pushed down to the shards (worker_partial_agg) and equal the
#   same aggregates over a local copy of the table;
# - named approximate ridge trains on a distributed table with every pass
#   pushed down and predicts as the same training on the local copy;
# - a pass's descriptor over 1 kB reaches the workers once per statement as
#   an intermediate result, the shard statements carry a short descriptor
#   (under 1 kB), also in a superuser's retrain of another role's model; a
#   short descriptor is checked as untrusted input;
# - a named model scores a distributed table through its bytes
#   ((SELECT kernel_model_get(name)));
# - scoring by name (kernel_predict, kernel_predict_class, kernel_predict_proba)
#   in a SELECT and an UPDATE over the distributed table, over several shards
#   or one, equals scoring the local copy by name, exactly; a deploy between
#   two executions of a prepared statement (generic plan) is seen by the
#   next; a role that may not read the model is refused as on one node; a
#   name that is not a constant is refused by the workers with a hint; on a
#   node without kernel_ml preloaded, the first such statement of a session
#   is refused with that reason.
# What does not hold yet is listed as TODO: each becomes a plain check as
# the 0.4.0 pass aggregate lands.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $libdir = `pg_config --pkglibdir`;
chomp $libdir;
plan skip_all => "Citus stage SKIPPED: no citus.so in $libdir (tools/build-citus.sh builds it from ../shared/citus/)"
	unless -e "$libdir/citus.so";

my @nodes;
for my $name (qw(coordinator worker1 worker2))
{
	my $node = PostgreSQL::Test::Cluster->new($name);
	# kernel_ml's planner hook must see a statement before Citus plans it
	my $preload = $name eq 'coordinator' ? 'citus,kernel_ml' : 'citus';
	$node->init;
	$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = '$preload'
listen_addresses = '127.0.0.1'
max_worker_processes = 16
max_connections = 100
citus.shard_replication_factor = 1
});
	$node->append_conf('pg_hba.conf', "host all all 127.0.0.1/32 trust\n");
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION citus; CREATE EXTENSION kernel_ml;');
	push @nodes, $node;
}
my ($coord, @workers) = @nodes;
$coord->safe_psql('postgres', "SELECT citus_set_coordinator_host('127.0.0.1', " . $coord->port . ')');
$coord->safe_psql('postgres', "SELECT citus_add_node('127.0.0.1', " . $_->port . ')') for @workers;
is($coord->safe_psql('postgres', 'SELECT count(*) FROM citus_get_active_worker_nodes()'), '2',
	'a coordinator and two workers on loopback');

# The same rows in a distributed table (4 shards) and in a local one.
$coord->safe_psql('postgres', q{
SET citus.shard_count = 4;
CREATE TABLE local_data AS
SELECT i AS id,
       ARRAY[sin(i), cos(0.3 * i), (i % 11) / 11.0]::float8[] AS f,
       sin(i) * cos(0.3 * i) + 0.1 * ((i * 7919) % 13 - 6) / 6.0 AS y
FROM generate_series(1, 4000) i;
CREATE TABLE data (LIKE local_data);
SELECT create_distributed_table('data', 'id');
INSERT INTO data SELECT * FROM local_data;
CREATE TABLE probe AS SELECT i AS id, ARRAY[sin(i + 0.5), cos(0.3 * i + 0.2), (i % 7) / 7.0]::float8[] AS f
FROM generate_series(1, 50) i;
});
is($coord->safe_psql('postgres', q{SELECT count(*) FROM pg_dist_shard WHERE logicalrelid = 'data'::regclass}),
	'4', 'the table has 4 shards');

# Runs $sql on the coordinator with remote commands logged at NOTICE and
# coordinator aggregation disabled; returns (stdout, stderr).
sub distributed
{
	my ($sql) = @_;
	my ($out, $err) = ('', '');
	$coord->psql('postgres', qq{
SET citus.log_remote_commands = on;
SET citus.coordinator_aggregation_strategy = 'disabled';
SET client_min_messages = notice;
$sql},
		stdout => \$out, stderr => \$err, on_error_stop => 1);
	return ($out, $err);
}
# a worker ran a plain SELECT of a shard's rows (a pushed-down aggregate reads
# its shard in a subquery inside worker_partial_agg)
sub gathers_rows
{
	my ($log) = @_;
	# a statement that returns the shard's rows (not a partial aggregate,
	# not the one-row length probe of a named training)
	return $log =~ /issuing SELECT (?:(?!worker_partial_agg|\bsum\(|\bcount\().)*\bFROM\s+public\.data_\d+(?![^\n]*LIMIT '1')/i;
}
my $opts_n = q{'{"approximation": "nystrom", "components": 60, "seed": 3, "lambda": 0.01}'::jsonb};
my $opts_r = q{'{"approximation": "rff", "components": 60, "seed": 3, "lambda": 0.01}'::jsonb};

for my $case ([ nystrom => $opts_n ], [ rff => $opts_r ])
{
	my ($what, $opts) = @$case;
	my ($out, $err) = distributed(qq{
CREATE TABLE basis_$what AS SELECT kernel_basis(f, $opts) AS b FROM data;
CREATE TABLE local_basis_$what AS SELECT kernel_basis(f, $opts) AS b FROM local_data;
SELECT length(d.b) = length(l.b) FROM basis_$what d, local_basis_$what l;});
	is($out, 't', "$what: kernel_basis over the distributed table has the local one's shape");
	like($err, qr/worker_partial_agg/, "$what: kernel_basis runs as partial aggregates on the shards");
	ok(!gathers_rows($err), "$what: kernel_basis ships no rows to the coordinator");

	($out, $err) = distributed(qq{
CREATE TABLE model_$what AS
SELECT kernel_train(f, y, $opts, (SELECT b FROM basis_$what)) AS m FROM data;
CREATE TABLE local_model_$what AS
SELECT kernel_train(f, y, $opts, (SELECT b FROM local_basis_$what)) AS m FROM local_data;
SELECT max(abs(kernel_predict(d.m, p.f) - kernel_predict(l.m, p.f))) / max(abs(kernel_predict(l.m, p.f))) < 1e-6
FROM probe p, model_$what d, local_model_$what l;});
	is($out, 't', "$what ridge: basis and model over the distributed table predict as over the local one (1e-6 of the scale)");
	like($err, qr/worker_partial_agg/, "$what ridge with a basis runs as partial aggregates");
	ok(!gathers_rows($err), "$what ridge with a basis ships no rows")
		or diag(join("\n", grep { /issuing/ } split /\n/, $err));
}

# Named approximate ridge: every pass of its training as a statement over the
# distributed table.
my ($out, $err) = distributed(q{
SELECT version FROM kernel_model_train('dist_n', 'SELECT f, y FROM data',
  '{"approximation": "nystrom", "components": 60, "seed": 3, "lambda": 0.01, "deploy": "always"}');
SELECT version FROM kernel_model_train('local_n', 'SELECT f, y FROM local_data',
  '{"approximation": "nystrom", "components": 60, "seed": 3, "lambda": 0.01, "deploy": "always"}');
SELECT max(abs(kernel_predict('dist_n', f) - kernel_predict('local_n', f)))
       / max(abs(kernel_predict('local_n', f))) FROM probe;});
like($out, qr/^1\n1\n/, 'named nystrom ridge trains on a distributed table and on its local copy');
$out =~ s/^1\n1\n//;
cmp_ok($out, '<', 1e-6, 'named nystrom ridge on a distributed table predicts as on the local copy (1e-6 of the scale)');
ok(!gathers_rows($err), 'named nystrom ridge: no pass ships rows to the coordinator')
	or diag(join("\n", grep { /SELECT/ } split /\n/, $err));

# The pass's point is not a per-row argument (issue 33 point 3): a
# descriptor over 1 kB (nystrom's statistics pass carries the basis) goes to
# the workers once per statement as an intermediate result, and the shard
# statements carry only its short form (Citus copies the aggregate's
# arguments into a record for every row).
my @pass_stmts = grep { /issuing SELECT pg_catalog\.worker_partial_agg\('public\._kernel_ml_pass/ } split /\n/, $err;
cmp_ok(scalar @pass_stmts, '>=', 8, 'named nystrom ridge: its passes run as the pass aggregate on the 4 shards');
my @long = grep { length($_) >= 1024 } @pass_stmts;
is(scalar @long, 0, 'named nystrom ridge: no shard statement carries the full descriptor (each under 1 kB)')
	or diag(substr($long[0], 0, 300) . '... (' . length($long[0]) . ' characters)');
like($err, qr/issuing COPY "?kernel_ml_pass_[0-9a-f]{16}_\d+"? FROM STDIN/,
	'named nystrom ridge: the statistics pass\'s descriptor is sent to the workers once, as an intermediate result');

# A short descriptor is untrusted input, as a full one: its name is checked,
# and one that names no intermediate result of the transaction is refused.
sub short_desc
{
	my ($name, $key) = @_;
	return '\x' . unpack('H*', pack('L< S< S< L< Q< Q< a64', 0x52504d4b, 1, 2, 0x01020304, $key, 2000, $name));
}
my ($o, $e) = ('', '');
$coord->psql('postgres', "SELECT _kernel_ml_pass(f, y, '" . short_desc('../x', 1) . "'::bytea) FROM local_data",
	stdout => \$o, stderr => \$e);
like($e, qr/ERROR:  invalid pass descriptor\nDETAIL:  The short descriptor's intermediate result name is empty, unterminated or not of \[a-z0-9_\]/,
	'a short descriptor with a name not of [a-z0-9_] is refused');
$coord->psql('postgres', "SELECT _kernel_ml_pass(f, y, '" . short_desc('kernel_ml_pass_nothing', 7) . "'::bytea) FROM data",
	stdout => \$o, stderr => \$e);
like($e, qr/ERROR:  pass descriptor "kernel_ml_pass_nothing" was not found\nDETAIL:  Its intermediate result does not hold one descriptor\./,
	'a short descriptor naming no intermediate result is refused on the shards');

# kernel_model_retrain by a superuser runs the stored query as the model's
# owner: the descriptor is sent as that role (Citus keeps intermediate
# results per role), so the owner's shard statements find it.
$coord->safe_psql('postgres', q{CREATE ROLE trainer LOGIN; GRANT SELECT ON data, probe TO trainer;});
($o, $e) = ('', '');
$coord->psql('postgres', q{SET ROLE trainer;
SELECT version FROM kernel_model_train('owned_n', 'SELECT f, y FROM data',
  '{"approximation": "nystrom", "components": 60, "seed": 3, "lambda": 0.01, "deploy": "always"}');
RESET ROLE;
SET citus.log_remote_commands = on;
SET client_min_messages = notice;
SELECT version FROM kernel_model_retrain('owned_n');
SELECT max(abs(kernel_predict('owned_n', f) - kernel_predict('local_n', f)))
       / max(abs(kernel_predict('local_n', f))) < 1e-6 FROM probe;},
	stdout => \$o, stderr => \$e);
is($o, "1\n2\nt", 'a nystrom model trained by its owner and retrained by a superuser on the distributed table predicts as the local copy')
	or diag($e =~ /(ERROR:.*)/s);
like($e, qr/issuing COPY "?kernel_ml_pass_[0-9a-f]{16}_\d+"? FROM STDIN[^\n]*\nDETAIL:  on server trainer@/,
	'the retrain sends the descriptor as the model\'s owner');

# Every pass of the learner pushed down (issues 28, 33): a named rff svr, a
# named nystrom logistic with a k-fold grid and kernel_train_query run each
# pass as the pass aggregate on the shards (worker_partial_agg of
# _kernel_ml_pass), the host's counting statement too, and a classifier's
# scoring (its confusion, log-loss and exact AUC by passes, issue 33); no
# statement returns a shard's rows; the models and their stored scores
# equal those of the local copy.
($out, $err) = distributed(q{
SELECT version FROM kernel_model_train('dist_svr', 'SELECT f, y FROM data',
  '{"method": "svr", "approximation": "rff", "components": 40, "seed": 3, "lambda": 0.001, "deploy": "always"}');
SELECT version FROM kernel_model_train('local_svr', 'SELECT f, y FROM local_data',
  '{"method": "svr", "approximation": "rff", "components": 40, "seed": 3, "lambda": 0.001, "deploy": "always"}');
SELECT max(abs(kernel_predict('dist_svr', f) - kernel_predict('local_svr', f))) < 1e-9 FROM probe;});
like($out, qr/^1\n1\nt$/, 'named rff svr on a distributed table equals the local copy within 1e-9');
like($err, qr/worker_partial_agg\('public\._kernel_ml_pass\(double precision\[\],double precision,bytea\)'/,
	'named rff svr: its passes run as the pass aggregate on the shards');
ok(!gathers_rows($err), 'named rff svr: no statement returns a shard\'s rows')
	or diag(join("\n", grep { /issuing SELECT/ && !/worker_partial_agg/ } split /\n/, $err));

($out, $err) = distributed(q{
SELECT version FROM kernel_model_train('dist_lg', 'SELECT f, CASE WHEN y > 0 THEN ''a'' ELSE ''b'' END FROM data',
  '{"method": "logistic", "approximation": "nystrom", "components": 30, "seed": 3, "lambda": [0.001, 0.01], "cv": 3, "deploy": "always"}');
SELECT version FROM kernel_model_train('local_lg', 'SELECT f, CASE WHEN y > 0 THEN ''a'' ELSE ''b'' END FROM local_data',
  '{"method": "logistic", "approximation": "nystrom", "components": 30, "seed": 3, "lambda": [0.001, 0.01], "cv": 3, "deploy": "always"}');
SELECT max(abs((kernel_predict_proba('dist_lg', f)->>'a')::float8 - (kernel_predict_proba('local_lg', f)->>'a')::float8)) < 1e-9 FROM probe;});
like($out, qr/^1\n1\nt$/, 'named nystrom logistic (k-fold grid) on a distributed table equals the local copy within 1e-9');
my @passes = grep { /issuing SELECT pg_catalog\.worker_partial_agg\('public\._kernel_ml_pass/ } split /\n/, $err;
cmp_ok(scalar @passes, '>=', 4 * 20, 'named nystrom logistic: basis, folds, Newton steps and held-out losses on the 4 shards');
ok(!gathers_rows($err), 'named nystrom logistic: no statement returns a shard\'s rows, its scoring\'s neither')
	or diag(join("\n", grep { gathers_rows($_) } split /\n/, $err));
like($err, qr/worker_partial_agg\('public\._kernel_ml_pass\(double precision\[\],text,bytea\)'/,
	'named nystrom logistic: its scoring passes run as the pass aggregate on the shards');
my $same_scores = q{
SELECT d.metrics->'holdout'->'confusion' = l.metrics->'holdout'->'confusion'
   AND d.metrics->'train'->'confusion' = l.metrics->'train'->'confusion'
   AND abs((d.metrics->'holdout'->>'auc')::float8 - (l.metrics->'holdout'->>'auc')::float8) < 1e-9
   AND abs((d.metrics->'train'->>'auc')::float8 - (l.metrics->'train'->>'auc')::float8) < 1e-9
   AND abs((d.metrics->'holdout'->>'log_loss')::float8 - (l.metrics->'holdout'->>'log_loss')::float8) < 1e-9
FROM kernel_models d, kernel_models l WHERE d.name = '%s' AND l.name = '%s'};
is($coord->safe_psql('postgres', sprintf($same_scores, 'dist_lg', 'local_lg')), 't',
	'named nystrom logistic: the stored confusion, AUC and log-loss equal the local copy\'s');

# named rff ridge and an svm with a grid: the same on the shards as locally
($out, $err) = distributed(q{
SELECT version FROM kernel_model_train('dist_rr', 'SELECT f, y FROM data',
  '{"approximation": "rff", "components": 60, "seed": 3, "lambda": 0.01, "deploy": "always"}');
SELECT version FROM kernel_model_train('local_rr', 'SELECT f, y FROM local_data',
  '{"approximation": "rff", "components": 60, "seed": 3, "lambda": 0.01, "deploy": "always"}');
SELECT max(abs(kernel_predict('dist_rr', f) - kernel_predict('local_rr', f)))
       <= 1e-10 * max(abs(kernel_predict('local_rr', f))) FROM probe;});
like($out, qr/^1\n1\nt$/, 'named rff ridge on a distributed table equals the local copy within 1e-10 of the scale');
ok(!gathers_rows($err), 'named rff ridge: no statement returns a shard\'s rows')
	or diag(join("\n", grep { /issuing SELECT/ && !/worker_partial_agg/ } split /\n/, $err));
($out, $err) = distributed(q{
SELECT version FROM kernel_model_train('dist_svm', 'SELECT f, CASE WHEN y > 0 THEN ''a'' ELSE ''b'' END FROM data',
  '{"method": "svm", "approximation": "rff", "components": 40, "seed": 3, "lambda": [0.001, 0.01], "cv": 3, "deploy": "always"}');
SELECT version FROM kernel_model_train('local_svm', 'SELECT f, CASE WHEN y > 0 THEN ''a'' ELSE ''b'' END FROM local_data',
  '{"method": "svm", "approximation": "rff", "components": 40, "seed": 3, "lambda": [0.001, 0.01], "cv": 3, "deploy": "always"}');
SELECT count(*) FILTER (WHERE kernel_predict_class('dist_svm', f) IS DISTINCT FROM kernel_predict_class('local_svm', f)) FROM probe;});
like($out, qr/^1\n1\n0$/, 'named rff svm (k-fold grid) on a distributed table classifies the probe rows as the local copy');
ok(!gathers_rows($err), 'named rff svm: no statement returns a shard\'s rows, its scoring\'s neither')
	or diag(join("\n", grep { gathers_rows($_) } split /\n/, $err));

($out, $err) = distributed(q{
SELECT max(abs(kernel_predict(kernel_train_query('SELECT f, y FROM data', '{"approximation": "nystrom", "components": 60, "seed": 3, "lambda": 0.01}'), f)
             - kernel_predict((SELECT kernel_train(f, y, '{"approximation": "nystrom", "components": 60, "seed": 3, "lambda": 0.01}') FROM local_data), f)))
       < 1e-6 FROM probe;});
is($out, 't', 'kernel_train_query over a distributed table equals kernel_train over the local copy');
ok(!gathers_rows($err), 'kernel_train_query: no statement returns a shard\'s rows')
	or diag(join("\n", grep { /issuing SELECT/ && !/worker_partial_agg/ } split /\n/, $err));

# Scoring a distributed table by a named model's bytes.
is($coord->safe_psql('postgres', q{
SELECT count(*) = 4000 AND bool_and(p IS NOT NULL)
FROM (SELECT kernel_predict((SELECT kernel_model_get('dist_n')), f) AS p FROM data) s}),
	't', 'a distributed table is scored by a named model through its bytes');

# Scoring by name on the distributed table (issue 33, point 4): the same
# rows scored by name on the local copy are the reference, to the last bit.
$coord->safe_psql('postgres', q{
SELECT version FROM kernel_model_train('cls',
  'SELECT f, CASE WHEN y > 0 THEN ''a'' ELSE ''b'' END FROM local_data WHERE id <= 400',
  '{"method": "logistic", "gamma": 1, "lambda": 0.01, "deploy": "always"}');
CREATE TABLE local_scores AS
SELECT id, kernel_predict('dist_n', f) AS p, kernel_predict_class('cls', f) AS c,
       kernel_predict_proba('cls', f) AS pr, kernel_predict_proba('cls', f, 'a') AS pa
FROM local_data;});
# a worker must never look a model up, nor ship rows back to be scored
sub by_name_stays_on_coordinator
{
	my ($log) = @_;
	return $log !~ /issuing [^\n]*kernel_model_get\(/ && $log !~ /issuing [^\n]*kernel_predict(?:_class|_proba)?\('/;
}
my $same = q{SELECT count(*) FROM local_scores l JOIN dist_scores d USING (id)
WHERE d.p = l.p AND d.c = l.c AND d.pr = l.pr AND d.pa = l.pa};

($out, $err) = distributed(q{
CREATE TABLE dist_scores AS
SELECT id, kernel_predict('dist_n', f) AS p, kernel_predict_class('cls', f) AS c,
       kernel_predict_proba('cls', f) AS pr, kernel_predict_proba('cls', f, 'a') AS pa
FROM data;
SELECT count(*) FROM dist_scores;});
is($out, '4000', 'kernel_predict, kernel_predict_class and kernel_predict_proba by name in a SELECT over a distributed table');
ok(by_name_stays_on_coordinator($err) && $err =~ /issuing SELECT [^\n]*kernel_predict\(\(SELECT intermediate_result/,
	'the workers score with the model\'s bytes, and none looks the model up')
	or diag(join("\n", grep { /issuing/ } split /\n/, $err));
is($coord->safe_psql('postgres', $same), '4000', 'SELECT by name on the shards equals the local copy by name, exactly');

($out, $err) = distributed(q{
ALTER TABLE data ADD COLUMN p float8, ADD COLUMN c text, ADD COLUMN pr jsonb, ADD COLUMN pa float8;
UPDATE data SET p = kernel_predict('dist_n', f), c = kernel_predict_class('cls', f),
                pr = kernel_predict_proba('cls', f), pa = kernel_predict_proba('cls', f, 'a');
DROP TABLE dist_scores;
CREATE TABLE dist_scores AS SELECT id, p, c, pr, pa FROM data;});
ok(by_name_stays_on_coordinator($err), 'UPDATE by name on a distributed table runs on the shards with the model\'s bytes')
	or diag($err);
is($coord->safe_psql('postgres', $same), '4000', 'UPDATE by name on the shards equals the local copy by name, exactly');

($out, $err) = distributed(q{
SELECT kernel_predict('dist_n', f) = (SELECT p FROM local_scores WHERE id = 7)
   AND kernel_predict_class('cls', f) = (SELECT c FROM local_scores WHERE id = 7) FROM data WHERE id = 7;
UPDATE data SET p = -1 WHERE id = 8;
UPDATE data SET p = kernel_predict('dist_n', f) WHERE id = 8;
SELECT p = (SELECT p FROM local_scores WHERE id = 8) FROM data WHERE id = 8;});
is($out, "t\nt", 'SELECT and UPDATE by name of the rows of one shard');
ok(by_name_stays_on_coordinator($err), 'one shard: the worker gets the model\'s bytes too') or diag($err);

# A deploy between two executions of a prepared statement (a generic plan)
# is seen by the next one, from the same session or from another.
$coord->safe_psql('postgres', q{
SELECT version FROM kernel_model_train('dv', 'SELECT f, y FROM local_data',
  '{"approximation": "rff", "components": 40, "seed": 3, "lambda": 0.01, "deploy": "always"}');
SELECT version FROM kernel_model_train('dv', 'SELECT f, y FROM local_data',
  '{"approximation": "rff", "components": 40, "seed": 4, "lambda": 1, "deploy": "always"}');
SELECT kernel_model_deploy('dv', 1);
CREATE TABLE dv_local AS
SELECT m.version AS v, kernel_predict(m.model, l.f) AS p
FROM kernel_models m, local_data l WHERE m.name = 'dv' AND l.id = 7;});
my %dv = map { split /\|/ } split /\n/, $coord->safe_psql('postgres', 'SELECT v, p FROM dv_local');
isnt($dv{1}, $dv{2}, 'the two versions score row 7 differently');
my $dv = $coord->background_psql('postgres');
$dv->query_safe(q{SET plan_cache_mode = force_generic_plan});
$dv->query_safe(q{PREPARE one AS SELECT kernel_predict('dv', f) FROM data WHERE id = 7});
$dv->query_safe(q{PREPARE many AS SELECT count(*) FROM data WHERE kernel_predict('dv', f) = kernel_predict((SELECT model FROM kernel_models WHERE name = 'dv' AND deployed), f)});
is($dv->query_safe('EXECUTE one'), $dv{1}, 'a prepared SELECT by name scores with the deployed version 1');
$coord->safe_psql('postgres', q{SELECT kernel_model_deploy('dv', 2)});
is($dv->query_safe('EXECUTE one'), $dv{2}, 'after version 2 is deployed from another session, the next execution scores with it');
is($dv->query_safe('EXECUTE many'), '4000', 'over every shard too');
$dv->query_safe(q{SELECT kernel_model_deploy('dv', 1)});
is($dv->query_safe('EXECUTE one'), $dv{1}, 'and with version 1 again after a deploy in the same session');
is($dv->query_safe(q{BEGIN; SELECT kernel_model_deploy('dv', 2); EXECUTE one}), "\n$dv{2}",
	'within a transaction, after its own deploy');
is($dv->query_safe(q{ROLLBACK; EXECUTE one; EXECUTE many}), "$dv{1}\n4000", 'and the deploy rolled back, version 1 again');
$dv->quit;

# Privileges: a role that may not read the model is refused as on one node.
$coord->safe_psql('postgres', q{CREATE ROLE reader LOGIN; GRANT SELECT ON data, local_scores TO reader;});
($o, $e) = ('', '');
$coord->psql('postgres', q{SET ROLE reader; SELECT count(kernel_predict('dist_n', f)) FROM data},
	stdout => \$o, stderr => \$e);
like($e, qr/ERROR:  permission denied for model "dist_n"/,
	'a role without read access to the model is refused by name on a distributed table, as on one node');
$coord->safe_psql('postgres', q{GRANT SELECT ON kernel_models TO reader});
is($coord->safe_psql('postgres', q{SET ROLE reader;
SELECT count(*) FROM data d JOIN local_scores l USING (id) WHERE kernel_predict('dist_n', d.f) = l.p}), '4000',
	'once granted SELECT on kernel_models, the role scores by name on the shards');

# A SECURITY DEFINER function scores as its owner, as on one node.
$coord->safe_psql('postgres', q{
CREATE FUNCTION score_as_owner() RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER AS
$$ DECLARE n bigint; BEGIN SELECT count(kernel_predict('dist_n', f)) INTO n FROM public.data; RETURN n; END $$;
REVOKE SELECT ON kernel_models FROM reader;});
is($coord->safe_psql('postgres', q{SET ROLE reader; SELECT score_as_owner()}), '4000',
	'a SECURITY DEFINER function scores by name on the shards as its owner');

# Other shapes: GROUP BY a predicted class, a join with a reference table, a
# reference table alone (Citus runs it on the coordinator, left as it is).
$coord->safe_psql('postgres', q{CREATE TABLE ref AS SELECT id, f FROM local_data WHERE id <= 100;
SELECT create_reference_table('ref');});
$coord->safe_psql('postgres', q{CREATE TABLE dist_classes AS SELECT kernel_predict_class('cls', f) c, count(*) FROM data GROUP BY 1;
CREATE TABLE dist_ref AS SELECT id, kernel_predict('dist_n', d.f) p FROM ref r JOIN data d USING (id);
CREATE TABLE ref_alone AS SELECT id, kernel_predict('dist_n', f) p FROM ref;});
is($coord->safe_psql('postgres', q{
SELECT (SELECT string_agg(c || count, ',' ORDER BY c) FROM dist_classes)
     = (SELECT string_agg(c || count, ',' ORDER BY c) FROM (SELECT c, count(*) FROM local_scores GROUP BY 1) s),
       (SELECT count(*) FROM dist_ref JOIN local_scores l USING (id) WHERE dist_ref.p = l.p),
       (SELECT count(*) FROM ref_alone JOIN local_scores l USING (id) WHERE ref_alone.p = l.p)}),
	't|100|100', 'GROUP BY a class predicted by name, a join with a reference table, a reference table alone');

# A name that is not a constant cannot be looked up by the workers.
($o, $e) = ('', '');
$coord->psql('postgres', q{SELECT kernel_predict(n, f) FROM data, (VALUES ('dist_n')) v(n)},
	stdout => \$o, stderr => \$e);
like($e, qr/ERROR:  model "dist_n" does not exist.*DETAIL:  This is a Citus worker.*HINT:  Score by name with a constant name/s,
	'a name from a column is refused by the workers, with a hint to a constant name or the bytes');

# Without kernel_ml in shared_preload_libraries (worker1, which has Citus's
# metadata and so plans statements over the distributed table too, but no
# models), the first statement of a session is planned before kernel_ml is
# loaded: it is refused with that reason; the next one is rewritten (and
# finds no model in worker1's own catalog).
($o, $e) = ('', '');
$workers[0]->psql('postgres', q{SELECT count(kernel_predict('dist_n', f)) FROM data;
SELECT count(kernel_predict('dist_n', f)) FROM data;},
	stdout => \$o, stderr => \$e, on_error_stop => 0);
like($e, qr/ERROR:  scoring by name on a distributed table needs kernel_ml loaded before the statement is planned.*HINT:  Add kernel_ml to shared_preload_libraries after citus/s,
	'without kernel_ml preloaded, the first statement by name over a distributed table says why it fails');
like($e, qr/ERROR:  model "dist_n" does not exist\nHINT:  kernel_model_train creates a model/,
	'and the next statement of the session is rewritten (worker1 has no such model)');

TODO:
{
	local $TODO = 'issue 33: exact and classifier training pushed down';
	($o, $e) = distributed(q{SELECT kernel_train(f, y, '{"lambda": 0.01}') IS NOT NULL FROM data});
	is($o, 't', 'exact kernel_train over a distributed table runs on the shards');
	($o, $e) = distributed(q{SELECT kernel_train(f, CASE WHEN y > 0 THEN 'a' ELSE 'b' END,
		'{"approximation": "nystrom", "components": 60, "seed": 3}') IS NOT NULL FROM data});
	is($o, 't', 'approximate classifier kernel_train over a distributed table runs on the shards');
}

done_testing();
