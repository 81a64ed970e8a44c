# Security of named models (issue 10, points 1, 2 and 6): a model owner's
# stored query cannot make a superuser's retrain (by hand or by a real
# pg_cron job) run the owner's code with superuser rights, nor change the
# caller's settings; owners are kept by OID; the stored query resolves
# names as when it was trained; read-only transactions, too-long names and
# missing privileges are refused before the query runs; the overview and
# kernel_predict(name, ...) check read access against the real table and
# the current user.
#
# Uses PostgreSQL::Test::Cluster (its own cluster, pg_cron preloaded) and
# the installed extension; run it with test/tap.sh.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

my $bindir = `pg_config --bindir`;
chomp $bindir;
(my $install = $bindir) =~ s{/bin$}{};

# pg_cron where it is installed for this server (the assert-enabled debug
# server of test/debug_server.sh has none: there the scheduled retrain is
# run directly by the superuser instead).
my $pkglibdir = `pg_config --pkglibdir`;
chomp $pkglibdir;
my $have_cron = -e "$pkglibdir/pg_cron.so";

my $node = PostgreSQL::Test::Cluster->new('security', install_path => $install);
$node->init;
$node->append_conf('postgresql.conf', ($have_cron ? qq{
shared_preload_libraries = 'pg_cron'
cron.database_name = 'postgres'
cron.use_background_workers = on
} : '') . qq{
max_worker_processes = 16
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
	# a failure becomes the value, so that the assertion on it fails
	if ($ret != 0)
	{
		diag("failed: $sql\n$err");
		return "ERROR: $err";
	}
	return $out;
}

# SQLSTATE and message of a statement run through outcome(), and whether
# the training query's marker NOTICE appeared (the query ran).
sub outcome
{
	my ($stmt, $role) = @_;
	(my $q = $stmt) =~ s/'/''/g;
	my ($ret, $out, $err) = run_sql("SELECT public.outcome('$q')", $role);
	die "outcome() failed: $err" if $ret != 0;
	return ($out, $err =~ /query ran as/ ? 1 : 0);
}

sub is_super
{
	my ($role) = @_;
	return sql_ok("SELECT rolsuper FROM pg_roles WHERE rolname = '$role'");
}

sql_ok(q{
CREATE EXTENSION kernel_ml;
CREATE FUNCTION public.outcome(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ' ' || SQLERRM;
END $$;
GRANT EXECUTE ON FUNCTION public.outcome(text) TO PUBLIC;
-- who ran a training query: a NOTICE, and a row (when writable)
CREATE TABLE public.who (who name);
GRANT INSERT, SELECT ON public.who TO PUBLIC;
CREATE FUNCTION public.rec() RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  RAISE NOTICE 'query ran as %', current_user;
  IF NOT pg_catalog.current_setting('transaction_read_only')::boolean THEN
    INSERT INTO public.who VALUES (current_user);
  END IF;
  RETURN true;
END $$;
CREATE TABLE public.data1 AS
  SELECT i AS id, ARRAY[sin(i), cos(0.7 * i)]::float8[] AS f, sin(i) + cos(0.7 * i) AS y
  FROM generate_series(1, 100) i;
GRANT SELECT ON public.data1 TO PUBLIC;
-- a decoy with the same name as bob's table, and 50 rows instead of 200
CREATE TABLE public.data2 AS
  SELECT i AS id, ARRAY[i, -i]::float8[] AS f, 100.0 + i AS y FROM generate_series(1, 50) i;
GRANT SELECT ON public.data2 TO PUBLIC;
CREATE ROLE bob LOGIN;
CREATE ROLE carol LOGIN;
CREATE ROLE dave LOGIN;
CREATE ROLE eve LOGIN;
CREATE SCHEMA bob AUTHORIZATION bob;
CREATE SCHEMA bob_evil AUTHORIZATION bob;
});

# bob's trap: a function his query calls that changes search_path for the
# rest of the session, and operators that make bob superuser when run by one
my $evil = q{
CREATE TABLE bob.data2 AS
  SELECT i AS id, ARRAY[sin(i), cos(0.7 * i)]::float8[] AS f, sin(i) + cos(0.7 * i) AS y
  FROM generate_series(1, 200) i;
CREATE TABLE bob_evil.fired (who name);
GRANT INSERT ON bob_evil.fired TO PUBLIC;
GRANT USAGE ON SCHEMA bob_evil TO PUBLIC;
CREATE FUNCTION bob_evil.hook() RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_catalog.set_config('search_path', 'bob_evil, pg_catalog', false);
  RETURN true;
END $$;
CREATE FUNCTION bob_evil.pwn() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname OPERATOR(pg_catalog.=) current_user) THEN
    INSERT INTO bob_evil.fired VALUES (current_user);
    EXECUTE 'ALTER ROLE bob SUPERUSER';
  END IF;
END $$;
};
my $n = 0;
for my $type (qw(integer bigint float8 numeric text))
{
	for my $op ('-', '*', '+', '=', '<>', '<', '>')
	{
		next if $type eq 'text' && $op =~ /[-*+]/;
		$n++;
		my $ret = $op =~ /[-*+]/ ? $type : 'boolean';
		$evil .= qq{
CREATE FUNCTION bob_evil.op$n(a $type, b $type) RETURNS $ret LANGUAGE plpgsql AS \$\$
BEGIN
  PERFORM bob_evil.pwn();
  RETURN a OPERATOR(pg_catalog.$op) b;
END \$\$;
CREATE OPERATOR bob_evil.$op (LEFTARG = $type, RIGHTARG = $type, FUNCTION = bob_evil.op$n);
};
	}
}
sql_ok($evil, 'bob');

# bob trains (his search_path: bob, public); the query calls the hook
is(sql_ok(q{SET search_path = bob, public;
SELECT version FROM kernel_model_train('bob_model', 'SELECT f, y FROM data2 WHERE bob_evil.hook()', '{"lambda": 0.01, "seed": 1}');
SHOW search_path;}, 'bob'), "1\nbob, public", 'bob trains; the setting his query changes does not outlive it');
is(sql_ok(q{SELECT owner::text || ' ' || search_path || ' ' || (metrics->>'rows') FROM kernel_models WHERE name = 'bob_model'}),
	'bob bob, public 200', 'bob owns bob_model, trained on bob.data2 with search_path "bob, public"');

# 1. the attack: a superuser retrains with search_path = public
my $out = sql_ok(q{SET search_path = public;
SELECT version || ' ' || (metrics->>'rows') FROM kernel_model_retrain('bob_model');
SHOW search_path;});
is($out, "2 200\npublic",
	'superuser retrain: version 2 trained on bob.data2 (200 rows, not public.data2), and the caller\'s search_path is still public');
is(is_super('bob'), 'f', 'bob is not superuser after a superuser retrained his model');
is(sql_ok('SELECT count(*) FROM bob_evil.fired'), '0', 'no planted operator ran as a superuser');
is(sql_ok(q{SELECT search_path FROM kernel_models WHERE name = 'bob_model' AND version = 2}),
	'bob, public', 'the retrained version keeps the search_path it was trained with');

# ... and inside a PL/pgSQL block that goes on using operators afterwards
$out = sql_ok(q{SET search_path = public;
DO $$
DECLARE v integer;
BEGIN
  PERFORM kernel_model_retrain('bob_model');
  v := 1 + 2 * 3 - 1;
END $$;
SHOW search_path;});
is($out, 'public', 'after a retrain inside a DO block, search_path is unchanged');
is(is_super('bob'), 'f', 'bob is still not superuser');

# ... and when the owner's query fails after changing search_path, caught
# by the caller's exception block: user and settings are restored
sql_ok(q{CREATE TABLE bob.flag (x integer); INSERT INTO bob.flag VALUES (1);
SET search_path = bob, public;
SELECT version FROM kernel_model_train('bob_fail', 'SELECT f, y FROM data2 WHERE bob_evil.hook() AND 1 / (SELECT count(*)::integer FROM bob.flag) IS NOT NULL');
DELETE FROM bob.flag;}, 'bob');
is(sql_ok(q{SET search_path = public;
SELECT public.outcome('SELECT kernel_model_retrain(''bob_fail'')');
SHOW search_path;
SELECT current_user;}), "22012 division by zero\npublic\npostgres",
	'a retrain whose query fails after changing search_path leaves the caller\'s search_path and role as they were');
is(is_super('bob'), 'f', 'bob is still not superuser');

# 1b. a real pg_cron job, scheduled by the superuser
sql_ok('ALTER ROLE bob NOSUPERUSER');
SKIP:
{
	if (!$have_cron)
	{
		sql_ok(q{SELECT kernel_model_retrain('bob_model')});
		skip "pg_cron is not installed for this server: the superuser retrained directly", 1;
	}
	sql_ok('CREATE EXTENSION pg_cron');
	# '@reboot' and a restart: pg_cron's launcher runs the job at once, as it
	# runs a '* * * * *' job at the next minute (pg_cron 1.4 has no "N
	# seconds" schedule), in a background worker as the superuser.
	my $jobid = sql_ok(q{SELECT cron.schedule('kml_retrain', '@reboot', $$SELECT kernel_model_retrain('bob_model')$$)});
	$node->restart;
	my $start = time();
	my $status = '';
	while (time() - $start < 150)
	{
		$status = sql_ok("SELECT coalesce(string_agg(status || ': ' || coalesce(return_message, ''), '; '), '') "
			  . "FROM cron.job_run_details WHERE jobid = $jobid AND status IN ('succeeded', 'failed')");
		last if $status ne '';
		sleep(0.1);
	}
	sql_ok("SELECT cron.unschedule($jobid)");
	diag(sprintf('the cron job finished after %.0f s: %s', time() - $start, $status));
	like($status, qr/^succeeded/, 'the pg_cron job retrained bob_model');
}
is(is_super('bob'), 'f', 'bob is not superuser after the pg_cron job retrained his model');
is(sql_ok('SELECT count(*) FROM bob_evil.fired'), '0', 'no planted operator ran as a superuser in the job');
is(sql_ok(q{SELECT max(version) || ' ' || min(metrics->>'rows') || ' ' || max(metrics->>'rows') FROM kernel_models WHERE name = 'bob_model'}),
	'4 200 200', 'every version of bob_model was trained on bob.data2');

# 2. renaming the owner keeps the models; a new role of the old name gets none
sql_ok(q{SELECT version FROM kernel_model_train('carol_model', 'SELECT f, y FROM public.data1 WHERE public.rec()', '{"seed": 2}')},
	'carol');
sql_ok(q{ALTER ROLE carol RENAME TO carol_old; CREATE ROLE carol LOGIN; TRUNCATE public.who;});
is(sql_ok(q{SELECT owner::text FROM kernel_models_overview WHERE name = 'carol_model'}),
	'carol_old', 'after ALTER ROLE carol RENAME TO carol_old, carol_old owns carol_model');
my ($res, $ran) = outcome(q{SELECT kernel_model_retrain('carol_model')}, 'carol');
is($res, '42501 permission denied for model "carol_model"', 'the new carol cannot retrain it');
is($ran, 0, '... and its query did not run');
($res, $ran) = outcome(q{SELECT kernel_model_train('carol_model', 'SELECT f, y FROM public.data1 WHERE public.rec()')}, 'carol');
is($res, '42501 permission denied for model "carol_model"', 'the new carol cannot train a version of it');
is($ran, 0, '... refused before its query ran');
($res) = outcome(q{SELECT kernel_model_deploy('carol_model', 1)}, 'carol');
is($res, '42501 permission denied for model "carol_model"', 'the new carol cannot deploy it');
($res) = outcome(q{SELECT kernel_model_drop('carol_model')}, 'carol');
is($res, '42501 permission denied for model "carol_model"', 'the new carol cannot drop it');
is(sql_ok(q{SELECT count(*) FROM kernel_models_overview WHERE name = 'carol_model'}, 'carol'), '0',
	'the new carol does not see it in the overview');
sql_ok(q{SELECT version FROM kernel_model_retrain('carol_model')});
is(sql_ok('SELECT string_agg(DISTINCT who::text, \',\') FROM public.who'), 'carol_old',
	'a superuser\'s retrain runs the query as carol_old');

# 2b. a dropped owner: retrain fails and never runs the query as the caller
sql_ok(q{SELECT version FROM kernel_model_train('dave_model', 'SELECT f, y FROM public.data1 WHERE public.rec()', '{"seed": 3}')},
	'dave');
sql_ok(q{DROP ROLE dave; TRUNCATE public.who;});
($res, $ran) = outcome(q{SELECT kernel_model_retrain('dave_model')});
is($res, '42704 owner of model "dave_model" does not exist', 'retraining a dropped role\'s model fails with 42704');
is($ran, 0, '... before its query ran');
is(sql_ok('SELECT count(*) FROM public.who'), '0', '... as nobody');
sql_ok(q{CREATE ROLE dave LOGIN});
($res) = outcome(q{SELECT kernel_model_retrain('dave_model')}, 'dave');
is($res, '42501 permission denied for model "dave_model"', 'a new dave does not take the dropped dave\'s model');

# 2c. refused before any work: read-only transaction, long name, no privilege
($res, $ran) = outcome(q{SELECT kernel_model_retrain('carol_model')}) ;
is($res, 'ok', 'control: a superuser can retrain carol_model');
is($ran, 1, 'control: the query ran');
my ($ret, $o, $err) = run_sql(q{SET default_transaction_read_only = on;
SELECT * FROM kernel_model_retrain('carol_model');});
like($err, qr/cannot execute kernel_model_retrain\(\) in a read-only transaction/,
	'retrain in a read-only transaction is refused');
unlike($err, qr/query ran as/, '... before its query ran');
($ret, $o, $err) = run_sql(q{BEGIN READ ONLY;
SELECT * FROM kernel_model_train('ro_model', 'SELECT f, y FROM public.data1 WHERE public.rec()');
ROLLBACK;});
like($err, qr/cannot execute kernel_model_train\(\) in a read-only transaction/,
	'train in a read-only transaction is refused');
unlike($err, qr/query ran as/, '... before its query ran');
for my $f ("kernel_model_deploy('carol_model', 1)", "kernel_model_drop('carol_model')")
{
	($ret, $o, $err) = run_sql("BEGIN READ ONLY; SELECT $f; ROLLBACK;");
	like($err, qr/in a read-only transaction/, "$f in a read-only transaction is refused");
}
my $long = 'm' x 64;
($res, $ran) = outcome(qq{SELECT kernel_model_train('$long', 'SELECT f, y FROM public.data1 WHERE public.rec()')});
is($res, '42622 model name is too long', 'a 64-byte model name is refused');
is($ran, 0, '... before its query ran');
($res, $ran) = outcome(q{SELECT kernel_model_retrain('bob_model')}, 'eve');
is($res, '42501 permission denied for model "bob_model"', 'eve may not retrain bob_model');
is(is_super('bob'), 'f', 'bob is still not superuser');

# 6. a temporary table named kernel_models does not open the overview
is(sql_ok(q{CREATE TEMP TABLE kernel_models (x int);
SELECT count(*) FROM public.kernel_models_overview;}, 'eve'), '0',
	'eve with a temp table named kernel_models sees no model in the overview');
is(sql_ok(q{SELECT string_agg(name, ',' ORDER BY name) FROM public.kernel_models_overview;}, 'bob'), 'bob_fail,bob_model',
	'bob sees his own models only');

# 6b. kernel_predict(name, ...) checks read access for the current user,
# also when SET ROLE happens between two calls of one expression
sql_ok('GRANT USAGE ON SCHEMA public TO eve');
($ret, $o, $err) = run_sql(q{BEGIN ISOLATION LEVEL REPEATABLE READ;
DO $$
DECLARE v float8;
BEGIN
  FOR i IN 1..2 LOOP
    IF i = 2 THEN SET ROLE eve; END IF;
    v := kernel_predict('bob_model', ARRAY[0.5, 0.5]);
    RAISE NOTICE 'scored as %', current_user;
  END LOOP;
END $$;
COMMIT;});
like($err, qr/scored as postgres/, 'the superuser scores bob_model');
unlike($err, qr/scored as eve/, 'after SET ROLE eve in the same loop, eve does not');
like($err, qr/permission denied for model "bob_model"/, '... she gets permission denied');
($ret, $o, $err) = run_sql(q{SELECT kernel_predict('bob_model', ARRAY[0.5, 0.5]) IS NOT NULL;
SET ROLE eve;
SELECT kernel_predict('bob_model', ARRAY[0.5, 0.5]);});
like($err, qr/permission denied for model "bob_model"/, 'SET ROLE between two statements: refused too');

is(is_super('bob'), 'f', 'at the end, bob is still not superuser');
$node->stop;
done_testing();
