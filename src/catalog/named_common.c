/*
 * named_common.c - what the files of one named training share
 * (named_common.h): the scores of a model on rows kept in memory or a row
 * at a time, a stored model's shape, and the errors of passes that read
 * different rows.
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/float.h"
#include "utils/memutils.h"

#include "classify.h"
#include "method.h"
#include "metrics.h"
#include "model.h"
#include "pgutil.h"
#include "predict.h"
#include "named_common.h"

/* The shape of a stored model (its header, checked). */
km_model_shape
model_stored_shape(Datum model)
{
	bytea	   *pm = (bytea *) pg_detoast_datum((struct varlena *) DatumGetPointer(model));
	km_model_shape shape;
	km_error	err;

	if (km_model_peek((const uint8 *) VARDATA_ANY(pm), VARSIZE_ANY_EXHDR(pm),
					  &shape, &err) != KM_OK)
		km_raise(&err);
	return shape;
}

/* The number of features of a stored model. */
int
model_features(Datum model)
{
	return (int) model_stored_shape(model).d;
}

/* The error measures of a model on the given rows. */
void
score_rows(Datum model, const RowSet *rs, const int64 *rows, int64 count,
		   km_metrics *out)
{
	MemoryContext tmp = AllocSetContextCreate(CurrentMemoryContext,
											  "kernel_ml scoring",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(tmp);
	ModelCache *mc = km_model_cache_create(tmp);
	int			d = rs->d;

	km_metrics_init(out);
	for (int64 i = 0; i < count; i++)
	{
		double		pred = km_model_cache_predict_row(mc, model,
													  rs->X + (Size) rows[i] * d, d);

		km_metrics_add(out, pred, rs->y[rows[i]]);
		if ((i & 1023) == 1023)
			CHECK_FOR_INTERRUPTS();
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(tmp);
}

/*
 * Classification scores a row at a time (ClassScorer, named_common.h): the
 * model's cache and buffers in a context of their own, the confusion matrix
 * and labels in the caller's.  out->classifier false (and nothing else) for
 * a regression model, whose rows are then ignored.
 */
void
class_scorer_begin(ClassScorer *sc, Datum model, ClassScores *out)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext old;
	const km_model *m;
	const km_method_ops *ops;
	const char *hint = NULL;

	memset(sc, 0, sizeof(*sc));
	memset(out, 0, sizeof(*out));
	out->auc = get_float8_nan();
	sc->out = out;
	sc->model = model;
	sc->tmp = AllocSetContextCreate(caller, "kernel_ml scoring", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(sc->tmp);
	sc->mc = km_model_cache_create(sc->tmp);
	m = km_model_cache_model(sc->mc, model);
	MemoryContextSwitchTo(old);
	if (m->n_classes < 2)		/* no CLASSES section: not a classifier's model */
		return;
	sc->m = m;
	out->classifier = true;
	out->k = m->n_classes;
	out->labels = MemoryContextAlloc(caller, m->labels_bytes);
	memcpy((char *) out->labels, m->labels, m->labels_bytes);
	out->labels_bytes = m->labels_bytes;
	ops = km_method_get(m->method);
	sc->link = KM_PROB_NONE;
	if (ops != NULL && ops->prob_link != NULL)
		sc->link = ops->prob_link(m->has_probability, m->multiclass, &hint);
	out->proba = sc->link != KM_PROB_NONE;
	km_class_metrics_init(&out->cm, out->k,
						  MemoryContextAllocZero(caller, sizeof(uint64) * out->k * out->k));
	sc->p = MemoryContextAlloc(sc->tmp, sizeof(double) * out->k);
	sc->pwork = MemoryContextAlloc(sc->tmp, sizeof(double) *
								   Max(1, km_classify_proba_work_doubles(out->k)));
}

void
class_scorer_add(ClassScorer *sc, const char *label, const double *x, int d)
{
	ClassScores *out = sc->out;
	MemoryContext old;
	int			truth;
	const double *f;
	uint32		pred;
	km_error	err;

	if (sc->m == NULL)
		return;
	truth = km_classes_find(out->labels, out->labels_bytes, out->k, label);
	if (truth < 0)
	{
		out->unknown++;
		return;
	}
	old = MemoryContextSwitchTo(sc->tmp);
	f = km_model_cache_decision(sc->mc, sc->model, x, d);
	pred = km_classify_decide(sc->m->multiclass, out->k, f);
	if (out->proba &&
		km_classify_proba(sc->link, sc->m->multiclass, out->k, f, sc->m->prob_A,
						  sc->m->prob_B, sc->p, sc->pwork, &err) != KM_OK)
		km_raise(&err);
	km_class_metrics_add(&out->cm, (uint32) truth, pred, out->proba ? sc->p : NULL);
	if (out->k == 2)
	{
		/* the AUC's scores: 9 bytes a row */
		if (sc->nb == sc->cap)
		{
			sc->cap = Max(1024, sc->cap * 2);
			sc->scores = sc->scores == NULL ?
				palloc_extended(mul_size(sc->cap, sizeof(double)), MCXT_ALLOC_HUGE) :
				repalloc_huge(sc->scores, mul_size(sc->cap, sizeof(double)));
			sc->positive = sc->positive == NULL ?
				palloc_extended(sc->cap, MCXT_ALLOC_HUGE) :
				repalloc_huge(sc->positive, sc->cap);
		}
		sc->scores[sc->nb] = out->proba ? sc->p[1] : f[0];
		sc->positive[sc->nb] = truth == 1;
		sc->nb++;
	}
	MemoryContextSwitchTo(old);
}

void
class_scorer_end(ClassScorer *sc, ClassScores *out)
{
	if (out->classifier && out->k == 2 && sc->nb > 0)
	{
		MemoryContext old = MemoryContextSwitchTo(sc->tmp);
		void	   *work = palloc_extended(Max(1, km_auc_work_bytes(sc->nb)), MCXT_ALLOC_HUGE);

		out->auc = km_auc(sc->scores, sc->positive, sc->nb, work);
		MemoryContextSwitchTo(old);
	}
	MemoryContextDelete(sc->tmp);
}

/* The classification scores of a model on the given rows of a classifier's run. */
void
score_class_rows(Datum model, const NamedRun *run, const int64 *rows,
				 int64 count, ClassScores *out)
{
	ClassScorer sc;
	const RowSet *rs = run->rs;

	class_scorer_begin(&sc, model, out);
	for (int64 i = 0; i < count; i++)
	{
		class_scorer_add(&sc, run->row_label[rows[i]], rs->X + (Size) rows[i] * rs->d, rs->d);
		if ((i & 1023) == 1023)
			CHECK_FOR_INTERRUPTS();
	}
	class_scorer_end(&sc, out);
}

/* Why a fit pass read no row: no usable row at all, or none left to train on. */
void
passes_no_rows(const NamedRun *run, int64 seen, int64 usable)
{
	if (usable == 0)
		ereport(ERROR,
				(errcode(ERRCODE_NO_DATA_FOUND),
				 errmsg("training query returned no usable rows"),
				 seen == 0 ?
				 errdetail("The query returned no rows.") :
				 errdetail("All %lld rows have a null feature array or target.",
						   (long long) seen),
				 errhint("Check the query's WHERE clause and the NULLs of its columns: it must return rows with features and a target.")));
	ereport(ERROR,
			(errcode(ERRCODE_NO_DATA_FOUND),
			 errmsg("no training rows left after the hold-out split"),
			 errdetail("The per-row hold-out split (test_fraction %g, seed %lld) took all %lld usable rows.",
					   run->opts.test_fraction, (long long) run->opts.seed, (long long) usable),
			 errhint("Lower \"test_fraction\" or train on more rows.")));
}

/*
 * The passes over a query must see the same rows: an error, before anything
 * is stored, when two passes counted different numbers of rows on the same
 * side of the split.
 */
void
check_pass_rows(const char *pass_a, int64 rows_a, const char *pass_b, int64 rows_b,
				const char *side)
{
	if (rows_a == rows_b)
		return;
	passes_rows_changed(psprintf("The %s pass read %lld %s rows, the %s pass %lld; an approximate model reads the query once per pass (counting, basis, statistics or Newton steps, scoring, refit), and every pass must see the same rows.",
								 pass_a, (long long) rows_a, side, pass_b, (long long) rows_b));
}

void
passes_rows_changed(const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("training query returned different rows on different passes"),
			 errdetail("%s", detail),
			 errhint("Make the query repeatable: no random(), nextval() or other volatile filter; for a sample, use TABLESAMPLE ... REPEATABLE (seed).")));
}

/*
 * The one tie rule of "if_better" (named_common.h): better means better
 * by more than a relative and absolute tolerance, for every metric.
 */
bool
score_better(double candidate, double incumbent, bool lower_is_better)
{
	double		scale = Max(1.0, Max(fabs(candidate), fabs(incumbent)));
	double		gain = lower_is_better ? incumbent - candidate : candidate - incumbent;

	return gain > SCORE_TIE * scale;
}
