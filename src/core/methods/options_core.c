/*
 * options_core.c - validate the options object against one table of keys
 * (core, no PostgreSQL headers).
 *
 * One object serves every function, so every known key is accepted
 * everywhere (kernel_eval and kernel_matrix ignore the training keys), but
 * an unknown key, a value of the wrong type or out of range, a kernel
 * parameter the chosen kernel does not use, or a setting of another method
 * is an error.  Adding a key that several methods share: a km_option_id, a
 * row below, and its case in store_option (a plain_fields row for a value
 * stored as it is).  A key of one method only is a row of that method's
 * own_options (method.h): nothing here changes.
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "options_core.h"
#include "options_internal.h"
#include "options_suggest.h"
#include "method.h"
#include "primal.h"
#include "task.h"

/*
 * "auto" grids: 13 lambdas log-spaced from 1e-6 to 1e2, and gamma at
 * 2^-3 .. 2^3 times 1 / n_features.
 */
#define AUTO_LAMBDAS 13
#define AUTO_GAMMAS 7

#define KM_STR_(x) #x
#define KM_STR(x) KM_STR_(x)

#define CV_EXPECTED "\"loo\", \"gcv\", \"evidence\" or a number of folds from 2 to 1000"
#define DEPLOY_EXPECTED "\"if_better\", \"always\" or \"never\""

const km_option_def km_option_table[KM_N_OPTIONS] = {
	[KM_OPT_KERNEL] = {"kernel", KM_OPTTYPE_NAME, 0, 0, false, false,
		"a kernel name", "\"rbf\"", KM_FN_ALL, 0},
	[KM_OPT_GAMMA] = {"gamma", KM_OPTTYPE_GRID, 0, INFINITY, true, false,
		"a number > 0, an array of such numbers, or \"auto\"",
		"rbf, exact models: kernlab's sigest on the training rows; else 1 / n_features",
		KM_FN_ALL, KM_PARAM_GAMMA},
	[KM_OPT_DEGREE] = {"degree", KM_OPTTYPE_INTEGER, 1, 100, false, false,
		"an integer from 1 to 100", "3", KM_FN_ALL, KM_PARAM_DEGREE},
	[KM_OPT_COEF0] = {"coef0", KM_OPTTYPE_NUMBER, -INFINITY, INFINITY, false, false,
		"a number", "1", KM_FN_ALL, KM_PARAM_COEF0},
	/* the message lists the registered methods (bad_method) */
	[KM_OPT_METHOD] = {"method", KM_OPTTYPE_NAME, 0, 0, false, false,
		"a method name",
		"\"ridge\" (\"svm\" with a text label)", KM_FN_TRAINING, 0},
	[KM_OPT_LAMBDA] = {"lambda", KM_OPTTYPE_GRID, 0, INFINITY, false, false,
		"a number >= 0, an array of such numbers, or \"auto\"",
		"1 (svm, logistic and svr: 1 / n_rows, i.e. C = 1)", KM_FN_TRAINING, 0},
	[KM_OPT_LEARNING_RATE] = {"learning_rate", KM_OPTTYPE_NUMBER, 0, INFINITY, true, false,
		"a number > 0", "automatic", KM_FN_TRAINING, 0},
	[KM_OPT_MAX_ITER] = {"max_iter", KM_OPTTYPE_INTEGER, 1, INT_MAX, false, false,
		"an integer >= 1", "1000", KM_FN_TRAINING, 0},
	[KM_OPT_TOL] = {"tol", KM_OPTTYPE_NUMBER, 0, INFINITY, false, false,
		"a number >= 0", "1e-6 (1e-3 for svm and svr)", KM_FN_TRAINING, 0},
	[KM_OPT_STANDARDIZE] = {"standardize", KM_OPTTYPE_BOOL, 0, 0, false, false,
		"true or false", "true", KM_FN_TRAINING, 0},
	[KM_OPT_FIT_INTERCEPT] = {"fit_intercept", KM_OPTTYPE_BOOL, 0, 0, false, false,
		"true or false", "true", KM_FN_TRAINING, 0},
	[KM_OPT_CV] = {"cv", KM_OPTTYPE_CV, 2, 1000, false, false,
		CV_EXPECTED, "none (\"loo\" for a ridge grid, 5 folds for an lms grid)",
		KM_FN_TRAINING, 0},
	[KM_OPT_SEED] = {"seed", KM_OPTTYPE_INTEGER, INT_MIN, INT_MAX, false, false,
		"an integer", "0", KM_FN_TRAINING, 0},
	[KM_OPT_TEST_FRACTION] = {"test_fraction", KM_OPTTYPE_NUMBER, 0, 1, false, true,
		"a number >= 0 and < 1", "0.2", KM_FN_CATALOG, 0},
	[KM_OPT_DEPLOY] = {"deploy", KM_OPTTYPE_NAME, 0, 0, false, false,
		DEPLOY_EXPECTED, "\"if_better\"", KM_FN_CATALOG, 0},
	[KM_OPT_APPROXIMATION] = {"approximation", KM_OPTTYPE_NAME, 0, 0, false, false,
		"\"nystrom\" or \"rff\"", "none (exact)", KM_FN_TRAINING, 0},
	/*
	 * The solve's limit, checked here so that an impossible size is an
	 * option error before any row is read (not after the m x m sums).
	 */
	/* beyond KM_APPROX_MAX_COMPONENTS with "solver": "cg" only (km_options_finish, km_components_max) */
	[KM_OPT_COMPONENTS] = {"components", KM_OPTTYPE_INTEGER, 1, KM_CG_MAX_COMPONENTS, false, false,
		"an integer from 1 to " KM_STR(KM_APPROX_MAX_COMPONENTS) " (to " KM_STR(KM_CG_MAX_COMPONENTS)
		" with \"solver\": \"cg\")",
		"1000 (nystrom: at most the number of rows)", KM_FN_TRAINING, 0},
	[KM_OPT_SOLVER] = {"solver", KM_OPTTYPE_NAME, 0, 0, false, false,
		"\"smo\", \"newton\", \"sgd\" or \"cg\"", "\"smo\" for svm, \"newton\" for logistic, direct for ridge",
		KM_FN_TRAINING, 0},
	[KM_OPT_PROBABILITY] = {"probability", KM_OPTTYPE_BOOL, 0, 0, false, false,
		"true or false", "false", KM_FN_TRAINING, 0},
	[KM_OPT_CLASS_WEIGHT] = {"class_weight", KM_OPTTYPE_CLASS_WEIGHT, 0, INFINITY, true, false,
		"\"balanced\" or an object of label: weight > 0", "none (every weight 1)",
		KM_FN_TRAINING, 0},
	[KM_OPT_CENTERS] = {"centers", KM_OPTTYPE_NAME, 0, 0, false, false,
		"\"uniform\", \"kmeans\" or \"leverage\"", "\"uniform\"", KM_FN_TRAINING, 0},
	[KM_OPT_UNCERTAINTY] = {"uncertainty", KM_OPTTYPE_BOOL, 0, 0, false, false,
		"true or false", "false", KM_FN_TRAINING, 0},
};

/* The one name table of km_deploy. */
static const char *const deploy_names[] = {
	[KM_DEPLOY_IF_BETTER] = "if_better",
	[KM_DEPLOY_ALWAYS] = "always",
	[KM_DEPLOY_NEVER] = "never",
};

int
km_components_max(km_solver solver)
{
	return solver == KM_SOLVER_CG ? KM_CG_MAX_COMPONENTS : KM_APPROX_MAX_COMPONENTS;
}

const char *
km_deploy_name(km_deploy deploy)
{
	switch (deploy)
	{
		case KM_DEPLOY_IF_BETTER:
		case KM_DEPLOY_ALWAYS:
		case KM_DEPLOY_NEVER:
			return deploy_names[deploy];
	}
	return "unknown";
}

void
km_opt_append(char *buf, size_t len, const char *fmt,...)
{
	size_t		used = strlen(buf);
	va_list		ap;

	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

bool
km_opt_fail(km_option_error *err, const char *hint, const char *message,
			const char *detailfmt,...)
{
	va_list		ap;

	snprintf(err->message, sizeof(err->message), "%s", message);
	va_start(ap, detailfmt);
	vsnprintf(err->detail, sizeof(err->detail), detailfmt, ap);
	va_end(ap);
	snprintf(err->hint, sizeof(err->hint), "%s", hint ? hint : "");
	return false;
}

static bool
bad_value(km_option_error *err, const km_option_def *def, const char *got)
{
	char		message[256];

	snprintf(message, sizeof(message), "invalid value for option \"%s\"", def->key);
	return km_opt_fail(err, NULL, message, "Option \"%s\" must be %s, got %s.",
				def->key, def->expected, got);
}

/*
 * A value that names none of names[0..n): bad_value, with the closest name
 * (or a scikit-learn spelling's translation) as the hint.
 */
static bool
bad_name(km_option_error *err, const km_option_def *def, const km_value *v,
		 const char *const *names, int n)
{
	bad_value(err, def, v->text);
	if (v->type == KM_VALUE_STRING)
		km_suggest_value(def->key, v->string, names, n, err->hint, sizeof(err->hint));
	return false;
}

/* "a, b and c" (or "or") of the words a caller lists, into buf. */
void
km_opt_join_words(char *buf, size_t len, const char *const *words, int n, const char *last)
{
	buf[0] = '\0';
	for (int i = 0; i < n; i++)
		km_opt_append(buf, len, "%s%s", i == 0 ? "" : i == n - 1 ? last : ", ", words[i]);
}

/*
 * The first row of a method's own options with that key, in the order of
 * methods.def (its method in *owner), or NULL.
 */
const km_option_def *
km_opt_find_own(const char *key, const km_method_ops **owner)
{
	for (int m = KM_METHOD_FIRST; m <= KM_METHOD_LAST; m++)
	{
		const km_method_ops *ops = km_method_get((km_method) m);

		for (int i = 0; ops && i < ops->n_own_options; i++)
			if (strcmp(ops->own_options[i].def.key, key) == 0)
			{
				if (owner)
					*owner = ops;
				return &ops->own_options[i].def;
			}
	}
	return NULL;
}

/* The row of ops's own options with that key, or NULL. */
const km_method_option *
km_opt_method_own(const km_method_ops *ops, const char *key)
{
	for (int i = 0; i < ops->n_own_options; i++)
		if (strcmp(ops->own_options[i].def.key, key) == 0)
			return &ops->own_options[i];
	return NULL;
}

const char *
km_options_valid_keys(void)
{
	static char keys[1024];

	if (keys[0] == '\0')
	{
		km_opt_append(keys, sizeof(keys), "Valid keys are");
		for (int id = 0; id < KM_N_OPTIONS; id++)
			km_opt_append(keys, sizeof(keys), "%s %s", id == 0 ? "" : ",",
				   km_option_table[id].key);
		for (int m = KM_METHOD_FIRST; m <= KM_METHOD_LAST; m++)
		{
			const km_method_ops *ops = km_method_get((km_method) m);

			for (int i = 0; ops && i < ops->n_own_options; i++)
			{
				const km_option_def *def = &ops->own_options[i].def;

				if (km_opt_find_own(def->key, NULL) == def)	/* once per key */
					km_opt_append(keys, sizeof(keys), ", %s", def->key);
			}
		}
		km_opt_append(keys, sizeof(keys), ".");
	}
	return keys;
}

static const char *
valid_kernels(void)
{
	static char kernels[256];

	if (kernels[0] == '\0')
	{
		km_opt_append(kernels, sizeof(kernels), "Valid kernels are");
		for (int t = KM_KERNEL_FIRST; t <= KM_KERNEL_LAST; t++)
			km_opt_append(kernels, sizeof(kernels), "%s %s", t == KM_KERNEL_FIRST ? "" : ",",
				   km_kernel_name((km_kernel_type) t));
		km_opt_append(kernels, sizeof(kernels), ".");
	}
	return kernels;
}

static bool
in_range(const km_option_def *def, double x)
{
	return (def->min_exclusive ? x > def->min : x >= def->min) &&
		(def->max_exclusive ? x < def->max : x <= def->max);
}

/* A finite number within the row's range (whole for INTEGER and CV). */
static bool
read_number(const km_option_def *def, const km_value *v, double *x,
			km_option_error *err)
{
	if (v->type != KM_VALUE_NUMBER || !isfinite(v->number))
		return bad_value(err, def, v->text);
	*x = v->number;
	if ((def->type == KM_OPTTYPE_INTEGER || def->type == KM_OPTTYPE_CV) &&
		*x != floor(*x))
		return bad_value(err, def, v->text);
	if (!in_range(def, *x))
		return bad_value(err, def, v->text);
	return true;
}

static bool
read_grid(const km_option_def *def, const km_value *v, km_grid *g,
		  km_option_error *err)
{
	g->n = 0;
	g->per_feature = false;
	switch (v->type)
	{
		case KM_VALUE_STRING:
			if (strcmp(v->string, "auto") != 0)
			{
				static const char *const names[] = {"auto"};

				return bad_name(err, def, v, names, 1);
			}
			g->n = -1;			/* filled by the caller */
			return true;
		case KM_VALUE_OBJECT:
			return bad_value(err, def, "an object");
		case KM_VALUE_ARRAY:
			for (int i = 0; i < v->n_elems; i++)
			{
				const km_value *e = &v->elems[i];

				if (e->type != KM_VALUE_NUMBER || !isfinite(e->number) ||
					!in_range(def, e->number))
					return bad_value(err, def, e->text);
				if (g->n == KM_MAX_GRID)
				{
					char		message[256];

					snprintf(message, sizeof(message),
							 "too many candidates for option \"%s\"", def->key);
					return km_opt_fail(err, NULL, message,
								"At most %d values may be given.", KM_MAX_GRID);
				}
				g->v[g->n++] = e->number;
			}
			if (g->n == 0)
				return bad_value(err, def, "an empty array");
			return true;
		case KM_VALUE_NULL:
		case KM_VALUE_NUMBER:
		case KM_VALUE_BOOL:
			break;
	}
	if (!read_number(def, v, &g->v[0], err))
		return false;
	g->n = 1;
	return true;
}

/* The generic part of storing: type and range from the option's row. */
static bool
check_type(const km_option_def *def, const km_value *v, double *x,
		   km_option_error *err)
{
	switch (def->type)
	{
		case KM_OPTTYPE_NUMBER:
		case KM_OPTTYPE_INTEGER:
			return read_number(def, v, x, err);
		case KM_OPTTYPE_BOOL:
			if (v->type != KM_VALUE_BOOL)
				return bad_value(err, def, v->text);
			return true;
		case KM_OPTTYPE_NAME:
			if (v->type != KM_VALUE_STRING)
				return bad_value(err, def, v->text);
			return true;
		case KM_OPTTYPE_GRID:
			return true;
		case KM_OPTTYPE_CV:
			return v->type == KM_VALUE_STRING || read_number(def, v, x, err);
		case KM_OPTTYPE_CLASS_WEIGHT:
			return true;
	}
	return true;
}

/*
 * Options whose checked value is stored as it is: where in km_options, and
 * as what C type.
 */
typedef enum plain_kind
{
	PLAIN_NONE,
	PLAIN_DOUBLE,
	PLAIN_INT,
	PLAIN_INT64,
	PLAIN_BOOL
} plain_kind;

typedef struct plain_field
{
	plain_kind	kind;
	size_t		offset;
} plain_field;

static const plain_field plain_fields[KM_N_OPTIONS] = {
	[KM_OPT_DEGREE] = {PLAIN_INT, offsetof(km_options, fit.kernel.degree)},
	[KM_OPT_COEF0] = {PLAIN_DOUBLE, offsetof(km_options, fit.kernel.coef0)},
	[KM_OPT_LEARNING_RATE] = {PLAIN_DOUBLE, offsetof(km_options, fit.learning_rate)},
	[KM_OPT_MAX_ITER] = {PLAIN_INT, offsetof(km_options, fit.max_iter)},
	[KM_OPT_TOL] = {PLAIN_DOUBLE, offsetof(km_options, fit.tol)},
	[KM_OPT_STANDARDIZE] = {PLAIN_BOOL, offsetof(km_options, standardize)},
	[KM_OPT_FIT_INTERCEPT] = {PLAIN_BOOL, offsetof(km_options, fit_intercept)},
	[KM_OPT_SEED] = {PLAIN_INT64, offsetof(km_options, seed)},
	[KM_OPT_TEST_FRACTION] = {PLAIN_DOUBLE, offsetof(km_options, test_fraction)},
	[KM_OPT_COMPONENTS] = {PLAIN_INT, offsetof(km_options, components)},
	[KM_OPT_PROBABILITY] = {PLAIN_BOOL, offsetof(km_options, fit.probability)},
	[KM_OPT_UNCERTAINTY] = {PLAIN_BOOL, offsetof(km_options, uncertainty)},
};

static void
store_plain(km_options *out, km_option_id id, const km_value *v, double x)
{
	char	   *field = (char *) out + plain_fields[id].offset;

	switch (plain_fields[id].kind)
	{
		case PLAIN_DOUBLE:
			*(double *) field = x;
			break;
		case PLAIN_INT:
			*(int *) field = (int) x;
			break;
		case PLAIN_INT64:
			*(int64_t *) field = (int64_t) x;
			break;
		case PLAIN_BOOL:
			*(bool *) field = v->boolean;
			break;
		case PLAIN_NONE:
			break;
	}
}

static bool
store_kernel(km_options *out, const km_value *v, km_option_error *err)
{
	char		message[256];

	const char *names[KM_KERNEL_LAST - KM_KERNEL_FIRST + 1];
	int			n = 0;

	if (km_kernel_from_name(v->string, &out->fit.kernel.type))
		return true;
	for (int t = KM_KERNEL_FIRST; t <= KM_KERNEL_LAST; t++)
		names[n++] = km_kernel_name((km_kernel_type) t);
	snprintf(message, sizeof(message), "unknown kernel \"%s\"", v->string);
	km_opt_fail(err, NULL, message, "%s", valid_kernels());
	km_suggest_value("kernel", v->string, names, n, err->hint, sizeof(err->hint));
	return false;
}

/* A grid of gammas or lambdas; "auto" stands for the built-in grid. */
static bool
store_grid(km_options *out, km_option_id id, const km_value *v,
		   km_option_error *err)
{
	const km_option_def *def = &km_option_table[id];
	km_grid    *g = id == KM_OPT_GAMMA ? &out->gammas : &out->lambdas;

	if (!read_grid(def, v, g, err))
		return false;
	if (g->n >= 0)
		return true;
	if (id == KM_OPT_GAMMA)
	{
		g->n = AUTO_GAMMAS;
		g->per_feature = true;
		for (int i = 0; i < AUTO_GAMMAS; i++)
			g->v[i] = ldexp(1.0, i - AUTO_GAMMAS / 2);
	}
	else
	{
		g->n = AUTO_LAMBDAS;
		for (int i = 0; i < AUTO_LAMBDAS; i++)
			g->v[i] = pow(10.0, -6.0 + 8.0 * i / (AUTO_LAMBDAS - 1));
	}
	return true;
}

static bool
store_cv(km_options *out, const km_value *v, double folds,
		 km_option_error *err)
{
	if (v->type != KM_VALUE_STRING)
	{
		out->cv = KM_CV_KFOLD;
		out->folds = (int) folds;
	}
	else if (strcmp(v->string, "loo") == 0)
		out->cv = KM_CV_LOO;
	else if (strcmp(v->string, "gcv") == 0)
		out->cv = KM_CV_GCV;
	else if (strcmp(v->string, "evidence") == 0)
		out->cv = KM_CV_EVIDENCE;
	else
	{
		static const char *const names[] = {"loo", "gcv", "evidence"};

		return bad_name(err, &km_option_table[KM_OPT_CV], v, names, 3);
	}
	return true;
}

static bool
store_deploy(km_options *out, const km_value *v, km_option_error *err)
{
	for (size_t i = 0; i < sizeof(deploy_names) / sizeof(deploy_names[0]); i++)
		if (strcmp(v->string, deploy_names[i]) == 0)
		{
			out->deploy = (km_deploy) i;
			return true;
		}
	return bad_name(err, &km_option_table[KM_OPT_DEPLOY], v, deploy_names,
					(int) (sizeof(deploy_names) / sizeof(deploy_names[0])));
}

static bool
store_solver(km_options *out, const km_value *v, km_option_error *err)
{
	const char *names[KM_SOLVER_LAST - KM_SOLVER_FIRST + 1];
	int			n = 0;

	if (strcmp(v->string, "primal-newton") != 0 &&
		km_solver_from_name(v->string, &out->fit.solver))
		return true;
	for (int s = KM_SOLVER_FIRST; s <= KM_SOLVER_LAST; s++)
		if (strcmp(km_solver_name((km_solver) s), "primal-newton") != 0)
			names[n++] = km_solver_name((km_solver) s);
	return bad_name(err, &km_option_table[KM_OPT_SOLVER], v, names, n);
}

/*
 * "balanced", or {"label": weight, ...} into the bounded table (labels
 * longer than KM_CLASS_LABEL_MAX - 1 bytes or more than
 * KM_MAX_CLASS_WEIGHTS entries are an error, not cut short).
 */
static bool
store_class_weight(km_options *out, const km_value *v, km_option_error *err)
{
	const km_option_def *def = &km_option_table[KM_OPT_CLASS_WEIGHT];
	km_class_weights *cw = &out->class_weight;

	memset(cw, 0, sizeof(*cw));
	if (v->type == KM_VALUE_STRING && strcmp(v->string, "balanced") == 0)
	{
		cw->mode = KM_CLASS_WEIGHT_BALANCED;
		return true;
	}
	if (v->type == KM_VALUE_STRING)
	{
		static const char *const names[] = {"balanced"};

		return bad_name(err, def, v, names, 1);
	}
	if (v->type != KM_VALUE_OBJECT || v->keys == NULL || v->n_elems == 0)
		return bad_value(err, def, v->type == KM_VALUE_OBJECT ? "an empty object" : v->text);
	if (v->n_elems > KM_MAX_CLASS_WEIGHTS)
		return km_opt_fail(err, "Give weights to at most that many classes; the others get 1.",
					"too many labels in option \"class_weight\"",
					"At most %d labels may be given, got %d.",
					KM_MAX_CLASS_WEIGHTS, v->n_elems);
	cw->mode = KM_CLASS_WEIGHT_TABLE;
	for (int i = 0; i < v->n_elems; i++)
	{
		const km_value *e = &v->elems[i];

		if (strlen(v->keys[i]) >= KM_CLASS_LABEL_MAX)
			return km_opt_fail(err, NULL, "label in option \"class_weight\" is too long",
						"A label of option \"class_weight\" has %zu bytes; at most %d are accepted.",
						strlen(v->keys[i]), KM_CLASS_LABEL_MAX - 1);
		if (e->type != KM_VALUE_NUMBER || !isfinite(e->number) || e->number <= 0.0)
			return km_opt_fail(err, NULL, "invalid value for option \"class_weight\"",
						"The weight of label \"%s\" must be a number > 0, got %s.",
						v->keys[i], e->text);
		snprintf(cw->label[i], KM_CLASS_LABEL_MAX, "%s", v->keys[i]);
		cw->weight[i] = e->number;
	}
	cw->n = v->n_elems;
	return true;
}

/*
 * An unknown method: the names in the registry's order, as the table's
 * "expected" text spells them ("ridge", "lms", "svm" or "logistic").
 */
static bool
bad_method(km_option_error *err, const km_value *v)
{
	char		quoted[KM_METHOD_LAST][40];
	const char *names[KM_METHOD_LAST];
	char		list[512];
	int			n = 0;

	for (int m = KM_METHOD_FIRST; m <= KM_METHOD_LAST; m++)
	{
		const km_method_ops *ops = km_method_get((km_method) m);

		if (ops == NULL)
			continue;
		snprintf(quoted[n], sizeof(quoted[n]), "\"%s\"", ops->name);
		names[n] = quoted[n];
		n++;
	}
	km_opt_join_words(list, sizeof(list), names, n, " or ");
	km_opt_fail(err, NULL, "invalid value for option \"method\"",
				"Option \"method\" must be %s, got %s.", list, v->text);
	if (v->type == KM_VALUE_STRING)
	{
		n = 0;
		for (int m = KM_METHOD_FIRST; m <= KM_METHOD_LAST; m++)
			if (km_method_get((km_method) m) != NULL)
				names[n++] = km_method_get((km_method) m)->name;
		km_suggest_value("method", v->string, names, n, err->hint, sizeof(err->hint));
	}
	return false;
}

/* Methods' own keys a suggestion compares with, at most. */
#define KM_MAX_KEYS_OWN 32

/* Store one validated value; the one place that knows km_options' fields. */
static bool
store_option(km_options *out, km_option_id id, const km_value *v,
			 km_option_error *err)
{
	const km_option_def *def = &km_option_table[id];
	double		x = 0.0;

	if (id == KM_OPT_METHOD && v->type != KM_VALUE_STRING)
		return bad_method(err, v);
	if (!check_type(def, v, &x, err))
		return false;
	switch (id)
	{
		case KM_OPT_KERNEL:
			return store_kernel(out, v, err);
		case KM_OPT_GAMMA:
		case KM_OPT_LAMBDA:
			return store_grid(out, id, v, err);
		case KM_OPT_METHOD:
			if (!km_method_from_name(v->string, &out->fit.method))
				return bad_method(err, v);
			return true;
		case KM_OPT_CV:
			return store_cv(out, v, x, err);
		case KM_OPT_DEPLOY:
			return store_deploy(out, v, err);
		case KM_OPT_APPROXIMATION:
			{
				/* the approximate representations: exact is the option's absence */
				const km_repr_ops *r = km_repr_by_option(v->string);

				if (r == NULL)
				{
					const char *names[8];
					int			n = km_repr_option_names(names, 8);

					return bad_name(err, def, v, names, n);
				}
				out->approximation = (km_approx) r->id;
				return true;
			}
		case KM_OPT_SOLVER:
			return store_solver(out, v, err);
		case KM_OPT_CENTERS:
			if (!km_centres_from_name(v->string, &out->centres))
			{
				const char *names[KM_CENTRES_LAST - KM_CENTRES_FIRST + 1];

				for (int i = KM_CENTRES_FIRST; i <= KM_CENTRES_LAST; i++)
					names[i - KM_CENTRES_FIRST] = km_centres_name((km_centres) i);
				return bad_name(err, def, v, names, KM_CENTRES_LAST - KM_CENTRES_FIRST + 1);
			}
			return true;
		case KM_OPT_CLASS_WEIGHT:
			return store_class_weight(out, v, err);
		case KM_OPT_PROBABILITY:
		case KM_OPT_UNCERTAINTY:
		case KM_OPT_DEGREE:
		case KM_OPT_COEF0:
		case KM_OPT_LEARNING_RATE:
		case KM_OPT_MAX_ITER:
		case KM_OPT_TOL:
		case KM_OPT_STANDARDIZE:
		case KM_OPT_FIT_INTERCEPT:
		case KM_OPT_SEED:
		case KM_OPT_TEST_FRACTION:
		case KM_OPT_COMPONENTS:
			store_plain(out, id, v, x);
			return true;
		case KM_N_OPTIONS:
			break;
	}
	return true;
}

void
km_options_begin(km_options_parser *p, km_options *out)
{
	km_fit_params *fit = &out->fit;

	memset(p, 0, sizeof(*p));
	p->out = out;
	memset(out, 0, sizeof(*out));
	fit->kernel.type = KM_KERNEL_RBF;
	fit->kernel.degree = 3;
	fit->kernel.coef0 = 1.0;
	fit->method = km_method_default(km_task_default()->id)->id;
	fit->lambda = 1.0;
	fit->learning_rate = 0.0;	/* automatic */
	fit->max_iter = 1000;
	fit->tol = 1e-6;
	out->standardize = true;
	out->fit_intercept = true;
	out->cv = KM_CV_NONE;
	out->test_fraction = 0.2;
	out->deploy = KM_DEPLOY_IF_BETTER;
	out->approximation = (km_approx) km_repr_default()->id;
	out->components = KM_DEFAULT_COMPONENTS;
	out->method_default = true;
	fit->fit_intercept = true;
}

void
km_options_text_label(km_options_parser *p)
{
	p->out->text_label = true;
}

/*
 * A method's own option, kept until km_options_finish knows the method:
 * its value is checked against that method's row there.
 */
static bool
keep_own_option(km_options_parser *p, const km_option_def *def,
				const km_value *v, km_option_error *err)
{
	km_own_value *o;

	for (int i = 0; i < p->n_own; i++)
		if (p->own[i].key == def->key)
			return km_opt_fail(err, NULL, "duplicate option",
						"Option \"%s\" is given twice.", def->key);
	if (p->n_own == KM_MAX_OWN_GIVEN)
		return km_opt_fail(err, NULL, "too many method options",
					"At most %d options of the methods' own may be given.",
					KM_MAX_OWN_GIVEN);
	o = &p->own[p->n_own++];
	memset(o, 0, sizeof(*o));
	o->key = def->key;
	o->type = v->type;
	o->number = v->number;
	o->boolean = v->boolean;
	snprintf(o->text, sizeof(o->text), "%s", v->text ? v->text : "");
	return true;
}

bool
km_method_params_fill(const km_method_ops *ops, const km_own_value *given,
					  int n, km_method_blob *blob, km_option_error *err)
{
	memset(blob, 0, sizeof(*blob));
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < (pass == 0 ? ops->n_own_options : n); i++)
		{
			const km_method_option *row;
			km_value	v;
			double		x;
			char	   *field;

			memset(&v, 0, sizeof(v));
			if (pass == 0)
			{
				row = &ops->own_options[i];
				x = row->default_value;
				v.boolean = x != 0.0;
			}
			else
			{
				if ((row = km_opt_method_own(ops, given[i].key)) == NULL)
					continue;
				v.type = given[i].type;
				v.number = given[i].number;
				v.boolean = given[i].boolean;
				v.text = given[i].text;
				x = 0.0;
				if (!check_type(&row->def, &v, &x, err))
					return false;
			}
			if (row->offset >= sizeof(blob->bytes))
				return km_opt_fail(err, NULL, "invalid method option table",
							"Option \"%s\" of method \"%s\" lies outside its parameters.",
							row->def.key, ops->name);
			field = (char *) blob->bytes + row->offset;
			switch (row->def.type)
			{
				case KM_OPTTYPE_NUMBER:
					*(double *) field = x;
					break;
				case KM_OPTTYPE_INTEGER:
					*(int *) field = (int) x;
					break;
				case KM_OPTTYPE_BOOL:
					*(bool *) field = v.boolean;
					break;
				default:
					return km_opt_fail(err, NULL, "invalid method option table",
								"Option \"%s\" of method \"%s\" has a type a method's own option cannot have.",
								row->def.key, ops->name);
			}
		}
	return true;
}

/* The hint of an unknown key: every key, shared and the methods' own. */
static void
suggest_key(const char *key, const km_value *v, km_option_error *err)
{
	const char *keys[KM_N_OPTIONS + KM_MAX_KEYS_OWN];
	int			n = 0;

	for (int id = 0; id < KM_N_OPTIONS; id++)
		keys[n++] = km_option_table[id].key;
	for (int m = KM_METHOD_FIRST; m <= KM_METHOD_LAST; m++)
	{
		const km_method_ops *ops = km_method_get((km_method) m);

		for (int i = 0; ops && i < ops->n_own_options && n < KM_N_OPTIONS + KM_MAX_KEYS_OWN; i++)
			keys[n++] = ops->own_options[i].def.key;
	}
	km_suggest_key(key, v, keys, n, err->hint, sizeof(err->hint));
}

bool
km_options_set(km_options_parser *p, const char *key, const km_value *v,
			   km_option_error *err)
{
	int			id;

	for (id = 0; id < KM_N_OPTIONS; id++)
		if (strcmp(key, km_option_table[id].key) == 0)
			break;
	if (id == KM_N_OPTIONS)
	{
		const km_option_def *own = km_opt_find_own(key, NULL);
		char		message[256];

		if (own != NULL)
			return keep_own_option(p, own, v, err);
		snprintf(message, sizeof(message), "unknown option \"%s\"", key);
		km_opt_fail(err, NULL, message, "%s", km_options_valid_keys());
		suggest_key(key, v, err);
		return false;
	}
	p->given[id] = true;
	return store_option(p->out, (km_option_id) id, v, err);
}

bool
km_options_finish(km_options_parser *p, km_option_error *err)
{
	km_options *out = p->out;
	km_fit_params *fit = &out->fit;
	const km_method_ops *ops;

	ops = km_method_get(fit->method);
	if (ops == NULL)
		return km_opt_fail(err, NULL, "unknown training method",
					"Method %d is not a method of this build of kernel_ml.",
					(int) fit->method);
	if (out->components > km_components_max(fit->solver))
	{
		char		got[32];

		snprintf(got, sizeof(got), "%d", out->components);
		return bad_value(err, &km_option_table[KM_OPT_COMPONENTS], got);
	}
	if (!km_options_check_task(p, &ops, err) || !km_options_check_kernel(p, err) ||
		!km_options_check_method(p, ops, err) ||
		!km_method_params_fill(ops, p->own, p->n_own, &fit->method_params, err))
		return false;

	/*
	 * Methods of libsvm's C without a lambda (svm, logistic, svr): C = 1 as
	 * in libsvm and scikit-learn, lambda = 1 / n (km_options_resolve_rows),
	 * not the ridge default 1, which is C = 1 / n (a classifier then
	 * predicts the majority class).
	 */
	if (ops->lambda_per_row && !p->given[KM_OPT_LAMBDA])
	{
		out->lambdas.n = 1;
		out->lambdas.per_row = true;
		out->lambdas.v[0] = 1.0;
	}

	/* single values go straight into the fit parameters */
	if (out->lambdas.n == 1 && !out->lambdas.per_row)
		fit->lambda = out->lambdas.v[0];

	if (!km_options_check_route(out, ops, err))
		return false;
	if (!km_options_check_approx(p, ops, err))
		return false;
	if (!km_options_check_bias(p, ops, err))
		return false;
	/* an approximate grid: GCV from the sums (ridge's solve), or a primal method's k-fold (below) */
	if (out->cv == KM_CV_NONE &&
		km_repr_scores_sums(km_repr_lookup(out->approximation), ops->approx_sums, out->lambdas.n))
		out->cv = KM_CV_GCV;
	if (out->cv == KM_CV_NONE && (out->gammas.n > 1 || out->lambdas.n > 1))
	{
		/* a grid without cv: the method's own route */
		out->cv = (km_cv) ops->default_route;
		if (out->cv == KM_CV_KFOLD)
			out->folds = ops->default_folds;
	}
	/*
	 * A grid the method has no score to choose from (kernel_fit's pca and
	 * oneclass): refused, never its first candidate taken in silence.
	 */
	if (out->cv == KM_CV_NONE && (out->gammas.n > 1 || out->lambdas.n > 1))
	{
		bool		gammas = out->gammas.n > 1;
		char		message[256];

		snprintf(message, sizeof(message), "method \"%s\" takes a single %s",
				 ops->name, gammas ? "gamma" : "lambda");
		return km_opt_fail(err, gammas ?
						   "Give \"gamma\" one number (or leave it out for 1 / the number of features)." :
						   "Give \"lambda\" one number.",
						   message,
						   "Option \"%s\" has %d candidates, and method \"%s\" has no score to choose one by.",
						   gammas ? "gamma" : "lambda",
						   gammas ? out->gammas.n : out->lambdas.n, ops->name);
	}
	return true;
}

bool
km_options_check_single(const km_options *opts, const char *fname,
						km_option_error *err)
{
	char		message[256];

	if (opts->gammas.n <= 1)
		return true;
	snprintf(message, sizeof(message), "%s takes a single gamma", fname);
	return km_opt_fail(err, NULL, message,
				"Option \"gamma\" has %d candidates; grids are for kernel_train.",
				opts->gammas.n);
}

void
km_options_resolve(km_options *opts, int d)
{
	km_grid    *g = &opts->gammas;

	if (g->n == 0)
	{
		g->n = 1;
		g->per_feature = true;
		g->v[0] = 1.0;
		opts->gamma_default = true;
	}
	if (g->per_feature)
	{
		for (int i = 0; i < g->n; i++)
			g->v[i] /= (double) d;
		g->per_feature = false;
	}
	opts->fit.kernel.gamma = g->v[0];
	if (opts->lambdas.n == 0)
	{
		opts->lambdas.n = 1;
		opts->lambdas.v[0] = opts->fit.lambda;
	}
}

void
km_options_resolve_rows(km_options *opts, size_t n)
{
	km_grid    *g = &opts->lambdas;

	if (!g->per_row)
		return;
	for (int i = 0; i < g->n; i++)
		g->v[i] /= (double) (n > 0 ? n : 1);
	g->per_row = false;
	opts->fit.lambda = g->v[0];
}

bool
km_options_selects(const km_options *opts)
{
	return opts->cv != KM_CV_NONE;
}
