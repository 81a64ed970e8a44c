/*
 * regression.c - the regression task (task.h): a numeric target, centred
 * before the fit; one output, kernel_predict's value; scored by MSE.
 * Its look at the target: km_regression_label_like (task.h).
 * Core: no PostgreSQL header.
 */
#include <math.h>
#include <stdint.h>

#include "task.h"

const km_task_ops km_task_regression = {
	.id = KM_TASK_REGRESSION,
	.name = "regression", .classes = false,
	.score_metric = KM_SCORE_MSE, .target = true,
	.verbs = KM_VERB_PREDICT,
};

uint32_t
km_regression_label_like(const double *y, size_t n, double *lo, double *hi)
{
	double		v[KM_LABEL_LIKE_VALUES];
	uint32_t	k = 0;

	if (n < 2)
		return 0;
	/* whole numbers of an int column (int4's range), e.g. 0/1 or 1/2 */
	for (size_t i = 0; i < n; i++)
	{
		uint32_t	j;

		if (y[i] != floor(y[i]) || fabs(y[i]) > INT32_MAX)
			return 0;
		for (j = 0; j < k && v[j] != y[i]; j++)
			;
		if (j < k)
			continue;
		if (k == KM_LABEL_LIKE_VALUES)
			return 0;			/* too many values for class labels */
		v[k++] = y[i];
	}
	if (k < 2 || (k > 2 && n < 2 * (size_t) k))
		return 0;
	*lo = *hi = v[0];
	for (uint32_t j = 1; j < k; j++)
	{
		*lo = v[j] < *lo ? v[j] : *lo;
		*hi = v[j] > *hi ? v[j] : *hi;
	}
	return k;
}
