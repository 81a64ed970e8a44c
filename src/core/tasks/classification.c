/*
 * classification.c - the classification task (task.h): class labels
 * (text or numbers) as targets, as many outputs as the method's
 * multi-class scheme, its CLASSES, PROBABILITY and METRICS sections;
 * kernel_predict's decision value, kernel_predict_class and _proba;
 * scored by accuracy.  Its class table from the rows' labels (below);
 * its weights and decisions: classify.c.
 * Core: no PostgreSQL header.
 */
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "task.h"

const km_task_ops km_task_classification = {
	.id = KM_TASK_CLASSIFICATION,
	.name = "classification", .classes = true,
	.score_metric = KM_SCORE_ACCURACY, .target = true,
	.verbs = KM_VERB_PREDICT | KM_VERB_CLASS,
};

size_t
km_classes_text_work_bytes(uint32_t m)
{
	size_t		sort = km_classes_sort_work_bytes(m);

	/* the sort's keys (pointers first: aligned), then order and class_of */
	return sort + 2 * sizeof(uint32_t) * (size_t) (m > 0 ? m : 1);
}

void
km_classes_from_text(const char *const *dict, uint32_t m, const uint32_t *id,
					 size_t n, char *labels, uint32_t *labels_bytes,
					 uint32_t *cls, void *work)
{
	char	   *w = work;
	uint32_t   *order = (uint32_t *) (w + km_classes_sort_work_bytes(m));
	uint32_t   *class_of = order + (m > 0 ? m : 1);
	size_t		len = 0;

	km_classes_sort_text(dict, m, order, class_of, work);
	for (uint32_t c = 0; c < m; c++)
	{
		size_t		b = strlen(dict[order[c]]) + 1;

		memcpy(labels + len, dict[order[c]], b);
		len += b;
	}
	*labels_bytes = (uint32_t) len;
	for (size_t i = 0; i < n; i++)
		cls[i] = class_of[id[i]];
}

uint32_t
km_classes_from_float8(const double *y, size_t n, double *v, uint32_t *cls)
{
	size_t		m = 0;

	for (size_t i = 0; i < n; i++)
		v[i] = y[i] == 0.0 ? 0.0 : y[i];
	qsort(v, n, sizeof(double), km_cmp_double);
	for (size_t i = 0; i < n; i++)
	{
		if (m > 0 && v[m - 1] == v[i])
			continue;
		if (m >= KM_MAX_CLASSES)
			return KM_MAX_CLASSES + 1;
		v[m++] = v[i];
	}
	for (size_t i = 0; i < n; i++)
	{
		double		yi = y[i] == 0.0 ? 0.0 : y[i];
		double	   *hit = bsearch(&yi, v, m, sizeof(double), km_cmp_double);

		cls[i] = (uint32_t) (hit - v);
	}
	return (uint32_t) m;
}

void
km_classes_count(const uint32_t *cls, size_t n, uint32_t k, uint64_t *counts)
{
	memset(counts, 0, sizeof(uint64_t) * k);
	for (size_t i = 0; i < n; i++)
		counts[cls[i]]++;
}
