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
 * Adding a method (a regression method, say "foo"):
 *
 *  1. src/core/methods/foo.c (the Makefile compiles every file there), with
 *     - its params struct (foo_params) and KM_STATIC_ASSERT(sizeof(foo_params)
 *       <= KM_METHOD_BLOB_SIZE, foo_params); its options of its own as
 *       km_method_option rows (options_core.h: key, type number / integer /
 *       bool, range, "expected" text, default, offsetof(foo_params, field));
 *       the fit reads them with KM_METHOD_BLOB_CONST(&p->method_params,
 *       foo_params).  Keys of the shared table (lambda, tol, max_iter, ...)
 *       it takes as its own go in .options (KM_OPTION_BIT).
 *     - its result struct, if it returns more than km_fit_result's shared
 *       fields, in res->method_result; its fit returns alpha and, if it
 *       has one, its bias in res->intercept (added to the model's
 *       intercept and to k-fold's held-out predictions).
 *     - its model fields (another struct, stored in km_model.method_data):
 *       the store op copies settings and results there (and into shared
 *       fields such as m->lambda, m->tol, m->converged), and its km_field
 *       table, the format-2 METHOD section, lists them in stored order with
 *       KM_METHOD_FIELD(foo_fields, member) as offset (shared fields with
 *       offsetof(km_model, field)).
 *     - const km_method_ops km_foo_ops = { .id = KM_METHOD_FOO, .name =
 *       "foo", .task, .summary, .options, .own_options, .n_own_options,
 *       .params_size, .routes, .default_route, .default_folds,
 *       .workspace_doubles, .fit, .store, .fields, .n_fields, .hint }, and
 *       its defaults of shared options if not the shared ones
 *       (.lambda_per_row, .default_tol, .solver_max_iter)
 *       (a classifier: KM_CLASSIFIER_OPS, the classification entries,
 *       .primal_loss and .primal_loss_name).
 *       src/core/methods/svr.c is a complete example (a regression method
 *       with an option of its own, a bias, and fields of its own).
 *  2. One line at the end of src/core/methods/methods.def: KM_METHOD(5, FOO,
 *     km_foo_ops), with the next id (stored in models: never renumber).
 *  3. Its tests: test/sql/foo.sql and test/expected/foo.out (new files), and
 *     the "Valid keys are ..." lines of test/expected (kernels.out,
 *     train.out), which list its own keys after the shared ones, and the
 *     "takes no ..." details of the other methods, which list them too.
 *
 * Nothing else: no enum, switch, options table, km_fit_params,
 * km_fit_result or km_model field changes.  No code outside the registry
 * names KM_METHOD_FOO (test/check_core.sh fails on it): it asks the ops,
 * whose last entries answer what it used to branch on (.task_default,
 * .approx_sums, Platt scaling, the primal loss; test_method.c checks them;
 * zero where they do not apply).  A regression method with an
 * approximate (Nystrom / RFF) form in the primal fills its pieces
 * .primal_add .. .primal_result: the learner drives them by its one Newton
 * (src/core/learn/newton.h, src/core/learn/pipeline_approx.c, with k-fold selection over a
 * lambda and gamma grid), over every host (the named models' too: the
 * cursor host, src/catalog/host_cursor.c).  test/check_seam.sh builds the tree
 * without each method's file and registry line.  Still outside the seam:
 * the classifiers' approximate form (src/core/methods/primal_pass.c, the two losses
 * of primal.h) and the method names in options_core.c's hints.
 */
#ifndef KM_METHOD_H
#define KM_METHOD_H

#include "kernels.h"
#include "class_types.h"
#include "metrics.h"
#include "task.h"

/* Stored in models as one byte: never renumber (methods.def). */
typedef enum km_method
{
#define KM_METHOD(id, NAME, ops) KM_METHOD_##NAME = id,
#include "methods.def"
#undef KM_METHOD
} km_method;

/* The ids run 1 .. KM_METHOD_LAST in the order of methods.def (methods.c checks). */
enum
{
	KM_METHOD_COUNT_ = 0
#define KM_METHOD(id, NAME, ops) + 1
#include "methods.def"
#undef KM_METHOD
};

#define KM_METHOD_FIRST 1
#define KM_METHOD_LAST KM_METHOD_COUNT_

/*
 * The "solver" option.  Stored in classification models (model.h
 * km_model.solver) as a u32: never renumber.  DEFAULT is the method's own
 * (smo for svm, newton for logistic) and is never stored.
 */
typedef enum km_solver
{
	KM_SOLVER_DEFAULT = 0,
	KM_SOLVER_SMO = 1,			/* svm: dual QP, second-order working sets */
	KM_SOLVER_NEWTON = 2,		/* logistic: Newton (IRLS) on the dual */
	KM_SOLVER_SGD = 3,			/* either: kernelized stochastic gradient */
	KM_SOLVER_PRIMAL_NEWTON = 4,	/* approximate models: Newton on the feature map
								 * (logistic loss; squared hinge for svm) */
	KM_SOLVER_CG = 5			/* nystrom ridge: preconditioned conjugate
								 * gradient, one pass per iteration (learn/cg.h) */
} km_solver;

#define KM_SOLVER_FIRST KM_SOLVER_SMO
#define KM_SOLVER_LAST KM_SOLVER_CG

/*
 * "solver": "cg": its defaults of "tol" (the relative preconditioned
 * residual at which it stops) and "max_iter" (its passes at most).
 */
#define KM_CG_DEFAULT_TOL 1e-7
#define KM_CG_DEFAULT_MAX_ITER 100

/* "smo", ...; "default" for KM_SOLVER_DEFAULT, "unknown" for no solver. */
const char *km_solver_name(km_solver solver);
bool		km_solver_from_name(const char *name, km_solver *solver);



/*
 * Room for what a method owns, inside structs that are copied as bytes
 * (km_options in aggregate states, km_model in caches): its parsed
 * options (km_fit_params.method_params), its fit results
 * (km_fit_result.method_result) and its model fields (km_model.method_data,
 * model.h).  Fixed-size and aligned for any scalar; a method checks its
 * structs fit with KM_STATIC_ASSERT (test_method.c checks params_size).
 */
#define KM_METHOD_BLOB_SIZE 64

typedef union km_method_blob
{
	double		align_double;
	int64_t		align_int64;
	unsigned char bytes[KM_METHOD_BLOB_SIZE];
} km_method_blob;

/* A compile-time check at file scope (C99: no _Static_assert). */
#define KM_STATIC_ASSERT(cond, name) \
	typedef char km_static_assert_##name[(cond) ? 1 : -1]

/* The method's own struct in a blob, e.g. KM_METHOD_BLOB(&p->method_params, svr_params). */
#define KM_METHOD_BLOB(blob, type) ((type *) (void *) (blob)->bytes)
#define KM_METHOD_BLOB_CONST(blob, type) ((const type *) (const void *) (blob)->bytes)

typedef struct km_fit_params
{
	km_kernel	kernel;
	km_method	method;
	double		lambda;			/* >= 0 */
	double		learning_rate;	/* lms; <= 0 means automatic */
	int			max_iter;		/* lms */
	double		tol;			/* lms; svm (KKT violation), logistic (gradient norm) */
	/* classification */
	km_solver	solver;			/* KM_SOLVER_DEFAULT: the method's own */
	bool		probability;	/* svm: fit Platt coefficients on internal folds */
	bool		fit_intercept;	/* classification methods fit their own intercepts */
	int64_t		seed;			/* sgd order, Platt folds */
	/* set by km_fit_classes: K's column cache (svm, SMO), else NULL: K full */
	km_gram_cols *gram_cols;
	/*
	 * The method's own options (km_method_ops.own_options), params_size
	 * bytes of its params struct: each row's default, then the value
	 * given (km_options_finish).  Zero when not parsed from options.
	 */
	km_method_blob method_params;
} km_fit_params;

/*
 * The SVM's C from lambda: the objective (1/n) sum_i L(f(x_i), y_i) +
 * (lambda/2) ||f||^2 times 1 / lambda is libsvm's C-SVC objective with
 * C = 1 / (n lambda), so that decision values compare with scikit-learn's
 * SVC(C = 1 / (n lambda)).  Class and sample weights multiply C per row.
 */
static inline double
km_svm_C(double lambda, size_t n)
{
	return 1.0 / ((double) n * lambda);
}


/* What a classifier's fit returns besides its coefficients. */
typedef struct km_class_fit_result
{
	km_solver	solver;			/* the solver used */
	int			multiclass;		/* a km_multiclass (class_types.h) */
	uint32_t	n_outputs;		/* q */
	int			iterations;		/* SMO iterations / Newton steps / SGD epochs (max over outputs) */
	bool		converged;		/* every output met tol */
	double		objective;		/* the final objective (sum over outputs) */
	double		train_accuracy;	/* on the training rows, computed after the fit */
	double		train_log_loss; /* NaN without probabilities */
	bool		has_probability;
	uint32_t	n_support;		/* svm: rows with alpha != 0 in any output */
	/* What only this method returns (its struct; its store_classes reads it). */
	km_method_blob method_result;
} km_class_fit_result;

typedef struct km_fit_result
{
	double		jitter;			/* ridge: added to lambda, 0 if none */
	double		learning_rate;	/* lms: the step used */
	int			iterations;		/* lms */
	bool		converged;		/* lms; always true for ridge */
	double		final_change;	/* lms: last relative change of beta */
	double		train_rmse;		/* ||y - K alpha - intercept|| / sqrt(n), computed after the fit */
	double		relative_residual;	/* ridge: ||y - (K + shift I) alpha|| / ||y|| */
	/*
	 * b of f(x) = b + sum_i alpha_i K(x_i, x) on the centred target (an
	 * epsilon-SVR's bias); 0 for ridge and lms.  The trainer adds it to the
	 * model's intercept (the target's mean) and k-fold selection to its
	 * held-out predictions.
	 */
	double		intercept;
	/* What only this method returns (its struct; its store op reads it). */
	km_method_blob method_result;
} km_fit_result;

struct km_model;
struct km_candidate;
struct km_primal_solver;

/*
 * What a method of a task without a target (task.h km_task_ops.target
 * false: kernel_fit) returns: q outputs, each a kernel expansion (exact:
 * over the n rows; from sums: over the m features) with an intercept, and
 * a value per output and their total (kernel PCA: its eigenvalues and the
 * trace of the centred matrix).  The arrays are the caller's.
 */
typedef struct km_rows_fit
{
	uint32_t	q;				/* outputs (ops->outputs) */
	double	   *coef;			/* n x q (or m x q), column-major */
	double	   *intercepts;		/* q */
	double	   *values;			/* q */
	double		total;
	km_fit_result res;			/* method_result: the method's own */
} km_rows_fit;

/* Doubles of a primal fit's training tally (km_method_ops.primal_tally). */
#define KM_PRIMAL_TALLY_DOUBLES 4

struct km_method_option;

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
	KM_RULE_KERNEL,				/* a km_kernel_type */
	KM_RULE_APPROX,				/* a km_approx (approx.h) */
	KM_RULE_LABEL_TYPE,			/* a km_label_type (class_types.h) */
	KM_RULE_MULTICLASS,			/* a km_multiclass (class_types.h) */
	KM_RULE_SOLVER,				/* a km_solver other than the default */
	KM_RULE_CENTRES,			/* a km_centres (centres.h) */
	KM_RULE_FRACTION			/* a double in (0, 1] (oneclass's nu) */
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

	/*
	 * Options of the shared table (options_core.h) that it takes as its own
	 * (KM_OPTION_BIT); a shared option no method lists applies to all.
	 */
	unsigned	options;

	/*
	 * Options only it has (a new method's keys, e.g. svr's "epsilon"): rows
	 * of type number, integer or bool with a range, a default and an offset
	 * into its params struct of params_size bytes (<= KM_METHOD_BLOB_SIZE),
	 * which km_options_finish fills in km_fit_params.method_params.
	 * Another method's row given is "applies only to method ..."; the
	 * "Valid keys" detail lists them after the shared keys.
	 */
	const struct km_method_option *own_options;
	int			n_own_options;
	size_t		params_size;
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

	/*
	 * Defaults of shared options it sets for itself, for any task (the zero
	 * values keep the shared defaults: lambda 1, tol 1e-6, max_iter 1000).
	 * lambda_per_row: without "lambda", lambda = 1 / n for the n rows of the
	 * fit (C = 1 in libsvm's terms, km_svm_C; km_options_resolve_rows);
	 * default_tol: tol when the options give none (> 0; svm 1e-3 as libsvm);
	 * solver_max_iter: without "max_iter", 0, its solver's own limit
	 * (libsvm's max(10^7, 100 n)).
	 */
	bool		lambda_per_row;
	double		default_tol;
	bool		solver_max_iter;

	/*
	 * The approximate form (nystrom, rff) of a regression method fitted in
	 * the primal on m features (NULL: none; ridge's approximate form is its
	 * closed-form solve from the sums, approx.h), in pieces for a driver
	 * that owns the passes (the learner's one Newton over a host,
	 * src/core/learn/newton.h: the memory host's rows, or a stored query's
	 * by the cursor host, src/catalog/host_cursor.c).  From coef = 0,
	 * b = 0 and km_primal_solver_init (primal.h), each pass zeroes a state
	 * of km_primal_state_doubles(m) doubles (primal.h's layout: states of
	 * disjoint rows add) and adds every block of rows (features Z, rows x
	 * m row-major, targets y) at (coef, b) by primal_add (scratch:
	 * km_primal_add_scratch_doubles(m, rows); false, nothing added, when a
	 * decision value is not finite); primal_step then moves (coef, b) (R
	 * the m x m penalty, not NULL; vecs 2m kept between steps; work
	 * km_primal_step_work_doubles(m)) until s->done.  Then one pass at the
	 * final point adds every block into KM_PRIMAL_TALLY_DOUBLES zeroed
	 * doubles by primal_tally (scratch: rows), and primal_result fills res
	 * (iterations, converged, train_rmse, method_result) from the tally of
	 * n rows and the solver; an error when the solver did not converge or
	 * the training error overflowed.  All four or none.
	 */
	bool		(*primal_add) (const km_fit_params *p, double *state, uint32_t m,
							   const double *Z, size_t rows, const double *y,
							   const double *coef, double b, double *scratch,
							   km_interrupt_fn interrupt);
	km_status	(*primal_step) (const km_fit_params *p, struct km_primal_solver *s,
								const double *state, const double *R,
								double *coef, double *b, double *vecs,
								double *work, km_error *err,
								km_interrupt_fn interrupt);
	void		(*primal_tally) (const km_fit_params *p, const double *Z,
								 size_t rows, uint32_t m, const double *y,
								 const double *coef, double b, double *tally,
								 double *scratch);
	km_status	(*primal_result) (const km_fit_params *p,
								  const struct km_primal_solver *s,
								  const double *tally, size_t n,
								  km_fit_result *res, km_error *err);

	/* ---- classification (task KM_TASK_CLASSIFICATION; NULL / 0 for regression) ---- */

	/* What k-fold selection scores by: KM_SCORE_MSE for regression. */
	km_score_metric score_metric;
	/* The solver KM_SOLVER_DEFAULT stands for, and the solvers it accepts (bits 1u << solver). */
	km_solver	default_solver;
	unsigned	solvers;

	/* The scheme it uses for k classes, a km_multiclass (class_types.h; q = km_multiclass_outputs). */
	int			(*multiclass) (uint32_t k);

	/* Doubles of workspace fit_classes needs: n rows, k classes; 0 on overflow. */
	size_t		(*class_workspace_doubles) (size_t n, uint32_t k, const km_fit_params *p);

	/*
	 * Fit q outputs for standardized rows X (n x d) with class indices cls
	 * (0..k-1, every class present) and class weights class_w (k, > 0).
	 * K: the n x n Gram space, filled FULL (both triangles) by the caller
	 * (km_fit_classes); work: class_workspace_doubles.  alpha: n x q
	 * column-major (output j at alpha + j * n); intercepts: q.  With
	 * p->probability (svm), fold (n ids < n_folds, from row hashes) are the
	 * internal folds of Platt scaling, and prob_A, prob_B (q each) get the
	 * coefficients of each output (the probability of the class a positive
	 * output favours); res->has_probability is then set.  A fit stopped by
	 * max_iter returns KM_OK with res->converged false (the glue warns).
	 */
	km_status	(*fit_classes) (const km_fit_params *p, const double *X, size_t n,
								int d, const uint32_t *cls, uint32_t k,
								const double *class_w, const uint32_t *fold,
								uint32_t n_folds, double *alpha,
								double *intercepts, double *prob_A,
								double *prob_B, const double *K,
								double *work, km_class_fit_result *res,
								km_error *err, km_interrupt_fn interrupt);

	/*
	 * How its decision values become probabilities, given whether the model
	 * stored Platt coefficients; KM_PROB_NONE with *hint set (what to do)
	 * when it gives none.
	 */
	km_prob_link (*prob_link) (bool has_probability, int multiclass,
							   const char **hint);

	/* Copy its settings and fit results into the model fields it owns (its section). */
	void		(*store_classes) (const km_fit_params *p,
								  const km_class_fit_result *res,
								  struct km_model *m);

	/* ---- what the rest of the code asks instead of naming a method ---- */

	/*
	 * The method of its task when the options name none: one per task
	 * (test_method.c checks).  A text label column without "method" takes
	 * the default method of the classification task.
	 */
	bool		task_default;

	/*
	 * Its approximate (nystrom, rff) form is the closed-form solve from the
	 * m x m sums, lambda selected by GCV (approx.h km_approx_solve): the
	 * aggregate's approximate regression model is this method's.  At most
	 * one method (km_method_approx_sums).
	 */
	bool		approx_sums;

	/*
	 * Classification, the exact form: "probability": true fits Platt
	 * scaling on internal folds of the kernel matrix (the model stores its
	 * coefficients; the approximate form gives none); the exact model keeps
	 * only the rows with a nonzero coefficient (km_svm_compact); with the
	 * SMO solver and no Platt folds its fit_classes reads the Gram matrix
	 * through a column cache (p->gram_cols).
	 */
	bool		platt_probability;
	bool		support_vectors;
	bool		gram_cols;

	/*
	 * Classification, the approximate form (primal Newton on the feature
	 * map, primal.h): the loss it minimizes, a km_primal_loss (logistic:
	 * probabilities by the logistic link, scored by log-loss), that loss's
	 * name as kernel_model_info shows it, and the solvers (bits 1u <<
	 * km_solver) it accepts besides the default, which name the same
	 * Newton steps.
	 */
	int			primal_loss;
	const char *primal_loss_name;
	unsigned	primal_solvers;

	/*
	 * Its exact fit always fits a bias (svr: libsvm's dual, whose equality
	 * constraint makes b a multiplier): "fit_intercept": false is refused on
	 * the exact expansion (options_core.c), never silently ignored.  Its
	 * approximate form in the primal honours it (b stays 0).
	 */
	bool		exact_bias;

	/*
	 * Its exact model is the posterior mean of a Gaussian process:
	 * alpha = (K + lambda I)^-1 y, so the predictive standard deviation and
	 * the log marginal likelihood of gp.h apply to it.
	 */
	bool		gp_reading;

	/*
	 * ---- tasks without a target (task.h km_task_ops.target false) ----
	 * The rows come without a target (kernel_fit); the learner's road for
	 * them (pipeline_rows.h) asks these.  outputs: the model's q for rows
	 * of n (exact) or m features (from sums), >= 1.  fit_rows: the exact
	 * fit on standardized rows X (n x d) with the n x n Gram space K and
	 * norms (km_row_norms or NULL) and work of rows_workspace_doubles(n).
	 * fit_sums (NULL: no approximate form): from the additive sums of the
	 * rows' features, S = sum z z' (m x m, lower, overwritten) and
	 * s = sum z (m) of n rows, with work of sums_workspace_doubles(m).
	 * store_rows copies settings and results into the model's fields it
	 * owns (its METHOD section).
	 */
	uint32_t	(*outputs) (const km_fit_params *p, size_t n);
	size_t		(*rows_workspace_doubles) (size_t n);
	km_status	(*fit_rows) (const km_fit_params *p, const double *X, size_t n,
							 int d, const double *norms, double *K, double *work,
							 km_rows_fit *f, km_error *err,
							 km_interrupt_fn interrupt);
	size_t		(*sums_workspace_doubles) (uint32_t m);
	km_status	(*fit_sums) (const km_fit_params *p, double *S, const double *s,
							 uint64_t n, uint32_t m, double *work,
							 km_rows_fit *f, km_error *err);
	void		(*store_rows) (const km_fit_params *p, const km_rows_fit *f,
							   struct km_model *m);

	/*
	 * Its fit_rows reads the Gram matrix's columns through a cache it keeps
	 * in its own workspace (the one-class SVM's SMO, as the exact svm's):
	 * the road gives it no n x n space (K NULL), and rows_workspace_doubles
	 * counts the cache.  With support_vectors (above) the road keeps only
	 * the rows with a nonzero coefficient in the model (km_svm_compact).
	 */
	bool		rows_gram_cols;

	/*
	 * Its approximate form when it is no function of the sums (fit_sums
	 * NULL; the one-class SVM's hinge needs every row): from the m
	 * features of every row, Z (n x m row-major, gathered in one ordered
	 * pass), with work of features_workspace_doubles(n, m) (0: overflow);
	 * the outputs' coef are m x q, as fit_sums's.
	 */
	size_t		(*features_workspace_doubles) (size_t n, uint32_t m);
	km_status	(*fit_features) (const km_fit_params *p, const double *Z,
								 size_t n, uint32_t m, double *work,
								 km_rows_fit *f, km_error *err,
								 km_interrupt_fn interrupt);
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

/* The default method of task (km_method_ops.task_default), or NULL if it has none. */
const km_method_ops *km_method_default(km_task task);

/* The method whose approximate form is the solve from the sums (approx_sums), or NULL. */
const km_method_ops *km_method_approx_sums(void);

/*
 * The notes' kernelized SGD (sgd.h; defined in sgd.c) for a binary
 * classifier of either loss (svm: hinge, logistic: logistic), for the
 * methods' "solver": "sgd"; more than two classes is KM_ERR_INVALID with
 * a hint.  w: k class weights; work: km_sgd_workspace_doubles(n) + n.
 */
size_t		km_fit_sgd_doubles(size_t n);
km_status	km_fit_sgd(const km_fit_params *p, bool hinge, const double *K,
					   size_t n, const uint32_t *cls, uint32_t k,
					   const double *class_w, double *alpha, double *intercepts,
					   double *work, km_class_fit_result *res, km_error *err,
					   km_interrupt_fn interrupt);

/* The solver a method uses for p->solver (its default for KM_SOLVER_DEFAULT). */
km_solver	km_method_solver(const km_method_ops *ops, km_solver solver);

/*
 * Shared by the classification methods (methods.c): the regression
 * entries that refuse a numeric target, the store of their settings and
 * results, and the fields of their METHOD section.
 */
size_t		km_classifier_no_workspace(size_t n);
km_status	km_classifier_no_fit(const km_fit_params *p, const double *X, size_t n,
								 int d, const double *y, double *alpha, double *K,
								 const double *norms, double *work,
								 km_fit_result *res, km_error *err,
								 km_interrupt_fn interrupt);
void		km_classifier_no_store(const km_fit_params *p, const km_fit_result *res,
								   struct km_model *m);
void		km_classifier_store(const km_fit_params *p, const km_class_fit_result *res,
								struct km_model *m);

#define KM_CLASSIFIER_N_FIELDS 6
extern const km_field km_classifier_fields[KM_CLASSIFIER_N_FIELDS];

/* The entries every classification method's ops share (k-fold selection, the above). */
#define KM_CLASSIFIER_OPS \
	.task = KM_TASK_CLASSIFICATION, \
	.routes = KM_ROUTE(KM_CV_KFOLD), \
	.default_route = KM_CV_KFOLD, \
	.default_folds = 5, \
	.lambda_per_row = true, \
	.solver_max_iter = true, \
	.workspace_doubles = km_classifier_no_workspace, \
	.fit = km_classifier_no_fit, \
	.store = km_classifier_no_store, \
	.fields = km_classifier_fields, \
	.n_fields = KM_CLASSIFIER_N_FIELDS, \
	.store_classes = km_classifier_store

/* The registered methods (methods.def). */
#define KM_METHOD(id, NAME, ops) extern const km_method_ops ops;
#include "methods.def"
#undef KM_METHOD

#endif							/* KM_METHOD_H */
