/*
 * model.h - the binary model format (core, no PostgreSQL headers).
 *
 * All integers and doubles little-endian (<endian.h>).  kernel_train
 * writes format 2; format 1 (kernel_ml 0.1.0) is still read, into the same
 * km_model, and predicts bit-for-bit as before (test/fixtures).
 *
 * Format 2: a fixed header, then tagged sections.
 *
 *   offset size  field           rule
 *        0    4  magic "KMLM"
 *        4    2  format_version  2
 *        6    2  header_size     80
 *        8    8  total_size      bytes of the whole model
 *       16    1  task            km_task, the method's task
 *       17    1  method          km_method with ops (method.h)
 *       18    1  kernel          km_kernel_type
 *       19    1  standardize     0 or 1
 *       20    1  fit_intercept   0 or 1
 *       21    3  writer version  major, minor, patch
 *       24    4  degree          1 to 100 if the kernel uses it
 *       28    4  n_features      >= 1
 *       32    8  gamma           > 0 if the kernel uses it, else finite
 *       40    8  coef0           finite
 *       48    8  rows_seen       training rows used
 *       56    8  rows_skipped    rows skipped for a NULL
 *       64    8  intercept       finite
 *       72    4  section_count   sections that follow
 *       76    4  CRC-32C of bytes [0, 76)
 *       80       sections, each:
 *                  tag u16, flags u16 (bit 0: required; others 0),
 *                  length u64, payload[length], CRC-32C u32 of tag..payload
 *
 * Fields 16..72 are described once, by a table in model.c that drives
 * encoding, decoding, validation and kernel_model_info.  Sections, in
 * ascending tag order, each at most once:
 *
 *   tag  name       required  payload
 *     1  SCALER     yes       mean[d], scale[d] (scale > 0)
 *     2  EXPANSION  yes       n u32 (>= 1), reserved u32, alpha[n],
 *                             X[n * d] (row-major, standardized): the
 *                             kernel expansion f(x) = sum alpha_i K(x_i, x)
 *     3  METHOD     yes       the method's fields (km_method_ops.fields)
 *     4  TRAINING   yes       train_rmse
 *     5  SELECTION  no        cv u8, reserved u8, folds u16, best u32,
 *                             c u32 (>= 1), reserved u32,
 *                             c x (gamma, lambda, score, score_std)
 *
 * An unknown section with the required bit is KM_ERR_VERSION (a newer
 * writer's model this build cannot use); without it, it is skipped.  A new
 * method adds its fields (a new section type if it needs arrays), not a
 * format version.
 *
 * Format 1 (0.1.0), read only:
 *
 *   offset size  field
 *        0    4  magic "KMLM"
 *        4    2  format_version (1)
 *        6    2  header_size (144)
 *        8    8  total_size: bytes of the whole model, checksums included
 *       16    4  flags: 1 standardize, 2 fit_intercept, 4 converged; others 0
 *       20    1  kernel (km_kernel_type)
 *       21    1  method (km_method)
 *       22    2  reserved, 0
 *       24    4  degree (int32)
 *       28    4  max_iter (int32)
 *       32    4  iterations (int32)
 *       36    4  n_train (uint32, >= 1)
 *       40    4  n_features (uint32, >= 1)
 *       44    3  writer version: major, minor, patch
 *       47    1  reserved, 0
 *       48    8  rows_skipped (uint64)
 *       56    8  gamma
 *       64    8  coef0
 *       72    8  lambda
 *       80    8  learning_rate
 *       88    8  tol
 *       96    8  final_change
 *      104    8  jitter
 *      112    8  intercept
 *      120    8  train_rmse
 *      128    4  n_candidates (uint32, <= KM_MODEL_MAX_CANDIDATES; 0: no selection)
 *      132    1  cv (km_cv; 0 when n_candidates is 0)
 *      133    1  reserved, 0
 *      134    2  folds (uint16; >= 2 for k-fold, else 0)
 *      136    4  best: index of the chosen candidate (< n_candidates, or 0)
 *      140    4  CRC-32C of bytes [0, 140)
 *      144       mean[d], scale[d], alpha[n], X[n * d] (row-major, standardized),
 *                then n_candidates x (gamma, lambda, score, score_std);
 *                a score is NaN for a candidate that could not be fitted
 * total-4    4  CRC-32C of bytes [144, total - 4)
 *
 * In both, the header has its own checksum so that a flipped bit anywhere
 * past the version field reads as corruption, while a short buffer reads
 * as truncation.
 */
#ifndef KM_MODEL_H
#define KM_MODEL_H

#include "select.h"

#define KM_MODEL_MAGIC "KMLM"
#define KM_FORMAT_VERSION 2		/* written; 1 and 2 are read */
#define KM_MODEL_HEADER_SIZE 80
#define KM_MODEL_V1_HEADER_SIZE 144

/* Format 2 sections */
#define KM_SECTION_SCALER		1
#define KM_SECTION_EXPANSION	2
#define KM_SECTION_METHOD		3
#define KM_SECTION_TRAINING		4
#define KM_SECTION_SELECTION	5
#define KM_SECTION_REQUIRED		0x1	/* flags: a reader must know the tag */
#define KM_SECTION_OVERHEAD		16	/* tag, flags, length, CRC */

#define KM_FLAG_STANDARDIZE		0x1
#define KM_FLAG_FIT_INTERCEPT	0x2
#define KM_FLAG_CONVERGED		0x4
#define KM_FLAGS_KNOWN			0x7

/* A grid of KM_MAX_GRID gammas by KM_MAX_GRID lambdas. */
#define KM_MODEL_MAX_CANDIDATES (KM_MAX_GRID * KM_MAX_GRID)

typedef struct km_model
{
	uint16_t	format_version;
	uint8_t		writer_version[3];	/* major, minor, patch */
	km_task		task;			/* of the method (format 1: regression) */
	km_kernel	kernel;
	km_method	method;
	bool		standardize;
	bool		fit_intercept;
	bool		converged;
	int32_t		max_iter;
	int32_t		iterations;
	uint32_t	n_train;		/* rows of the expansion (alpha, X) */
	uint32_t	n_features;
	uint64_t	rows_seen;		/* training rows (format 1: n_train) */
	uint64_t	rows_skipped;
	double		lambda;
	double		learning_rate;
	double		tol;
	double		final_change;
	double		jitter;
	double		intercept;
	double		train_rmse;
	const double *mean;			/* n_features */
	const double *scale;		/* n_features, all > 0 */
	const double *alpha;		/* n_train */
	const double *X;			/* n_train * n_features, row-major */
	/* model selection, if any */
	uint32_t	n_candidates;
	km_cv		cv;
	int			folds;
	uint32_t	best;
	const km_candidate *candidates;	/* n_candidates */
} km_model;

/*
 * Encoded size (format 2) of a model of that method with n rows, d
 * features and c selection candidates; 0 on overflow, beyond 1 GB, or for
 * an unknown method.
 */
size_t		km_model_size(km_method method, uint32_t n, uint32_t d, uint32_t c);

/* Doubles needed to hold the arrays of a decoded model; 0 on overflow. */
size_t		km_model_storage_doubles(uint32_t n, uint32_t d, uint32_t c);

/*
 * Write m in format 2 into buf, which has km_model_size(m->method,
 * m->n_train, m->n_features, m->n_candidates) bytes.
 */
void		km_model_encode(const km_model *m, uint8_t *buf);

/* Format 1, as 0.1.0 wrote it: for tests and fuzzing seeds. */
size_t		km_model_v1_size(uint32_t n, uint32_t d, uint32_t c);
void		km_model_encode_v1(const km_model *m, uint8_t *buf);

/*
 * Check magic, version, sizes and the header checksum of buf (len bytes),
 * and report n_train, n_features and n_candidates, to size storage.
 */
km_status	km_model_peek(const uint8_t *buf, size_t len, uint32_t *n,
						  uint32_t *d, uint32_t *c, km_error *err);

/*
 * Validate every byte of buf against the format and fill m.  If storage is
 * not NULL it has km_model_storage_doubles(n, d, c) doubles and receives
 * the arrays, which m then points into; otherwise m's arrays are NULL.
 * KM_ERR_FORMAT: not a model, truncated, or a field out of range;
 * KM_ERR_VERSION: written by a newer format; KM_ERR_CHECKSUM: corrupted.
 */
km_status	km_model_decode(const uint8_t *buf, size_t len, km_model *m,
							double *storage, km_error *err);

/*
 * Hand each of the fields (a table of method.h) of m to out, by type; the
 * header part of kernel_model_info and each method's part use this.
 */
void		km_model_describe_fields(const km_model *m, const km_field *fields,
									 int n_fields, const km_describer *out);

/* The header fields of m (those its kernel uses), by the header's table. */
void		km_model_describe_header(const km_model *m, const km_describer *out);


#endif							/* KM_MODEL_H */
