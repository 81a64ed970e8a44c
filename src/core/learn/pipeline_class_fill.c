/*
 * pipeline_class_fill.c - what the approximate classifiers' road
 * (pipeline_approx_classify.c) sizes and fills besides its passes: its
 * plan (the memory it holds over n rows) and the classifier's fields of the
 * model (the exact classifiers fill them too).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "basis.h"
#include "classify.h"
#include "learn/newton.h"
#include "method.h"
#include "pipeline_class_fill.h"
#include "pipeline_approx_job.h"
#include "primal_pass.h"
#include "repr.h"

/* The Newton pass's tally after the sums (pipeline_approx_classify.c's TALLY_DOUBLES). */
#define CLASS_TALLY_DOUBLES 2

void
km_train_plan_approx_classes(size_t n, int d, uint32_t k, km_train_plan *plan)
{
	const km_options *o = &plan->opts;
	uint32_t	mmax = km_approx_job_components(o, n);
	size_t		sbytes = km_basis_state_bytes(o->approximation, (uint32_t) d,
											  (uint32_t) o->components);
	size_t		nstate = km_primal_state_doubles(mmax);
	km_basis	shape = {.kind = o->approximation, .d = (uint32_t) d, .m = mmax};

	plan->approximate = true;
	plan->q = km_primal_outputs(k);
	if (km_options_selects(o))
		plan->ncand = (o->gammas.n > 0 ? o->gammas.n : 1) *
			(o->lambdas.n > 0 ? o->lambdas.n : 1);
	plan->basis_bytes = nstate == 0 || mmax > (uint32_t) km_components_max(o->fit.solver) ?
		0 : sbytes;
	if (o->fit.solver == KM_SOLVER_CG)
	{
		/*
		 * Newton-CG (learn/newton.h): no m x m Hessian nor identity penalty,
		 * O(q m) sums and vectors; the m x m factor L and Falkon's R (or,
		 * while L is made, the factor's work)
		 */
		size_t		newton = km_newton_bytes(mmax, plan->q, PRIMAL_BLOCK, CLASS_TALLY_DOUBLES,
											 true);

		if (newton == 0)
			plan->basis_bytes = 0;
		plan->approx_bytes = 8.0 * (double) n * ((double) d + 0.5) +	/* the caller's copy */
			8.0 * (double) n +	/* the rows' hashes, for the basis pass */
			(double) sbytes +
			8.0 * (2.0 * mmax * (double) mmax + 3.0 * mmax) +	/* L, R; factor's work */
			(double) newton + 8.0 * plan->q * ((double) mmax + 1.0) +	/* Newton-CG, coef */
			8.0 * PRIMAL_BLOCK * ((double) mmax + 2.0) + 8.0 * KM_XS_ROWS(n) * (double) d +
			8.0 * (double) km_approx_features_doubles(&shape, PRIMAL_BLOCK) +
			km_approx_centres_bytes(o, &shape);
		plan->rows_bytes = 8.0 * (double) n * ((double) d + 0.5) + 8.0 * (double) n;
		plan->cache_bytes = 8.0 * (double) n * mmax;
		return;
	}
	plan->approx_bytes = 8.0 * (double) n * ((double) d + 0.5) +	/* the caller's hash-ordered copy */
		8.0 * (double) n +		/* the rows' hashes, for the basis pass */
		(double) sbytes +
		8.0 * (2.0 * mmax * (double) mmax + 3.0 * mmax) +	/* L, R; factor's work */
		8.0 * plan->q * ((double) nstate + 3.0 * mmax + 1.0) +	/* states, coef, vecs */
		8.0 * (double) km_primal_step_work_doubles(mmax) +
		8.0 * PRIMAL_BLOCK * ((double) mmax + 2.0) + 8.0 * KM_XS_ROWS(n) * (double) d +
		8.0 * (double) km_approx_features_doubles(&shape, PRIMAL_BLOCK) +
		8.0 * (double) km_primal_add_scratch_doubles(mmax, PRIMAL_BLOCK) +
		km_approx_centres_bytes(o, &shape);
	plan->rows_bytes = 8.0 * (double) n * ((double) d + 0.5) + 8.0 * (double) n;
	plan->cache_bytes = 8.0 * (double) n * mmax;
}

void
km_train_fill_classes(km_model *m, const km_options *opts,
					  const km_class_rows *c, int ncand, int best,
					  km_candidate *cand)
{
	const km_class_fit_result *res = c->res;

	m->kernel = opts->fit.kernel;
	m->method = opts->fit.method;
	m->task = km_method_task(opts->fit.method);
	m->standardize = opts->standardize;
	m->fit_intercept = opts->fit_intercept;
	m->intercept = m->intercepts[0];
	m->train_rmse = 0.0;		/* regression only; classifiers report accuracy */
	km_method_get(opts->fit.method)->store_classes(&opts->fit, res, m);
	m->approximation = (km_approx) km_repr_default()->id;
	m->n_classes = c->k;
	m->label_type = c->label_type == KM_LABEL_TEXT ? KM_LABEL_TEXT : KM_LABEL_FLOAT8;
	m->multiclass = (km_multiclass) res->multiclass;
	m->labels = c->labels;
	m->labels_bytes = c->labels_bytes;
	m->class_counts = c->counts;
	m->has_probability = res->has_probability &&
		km_method_get(opts->fit.method)->platt_probability;
	if (!m->has_probability)
	{
		m->prob_A = NULL;
		m->prob_B = NULL;
	}
	m->solver = res->solver;
	m->train_accuracy = res->train_accuracy;
	m->train_log_loss = isfinite(res->train_log_loss) ? res->train_log_loss : 0.0;
	m->n_candidates = (uint32_t) ncand;
	m->cv = ncand > 0 ? KM_CV_KFOLD : KM_CV_NONE;
	m->folds = ncand > 0 ? opts->folds : 0;
	m->best = (uint32_t) best;
	m->candidates = cand;
}

km_status
km_class_fail_nonfinite(km_error *err, uint32_t c, uint32_t q, size_t i0)
{
	km_fail(err, KM_ERR_DIVERGED, "decision value is out of range for type double precision",
			"A decision value of output %u of %u in the block of rows from %zu is not finite during the Newton passes.",
			c + 1, q, i0 + 1);
	snprintf(err->hint, sizeof(err->hint), "%s",
			 "Raise lambda, or standardize the features (\"standardize\": true).");
	return err->status;
}

km_status
km_class_grid_none(void *arg, int count, km_error *err)
{
	km_fail(err, KM_ERR_INACCURATE, "no candidate could be scored",
			"Every one of the %d candidates failed to fit on some fold, or a fold's training rows missed a class.",
			count);
	snprintf(err->hint, sizeof(err->hint), "%s", "Use fewer folds, or raise lambda.");
	return err->status;
}
