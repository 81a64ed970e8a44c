# Nothing another role plants on the search path runs when the extension is
# installed, updated or used (issue 29, point 1; point 12 at the end).
#
# An extension script runs with the extension's schema on the search path;
# a role with CREATE on that schema can plant there a function, aggregate or
# operator that matches a call better than pg_catalog's -- array_agg(jsonb)
# beside pg_catalog.array_agg(anynonarray) -- and a view, constraint or
# function body bound to it then runs that role's code as whoever uses the
# object: a superuser reading kernel_models_overview.
#
# 1. The static check: test/check_sql_qualified.py passes on the installed
#    install and upgrade scripts (and, with the clone's history, on the SQL
#    strings of src/ at HEAD), and flags the released 0.3.0 install script
#    (its unqualified array_agg among the rest).
# 2. An unprivileged role "mallory", with CREATE on public, plants shadows
#    there: for every pg_catalog function or aggregate name that the
#    installed scripts or the library's SQL strings call, and every argument
#    types (from a broad list of concrete types; arities pg_catalog's
#    functions of that name take) for which pg_catalog's resolution needs a
#    coercion or a polymorphic match, a function or aggregate of exactly
#    those types returning what pg_catalog's would; and for every operator
#    name the scripts use or syntax hides (IN, BETWEEN, LIKE, NULLIF, ...),
#    every pair of those types likewise.  Each one records that it ran (a
#    WARNING in the server log and a row in a table everyone may insert into)
#    and returns a NULL of the right type.  A call written unqualified in a
#    test session is shown to reach them.
# 3. With them in place (the same planted database copied for each case):
#    CREATE EXTENSION kernel_ml; and CREATE EXTENSION ... VERSION '0.1.0',
#    '0.2.0', '0.3.0' (released scripts, test/upgrade/) followed by ALTER
#    EXTENSION kernel_ml UPDATE.  After each, as the superuser with the
#    default search_path: named models are trained (exact and approximate,
#    regression and classification: the SQL passes of the catalog), every
#    view of the extension is read, every function and aggregate of the
#    extension is called with sample arguments (errors are fine; the
#    support functions run through their aggregates, the restore trigger
#    through an INSERT), and no planted object ran -- during the install or
#    update script, or after.
# 4. test/fuzz/sql_fuzz.py runs twice on one database (it dropped its
#    models with kernel_model_drop(name, NULL), an error since 0.3.0).
#
# Uses PostgreSQL::Test::Cluster and the installed extension; run it with
# test/tap.sh (which puts the released install scripts into the share
# directory and passes KM_SOURCE_DIR).
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $bindir = `pg_config --bindir`;
chomp $bindir;
(my $install = $bindir) =~ s{/bin$}{};
my $share = `pg_config --sharedir`;
my $pkglib = `pg_config --pkglibdir`;
chomp($share, $pkglib);
$share .= '/extension';

sub slurp { my ($f) = @_; open(my $fh, '<:raw', $f) or die "$f: $!"; local $/; return <$fh>; }
my ($default) = slurp("$share/kernel_ml.control") =~ /^default_version\s*=\s*'([^']+)'/m;
my $python = -x '/usr/bin/python3' ? '/usr/bin/python3' : 'python3';

# --- 1. the static check
my @scripts = ("$share/kernel_ml--$default.sql", sort glob("$share/kernel_ml--*--*.sql"));
my ($out, $err) = ('', '');
IPC::Run::run([ $python, 'test/check_sql_qualified.py', @scripts ], '>', \$out, '2>', \$err);
my $rc = $? >> 8;
diag($out . $err) if $rc != 0;
is($rc, 0, 'check_sql_qualified.py: every call, operator and cast in the install and upgrade scripts is qualified ('
	  . scalar(@scripts) . ' scripts)');
($out, $err) = ('', '');
IPC::Run::run([ $python, 'test/check_sql_qualified.py', 'test/upgrade/kernel_ml--0.3.0.sql' ], '>', \$out, '2>', \$err);
like($out, qr/:\d+: array_agg\(\.\.\.\) without a schema/, 'and it flags the unqualified array_agg of the released 0.3.0 script');
SKIP:
{
	skip 'KM_SOURCE_DIR is not set: the SQL strings of src/ are not checked', 1 unless $ENV{KM_SOURCE_DIR};
	my $src = PostgreSQL::Test::Utils::tempdir('src');
	system("git -c safe.directory='*' --git-dir='$ENV{KM_SOURCE_DIR}' archive HEAD src | tar -C '$src' -xf -") == 0
	  or skip 'cannot extract src/ from the clone', 1;
	my @c = sort glob("$src/src/*/*.c");
	($out, $err) = ('', '');
	IPC::Run::run([ $python, 'test/check_sql_qualified.py', '--c', @c ], '>', \$out, '2>', \$err);
	$rc = $? >> 8;
	diag($out . $err) if $rc != 0;
	is($rc, 0, 'and every SQL string the library issues (' . scalar(@c) . ' C files of HEAD)');
}

# --- 2. the shadows
my $node = PostgreSQL::Test::Cluster->new('shadows', install_path => $install);
$node->init;
$node->start;

# names the scripts and the library's SQL call, operators they use
my $text = join("\n", map { slurp($_) } sort glob("$share/kernel_ml--*.sql"));
my $so = slurp("$pkglib/kernel_ml.so");
$text .= "\n" . join("\n", grep { /\b(SELECT|INSERT|UPDATE|DELETE|COALESCE|OPERATOR)\b/ } $so =~ /([\x20-\x7e\n\t]{8,})/g);
my %names = map { lc($_) => 1 } $text =~ /\b([A-Za-z_][A-Za-z0-9_]*)\s*\(/g;
my %ops = map { $_ => 1 } ($text =~ /OPERATOR\(\w+\.([^)\s]+)\)/g), ($text =~ /(?<![-+*\/<>=~!@#%^&|`?])([-+*\/<>=~!@#%^&|`?]{1,3})(?![-+*\/<>=~!@#%^&|`?])/g),
  split(' ', '= <> < > <= >= + - * / % ^ || ~~ ~~* !~~ !~~* ~ !~ ? ?| ?& @> <@ -> ->> #> #>> #- && @@');
# a name that is no pg_catalog function plants nothing (checked in SQL)
my $names = join(' ', sort grep { /^[a-z_][a-z0-9_]*$/ } keys %names);
my $ops = join(' ', sort grep { !/--|\/\*|\*\// } keys %ops);

$node->safe_psql('postgres', q{CREATE ROLE mallory LOGIN; CREATE DATABASE shadowed;});
$node->safe_psql('shadowed', q{GRANT CREATE ON SCHEMA public TO mallory;});

# mallory's session resolves only in pg_catalog (search_path = pg_catalog)
# while it plants: its own probes must not run what it has just planted
my $plant = q{
SET search_path = pg_catalog;
SELECT set_config('shadow.names', :'names', false), set_config('shadow.ops', :'ops', false) \gset
CREATE TABLE public.shadow_log (what text, ran_as text DEFAULT pg_catalog.current_user());
GRANT INSERT ON public.shadow_log TO PUBLIC;
CREATE FUNCTION public.shadow_ran(what text) RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
  RAISE WARNING 'kernel_ml shadow ran: %', what;
  INSERT INTO public.shadow_log (what) VALUES (what);
END $f$;
DO $plant$
DECLARE
  names text[] := string_to_array(current_setting('shadow.names'), ' ');
  ops text[] := string_to_array(current_setting('shadow.ops'), ' ');
  types text[] := ARRAY['boolean', 'smallint', 'integer', 'bigint', 'numeric', 'real', 'double precision',
    'text', 'character varying', 'character', 'name', '"char"', 'bytea', 'json', 'jsonb', 'oid', 'regclass',
    'regrole', 'regproc', 'regprocedure', 'regtype', 'regnamespace', 'timestamp with time zone',
    'timestamp without time zone', 'date', 'interval', 'uuid', 'double precision[]', 'real[]', 'text[]',
    'integer[]', 'bigint[]', 'jsonb[]', 'bytea[]', 'name[]', 'oid[]', 'boolean[]'];
  few text[] := ARRAY['text', 'name', 'oid', 'integer', 'bigint', 'double precision', 'numeric', 'jsonb',
    'bytea', 'regclass', 'regrole', 'double precision[]', 'boolean'];
  n text; o text; k int; combo text[]; ret regtype; agg boolean; srf boolean;
  funcs int := 0; aggs int := 0; opers int := 0; fn text; sig text; argl text;
BEGIN
  FOREACH n IN ARRAY names LOOP
    FOR k IN 0..3 LOOP
      -- arities that pg_catalog's functions of this name take
      CONTINUE WHEN NOT EXISTS (SELECT FROM pg_proc p WHERE p.pronamespace = 'pg_catalog'::regnamespace
        AND p.proname = n AND (p.pronargs = k OR (p.provariadic <> 0 AND p.pronargs - 1 <= k)
          OR (p.pronargs - p.pronargdefaults <= k AND k <= p.pronargs)));
      agg := EXISTS (SELECT FROM pg_proc p WHERE p.pronamespace = 'pg_catalog'::regnamespace
                     AND p.proname = n AND p.prokind = 'a');
      srf := EXISTS (SELECT FROM pg_proc p WHERE p.pronamespace = 'pg_catalog'::regnamespace
                     AND p.proname = n AND p.proretset);
      FOR combo IN SELECT c FROM (
          SELECT ARRAY[]::text[] AS c WHERE k = 0
          UNION ALL SELECT ARRAY[a] FROM unnest(types) a WHERE k = 1
          UNION ALL SELECT ARRAY[a, b] FROM unnest(types) a, unnest(types) b WHERE k = 2
          UNION ALL SELECT ARRAY[a, b, c] FROM unnest(few) a, unnest(few) b, unnest(few) c WHERE k = 3) s LOOP
        sig := array_to_string(combo, ', ');
        -- pg_catalog has exactly these argument types: a shadow would lose
        CONTINUE WHEN to_regprocedure(format('pg_catalog.%I(%s)', n, sig)) IS NOT NULL;
        argl := (SELECT string_agg(format('NULL::%s', t), ', ') FROM unnest(combo) t);
        -- what pg_catalog's function returns for these arguments, without
        -- running it (CASE WHEN false folds to a typed NULL); no match: no
        -- call of the scripts can have these types
        BEGIN
          EXECUTE format('SELECT pg_typeof(CASE WHEN false THEN pg_catalog.%I(%s) END)', n, coalesce(argl, ''))
            INTO ret;
        EXCEPTION WHEN OTHERS THEN
          CONTINUE;
        END;
        CONTINUE WHEN ret IS NULL OR ret::text IN ('record', 'trigger', 'internal', 'unknown', 'event_trigger');
        IF agg THEN
          aggs := aggs + 1;
          fn := format('shadow_agg_%s', aggs);
          EXECUTE format('CREATE FUNCTION public.%I(%s) RETURNS %s LANGUAGE plpgsql AS $b$BEGIN PERFORM public.shadow_ran(%L); RETURN NULL; END$b$',
                         fn, array_to_string(ARRAY[ret::text] || combo, ', '), ret, format('aggregate %s(%s)', n, sig));
          EXECUTE format('CREATE FUNCTION public.%I(%s) RETURNS %s LANGUAGE plpgsql AS $b$BEGIN PERFORM public.shadow_ran(%L); RETURN NULL; END$b$',
                         fn || '_final', ret, ret, format('aggregate %s(%s)', n, sig));
          EXECUTE format('CREATE AGGREGATE public.%I(%s) (SFUNC = public.%I, STYPE = %s, FINALFUNC = public.%I)',
                         n, CASE WHEN k = 0 THEN '*' ELSE sig END, fn, ret, fn || '_final');
        ELSE
          funcs := funcs + 1;
          EXECUTE format('CREATE FUNCTION public.%I(%s) RETURNS %s%s LANGUAGE plpgsql AS $b$BEGIN PERFORM public.shadow_ran(%L); RETURN%s; END$b$',
                         n, sig, CASE WHEN srf THEN 'SETOF ' ELSE '' END, ret, format('function %s(%s)', n, sig),
                         CASE WHEN srf OR ret = 'void'::regtype THEN '' ELSE ' NULL' END);
        END IF;
      END LOOP;
    END LOOP;
  END LOOP;
  FOREACH o IN ARRAY ops LOOP
    FOR combo IN SELECT ARRAY[a, b] FROM unnest(types) a, unnest(types) b
                 UNION ALL SELECT ARRAY['NONE', b] FROM unnest(types) b LOOP
      CONTINUE WHEN EXISTS (SELECT FROM pg_operator p WHERE p.oprnamespace = 'pg_catalog'::regnamespace
        AND p.oprname = o AND p.oprleft = CASE WHEN combo[1] = 'NONE' THEN 0 ELSE combo[1]::regtype::oid END
        AND p.oprright = combo[2]::regtype::oid);
      BEGIN
        EXECUTE format('SELECT pg_typeof(CASE WHEN false THEN %s OPERATOR(pg_catalog.%s) NULL::%s END)',
                       CASE WHEN combo[1] = 'NONE' THEN '' ELSE format('NULL::%s', combo[1]) END, o, combo[2]) INTO ret;
      EXCEPTION WHEN OTHERS THEN
        CONTINUE;
      END;
      CONTINUE WHEN ret IS NULL OR ret::text IN ('record', 'internal', 'unknown');
      opers := opers + 1;
      fn := format('shadow_op_%s', opers);
      IF combo[1] = 'NONE' THEN
        EXECUTE format('CREATE FUNCTION public.%I(%s) RETURNS %s LANGUAGE plpgsql AS $b$BEGIN PERFORM public.shadow_ran(%L); RETURN NULL; END$b$',
                       fn, combo[2], ret, format('operator %s %s', o, combo[2]));
        EXECUTE format('CREATE OPERATOR public.%s (RIGHTARG = %s, FUNCTION = public.%I)', o, combo[2], fn);
      ELSE
        EXECUTE format('CREATE FUNCTION public.%I(%s, %s) RETURNS %s LANGUAGE plpgsql AS $b$BEGIN PERFORM public.shadow_ran(%L); RETURN NULL; END$b$',
                       fn, combo[1], combo[2], ret, format('operator %s %s %s', combo[1], o, combo[2]));
        EXECUTE format('CREATE OPERATOR public.%s (LEFTARG = %s, RIGHTARG = %s, FUNCTION = public.%I)', o, combo[1], combo[2], fn);
      END IF;
    END LOOP;
  END LOOP;
  RAISE NOTICE 'planted % functions, % aggregates, % operators', funcs, aggs, opers;
END $plant$;
};
my $started = time;
my ($ret, $stdout, $stderr) = $node->psql('shadowed', $plant,
	extra_params => [ '-U', 'mallory', '-v', 'ON_ERROR_STOP=1', '-v', "names=$names", '-v', "ops=$ops" ]);
is($ret, 0, 'mallory plants the shadows') or diag($stderr);
my ($funcs, $aggs, $opers) = $stderr =~ /planted (\d+) functions, (\d+) aggregates, (\d+) operators/;
note(sprintf('planted %d functions, %d aggregates and %d operators in %d s (names: %s; operators: %s)',
	$funcs // 0, $aggs // 0, $opers // 0, time - $started, $names, $ops));
ok(($aggs // 0) > 0 && ($opers // 0) > 0, 'shadow aggregates and operators were planted');

# every statement of the superuser below is written qualified, so that only
# the extension's own SQL could reach a shadow; the test's own queries of the
# catalogs resolve in pg_catalog alone
my $meta = 'SET search_path = pg_catalog; ';
my $log_offset = 0;
sub shadows_ran
{
	my ($db) = @_;
	my $rows = $node->safe_psql($db,
		$meta . q{SELECT string_agg(w, '; ' ORDER BY w) FROM (SELECT s.what || ' as ' || s.ran_as || ' (' || count(*) || ' calls)' AS w
		          FROM public.shadow_log s GROUP BY s.what, s.ran_as) t});
	my $log = slurp($node->logfile);
	my $new = substr($log, $log_offset);
	$log_offset = length($log);
	my %warned = map { $_ => 1 } $new =~ /WARNING:  kernel_ml shadow ran: ([^\n]*)/g;
	return join('; ', grep { $_ ne '' } $rows, (%warned ? 'server log: ' . join(', ', sort keys %warned) : ''));
}
sub clear_log
{
	my ($db) = @_;
	$node->safe_psql($db, 'TRUNCATE public.shadow_log');
	$log_offset = length(slurp($node->logfile));
}

clear_log('shadowed');
$node->safe_psql('shadowed', q{SELECT array_agg(x) FROM (VALUES ('{}'::pg_catalog.jsonb)) v(x)});
like(shadows_ran('shadowed'), qr/aggregate array_agg\(jsonb\) as postgres/,
	'an unqualified array_agg(jsonb) of the superuser reaches mallory\'s aggregate (the shadows work)');
clear_log('shadowed');

# --- 3. install and update with the shadows in place, then use everything
my $data = q{
SET search_path = pg_catalog;
CREATE TABLE public.d AS
  SELECT i, ARRAY[sin(i), cos(0.7 * i), (i % 5) / 5.0]::float8[] AS f,
         2 * sin(i) + cos(0.7 * i) * (i % 5) / 5.0 AS y,
         CASE WHEN sin(i) > 0.3 THEN 'a' WHEN cos(i) > 0 THEN 'b' ELSE 'c' END AS label,
         sin(1.7 * i) > 0 AS b
  FROM generate_series(1, 80) i;
};
my $approx = '{"approximation": "nystrom", "components": 12, "gamma": 0.5, "lambda": 0.01, "seed": 3}';
my $train = qq{
RESET search_path;
SELECT * FROM public.kernel_model_train('m_ridge'::pg_catalog.text, 'SELECT f, y FROM public.d'::pg_catalog.text, '{"lambda": 0.1, "deploy": "always"}'::pg_catalog.jsonb);
SELECT * FROM public.kernel_model_train('m_nys'::pg_catalog.text, 'SELECT f, y FROM public.d'::pg_catalog.text, '$approx'::pg_catalog.jsonb);
SELECT * FROM public.kernel_model_train('m_svm'::pg_catalog.text, 'SELECT f, label FROM public.d'::pg_catalog.text, '{"method": "svm", "probability": true, "deploy": "always"}'::pg_catalog.jsonb);
SELECT * FROM public.kernel_model_train('m_logit'::pg_catalog.text, 'SELECT f, b::pg_catalog.text FROM public.d'::pg_catalog.text, '{"method": "logistic", "approximation": "nystrom", "components": 10, "lambda": 0.01}'::pg_catalog.jsonb);
SELECT * FROM public.kernel_model_train('m_svr'::pg_catalog.text, 'SELECT f, y FROM public.d'::pg_catalog.text, '{"method": "svr", "approximation": "rff", "components": 16, "lambda": [0.01, 0.1]}'::pg_catalog.jsonb);
SELECT * FROM public.kernel_model_retrain('m_ridge'::pg_catalog.text);
CREATE TABLE public.sample AS
  SELECT (SELECT public.kernel_train(d.f, d.y) FROM public.d) AS model,
         (SELECT public.kernel_train(d.f, d.label, '{"method": "logistic"}'::pg_catalog.jsonb) FROM public.d) AS cmodel,
         (SELECT public.kernel_basis(d.f, '$approx'::pg_catalog.jsonb) FROM public.d) AS basis;
};
# sample arguments by type (in a function taking a model name: the
# classifier's for the class and probability functions)
sub sample
{
	my ($fname, $type, $pos, $agg) = @_;
	my $cls = $fname =~ /class|proba/;
	if ($agg)
	{
		return 'd.f' if $type eq 'double precision[]';
		return 'd.y' if $type eq 'double precision';
		return 'd.label' if $type eq 'text';
		return 'd.b' if $type eq 'boolean';
		return "'$approx'::pg_catalog.jsonb" if $type eq 'jsonb';
		return '(SELECT s.basis FROM public.sample s)' if $type eq 'bytea';
	}
	return q{'{0.5, 1, 0.25}'::pg_catalog.float8[]} if $type eq 'double precision[]';
	return '0.25::pg_catalog.float8' if $type eq 'double precision';
	return '7::pg_catalog.int8' if $type eq 'bigint';
	return '1::pg_catalog.int4' if $type eq 'integer';
	return 'true' if $type eq 'boolean';
	return q{'postgres'::pg_catalog.regrole} if $type eq 'regrole';
	return q{'{}'::pg_catalog.jsonb} if $type eq 'jsonb';
	if ($type eq 'bytea')
	{
		return '(SELECT s.basis FROM public.sample s)' if $fname =~ /basis/;
		return '(SELECT s.' . ($cls ? 'cmodel' : 'model') . ' FROM public.sample s)';
	}
	if ($type eq 'text')
	{
		return q{'SELECT f, y FROM public.d'::pg_catalog.text} if $fname eq 'kernel_model_train' && $pos == 1;
		return q{'a'::pg_catalog.text} if $pos == 2;
		return q{'postgres'::pg_catalog.text} if $fname eq 'kernel_model_reassign';
		return $fname eq 'kernel_model_train' ? q{'m_new'::pg_catalog.text}
		  : $cls ? q{'m_svm'::pg_catalog.text} : q{'m_ridge'::pg_catalog.text};
	}
	return "NULL::$type";
}

for my $from ('', '0.1.0', '0.2.0', '0.3.0')
{
	my $db = $from eq '' ? 'fresh' : 'from' . ($from =~ s/\.//gr);
	my $what = $from eq '' ? "CREATE EXTENSION kernel_ml ($default)" : "the update from $from";
	$node->safe_psql('postgres', "CREATE DATABASE $db TEMPLATE shadowed");
	if ($from ne '')
	{
		$node->safe_psql($db, "CREATE EXTENSION kernel_ml VERSION '$from'");
		my $old = shadows_ran($db);
		note("while the released $from script ran: " . ($old || 'no shadow ran'));
		clear_log($db);
		$node->safe_psql($db, 'ALTER EXTENSION kernel_ml UPDATE');
	}
	else
	{
		$node->safe_psql($db, 'CREATE EXTENSION kernel_ml');
	}
	is($node->safe_psql($db, $meta . q{SELECT e.extversion FROM pg_extension e WHERE e.extname = 'kernel_ml'}),
		$default, "$what: version $default");
	is(shadows_ran($db), '', "$what: no planted object ran during the script");

	my ($r, $o, $e) = $node->psql($db, $data . $train, extra_params => [ '-v', 'ON_ERROR_STOP=1' ]);
	is($r, 0, "$what: named models train (exact, nystrom, svm, logistic and svr by passes), aggregates too") or diag($e);

	# every view, then every function and aggregate (drops and reassign last)
	my $members = q{FROM pg_depend d WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
  AND d.refobjid = (SELECT e.oid FROM pg_extension e WHERE e.extname = 'kernel_ml')};
	my @views = split /\n/, $node->safe_psql($db, $meta . qq{
SELECT c.relname FROM pg_class c WHERE c.relkind = 'v'
  AND c.oid IN (SELECT d.objid $members AND d.classid = 'pg_class'::regclass) ORDER BY 1});
	my @procs = split /\n/, $node->safe_psql($db, $meta . qq{
SELECT p.proname || '|' || p.prokind::text || '|'
       || array_to_string(array(SELECT format_type(t, NULL) FROM unnest(p.proargtypes::oid[]) t), ',')
       || '|' || p.prorettype::regtype::text
FROM pg_proc p WHERE p.oid IN (SELECT d.objid $members AND d.classid = 'pg_proc'::regclass)
ORDER BY 1});
	my (@calls, @late, %called);
	for my $p (@procs)
	{
		my ($fname, $kind, $types, $rettype) = split /\|/, $p, 4;
		my @types = split /,/, $types;
		if (grep { $_ eq 'internal' } @types)
		{
			$called{$fname} = 'through its aggregate';
			next;
		}
		my $args = join(', ', map { sample($fname, $types[$_], $_, $kind eq 'a') } 0 .. $#types);
		my $call;
		if ($kind eq 'a') { $call = "SELECT public.$fname($args) FROM public.d;"; }
		elsif ($rettype eq 'record' || $fname =~ /^kernel_model_(train|retrain)$/) { $call = "SELECT * FROM public.$fname($args);"; }
		else { $call = "SELECT public.$fname($args);"; }
		$called{$fname} = 'called';
		if ($fname =~ /^kernel_model_(drop|reassign)$/) { push @late, $call; }
		else { push @calls, $call; }
	}
	my $restore = q{
INSERT INTO public.kernel_models (name, version, owner, source_query, options, model, metrics, n_train, n_features)
SELECT 'm_restored', 3, m.owner, m.source_query, m.options, m.model, m.metrics, m.n_train, m.n_features
FROM public.kernel_models m WHERE m.name OPERATOR(pg_catalog.=) 'm_ridge' AND m.version OPERATOR(pg_catalog.=) 1;
INSERT INTO public.kernel_model_names (name, owner, owner_name, last_version) VALUES ('m_restored2', 0, 'postgres', 2);
};
	my $read = join("\n", map { "SELECT * FROM public.$_;" } @views);
	my $script = join("\n", $read, @calls, $restore, $read, @late, $read);
	($r, $o, $e) = $node->psql($db, $script, on_error_stop => 0);
	my @xx = $e =~ /(ERROR:  [^\n]*)/g;
	note(sprintf('%s: %d views read, %d calls, %d errors (expected: sample arguments)', $what, scalar(@views) * 3,
		scalar(@calls) + scalar(@late), scalar(@xx)));
	ok(@views >= 1 && @calls >= 20, "$what: read every view (@views) and called every function and aggregate");
	is($node->safe_psql($db, $meta . q{SELECT string_agg(o.name || ' ' || o.versions, ',' ORDER BY o.name) FROM public.kernel_models_overview o}),
		'm_logit 1,m_new 1,m_nys 1,m_restored 1,m_svm 1,m_svr 1',
		"$what: the overview lists what was trained and restored, not what was dropped");
	is(shadows_ran($db), '', "$what: no planted object ran reading the views and calling the functions");
}

# --- 4. the SQL fuzzer twice on one database
SKIP:
{
	skip 'python3 with psycopg2 is needed for test/fuzz/sql_fuzz.py', 3
	  if system($python, '-c', 'import psycopg2') != 0;
	$node->safe_psql('postgres', 'CREATE DATABASE fuzz');
	$node->safe_psql('fuzz', 'CREATE EXTENSION kernel_ml');
	local $ENV{PGHOST} = $node->host;
	local $ENV{PGPORT} = $node->port;
	local $ENV{PGDATABASE} = 'fuzz';
	for my $run (1, 2)
	{
		($out, $err) = ('', '');
		IPC::Run::run([ $python, 'test/fuzz/sql_fuzz.py', '--seed', 7, '--statements', 120, '--seconds', 20 ],
			'>', \$out, '2>', \$err);
		like($out . $err, qr/^\d+ passed, \d+ failed$/m, "sql_fuzz.py run $run on one database reaches its summary")
		  or diag(substr($out . $err, -2000));
	}
	is($node->safe_psql('fuzz', q{SELECT count(*) FROM kernel_models WHERE name LIKE 'fuzz%'}), '0',
		'and drops the models it trained');
}

$node->stop;
done_testing();
