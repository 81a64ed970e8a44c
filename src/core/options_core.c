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

#define CV_EXPECTED "\"loo\", \"gcv\" or a number of folds from 2 to 1000"
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
	[KM_OPT_COMPONENTS] = {"components", KM_OPTTYPE_INTEGER, 1, KM_APPROX_MAX_COMPONENTS, false, false,
		"an integer from 1 to " KM_STR(KM_APPROX_MAX_COMPONENTS),
		"1000 (nystrom: at most the number of rows)", KM_FN_TRAINING, 0},
	[KM_OPT_SOLVER] = {"solver", KM_OPTTYPE_NAME, 0, 0, false, false,
		"\"smo\", \"newton\" or \"sgd\"", "\"smo\" for svm, \"newton\" for logistic",
		KM_FN_TRAINING, 0},
	[KM_OPT_PROBABILITY] = {"probability", KM_OPTTYPE_BOOL, 0, 0, false, false,
		"true or false", "false", KM_FN_TRAINING, 0},
	[KM_OPT_CLASS_WEIGHT] = {"class_weight", KM_OPTTYPE_CLASS_WEIGHT, 0, INFINITY, true, false,
		"\"balanced\" or an object of label: weight > 0", "none (every weight 1)",
		KM_FN_TRAINING, 0},
};

/* The one name table of km_deploy. */
static const char *const deploy_names[] = {
	[KM_DEPLOY_IF_BETTER] = "if_better",
	[KM_DEPLOY_ALWAYS] = "always",
	[KM_DEPLOY_NEVER] = "never",
};

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

static void
append(char *buf, size_t len, const char *fmt,...)
	__attribute__((format(printf, 3, 4)));

static void
append(char *buf, size_t len, const char *fmt,...)
{
	size_t		used = strlen(buf);
	va_list		ap;

	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

static bool
fail(km_option_error *err, const char *hint, const char *message,
	 const char *detailfmt,...)
	__attribute__((format(printf, 4, 5)));

static bool
fail(km_option_error *err, const char *hint, const char *message,
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
	return fail(err, NULL, message, "Option \"%s\" must be %s, got %s.",
				def->key, def->expected, got);
}

/* "a, b and c" (or "or") of the words a caller lists, into buf. */
static void
join_words(char *buf, size_t len, const char *const *words, int n, const char *last)
{
	buf[0] = '\0';
	for (int i = 0; i < n; i++)
		append(buf, len, "%s%s", i == 0 ? "" : i == n - 1 ? last : ", ", words[i]);
}

/*
 * The first row of a method's own options with that key, in the order of
 * methods.def (its method in *owner), or NULL.
 */
static const km_option_def *
find_own_option(const char *key, const km_method_ops **owner)
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
static const km_method_option *
method_own_option(const km_method_ops *ops, const char *key)
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
		append(keys, sizeof(keys), "Valid keys are");
		for (int id = 0; id < KM_N_OPTIONS; id++)
			append(keys, sizeof(keys), "%s %s", id == 0 ? "" : ",",
				   km_option_table[id].key);
		for (int m = KM_METHOD_FIRST; m <= KM_METHOD_LAST; m++)
		{
			const km_method_ops *ops = km_method_get((km_method) m);

			for (int i = 0; ops && i < ops->n_own_options; i++)
			{
				const km_option_def *def = &ops->own_options[i].def;

				if (find_own_option(def->key, NULL) == def)	/* once per key */
					append(keys, sizeof(keys), ", %s", def->key);
			}
		}
		append(keys, sizeof(keys), ".");
	}
	return keys;
}

static const char *
valid_kernels(void)
{
	static char kernels[256];

	if (kernels[0] == '\0')
	{
		append(kernels, sizeof(kernels), "Valid kernels are");
		for (int t = KM_KERNEL_FIRST; t <= KM_KERNEL_LAST; t++)
			append(kernels, sizeof(kernels), "%s %s", t == KM_KERNEL_FIRST ? "" : ",",
				   km_kernel_name((km_kernel_type) t));
		append(kernels, sizeof(kernels), ".");
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
				return bad_value(err, def, v->text);
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
					return fail(err, NULL, message,
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

	if (km_kernel_from_name(v->string, &out->fit.kernel.type))
		return true;
	snprintf(message, sizeof(message), "unknown kernel \"%s\"", v->string);
	return fail(err, NULL, message, "%s", valid_kernels());
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
	else
		return bad_value(err, &km_option_table[KM_OPT_CV], v->text);
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
	return bad_value(err, &km_option_table[KM_OPT_DEPLOY], v->text);
}

static bool
store_solver(km_options *out, const km_value *v, km_option_error *err)
{
	if (strcmp(v->string, "primal-newton") != 0 &&
		km_solver_from_name(v->string, &out->fit.solver))
		return true;
	return bad_value(err, &km_option_table[KM_OPT_SOLVER], v->text);
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
	if (v->type != KM_VALUE_OBJECT || v->keys == NULL || v->n_elems == 0)
		return bad_value(err, def, v->type == KM_VALUE_OBJECT ? "an empty object" : v->text);
	if (v->n_elems > KM_MAX_CLASS_WEIGHTS)
		return fail(err, "Give weights to at most that many classes; the others get 1.",
					"too many labels in option \"class_weight\"",
					"At most %d labels may be given, got %d.",
					KM_MAX_CLASS_WEIGHTS, v->n_elems);
	cw->mode = KM_CLASS_WEIGHT_TABLE;
	for (int i = 0; i < v->n_elems; i++)
	{
		const km_value *e = &v->elems[i];

		if (strlen(v->keys[i]) >= KM_CLASS_LABEL_MAX)
			return fail(err, NULL, "label in option \"class_weight\" is too long",
						"A label of option \"class_weight\" has %zu bytes; at most %d are accepted.",
						strlen(v->keys[i]), KM_CLASS_LABEL_MAX - 1);
		if (e->type != KM_VALUE_NUMBER || !isfinite(e->number) || e->number <= 0.0)
			return fail(err, NULL, "invalid value for option \"class_weight\"",
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
bad_method(km_option_error *err, const char *got)
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
	join_words(list, sizeof(list), names, n, " or ");
	return fail(err, NULL, "invalid value for option \"method\"",
				"Option \"method\" must be %s, got %s.", list, got);
}

/* Store one validated value; the one place that knows km_options' fields. */
static bool
store_option(km_options *out, km_option_id id, const km_value *v,
			 km_option_error *err)
{
	const km_option_def *def = &km_option_table[id];
	double		x = 0.0;

	if (id == KM_OPT_METHOD && v->type != KM_VALUE_STRING)
		return bad_method(err, v->text);
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
				return bad_method(err, v->text);
			return true;
		case KM_OPT_CV:
			return store_cv(out, v, x, err);
		case KM_OPT_DEPLOY:
			return store_deploy(out, v, err);
		case KM_OPT_APPROXIMATION:
			{
				/* the approximate representations: exact is the option's absence */
				const km_repr_ops *r = km_repr_by_name(v->string);

				if (r == NULL || !r->approximate)
					return bad_value(err, def, v->text);
				out->approximation = (km_approx) r->id;
				return true;
			}
		case KM_OPT_SOLVER:
			return store_solver(out, v, err);
		case KM_OPT_CLASS_WEIGHT:
			return store_class_weight(out, v, err);
		case KM_OPT_PROBABILITY:
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

/* The task a text label column asks for: the first whose targets are classes. */
static km_task
label_task(void)
{
	long long	t = KM_TASK_FIRST;

	while (t < KM_TASK_LAST && !km_task_get(t)->classes)
		t++;
	return (km_task) t;
}

/*
 * The method's task against the label column: a text label defaults to
 * the classification task's default method (svm) and refuses a
 * regression method; then the method's own defaults (tol) and its solver.
 */
static bool
check_task(km_options_parser *p, const km_method_ops **ops,
		   km_option_error *err)
{
	km_options *out = p->out;
	km_fit_params *fit = &out->fit;
	char		message[256];

	out->method_default = !p->given[KM_OPT_METHOD];
	if (out->text_label && !p->given[KM_OPT_METHOD])
	{
		fit->method = km_method_default(label_task())->id;
		*ops = km_method_get(fit->method);
	}
	if (out->text_label && !km_task_lookup((*ops)->task)->classes)
	{
		snprintf(message, sizeof(message),
				 "method \"%s\" cannot learn text labels", (*ops)->name);
		return fail(err, "Use \"method\": \"svm\" or \"logistic\" to classify, or train on a float8 target to regress.",
					message, "Method \"%s\" is a regression method; a text label column needs a classification method.",
					(*ops)->name);
	}
	/* the method's own defaults of shared options (method.h), for any task */
	if (!p->given[KM_OPT_TOL] && (*ops)->default_tol > 0.0)
		fit->tol = (*ops)->default_tol;
	if (!p->given[KM_OPT_MAX_ITER] && (*ops)->solver_max_iter)
		fit->max_iter = 0;		/* the solver's own limit (libsvm's max(10^7, 100 n)) */
	if (km_task_lookup((*ops)->task)->solvers)
	{
		if (fit->solver != KM_SOLVER_DEFAULT &&
			!((*ops)->solvers & (1u << fit->solver)))
		{
			snprintf(message, sizeof(message),
					 "solver \"%s\" does not apply to method \"%s\"",
					 km_solver_name(fit->solver), (*ops)->name);
			return fail(err, NULL, message,
						"Method \"%s\" takes solver \"%s\" (its default) or \"sgd\".",
						(*ops)->name, km_solver_name((*ops)->default_solver));
		}
	}
	fit->fit_intercept = out->fit_intercept;
	fit->seed = out->seed;
	return true;
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
			return fail(err, NULL, "duplicate option",
						"Option \"%s\" is given twice.", def->key);
	if (p->n_own == KM_MAX_OWN_GIVEN)
		return fail(err, NULL, "too many method options",
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
				if ((row = method_own_option(ops, given[i].key)) == NULL)
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
				return fail(err, NULL, "invalid method option table",
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
					return fail(err, NULL, "invalid method option table",
								"Option \"%s\" of method \"%s\" has a type a method's own option cannot have.",
								row->def.key, ops->name);
			}
		}
	return true;
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
		const km_option_def *own = find_own_option(key, NULL);
		char		message[256];

		if (own != NULL)
			return keep_own_option(p, own, v, err);
		snprintf(message, sizeof(message), "unknown option \"%s\"", key);
		return fail(err, NULL, message, "%s", km_options_valid_keys());
	}
	p->given[id] = true;
	return store_option(p->out, (km_option_id) id, v, err);
}

/* A parameter the kernel ignores is a mistake worth reporting. */
static bool
check_kernel_params(const km_options_parser *p, km_option_error *err)
{
	km_kernel_type type = p->out->fit.kernel.type;
	unsigned	used = km_kernel_params(type);
	const char *takes[KM_N_OPTIONS];
	int			n_takes = 0;
	int			bad = -1;
	char		list[256];
	char		message[256];

	for (int id = 0; id < KM_N_OPTIONS; id++)
	{
		unsigned	param = km_option_table[id].kernel_param;

		if (param == 0)
			continue;
		if (used & param)
			takes[n_takes++] = km_option_table[id].key;
		else if (p->given[id] && bad < 0)
			bad = id;
	}
	if (bad < 0)
		return true;
	if (n_takes == 0)
		snprintf(list, sizeof(list), "no parameters");
	else
		join_words(list, sizeof(list), takes, n_takes, " and ");
	snprintf(message, sizeof(message), "option \"%s\" does not apply to kernel \"%s\"",
			 km_option_table[bad].key, km_kernel_name(type));
	return fail(err, NULL, message, "Kernel \"%s\" takes %s.", km_kernel_name(type), list);
}

/* Other methods' own keys listed in an "applies only" detail, at most. */
#define KM_MAX_IGNORED_OWN 32

/* Whether any method takes option id as one of its own. */
static bool
method_specific(int id)
{
	for (int m = KM_METHOD_FIRST; m <= KM_METHOD_LAST; m++)
	{
		const km_method_ops *ops = km_method_get((km_method) m);

		if (ops && (ops->options & KM_OPTION_BIT(id)))
			return true;
	}
	return false;
}

/*
 * A setting of another method (learning_rate with ridge) is an error: an
 * option that some method takes as its own applies only to the methods
 * that list it (method.h); every other option applies to all.
 */
static bool
check_method_options(const km_options_parser *p, const km_method_ops *ops,
					 km_option_error *err)
{
	const char *ignored[KM_N_OPTIONS + KM_MAX_IGNORED_OWN];
	int			n_ignored = 0;
	int			bad = -1;
	const char *bad_key = NULL;
	char		list[512];
	char		message[256];
	char		hint[256];
	const km_method_ops *other = NULL;

	for (int id = 0; id < KM_N_OPTIONS; id++)
	{
		if (!method_specific(id) || (ops->options & KM_OPTION_BIT(id)))
			continue;
		ignored[n_ignored++] = km_option_table[id].key;
		if (p->given[id] && bad < 0)
			bad = id;
	}
	/* then the other methods' own keys, once each */
	for (int m = KM_METHOD_FIRST; m <= KM_METHOD_LAST; m++)
	{
		const km_method_ops *o = km_method_get((km_method) m);

		for (int i = 0; o && i < o->n_own_options; i++)
		{
			const km_option_def *def = &o->own_options[i].def;

			if (method_own_option(ops, def->key) != NULL ||
				find_own_option(def->key, NULL) != def)
				continue;
			if (n_ignored < KM_N_OPTIONS + KM_MAX_IGNORED_OWN)
				ignored[n_ignored++] = def->key;
			for (int g = 0; g < p->n_own && bad < 0 && bad_key == NULL; g++)
				if (p->own[g].key == def->key)
					bad_key = def->key;
		}
	}
	if (bad < 0 && bad_key == NULL)
		return true;
	if (bad >= 0)
	{
		bad_key = km_option_table[bad].key;
		/* the method the option belongs to: the first that takes it */
		for (int m = KM_METHOD_FIRST; m <= KM_METHOD_LAST && other == NULL; m++)
		{
			const km_method_ops *o = km_method_get((km_method) m);

			if (o && (o->options & KM_OPTION_BIT(bad)))
				other = o;
		}
	}
	else
		find_own_option(bad_key, &other);
	join_words(list, sizeof(list), ignored, n_ignored, " or ");
	snprintf(message, sizeof(message), "option \"%s\" applies only to method \"%s\"",
			 bad_key, other->name);
	snprintf(hint, sizeof(hint), "Add \"method\": \"%s\", or remove the option.",
			 other->name);
	return fail(err, hint, message, "Method \"%s\" %s and takes no %s.",
				ops->name, ops->summary, list);
}

/* A selection route the method does not support (loo with lms) is an error. */
static bool
check_route(const km_options *out, const km_method_ops *ops,
			km_option_error *err)
{
	char		message[256];
	const char *takes[KM_METHOD_LAST + 1];
	int			n_takes = 0;
	char		list[256];

	if (out->cv == KM_CV_NONE || (ops->routes & KM_ROUTE(out->cv)))
		return true;
	for (int m = KM_METHOD_FIRST; m <= KM_METHOD_LAST; m++)
	{
		const km_method_ops *o = km_method_get((km_method) m);

		if (o && (o->routes & KM_ROUTE(out->cv)))
			takes[n_takes++] = o->name;
	}
	join_words(list, sizeof(list), takes, n_takes, "\" or \"");
	snprintf(message, sizeof(message), "cv \"%s\" applies only to method \"%s\"",
			 km_cv_name(out->cv), list);
	if (ops->routes & KM_ROUTE(KM_CV_KFOLD))
		return fail(err, "Use a number of folds, e.g. \"cv\": 5.", message,
					"Leave-one-out and GCV have a closed form only for kernel ridge.");
	return fail(err, NULL, message, "Method \"%s\" supports no model selection.",
				ops->name);
}

/*
 * Approximation checks: "components" needs an approximation, rff has a
 * random-feature map for the rbf kernel only, and only the closed-form
 * ridge solve has an approximate form (lms is an online method over the
 * exact expansion).
 */
static bool
check_approximation(const km_options_parser *p, const km_method_ops *ops,
					km_option_error *err)
{
	km_options *out = p->out;
	const km_repr_ops *repr = km_repr_lookup(out->approximation);
	char		message[256];

	if (!repr->approximate)
	{
		if (p->given[KM_OPT_COMPONENTS])
			return fail(err, "Add \"approximation\": \"nystrom\" or \"rff\", or remove the option.",
						"option \"components\" applies only to approximate models",
						"Option \"components\" is %d but no \"approximation\" is given; exact models use every row.",
						out->components);
		return true;
	}
	if (!km_repr_serves(repr, out->fit.kernel.type))
	{
		snprintf(message, sizeof(message),
				 "approximation \"%s\" does not apply to kernel \"%s\"",
				 repr->name, km_kernel_name(out->fit.kernel.type));
		return fail(err, "Use \"approximation\": \"nystrom\", which works for any positive semi-definite kernel, or \"kernel\": \"rbf\".",
					message, "Random Fourier features are defined here for the rbf kernel only.");
	}
	if (!km_task_lookup(ops->task)->approx_gcv)
	{
		/*
		 * Approximate classifiers: primal Newton on the feature map
		 * (primal.h), one pass over the rows per step, at one lambda.
		 */
		if (out->fit.solver != KM_SOLVER_DEFAULT &&
			!(ops->primal_solvers & (1u << out->fit.solver)))
		{
			snprintf(message, sizeof(message),
					 "solver \"%s\" does not apply to approximate models",
					 km_solver_name(out->fit.solver));
			return fail(err, "Remove \"solver\": approximate classifiers are solved by Newton in the primal (\"primal-newton\"), or remove \"approximation\" to use this solver on the exact kernel.",
						message, "Method \"%s\" with approximation \"%s\" minimizes its loss over the %d-dimensional feature map by Newton steps, one pass over the rows each.",
						ops->name, km_approx_name(out->approximation), out->components);
		}
		/* model selection: k-fold over the lambda and gamma grids */
		if (out->cv != KM_CV_NONE && out->cv != KM_CV_KFOLD)
		{
			snprintf(message, sizeof(message),
					 "cv \"%s\" applies only to method \"ridge\"", km_cv_name(out->cv));
			return fail(err, "Use a number of folds, e.g. \"cv\": 5.", message,
						"Approximate classifiers select lambda and gamma by k-fold, scored by %s.",
						ops->primal_loss == KM_PRIMAL_LOGISTIC ? "log-loss" : "accuracy");
		}
		/*
		 * tol keeps the method's default, read as the gradient norm relative
		 * to its value at the start (svm 1e-3: a loose stop, as LIBLINEAR's
		 * primal solvers; logistic 1e-8); max_iter counts Newton steps.
		 */
		if (!p->given[KM_OPT_MAX_ITER])
			out->fit.max_iter = KM_PRIMAL_MAX_ITER;
		return true;
	}
	else if (ops->primal_add != NULL)
	{
		/*
		 * Approximate regression in the primal (svr): Newton passes; a grid
		 * of lambdas and gammas is selected by k-fold over row-hash folds
		 * (pipeline_approx.c), scored by MSE, the method's route (check_route
		 * refused the others); max_iter counts Newton steps.
		 */
		if (!p->given[KM_OPT_MAX_ITER])
			out->fit.max_iter = KM_PRIMAL_MAX_ITER;
		return true;
	}
	else if (!ops->approx_sums)
	{
		snprintf(message, sizeof(message),
				 "approximation \"%s\" does not apply to method \"%s\"",
				 km_approx_name(out->approximation), ops->name);
		return fail(err, "Remove \"approximation\", or use \"method\": \"ridge\", \"svr\", \"svm\" or \"logistic\".",
					message, "Approximate models are solved by kernel ridge, or by svr, svm and logistic in the primal; method \"%s\" %s.",
					ops->name, ops->summary);
	}
	if (out->cv != KM_CV_NONE && out->cv != KM_CV_GCV)
		return fail(err, "Use \"cv\": \"gcv\", or give a lambda grid without \"cv\".",
					"approximate models select lambda by gcv only",
					"Option \"cv\" is \"%s\"; an approximate model scores its lambda grid by GCV from the m x m statistics, without another pass over the rows.",
					km_cv_name(out->cv));
	if (out->gammas.n > 1)
		return fail(err, "Give a single \"gamma\", or train one model per gamma.",
					"approximate models take a single gamma",
					"Option \"gamma\" has %d candidates; the basis pass fixes the kernel before the rows are summed.",
					out->gammas.n);
	return true;
}

/*
 * "fit_intercept": false on the exact expansion of a method whose exact fit
 * always has a bias (ops->exact_bias, svr): refused, not ignored.
 */
static bool
check_exact_bias(const km_options_parser *p, const km_method_ops *ops,
				 km_option_error *err)
{
	const km_options *out = p->out;
	char		message[256];

	if (out->fit_intercept || !ops->exact_bias ||
		km_repr_lookup(out->approximation)->approximate)
		return true;
	snprintf(message, sizeof(message),
			 "option \"fit_intercept\" false does not apply to exact method \"%s\"",
			 ops->name);
	return fail(err, "Remove \"fit_intercept\", or add \"approximation\": \"nystrom\" or \"rff\", whose primal fit honours it (b = 0).",
				message, "Exact method \"%s\" solves libsvm's dual, whose equality constraint always fits the bias b; option \"fit_intercept\" is false.",
				ops->name);
}

bool
km_options_finish(km_options_parser *p, km_option_error *err)
{
	km_options *out = p->out;
	km_fit_params *fit = &out->fit;
	const km_method_ops *ops;

	ops = km_method_get(fit->method);
	if (ops == NULL)
		return fail(err, NULL, "unknown training method",
					"Method %d is not a method of this build of kernel_ml.",
					(int) fit->method);
	if (!check_task(p, &ops, err) || !check_kernel_params(p, err) ||
		!check_method_options(p, ops, err) ||
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

	if (!check_route(out, ops, err))
		return false;
	if (!check_approximation(p, ops, err))
		return false;
	if (!check_exact_bias(p, ops, err))
		return false;
	/* an approximate grid: GCV from the sums, or a primal method's k-fold (below) */
	if (out->cv == KM_CV_NONE && km_repr_lookup(out->approximation)->approximate &&
		km_task_lookup(ops->task)->approx_gcv && ops->primal_add == NULL &&
		out->lambdas.n > 1)
		out->cv = KM_CV_GCV;
	if (out->cv == KM_CV_NONE && (out->gammas.n > 1 || out->lambdas.n > 1))
	{
		/* a grid without cv: the method's own route */
		out->cv = (km_cv) ops->default_route;
		if (out->cv == KM_CV_KFOLD)
			out->folds = ops->default_folds;
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
	return fail(err, NULL, message,
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
