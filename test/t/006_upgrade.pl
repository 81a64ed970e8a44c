# Upgrade from 0.1.0 through 0.2.0 and 0.3.0 to 0.4.0: install the released
# scripts (test/upgrade/: 0.1.0 extracted from its release, 0.2.0 from git
# history, 05dd44f:sql/kernel_ml.sql, 0.3.0 from a14e43f:sql/kernel_ml.sql),
# CREATE EXTENSION kernel_ml VERSION '0.1.0',
# store named models as 0.1.0 stored them (owner by name; one of a role that
# no longer exists) and a bytea model in a user table, ALTER EXTENSION
# kernel_ml UPDATE TO '0.2.0' (owners become role OIDs), store versions as
# 0.2.0 stored them (one of a role dropped afterwards, its OID left behind),
# then UPDATE TO '0.3.0': predictions are identical bit for bit at every
# step, owners become role names (NULL for the dropped roles) with one row
# per name in kernel_model_names (its high-water mark the highest version),
# and the extension is the released 0.3.0 install's; this library refuses to
# change that catalog (55000, "needs the kernel_ml 0.4.0 catalog") until the
# UPDATE to 0.4.0, after which version numbers continue, retraining works
# (and refuses the dropped owners' models), and the updated extension has
# exactly the objects, definitions and comments of a fresh install.  Other
# databases go from 0.2.0 and from 0.3.0 to 0.4.0 directly and are compared
# the same way.
#
# Uses PostgreSQL::Test::Cluster and the installed extension; run it with
# test/tap.sh, which puts the released scripts into the share directory.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $bindir = `pg_config --bindir`;
chomp $bindir;
(my $install = $bindir) =~ s{/bin$}{};

my $sharedir = `pg_config --sharedir`;
chomp $sharedir;
my ($current) = do { local (@ARGV, $/) = ("$sharedir/extension/kernel_ml.control"); <> } =~ /^default_version\s*=\s*'([^']+)'/m;
(my $current_re = $current) =~ s/\./\\./g;

my $node = PostgreSQL::Test::Cluster->new('upgrade', install_path => $install);
$node->init;
$node->start;

sub sql
{
	my ($sql, %opts) = @_;
	my ($ret, $out, $err) = $node->psql($opts{db} // 'postgres', $sql,
		extra_params => $opts{role} ? ['-U', $opts{role}] : []);
	if ($ret != 0)
	{
		diag("failed: $sql\n$err") unless $opts{fails};
		return "ERROR: $err";
	}
	return $out;
}

# every object of the extension with its definition and comment, one a line
my $describe = q{
WITH ext AS (SELECT oid FROM pg_extension WHERE extname = 'kernel_ml'),
members AS (
  SELECT d.classid, d.objid FROM pg_depend d, ext
  WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = ext.oid AND d.deptype = 'e')
SELECT string_agg(line, E'\n' ORDER BY line) FROM (
  SELECT 'object ' || pg_describe_object(classid, objid, 0) || ' -- '
         || coalesce(obj_description(objid, classid::regclass::name), '(no comment)') AS line
  FROM members
  UNION ALL
  SELECT 'definition ' || pg_get_functiondef(p.oid)
  FROM members m JOIN pg_proc p ON m.classid = 'pg_proc'::regclass AND p.oid = m.objid
  WHERE p.prokind <> 'a'
  UNION ALL
  SELECT 'column ' || a.attnum || ' ' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
         || CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END
         || coalesce(' DEFAULT ' || pg_get_expr(ad.adbin, ad.adrelid), '')
         || ' -- ' || coalesce(col_description(a.attrelid, a.attnum), '(no comment)')
  FROM pg_attribute a LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
  WHERE a.attrelid = 'kernel_models'::regclass AND a.attnum > 0 AND NOT a.attisdropped
  UNION ALL
  SELECT 'column ' || a.attnum || ' ' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
         || CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END
         || ' -- ' || coalesce(col_description(a.attrelid, a.attnum), '(no comment)')
  FROM pg_attribute a
  WHERE a.attrelid = 'kernel_model_names'::regclass AND a.attnum > 0 AND NOT a.attisdropped
  UNION ALL
  SELECT 'constraint ' || conrelid::regclass || ' ' || pg_get_constraintdef(oid) FROM pg_constraint
  WHERE conrelid IN ('kernel_models'::regclass, 'kernel_model_names'::regclass)
  UNION ALL
  SELECT 'index ' || pg_get_indexdef(indexrelid) FROM pg_index
  WHERE indrelid IN ('kernel_models'::regclass, 'kernel_model_names'::regclass)
  UNION ALL
  SELECT 'trigger ' || pg_get_triggerdef(oid) FROM pg_trigger
  WHERE tgrelid IN ('kernel_models'::regclass, 'kernel_model_names'::regclass)
  UNION ALL
  SELECT 'view ' || pg_get_viewdef('kernel_models_overview'::regclass)
  UNION ALL
  SELECT 'acl ' || relname || ' ' || coalesce(relacl::text, '') FROM pg_class
  WHERE oid IN ('kernel_models'::regclass, 'kernel_model_names'::regclass, 'kernel_models_overview'::regclass)
  UNION ALL
  SELECT 'config ' || (SELECT string_agg(c::regclass::text, ',' ORDER BY c::regclass::text) FROM unnest(extconfig) c) || ' '
         || coalesce(extcondition::text, '') FROM pg_extension WHERE extname = 'kernel_ml'
) t;
};

# exact bytes of every prediction: by name, and with the bytea in a table
my $predictions = q{
SELECT string_agg(i || ' ' || encode(float8send(kernel_predict('m_ridge', f)), 'hex') || ' '
                  || encode(float8send(kernel_predict('m_ghost', f)), 'hex') || ' '
                  || encode(float8send(kernel_predict((SELECT model FROM public.saved), f)), 'hex'),
                  ',' ORDER BY i)
FROM public.d;
};

sql(q{
CREATE ROLE alice LOGIN;
CREATE ROLE ghost LOGIN;
CREATE EXTENSION kernel_ml VERSION '0.1.0';
CREATE TABLE public.d AS
  SELECT i, ARRAY[sin(i), cos(0.7 * i), (i % 5) / 5.0]::float8[] AS f,
         2 * sin(i) + cos(0.7 * i) * (i % 5) / 5.0 AS y
  FROM generate_series(1, 120) i;
GRANT SELECT ON public.d TO alice;
});
is(sql(q{SELECT extversion FROM pg_extension WHERE extname = 'kernel_ml'}), '0.1.0', 'installed version 0.1.0');

# named models as 0.1.0 stores them: owner by name, no search_path; the
# model of "ghost" outlives its role
sql(q{
INSERT INTO kernel_models (name, version, owner, source_query, options, model, metrics, n_train, n_features, deployed)
SELECT 'm_ridge', 1, 'alice', 'SELECT f, y FROM d', '{"lambda": 0.01, "seed": 4}',
       kernel_train(f, y, '{"lambda": 0.01, "seed": 4}'), '{}', count(*), 3, true FROM public.d;
INSERT INTO kernel_models (name, version, owner, source_query, options, model, metrics, n_train, n_features, deployed)
SELECT 'm_ghost', 1, 'ghost', 'SELECT f, y FROM d', '{"kernel": "poly", "degree": 2}',
       kernel_train(f, y, '{"kernel": "poly", "degree": 2}'), '{}', count(*), 3, true FROM public.d;
CREATE TABLE public.saved AS
  SELECT kernel_train(f, y, '{"kernel": "laplacian", "gamma": 0.5}') AS model FROM public.d;
DROP ROLE ghost;
});
my $before = sql($predictions);
like($before, qr/^1 [0-9a-f]{16} [0-9a-f]{16} [0-9a-f]{16},/, 'predictions on the 0.1.0 catalog');
my $models_before = sql(q{SELECT string_agg(name || ' ' || md5(model), ',' ORDER BY name) FROM kernel_models});
like(sql(q{SELECT kernel_model_train('m_new', 'SELECT f, y FROM d')}, fails => 1), qr/needs the kernel_ml $current_re catalog/,
	'training on the 0.1.0 catalog asks for ALTER EXTENSION UPDATE');

is(sql(q{ALTER EXTENSION kernel_ml UPDATE TO '0.2.0'; SELECT extversion FROM pg_extension WHERE extname = 'kernel_ml'}),
	'0.2.0', 'ALTER EXTENSION kernel_ml UPDATE TO 0.2.0');
my $alice = sql(q{SELECT oid FROM pg_roles WHERE rolname = 'alice'});
is(sql($predictions), $before, 'every prediction is identical, bit for bit, on 0.2.0');
is(sql(q{SELECT string_agg(name || ' ' || owner::text || ' ' || owner::oid, ',' ORDER BY name) FROM kernel_models}),
	"m_ghost - 0,m_ridge alice $alice", '0.2.0: owners became role OIDs (0 for the role that no longer exists)');
like(sql(q{SELECT kernel_model_drop('m_ridge', 1)}, fails => 1), qr/needs the kernel_ml $current_re catalog/,
	'the 0.2.0 catalog is read-only for this library');

# versions as 0.2.0 stores them: owner a regrole; "ghost2" is dropped
# afterwards, its OID left in the rows; m_ridge's latest version 3 is gone
# (its number must not come back)
sql(q{
CREATE ROLE ghost2 LOGIN;
INSERT INTO kernel_models (name, version, owner, source_query, options, model, metrics, n_train, n_features, deployed, search_path)
SELECT 'm_ridge', v, 'alice', 'SELECT f, y FROM d', '{"lambda": 0.01, "seed": 4}',
       kernel_train(f, y, '{"lambda": 0.01, "seed": 4}'), '{}', count(*), 3, false, 'public'
FROM public.d, generate_series(2, 3) v GROUP BY v;
DELETE FROM kernel_models WHERE name = 'm_ridge' AND version = 3;
INSERT INTO kernel_models (name, version, owner, source_query, options, model, metrics, n_train, n_features, deployed, search_path)
SELECT 'm_ghost2', 1, 'ghost2', 'SELECT f, y FROM d', '{}', kernel_train(f, y, '{}'), '{}', count(*), 3, true, 'public'
FROM public.d;
DROP ROLE ghost2;
});
my $before2 = sql(q{SELECT string_agg(encode(float8send(kernel_predict('m_ghost2', f)), 'hex'), ',' ORDER BY i) FROM public.d});
my $models_before2 = sql(q{SELECT string_agg(name || ' ' || version || ' ' || md5(model), ',' ORDER BY name, version) FROM kernel_models});

is(sql(q{ALTER EXTENSION kernel_ml UPDATE TO '0.3.0'; SELECT extversion FROM pg_extension WHERE extname = 'kernel_ml'}),
	'0.3.0', 'ALTER EXTENSION kernel_ml UPDATE TO 0.3.0');
my $after = sql($predictions);
like($after, qr/^1 [0-9a-f]{16} [0-9a-f]{16} [0-9a-f]{16},/, 'predictions on the updated catalog');
is($after, $before, 'every prediction is identical, bit for bit, after both updates');
is(sql(q{SELECT string_agg(encode(float8send(kernel_predict('m_ghost2', f)), 'hex'), ',' ORDER BY i) FROM public.d}),
	$before2, 'and those of the model stored under 0.2.0');
is(sql(q{SELECT string_agg(name || ' ' || version || ' ' || md5(model), ',' ORDER BY name, version) FROM kernel_models}),
	$models_before2, 'the stored models are unchanged');
is(sql(q{SELECT string_agg(name || ' ' || version || ' ' || coalesce(owner, 'null') || ' ' || coalesce(search_path, 'null'), ',' ORDER BY name, version) FROM kernel_models}),
	'm_ghost 1 null null,m_ghost2 1 null public,m_ridge 1 alice null,m_ridge 2 alice public',
	'owners became role names (NULL for the roles that no longer exist)');
is(sql(q{SELECT string_agg(name || ' ' || (owner = 0 OR NOT EXISTS (SELECT FROM pg_roles WHERE oid = owner)) || ' '
                           || CASE WHEN owner = (SELECT oid FROM pg_roles WHERE rolname = 'alice') THEN 'alice-oid' ELSE 'other' END
                           || ' ' || coalesce(owner_name, 'null') || ' ' || last_version, ',' ORDER BY name) FROM kernel_model_names}),
	'm_ghost true other null 1,m_ghost2 true other null 1,m_ridge false alice-oid alice 2',
	'one row per name: owner OID (no role for the dropped ones), owner name, highest version');
is(sql(q{SELECT string_agg(name || ' ' || owner::text || ' ' || deployed_version, ',' ORDER BY name) FROM kernel_models_overview}),
	'm_ghost - 1,m_ghost2 ' . sql(q{SELECT owner FROM kernel_model_names WHERE name = 'm_ghost2'}) . ' 1,m_ridge alice 1',
	'the overview lists all three');

# the catalog updated to 0.3.0 is the released 0.3.0 install's
sql('CREATE DATABASE fresh030');
sql(q{CREATE EXTENSION kernel_ml VERSION '0.3.0'}, db => 'fresh030');
same_as_fresh(sql($describe), sql($describe, db => 'fresh030'), 'the extension updated from 0.1.0 through 0.2.0 to 0.3.0',
	'the released 0.3.0 install');

# this library reads and scores the 0.3.0 catalog but does not change it
# before the update to its own version
my $catalog = q{SELECT string_agg(name || ' ' || version || ' ' || deployed || ' ' || md5(model), ',' ORDER BY name, version) FROM kernel_models};
my $names = q{SELECT string_agg(name || ' ' || owner || ' ' || coalesce(owner_name, '-') || ' ' || last_version, ',' ORDER BY name) FROM kernel_model_names};
my ($catalog030, $names030) = (sql($catalog), sql($names));
for my $call ("kernel_model_retrain('m_ridge')", "kernel_model_train('m_new', 'SELECT f, y FROM d')",
	"kernel_model_deploy('m_ridge', 2)", "kernel_model_drop('m_ridge', 1)", "kernel_model_drop('m_ghost')",
	"kernel_model_reassign('alice', 'postgres')")
{
	my ($fname) = $call =~ /^(\w+)/;
	like(sql("\\set VERBOSITY verbose\nSELECT $call", fails => 1),
		qr/ERROR:  55000: $fname needs the kernel_ml $current_re catalog\nDETAIL:  [^\n]*kernel_ml 0\.3\.0\.\nHINT:  Run ALTER EXTENSION kernel_ml UPDATE\./,
		"$call on the 0.3.0 catalog: 55000, asks for the update");
}
is(sql($catalog) . ' ' . sql($names), "$catalog030 $names030", 'and the catalog is unchanged');

is(sql(q{ALTER EXTENSION kernel_ml UPDATE; SELECT extversion FROM pg_extension WHERE extname = 'kernel_ml'}),
	$current, "ALTER EXTENSION kernel_ml UPDATE to $current");
is(sql($predictions), $before, "every prediction is identical, bit for bit, on $current");
is(sql($catalog) . ' ' . sql($names), "$catalog030 $names030", "the catalog's rows are those of 0.3.0");

# retrain: alice's model runs as alice with "$user", public
is(sql(q{SELECT version || ' ' || (metrics->>'rows') FROM kernel_model_retrain('m_ridge')}), '3 120',
	'a superuser retrains the 0.1.0 model m_ridge: version 3, after the highest (2)');
is(sql(q{SELECT owner || ' ' || search_path FROM kernel_models WHERE name = 'm_ridge' AND version = 3}),
	'alice "$user", public', 'version 3 belongs to alice and stores the search_path it ran with (of the deployed version 1, from 0.1.0)');
is(sql(q{SELECT version FROM kernel_model_retrain('m_ridge')}, role => 'alice'), '4', 'alice retrains it too');
like(sql(q{SELECT version FROM kernel_model_retrain('m_ghost')}, fails => 1), qr/owner of model "m_ghost" does not exist/,
	'the model of the role dropped before 0.2.0 cannot be retrained');
like(sql(q{SELECT version FROM kernel_model_retrain('m_ghost2')}, fails => 1), qr/owner of model "m_ghost2" does not exist/,
	'nor that of the role dropped under 0.2.0');
like(sql(q{SELECT kernel_model_drop('m_ridge', NULL)}, fails => 1), qr/version must not be null/,
	'kernel_model_drop(name, NULL) is an error after the update');
is(sql(q{SELECT count(*) FROM kernel_models WHERE name = 'm_ridge'}), '4', 'and dropped nothing');
is(sql(q{SELECT version FROM kernel_model_train('m_fresh', 'SELECT f, y FROM d')}, role => 'alice'), '1',
	'a new model trains on the updated catalog');

# the updated extension is the fresh install
sub same_as_fresh
{
	my ($updated, $fresh, $what, $of) = @_;
	$of //= 'a fresh install';
	# compare line by line, so that a difference is shown as just that
	my %count;
	$count{$_}++ for split /\n/, $fresh;
	$count{$_}-- for split /\n/, $updated;
	my @diff = map { ($count{$_} > 0 ? 'only in fresh: ' : 'only in updated: ') . $_ }
	  grep { $count{$_} != 0 } sort keys %count;
	diag(join("\n", @diff)) if @diff;
	is(scalar(@diff), 0, "$what has the objects, definitions and comments of $of");
}
sql('CREATE DATABASE fresh');
sql('CREATE EXTENSION kernel_ml', db => 'fresh');
my $fresh = sql($describe, db => 'fresh');
ok(length($fresh) > 1000, 'described the fresh install');
like($fresh, qr/trigger CREATE TRIGGER kernel_models_restore/, 'the description covers the triggers');
same_as_fresh(sql($describe), $fresh, "the extension updated from 0.1.0 through 0.2.0 and 0.3.0 to $current");

# 0.2.0 -> 0.4.0 and 0.3.0 -> 0.4.0 directly
for my $from ('0.2.0', '0.3.0')
{
	my $db = 'from' . ($from =~ s/\.//gr);
	sql("CREATE DATABASE $db");
	sql("CREATE EXTENSION kernel_ml VERSION '$from'", db => $db);
	is(sql(q{SELECT extversion FROM pg_extension WHERE extname = 'kernel_ml'}, db => $db), $from, "installed version $from");
	is(sql(q{ALTER EXTENSION kernel_ml UPDATE; SELECT extversion FROM pg_extension WHERE extname = 'kernel_ml'}, db => $db),
		$current, "updated from $from to $current");
	same_as_fresh(sql($describe, db => $db), $fresh, "the extension updated from $from");
}

$node->stop;
done_testing();
