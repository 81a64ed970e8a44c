# Named models across pg_dump and restore into another cluster (issue 21,
# C2 and C3): the owner of a model is dumped by role name, and a restore
# resolves it by name, so one missing role never fails the COPY of the other
# rows (0.2.0's regrole column lost the whole catalog), and a model left by
# a dropped role stays no one's instead of going to whichever role has its
# old OID in the other cluster.  kernel_model_reassign gives a role's models
# to another (what REASSIGN OWNED does for database objects).  Both the
# custom and the plain format.
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
my $tmp = $PostgreSQL::Test::Utils::tmp_check;

my $src = PostgreSQL::Test::Cluster->new('restore_src', install_path => $install);
$src->init;
$src->start;
my $dst = PostgreSQL::Test::Cluster->new('restore_dst', install_path => $install);
$dst->init;
$dst->start;

sub sql
{
	my ($node, $db, $sql, $role) = @_;
	my ($ret, $out, $err) = $node->psql($db, $sql,
		extra_params => $role ? [ '-U', $role ] : []);
	return $ret == 0 ? $out : "ERROR: $err";
}

# The first role each cluster creates: "ghost" in the source, "eve" in the
# destination get the same OID.
sql($src, 'postgres', 'CREATE ROLE ghost LOGIN');
sql($dst, 'postgres', 'CREATE ROLE eve LOGIN');
my $ghost_oid = sql($src, 'postgres', q{SELECT oid FROM pg_roles WHERE rolname = 'ghost'});
is(sql($dst, 'postgres', q{SELECT oid FROM pg_roles WHERE rolname = 'eve'}), $ghost_oid,
	'eve has in the destination the OID ghost has in the source');

sql($src, 'postgres', q{
CREATE ROLE alice LOGIN;
CREATE ROLE bob LOGIN;
CREATE EXTENSION kernel_ml;
CREATE TABLE public.d AS
  SELECT i, ARRAY[sin(i), cos(0.7 * i), (i % 5) / 5.0]::float8[] AS f,
         2 * sin(i) + cos(0.7 * i) * (i % 5) / 5.0 AS y
  FROM generate_series(1, 150) i;
GRANT SELECT ON public.d TO alice, bob, ghost;
});
is(sql($src, 'postgres', q{SELECT version FROM kernel_model_train('a_model', 'SELECT f, y FROM public.d', '{"lambda": 0.01}')}, 'alice'), '1', 'alice trains a_model');
sql($src, 'postgres', q{SELECT version FROM kernel_model_train('a_model', 'SELECT f, y FROM public.d', '{"lambda": 0.1}')}, 'alice');
is(sql($src, 'postgres', q{SELECT version FROM kernel_model_train('b_model', 'SELECT f, 2 * y FROM public.d')}, 'bob'), '1', 'bob trains b_model');
is(sql($src, 'postgres', q{SELECT version FROM kernel_model_train('g_model', 'SELECT f, -y FROM public.d')}, 'ghost'), '1', 'ghost trains g_model');
is(sql($src, 'postgres', q{SELECT version FROM kernel_model_train('s_model', 'SELECT f, y + 1 FROM public.d')}), '1', 'the superuser trains s_model');
# a role renamed after it trained: dumped under the name it has then
sql($src, 'postgres', 'CREATE ROLE carol LOGIN; GRANT SELECT ON public.d TO carol');
is(sql($src, 'postgres', q{SELECT version FROM kernel_model_train('c_model', 'SELECT f, y - 1 FROM public.d')}, 'carol'), '1', 'carol trains c_model');
sql($src, 'postgres', 'ALTER ROLE carol RENAME TO dave');

# reassigning needs the privileges of both roles, as REASSIGN OWNED does
like(sql($src, 'postgres', q{SELECT kernel_model_reassign('bob', 'alice')}, 'alice'),
	qr/permission denied to reassign the models of role "bob"/, 'alice cannot take bob\'s models');
like(sql($src, 'postgres', q{SELECT kernel_model_reassign('alice', 'bob')}, 'alice'),
	qr/permission denied to reassign models to role "bob"/, 'nor give hers to bob');

# DROP ROLE does not know models: ghost's is left with no owner
sql($src, 'postgres', 'REVOKE SELECT ON public.d FROM ghost; DROP ROLE ghost');
like(sql($src, 'postgres', q{SELECT kernel_model_retrain('g_model')}), qr/owner of model "g_model" does not exist/,
	'the dropped role\'s model cannot be retrained');

my $scores = q{SET extra_float_digits = 3; SELECT string_agg(n || ':' || kernel_predict(n, f)::text, ',' ORDER BY n, i) FROM public.d, unnest(ARRAY['a_model', 'b_model', 'g_model', 's_model']) n};
my $catalog = q{SELECT string_agg(name || ':' || version || ':' || deployed || ':' || md5(model), ',' ORDER BY name, version) FROM kernel_models};
my $want_scores = sql($src, 'postgres', $scores);
my $want_catalog = sql($src, 'postgres', $catalog);
like($want_catalog, qr/^a_model:1:.*s_model:1:/, 'five versions in the source');

IPC::Run::run([ 'pg_dump', '-Fc', '-d', $src->connstr('postgres'), '-f', "$tmp/catalog.dump" ]) or die 'pg_dump -Fc failed';
IPC::Run::run([ 'pg_dump', '-Fp', '-d', $src->connstr('postgres'), '-f', "$tmp/catalog.sql" ]) or die 'pg_dump -Fp failed';

# the destination has alice (and eve), not bob; and another role that is
# called ghost: ghost's model had no owner when it was dumped, so it must
# have none after the restore either (issue 29, point 5)
sql($dst, 'postgres', 'CREATE ROLE alice LOGIN');
sql($dst, 'postgres', 'CREATE ROLE ghost LOGIN');
sql($dst, 'postgres', 'CREATE ROLE dave LOGIN');
for my $format ('custom', 'plain')
{
	my $db = "restored_$format";
	sql($dst, 'postgres', "CREATE DATABASE $db");
	my $out = '';
	if ($format eq 'custom')
	{
		IPC::Run::run([ 'pg_restore', '-d', $dst->connstr($db), "$tmp/catalog.dump" ], '<', \undef, '>&', \$out);
	}
	else
	{
		IPC::Run::run([ 'psql', '-X', '-q', '-d', $dst->connstr($db), '-f', "$tmp/catalog.sql" ], '<', \undef, '>&', \$out);
	}
	unlike($out, qr/kernel_models|kernel_model_names|COPY/, "$format: the restore of the catalog reports no error") or diag($out);
	is(sql($dst, $db, $catalog), $want_catalog, "$format: every version of every model is restored, bob's and ghost's too");
	is(sql($dst, $db, $scores), $want_scores, "$format: and each predicts the same");
	is(sql($dst, $db, q{SELECT string_agg(name || ' ' || owner::regrole || ' ' || coalesce(owner_name, '-') || ' ' || last_version, ', ' ORDER BY name) FROM kernel_model_names}),
		'a_model alice alice 2, b_model - bob 1, c_model dave dave 1, g_model - ghost 1, s_model postgres postgres 1',
		"$format: owners resolved by name: alice's, dave's (carol renamed before the dump); bob's (missing role) and ghost's (dropped before the dump) no one's");
	is(sql($dst, $db, q{SELECT owner FROM kernel_models WHERE name = 'b_model'}), 'bob', "$format: the version keeps its owner's name");
	like(sql($dst, $db, q{SELECT kernel_model_drop('g_model')}, 'eve'), qr/permission denied for model "g_model"/,
		"$format: eve, who has ghost's old OID, does not own ghost's model");
	like(sql($dst, $db, q{SELECT kernel_model_drop('g_model')}, 'ghost'), qr/permission denied for model "g_model"/,
		"$format: nor does the other cluster's role named ghost");
	like(sql($dst, $db, q{SELECT kernel_predict('g_model', ARRAY[1, 2, 3]::float8[])}, 'ghost'), qr/permission denied for model "g_model"/,
		"$format: who cannot score with it either");
	like(sql($dst, $db, q{SELECT kernel_model_retrain('g_model')}), qr/owner of model "g_model" does not exist/,
		"$format: and nobody retrains it");
	sql($dst, $db, 'GRANT SELECT ON public.d TO alice');
	is(sql($dst, $db, q{SELECT version FROM kernel_model_retrain('a_model')}, 'alice'),
		'3', "$format: alice retrains hers: version 3");
	is(sql($dst, $db, q{SELECT owner FROM kernel_models WHERE name = 'a_model' AND version = 3}), 'alice',
		"$format: owned by alice");
	like(sql($dst, $db, q{SELECT kernel_model_retrain('b_model')}), qr/owner of model "b_model" does not exist/,
		"$format: bob's cannot be retrained");
	is(sql($dst, $db, q{SELECT kernel_model_reassign('bob', 'alice')}), '1', "$format: a superuser gives bob's model to alice");
	is(sql($dst, $db, q{SELECT version FROM kernel_model_retrain('b_model')}, 'alice'), '2', "$format: who retrains it");
	is(sql($dst, $db, q{SELECT string_agg(name || ' ' || owner::regrole, ', ' ORDER BY name) FROM kernel_model_names WHERE owner = 0}),
		'g_model -', "$format: ghost's model alone is left with no owner");
}

$src->stop;
$dst->stop;
done_testing();
