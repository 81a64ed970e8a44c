/*
 * options.c - parse and validate the jsonb options object.
 *
 * One object serves every function, so every known key is accepted
 * everywhere (kernel_eval and kernel_matrix ignore the training keys), but
 * an unknown key, a value of the wrong type or out of range, a kernel
 * parameter the chosen kernel does not use, or an lms setting with method
 * ridge is an error.
 */
#include "postgres.h"

#include <limits.h>
#include <math.h>

#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"

#include "options.h"

typedef enum
{
	OPT_KERNEL,
	OPT_GAMMA,
	OPT_DEGREE,
	OPT_COEF0,
	OPT_METHOD,
	OPT_LAMBDA,
	OPT_LEARNING_RATE,
	OPT_MAX_ITER,
	OPT_TOL,
	OPT_STANDARDIZE,
	OPT_FIT_INTERCEPT,
	OPT_CV,
	OPT_SEED,
	OPT_TEST_FRACTION,
	OPT_DEPLOY,
	N_OPTIONS
} option_id;

static const char *const option_names[N_OPTIONS] = {
	"kernel", "gamma", "degree", "coef0", "method", "lambda",
	"learning_rate", "max_iter", "tol", "standardize", "fit_intercept",
	"cv", "seed", "test_fraction", "deploy"
};

#define VALID_KEYS "Valid keys are kernel, gamma, degree, coef0, method, lambda, learning_rate, max_iter, tol, standardize, fit_intercept, cv, seed, test_fraction, deploy."

/*
 * "auto" grids: 13 lambdas log-spaced from 1e-6 to 1e2, and gamma at
 * 2^-3 .. 2^3 times 1 / n_features.
 */
#define AUTO_LAMBDAS 13
#define AUTO_GAMMAS 7

/* Folds when a grid is searched with method lms and no cv is given. */
#define DEFAULT_LMS_FOLDS 5
#define VALID_KERNELS "Valid kernels are linear, poly, rbf, laplacian, sigmoid, cosine, min, polysum."

/* Upper bound on degree: beyond it powers overflow for ordinary data. */
#define KM_MAX_DEGREE 100

static void pg_attribute_noreturn()
bad_value(const char *key, const char *expected, const char *got)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid value for option \"%s\"", key),
			 errdetail("Option \"%s\" must be %s, got %s.", key, expected, got)));
}

static const char *
jbv_to_string(JsonbValue *v)
{
	switch (v->type)
	{
		case jbvNull:
			return "null";
		case jbvString:
			return psprintf("\"%.*s\"", v->val.string.len, v->val.string.val);
		case jbvNumeric:
			return DatumGetCString(DirectFunctionCall1(numeric_out,
													   NumericGetDatum(v->val.numeric)));
		case jbvBool:
			return v->val.boolean ? "true" : "false";
		default:
			return "an array or object";
	}
}

static double
get_number(const char *key, JsonbValue *v, const char *expected)
{
	double		x;

	if (v->type != jbvNumeric)
		bad_value(key, expected, jbv_to_string(v));
	x = DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow,
										   NumericGetDatum(v->val.numeric)));
	if (!isfinite(x))
		bad_value(key, expected, jbv_to_string(v));
	return x;
}

static int
get_int(const char *key, JsonbValue *v, int min, int max, const char *expected)
{
	double		x = get_number(key, v, expected);

	if (x != floor(x) || x < min || x > max)
		bad_value(key, expected, jbv_to_string(v));
	return (int) x;
}

static bool
get_bool(const char *key, JsonbValue *v)
{
	if (v->type != jbvBool)
		bad_value(key, "true or false", jbv_to_string(v));
	return v->val.boolean;
}

static char *
get_string(const char *key, JsonbValue *v, const char *expected)
{
	if (v->type != jbvString)
		bad_value(key, expected, jbv_to_string(v));
	return pnstrdup(v->val.string.val, v->val.string.len);
}

/*
 * A number, an array of 1 to KM_MAX_GRID numbers, or "auto".  Each value
 * must satisfy min (> min if strict, else >= min).
 */
static void
get_grid(const char *key, JsonbValue *v, double min, bool strict, km_grid *g)
{
	const char *expected = strict ?
		psprintf("a number > %g, an array of such numbers, or \"auto\"", min) :
		psprintf("a number >= %g, an array of such numbers, or \"auto\"", min);

	g->n = 0;
	g->per_feature = false;
	if (v->type == jbvString)
	{
		if (v->val.string.len != 4 || strncmp(v->val.string.val, "auto", 4) != 0)
			bad_value(key, expected, jbv_to_string(v));
		g->n = -1;				/* filled by the caller */
		return;
	}
	if (v->type == jbvBinary)
	{
		JsonbIterator *it = JsonbIteratorInit((JsonbContainer *) v->val.binary.data);
		JsonbIteratorToken tok;
		JsonbValue	e;

		if (!JsonContainerIsArray(v->val.binary.data))
			bad_value(key, expected, "an object");
		while ((tok = JsonbIteratorNext(&it, &e, true)) != WJB_DONE)
		{
			double		x;

			if (tok != WJB_ELEM)
				continue;
			x = get_number(key, &e, expected);
			if (strict ? !(x > min) : !(x >= min))
				bad_value(key, expected, jbv_to_string(&e));
			if (g->n == KM_MAX_GRID)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("too many candidates for option \"%s\"", key),
						 errdetail("At most %d values may be given.", KM_MAX_GRID)));
			g->v[g->n++] = x;
		}
		if (g->n == 0)
			bad_value(key, expected, "an empty array");
		return;
	}
	g->v[0] = get_number(key, v, expected);
	if (strict ? !(g->v[0] > min) : !(g->v[0] >= min))
		bad_value(key, expected, jbv_to_string(v));
	g->n = 1;
}

void
km_options_parse(Jsonb *opts, km_options *out)
{
	bool		given[N_OPTIONS] = {false};
	JsonbIterator *it;
	JsonbIteratorToken tok;
	JsonbValue	v;
	km_fit_params *fit = &out->fit;
	unsigned	used;

	memset(out, 0, sizeof(*out));
	fit->kernel.type = KM_KERNEL_RBF;
	fit->kernel.degree = 3;
	fit->kernel.coef0 = 1.0;
	fit->method = KM_METHOD_RIDGE;
	fit->lambda = 1.0;
	fit->learning_rate = 0.0;	/* automatic */
	fit->max_iter = 1000;
	fit->tol = 1e-6;
	out->standardize = true;
	out->fit_intercept = true;
	out->cv = KM_CV_NONE;
	out->test_fraction = 0.2;
	out->deploy = KM_DEPLOY_IF_BETTER;

	if (opts == NULL)
		return;
	if (!JB_ROOT_IS_OBJECT(opts))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options must be a jsonb object"),
				 errdetail(VALID_KEYS)));

	it = JsonbIteratorInit(&opts->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		char	   *key;
		int			id;

		if (tok != WJB_KEY)
			continue;
		key = pnstrdup(v.val.string.val, v.val.string.len);
		for (id = 0; id < N_OPTIONS; id++)
			if (strcmp(key, option_names[id]) == 0)
				break;
		if (id == N_OPTIONS)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("unknown option \"%s\"", key),
					 errdetail(VALID_KEYS)));

		tok = JsonbIteratorNext(&it, &v, true);
		Assert(tok == WJB_VALUE);
		given[id] = true;

		switch ((option_id) id)
		{
			case OPT_KERNEL:
				{
					char	   *name = get_string(key, &v, "a kernel name");

					if (!km_kernel_from_name(name, &fit->kernel.type))
						ereport(ERROR,
								(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
								 errmsg("unknown kernel \"%s\"", name),
								 errdetail(VALID_KERNELS)));
					break;
				}
			case OPT_GAMMA:
				get_grid(key, &v, 0.0, true, &out->gammas);
				if (out->gammas.n < 0)
				{
					out->gammas.n = AUTO_GAMMAS;
					out->gammas.per_feature = true;
					for (int i = 0; i < AUTO_GAMMAS; i++)
						out->gammas.v[i] = ldexp(1.0, i - AUTO_GAMMAS / 2);
				}
				break;
			case OPT_DEGREE:
				fit->kernel.degree = get_int(key, &v, 1, KM_MAX_DEGREE,
											 "an integer from 1 to 100");
				break;
			case OPT_COEF0:
				fit->kernel.coef0 = get_number(key, &v, "a number");
				break;
			case OPT_METHOD:
				{
					char	   *name = get_string(key, &v, "\"ridge\" or \"lms\"");

					if (!km_method_from_name(name, &fit->method))
						bad_value(key, "\"ridge\" or \"lms\"", jbv_to_string(&v));
					break;
				}
			case OPT_LAMBDA:
				get_grid(key, &v, 0.0, false, &out->lambdas);
				if (out->lambdas.n < 0)
				{
					out->lambdas.n = AUTO_LAMBDAS;
					for (int i = 0; i < AUTO_LAMBDAS; i++)
						out->lambdas.v[i] = pow(10.0, -6.0 + 8.0 * i / (AUTO_LAMBDAS - 1));
				}
				break;
			case OPT_LEARNING_RATE:
				fit->learning_rate = get_number(key, &v, "a number > 0");
				if (!(fit->learning_rate > 0.0))
					bad_value(key, "a number > 0", jbv_to_string(&v));
				break;
			case OPT_MAX_ITER:
				fit->max_iter = get_int(key, &v, 1, INT_MAX,
										"an integer >= 1");
				break;
			case OPT_TOL:
				fit->tol = get_number(key, &v, "a number >= 0");
				if (fit->tol < 0.0)
					bad_value(key, "a number >= 0", jbv_to_string(&v));
				break;
			case OPT_STANDARDIZE:
				out->standardize = get_bool(key, &v);
				break;
			case OPT_FIT_INTERCEPT:
				out->fit_intercept = get_bool(key, &v);
				break;
			case OPT_CV:
				if (v.type == jbvString)
				{
					char	   *name = get_string(key, &v, "");

					if (strcmp(name, "loo") == 0)
						out->cv = KM_CV_LOO;
					else if (strcmp(name, "gcv") == 0)
						out->cv = KM_CV_GCV;
					else
						bad_value(key, "\"loo\", \"gcv\" or a number of folds from 2 to 1000",
								  jbv_to_string(&v));
				}
				else
				{
					out->cv = KM_CV_KFOLD;
					out->folds = get_int(key, &v, 2, 1000,
										 "\"loo\", \"gcv\" or a number of folds from 2 to 1000");
				}
				break;
			case OPT_SEED:
				out->seed = get_int(key, &v, INT_MIN, INT_MAX, "an integer");
				break;
			case OPT_TEST_FRACTION:
				out->test_fraction = get_number(key, &v, "a number >= 0 and < 1");
				if (out->test_fraction < 0.0 || out->test_fraction >= 1.0)
					bad_value(key, "a number >= 0 and < 1", jbv_to_string(&v));
				break;
			case OPT_DEPLOY:
				{
					const char *expected = "\"if_better\", \"always\" or \"never\"";
					char	   *name = get_string(key, &v, expected);

					if (strcmp(name, "if_better") == 0)
						out->deploy = KM_DEPLOY_IF_BETTER;
					else if (strcmp(name, "always") == 0)
						out->deploy = KM_DEPLOY_ALWAYS;
					else if (strcmp(name, "never") == 0)
						out->deploy = KM_DEPLOY_NEVER;
					else
						bad_value(key, expected, jbv_to_string(&v));
					break;
				}
			case N_OPTIONS:
				break;
		}
	}

	/* A parameter the kernel ignores is a mistake worth reporting. */
	used = km_kernel_params(fit->kernel.type);
	if ((given[OPT_GAMMA] && !(used & KM_PARAM_GAMMA)) ||
		(given[OPT_DEGREE] && !(used & KM_PARAM_DEGREE)) ||
		(given[OPT_COEF0] && !(used & KM_PARAM_COEF0)))
	{
		const char *which = given[OPT_GAMMA] && !(used & KM_PARAM_GAMMA) ? "gamma" :
			given[OPT_DEGREE] && !(used & KM_PARAM_DEGREE) ? "degree" : "coef0";

		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("option \"%s\" does not apply to kernel \"%s\"",
						which, km_kernel_name(fit->kernel.type)),
				 errdetail("Kernel \"%s\" takes %s.",
						   km_kernel_name(fit->kernel.type),
						   used == 0 ? "no parameters" :
						   used == KM_PARAM_GAMMA ? "gamma" :
						   used == KM_PARAM_DEGREE ? "degree" :
						   used == (KM_PARAM_GAMMA | KM_PARAM_COEF0) ? "gamma and coef0" :
						   "gamma, degree and coef0")));
	}
	if (fit->method == KM_METHOD_RIDGE &&
		(given[OPT_LEARNING_RATE] || given[OPT_MAX_ITER] || given[OPT_TOL]))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("option \"%s\" applies only to method \"lms\"",
						given[OPT_LEARNING_RATE] ? "learning_rate" :
						given[OPT_MAX_ITER] ? "max_iter" : "tol"),
				 errdetail("Method \"ridge\" solves in closed form and takes no learning_rate, max_iter or tol."),
				 errhint("Add \"method\": \"lms\", or remove the option.")));

	/* single values go straight into the fit parameters */
	if (out->lambdas.n == 1)
		fit->lambda = out->lambdas.v[0];

	if (fit->method == KM_METHOD_LMS &&
		(out->cv == KM_CV_LOO || out->cv == KM_CV_GCV))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cv \"%s\" applies only to method \"ridge\"",
						km_cv_name(out->cv)),
				 errdetail("Leave-one-out and GCV have a closed form only for kernel ridge."),
				 errhint("Use a number of folds, e.g. \"cv\": 5.")));
	if (out->cv == KM_CV_NONE && (out->gammas.n > 1 || out->lambdas.n > 1))
	{
		if (fit->method == KM_METHOD_RIDGE)
			out->cv = KM_CV_LOO;
		else
		{
			out->cv = KM_CV_KFOLD;
			out->folds = DEFAULT_LMS_FOLDS;
		}
	}
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

bool
km_options_selects(const km_options *opts)
{
	return opts->cv != KM_CV_NONE;
}

void
km_options_require_single(const km_options *opts, const char *fname)
{
	if (opts->gammas.n > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s takes a single gamma", fname),
				 errdetail("Option \"gamma\" has %d candidates; grids are for kernel_train.",
						   opts->gammas.n)));
}
