/*
 * passes_classify.c - the scoring of a named approximate classifier (its
 * training is the learner's over the aggregate host, passes.c): the rows
 * counted (their labels, the rows with a null) in one aggregate
 * statement, then the scoring passes (learn/score_pass.h: the confusion
 * counts, the log-loss and the exact AUC of each side of the split) as
 * statements over the pass aggregate (host_agg.h), so that parallel
 * workers and Citus shards score where the rows are.  Each row is split
 * as _kernel_ml_holdout splits it (split.h's km_row_held_out over the
 * features and the label: a float8 label's value, a text label's
 * hash_bytes).
 */
#include "postgres.h"

#include "access/detoast.h"
#include "utils/float.h"
#include "utils/memutils.h"

#include "classify.h"
#include "host_agg.h"
#include "host_cursor.h"
#include "learn/score_pass.h"
#include "pgprogress.h"
#include "pgutil.h"
#include "named_common.h"
#include "passes_classify.h"
#include "train_rows.h"

/* A side's scores from the passes into out (begun by class_scorer_begin). */
static void
side_out(const km_class_side_scores *s, ClassScores *out)
{
	out->cm = s->cm;
	out->unknown = (int64) s->unknown;
	if (out->k == 2)
		out->auc = s->auc;
}

void
passes_class_score(const NamedRun *run, Datum model, bool holdout_only,
				   ClassScores *holdout, ClassScores *train, int64 *skipped)
{
	MemoryContext tmp;
	MemoryContext old;
	ClassScorer sc;
	CursorHost	h;
	AggHost		ah;
	km_host		host;
	km_train_env env;
	km_class_side_scores held_s;
	km_class_side_scores train_s;
	uint32	   *class_of;
	bytea	   *mb;
	int			passes;
	km_error	err;

	/* in line before the scan: no TOAST read while the query's role is in effect */
	mb = (bytea *) pg_detoast_datum_copy((struct varlena *) DatumGetPointer(model));
	model = PointerGetDatum(mb);
	/* the model's labels, classes and probabilities (the scorer itself is the pass's) */
	class_scorer_begin(&sc, model, holdout);
	class_scorer_end(&sc, holdout);
	if (!holdout_only)
	{
		class_scorer_begin(&sc, model, train);
		class_scorer_end(&sc, train);
		*skipped = 0;
	}
	if (!holdout->classifier)
		return;					/* a regression model: its rows are not scored */
	tmp = AllocSetContextCreate(CurrentMemoryContext, "kernel_ml scoring passes",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(tmp);
	km_progress_stage("score: counting the usable rows");
	agg_host_count(&h, &run->query, run->schema, model_features(model),
				   run->query.text_label ? CURSOR_TEXT_LABELS : CURSOR_FLOAT8_LABELS,
				   true, run->opts.seed, run->opts.test_fraction, 0, tmp);
	if (!holdout_only)
		*skipped = h.skipped;
	/* each label met: the model's class, or k for one it does not know */
	class_of = palloc(sizeof(uint32) * Max(1, h.nlab));
	for (int l = 0; l < h.nlab; l++)
	{
		const char *label = run->query.text_label ? h.lab_text[l] :
			float8out_internal(h.lab_value[l]);
		int			c = km_classes_find(holdout->labels, holdout->labels_bytes,
										holdout->k, label);

		class_of[l] = c < 0 ? holdout->k : (uint32) c;
	}
	h.class_of = class_of;
	if (h.rows == 0)
	{
		MemoryContextSwitchTo(old);
		MemoryContextDelete(tmp);
		return;
	}
	host = agg_host(&ah, &h, run->schema);
	ah.rules.sides = true;
	km_train_env_palloc(&env);
	km_blas_setup_scoring();
	held_s.cm = holdout->cm;
	if (!holdout_only)
		train_s.cm = train->cm;
	km_progress_stage("score: passes over the %s rows", holdout_only ? "held-out" : "usable");
	if (km_class_score(&host, (const uint8_t *) VARDATA_ANY(mb), VARSIZE_ANY_EXHDR(mb),
					   &held_s, holdout_only ? NULL : &train_s, &env, &passes, &err) != KM_OK)
		km_raise(&err);
	side_out(&held_s, holdout);
	if (!holdout_only)
		side_out(&train_s, train);
	elog(DEBUG1, "kernel_ml scoring: %d passes", passes);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(tmp);
}
