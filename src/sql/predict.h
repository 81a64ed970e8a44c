/*
 * predict.h - scoring with a decoded model kept across rows (the cache:
 * src/pg/model_cache.h).
 */
#ifndef KM_PREDICT_H
#define KM_PREDICT_H

#include "postgres.h"

#include "fmgr.h"
#include "utils/array.h"

#include "model_cache.h"
#include "task.h"


/*
 * How a scorer by name finds its model: the deployed model of name and the
 * cache that decodes it, from a lookup cache kept at *slot
 * (catalog_predict_model in src/catalog, which the by-name entry points
 * pass down to the scorers here: this layer does not import the catalog).
 */
typedef Datum (*KmNamedModel) (FunctionCallInfo fcinfo, text *name, void **slot,
							   ModelCache **mc);


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
