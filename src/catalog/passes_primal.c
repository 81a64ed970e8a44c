/*
 * passes_primal.c - named approximate regression methods fitted in the
 * primal (a method whose ops have primal_add, primal_step, primal_tally
 * and primal_result, method.h: svr's L2-loss epsilon-SVR; the next primal
 * method needs no catalog file) trained by passes over the stored query,
 * so that their memory is the basis, the m x m factor and the Newton
 * statistics, not the rows:
 *   1. basis pass: the scaler and centres (km_basis_state, as kernel_basis
 *      and the kernel_train aggregate build them) over the training rows;
 *   2. Newton passes: each one adds the rows' whitened features into the
 *      method's primal statistics (ops->primal_add) at the current point
 *      and its training tally (ops->primal_tally), then steps the solver
 *      (ops->primal_step), as the method's primal_fit does over the rows
 *      kernel_train collected (pipeline_approx.c); the tally comes from the
 *      last pass when it evaluated the final point, else from one more;
 *   3. scoring pass: the model's regression errors on both sides of the
 *      split (passes.c's, one SQL statement).
 * (refit: 1 and 2 again over every usable row; if_better: 3 for the
 * deployed version over the held-out rows.)
 * With a grid (k-fold model selection) the candidates are scored by passes
 * too before 1 (primal_select_passes, a route of km_grid_search): per
 * gamma a basis pass, per candidate and fold the Newton passes over the
 * training rows not in the fold and a pass scoring the fold (MSE); the
 * winner is then fitted by 1 and 2 (and refitted) with its gamma and
 * lambda, and the candidates recorded in the model.  Memory: the pass
 * states, O(m^2), and the candidates, nothing per row (newton_setup's
 * check counts them).  Folds come from the row hash (pass_row_fold), not
 * the in-memory rank rule, so the choice may differ from the aggregate's
 * on the same rows, as the named hold-out already does.
 *
 * Each pass of 1 and 2 reads the query through a cursor
 * (catalog_query_scan: as run_as, security-restricted, search_path
 * pinned), a batch at a time, and splits each row as _kernel_ml_holdout
 * does (split.h's km_row_held_out over the features and the target).  The
 * model is the kernel_train aggregate's on the same training rows up to
 * the order of the sums (the aggregate adds the rows in hash order, a pass
 * in the order the query returns them).
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"
#include "utils/memutils.h"

#include "approx.h"
#include "grid.h"
#include "basis.h"
#include "method.h"
#include "metrics.h"
#include "model.h"
#include "model_bytea.h"
#include "pgprogress.h"
#include "pgutil.h"
#include "primal.h"
#include "primal_pass.h"
#include "repr.h"
#include "solve.h"
#include "split.h"
#include "train_rows.h"
#include "named_common.h"
#include "pass_rows.h"
#include "passes_primal.h"

/* Rows per block of features: as pipeline_approx.c's. */
#define PP_BLOCK 512

typedef enum PrimalPassKind
{
	PP_BASIS,
	PP_NEWTON,
	PP_SCORE					/* k-fold: the held-out fold's squared errors */
} PrimalPassKind;

/* A k-fold selection's outcome: the scored candidates and the winner. */
typedef struct PrimalSelection
{
	km_candidate *cand;			/* NULL: no selection */
	int			ncand;
	int			best;
} PrimalSelection;

/* One fit's passes: what every batch of rows reads and adds to. */
typedef struct PrimalPasses
{
	const NamedRun *run;
	const km_method_ops *ops;
	MemoryContext cxt;
	km_options	opts;			/* resolved once the features are known */
	PrimalPassKind kind;
	bool		all_rows;		/* every usable row trains (refit) */
	PassRows	rows;			/* the pass's rows, counts and block */

	km_basis_state *st;			/* the basis pass */
	KmMemGrant *st_grant;

	/* the Newton passes */
	km_basis	basis;
	double	   *L;				/* nystrom: chol(K_mm + eps I) */
	double	   *R;				/* the identity */
	double		eps;
	uint32		m;
	km_primal_solver solver;
	double	   *state;
	double	   *coef;
	double		b;
	double	   *vecs;
	double	   *swork;
	double	   *before;
	double		tally[KM_PRIMAL_TALLY_DOUBLES];
	double	   *y;				/* PP_BLOCK */
	double	   *Z;				/* PP_BLOCK x m */
	double	   *fwork;
	double	   *scratch;		/* primal_add's, and primal_tally's */

	/* k-fold selection (folds 0: none) */
	int			folds;
	int			fold;			/* the fold left out of the fit; -1: none */
	int64	   *fold_n;			/* folds: training rows per fold (basis pass) */
	int64		fold_skipped;	/* rows of the left-out fold this pass */
	bool		soft;			/* a candidate's fit: failures lose, not raise */
	bool		diverged;		/* primal_add found a non-finite value */
	km_metrics	met;			/* PP_SCORE */
	double	   *fold_mse;		/* folds */
	MemoryContext gcxt;			/* the current gamma's basis and buffers */
	const PrimalSelection *sel;
	int64		sel_n;			/* k-fold: the training rows of the basis pass */
} PrimalPasses;

bool
passes_primal_method(int method)
{
	const km_method_ops *ops = km_method_get((km_method) method);

	return ops != NULL && ops->primal_add != NULL && ops->primal_step != NULL &&
		ops->primal_tally != NULL && ops->primal_result != NULL;
}

static void
raise_nonfinite(const PrimalPasses *pp)
{
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("decision value is out of range for type double precision"),
			 errdetail("A decision value in the block of training rows from " INT64_FORMAT " is not finite after %d Newton steps.",
					   pp->rows.block_first + 1, pp->solver.iterations),
			 errhint("Raise lambda, or standardize the features (\"standardize\": true).")));
}

/* One block of training rows into the statistics and the tally. */
static void
newton_block(PrimalPasses *pp)
{
	int64		r = pp->rows.nblock;

	if (r == 0)
		return;
	km_rows_features(&pp->basis, pp->L, pp->rows.Xs, r, pp->Z, pp->fwork, pp->rows.block_first);
	if (pp->kind == PP_SCORE)
	{
		for (int64 i = 0; i < r; i++)
		{
			double		pred = pp->b;

			for (uint32 j = 0; j < pp->m; j++)
				pred += pp->Z[i * pp->m + j] * pp->coef[j];
			km_metrics_add(&pp->met, pred, pp->y[i]);
		}
		pp->rows.block_first += r;
		pp->rows.nblock = 0;
		return;
	}
	pp->ops->primal_tally(&pp->opts.fit, pp->Z, (size_t) r, pp->m, pp->y, pp->coef,
						  pp->b, pp->tally, pp->scratch);
	if (!pp->solver.done && !pp->diverged &&
		!pp->ops->primal_add(&pp->opts.fit, pp->state, pp->m, pp->Z, (size_t) r, pp->y,
							 pp->coef, pp->b, pp->scratch, km_interrupt))
	{
		if (!pp->soft)
			raise_nonfinite(pp);
		pp->diverged = true;
	}
	pp->rows.block_first += r;
	pp->rows.nblock = 0;
}

/* A training row of a Newton pass: standardized into the block. */
static void
newton_row(PrimalPasses *pp, double y)
{
	pp->y[pass_row_standardize(&pp->rows, &pp->basis)] = y;
	if (pp->rows.nblock == PP_BLOCK)
		newton_block(pp);
}

/*
 * k-fold: whether a training row takes part in this pass, from its fold
 * (pass_row_fold): the basis pass counts it, a Newton pass skips the
 * left-out fold, a scoring pass reads that fold only.
 */
static bool
pass_fold_row(PrimalPasses *pp, double y)
{
	int			f = pass_row_fold(&pp->rows, y, pp->opts.seed, pp->folds);

	if (pp->kind == PP_BASIS)
	{
		pp->fold_n[f]++;
		return true;
	}
	if (pp->fold < 0)
		return true;
	if (pp->kind == PP_SCORE)
		return f == pp->fold;
	if (f == pp->fold)
		pp->fold_skipped++;
	return f != pp->fold;
}

/* One batch of the query's rows (f float8[], y float8), split, into the pass. */
static void
pass_batch(void *arg, SPITupleTable *tt, uint64 n)
{
	PrimalPasses *pp = arg;

	for (uint64 i = 0; i < n; i++)
	{
		Datum		yd;
		double		y;
		bool		held;

		if (!pass_row_read(&pp->rows, tt, i, pp->kind == PP_BASIS, &yd))
			continue;
		y = DatumGetFloat8(yd);
		pass_row_check_target(&pp->rows, y);
		held = pass_row_held(&pp->rows, y, pp->opts.seed);
		if (held && !pp->all_rows)
			continue;
		if (pp->folds > 0 && !pass_fold_row(pp, y))
			continue;
		if (pp->kind == PP_BASIS)
			pass_row_basis_add(&pp->rows, pp->st);
		else
			newton_row(pp, y);
	}
}

static void
run_pass(PrimalPasses *pp, PrimalPassKind kind)
{
	pp->kind = kind;
	pp->fold_skipped = 0;
	if (kind == PP_BASIS && pp->folds > 0)
		memset(pp->fold_n, 0, sizeof(int64) * pp->folds);
	pass_rows_scan(pp->run, &pp->rows, pass_batch, pp);
}

static int64
fit_rows(const PrimalPasses *pp)
{
	return pass_rows_fit(&pp->rows, pp->all_rows) - pp->fold_skipped;
}

/* The bytes of newton_setup's buffers for m features: O(m^2), nothing per row. */
static double
newton_bytes(const PrimalPasses *pp, uint32 m)
{
	return pass_newton_bytes(pp->opts.approximation, pp->rows.d, m, 1, PP_BLOCK, pp->folds) +
		8.0 * (4.0 * pp->opts.gammas.n * pp->opts.lambdas.n + 2.0 * pp->folds);	/* k-fold */
}

/* The basis state of the current gamma over the pass's rows. */
static void
basis_state_pass(PrimalPasses *pp)
{
	pp->st = pass_basis_state_new(&pp->opts, pp->rows.d, &pp->st_grant);
	km_progress_stage("fit: basis pass over the %s rows", pp->all_rows ? "usable" : "training");
	run_pass(pp, PP_BASIS);
}

/* Pass 1: the options resolved by d and the rows, the basis. */
static void
basis_pass(PrimalPasses *pp)
{
	const NamedRun *run = pp->run;
	int64		n;

	/* the basis state is sized by d: the first usable row's length */
	pp->rows.d = pass_rows_first_d(run);
	if (pp->rows.d <= 0)
	{
		/* no usable row (or only empty arrays): passes_no_rows says which */
		pp->rows.d = -1;
		run_pass(pp, PP_BASIS);
		passes_no_rows(run, pp->rows.seen, pp->rows.ntrain + pp->rows.ntest);
	}
	km_options_resolve(&pp->opts, pp->rows.d);
	if (pp->sel != NULL)
	{
		/* the refit of a selection: the winner's gamma and lambda */
		pp->opts.fit.kernel.gamma = pp->sel->cand[pp->sel->best].gamma;
		pp->opts.fit.lambda = pp->sel->cand[pp->sel->best].lambda;
	}
	/* rff's whole memory is known now: refused before a row is read */
	pass_check_memory(&pp->opts, pp->rows.d,
					  newton_bytes(pp, (uint32) pp->opts.components));
	pp->rows.x = palloc(sizeof(double) * (pp->rows.d + 1));
	pp->rows.hbuf = palloc(sizeof(double) * (pp->rows.d + 1));
	basis_state_pass(pp);
	n = fit_rows(pp);
	if (n == 0)
		passes_no_rows(run, pp->rows.seen, pp->rows.ntrain + pp->rows.ntest);
	km_options_resolve_rows(&pp->opts, (size_t) n);	/* the default lambda, 1 / n */
	if (pp->sel != NULL)
		pp->opts.fit.lambda = pp->sel->cand[pp->sel->best].lambda;

	pass_basis_finish(pp->st, pp->st_grant, &pp->basis);
	pp->st = NULL;
}

/*
 * The buffers of the Newton passes, nystrom's factor, and the memory they
 * take, checked and counted: O(m^2), nothing per row.
 */
static void
newton_setup(PrimalPasses *pp)
{
	uint32		m = pp->basis.m;
	uint32		d = (uint32) pp->rows.d;
	size_t		nstate = km_primal_state_doubles(m);
	size_t		nscratch = km_primal_add_scratch_doubles(m, PP_BLOCK);
	double		need = newton_bytes(pp, m);

	pp->m = m;
	(void) km_mem_reserve(CurrentMemoryContext, need, "kernel_model_train", false);
	elog(DEBUG1, "kernel_model_train: approximate %s by passes: m = %u, %.0f bytes",
		 pp->ops->name, m, need);

	pass_factor_setup(&pp->basis, &pp->L, &pp->R, &pp->eps);
	/* its pages faulted in here, between interrupt checks (268 MB at 8192) */
	pp->state = km_alloc0_interruptible(CurrentMemoryContext, mul_size(sizeof(double), nstate));
	pp->coef = palloc0_array(double, Max(m, 1));
	pp->vecs = palloc_extended(mul_size(sizeof(double), 2 * (Size) m), MCXT_ALLOC_HUGE);
	pp->swork = palloc_extended(mul_size(sizeof(double), km_primal_step_work_doubles(m)), MCXT_ALLOC_HUGE);
	pp->before = palloc(sizeof(double) * (m + 1));
	pp->rows.Xs = palloc(sizeof(double) * PP_BLOCK * d);
	pp->y = palloc(sizeof(double) * PP_BLOCK);
	pp->Z = palloc_extended(mul_size(sizeof(double), mul_size(PP_BLOCK, m)), MCXT_ALLOC_HUGE);
	pp->fwork = palloc_extended(mul_size(sizeof(double), km_approx_features_doubles(&pp->basis, PP_BLOCK) + 1),
								MCXT_ALLOC_HUGE);
	pp->scratch = palloc_extended(mul_size(sizeof(double), Max(nscratch, PP_BLOCK)),
								  MCXT_ALLOC_HUGE);
}

/* One Newton (or tally) pass; the rows it read checked against the basis pass's. */
static void
newton_pass(PrimalPasses *pp, int64 expect, const char *what)
{
	pp->rows.nblock = 0;
	pp->rows.block_first = 0;
	memset(pp->tally, 0, sizeof(pp->tally));
	run_pass(pp, PP_NEWTON);
	newton_block(pp);
	check_pass_rows("basis", expect, what, fit_rows(pp), pp->all_rows ? "usable" : "training");
}

/* A fit that fails for its lambda or gamma: the candidate loses (pipeline_approx.c's rule). */
static bool
candidate_failure(km_status st)
{
	return st == KM_ERR_NOT_PD || st == KM_ERR_DIVERGED || st == KM_ERR_INACCURATE;
}

/* A failed step or result: a candidate's loss (soft), else the error. */
static km_status
newton_failed(PrimalPasses *pp, km_status st, km_error *err)
{
	if (pp->soft && candidate_failure(st))
		return st;
	km_method_fill_hint(pp->opts.fit.method, err);
	km_raise(err);
	return st;
}

/*
 * The Newton passes from zero: the method's primal_fit over the query (its
 * fit rows n: the training rows, less the left-out fold under k-fold).
 */
static km_status
newton_passes(PrimalPasses *pp, int64 n, km_fit_result *res)
{
	int			passes = 0;
	bool		current = false;
	km_error	err;
	km_status	st;

	memset(res, 0, sizeof(*res));
	km_primal_solver_init(&pp->solver, pp->m);
	pp->b = 0.0;
	while (!pp->solver.done)
	{
		CHECK_FOR_INTERRUPTS();
		km_primal_state_init(pp->state, pp->m);
		km_progress_stage("fit: newton pass %d over the %s rows", passes + 1,
						  pp->all_rows ? "usable" : "training");
		newton_pass(pp, n, "newton");
		passes++;
		memcpy(pp->before, pp->coef, sizeof(double) * pp->m);
		pp->before[pp->m] = pp->b;
		if (pp->diverged)
			return KM_ERR_DIVERGED;
		st = pp->ops->primal_step(&pp->opts.fit, &pp->solver, pp->state, pp->R, pp->coef,
								  &pp->b, pp->vecs, pp->swork, &err, km_interrupt);
		if (st != KM_OK)
			return newton_failed(pp, st, &err);
		current = pp->before[pp->m] == pp->b &&
			memcmp(pp->before, pp->coef, sizeof(double) * pp->m) == 0;
	}
	if (!current)
	{
		/* the solver is done: the pass adds the tally only */
		km_progress_stage("fit: training error pass over the %s rows",
						  pp->all_rows ? "usable" : "training");
		newton_pass(pp, n, "training error");
		passes++;
	}
	st = pp->ops->primal_result(&pp->opts.fit, &pp->solver, pp->tally, (size_t) n, res, &err);
	if (st != KM_OK)
		return newton_failed(pp, st, &err);
	elog(DEBUG1, "kernel_model_train: approximate %s by passes, m = %u, %d passes, training rmse %.6g",
		 pp->ops->name, pp->m, passes, res->train_rmse);
	return KM_OK;
}

/* The model over the basis, as pipeline_approx.c assembles the aggregate's. */
static bytea *
assemble_model(PrimalPasses *pp, const km_fit_result *res, MemoryContext ctx)
{
	km_approx_result ar;
	km_model	model;
	MemoryContext old;
	bytea	   *out;

	if (pp->L != NULL)
		km_primal_unwhiten(pp->L, pp->m, 1, pp->coef);	/* coefficients of k(c_j, x) */
	memset(&ar, 0, sizeof(ar));
	ar.lambda = pp->opts.fit.lambda;
	ar.intercept = pp->b;
	ar.eps = pp->eps;
	ar.rank = pp->m;
	ar.train_rmse = res->train_rmse;
	ar.rows = (uint64) fit_rows(pp);
	memset(&model, 0, sizeof(model));
	km_approx_model_fill(&pp->basis, (uint32) pp->opts.components, &ar.lambda, 1,
						 pp->opts.fit_intercept, pp->coef, &ar, NULL, &model);
	model.method = pp->opts.fit.method;
	model.task = pp->ops->task;
	pp->ops->store(&pp->opts.fit, res, &model);
	if (pp->sel != NULL)
	{
		/* recorded as the in-memory path records its selection */
		model.n_candidates = (uint32) pp->sel->ncand;
		model.cv = pp->opts.cv;
		model.folds = pp->opts.folds;
		model.best = (uint32) pp->sel->best;
		model.candidates = pp->sel->cand;
	}
	sscanf(KM_VERSION_STRING, "%hhu.%hhu.%hhu", &model.writer_version[0],
		   &model.writer_version[1], &model.writer_version[2]);
	old = MemoryContextSwitchTo(ctx);
	out = km_model_to_bytea(&model);
	MemoryContextSwitchTo(old);
	return out;
}

/* The passes' state over run's query, in tmp (made current). */
static PrimalPasses *
passes_new(const NamedRun *run, bool all_rows, MemoryContext tmp)
{
	PrimalPasses *pp = palloc0(sizeof(PrimalPasses));

	pp->run = run;
	pp->ops = km_method_get(run->opts.fit.method);
	pp->cxt = tmp;
	pp->opts = run->opts;
	pp->all_rows = all_rows;
	pp->rows.cxt = tmp;
	pp->rows.d = -1;
	pp->rows.thr = km_holdout_threshold(run->opts.test_fraction);
	pp->fold = -1;
	km_blas_setup();
	return pp;
}

/*
 * k-fold selection by passes, a route of the one grid loop
 * (km_grid_search): per gamma its basis pass over the training rows and
 * the Newton buffers (route_gamma); per candidate and fold the Newton
 * passes over the training rows not in the fold, then a pass scoring the
 * fold's rows (route_score: the mean MSE over folds and its deviation, as
 * pipeline_approx.c's score_candidate).  A row's fold is its hash modulo
 * the folds (pass_row_fold), not the rank rule of the in-memory path, so a
 * named grid may pick another candidate than the aggregate's on the same
 * rows.  The held-out rows of the named split stay out, as in every pass.
 */
static km_status
route_gamma(void *arg, int g, double gamma, km_error *err)
{
	PrimalPasses *pp = arg;
	MemoryContext old;

	MemoryContextReset(pp->gcxt);
	old = MemoryContextSwitchTo(pp->gcxt);
	if (g > 0)
	{
		/* gamma 0's basis is basis_pass's */
		pp->opts.fit.kernel.gamma = gamma;
		basis_state_pass(pp);
		check_pass_rows("basis", pp->sel_n, "basis", fit_rows(pp), "training");
		pass_basis_finish(pp->st, pp->st_grant, &pp->basis);
		pp->st = NULL;
	}
	newton_setup(pp);
	MemoryContextSwitchTo(old);
	return KM_OK;
}

/* One candidate's k-fold score; NaN when a fold's fit fails for it. */
static km_status
route_score(void *arg, int index, km_candidate *c, km_error *err)
{
	PrimalPasses *pp = arg;
	double		mean = 0.0;
	double		var = 0.0;

	pp->opts.fit.lambda = c->lambda;
	for (int f = 0; f < pp->folds; f++)
	{
		km_fit_result res;

		km_progress_stage("candidate (gamma %g, lambda %g), fold %d of %d",
						  c->gamma, c->lambda, f + 1, pp->folds);
		pp->fold = f;
		pp->diverged = false;
		if (newton_passes(pp, pp->sel_n - pp->fold_n[f], &res) != KM_OK)
		{
			pp->fold = -1;
			c->score = NAN;
			c->score_std = 0.0;
			return KM_OK;
		}
		km_metrics_init(&pp->met);
		pp->rows.nblock = 0;
		pp->rows.block_first = 0;
		run_pass(pp, PP_SCORE);
		newton_block(pp);
		/* km_check_folds refused an empty fold: never score one as 0 */
		pp->fold_mse[f] = pp->met.n > 0 ? km_metrics_mse(&pp->met) : NAN;
	}
	pp->fold = -1;
	for (int f = 0; f < pp->folds; f++)
		mean += pp->fold_mse[f];
	mean /= pp->folds;
	for (int f = 0; f < pp->folds; f++)
		var += (pp->fold_mse[f] - mean) * (pp->fold_mse[f] - mean);
	c->score = mean;
	c->score_std = sqrt(var / pp->folds);
	return KM_OK;
}

static km_status
route_none(void *arg, int count, km_error *err)
{
	PrimalPasses *pp = arg;

	km_fail(err, KM_ERR_INACCURATE, "no candidate could be fitted",
			"None of the %d (gamma, lambda) candidates of method \"%s\" could be fitted on every fold.",
			count, pp->ops->name);
	km_method_fill_hint(pp->opts.fit.method, err);
	return err->status;
}

/* The k-fold selection over the training rows: sel's candidates (in ctx) and winner. */
static void
primal_select_passes(const NamedRun *run, MemoryContext ctx, PrimalSelection *sel)
{
	MemoryContext tmp = AllocSetContextCreate(CurrentMemoryContext,
											  "kernel_ml primal selection",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(tmp);
	PrimalPasses *pp = passes_new(run, false, tmp);
	km_grid_route route = {.arg = pp, .gamma = route_gamma, .score = route_score,
	.none = route_none};
	km_error	err;

	pp->folds = run->opts.folds;
	pp->soft = true;
	pp->fold_n = palloc0(sizeof(int64) * pp->folds);
	pp->fold_mse = palloc0(sizeof(double) * pp->folds);
	basis_pass(pp);
	pp->sel_n = fit_rows(pp);
	km_check_folds(pp->folds, pp->sel_n, pp->fold_n, KM_PASS_FOLD_RULE);
	pp->gcxt = AllocSetContextCreate(tmp, "kernel_ml primal gamma", ALLOCSET_DEFAULT_SIZES);
	sel->ncand = pp->opts.gammas.n * pp->opts.lambdas.n;
	sel->cand = MemoryContextAllocZero(ctx, sizeof(km_candidate) * sel->ncand);
	if (km_grid_search(pp->opts.gammas.v, pp->opts.gammas.n, pp->opts.lambdas.v,
					   pp->opts.lambdas.n, &route, sel->cand, &sel->best, &err) != KM_OK)
		km_raise(&err);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(tmp);
}

/*
 * Passes 1 and 2: the model of the training rows (or every usable row),
 * into ctx; sel: a selection's winner to fit and its candidates to record.
 */
static bytea *
primal_passes(const NamedRun *run, bool all_rows, MemoryContext ctx, int64 *rows, int *d,
			  const PrimalSelection *sel)
{
	MemoryContext tmp = AllocSetContextCreate(CurrentMemoryContext,
											  "kernel_ml primal passes",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(tmp);
	PrimalPasses *pp = passes_new(run, all_rows, tmp);
	km_fit_result res;
	bytea	   *model;

	pp->sel = sel;
	basis_pass(pp);
	newton_setup(pp);
	newton_passes(pp, fit_rows(pp), &res);
	model = assemble_model(pp, &res, ctx);
	*rows = fit_rows(pp);
	*d = pp->rows.d;
	MemoryContextSwitchTo(old);
	MemoryContextDelete(tmp);
	return model;
}

void
passes_primal_fit_and_score(NamedRun *run, MemoryContext work, PassesScoreFn score)
{
	int64		fit_n;
	int64		all_n;
	int			d;
	bytea	   *split_model;
	PrimalSelection sel = {NULL, 0, 0};

	/* m x m sums that cannot fit: refused before the first pass */
	km_check_components_memory((uint32) run->opts.components, "kernel_model_train");
	/* a grid: k-fold selection by passes, then the winner's fit */
	if (km_options_selects(&run->opts))
		primal_select_passes(run, work, &sel);
	split_model = primal_passes(run, false, work, &fit_n, &d, sel.cand ? &sel : NULL);
	run->d = d;
	score(run, PointerGetDatum(split_model), false, &run->test_scores,
		  &run->train_scores, &run->skipped);
	run->ntest = (int64) run->test_scores.n;
	run->ntrain = (int64) run->train_scores.n;
	run->rows = run->ntest + run->ntrain;
	/* the metrics and n_train describe the rows the model was fitted on */
	check_pass_rows("basis", fit_n, "scoring", run->ntrain, "training");
	run->model = split_model;
	if (run->refit && run->ntest > 0)
	{
		run->model = primal_passes(run, true, work, &all_n, &d, sel.cand ? &sel : NULL);
		check_pass_rows("scoring", run->rows, "refit", all_n, "usable");
	}
}
