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
 * Fields 16..72 are described once, by a table in model_format.c that drives
 * encoding, decoding, validation and kernel_model_info.  Sections, in
 * ascending tag order, each at most once.  Tags 1-5 are common to every
 * model (model_format.c); the others are declared by the table row that
 * owns them, as km_section_ops (model_section.h): APPROXIMATION and RFF by
 * the representations (repr.h, model_sections_repr.c), CLASSES,
 * PROBABILITY and METRICS by the classification task (task.h,
 * model_sections_task.c).  A new section takes the next free tag below
 * KM_SECTION_TAGS (model_section.h), added to the list below:
 *
 *   tag  name           required  payload
 *     1  SCALER         yes       mean[d], scale[d] (scale > 0)
 *     2  EXPANSION      yes       n u32 (>= 1), q u32 (outputs; 0 means 1,
 *                                 and 1 is always stored as 0), alpha[n * q]
 *                                 (column-major: output j at j * n), X[n * d]
 *                                 (row-major, standardized; absent for rff),
 *                                 then intercepts[q] if q > 1 (intercepts[0]
 *                                 equals the header's): output j is
 *                                 f_j(x) = b_j + sum_i alpha_ij K(x_i, x)
 *     3  METHOD         yes       the method's fields (km_method_ops.fields)
 *     4  TRAINING       yes       train_rmse
 *     5  SELECTION      no        cv u8, reserved u8, folds u16, best u32,
 *                                 c u32 (>= 1), reserved u32,
 *                                 c x (gamma, lambda, score, score_std)
 *     6  APPROXIMATION  yes       approximation u8 (1 nystrom, 2 rff),
 *                                 centers u8 (0 uniform, 1 kmeans, 2 leverage;
 *                                 0.3.0's reserved 0; rff: 0), reserved u16,
 *                                 components u32, rank u32
 *                                 (1..n; rff: n), reserved u32, eps f64 (>= 0;
 *                                 rff: 0), seed u64.  Only approximate
 *                                 models have it: nystrom's X holds its n
 *                                 centres, rff's n is D
 *     7  RFF            yes       W[d * D] (row-major), b[D]: rff models only
 *                                 (rbf kernel), z(x) = sqrt(2/D) cos(W^T x + b)
 *     8  CLASSES        yes       k u32 (>= 2), label_type u8, multiclass u8,
 *                                 reserved u16, counts u64[k], then k
 *                                 NUL-terminated labels (UTF-8, in class
 *                                 order) filling the rest; classifiers only,
 *                                 with q = km_multiclass_outputs(multiclass, k)
 *     9  PROBABILITY    yes       A[q], B[q] (finite): Platt scaling,
 *                                 P = 1 / (1 + exp(A f + B)); classifiers only
 *    10  METRICS        yes       train_accuracy f64 (0..1), train_log_loss
 *                                 f64 (>= 0; 0 when the model gives no
 *                                 probabilities): on the training rows,
 *                                 after the fit; classifiers only
 *    11  PCA            yes       total f64 (finite, >= 0), eigenvalues[q]
 *                                 (finite, >= 0, descending, each <= total
 *                                 up to rounding): the transform task's
 *                                 (kernel PCA, model_sections_pca.c); its
 *                                 q outputs are the components
 *    12  GP_APPROX      no        amplitude f64 (finite, >= 0), half_log_det
 *                                 f64 (finite), R[n (n + 1) / 2] (packed
 *                                 lower by columns, diagonal > 0, finite):
 *                                 the GP reading of an approximate ridge
 *                                 model (gp.h: nystrom's DTC, rff's
 *                                 Bayesian linear regression), kept by the
 *                                 sums road's solve; nystrom and rff
 *                                 single-output models of a method with a
 *                                 GP reading only (model_sections_gp.c).
 *                                 Optional: without it (older models, the
 *                                 "cg" solver) no variance is read
 *    16  ENCODER        no        the columns of a model trained from a table
 *                                 (encoder.h): names, kinds, imputed values,
 *                                 categories; their widths add up to d.  Any
 *                                 task; common (model_sections_encoder.c).
 *                                 Tag 16, not the next free one, so that the
 *                                 tags of the tables' sections stay together
 *    17  GP             no        amplitude f64 (finite, >= 0), half_log_det
 *                                 f64 (finite): s2 = y'(K + lambda I)^-1 y / n
 *                                 and sum_i log L_ii of the Cholesky factor
 *                                 L of K + (lambda + jitter) I, kept by the
 *                                 fit (gp.h); exact single-output models of
 *                                 a method with a GP reading (ridge) only.
 *                                 Optional: models without it (older ones)
 *                                 compute them from their rows
 *                                 (model_sections_gp.c).  Tag 17, beside
 *                                 ENCODER: common and optional, declared
 *                                 by no table row
 *
 * A model without CLASSES is a regression model (task regression, q = 1).
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

#include <stddef.h>

#include "approx.h"
#include "classify.h"
#include "grid.h"
#include "model_types.h"

#define KM_MODEL_MAGIC "KMLM"
#define KM_FORMAT_VERSION 2		/* written; 1 and 2 are read */
#define KM_MODEL_HEADER_SIZE 80
#define KM_MODEL_V1_HEADER_SIZE 144

/* Format 2 section tags: the common ones, then the tables' (see above) */
#define KM_SECTION_SCALER		1
#define KM_SECTION_EXPANSION	2
#define KM_SECTION_METHOD		3
#define KM_SECTION_TRAINING		4
#define KM_SECTION_SELECTION	5
#define KM_SECTION_APPROXIMATION 6
#define KM_SECTION_RFF			7
#define KM_SECTION_CLASSES		8
#define KM_SECTION_PROBABILITY	9
#define KM_SECTION_METRICS		10
#define KM_SECTION_PCA			11	/* kernel PCA's eigenvalues (transform task) */
#define KM_SECTION_GP_APPROX	12	/* approximate ridge's GP factor (gp.h) */
#define KM_SECTION_ENCODER		16	/* a table's columns (encoder.h) */
#define KM_SECTION_GP			17	/* exact ridge's GP values (gp.h) */
#define KM_SECTION_REQUIRED		0x1	/* flags: a reader must know the tag */
#define KM_SECTION_OVERHEAD		16	/* tag, flags, length, CRC */

#define KM_FLAG_STANDARDIZE		0x1
#define KM_FLAG_FIT_INTERCEPT	0x2
#define KM_FLAG_CONVERGED		0x4
#define KM_FLAGS_KNOWN			0x7

/* A grid of KM_MAX_GRID gammas by KM_MAX_GRID lambdas. */
#define KM_MODEL_MAX_CANDIDATES (KM_MAX_GRID * KM_MAX_GRID)

/*
 * The shape of a model: what its encoded size and its decoded storage
 * depend on.  From a km_model (km_model_shape_of), from an encoded one
 * (km_model_peek), or filled in by a trainer before it fits.
 */
typedef struct km_model_shape
{
	km_method	method;
	km_approx	approximation;
	uint32_t	n_train;		/* rows of the expansion (rff: D) */
	uint32_t	d;				/* features */
	uint32_t	q;				/* outputs, >= 1 */
	uint32_t	c;				/* selection candidates */
	uint32_t	n_classes;		/* 0: not a classifier */
	uint32_t	labels_bytes;	/* the k NUL-terminated labels */
	bool		has_probability;
	uint32_t	encoder_bytes;	/* ENCODER section (encoder.h); 0: none */
	bool		has_gp;			/* GP section (model_sections_gp.c) */
	bool		has_gp_approx;	/* GP_APPROX section (model_sections_gp.c) */
	bool		has_pca;		/* PCA section (model_sections_pca.c) */
} km_model_shape;

/* The shape of m (q = 0 is read as 1). */
km_model_shape km_model_shape_of(const km_model *m);

/*
 * A regression shape: n rows of d features, one output, c candidates
 * (exact unless approximation says otherwise).
 */
km_model_shape km_model_shape_simple(km_method method, uint32_t n, uint32_t d,
									 uint32_t c);

/*
 * Encoded size (format 2) of a model of that shape; 0 on overflow, beyond
 * 1 GB, for an unknown method or for q = 0.
 */
size_t		km_model_size(const km_model_shape *s);

/* Doubles needed to hold the arrays of a decoded model; 0 on overflow. */
size_t		km_model_storage_doubles(const km_model_shape *s);

/*
 * Write m in format 2 into buf, which has km_model_size of
 * km_model_shape_of(m) bytes.
 */
void		km_model_encode(const km_model *m, uint8_t *buf);

/* Format 1, as 0.1.0 wrote it: for tests and fuzzing seeds. */
size_t		km_model_v1_size(uint32_t n, uint32_t d, uint32_t c);
void		km_model_encode_v1(const km_model *m, uint8_t *buf);

/*
 * Check magic, version, sizes and the header checksum of buf (len bytes),
 * and report its shape, to size storage (not every field of the shape is
 * validated: km_model_decode does that).
 */
km_status	km_model_peek(const uint8_t *buf, size_t len, km_model_shape *shape,
						  km_error *err);

/*
 * Validate every byte of buf against the format and fill m.  If storage is
 * not NULL it has km_model_storage_doubles(shape) doubles and receives
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

/*
 * The header fields of m (those its kernel uses), by the header's table,
 * then the scalar fields of its APPROXIMATION and CLASSES sections if it
 * has them, and a classifier's training metrics (the log-loss only when
 * the model gives probabilities).
 */
void		km_model_describe_header(const km_model *m, const km_describer *out);

/*
 * Fill the fields of a regression model that an approximate fit (approx.h)
 * decides, from its basis b, the grid scored, the coefficients and result
 * of km_approx_solve:
 *   kernel, n_features = d, standardize, mean, scale (the basis's scaler),
 *   fit_intercept, approximation, components (the number asked for:
 *   components_asked, or b->m if 0), rank (nystrom: res->rank, at least 1;
 *   rff: D), approx_eps, approx_seed, n_train = m, n_outputs = 1, alpha =
 *   coef, intercept = res->intercept, intercepts = NULL (q = 1), X =
 *   centres (nystrom) or NULL, rff_W and rff_b (rff), lambda, jitter 0,
 *   converged, train_rmse, rows_seen = res->rows, and the GCV grid as
 *   selection candidates (cv KM_CV_GCV, best = res->best) when cand (n_lambdas
 *   entries, filled here) is not NULL.
 * The model points into b, coef and cand: they must outlive it.  The
 * caller sets the rest (format and writer versions, method and task,
 * rows_skipped) and zeroes m first (model_approx.c).
 */
void		km_approx_model_fill(const km_basis *b, uint32_t components_asked,
								 const double *lambdas, int n_lambdas,
								 bool fit_intercept, const double *coef,
								 const km_approx_result *res,
								 struct km_candidate *cand,
								 struct km_model *m);

#endif							/* KM_MODEL_H */
