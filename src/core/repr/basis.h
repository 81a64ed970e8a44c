/*
 * basis.h - the feature basis of an approximate model, built by an
 * aggregate whose state has a fixed size and combines (core, no PostgreSQL
 * headers, no allocation).
 *
 * The state (km_basis_state, the kernel_basis aggregate's bytea) holds
 *   - the scaler's moments per feature: count, mean and M2 (sum of squared
 *     deviations), combined as Chan, Golub and LeVeque's parallel update;
 *   - for nystrom, the m rows with the smallest keys (hash, row), where the
 *     hash is the glue's hash of the row's values and the seed: the same
 *     rows in any order or any plan keep the same centres, and two partial
 *     states combine by keeping the m smallest of both.  Equal rows have
 *     equal keys and are kept once (the centres are distinct rows).
 * Its size depends on d and m only.  Like km_accum it begins with the
 * varlena length word (the glue's) so its payload is double-aligned.
 *
 * The final basis (km_basis_finish) is a versioned, CRC'd byte string
 * that km_basis_decode checks as untrusted input and decodes to a
 * km_basis (approx.h): the scaler (mean, scale as km_standardize defines
 * them) and the standardized centres sorted by key; rff keeps the seed
 * only (W and b come from km_rff_draw).
 */
#ifndef KM_BASIS_H
#define KM_BASIS_H

#include <stddef.h>
#include <stdint.h>

#include "approx.h"

#define KM_BASIS_STATE_MAGIC 0x4B4D4253u	/* "KMBS" */
#define KM_BASIS_MAGIC 0x4B4D4246u	/* "KMBF" */
#define KM_BASIS_VERSION 1

typedef struct km_basis_state
{
	int32_t		vl_len_;		/* PostgreSQL's varlena header: the glue's */
	uint32_t	magic;			/* KM_BASIS_STATE_MAGIC */
	uint16_t	version;		/* KM_BASIS_VERSION */
	uint8_t		kind;			/* km_approx: NYSTROM or RFF */
	uint8_t		standardize;
	uint32_t	d;
	uint32_t	components;		/* m asked for */
	uint32_t	capacity;		/* centres kept at most: components (nystrom), 0 (rff) */
	uint32_t	n_centres;		/* centres kept so far */
	uint32_t	max_slot;		/* the slot of the largest key kept */
	uint32_t	kernel_type;	/* km_kernel_type */
	int32_t		degree;
	uint32_t	reserved;		/* 0 */
	double		gamma;
	double		coef0;
	uint64_t	seed;
	int64_t		rows;			/* rows the scaler saw */
	double		data[];			/* mean[d], m2[d], keys[capacity] (uint64),
								 * rows[capacity][d] */
} km_basis_state;

/* Bytes of a state; 0 when the size overflows or d is 0. */
size_t		km_basis_state_bytes(km_approx kind, uint32_t d, uint32_t components);

/* Fill the header of km_basis_state_bytes(...) bytes and zero the rest. */
void		km_basis_state_init(km_basis_state *st, km_approx kind,
								const km_kernel *kernel, bool standardize,
								uint32_t d, uint32_t components, uint64_t seed);

/*
 * The same over bytes the caller has zeroed already (a large state zeroed
 * in pieces between interrupt checks): the header only.
 */
void		km_basis_state_init_zeroed(km_basis_state *st, km_approx kind,
									   const km_kernel *kernel, bool standardize,
									   uint32_t d, uint32_t components, uint64_t seed);

/*
 * Check a state of len bytes as untrusted input: its header alone (O(1):
 * magic, version, kind, d, components and capacity against len, the
 * centre count and the slot of the largest key within the capacity, a
 * kernel the approximation serves), all
 * that km_basis_state_add needs to stay within the state; or the whole
 * state (O(size): every value finite, the largest key where the header
 * says), what combining and finishing need.  KM_ERR_FORMAT or
 * KM_ERR_VERSION when it fails.
 */
km_status	km_basis_state_check_header(const km_basis_state *st, size_t len,
										km_error *err);
km_status	km_basis_state_validate(const km_basis_state *st, size_t len,
									km_error *err);

/*
 * Add one row of d finite features, -0.0 already replaced by 0.0 (so equal
 * rows have equal bytes), whose hash (of those bytes and the seed) the
 * caller computed.
 */
void		km_basis_state_add(km_basis_state *st, const double *x, uint64_t hash);

/* a += b (both validated); KM_ERR_INVALID unless their settings agree. */
km_status	km_basis_state_combine(km_basis_state *a, const km_basis_state *b,
								   km_error *err);

/*
 * Bytes of a final basis of kind over d features with m centres or random
 * features (0 on overflow): what a state will finish into, sized before
 * its rows are read.
 */
size_t		km_basis_bytes(km_approx kind, uint32_t d, uint32_t m);

/* Bytes of the final basis of st, and of km_basis_finish's scratch. */
size_t		km_basis_final_bytes(const km_basis_state *st);
size_t		km_basis_finish_scratch_bytes(const km_basis_state *st);

/*
 * Write the final basis (km_basis_final_bytes(st) bytes at out, the first
 * 4 of them left to the glue's length word).  KM_ERR_INVALID for a state
 * without rows; KM_ERR_OVERFLOW when a mean or a standardized centre is
 * not finite (km_basis_decode would refuse the basis).  st does not change.
 */
km_status	km_basis_finish(const km_basis_state *st, void *out, void *scratch,
							km_error *err);

/*
 * Decode a final basis of len bytes (length word included) as untrusted
 * input; b points into bytes, which must be 8-byte aligned.  An rff basis
 * has W = b = NULL: draw them with km_rff_draw(b->kernel.gamma, b->seed,
 * b->d, b->m, ...).
 */
km_status	km_basis_decode(const void *bytes, size_t len, km_basis *b,
							km_error *err);

/*
 * Seal a final basis again (its checksum) after its values changed in
 * place: the refine passes move a decoded basis's centres in its bytes
 * (pipeline_centres.c), which then travel as a pass's point.
 */
void		km_basis_reseal(void *bytes, size_t len);

/* "components" asked for, of a basis km_basis_decode accepted. */
uint32_t	km_basis_components(const void *bytes);

/*
 * A kept row and its key, in the order of the reservoir and of cg's row
 * sample (learn/cg_sample.h): by key (the row's hash), then values.
 * km_row_ref_cmp is qsort's comparator over km_row_ref.
 */
typedef struct km_row_ref
{
	uint64_t	key;
	const double *row;
	uint32_t	d;
} km_row_ref;

int			km_row_ref_cmp(const void *a, const void *b);

#endif							/* KM_BASIS_H */
