/*
 * options_check.c - the checks across keys that km_options_finish runs
 * once every key is read (options_internal.h): the method against the
 * label column, the kernel's parameters, other methods' settings, the
 * selection route, the approximation and the exact bias.  Core: no
 * PostgreSQL header.
 */
#include <stdio.h>
#include <string.h>

#include "options_core.h"
#include "options_internal.h"
#include "method.h"
#include "primal.h"
#include "task.h"

/*
 * The method's task against the label column: a text label defaults to
 * the classification task's default method (svm) and refuses a
 * regression method; then the method's own defaults (tol) and its solver.
 */
bool
km_options_check_task(km_options_parser *p, const km_method_ops **ops,
					  km_option_error *err)
{
	km_options *out = p->out;
	km_fit_params *fit = &out->fit;
	char		message[256];

	out->method_default = !p->given[KM_OPT_METHOD];
	if (out->text_label && !p->given[KM_OPT_METHOD])
	{
		fit->method = km_method_default(km_task_for_labels()->id)->id;
		*ops = km_method_get(fit->method);
	}
	if (out->text_label && (*ops)->task != km_task_for_labels()->id)
	{
		snprintf(message, sizeof(message),
				 "method \"%s\" cannot learn text labels", (*ops)->name);
		return km_opt_fail(err, "Use \"method\": \"svm\" or \"logistic\" to classify, or train on a float8 target to regress.",
					message, "Method \"%s\" is a regression method; a text label column needs a classification method.",
					(*ops)->name);
	}
	/* the method's own defaults of shared options (method.h), for any task */
	if (!p->given[KM_OPT_TOL] && (*ops)->default_tol > 0.0)
		fit->tol = (*ops)->default_tol;
	if (!p->given[KM_OPT_MAX_ITER] && (*ops)->solver_max_iter)
		fit->max_iter = 0;		/* the solver's own limit (libsvm's max(10^7, 100 n)) */
	if ((*ops)->solvers != 0)	/* a method with solvers of its own: one of them */
	{
		/* "solver": "cg" of a classifier fitted in the primal: check_cg's */
		if (fit->solver != KM_SOLVER_DEFAULT &&
			!((*ops)->solvers & (1u << fit->solver)) &&
			!(fit->solver == KM_SOLVER_CG && (*ops)->primal_loss != 0))
		{
			snprintf(message, sizeof(message),
					 "solver \"%s\" does not apply to method \"%s\"",
					 km_solver_name(fit->solver), (*ops)->name);
			return km_opt_fail(err, fit->solver == KM_SOLVER_CG ?
							   "Solver \"cg\" solves nystrom ridge: use \"method\": \"ridge\" with \"approximation\": \"nystrom\", or remove \"solver\"." : NULL,
							   message,
						"Method \"%s\" takes solver \"%s\" (its default) or \"sgd\".",
						(*ops)->name, km_solver_name((*ops)->default_solver));
		}
	}
	fit->fit_intercept = out->fit_intercept;
	fit->seed = out->seed;
	return true;
}

/* A parameter the kernel ignores is a mistake worth reporting. */
bool
km_options_check_kernel(const km_options_parser *p, km_option_error *err)
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
		km_opt_join_words(list, sizeof(list), takes, n_takes, " and ");
	snprintf(message, sizeof(message), "option \"%s\" does not apply to kernel \"%s\"",
			 km_option_table[bad].key, km_kernel_name(type));
	return km_opt_fail(err, NULL, message, "Kernel \"%s\" takes %s.", km_kernel_name(type), list);
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
bool
km_options_check_method(const km_options_parser *p, const km_method_ops *ops,
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
		/* "solver": "cg" and its tol and max_iter: check_cg's */
		if (p->out->fit.solver == KM_SOLVER_CG && p->given[id] &&
			(id == KM_OPT_SOLVER || id == KM_OPT_TOL || id == KM_OPT_MAX_ITER))
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

			if (km_opt_method_own(ops, def->key) != NULL ||
				km_opt_find_own(def->key, NULL) != def)
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
		km_opt_find_own(bad_key, &other);
	km_opt_join_words(list, sizeof(list), ignored, n_ignored, " or ");
	snprintf(message, sizeof(message), "option \"%s\" applies only to method \"%s\"",
			 bad_key, other->name);
	snprintf(hint, sizeof(hint), "Add \"method\": \"%s\", or remove the option.",
			 other->name);
	return km_opt_fail(err, hint, message, "Method \"%s\" %s and takes no %s.",
				ops->name, ops->summary, list);
}

/* A selection route the method does not support (loo with lms) is an error. */
bool
km_options_check_route(const km_options *out, const km_method_ops *ops,
			km_option_error *err)
{
	char		message[384];	/* list and the words around it */
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
	km_opt_join_words(list, sizeof(list), takes, n_takes, "\" or \"");
	snprintf(message, sizeof(message), "cv \"%s\" applies only to method \"%s\"",
			 km_cv_name(out->cv), list);
	if (ops->routes & KM_ROUTE(KM_CV_KFOLD))
		return km_opt_fail(err, "Use a number of folds, e.g. \"cv\": 5.", message,
					"Leave-one-out, GCV and the evidence have a closed form only for kernel ridge.");
	return km_opt_fail(err, NULL, message, "Method \"%s\" supports no model selection.",
				ops->name);
}

/* The representation's refusal of an option (repr.h), as the options' error. */
static bool
repr_fail(km_option_error *err, const km_error *e)
{
	return km_opt_fail(err, e->hint, e->message, "%s", e->detail);
}

/*
 * "solver": "cg" (learn/cg.h): nystrom ridge at one lambda, solved by
 * preconditioned conjugate gradient, one pass over the rows per
 * iteration; "tol" (default KM_CG_DEFAULT_TOL) and "max_iter" (default
 * KM_CG_DEFAULT_MAX_ITER) are its stopping rule.  A method fitted in the
 * primal (svm, logistic, svr) over nystrom or rff features: Newton-CG
 * (learn/newton.h), "tol" and "max_iter" the Newton's as without it.
 */
static bool
check_cg(const km_options_parser *p, const km_method_ops *ops,
					km_option_error *err)
{
	km_options *out = p->out;
	const km_repr_ops *repr = km_repr_lookup(out->approximation);
	char		message[256];
	km_error	rerr;

	if (ops->primal_add != NULL || ops->primal_loss != 0)
	{
		/* Newton-CG runs over the representation's features */
		if (repr->features == NULL)
			return km_opt_fail(err, "Add \"approximation\": \"nystrom\" or \"rff\", or remove \"solver\".",
						"solver \"cg\" applies only to approximate models",
						"Solver \"cg\" solves the Newton steps of method \"%s\" over the nystrom or rff features; the model is exact (every row).",
						ops->name);
		return true;
	}
	if (!ops->approx_sums)
	{
		snprintf(message, sizeof(message),
				 "solver \"cg\" does not apply to method \"%s\"", ops->name);
		return km_opt_fail(err, "Use \"method\": \"ridge\" with \"approximation\": \"nystrom\", or remove \"solver\".",
					message, "Solver \"cg\" solves the normal equations of nystrom kernel ridge; method \"%s\" %s.",
					ops->name, ops->summary);
	}
	if (!km_repr_check_cg(repr, &rerr))
		return repr_fail(err, &rerr);
	if (out->lambdas.n > 1)
		return km_opt_fail(err, "Give a single \"lambda\", or remove \"solver\" to select lambda by GCV in one pass.",
					"solver \"cg\" takes a single lambda",
					"Option \"lambda\" has %d candidates; each would need its own conjugate gradient passes.",
					out->lambdas.n);
	if (!p->given[KM_OPT_TOL])
		out->fit.tol = KM_CG_DEFAULT_TOL;
	if (!p->given[KM_OPT_MAX_ITER])
		out->fit.max_iter = KM_CG_DEFAULT_MAX_ITER;
	return true;
}

/*
 * Whether option "centers" means something to r: some value of it changes
 * the list of steps r's basis takes (nystrom's refine passes).
 */
static bool
centres_choose_steps(const km_repr_ops *r)
{
	km_basis_step base[KM_BASIS_MAX_STEPS];
	km_basis_step steps[KM_BASIS_MAX_STEPS];
	int			n = km_repr_basis_steps(r, KM_CENTRES_FIRST, base);

	for (int c = KM_CENTRES_FIRST + 1; c <= KM_CENTRES_LAST; c++)
		if (km_repr_basis_steps(r, c, steps) != n ||
			memcmp(steps, base, sizeof(base[0]) * n) != 0)
			return true;
	return false;
}

/*
 * Approximation checks: "components" needs an approximation, rff has a
 * random-feature map for the rbf kernel only, and only the closed-form
 * ridge solve has an approximate form (lms is an online method over the
 * exact expansion).
 */
bool
km_options_check_approx(const km_options_parser *p, const km_method_ops *ops,
					km_option_error *err)
{
	km_options *out = p->out;
	const km_repr_ops *repr = km_repr_lookup(out->approximation);
	char		message[256];
	km_error	rerr;

	if (out->fit.solver == KM_SOLVER_CG && !check_cg(p, ops, err))
		return false;
	if (p->given[KM_OPT_CENTERS] && !centres_choose_steps(repr))
		return km_opt_fail(err, "Add \"approximation\": \"nystrom\", or remove the option.",
					"option \"centers\" applies only to nystrom models",
					"Option \"centers\" is \"%s\" but the model is %s; only nystrom keeps centres.",
					km_centres_name(out->centres),
					repr->described);
	if (!km_repr_check_components(repr, p->given[KM_OPT_COMPONENTS], out->components, &rerr))
		return repr_fail(err, &rerr);
	/* the checks below concern a fit over the representation's features */
	if (repr->features == NULL)
		return true;
	if (!km_repr_serves(repr, out->fit.kernel.type))
	{
		snprintf(message, sizeof(message),
				 "approximation \"%s\" does not apply to kernel \"%s\"",
				 repr->name, km_kernel_name(out->fit.kernel.type));
		return km_opt_fail(err, "Use \"approximation\": \"nystrom\", which works for any positive semi-definite kernel, or \"kernel\": \"rbf\".",
					message, "Random Fourier features are defined here for the rbf kernel only.");
	}
	/*
	 * A method fitted on the features alone (pca, oneclass: the road of a
	 * task without a target, pipeline_rows.h): its fit_sums or fit_features,
	 * with its own tol and max_iter (oneclass: SMO's).
	 */
	if (ops->fit_sums != NULL || ops->fit_features != NULL)
		return true;
	if (ops->primal_loss != 0)	/* a classifier's approximate form (method.h) */
	{
		/*
		 * Approximate classifiers: primal Newton on the feature map
		 * (primal.h), one pass over the rows per step, at one lambda.
		 */
		if (out->fit.solver != KM_SOLVER_DEFAULT && out->fit.solver != KM_SOLVER_CG &&
			!(ops->primal_solvers & (1u << out->fit.solver)))
		{
			snprintf(message, sizeof(message),
					 "solver \"%s\" does not apply to approximate models",
					 km_solver_name(out->fit.solver));
			return km_opt_fail(err, "Remove \"solver\": approximate classifiers are solved by Newton in the primal (\"primal-newton\"), or remove \"approximation\" to use this solver on the exact kernel.",
						message, "Method \"%s\" with approximation \"%s\" minimizes its loss over the %d-dimensional feature map by Newton steps, one pass over the rows each.",
						ops->name, km_approx_name(out->approximation), out->components);
		}
		/* model selection: k-fold over the lambda and gamma grids */
		if (out->cv != KM_CV_NONE && out->cv != KM_CV_KFOLD)
		{
			snprintf(message, sizeof(message),
					 "cv \"%s\" applies only to method \"ridge\"", km_cv_name(out->cv));
			return km_opt_fail(err, "Use a number of folds, e.g. \"cv\": 5.", message,
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
		 * (pipeline_approx.c), scored by MSE, the method's route (km_options_check_route
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
		return km_opt_fail(err, "Remove \"approximation\", or use \"method\": \"ridge\", \"svr\", \"svm\" or \"logistic\".",
					message, "Approximate models are solved by kernel ridge, or by svr, svm and logistic in the primal; method \"%s\" %s.",
					ops->name, ops->summary);
	}
	if (out->cv != KM_CV_NONE && out->cv != KM_CV_GCV && out->cv != KM_CV_EVIDENCE)
		return km_opt_fail(err, "Use \"cv\": \"gcv\" or \"evidence\", or give a lambda grid without \"cv\".",
					"approximate models select lambda by gcv or evidence only",
					"Option \"cv\" is \"%s\"; an approximate model scores its lambda grid by GCV or by the log marginal likelihood from the m x m statistics, without another pass over the rows.",
					km_cv_name(out->cv));
	if (out->gammas.n > 1)
		return km_opt_fail(err, "Give a single \"gamma\", or train one model per gamma.",
					"approximate models take a single gamma",
					"Option \"gamma\" has %d candidates; the basis pass fixes the kernel before the rows are summed.",
					out->gammas.n);
	return true;
}

/*
 * "fit_intercept": false on the exact expansion of a method whose exact fit
 * always has a bias (ops->exact_bias, svr): refused, not ignored.
 */
bool
km_options_check_bias(const km_options_parser *p, const km_method_ops *ops,
				 km_option_error *err)
{
	const km_options *out = p->out;
	km_error	rerr;

	if (out->fit_intercept || !ops->exact_bias ||
		km_repr_check_exact_bias(km_repr_lookup(out->approximation), ops->name, &rerr))
		return true;
	return repr_fail(err, &rerr);
}
