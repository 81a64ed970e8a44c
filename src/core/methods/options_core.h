/*
 * options_core.h - the options object: one table of keys that drives
 * parsing, the "Valid keys are ..." detail and the checks of which options
 * apply to which kernel (the methods say which apply to them, method.h) (core, no PostgreSQL headers).
 *
 * The glue (options.c) walks the jsonb and hands each key and value to
 * km_options_set through km_value, a neutral value type that a frontend
 * JSON parser can fill as well (test/fuzz/fuzz_options.c does).
 */
#ifndef KM_OPTIONS_CORE_H
#define KM_OPTIONS_CORE_H

#include "approx.h"
#include "class_types.h"
#include "grid.h"
#include "method.h"

/* A grid of candidate values for gamma or lambda. */
typedef struct km_grid
{
	int			n;				/* 0: not given */
	bool		per_feature;	/* values are multiples of 1 / n_features */
	bool		per_row;		/* values are multiples of 1 / n_rows (the
								 * classifiers' default lambda, C = 1) */
	double		v[KM_MAX_GRID];
} km_grid;

typedef enum km_deploy
{
	KM_DEPLOY_IF_BETTER = 0,
	KM_DEPLOY_ALWAYS,
	KM_DEPLOY_NEVER
} km_deploy;

/* The "deploy" option's spelling of a policy. */
const char *km_deploy_name(km_deploy deploy);

/*
 * Most "components" a training by solver takes: KM_CG_MAX_COMPONENTS with
 * "solver": "cg" (no m x m sums; its factors are counted against
 * kernel_ml.max_memory by the plan), else KM_APPROX_MAX_COMPONENTS.  The
 * one rule of the options' check and of the plans.
 */
int			km_components_max(km_solver solver);

/*
 * Parsed options.  A plain struct without pointers, so that aggregate
 * states can copy and serialize it as it is.
 */
typedef struct km_options
{
	km_fit_params fit;			/* kernel, method, lambda, lms settings */
	km_grid		gammas;			/* candidates; resolved once d is known */
	km_grid		lambdas;
	km_cv		cv;				/* KM_CV_NONE: no selection */
	int			folds;			/* cv = KM_CV_KFOLD */
	int64_t		seed;
	bool		standardize;
	bool		fit_intercept;
	/* catalog keys (kernel_model_train); validated here, used there */
	double		test_fraction;
	km_deploy	deploy;
	/* approximate models (issue 12): the exact expansion (repr.h) when absent */
	km_approx	approximation;
	int			components;		/* nystrom centres / rff features asked for */
	km_centres	centres;		/* nystrom: how its centres are chosen (centres.h) */
	bool		uncertainty;	/* approximate ridge: keep the GP reading's factor (gp.h) */
	/*
	 * classification: class_weight as a bounded table (classify.h; at most
	 * KM_MAX_CLASS_WEIGHTS labels of up to KM_CLASS_LABEL_MAX - 1 bytes),
	 * so that the struct stays pointer-free
	 */
	km_class_weights class_weight;
	bool		text_label;		/* the label column is text (set before finish) */
	bool		gamma_default;	/* gamma not given: 1 / d until training's heuristic */
	bool		method_default; /* "method" not given (set by finish) */
} km_options;

/* Default "components" of an approximate model. */
#define KM_DEFAULT_COMPONENTS 1000

/* One JSON value as the options parser sees it. */
typedef enum km_value_type
{
	KM_VALUE_NULL,
	KM_VALUE_NUMBER,
	KM_VALUE_STRING,
	KM_VALUE_BOOL,
	KM_VALUE_ARRAY,
	KM_VALUE_OBJECT
} km_value_type;

typedef struct km_value
{
	km_value_type type;
	double		number;			/* NUMBER; +-Inf when beyond double range */
	const char *string;			/* STRING, NUL-terminated */
	bool		boolean;		/* BOOL */
	const struct km_value *elems;	/* ARRAY: its elements (nested arrays and
									 * objects appear as ARRAY / OBJECT with
									 * no elements) */
	int			n_elems;
	const char *text;			/* how the value is written, for messages */
	const char *const *keys;	/* OBJECT: the key of each element (elems,
								 * n_elems); NULL when the parser does not
								 * read objects */
} km_value;

/* Keys, in the order of the table (and of the "Valid keys" detail). */
typedef enum km_option_id
{
	KM_OPT_KERNEL,
	KM_OPT_GAMMA,
	KM_OPT_DEGREE,
	KM_OPT_COEF0,
	KM_OPT_METHOD,
	KM_OPT_LAMBDA,
	KM_OPT_LEARNING_RATE,
	KM_OPT_MAX_ITER,
	KM_OPT_TOL,
	KM_OPT_STANDARDIZE,
	KM_OPT_FIT_INTERCEPT,
	KM_OPT_CV,
	KM_OPT_SEED,
	KM_OPT_TEST_FRACTION,
	KM_OPT_DEPLOY,
	KM_OPT_APPROXIMATION,
	KM_OPT_COMPONENTS,
	KM_OPT_SOLVER,
	KM_OPT_PROBABILITY,
	KM_OPT_CLASS_WEIGHT,
	KM_OPT_CENTERS,
	KM_OPT_UNCERTAINTY,
	KM_N_OPTIONS
} km_option_id;

/* How a value is read. */
typedef enum km_option_type
{
	KM_OPTTYPE_NUMBER,			/* finite number in [min, max] */
	KM_OPTTYPE_INTEGER,			/* whole number in [min, max] */
	KM_OPTTYPE_BOOL,
	KM_OPTTYPE_NAME,			/* one of a list of names */
	KM_OPTTYPE_GRID,			/* number, array of 1..KM_MAX_GRID numbers, or "auto" */
	KM_OPTTYPE_CV,				/* "loo", "gcv" or a whole number of folds */
	KM_OPTTYPE_CLASS_WEIGHT		/* "balanced" or an object of label -> number > 0 */
} km_option_type;

/* Functions that read an option (informational: every key is accepted by every function). */
#define KM_FN_EVAL		0x1		/* kernel_eval, kernel_matrix, kernel_check */
#define KM_FN_TRAIN		0x2		/* kernel_train */
#define KM_FN_CATALOG	0x4		/* kernel_model_train */
#define KM_FN_ALL		(KM_FN_EVAL | KM_FN_TRAIN | KM_FN_CATALOG)
#define KM_FN_TRAINING	(KM_FN_TRAIN | KM_FN_CATALOG)

/*
 * Which methods an option applies to is not in this table: a method lists
 * the options of its own (km_method_ops.options, method.h); an option no
 * method lists applies to every method.
 */

typedef struct km_option_def
{
	const char *key;
	km_option_type type;
	double		min;			/* NUMBER, INTEGER, GRID, CV (folds) */
	double		max;
	bool		min_exclusive;	/* value > min rather than >= min */
	bool		max_exclusive;
	const char *expected;		/* "Option \"k\" must be <expected>, got ..." */
	const char *default_value;	/* as JSON, for documentation */
	unsigned	functions;		/* KM_FN_* */
	unsigned	kernel_param;	/* KM_PARAM_* for a kernel parameter, else 0 */
} km_option_def;

extern const km_option_def km_option_table[KM_N_OPTIONS];

/*
 * An option a method has of its own (km_method_ops.own_options, method.h):
 * its row (type number, integer or bool; range, the "expected" text and
 * functions as in the shared table), where its value goes in the method's
 * params struct (a double, an int or a bool), and its default there.
 */
typedef struct km_method_option
{
	km_option_def def;
	size_t		offset;			/* offsetof(the method's params struct, field) */
	double		default_value;	/* bool: 0 or 1 */
} km_method_option;

/*
 * A method's own option as given, kept by the parser until
 * km_options_finish knows the method (the object's keys come in any
 * order).  The text is cut short for messages.
 */
typedef struct km_own_value
{
	const char *key;			/* the key of the first method row that has it */
	km_value_type type;
	double		number;
	bool		boolean;
	char		text[64];
} km_own_value;

#define KM_MAX_OWN_GIVEN 16

/* A parse in progress: the options so far and the keys given. */
typedef struct km_options_parser
{
	km_options *out;
	bool		given[KM_N_OPTIONS];
	km_own_value own[KM_MAX_OWN_GIVEN]; /* methods' own options given */
	int			n_own;
} km_options_parser;

/*
 * An invalid options object (SQLSTATE 22023 in the glue).  Values longer
 * than the buffers are cut short.
 */
typedef struct km_option_error
{
	char		message[256];	/* lowercase, no final period */
	char		detail[1024];	/* a full sentence */
	char		hint[512];		/* empty: none */
} km_option_error;

/*
 * "Valid keys are kernel, gamma, ...": detail of the key errors.  The
 * shared keys in the table's order, then the methods' own keys in the
 * order of methods.def (the method may not be known yet when a key is
 * read).
 */
const char *km_options_valid_keys(void);

/*
 * The method's own options into blob (params_size bytes of its params
 * struct; the rest zeroed): each row's default, then each of the n given
 * values whose key is one of its rows (others are ignored here: the caller
 * has refused them), checked against its row.  False (err filled) for a
 * bad value.
 */
bool		km_method_params_fill(const km_method_ops *ops,
								  const km_own_value *given, int n,
								  km_method_blob *blob, km_option_error *err);

/* Defaults into out, and a parser that fills it. */
void		km_options_begin(km_options_parser *p, km_options *out);

/*
 * The label column is text (kernel_train(features, label text, ...)):
 * call between km_options_begin and km_options_finish.  Then the default
 * method is "svm", and a regression method is an error with a hint.
 */
void		km_options_text_label(km_options_parser *p);

/* Validate and store one key; false (err filled) for an unknown key or a bad value. */
bool		km_options_set(km_options_parser *p, const char *key,
						   const km_value *v, km_option_error *err);

/* Checks across keys (kernel parameters, method settings, cv); false on error. */
bool		km_options_finish(km_options_parser *p, km_option_error *err);

/* False (err filled) unless gamma is a single value; fname names the caller. */
bool		km_options_check_single(const km_options *opts, const char *fname,
									km_option_error *err);

/*
 * Fill what depends on the number of features: the default gamma (1 / d)
 * and grids given relative to it.  opts->gamma_default then says that
 * gamma was not given (training may replace 1 / d by km_gamma_sigest).
 */
void		km_options_resolve(km_options *opts, int d);

/*
 * Fill what depends on the number of training rows n of the fit: the
 * classifiers' default lambda, 1 / n (C = 1 in libsvm's and scikit-learn's
 * terms: the objective (1/n) sum L + (lambda/2) ||f||^2 is 1 / (n lambda)
 * times theirs).  Call after km_options_resolve, with the rows the final
 * model is fitted on; k-fold selection uses the same lambda in every fold.
 */
void		km_options_resolve_rows(km_options *opts, size_t n);

/* Whether the options ask for more than one candidate, or for cv. */
bool		km_options_selects(const km_options *opts);

#endif							/* KM_OPTIONS_CORE_H */
