# Check-then-act races of the named-model catalog (issue 21, C1 and C5),
# made deterministic with locks: the stored query calls public.gate(),
# which waits for a shared advisory lock that a session of the test holds;
# while the training waits there, another session drops the model, gives
# the name to another role or reassigns it; then the test releases the lock
# and checks what was stored.  A retrain stores a version only if the name
# still exists and still belongs to the role it ran the query as; a
# training by name only if the caller may still train the name.  The name
# lock is a row lock no other role can take: an advisory lock on the key
# 0.2.0 used does not block a retrain.
#
# Uses PostgreSQL::Test::Cluster and the installed extension; run it with
# test/tap.sh.
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $bindir = `pg_config --bindir`;
chomp $bindir;
(my $install = $bindir) =~ s{/bin$}{};

my $node = PostgreSQL::Test::Cluster->new('catalog_races', install_path => $install);
$node->init;
$node->start;

# SQL as a role (or the superuser); the output, or ERROR and the message.
sub sql
{
	my ($sql, $role) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', $sql,
		extra_params => $role ? [ '-U', $role ] : []);
	return $ret == 0 ? $out : "ERROR: $err";
}

# A psql session in the background running one statement as a role; its
# output (stdout and stderr) comes from finish().
sub start_psql
{
	my ($sql, $role) = @_;
	my $out = '';
	my $h = IPC::Run::start(
		[ 'psql', '-X', '-q', '-At', '-d', $node->connstr('postgres'),
			($role ? ('-U', $role) : ()), '-c', $sql ],
		'<', \undef, '>&', \$out);
	return { h => $h, out => \$out };
}

sub finish
{
	my ($h) = @_;
	$h->{h}->finish;
	my $out = ${ $h->{out} };
	chomp $out;
	return $out;
}

sql(q{
CREATE ROLE alice LOGIN;
CREATE ROLE mallory LOGIN;
CREATE EXTENSION kernel_ml;
CREATE TABLE public.d AS
  SELECT i, ARRAY[sin(i), cos(0.7 * i), (i % 5) / 5.0]::float8[] AS f,
         2 * sin(i) + cos(0.7 * i) * (i % 5) / 5.0 AS y
  FROM generate_series(1, 200) i;
GRANT SELECT ON public.d TO alice, mallory;
-- waits while the test holds advisory lock 4242
CREATE FUNCTION public.gate() RETURNS boolean LANGUAGE sql VOLATILE
  AS $$SELECT true FROM (SELECT pg_advisory_xact_lock_shared(4242)) s$$;
});

# The gate: held by this session until open_gate.
my $holder = $node->background_psql('postgres');
sub close_gate { $holder->query_safe('SELECT pg_advisory_lock(4242)'); }
sub open_gate { $holder->query_safe('SELECT pg_advisory_unlock(4242)'); }
sub wait_at_gate
{
	$node->poll_query_until('postgres',
		q{SELECT EXISTS (SELECT FROM pg_locks WHERE locktype = 'advisory' AND objid = 4242 AND NOT granted)})
	  or die 'the training never reached the gate';
}

my $gated = q{SELECT f, y FROM public.d WHERE public.gate()};
my $state = q{SELECT coalesce(string_agg(version || ' ' || coalesce(owner::text, '-') || ' ' || source_query, ', ' ORDER BY version), 'none') FROM kernel_models WHERE name = 'm'};

# ---- 1. a retrain while the owner drops the model -------------------------
is(sql(qq{SELECT version FROM kernel_model_train('m', '$gated')}, 'alice'), '1', 'alice trains m');
close_gate();
my $retrain = start_psql(q{SELECT version, deployed FROM kernel_model_retrain('m')});
wait_at_gate();
is(sql(q{SELECT kernel_model_drop('m')}, 'alice'), '1',
	'while a superuser\'s retrain runs her query, alice drops m (the retrain holds no lock yet)');
open_gate();
like(finish($retrain), qr/ERROR:  model was dropped, re-created or changed owner while it was being retrained/,
	'the retrain fails: the model was dropped meanwhile');
is(sql($state), 'none', 'and stored nothing (no version 1 owned by the superuser)');
is(sql(q{SELECT count(*) FROM kernel_model_names WHERE name = 'm'}), '0', 'the name stays free');

# ---- 2. drop and re-create under another role -----------------------------
is(sql(qq{SELECT version FROM kernel_model_train('m', '$gated')}, 'alice'), '1', 'alice trains m again');
close_gate();
$retrain = start_psql(q{SELECT version, deployed FROM kernel_model_retrain('m')});
wait_at_gate();
is(sql(q{SELECT kernel_model_drop('m')}, 'alice'), '1', 'alice drops m during the retrain');
is(sql(q{SELECT version FROM kernel_model_train('m', 'SELECT f, -y FROM public.d')}, 'mallory'), '1',
	'and mallory takes the name');
open_gate();
like(finish($retrain), qr/ERROR:  model was dropped, re-created or changed owner while it was being retrained/,
	'the retrain fails');
is(sql($state), '1 mallory SELECT f, -y FROM public.d',
	'mallory\'s m has only his own version: no model of alice\'s rows under his name');
is(sql(q{SELECT kernel_model_drop('m')}, 'mallory'), '1', 'mallory drops it');

# ---- 3. the owner changes by kernel_model_reassign during the retrain -----
is(sql(qq{SELECT version FROM kernel_model_train('m', '$gated')}, 'alice'), '1', 'alice trains m once more');
close_gate();
$retrain = start_psql(q{SELECT version, deployed FROM kernel_model_retrain('m')});
wait_at_gate();
is(sql(q{SELECT kernel_model_reassign('alice', 'mallory')}), '1', 'a superuser gives alice\'s models to mallory meanwhile');
open_gate();
like(finish($retrain), qr/ERROR:  model was dropped, re-created or changed owner while it was being retrained/,
	'the retrain that ran as alice fails');
is(sql($state), "1 alice $gated", 'and stored nothing');
is(sql(q{SELECT kernel_model_reassign('mallory', 'alice')}), '1', 'm goes back to alice');

# ---- 4. nothing happens meanwhile: the retrain stores as the owner --------
close_gate();
$retrain = start_psql(q{SELECT version, deployed FROM kernel_model_retrain('m')});
wait_at_gate();
open_gate();
is(finish($retrain), '2|f', 'an undisturbed retrain stores version 2');
is(sql($state), "1 alice $gated, 2 alice $gated", 'owned by alice, whose query it ran, not by the superuser who called it');

# ---- 5. a training by name while the name changes hands -------------------
close_gate();
my $train = start_psql(qq{SELECT version FROM kernel_model_train('m', '$gated', '{"deploy": "never"}')}, 'alice');
wait_at_gate();
is(sql(q{SELECT kernel_model_drop('m')}, 'alice'), '2', 'alice drops m while another of her sessions trains it');
is(sql(q{SELECT version FROM kernel_model_train('m', 'SELECT f, -y FROM public.d')}, 'mallory'), '1',
	'and mallory takes the name');
open_gate();
like(finish($train), qr/ERROR:  permission denied for model "m"/,
	'alice\'s training is refused under the name lock');
is(sql($state), '1 mallory SELECT f, -y FROM public.d', 'and stored nothing under mallory\'s name');
is(sql(q{SELECT kernel_model_drop('m')}, 'mallory'), '1', 'mallory drops it');

# ---- 6. no role can block the changes of a name ---------------------------
is(sql(qq{SELECT version FROM kernel_model_train('m', 'SELECT f, y FROM public.d')}, 'alice'), '1', 'alice trains m');
# 0.2.0 serialised on pg_advisory_xact_lock(0x4B4D4C31, hash of the name),
# a key any role could take and hold
my $blocker = $node->background_psql('postgres', extra_params => [ '-U', 'mallory' ]);
$blocker->query_safe(q{SELECT pg_advisory_lock(1263356977, hashtext('m'))});
is(sql(q{SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = 1263356977 AND granted}), '1',
	'mallory holds the advisory lock 0.2.0 took on the name m');
is(sql(q{SET lock_timeout = '5s'; SELECT version FROM kernel_model_retrain('m')}), '2',
	'a retrain does not wait for it');
is(sql(q{SET lock_timeout = '5s'; SELECT kernel_model_deploy('m', 1)}, 'alice'), '',
	'nor does a deployment');
like(sql(q{SELECT * FROM kernel_model_names FOR UPDATE}, 'mallory'), qr/permission denied for table kernel_model_names/,
	'mallory cannot lock (or read) the rows the catalog locks');
like(sql(q{BEGIN; SELECT kernel_model_drop('m'); SELECT 1; COMMIT}, 'mallory'), qr/permission denied for model "m"/,
	'a change he may not make is refused before the lock');
$blocker->quit;
$holder->quit;

$node->stop;
done_testing();
