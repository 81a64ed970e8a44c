/*
 * predict.h - scoring with a decoded model kept across rows.
 */
#ifndef KM_PREDICT_H
#define KM_PREDICT_H

#include "postgres.h"

#include "fmgr.h"
#include "utils/array.h"

#include "task.h"

/*
 * Decoded models and their scratch space, kept for one query (or as long as
 * the function call site lives): a few of them, the least recently used
 * evicted beyond a count and a size (predict.c), so that rows of several
 * models in any order are scored without decoding a model per row.
 */
typedef struct ModelCache ModelCache;

/* A cache that lives in mcxt (a function's fn_mcxt). */
ModelCache *km_model_cache_create(MemoryContext mcxt);

/*
 * A cache for the model argument (argument 0) of a function call: like
 * km_model_cache_create(flinfo->fn_mcxt), and it knows whether that argument
 * is a constant of the expression (then the model is decoded once).
 */
ModelCache *km_model_cache_for_call(FmgrInfo *flinfo);

/*
 * Score features with the model in the bytea datum; the model is decoded
 * and validated only when the datum holds a model the cache does not hold.
 */
double		km_model_cache_predict(ModelCache *mc, Datum model, ArrayType *features);

/* The same for a row of d features already in C (named-model training). */
double		km_model_cache_predict_row(ModelCache *mc, Datum model,
									   const double *x, int d);

/*
 * The decoded model in the datum (valid until the next call with another
 * model), for callers that need more than one value: its labels, its
 * outputs.
 */
struct km_model;
const struct km_model *km_model_cache_model(ModelCache *mc, Datum model);

/*
 * The scorer of the decoded model in the datum (score.h), for callers that
 * score blocks of rows (km_scorer_block); valid as km_model_cache_model's
 * result.
 */
struct km_scorer;
struct km_scorer *km_model_cache_scorer(ModelCache *mc, Datum model);

/*
 * How a scorer by name finds its model: the deployed model of name and the
 * cache that decodes it, from a lookup cache kept at *slot
 * (catalog_predict_model in src/catalog, which the by-name entry points
 * pass down to the scorers here: this layer does not import the catalog).
 */
typedef Datum (*KmNamedModel) (FunctionCallInfo fcinfo, text *name, void **slot,
							   ModelCache **mc);

/*
 * The q (km_model.n_outputs) decision values of a row of d finite raw
 * features; the array is the cache's, valid until its next call.
 */
const double *km_model_cache_decision(ModelCache *mc, Datum model,
									  const double *x, int d);

/*
 * The same for a float8[] row (checked: its length, no NaN or infinity),
 * with the model km_model_cache_model last returned.
 */
const double *km_model_cache_decision_array(ModelCache *mc, ArrayType *features);

/*
 * The probabilities of one row of a classifier, sized for k classes (in the
 * call's fn_mcxt), kept by the scoring call sites of classify.c and the
 * by-name ones of catalog_predict.c.
 */
typedef struct KmProbBuffers
{
	uint32		k;				/* classes p and pwork are sized for */
	double	   *p;				/* k */
	double	   *pwork;
} KmProbBuffers;

/*
 * Raise (42809, naming fname) when m's outputs are coordinates (a task
 * without kernel_predict's verb, task.h: kernel PCA), with a hint to
 * kernel_transform.
 */
void		km_refuse_embedding(const struct km_model *m, const char *fname);

/*
 * Raise (42809, naming fname) unless m's task answers verb (task.h
 * km_task_check_verb: its message, detail and hint).
 */
void		km_model_check_verb(const struct km_model *m, km_verb verb, const char *fname);

/* The index of label among m's classes, or an error (classify.c). */
int			km_class_of_label(const struct km_model *m, const char *label, const char *by);

/*
 * Raise (42809, naming fname) unless m is a classifier of two or more
 * classes; grow pb in mcxt to m's classes.
 */
void		km_classifier_prepare(const struct km_model *m, const char *fname,
								  MemoryContext mcxt, KmProbBuffers *pb);

/*
 * The class kernel_predict_class names for a model whose task names the
 * sign of its one output (task.h sign_labels: novelty's "inlier" above 0,
 * "outlier" at or below), from its decision value f; NULL for any other
 * model (a classifier's classes are its own).
 */
const char *km_sign_label(const struct km_model *m, double f);

#endif							/* KM_PREDICT_H */
