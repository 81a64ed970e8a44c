/*
 * model_types.h - the record of a trained model (km_model), apart from the
 * format that encodes, decodes and describes it (model.h; core, no
 * PostgreSQL headers).  A method's store op fills it and its METHOD
 * section table (km_field, method.h) points into it by offset, so the
 * methods take the record without importing the model format above them,
 * as the kernel_maps take kernel_types.h without the Gram code.
 */
#ifndef KM_MODEL_TYPES_H
#define KM_MODEL_TYPES_H

#include <stddef.h>

#include "approx.h"
#include "class_types.h"
#include "grid.h"
#include "method.h"

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
	uint32_t	n_train;		/* rows of the expansion: exact n, nystrom m
								 * centres, rff D */
	uint32_t	n_features;
	uint32_t	n_outputs;		/* q >= 1 decision values per row */
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
	const double *alpha;		/* n_train x q, column-major: output j at
								 * alpha + j * n_train */
	const double *intercepts;	/* q; intercepts[0] == intercept (may be
								 * NULL when encoding a model with q = 1) */
	const double *X;			/* exact: training rows; nystrom: centres
								 * (n_train x d, row-major, standardized);
								 * rff: NULL */
	/* approximation (APPROXIMATION section; all 0 for exact models) */
	km_approx	approximation;
	uint32_t	components;		/* m asked for (centres / D); 0 for exact */
	uint32_t	rank;			/* nystrom: rank of K_mm used; rff: D */
	double		approx_eps;		/* nystrom: eps of chol(K_mm + eps I); else 0 */
	uint64_t	approx_seed;	/* the seed the basis was drawn from */
	km_centres	centers;		/* nystrom: how the centres were chosen; else uniform (0) */
	const double *rff_W;		/* rff: d x D row-major; else NULL */
	const double *rff_b;		/* rff: D; else NULL */
	/* classification (CLASSES section); n_classes 0 for regression */
	uint32_t	n_classes;		/* k >= 2 */
	km_label_type label_type;
	km_multiclass multiclass;
	const char *labels;			/* k NUL-terminated UTF-8 strings back to
								 * back, in class order */
	uint32_t	labels_bytes;
	const uint64_t *class_counts;	/* k training rows per class */
	bool		has_probability;	/* PROBABILITY section: Platt A, B */
	const double *prob_A;		/* q; NULL when !has_probability */
	const double *prob_B;		/* q */
	km_solver	solver;			/* classifiers: the solver used (their METHOD fields) */
	double		train_accuracy;	/* METRICS section (classifiers) */
	double		train_log_loss; /* 0 when the model gives no probabilities */
	/* model selection, if any */
	uint32_t	n_candidates;
	km_cv		cv;
	int			folds;
	uint32_t	best;
	const km_candidate *candidates;	/* n_candidates */
	/* a model trained from a table: its ENCODER section's payload (encoder.h) */
	const uint8_t *encoder;		/* NULL: none */
	uint32_t	encoder_bytes;
	/*
	 * The Gaussian-process reading of an exact ridge model (gp.h), kept at
	 * training from the fit's factor of K + lambda I (GP section): s2 and
	 * sum_i log L_ii.  has_gp false: not stored (older models, other models).
	 */
	bool		has_gp;
	double		gp_amplitude;	/* s2 = y'(K + lambda I)^-1 y / n, >= 0 */
	double		gp_logdet_half; /* sum_i log L_ii */
	/*
	 * The same reading of an approximate ridge model (nystrom: DTC; rff:
	 * Bayesian linear regression on z(x); gp.h), kept at training (the
	 * GP_APPROX section) with gp_amplitude and gp_logdet_half (then
	 * 1/2 log det(Q + lambda I) over the rows_seen rows): the lower
	 * Cholesky factor R of A + lambda I, packed by columns (m (m + 1) / 2
	 * doubles, m = n_train), A = L^-1 G L^-T with G = sum z z' and
	 * L = chol(K_mm + approx_eps I) (rff: L = I).  NULL: not stored.
	 */
	const double *gp_factor;
	/*
	 * A transform model (kernel PCA, PCA section): the value of each of its
	 * n_outputs components (eigenvalues, descending) and their total over
	 * all components (the trace of the centred matrix); NULL: none.
	 */
	const double *eigenvalues;
	double		eigen_total;

	/*
	 * Fields only one method has (its own struct, at most
	 * KM_METHOD_BLOB_SIZE bytes): its store op fills them, and its METHOD
	 * section table points into them with KM_METHOD_FIELD, so that a new
	 * method adds no field here.  The shared fields above (lambda, tol,
	 * max_iter, iterations, converged, ...) stay where they are: format 1
	 * and the existing methods' sections read and write them.
	 */
	km_method_blob method_data;
} km_model;

/*
 * A method's own model field, for its km_field table: the offset of
 * member of its struct type in km_model.method_data, e.g.
 * {"epsilon", KM_FIELD_F64, KM_METHOD_FIELD(svr_fields, epsilon), KM_RULE_NONNEG, 0}.
 * The format codec reads and writes every field at its offset from the
 * model, so it needs no case for method_data.
 */
#define KM_METHOD_FIELD(type, member) \
	(offsetof(km_model, method_data) + offsetof(type, member))

/* The method's own struct in a model, e.g. KM_MODEL_METHOD_DATA(m, svr_fields). */
#define KM_MODEL_METHOD_DATA(m, type) KM_METHOD_BLOB_CONST(&(m)->method_data, type)

#endif							/* KM_MODEL_TYPES_H */
