# kernel_predict(bytea, ...) caches the decoded model across rows; it must
# recognise a model by its bytes, not by its length, header and checksum
# (issue 10, point 6).  Two different valid models with the same length,
# header and payload CRC-32C are made by changing one alpha and fixing four
# bytes elsewhere so that the CRC is unchanged; scoring rows with both in one
# query must give each row its own model's prediction.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# CRC-32C (Castagnoli), reflected, as PostgreSQL computes it
my @table;
for my $i (0 .. 255)
{
	my $c = $i;
	$c = ($c & 1) ? (($c >> 1) ^ 0x82F63B78) : ($c >> 1) for 1 .. 8;
	$table[$i] = $c;
}

sub crc32c
{
	my ($s) = @_;
	my $crc = 0xFFFFFFFF;
	$crc = $table[($crc ^ $_) & 0xFF] ^ ($crc >> 8) for unpack('C*', $s);
	return $crc ^ 0xFFFFFFFF;
}

my $node = PostgreSQL::Test::Cluster->new('identity');
$node->init;
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION kernel_ml;
	CREATE TABLE data AS
	SELECT i AS id, ARRAY[sin(i), cos(i)]::float8[] AS f, sin(2 * i) AS y
	FROM generate_series(1, 12) i;
});

my $hex = $node->safe_psql('postgres',
	q{SELECT encode(kernel_train(f, y, '{"lambda": 0.1}'), 'hex') FROM data});
my $a = pack('H*', $hex);
# format 2 (src/core/model/model.h): an 80-byte header (n_features at 28), then the
# SCALER section (12 bytes of tag, flags, length; 2d doubles; a CRC), then
# the EXPANSION section (n, reserved, alpha[n], X[n * d]) whose CRC covers
# its tag .. payload
my $d = unpack('V', substr($a, 28, 4));
my $payload_start = 80 + 12 + 16 * $d + 4;
my $n = unpack('V', substr($a, $payload_start + 12, 4));
my $payload_len = 12 + 8 + 8 * $n + 8 * $n * $d;
my $alpha = $payload_start + 12 + 8;

# model B: alpha[0] + 1, then the low four bytes of alpha[n - 1] chosen so
# that the payload CRC stays the same (CRC is affine over GF(2): solve the
# 32 x 32 system for the bits of those four bytes)
my $b = $a;
substr($b, $alpha, 8) = pack('d<', unpack('d<', substr($a, $alpha, 8)) + 1.0);
my $fix = $alpha + 8 * ($n - 1);
my $target = crc32c(substr($a, $payload_start, $payload_len));
my $base = crc32c(substr($b, $payload_start, $payload_len));
my @rows;
for my $bit (0 .. 31)
{
	my $t = $b;
	my $byte = $fix + int($bit / 8);
	substr($t, $byte, 1) = chr(ord(substr($t, $byte, 1)) ^ (1 << ($bit % 8)));
	push @rows, [ crc32c(substr($t, $payload_start, $payload_len)) ^ $base, 1 << $bit ];
}
# Gaussian elimination: find bits whose effects XOR to $base ^ $target
my $want = $base ^ $target;
my $flips = 0;
my @basis;
for my $r (@rows)
{
	my ($v, $m) = @$r;
	for my $p (@basis)
	{
		($v, $m) = ($v ^ $p->[0], $m ^ $p->[1]) if $v & $p->[2];
	}
	next if $v == 0;
	my $pivot = 1;
	$pivot <<= 1 until $v & $pivot;
	for my $p (@basis)
	{
		($p->[0], $p->[1]) = ($p->[0] ^ $v, $p->[1] ^ $m) if $p->[0] & $pivot;
	}
	push @basis, [ $v, $m, $pivot ];
}
is(scalar(@basis), 32, 'the four bytes reach every CRC');
for my $p (@basis)
{
	if ($want & $p->[2])
	{
		$want ^= $p->[0];
		$flips ^= $p->[1];
	}
}
is($want, 0, 'the system is solved');
for my $bit (0 .. 31)
{
	next unless $flips & (1 << $bit);
	my $byte = $fix + int($bit / 8);
	substr($b, $byte, 1) = chr(ord(substr($b, $byte, 1)) ^ (1 << ($bit % 8)));
}

isnt($b, $a, 'the models differ');
is(length($b), length($a), 'same length');
is(substr($b, 0, 80), substr($a, 0, 80), 'same header');
is(substr($b, $payload_start + $payload_len, 4), substr($a, $payload_start + $payload_len, 4),
	'same section CRC');
is(crc32c(substr($b, $payload_start, $payload_len)), $target, 'the CRC is right');

my $ha = unpack('H*', $a);
my $hb = unpack('H*', $b);
$node->safe_psql('postgres', qq{
	CREATE TABLE models (k int, m bytea);
	INSERT INTO models VALUES (0, decode('$ha', 'hex')), (1, decode('$hb', 'hex'));
});
is($node->safe_psql('postgres',
	q{SELECT kernel_model_info(m)->>'n_train' FROM models WHERE k = 1}),
	$n, 'model B is valid');

# each model alone, one query per model
my %alone;
for my $k (0, 1)
{
	$alone{$k} = $node->safe_psql('postgres', qq{
		SET extra_float_digits = 3;
		SELECT string_agg(kernel_predict(m, f)::text, ',' ORDER BY id)
		FROM data, models WHERE k = $k});
}
isnt($alone{0}, $alone{1}, 'the two models predict differently');
my @pa = split /,/, $alone{0};
my @pb = split /,/, $alone{1};
my $expected = join(',', map { $_ % 2 == 0 ? $pa[$_ - 1] : $pb[$_ - 1] } 1 .. 12);

# both in one query, alternating row by row: from a table (in-line values),
# and from a CTE of literals
my $from_table = $node->safe_psql('postgres', q{
	SET extra_float_digits = 3;
	SELECT string_agg(p::text, ',' ORDER BY id) FROM (
		SELECT d.id, kernel_predict(CASE WHEN d.id % 2 = 0 THEN a.m ELSE b.m END, d.f) AS p
		FROM (SELECT * FROM data ORDER BY id) d, models a, models b
		WHERE a.k = 0 AND b.k = 1) s});
is($from_table, $expected, 'models from a table: each row scored by its own model');

my $from_cte = $node->safe_psql('postgres', qq{
	SET extra_float_digits = 3;
	WITH ms AS MATERIALIZED (SELECT decode('$ha', 'hex') AS a, decode('$hb', 'hex') AS b)
	SELECT string_agg(p::text, ',' ORDER BY id) FROM (
		SELECT d.id, kernel_predict(CASE WHEN d.id % 2 = 0 THEN ms.a ELSE ms.b END, d.f) AS p
		FROM (SELECT * FROM data ORDER BY id) d, ms) s});
is($from_cte, $expected, 'models from a CTE: each row scored by its own model');

$node->stop;
done_testing();
