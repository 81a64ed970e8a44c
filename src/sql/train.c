/*
 * train.c - the kernel_train aggregate.
 *
 * Rows are collected in a RowSet (rowset.c); the final function standardizes
 * them, runs model selection if asked, fits and encodes the model.
 * kernel_train can be split by parallel query (and Citus): its state
 * serializes to bytea and two states combine by appending rows.
 *
 * The result must not depend on the order rows arrive in (a parallel plan,
 * ORDER BY ... DESC).  k-fold cross-validation assigns folds by a hash of
 * each row's values and the seed (split.c), and puts the rows in that
 * hash order before anything is computed, so that even rounding is the
 * same: the selection table and the model come out bit for bit the same.
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "portability/instr_time.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "model.h"
#include "model_bytea.h"
#include "options.h"
#include "select.h"
#include "pgprogress.h"
#include "pgutil.h"
#include "rowset.h"
#include "solve.h"
#include "split.h"
#include "train.h"
#include "train_paths.h"
#include "train_rows.h"

PG_FUNCTION_INFO_V1(kernel_train_sfunc);
PG_FUNCTION_INFO_V1(kernel_train_bool_sfunc);
PG_FUNCTION_INFO_V1(kernel_train_final);
PG_FUNCTION_INFO_V1(kernel_train_combine);
PG_FUNCTION_INFO_V1(kernel_train_serialize);
PG_FUNCTION_INFO_V1(kernel_train_deserialize);

/* kernel_train_sfunc(state, features, target [, options]) */
Datum
kernel_train_sfunc(PG_FUNCTION_ARGS)
{
	RowSet	   *rs = rowset_get(fcinfo, 3, true, "kernel_train_sfunc");

	rs->seen++;
	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
		rs->skipped++;
	else
		rowset_add(rs, PG_GETARG_ARRAYTYPE_P(1), PG_GETARG_FLOAT8(2),
				   "kernel_train");
	PG_RETURN_POINTER(rs);
}

/*
 * kernel_train_bool_sfunc(state, features, label boolean [, options]): a
 * boolean label column is a classifier's labels, as the text 'false' and
 * 'true' (what ::text gives): kernel_predict_class returns them as text.
 */
Datum
kernel_train_bool_sfunc(PG_FUNCTION_ARGS)
{
	RowSet	   *rs = rowset_get_labels(fcinfo, 3, "kernel_train_bool_sfunc");

	rs->seen++;
	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
		rs->skipped++;
	else
		rowset_add_label(rs, PG_GETARG_ARRAYTYPE_P(1),
						 cstring_to_text(PG_GETARG_BOOL(2) ? "true" : "false"),
						 "kernel_train");
	PG_RETURN_POINTER(rs);
}

/*
 * Map the pages of km_fit's workspace that it will write, up front (see
 * km_alloc_prefaulted): each column of the matrix from km_fit_first_row
 * down, and the vectors after it.  Pages wholly in the upper triangle stay
 * unmapped, about half the matrix: half the memory and half the page
 * faults (n = 10,000: 0.4 GB of 0.8 GB).  Neighbouring columns whose parts
 * share or abut pages are populated in one call.
 */
static void
populate_fit_workspace(double *work, size_t n, int d, size_t nwork)
{
	const Size	page = km_page_size();
	KmRange    *runs = palloc_extended(mul_size(n + 1, sizeof(KmRange)),
									   MCXT_ALLOC_HUGE);
	int			count = 0;

	for (size_t j = 0; j <= n; j++)
	{
		/* j == n: the vectors after the matrix */
		char	   *s = (char *) (j < n ? work + j * n + km_fit_first_row(j, n, d)
								  : work + n * n);
		char	   *e = (char *) (j < n ? work + (j + 1) * n : work + nwork);

		s = (char *) TYPEALIGN_DOWN(page, s);
		e = (char *) TYPEALIGN(page, e);
		if (count > 0 && s <= runs[count - 1].end)
			runs[count - 1].end = Max(runs[count - 1].end, e);
		else
		{
			runs[count].start = s;
			runs[count].end = e;
			count++;
		}
	}
	km_populate_ranges(runs, count);
	pfree(runs);
}

/* k-fold: the fold of each row by its rank in hash order (split.c). */
static int *
row_folds(const RowSet *rs, const km_select_params *sp)
{
	int64	   *order;
	int		   *fold;

	if (sp->cv != KM_CV_KFOLD)
		return NULL;
	order = palloc_extended(mul_size((Size) rs->n, sizeof(int64)), MCXT_ALLOC_HUGE);
	fold = palloc_extended(mul_size((Size) rs->n, sizeof(int)), MCXT_ALLOC_HUGE);
	km_rank_rows(rs->X, rs->y, rs->n, rs->d, rs->opts.seed, order);
	km_folds_by_rank(order, rs->n, sp->folds, fold);
	pfree(order);
	return fold;
}

/*
 * k-fold: put the rows in hash order (see the top of this file).  The state
 * keeps the same rows, so a later call of the final function (a window
 * aggregate) or of the transition function still sees a valid state.
 */
static void
canonical_row_order(RowSet *rs)
{
	int64	   *order;

	/* classifiers order their rows themselves, labels with them (classify.c) */
	if (rs->opts.cv != KM_CV_KFOLD ||
		km_method_task(rs->opts.fit.method) == KM_TASK_CLASSIFICATION)
		return;
	order = palloc_extended(mul_size((Size) rs->n, sizeof(int64)), MCXT_ALLOC_HUGE);
	km_rank_rows(rs->X, rs->y, rs->n, rs->d, rs->opts.seed, order);
	km_reorder_rows(&rs->X, &rs->y, rs->n, rs->d, order, rs->ctx);
	rs->capacity = rs->n;
	pfree(order);
}

/*
 * A numeric target of exactly two distinct whole numbers (a 0/1 column)
 * trained without "method" is most likely a class label: kernel_train
 * still regresses it (the options decide the task, never the data), but
 * says how to classify instead.
 */
static void
notice_binary_target(const RowSet *rs)
{
	double		a;
	double		b = 0.0;
	bool		have_b = false;

	if (!rs->opts.method_default || rs->n < 2 || rs->label_type == KM_LABEL_TEXT)
		return;
	/* whole numbers of an int column (int4's range), e.g. 0/1 or 1/2 */
	a = rs->y[0];
	for (int64 i = 1; i < rs->n; i++)
	{
		double		y = rs->y[i];

		if (y == a || (have_b && y == b))
			continue;
		if (have_b)
			return;				/* a third value */
		b = y;
		have_b = true;
	}
	if (!have_b || a != floor(a) || b != floor(b) || fabs(a) > INT32_MAX || fabs(b) > INT32_MAX)
		return;
	ereport(NOTICE,
			(errmsg("the target has two distinct values, %s and %s: training a regression",
					float8out_internal(Min(a, b)), float8out_internal(Max(a, b))),
			 errdetail("Without \"method\", a numeric target is regressed (method \"ridge\"); kernel_predict then returns a number, not a class."),
			 errhint("To classify, add \"method\": \"svm\" (or \"logistic\") to the options, or pass the label as text, e.g. kernel_train(features, label::text).")));
}

/* One training run: the options resolved, the prepared rows, the fit. */
typedef struct TrainJob
{
	size_t		n;
	int			d;
	km_options	opts;
	km_select_params sp;		/* when ncand > 0 */
	int			ncand;			/* candidates of model selection, or 0 */
	int			best;
	km_candidate *cand;
	size_t		size;			/* bytes of the encoded model */
	size_t		nwork;			/* doubles of km_fit's workspace */
	double	   *Xs;				/* the rows, standardized if asked */
	double	   *mean;
	double	   *scale;
	double		ymean;			/* the intercept */
	double	   *yc;				/* the target minus ymean */
	double	   *alpha;
	km_fit_result res;
} TrainJob;

/*
 * Resolve the options, set up model selection if they ask for it, and
 * check memory and the model's size before anything is allocated.
 */
static void
plan_training(const RowSet *rs, TrainJob *job)
{
	size_t		n = (size_t) rs->n;
	int			d = rs->d;

	memset(job, 0, sizeof(*job));
	job->n = n;
	job->d = d;
	job->opts = rs->opts;
	km_options_resolve(&job->opts, d);
	km_options_resolve_rows(&job->opts, n);	/* a lambda_per_row method's 1 / n */
	km_check_exact_memory(km_train_memory((double) n, (double) d), "kernel_train", false);
	if (km_options_selects(&job->opts))
	{
		km_select_params *sp = &job->sp;

		sp->base = job->opts.fit;
		sp->gammas = job->opts.gammas.v;
		sp->n_gammas = job->opts.gammas.n;
		sp->lambdas = job->opts.lambdas.v;
		sp->n_lambdas = job->opts.lambdas.n;
		sp->cv = job->opts.cv;
		sp->folds = job->opts.folds;
		job->ncand = sp->n_gammas * sp->n_lambdas;
		km_check_exact_memory(8.0 * km_select_workspace_doubles(sp, n, d) +
						km_train_memory((double) n, (double) d) - 8.0 * n * n,
						"kernel_train model selection", false);
	}
	{
		km_model_shape shape = km_model_shape_simple(job->opts.fit.method,
													 (uint32_t) n, (uint32_t) d,
													 (uint32_t) job->ncand);

		job->size = km_model_size(&shape);
	}
	job->nwork = km_fit_workspace_doubles(job->opts.fit.method, n);
	if (n > UINT32_MAX || job->size == 0 || job->nwork == 0)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("training set is too large for a kernel_ml model"),
				 errdetail("A model of %zu rows of %d features would exceed 1 GB.", n, d)));
}

/* Xs, mean, scale: the rows standardized, or copied as they are. */
static void
standardize_rows(const RowSet *rs, TrainJob *job)
{
	size_t		n = job->n;
	int			d = job->d;

	job->mean = palloc(sizeof(double) * d);
	job->scale = palloc(sizeof(double) * d);
	job->Xs = palloc_extended(mul_size(n, mul_size(d, sizeof(double))), MCXT_ALLOC_HUGE);
	if (job->opts.standardize)
		km_standardize(rs->X, n, d, job->mean, job->scale, job->Xs);
	else
	{
		for (int j = 0; j < d; j++)
		{
			job->mean[j] = 0.0;
			job->scale[j] = 1.0;
		}
		memcpy(job->Xs, rs->X, n * d * sizeof(double));
	}
}

/* ymean (0 without an intercept) and yc, the target minus it. */
static void
centre_target(const RowSet *rs, TrainJob *job)
{
	size_t		n = job->n;
	double		ymean = 0.0;

	job->yc = palloc_extended(n * sizeof(double), MCXT_ALLOC_HUGE);
	if (job->opts.fit_intercept)
	{
		for (size_t i = 0; i < n; i++)
			ymean += rs->y[i];
		if (!isfinite(ymean))
		{
			/* the sum overflowed: sum the targets divided by n */
			ymean = 0.0;
			for (size_t i = 0; i < n; i++)
				ymean += rs->y[i] / (double) n;
		}
		else
			ymean /= (double) n;
	}
	for (size_t i = 0; i < n; i++)
	{
		job->yc[i] = rs->y[i] - ymean;
		if (!isfinite(job->yc[i]))
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("centred target is out of range for type double precision"),
					 errdetail("The target of row %zu, %s, minus the mean target %s overflowed.",
							   i + 1, float8out_internal(rs->y[i]),
							   float8out_internal(ymean)),
					 errhint("Scale the target down, or set \"fit_intercept\": false.")));
	}
	job->ymean = ymean;
}

/* Score every candidate; the winner's gamma and lambda become the fit's. */
static void
run_selection(const RowSet *rs, TrainJob *job)
{
	size_t		n = job->n;
	int			d = job->d;
	size_t		nsel = km_select_workspace_doubles(&job->sp, n, d);
	double	   *selwork;
	km_candidate *cand;
	km_error	err;

	if (nsel == 0)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("training set is too large for model selection"),
				 errdetail("%zu rows of %d features.", n, d)));
	selwork = km_alloc_prefaulted(mul_size(nsel, sizeof(double)));
	cand = palloc(sizeof(km_candidate) * job->ncand);
	if (km_select(&job->sp, job->Xs, n, d, job->yc, row_folds(rs, &job->sp),
				  cand, &job->best, selwork, &err, km_interrupt) != KM_OK)
		km_raise(&err);
	km_free_prefaulted(selwork);
	/* a score that overflowed did not score the candidate: NaN, as unsolvable */
	for (int i = 0; i < job->ncand; i++)
		if (!isfinite(cand[i].score) || !isfinite(cand[i].score_std))
		{
			cand[i].score = NAN;
			cand[i].score_std = 0.0;
		}
	job->cand = cand;
	job->opts.fit.kernel.gamma = cand[job->best].gamma;
	job->opts.fit.lambda = cand[job->best].lambda;
}

/* Reserve km_fit's workspace and map the pages it will write. */
static double *
allocate_fit_workspace(const TrainJob *job)
{
	double	   *work = km_alloc_reserved(mul_size(job->nwork, sizeof(double)));

	populate_fit_workspace(work, job->n, job->d, job->nwork);
	return work;
}

/* alpha and res: the fit with the chosen options on the prepared rows. */
static void
fit_rows(TrainJob *job, double *work)
{
	km_error	err;

	job->alpha = palloc_extended(job->n * sizeof(double), MCXT_ALLOC_HUGE);
	if (km_fit(&job->opts.fit, job->Xs, job->n, job->d, job->yc, job->alpha,
			   work, &job->res, &err, km_interrupt) != KM_OK)
		km_raise(&err);
}

/* The model's fields from the fit; the method fills its own (ops->store). */
static void
assemble_model(const RowSet *rs, const TrainJob *job, km_model *m)
{
	const km_options *opts = &job->opts;

	memset(m, 0, sizeof(*m));
	m->kernel = opts->fit.kernel;
	m->method = opts->fit.method;
	m->task = km_method_task(opts->fit.method);
	m->standardize = opts->standardize;
	m->fit_intercept = opts->fit_intercept;
	m->n_train = (uint32_t) job->n;
	m->n_features = (uint32_t) job->d;
	m->rows_seen = (uint64_t) job->n;
	m->rows_skipped = (uint64_t) rs->skipped;
	m->intercept = job->ymean;
	/* a fit's own bias (epsilon-SVR's b) on the centred target; ridge and lms: 0 */
	if (job->res.intercept != 0.0)
		m->intercept = job->ymean + job->res.intercept;
	m->train_rmse = job->res.train_rmse;
	/* km_fit succeeded, so the method is known: it fills its own fields */
	km_method_get(opts->fit.method)->store(&opts->fit, &job->res, m);
	sscanf(KM_VERSION_STRING, "%hhu.%hhu.%hhu", &m->writer_version[0],
		   &m->writer_version[1], &m->writer_version[2]);
	m->mean = job->mean;
	m->scale = job->scale;
	m->alpha = job->alpha;
	m->X = job->Xs;
	m->n_candidates = (uint32_t) job->ncand;
	m->cv = job->ncand > 0 ? opts->cv : KM_CV_NONE;
	m->folds = job->ncand > 0 && opts->cv == KM_CV_KFOLD ? opts->folds : 0;
	m->best = (uint32_t) job->best;
	m->candidates = job->cand;
}

/* Where the time went: SET client_min_messages = debug1. */
static void
log_training_time(size_t n, int d, instr_time t_start, instr_time t_alloc,
				  instr_time t_fit, instr_time t_end)
{
	INSTR_TIME_SUBTRACT(t_end, t_fit);
	INSTR_TIME_SUBTRACT(t_fit, t_alloc);
	INSTR_TIME_SUBTRACT(t_alloc, t_start);
	elog(DEBUG1, "kernel_train: %zu rows, %d features: prepare and select %.3f s, "
		 "allocate %.3f s, fit, encode and free %.3f s",
		 n, d, INSTR_TIME_GET_DOUBLE(t_alloc), INSTR_TIME_GET_DOUBLE(t_fit),
		 INSTR_TIME_GET_DOUBLE(t_end));
}

/* Fit on the collected rows and encode the model into a new bytea. */
static bytea *
train_model_reported(RowSet *rs)
{
	TrainJob	job;
	MemoryContext tmp;
	MemoryContext old;
	double	   *work;
	km_model	m;
	bytea	   *result;
	instr_time	t_start;
	instr_time	t_alloc;
	instr_time	t_fit;
	instr_time	t_end;

	if (km_method_task(rs->opts.fit.method) == KM_TASK_CLASSIFICATION)
		return km_train_classifier(rs);	/* classify.c, approximate ones too */
	notice_binary_target(rs);
	if (rs->opts.approximation != KM_APPROX_EXACT)
	{
		/* a method with a primal form (svr): approx_primal.c; ridge: approx.c */
		if (km_method_get(rs->opts.fit.method)->primal_fit != NULL)
			return km_approx_primal_train_rowset(rs);
		return km_approx_train_rowset(rs);
	}

	INSTR_TIME_SET_CURRENT(t_start);
	plan_training(rs, &job);

	/* Everything but the result goes in a context deleted at the end. */
	tmp = AllocSetContextCreate(CurrentMemoryContext, "kernel_ml training",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(tmp);

	standardize_rows(rs, &job);
	km_default_gamma(&job.opts, job.Xs, job.n, job.d,
					 km_default_gamma_pairs(&job.opts, rs->X, job.n, job.d));
	job.sp.base.kernel = job.opts.fit.kernel;
	centre_target(rs, &job);
	km_blas_setup();
	if (job.ncand > 0)
		run_selection(rs, &job);	/* then refit the winner on all rows */

	INSTR_TIME_SET_CURRENT(t_alloc);
	work = allocate_fit_workspace(&job);
	INSTR_TIME_SET_CURRENT(t_fit);
	fit_rows(&job, work);
	assemble_model(rs, &job, &m);

	MemoryContextSwitchTo(old);
	result = km_model_encode_bytea(&m, job.size);
	MemoryContextDelete(tmp);
	km_model_check_bytea(result, job.size);
	INSTR_TIME_SET_CURRENT(t_end);

	log_training_time(job.n, job.d, t_start, t_alloc, t_fit, t_end);
	return result;
}

/* train_model_reported as a kernel_ml.progress training */
static bytea *
train_model(RowSet *rs)
{
	bytea	   *result;

	/* an error ends it at the end of the (sub)transaction (pgprogress.h) */
	km_progress_begin("kernel_train");
	result = train_model_reported(rs);
	km_progress_end();
	return result;
}

Datum
kernel_train_final(PG_FUNCTION_ARGS)
{
	RowSet	   *rs;
	bytea	   *model;

	agg_context(fcinfo, "kernel_train_final");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	rs = (RowSet *) PG_GETARG_POINTER(0);
	if (rs->n == 0)
	{
		km_notice_skipped(rs->skipped, 0);
		PG_RETURN_NULL();
	}
	canonical_row_order(rs);
	model = train_model(rs);
	/* after the training, so that no NOTICE comes before its error */
	km_notice_skipped(rs->skipped, rs->n);
	PG_RETURN_BYTEA_P(model);
}

bytea *
km_train_rowset(RowSet *rs)
{
	return train_model(rs);
}

/* Parallel query: the state is a RowSet (rowset.c), combined by appending. */
Datum
kernel_train_combine(PG_FUNCTION_ARGS)
{
	MemoryContext aggctx = agg_context(fcinfo, "kernel_train_combine");

	PG_RETURN_POINTER(rowset_combine(aggctx,
									 PG_ARGISNULL(0) ? NULL : (RowSet *) PG_GETARG_POINTER(0),
									 PG_ARGISNULL(1) ? NULL : (RowSet *) PG_GETARG_POINTER(1),
									 "kernel_train"));
}

Datum
kernel_train_serialize(PG_FUNCTION_ARGS)
{
	agg_context(fcinfo, "kernel_train_serialize");
	PG_RETURN_BYTEA_P(rowset_serialize((RowSet *) PG_GETARG_POINTER(0)));
}

Datum
kernel_train_deserialize(PG_FUNCTION_ARGS)
{
	MemoryContext aggctx = agg_context(fcinfo, "kernel_train_deserialize");

	PG_RETURN_POINTER(rowset_deserialize(aggctx, PG_GETARG_BYTEA_PP(0),
											   "kernel_train"));
}
