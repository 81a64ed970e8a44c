/*
 * method.h - the method interface (core, no PostgreSQL headers).
 *
 * A training method fills one km_method_ops, the way an index access
 * method fills IndexAmRoutine: its name and task, the options and
 * selection routes it accepts, its workspace, its fit, the fields of its
 * model section, and its error hints.  Options validation, model
 * selection, model assembly, kernel_model_info and error hints ask the
 * method through km_method_get instead of branching on it.
 *
 * Adding a method: a file src/<name>.c that defines its ops, one value in
 * km_method, one case in km_method_get (methods.c; the switch has no
 * default, so the compiler lists every switch that misses it), its option
 * rows in options_core.c if it takes new options, and its tests.
 */
#ifndef KM_METHOD_H
#define KM_METHOD_H

#include "kernels.h"

/* Stored in models as one byte: never renumber. */
typedef enum km_method
{
	KM_METHOD_RIDGE = 1,
	KM_METHOD_LMS = 2
} km_method;

#define KM_METHOD_FIRST KM_METHOD_RIDGE
#define KM_METHOD_LAST KM_METHOD_LMS

/* What a method predicts.  Stored in format 2 models as one byte. */
typedef enum km_task
{
	KM_TASK_REGRESSION = 1,
	KM_TASK_CLASSIFICATION = 2
} km_task;

#define KM_TASK_FIRST KM_TASK_REGRESSION
#define KM_TASK_LAST KM_TASK_CLASSIFICATION

const char *km_task_name(km_task task);

typedef struct km_fit_params
{
	km_kernel	kernel;
	km_method	method;
	double		lambda;			/* >= 0 */
	double		learning_rate;	/* lms; <= 0 means automatic */
	int			max_iter;		/* lms */
	double		tol;			/* lms */
} km_fit_params;

typedef struct km_fit_result
{
	double		jitter;			/* ridge: added to lambda, 0 if none */
	double		learning_rate;	/* lms: the step used */
	int			iterations;		/* lms */
	bool		converged;		/* lms; always true for ridge */
	double		final_change;	/* lms: last relative change of beta */
	double		train_rmse;		/* ||y - K alpha|| / sqrt(n), computed after the fit */
	double		relative_residual;	/* ridge: ||y - (K + shift I) alpha|| / ||y|| */
} km_fit_result;

struct km_model;

/*
 * One stored field of a model: the common header (model.c) and each
 * method's section are described by tables of these, which drive
 * encoding, decoding, validation and kernel_model_info alike.
 */
typedef enum km_field_type
{
	KM_FIELD_U8,
	KM_FIELD_U16,
	KM_FIELD_U32,
	KM_FIELD_I32,
	KM_FIELD_U64,
	KM_FIELD_F64,
	KM_FIELD_BOOL,				/* one byte, 0 or 1; bool in memory */
	KM_FIELD_ENUM,				/* one byte; an enum in memory (rule says which) */
	KM_FIELD_VERSION			/* three bytes: major, minor, patch */
} km_field_type;

typedef enum km_field_rule
{
	KM_RULE_ANY,				/* any value (integers) */
	KM_RULE_FINITE,				/* a finite double */
	KM_RULE_NONNEG,				/* finite and >= 0 (double), >= 0 (integer) */
	KM_RULE_POSITIVE,			/* finite and > 0 (double), >= 1 (integer) */
	KM_RULE_DEGREE,				/* an integer from 1 to 100 */
	KM_RULE_ZERO,				/* reserved: 0, nothing in memory */
	KM_RULE_TASK,				/* a km_task */
	KM_RULE_METHOD,				/* a km_method with ops */
	KM_RULE_KERNEL				/* a km_kernel_type */
} km_field_rule;

typedef struct km_field
{
	const char *name;			/* as kernel_model_info shows it; NULL: not shown */
	km_field_type type;
	size_t		model_offset;	/* offsetof(km_model, field) */
	km_field_rule rule;
	unsigned	kernel_param;	/* KM_PARAM_*: the rule and kernel_model_info
								 * apply only when the kernel uses it (else
								 * a double need only be finite) */
} km_field;

/* Where kernel_model_info writes what a method describes (the glue fills it). */
typedef struct km_describer
{
	void		(*number) (void *ctx, const char *key, double v);
	void		(*integer) (void *ctx, const char *key, int64_t v);
	void		(*boolean) (void *ctx, const char *key, bool v);
	void		(*string) (void *ctx, const char *key, const char *v);
	void	   *ctx;
} km_describer;

/* Selection routes as bits: KM_ROUTE(KM_CV_LOO) | ... (km_cv from select.h). */
#define KM_ROUTE(cv)	(1u << (cv))

/* Option ids as bits: KM_OPTION_BIT(KM_OPT_LEARNING_RATE) (options_core.h). */
#define KM_OPTION_BIT(id)	(1u << (id))

typedef struct km_method_ops
{
	km_method	id;
	const char *name;			/* as the "method" option spells it */
	km_task		task;
	const char *summary;		/* "solves in closed form": why other options do not apply */

	/* options of their own it takes (KM_OPTION_BIT); shared options apply to all */
	unsigned	options;
	/* selection routes it supports (KM_ROUTE), and the one used for a grid without cv */
	unsigned	routes;
	int			default_route;	/* a km_cv */
	int			default_folds;	/* when default_route is k-fold */

	/* doubles of workspace fit needs for n rows; 0 on overflow */
	size_t		(*workspace_doubles) (size_t n);

	/*
	 * Dual coefficients alpha (n) for standardized rows X (n x d) and centred
	 * y (n), called by km_fit (solve.h) with the Gram matrix space K (n x n,
	 * column-major, not yet filled), the row norms of the kernel, and work
	 * of workspace_doubles(n) doubles.
	 */
	km_status	(*fit) (const km_fit_params *p, const double *X, size_t n,
						int d, const double *y, double *alpha, double *K,
						const double *norms, double *work, km_fit_result *res,
						km_error *err, km_interrupt_fn interrupt);

	/* Copy its settings and results into the model's fields it owns. */
	void		(*store) (const km_fit_params *p, const km_fit_result *res,
						  struct km_model *m);

	/*
	 * Its model section (format 2 METHOD section): these fields in order,
	 * each validated by its rule, and shown by kernel_model_info.
	 */
	const km_field *fields;
	int			n_fields;

	/* What to do about a failure of this status, or NULL for the generic hint. */
	const char *(*hint) (km_status status);
} km_method_ops;

/*
 * The ops of a method, or NULL for a value that names none (a forged or
 * newer model byte, an uninitialised enum): callers must check.
 */
const km_method_ops *km_method_get(km_method method);

/* The method of that name; NULL if there is none. */
const km_method_ops *km_method_by_name(const char *name);

/* "ridge", or "unknown" for a value that names no method. */
const char *km_method_name(km_method method);
bool		km_method_from_name(const char *name, km_method *method);

/* Give err the method's hint for its status, unless it has one. */
void		km_method_fill_hint(km_method method, km_error *err);

/*
 * The hint a method gives for status (its ops->hint): the shared one for
 * KM_ERR_NOT_PD, the method's own for KM_ERR_DIVERGED and KM_ERR_INACCURATE
 * (NULL where it cannot fail so), NULL for every other status.
 */
const char *km_method_hint(km_status status, const char *diverged,
						   const char *inaccurate);

/* The task of a method (regression for an unknown one: callers check first). */
km_task		km_method_task(km_method method);

/* The registered methods. */
extern const km_method_ops km_ridge_ops;
extern const km_method_ops km_lms_ops;

#endif							/* KM_METHOD_H */
