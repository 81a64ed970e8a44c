/*
 * test_metrics.c - the error measures against their definitions.
 */
#include <math.h>

#include "metrics.h"
#include "unit.h"

/* RMSE, MAE and R^2 of a small set, computed by hand. */
void
test_metrics_definitions(void)
{
	const double pred[4] = {1.5, 2.0, 2.0, 5.0};
	const double y[4] = {1.0, 2.0, 3.0, 4.0};
	km_metrics	m;

	km_metrics_init(&m);
	CHECK(isnan(km_metrics_rmse(&m)) && isnan(km_metrics_mae(&m)) &&
		  isnan(km_metrics_r2(&m)), "no rows: NaN");
	for (int i = 0; i < 4; i++)
		km_metrics_add(&m, pred[i], y[i]);
	/* errors 0.5, 0, -1, 1: sse 2.25, sae 2.5; targets' sst 5 */
	CHECK(m.n == 4, "n %zu", m.n);
	CHECK_CLOSE(km_metrics_mse(&m), 2.25 / 4, 1e-15);
	CHECK_CLOSE(km_metrics_rmse(&m), sqrt(2.25 / 4), 1e-15);
	CHECK_CLOSE(km_metrics_mae(&m), 2.5 / 4, 1e-15);
	CHECK_CLOSE(km_metrics_r2(&m), 1.0 - 2.25 / 5.0, 1e-15);

	/* constant targets: R^2 undefined, the errors still are */
	km_metrics_init(&m);
	km_metrics_add(&m, 1.0, 2.0);
	km_metrics_add(&m, 3.0, 2.0);
	CHECK(isnan(km_metrics_r2(&m)), "constant targets: r2 NaN");
	CHECK_CLOSE(km_metrics_rmse(&m), 1.0, 1e-15);
}

/*
 * Combining accumulators over disjoint parts gives the whole's measures;
 * the targets' spread around a large offset keeps its digits (one pass).
 */
void
test_metrics_combine(void)
{
	km_metrics	whole;
	km_metrics	part[3];
	double		sse = 0.0;
	double		sst = 0.0;
	double		mean = 0.0;
	const int	n = 1000;

	km_metrics_init(&whole);
	for (int k = 0; k < 3; k++)
		km_metrics_init(&part[k]);
	for (int i = 0; i < n; i++)
		mean += 1e9 + sin(i);
	mean /= n;
	for (int i = 0; i < n; i++)
	{
		double		y = 1e9 + sin(i);
		double		p = y + 0.01 * cos(3.0 * i);

		km_metrics_add(&whole, p, y);
		km_metrics_add(&part[i % 3], p, y);
		sse += (p - y) * (p - y);
		sst += (y - mean) * (y - mean);
	}
	km_metrics_combine(&part[0], &part[1]);
	km_metrics_combine(&part[0], &part[2]);
	CHECK(part[0].n == (size_t) n, "n %zu", part[0].n);
	CHECK_CLOSE(km_metrics_r2(&whole), 1.0 - sse / sst, 1e-9);
	CHECK_CLOSE(km_metrics_r2(&part[0]), km_metrics_r2(&whole), 1e-9);
	CHECK_CLOSE(km_metrics_rmse(&part[0]), km_metrics_rmse(&whole), 1e-12);
	CHECK_CLOSE(km_metrics_mae(&part[0]), km_metrics_mae(&whole), 1e-12);
	/* combining an empty one changes nothing; into an empty one copies */
	km_metrics_init(&part[1]);
	km_metrics_combine(&part[0], &part[1]);
	km_metrics_combine(&part[1], &part[0]);
	CHECK(part[1].n == (size_t) n && part[1].yss == part[0].yss, "empty combine");
}

/*
 * Per-class precision, recall and F1 as scikit-learn's
 * precision_recall_fscore_support(y_true, y_pred, labels=[0, 1, 2]) on
 * y_true = [0, 0, 1, 2, 2, 2], y_pred = [0, 1, 1, 1, 2, 0]: precision
 * [1/2, 1/3, 1], recall [1/2, 1, 1/3], F1 [1/2, 1/2, 1/2]; a class never
 * predicted nor present gives 0 (zero_division).
 */
void
test_metrics_per_class(void)
{
	uint64_t	conf[16];
	km_class_metrics m;
	const uint32_t truth[6] = {0, 0, 1, 2, 2, 2};
	const uint32_t pred[6] = {0, 1, 1, 1, 2, 0};
	const double precision[3] = {0.5, 1.0 / 3.0, 1.0};
	const double recall[3] = {0.5, 1.0, 1.0 / 3.0};
	km_class_scores s;

	km_class_metrics_init(&m, 4, conf);
	for (int i = 0; i < 6; i++)
		km_class_metrics_add(&m, truth[i], pred[i], NULL);
	for (uint32_t c = 0; c < 3; c++)
	{
		s = km_class_metrics_class(&m, c);
		CHECK_CLOSE(s.precision, precision[c], 1e-15);
		CHECK_CLOSE(s.recall, recall[c], 1e-15);
		CHECK_CLOSE(s.f1, 0.5, 1e-15);
	}
	CHECK(km_class_metrics_class(&m, 2).support == 3, "support");
	s = km_class_metrics_class(&m, 3);
	CHECK(s.precision == 0.0 && s.recall == 0.0 && s.f1 == 0.0 && s.support == 0,
		  "an absent class");
}
