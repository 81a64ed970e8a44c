/*
 * model_cache.h - decoded models kept across rows (model_cache.c): a
 * PostgreSQL identity rule (a TOAST pointer, a constant, bytes compared),
 * so it lives in src/pg, where the SQL verbs and the catalog's by-name
 * scorers both find it.
 */
#ifndef KM_MODEL_CACHE_H
#define KM_MODEL_CACHE_H

#include "postgres.h"

#include "fmgr.h"
#include "utils/array.h"

#include "task.h"

/*
 * Decoded models and their scratch space, kept for one query (or as long as
 * the function call site lives): a few of them, the least recently used
 * evicted beyond a count and a size (model_cache.c), so that rows of several
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

#endif							/* KM_MODEL_CACHE_H */
