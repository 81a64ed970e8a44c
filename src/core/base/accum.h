/*
 * accum.h - fixed-size additive aggregate states: the sums over rows that
 * an approximate kernel method (Nystrom, random features) trains from.
 * Core: no PostgreSQL header, no allocation.
 *
 * An accumulator is one contiguous block that PostgreSQL stores as a
 * bytea: the varlena length word (set by the glue), a header, then the
 * payload of doubles its kind defines.  Its size depends on the kind and
 * the dimension m only, never on the number of rows, so the aggregate
 * updates it in place, two of them combine by adding (parallel workers,
 * Citus shards), and the bytea is its own serialized form.  The layout is
 * native-endian: states cross processes of one build, not machines of
 * different byte orders (the magic number tells a swapped state).
 *
 * Kinds (the switch over km_accum_kind is exhaustive: a new kind is a new
 * case in km_accum_payload_doubles and its own add function):
 *   KM_ACCUM_GRAM: for rows z (m features, e.g. k(x, c_j)) and targets y,
 *     sum z z^T (upper triangle, LAPACK packed column-major: entry (i, j),
 *     i <= j, at i + j (j + 1) / 2), sum z y (m), sum z (m), sum y, sum y^2.
 */
#ifndef KM_ACCUM_H
#define KM_ACCUM_H

#include <stddef.h>
#include <stdint.h>

#include "core.h"

#define KM_ACCUM_MAGIC 0x4B4D4143u	/* "KMAC" */
#define KM_ACCUM_VERSION 1

typedef enum km_accum_kind
{
	KM_ACCUM_GRAM = 1
} km_accum_kind;

/*
 * The state, laid out so that a bytea palloc'd by PostgreSQL (MAXALIGN'd)
 * holds it with every field and the payload naturally aligned.
 */
typedef struct km_accum
{
	int32_t		vl_len_;		/* PostgreSQL's varlena header: the glue's */
	uint32_t	magic;			/* KM_ACCUM_MAGIC */
	uint16_t	version;		/* KM_ACCUM_VERSION */
	uint16_t	kind;			/* km_accum_kind */
	uint32_t	dim;			/* m */
	int64_t		rows;			/* rows added */
	uint64_t	ndoubles;		/* payload length, fixed by kind and dim */
	double		data[];			/* the payload */
} km_accum;

/* Offsets into a KM_ACCUM_GRAM payload of dimension m. */
typedef struct km_accum_gram
{
	double	   *zz;				/* m (m + 1) / 2, packed upper triangle */
	double	   *zy;				/* m */
	double	   *zsum;			/* m */
	double	   *ysum;			/* 1 */
	double	   *yss;			/* 1 */
} km_accum_gram;

/*
 * Payload doubles and total bytes (header included) of a state of this
 * kind and dimension; 0 when dim is 0 or the size overflows a size_t.
 */
size_t		km_accum_payload_doubles(km_accum_kind kind, uint32_t dim);
size_t		km_accum_bytes(km_accum_kind kind, uint32_t dim);

/* Fill the header and zero the payload of km_accum_bytes(kind, dim) bytes. */
void		km_accum_init(km_accum *acc, km_accum_kind kind, uint32_t dim);

/*
 * Check a state of len bytes (header included) as untrusted input: magic,
 * version, a known kind, its dimension and payload length agreeing with
 * len, a row count >= 0, and a finite payload.
 */
km_status	km_accum_validate(const km_accum *acc, size_t len, km_error *err);

/* The parts of a KM_ACCUM_GRAM payload. */
km_accum_gram km_accum_gram_parts(km_accum *acc);

/* Doubles of scratch km_accum_gram_add needs: m x m. */
size_t		km_accum_gram_scratch_doubles(uint32_t dim);

/*
 * Add a block of rows (rows x m, row-major) and their targets: Z^T Z into
 * the packed triangle (km_packed_syrk_add) and one dgemv.
 */
void		km_accum_gram_add(km_accum *acc, const double *Z, const double *y,
							  size_t rows, double *scratch, km_interrupt_fn interrupt);

/*
 * packed += Z^T Z for a row-major rows x m block Z, the upper triangle
 * packed by columns (column j at j (j + 1) / 2).  One dsyrk of 512 rows
 * at m = 8192 is 17 Gflop, seconds that a BLAS call cannot interrupt, so
 * a large block is done in panels of columns [j0, j1),
 * S(0:j1, j0:j1) = A(0:j1, :) A(j0:j1, :)^T with A = Z^T, each of at most
 * KM_PIECE_FLOPS, with an interrupt check after each.  scratch: m x m.
 */
#define KM_PIECE_FLOPS 1e9
void		km_packed_syrk_add(double *packed, const double *Z, size_t m,
							   size_t rows, double *scratch,
							   km_interrupt_fn interrupt);

/*
 * a += b for two states over disjoint rows; KM_ERR_INVALID (a does not
 * change) unless both have the same kind and dimension.
 */
km_status	km_accum_combine(km_accum *a, const km_accum *b, km_error *err);

#endif							/* KM_ACCUM_H */
