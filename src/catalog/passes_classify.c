/*
 * passes_classify.c - named approximate classifiers (logistic, svm over
 * nystrom or rff features) trained by passes over the stored query, so
 * that their memory is the basis, the m x m factor and the Newton
 * statistics of each class, not the rows:
 *   1. basis pass: the scaler and centres (km_basis_state, as kernel_basis
 *      and the kernel_train aggregate build them), the classes and their
 *      counts, over the training rows;
 *   2. Newton passes: each one adds the rows' whitened features into the
 *      primal statistics of every class still solving (km_primal_add), then
 *      steps each solver (km_primal_step), as pipeline_approx_classify.c does over
 *      collected rows; the training accuracy and log-loss come from the
 *      last pass when it evaluated the final point, else from one more;
 *   3. scoring pass: the model's classification scores on both sides.
 * (refit: 1 and 2 again over every usable row; if_better: 3 for the
 * deployed version over the held-out rows.)
 * A grid (lambda x gamma, k-fold) selects by passes before 1 and 2: per
 * gamma a basis pass, per candidate and fold the Newton passes over the
 * training rows not in the fold and a pass scoring the fold by the
 * method's hold-out loss (km_primal_block_holdout: 1 - accuracy for svm,
 * log-loss for logistic), then 1 and 2 fit the winner (classify_select).
 *
 * Each pass reads the query through a cursor (catalog_query_scan: as
 * run_as, security-restricted, search_path pinned), a batch at a time, and
 * splits each row as _kernel_ml_holdout does (split.h's km_row_held_out
 * over the features and the label: a float8 label's value, a text label's
 * hash_bytes).  The model is the kernel_train aggregate's on the same
 * training rows up to the order of the sums (the aggregate adds the rows in
 * hash order, a pass in the order the query returns them).
 */
#include "postgres.h"

#include <math.h>

#include "common/hashfn.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/memutils.h"

#include "approx.h"
#include "basis.h"
#include "classify.h"
#include "grid.h"
#include "method.h"
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
#include "passes_classify.h"

/* Rows per block of features: as pipeline_approx_classify.c's. */
#define PASS_BLOCK 512

typedef enum PassKind
{
	PASS_BASIS,
	PASS_NEWTON,
	PASS_SCORE,
	PASS_HOLDOUT				/* k-fold: the left-out fold's hold-out loss */
} PassKind;

/* A k-fold selection's outcome: the scored candidates and the winner. */
typedef struct ClassSelection
{
	km_candidate *cand;			/* NULL: no selection */
	int			ncand;
	int			best;
} ClassSelection;

/* One classifier's passes: what every batch of rows reads and adds to. */
typedef struct ClassPasses
{
	const NamedRun *run;
	MemoryContext cxt;			/* where the passes' buffers live */
	km_options	opts;			/* resolved once the features are known */
	PassKind	kind;
	bool		all_rows;		/* every usable row trains (refit) */
	PassRows	rows;			/* the pass's rows, counts and block */

	/* the basis pass */
	km_basis_state *st;
	KmMemGrant *st_grant;
	int64		nlab;			/* distinct labels met */
	char	  **lab_text;
	double	   *lab_value;
	uint64	   *lab_count;

	/* the classes, in class order */
	uint32		k;
	char	   *labels;
	uint32		labels_bytes;
	uint64	   *counts;
	double	   *values;			/* float8 labels: the k values */
	double	   *class_w;

	/* the Newton passes */
	km_basis	basis;
	double	   *L;				/* nystrom: chol(K_mm + eps I) */
	double	   *R;				/* the identity */
	double		eps;
	uint32		m;
	uint32		q;
	int			mc;
	bool		logistic;
	km_primal_params pp;
	km_primal_solver *solvers;
	size_t		nstate;
	double	   *states;
	double	   *coef;			/* m x q column-major */
	double	   *intercepts;
	double	   *vecs;
	double	   *swork;
	double	   *before;
	bool		metrics;		/* add the training accuracy and log-loss */
	double		correct;
	double		logloss;
	uint32	   *cls;			/* PASS_BLOCK */
	double	   *Z;
	double	   *fwork;
	double	   *scratch;
	uint32	   *yc;
	double	   *w;
	double	   *F;
	double	   *p;
	double	   *pwork;

	/* the scoring pass */
	ClassScorer *train_sc;		/* NULL: held-out rows only */
	ClassScorer *test_sc;

	/* k-fold selection (folds 0: none) */
	int			folds;
	int			fold;			/* the fold left out of the fit; -1: none */
	uint64	   *fold_lab;		/* folds x KM_MAX_CLASSES: rows per fold and label */
	int64	   *fold_n;			/* folds: training rows per fold */
	int64		fold_skipped;	/* rows of the left-out fold this pass */
	bool		soft;			/* a candidate's fit: failures lose, not raise */
	bool		diverged;		/* km_primal_add found a non-finite value */
	uint32	   *hfold;			/* PASS_BLOCK zeros: a block's rows are all the fold's */
	double		hsum;			/* PASS_HOLDOUT's loss sum and rows */
	int64		hcount;
	bool		hbad;			/* a decision value the loss cannot score */
	int64		sel_n;			/* the training rows of the basis pass */
	MemoryContext gcxt;			/* the current gamma's basis and buffers */
	const ClassSelection *sel;
} ClassPasses;

/* A row's label as text (float8 labels as the model stores them). */
static const char *
label_text(const ClassPasses *cp, Datum y)
{
	if (cp->run->query.text_label)
		return TextDatumGetCString(y);
	return float8out_internal(DatumGetFloat8(y) == 0.0 ? 0.0 : DatumGetFloat8(y));
}

/* The value a row's label is hashed by for the split. */
static double
label_key(const ClassPasses *cp, Datum y)
{
	if (cp->run->query.text_label)
	{
		text	   *t = DatumGetTextPP(y);

		return (double) hash_bytes((const unsigned char *) VARDATA_ANY(t),
								   (int) VARSIZE_ANY_EXHDR(t));
	}
	return DatumGetFloat8(y);
}

/* The basis pass: the scaler and centres, and the labels with their counts. */
static int64
basis_row(ClassPasses *cp, Datum y)
{
	int64		l;

	pass_row_basis_add(&cp->rows, cp->st);
	if (cp->run->query.text_label)
	{
		char	   *s = TextDatumGetCString(y);

		for (l = 0; l < cp->nlab; l++)
			if (strcmp(cp->lab_text[l], s) == 0)
				break;
		if (l == cp->nlab && l < KM_MAX_CLASSES)
			cp->lab_text[l] = MemoryContextStrdup(cp->cxt, s);
	}
	else
	{
		double		v = DatumGetFloat8(y) == 0.0 ? 0.0 : DatumGetFloat8(y);

		for (l = 0; l < cp->nlab; l++)
			if (cp->lab_value[l] == v)
				break;
		if (l == cp->nlab && l < KM_MAX_CLASSES)
			cp->lab_value[l] = v;
	}
	if (l == KM_MAX_CLASSES)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many distinct labels"),
				 errdetail("The training rows have more than %d distinct labels; a model may have at most %d classes.",
						   KM_MAX_CLASSES, KM_MAX_CLASSES),
				 errhint("A continuous target needs a regression method (\"ridge\" or \"lms\").")));
	if (l == cp->nlab)
		cp->nlab++;
	cp->lab_count[l]++;
	return l;
}

/* The class of a training row's label (every label was met by the basis pass). */
static uint32
row_class(const ClassPasses *cp, Datum y)
{
	int			c;

	if (cp->run->query.text_label)
		c = km_classes_find(cp->labels, cp->labels_bytes, cp->k, TextDatumGetCString(y));
	else
	{
		double		v = DatumGetFloat8(y) == 0.0 ? 0.0 : DatumGetFloat8(y);
		double	   *hit = bsearch(&v, cp->values, cp->k, sizeof(double), km_cmp_double);

		c = hit != NULL ? (int) (hit - cp->values) : -1;
	}
	if (c < 0)
		passes_rows_changed(psprintf("A training row of a Newton pass has the label \"%s\", which the basis pass did not read.",
									 label_text(cp, y)));
	return (uint32) c;
}

static void
raise_nonfinite(uint32 c, uint32 q, int64 first)
{
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("decision value is out of range for type double precision"),
			 errdetail("A decision value of output %u of %u in the block of training rows from " INT64_FORMAT " is not finite during the Newton passes.",
					   c + 1, q, first + 1),
			 errhint("Raise lambda, or standardize the features (\"standardize\": true).")));
}

/* One block of training rows into the statistics (and the training metrics). */
static void
newton_block(ClassPasses *cp)
{
	int64		r = cp->rows.nblock;
	km_error	err;

	if (r == 0)
		return;
	km_rows_features(&cp->basis, cp->L, cp->rows.Xs, r, cp->Z, cp->fwork, cp->rows.block_first);
	if (cp->kind == PASS_HOLDOUT)
	{
		km_primal_decisions(cp->Z, (size_t) r, cp->m, cp->q, cp->coef, cp->intercepts, cp->F);
		if (!km_primal_block_holdout(cp->F, (size_t) r, cp->q, cp->k, cp->logistic, cp->cls,
									 cp->hfold, 0, cp->p, cp->pwork, &cp->hsum, &cp->hcount))
			cp->hbad = true;
		cp->rows.block_first += r;
		cp->rows.nblock = 0;
		return;
	}
	if (cp->metrics)
	{
		km_primal_decisions(cp->Z, (size_t) r, cp->m, cp->q, cp->coef, cp->intercepts, cp->F);
		for (int64 i = 0; i < r; i++)
		{
			const double *f = cp->F + i * cp->q;

			if (!km_all_finite(f, cp->q))
				raise_nonfinite(0, cp->q, cp->rows.block_first);
			if (km_classify_decide((km_multiclass) cp->mc, cp->k, f) == cp->cls[i])
				cp->correct += 1.0;
			if (cp->logistic)
			{
				if (km_classify_proba(KM_PROB_LOGISTIC, (km_multiclass) cp->mc, cp->k, f,
									  NULL, NULL, cp->p, cp->pwork, &err) != KM_OK)
					km_raise(&err);
				cp->logloss -= log(Max(cp->p[cp->cls[i]], 1e-300));
			}
		}
	}
	for (int64 i = 0; i < r; i++)
		cp->w[i] = cp->class_w[cp->cls[i]];
	for (uint32 c = 0; c < cp->q; c++)
	{
		if (cp->solvers[c].done || cp->diverged)
			continue;
		for (int64 i = 0; i < r; i++)
			cp->yc[i] = cp->q == 1 ? cp->cls[i] : (cp->cls[i] == c ? 1 : 0);
		if (!km_primal_add(cp->states + (size_t) c * cp->nstate, cp->m, cp->pp.loss, cp->Z,
						   (size_t) r, cp->yc, cp->w, cp->coef + (size_t) c * cp->m,
						   cp->intercepts[c], cp->scratch, km_interrupt))
		{
			if (!cp->soft)
				raise_nonfinite(c, cp->q, cp->rows.block_first);
			cp->diverged = true;
		}
	}
	cp->rows.block_first += r;
	cp->rows.nblock = 0;
}

/* A training row of a Newton pass: standardized into the block. */
static void
newton_row(ClassPasses *cp, Datum y)
{
	cp->cls[pass_row_standardize(&cp->rows, &cp->basis)] = row_class(cp, y);
	if (cp->rows.nblock == PASS_BLOCK)
		newton_block(cp);
}

/* The first basis pass under k-fold: the row's label, counted in its fold. */
static void
basis_row_folds(ClassPasses *cp, Datum y)
{
	int64		l = basis_row(cp, y);

	if (cp->folds > 0)
	{
		int			f = pass_row_fold(&cp->rows, label_key(cp, y), cp->opts.seed, cp->folds);

		cp->fold_lab[(Size) f * KM_MAX_CLASSES + l]++;
		cp->fold_n[f]++;
	}
}

/*
 * k-fold: whether a training row takes part in this pass, from its fold
 * (pass_row_fold): a basis pass reads every training row (the in-memory
 * path's basis is over every row too), a Newton pass skips the left-out
 * fold, a hold-out pass reads that fold only.
 */
static bool
pass_fold_row(ClassPasses *cp, Datum y)
{
	int			f;

	if (cp->kind == PASS_BASIS || cp->fold < 0)
		return true;
	f = pass_row_fold(&cp->rows, label_key(cp, y), cp->opts.seed, cp->folds);
	if (cp->kind == PASS_HOLDOUT)
		return f == cp->fold;
	if (f == cp->fold)
		cp->fold_skipped++;
	return f != cp->fold;
}

/* One batch of the query's rows (f float8[], y), split, into the pass. */
static void
pass_batch(void *arg, SPITupleTable *tt, uint64 n)
{
	ClassPasses *cp = arg;

	for (uint64 i = 0; i < n; i++)
	{
		Datum		y;
		bool		held;

		if (!pass_row_read(&cp->rows, tt, i, cp->kind == PASS_BASIS, &y))
			continue;
		if (!cp->run->query.text_label)
			pass_row_check_target(&cp->rows, DatumGetFloat8(y));
		held = pass_row_held(&cp->rows, label_key(cp, y), cp->opts.seed);
		if (cp->kind == PASS_SCORE)
		{
			ClassScorer *sc = held ? cp->test_sc : cp->train_sc;

			if (sc != NULL)
				class_scorer_add(sc, label_text(cp, y), cp->rows.x, cp->rows.d);
			continue;
		}
		if (held && !cp->all_rows)
			continue;
		if (cp->folds > 0 && !pass_fold_row(cp, y))
			continue;
		if (cp->kind == PASS_BASIS && cp->k > 0)
			pass_row_basis_add(&cp->rows, cp->st);	/* another gamma's basis */
		else if (cp->kind == PASS_BASIS)
			basis_row_folds(cp, y);
		else
			newton_row(cp, y);
	}
}

/* One pass over every row of the query into cp. */
static void
run_pass(ClassPasses *cp, PassKind kind)
{
	cp->kind = kind;
	cp->fold_skipped = 0;
	pass_rows_scan(&cp->run->query, &cp->rows, pass_batch, cp);
}

/* The fit's rows: the training side, or every usable row. */
static int64
fit_rows(const ClassPasses *cp)
{
	return pass_rows_fit(&cp->rows, cp->all_rows) - cp->fold_skipped;
}

/* Pass 1 and what follows from it: options, classes and weights, the basis. */
static void
basis_pass(ClassPasses *cp)
{
	const NamedRun *run = cp->run;
	km_basis_state *probe;
	uint32	   *order;
	uint32	   *class_of;
	StringInfoData buf;
	km_error	err;
	int64		n;

	cp->lab_text = palloc0(sizeof(char *) * KM_MAX_CLASSES);
	cp->lab_value = palloc0(sizeof(double) * KM_MAX_CLASSES);
	cp->lab_count = palloc0(sizeof(uint64) * KM_MAX_CLASSES);

	/*
	 * The basis state is sized by d and the options resolved by it: the
	 * first usable row's length, read by a statement that stops there.
	 */
	probe = NULL;
	cp->rows.d = pass_rows_first_d(&run->query);
	if (cp->rows.d > 0)
	{
		km_options_resolve(&cp->opts, cp->rows.d);
		if (cp->sel != NULL)
			cp->opts.fit.kernel.gamma = cp->sel->cand[cp->sel->best].gamma;
		else if (cp->folds > 0 && cp->opts.gammas.n > 0)
			cp->opts.fit.kernel.gamma = cp->opts.gammas.v[0];	/* the grid's first */
		/* rff's whole memory is known now: refused before a row is read */
		pass_check_memory(&cp->opts, cp->rows.d, pass_newton_bytes(cp->opts.approximation,
																   cp->rows.d, cp->opts.components, 1,
																   PASS_BLOCK, cp->folds));
		probe = pass_basis_state_new(&cp->opts, cp->rows.d, &cp->st_grant);
		cp->rows.x = palloc(sizeof(double) * (cp->rows.d + 1));
		cp->rows.hbuf = palloc(sizeof(double) * (cp->rows.d + 1));
	}
	else
		cp->rows.d = -1;
	cp->st = probe;

	km_progress_stage("fit: basis pass over the %s rows", cp->all_rows ? "usable" : "training");
	run_pass(cp, PASS_BASIS);
	n = fit_rows(cp);
	if (n == 0)
		passes_no_rows(run, cp->rows.seen, cp->rows.ntrain + cp->rows.ntest);

	/* the classes in class order, as the kernel_train aggregate orders them */
	order = palloc(sizeof(uint32) * Max(1, cp->nlab));
	class_of = palloc(sizeof(uint32) * Max(1, cp->nlab));
	if (run->query.text_label)
		km_classes_sort_text((const char *const *) cp->lab_text, (uint32) cp->nlab, order,
							 class_of, palloc(Max(1, km_classes_sort_work_bytes((uint32) cp->nlab))));
	else
		km_classes_sort_float8(cp->lab_value, (uint32) cp->nlab, order, class_of,
							   palloc(Max(1, km_classes_sort_work_bytes((uint32) cp->nlab))));
	cp->k = (uint32) cp->nlab;
	cp->counts = palloc0(sizeof(uint64) * Max(1, cp->k));
	cp->values = palloc(sizeof(double) * Max(1, cp->k));
	initStringInfo(&buf);
	for (uint32 c = 0; c < cp->k; c++)
	{
		const char *s = run->query.text_label ? cp->lab_text[order[c]] :
			float8out_internal(cp->lab_value[order[c]]);

		appendBinaryStringInfo(&buf, s, strlen(s) + 1);
		cp->counts[c] = cp->lab_count[order[c]];
		cp->values[c] = cp->lab_value[order[c]];
	}
	cp->labels = buf.data;
	cp->labels_bytes = (uint32) buf.len;
	if (cp->k < 2)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("training set has a single class"),
				 errdetail("All " INT64_FORMAT " training rows have the label \"%s\"; a classifier needs at least two classes.",
						   n, cp->labels),
				 errhint("Check the query's WHERE clause, or train on rows of at least two labels.")));
	km_options_resolve_rows(&cp->opts, (size_t) n);	/* the default lambda, 1 / n */
	if (cp->sel != NULL)
		cp->opts.fit.lambda = cp->sel->cand[cp->sel->best].lambda;
	cp->class_w = palloc(sizeof(double) * cp->k);
	if (km_class_weights_resolve(&cp->opts.class_weight, cp->labels, cp->labels_bytes,
								 cp->k, cp->counts, cp->class_w, &err) != KM_OK)
		km_raise(&err);

	pass_basis_finish(cp->st, cp->st_grant, &cp->basis);
	cp->st = NULL;
}

/*
 * The buffers of the Newton passes, nystrom's factor, and the memory they
 * take, checked and counted: O(m^2) per class, nothing per row.
 */
static void
newton_setup(ClassPasses *cp)
{
	uint32		m = cp->basis.m;
	uint32		d = (uint32) cp->rows.d;
	uint32		q = cp->k == 2 ? 1 : cp->k;
	double		need = pass_newton_bytes(cp->opts.approximation, d, m, q, PASS_BLOCK,
										 cp->folds);

	cp->m = m;
	cp->q = q;
	cp->nstate = km_primal_state_doubles(m);
	(void) km_mem_reserve(CurrentMemoryContext, need, "kernel_model_train", false);
	elog(DEBUG1, "kernel_model_train: approximate classifier by passes: m = %u, %u outputs, %.0f bytes",
		 m, q, need);

	cp->mc = cp->k == 2 ? KM_MULTICLASS_BINARY : KM_MULTICLASS_OVR;
	cp->pp.loss = (km_primal_loss) km_method_get(cp->opts.fit.method)->primal_loss;
	cp->logistic = cp->pp.loss == KM_PRIMAL_LOGISTIC;
	cp->pp.lambda = cp->opts.fit.lambda;
	cp->pp.fit_intercept = cp->opts.fit_intercept;
	cp->pp.tol = cp->opts.fit.tol;
	cp->pp.max_iter = cp->opts.fit.max_iter;
	pass_factor_setup(&cp->basis, &cp->L, &cp->R, &cp->eps);
	/* their pages faulted in here, between interrupt checks (q x 268 MB at 8192) */
	cp->states = km_alloc0_interruptible(CurrentMemoryContext,
										 mul_size(sizeof(double), mul_size(cp->nstate, q)));
	cp->coef = palloc0_array(double, (Size) m * q);
	cp->intercepts = palloc0_array(double, q);
	cp->vecs = palloc_extended(mul_size(sizeof(double), mul_size(2 * (Size) m, q)), MCXT_ALLOC_HUGE);
	cp->swork = palloc_extended(mul_size(sizeof(double), km_primal_step_work_doubles(m)), MCXT_ALLOC_HUGE);
	cp->solvers = palloc(sizeof(km_primal_solver) * q);
	cp->before = palloc(sizeof(double) * (m + 1));
	cp->rows.Xs = palloc(sizeof(double) * PASS_BLOCK * d);
	cp->cls = palloc(sizeof(uint32) * PASS_BLOCK);
	cp->Z = palloc_extended(mul_size(sizeof(double), mul_size(PASS_BLOCK, m)), MCXT_ALLOC_HUGE);
	cp->fwork = palloc_extended(mul_size(sizeof(double), km_approx_features_doubles(&cp->basis, PASS_BLOCK) + 1),
								MCXT_ALLOC_HUGE);
	cp->scratch = palloc_extended(mul_size(sizeof(double), km_primal_add_scratch_doubles(m, PASS_BLOCK)),
								  MCXT_ALLOC_HUGE);
	cp->yc = palloc(sizeof(uint32) * PASS_BLOCK);
	cp->w = palloc(sizeof(double) * PASS_BLOCK);
	cp->F = palloc(sizeof(double) * PASS_BLOCK * q);
	cp->p = palloc(sizeof(double) * cp->k);
	cp->pwork = palloc(sizeof(double) * (km_classify_proba_work_doubles(cp->k) + 1));
	if (cp->folds > 0)
		cp->hfold = palloc0(sizeof(uint32) * PASS_BLOCK);
}

/* One Newton (or metrics) pass; the rows it read checked against the basis pass's. */
static void
newton_pass(ClassPasses *cp, int64 expect, const char *what)
{
	cp->rows.nblock = 0;
	cp->rows.block_first = 0;
	cp->correct = 0.0;
	cp->logloss = 0.0;
	run_pass(cp, PASS_NEWTON);
	newton_block(cp);
	check_pass_rows("basis", expect, what, fit_rows(cp), cp->all_rows ? "usable" : "training");
}

/*
 * The Newton passes from zero: pipeline_approx_classify.c's class_newton
 * over the query (its fit rows n: the training rows, less the left-out
 * fold under k-fold, whose fit adds no training metrics).  A candidate's
 * fit (soft) returns a failed step's or a non-finite value's status.
 */
static km_status
newton_passes(ClassPasses *cp, int64 n, km_class_fit_result *res)
{
	int			passes = 0;
	bool		metrics_current = false;
	km_error	err;

	memset(res, 0, sizeof(*res));
	for (uint32 c = 0; c < cp->q; c++)
		km_primal_solver_init(&cp->solvers[c], cp->m);
	memset(cp->coef, 0, sizeof(double) * cp->m * cp->q);
	memset(cp->intercepts, 0, sizeof(double) * cp->q);
	cp->diverged = false;
	cp->metrics = cp->fold < 0;
	for (;;)
	{
		bool		any = false;

		for (uint32 c = 0; c < cp->q; c++)
			if (!cp->solvers[c].done)
			{
				CHECK_FOR_INTERRUPTS();
				km_primal_state_init(cp->states + (size_t) c * cp->nstate, cp->m);
				any = true;
			}
		if (!any)
			break;
		km_progress_stage("fit: newton pass %d over the %s rows", passes + 1,
						  cp->all_rows ? "usable" : "training");
		newton_pass(cp, n, "newton");
		passes++;
		metrics_current = true;
		if (cp->diverged)
			return KM_ERR_DIVERGED;
		for (uint32 c = 0; c < cp->q; c++)
		{
			km_primal_solver *s = &cp->solvers[c];

			if (s->done)
				continue;
			memcpy(cp->before, cp->coef + (size_t) c * cp->m, sizeof(double) * cp->m);
			cp->before[cp->m] = cp->intercepts[c];
			if (km_primal_step(s, &cp->pp, cp->states + (size_t) c * cp->nstate, cp->R,
							   cp->coef + (size_t) c * cp->m, &cp->intercepts[c],
							   cp->vecs + (size_t) c * 2 * cp->m, cp->swork, &err,
							   km_interrupt) != KM_OK)
			{
				if (cp->soft)
					return err.status;
				km_raise(&err);
			}
			if (!s->done || cp->before[cp->m] != cp->intercepts[c] ||
				memcmp(cp->before, cp->coef + (size_t) c * cp->m, sizeof(double) * cp->m) != 0)
				metrics_current = false;
		}
	}
	if (!cp->metrics)
		return KM_OK;
	if (!metrics_current)
	{
		/* every solver is done: the pass adds the metrics only */
		km_progress_stage("fit: metrics pass over the %s rows", cp->all_rows ? "usable" : "training");
		newton_pass(cp, n, "metrics");
		passes++;
	}
	res->solver = KM_SOLVER_PRIMAL_NEWTON;
	res->multiclass = cp->mc;
	res->n_outputs = cp->q;
	res->has_probability = cp->logistic;
	res->converged = true;
	for (uint32 c = 0; c < cp->q; c++)
	{
		res->objective += cp->solvers[c].objective;
		res->iterations = Max(res->iterations, cp->solvers[c].iterations);
		res->converged = res->converged && cp->solvers[c].converged;
	}
	res->train_accuracy = cp->correct / (double) n;
	res->train_log_loss = cp->logistic ? cp->logloss / (double) n : NAN;
	elog(DEBUG1, "kernel_model_train: approximate %s by passes, %u classes, m = %u, %d passes, training accuracy %.6f",
		 km_method_name(cp->opts.fit.method), cp->k, cp->m, passes, res->train_accuracy);
	return KM_OK;
}

/* The model over the basis, as the kernel_train aggregate assembles it. */
static bytea *
assemble_model(ClassPasses *cp, const km_class_fit_result *res, MemoryContext ctx)
{
	const km_method_ops *ops = km_method_get(cp->opts.fit.method);
	const km_basis *b = &cp->basis;
	km_model	mo;
	MemoryContext old;
	bytea	   *out;

	if (cp->L != NULL)
		km_primal_unwhiten(cp->L, cp->m, cp->q, cp->coef);
	if (!km_all_finite(cp->coef, (size_t) cp->m * cp->q))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("approximate classifier coefficients are out of range for type double precision"),
				 errdetail("alpha = L^-T w over the %u centres is not finite (eps %g).", cp->m, cp->eps),
				 errhint("Raise lambda, or use fewer components.")));
	if (!res->converged)
		ereport(WARNING,
				(errcode(ERRCODE_WARNING),
				 errmsg("%s did not converge", km_method_name(cp->opts.fit.method)),
				 errdetail("The primal Newton passes stopped after %d steps before reaching tol %g.",
						   res->iterations, cp->opts.fit.tol),
				 errhint("Raise \"max_iter\" or \"tol\", or raise lambda.")));
	memset(&mo, 0, sizeof(mo));
	/* the approximate model: the basis, alpha over it */
	mo.approximation = b->kind;
	mo.kernel = b->kernel;
	mo.standardize = b->standardize;
	mo.components = (uint32) cp->opts.components;
	mo.rank = mo.n_train = b->m;
	mo.n_features = b->d;
	mo.n_outputs = cp->q;
	mo.mean = b->mean;
	mo.scale = b->scale;
	mo.X = km_repr_lookup(b->kind)->keeps_rows ? b->centres : NULL;
	mo.rff_W = b->W;
	mo.rff_b = b->b;
	mo.approx_eps = cp->eps;
	mo.approx_seed = b->seed;
	mo.alpha = cp->coef;
	mo.intercepts = cp->intercepts;
	mo.intercept = cp->intercepts[0];
	mo.rows_seen = (uint64) fit_rows(cp);
	/* the classifier: method, classes, fit */
	mo.method = cp->opts.fit.method;
	mo.task = km_method_task(mo.method);
	mo.fit_intercept = cp->opts.fit_intercept;
	ops->store_classes(&cp->opts.fit, res, &mo);
	sscanf(KM_VERSION_STRING, "%hhu.%hhu.%hhu", &mo.writer_version[0],
		   &mo.writer_version[1], &mo.writer_version[2]);
	mo.n_classes = cp->k;
	mo.label_type = cp->run->query.text_label ? KM_LABEL_TEXT : KM_LABEL_FLOAT8;
	mo.multiclass = (km_multiclass) res->multiclass;
	mo.labels = cp->labels;
	mo.labels_bytes = cp->labels_bytes;
	mo.class_counts = (const uint64_t *) cp->counts;
	mo.solver = res->solver;
	mo.train_accuracy = res->train_accuracy;
	mo.train_log_loss = isfinite(res->train_log_loss) ? res->train_log_loss : 0.0;
	mo.cv = KM_CV_NONE;
	if (cp->sel != NULL)
	{
		/* recorded as the in-memory path records its selection */
		mo.n_candidates = (uint32) cp->sel->ncand;
		mo.cv = KM_CV_KFOLD;
		mo.folds = cp->opts.folds;
		mo.best = (uint32) cp->sel->best;
		mo.candidates = cp->sel->cand;
	}
	old = MemoryContextSwitchTo(ctx);
	out = km_model_to_bytea(&mo);
	MemoryContextSwitchTo(old);
	return out;
}

/* The passes' state over run's query, in tmp (made current). */
static ClassPasses *
passes_new(const NamedRun *run, bool all_rows, MemoryContext tmp)
{
	ClassPasses *cp = palloc0(sizeof(ClassPasses));

	cp->run = run;
	cp->cxt = tmp;
	cp->opts = run->opts;
	cp->all_rows = all_rows;
	cp->rows.cxt = tmp;
	cp->rows.thr = km_holdout_threshold(run->opts.test_fraction);
	cp->fold = -1;
	km_blas_setup();
	return cp;
}

/*
 * k-fold selection by passes, a route of the one grid loop
 * (km_grid_search), as pipeline_approx_classify.c's class_select: per gamma
 * its basis pass over the training rows and the Newton buffers
 * (route_gamma); per candidate and fold the Newton passes over the training
 * rows not in the fold, then a pass scoring the fold's rows by the
 * method's hold-out loss (route_score: km_primal_block_holdout, the mean
 * over folds and its deviation).  A fold without rows, or whose training
 * rows miss a class, or whose fit fails, makes the candidate NaN.  A row's
 * fold is its hash modulo the folds (pass_row_fold), not the stratified
 * rule of the in-memory path, so a named grid may pick another candidate
 * than the aggregate's on the same rows.  The held-out rows of the named
 * split stay out, as in every pass.
 */
static km_status
route_gamma(void *arg, int g, double gamma, km_error *err)
{
	ClassPasses *cp = arg;
	MemoryContext old;

	MemoryContextReset(cp->gcxt);
	old = MemoryContextSwitchTo(cp->gcxt);
	if (g > 0)
	{
		/* gamma 0's basis is basis_pass's */
		cp->opts.fit.kernel.gamma = gamma;
		cp->st = pass_basis_state_new(&cp->opts, cp->rows.d, &cp->st_grant);
		km_progress_stage("fit: basis pass over the training rows");
		run_pass(cp, PASS_BASIS);
		check_pass_rows("basis", cp->sel_n, "basis", fit_rows(cp), "training");
		pass_basis_finish(cp->st, cp->st_grant, &cp->basis);
		cp->st = NULL;
	}
	newton_setup(cp);
	MemoryContextSwitchTo(old);
	return KM_OK;
}

/* Whether fold f has rows and its training rows (the other folds) every class. */
static bool
fold_usable(const ClassPasses *cp, int f)
{
	if (cp->fold_n[f] == 0)
		return false;
	for (int64 l = 0; l < cp->nlab; l++)
		if (cp->fold_lab[(Size) f * KM_MAX_CLASSES + l] == cp->lab_count[l])
			return false;
	return true;
}

/* One fold's hold-out loss of the candidate's fit without it; NaN when it fails. */
static double
fold_loss(ClassPasses *cp, int f)
{
	km_class_fit_result res;

	cp->fold = f;
	if (!fold_usable(cp, f) ||
		newton_passes(cp, cp->sel_n - cp->fold_n[f], &res) != KM_OK)
		return NAN;
	cp->hsum = 0.0;
	cp->hcount = 0;
	cp->hbad = false;
	cp->rows.nblock = 0;
	cp->rows.block_first = 0;
	run_pass(cp, PASS_HOLDOUT);
	newton_block(cp);
	if (cp->hbad || cp->hcount == 0)
		return NAN;
	return cp->hsum / (double) cp->hcount;
}

/* One candidate's k-fold score, as class_candidate scores it. */
static km_status
route_score(void *arg, int index, km_candidate *c, km_error *err)
{
	ClassPasses *cp = arg;
	double		sum = 0.0;
	double		sumsq = 0.0;

	cp->opts.fit.lambda = c->lambda;
	cp->pp.lambda = c->lambda;
	for (int f = 0; f < cp->folds; f++)
	{
		double		loss = NAN;

		km_progress_stage("candidate (gamma %g, lambda %g), fold %d of %d",
						  c->gamma, c->lambda, f + 1, cp->folds);
		if (c->lambda > 0.0)
			loss = fold_loss(cp, f);
		cp->fold = -1;
		if (!isfinite(loss))
		{
			c->score = NAN;
			c->score_std = 0.0;
			return KM_OK;
		}
		sum += loss;
		sumsq += loss * loss;
	}
	c->score = sum / cp->folds;
	c->score_std = sqrt(fmax(sumsq / cp->folds - c->score * c->score, 0.0));
	return KM_OK;
}

static km_status
route_none(void *arg, int count, km_error *err)
{
	km_fail(err, KM_ERR_INACCURATE, "no candidate could be scored",
			"Every one of the %d candidates failed to fit on some fold, or a fold's training rows missed a class.",
			count);
	snprintf(err->hint, sizeof(err->hint), "%s", "Use fewer folds, or raise lambda.");
	return err->status;
}

/* The k-fold selection over the training rows: sel's candidates (in ctx) and winner. */
static void
classify_select(const NamedRun *run, MemoryContext ctx, ClassSelection *sel)
{
	MemoryContext tmp = AllocSetContextCreate(CurrentMemoryContext,
											  "kernel_ml classifier selection",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(tmp);
	ClassPasses *cp = passes_new(run, false, tmp);
	km_grid_route route = {.arg = cp, .gamma = route_gamma, .score = route_score,
	.none = route_none};
	km_error	err;
	double		gamma0;
	double		lambda0;
	int			ng;
	int			nl;

	cp->folds = run->opts.folds;
	cp->soft = true;
	cp->fold_n = palloc0(sizeof(int64) * cp->folds);
	cp->fold_lab = palloc0_array(uint64, (Size) cp->folds * KM_MAX_CLASSES);
	basis_pass(cp);
	cp->sel_n = fit_rows(cp);
	km_check_folds(cp->folds, cp->sel_n, cp->fold_n, KM_PASS_FOLD_RULE);
	cp->gcxt = AllocSetContextCreate(tmp, "kernel_ml classifier gamma", ALLOCSET_DEFAULT_SIZES);
	gamma0 = cp->opts.fit.kernel.gamma;
	lambda0 = cp->opts.fit.lambda;
	ng = cp->opts.gammas.n > 0 ? cp->opts.gammas.n : 1;
	nl = cp->opts.lambdas.n > 0 ? cp->opts.lambdas.n : 1;
	sel->ncand = ng * nl;
	sel->cand = MemoryContextAllocZero(ctx, sizeof(km_candidate) * sel->ncand);
	if (km_grid_search(cp->opts.gammas.n > 0 ? cp->opts.gammas.v : &gamma0, ng,
					   cp->opts.lambdas.n > 0 ? cp->opts.lambdas.v : &lambda0, nl,
					   &route, sel->cand, &sel->best, &err) != KM_OK)
	{
		km_method_fill_hint(run->opts.fit.method, &err);
		km_raise(&err);
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(tmp);
}

/*
 * Passes 1 and 2: the model of the training rows (or every usable row),
 * into ctx; sel: a selection's winner to fit and its candidates to record.
 */
static bytea *
classifier_passes(const NamedRun *run, bool all_rows, MemoryContext ctx,
				  int64 *rows, int *d, const ClassSelection *sel)
{
	MemoryContext tmp = AllocSetContextCreate(CurrentMemoryContext,
											  "kernel_ml classifier passes",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(tmp);
	ClassPasses *cp = passes_new(run, all_rows, tmp);
	km_class_fit_result res;
	bytea	   *model;

	cp->sel = sel;
	basis_pass(cp);
	newton_setup(cp);
	(void) newton_passes(cp, fit_rows(cp), &res);
	model = assemble_model(cp, &res, ctx);
	*rows = fit_rows(cp);
	*d = cp->rows.d;
	MemoryContextSwitchTo(old);
	MemoryContextDelete(tmp);
	return model;
}

void
passes_class_score(const NamedRun *run, Datum model, bool holdout_only,
				   ClassScores *holdout, ClassScores *train, int64 *skipped)
{
	ClassPasses cp;
	ClassScorer test_sc;
	ClassScorer train_sc;

	/* in line before the scan: no TOAST read while the query's role is in effect */
	model = PointerGetDatum(pg_detoast_datum_copy((struct varlena *) DatumGetPointer(model)));
	memset(&cp, 0, sizeof(cp));
	cp.run = run;
	cp.cxt = CurrentMemoryContext;
	cp.rows.cxt = CurrentMemoryContext;
	cp.opts = run->opts;
	cp.rows.thr = km_holdout_threshold(run->opts.test_fraction);
	cp.rows.d = -1;
	cp.rows.width = model_features(model);	/* sizes the cursor's batch */
	km_progress_stage("score: pass over the %s rows", holdout_only ? "held-out" : "usable");
	class_scorer_begin(&test_sc, model, holdout);
	cp.test_sc = &test_sc;
	if (!holdout_only)
	{
		class_scorer_begin(&train_sc, model, train);
		cp.train_sc = &train_sc;
	}
	run_pass(&cp, PASS_SCORE);
	class_scorer_end(&test_sc, holdout);
	if (!holdout_only)
	{
		class_scorer_end(&train_sc, train);
		*skipped = cp.rows.skipped;
	}
}

void
passes_classify_fit_and_score(NamedRun *run, MemoryContext work)
{
	int64		fit_n;
	int64		all_n;
	int			d;
	bytea	   *split_model;
	ClassSelection sel = {NULL, 0, 0};

	km_check_components_memory((uint32) run->opts.components, "kernel_model_train");
	/* a grid: k-fold selection by passes, then the winner's fit */
	if (km_options_selects(&run->opts))
		classify_select(run, work, &sel);
	split_model = classifier_passes(run, false, work, &fit_n, &d, sel.cand ? &sel : NULL);
	run->d = d;
	passes_class_score(run, PointerGetDatum(split_model), false, &run->test_class,
					   &run->train_class, &run->skipped);
	run->ntest = (int64) run->test_class.cm.n + run->test_class.unknown;
	run->ntrain = (int64) run->train_class.cm.n + run->train_class.unknown;
	run->rows = run->ntest + run->ntrain;
	check_pass_rows("basis", fit_n, "scoring", run->ntrain, "training");
	run->model = split_model;
	if (run->refit && run->ntest > 0)
	{
		run->model = classifier_passes(run, true, work, &all_n, &d, sel.cand ? &sel : NULL);
		check_pass_rows("scoring", run->rows, "refit", all_n, "usable");
	}
}
