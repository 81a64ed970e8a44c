/*
 * passes_classify.c - the scoring pass of a named approximate classifier
 * (its training is the learner's over the cursor host, passes.c): one
 * scan of the stored query (host_cursor.h: as run_as, security-restricted,
 * search_path pinned, batches bounded), each row split as
 * _kernel_ml_holdout splits it (split.h's km_row_held_out over the
 * features and the label: a float8 label's value, a text label's
 * hash_bytes) and scored on its side (named_common.h's ClassScorer).
 */
#include "postgres.h"

#include "access/detoast.h"
#include "common/hashfn.h"
#include "utils/builtins.h"
#include "utils/float.h"

#include "pgprogress.h"
#include "named_common.h"
#include "host_cursor.h"
#include "passes_classify.h"

/* One scoring pass: the rows, and the scorer of each side. */
typedef struct ScorePass
{
	const NamedRun *run;
	PassRows	rows;
	ClassScorer *train_sc;		/* NULL: held-out rows only */
	ClassScorer *test_sc;
} ScorePass;

/* A row's label as text (float8 labels as the model stores them). */
static const char *
label_text(const ScorePass *sp, Datum y)
{
	if (sp->run->query.text_label)
		return TextDatumGetCString(y);
	return float8out_internal(DatumGetFloat8(y) == 0.0 ? 0.0 : DatumGetFloat8(y));
}

/* The value a row's label is hashed by for the split (host_cursor.c's). */
static double
label_key(const ScorePass *sp, Datum y)
{
	if (sp->run->query.text_label)
	{
		text	   *t = DatumGetTextPP(y);

		return (double) hash_bytes((const unsigned char *) VARDATA_ANY(t),
								   (int) VARSIZE_ANY_EXHDR(t));
	}
	return DatumGetFloat8(y);
}

/* One batch of the query's rows (f float8[], y), split, into the scorers. */
static void
score_batch(void *arg, SPITupleTable *tt, uint64 n)
{
	ScorePass  *sp = arg;

	for (uint64 i = 0; i < n; i++)
	{
		Datum		y;
		ClassScorer *sc;

		if (!pass_row_read(&sp->rows, tt, i, false, &y))
			continue;
		if (!sp->run->query.text_label)
			pass_row_check_target(&sp->rows, DatumGetFloat8(y));
		sc = pass_row_held(&sp->rows, label_key(sp, y), sp->run->opts.seed) ?
			sp->test_sc : sp->train_sc;
		if (sc != NULL)
			class_scorer_add(sc, label_text(sp, y), sp->rows.x, sp->rows.d);
	}
}

void
passes_class_score(const NamedRun *run, Datum model, bool holdout_only,
				   ClassScores *holdout, ClassScores *train, int64 *skipped)
{
	ScorePass	sp;
	ClassScorer test_sc;
	ClassScorer train_sc;

	/* in line before the scan: no TOAST read while the query's role is in effect */
	model = PointerGetDatum(pg_detoast_datum_copy((struct varlena *) DatumGetPointer(model)));
	memset(&sp, 0, sizeof(sp));
	sp.run = run;
	sp.rows.cxt = CurrentMemoryContext;
	sp.rows.thr = km_holdout_threshold(run->opts.test_fraction);
	sp.rows.d = -1;
	sp.rows.width = model_features(model);	/* sizes the cursor's batch */
	km_progress_stage("score: pass over the %s rows", holdout_only ? "held-out" : "usable");
	class_scorer_begin(&test_sc, model, holdout);
	sp.test_sc = &test_sc;
	if (!holdout_only)
	{
		class_scorer_begin(&train_sc, model, train);
		sp.train_sc = &train_sc;
	}
	pass_rows_scan(&run->query, &sp.rows, score_batch, &sp);
	class_scorer_end(&test_sc, holdout);
	if (!holdout_only)
	{
		class_scorer_end(&train_sc, train);
		*skipped = sp.rows.skipped;
	}
}
