/*
 * named_common.h - what the files of one named training share (internal to
 * src/catalog), below all of them: the run and its scores (types), the
 * scores of a model on rows kept in memory or a row at a time, a stored
 * model's shape, and the errors of passes that read different rows
 * (named_common.c).  What a named training does that depends on its task
 * is the run's task row (named_task.h).  The run
 * is named_train.c's, the SQL passes passes.c's and passes_classify.c's,
 * the deploy policy deploy.c's (issue 23: no import circle between them).
 */
#ifndef KM_NAMED_COMMON_H
#define KM_NAMED_COMMON_H

#include "postgres.h"

#include "utils/jsonb.h"

#include "metrics.h"
#include "model.h"
#include "options.h"
#include "rowset.h"
#include "catalog.h"
#include "catalog_query.h"

struct NamedTask;

/*
 * Classification scores of a model on some rows: the counts of
 * km_class_metrics over the model's classes, log-loss when the model gives
 * probabilities, AUC for two classes.
 */
typedef struct ClassScores
{
	bool		classifier;		/* the model is a classifier */
	uint32		k;
	const char *labels;			/* the model's k labels, in class order */
	uint32		labels_bytes;
	bool		proba;			/* the model gives probabilities */
	km_class_metrics cm;		/* its confusion in the caller's context */
	double		auc;			/* binary: of p(classes[1]), else of f; NaN otherwise */
	int64		unknown;		/* rows whose label is not a class of the model */
} ClassScores;

/* One named training: its rows, the split, the model kept and its scores. */
typedef struct NamedRun
{
	km_options	opts;
	bool		refit;			/* refitted on every row after scoring */
	int32		keep;			/* retention: versions kept, 0 all */
	char	   *rows_digest;	/* of the rows (in memory only), NULL if none */
	const struct NamedTask *task;	/* its task's steps (named_task.h) */
	const char *fn;				/* the SQL function it runs for, in messages */
	Jsonb	   *optjson;		/* the options without "refit" */
	bool		passes;			/* approximate regression: SQL passes, no rs */
	CatalogQuery query;			/* passes: the stored query */
	const char *schema;			/* passes: the extension's schema, quoted */
	int64		rows;			/* usable rows (both sides of the split) */
	int64		skipped;		/* rows with a NULL feature array or target */
	int			d;				/* features */
	RowSet	   *rs;				/* in memory: the rows */
	const char **row_label;		/* classification: each row's label as text */
	int64	   *order;			/* held-out rows first, then training rows */
	int64		ntest;
	int64		ntrain;
	bytea	   *model;			/* the model to store */
	km_metrics	train_scores;	/* of the model fitted on the training rows */
	km_metrics	test_scores;	/* of the same, on the held-out rows */
	ClassScores train_class;	/* classification: the same as classification scores */
	ClassScores test_class;
} NamedRun;

/* Whether the new version is deployed, and why. */
typedef struct Decision
{
	bool		deploy;
	const char *reason;
	Deployed	prev;			/* the deployed version before this one */
	km_metrics	prev_scores;	/* its scores on the held-out rows, if compared */
	ClassScores prev_class;		/* classification: the same */
	const char *criterion;		/* classification: "log_loss" or "accuracy", if compared */
} Decision;

/*
 * The one rule of "if_better" for every metric and task (issue 29, point 9):
 * a new hold-out score is better than the deployed version's only by more
 * than rounding, |new - old| > SCORE_TIE * max(1, |new|, |old|); closer is
 * a tie, and a tie keeps the deployed version.  Summation order alone (a
 * parallel plan, the rows in another order, an option changed in its last
 * bit) moves a score by far less.
 */
#define SCORE_TIE 1e-9

/* Whether candidate beats incumbent by more than SCORE_TIE (see above). */
bool		score_better(double candidate, double incumbent, bool lower_is_better);

/*
 * Classification scores a row at a time (begin, add each
 * row's label and features, end: the AUC), and the scores of a model on
 * rows kept in memory.
 */
typedef struct ClassScorer
{
	ClassScores *out;
	Datum		model;
	MemoryContext tmp;			/* the cache, buffers and AUC scores */
	struct ModelCache *mc;
	const struct km_model *m;	/* NULL: not a classifier */
	int			link;			/* a km_prob_link */
	double	   *p;
	double	   *pwork;
	double	   *scores;			/* binary: each row's score for the AUC */
	bool	   *positive;
	size_t		nb;
	size_t		cap;
} ClassScorer;

void		class_scorer_begin(ClassScorer *sc, Datum model, ClassScores *out);
void		class_scorer_add(ClassScorer *sc, const char *label, const double *x, int d);
void		class_scorer_end(ClassScorer *sc, ClassScores *out);

void		score_rows(Datum model, const RowSet *rs, const int64 *rows, int64 count,
					   km_metrics *out);
void		score_class_rows(Datum model, const NamedRun *run, const int64 *rows,
							 int64 count, ClassScores *out);

/* A stored model's shape (its header, checked), and its number of features. */
km_model_shape model_stored_shape(Datum model);
int			model_features(Datum model);

/* The errors of SQL passes (passes.c, passes_classify.c) */
void		passes_no_rows(const NamedRun *run, int64 seen, int64 usable) pg_attribute_noreturn();
void		passes_rows_changed(const char *detail) pg_attribute_noreturn();
void		check_pass_rows(const char *pass_a, int64 rows_a, const char *pass_b,
							int64 rows_b, const char *side);

#endif							/* KM_NAMED_COMMON_H */
