/*
 * test_classify.c - class order, class weights, decision rules,
 * probabilities and the classification metrics against their definitions.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "metrics.h"
#include "options_core.h"
#include "unit.h"

/* Text labels sort by bytes (strcmp), float8 labels by value. */
void
test_classify_class_order(void)
{
	const char *labels[5] = {"yes", "no", "B", "\xc3\xa4pfel", "a b"};
	const double values[4] = {10.0, -1.5, 2.0, 0.0};
	uint32_t	order[5];
	uint32_t	class_of[5];
	char		work[256];
	const char	packed[] = "B\0a b\0no\0yes\0\xc3\xa4pfel";

	km_classes_sort_text(labels, 5, order, class_of, work);
	/* "B" (0x42) < "a b" (0x61) < "no" < "yes" < "\xc3..." */
	CHECK(order[0] == 2 && order[1] == 4 && order[2] == 1 && order[3] == 0 &&
		  order[4] == 3, "text order %u %u %u %u %u", order[0], order[1],
		  order[2], order[3], order[4]);
	CHECK(class_of[0] == 3 && class_of[3] == 4, "class_of");
	km_classes_sort_float8(values, 4, order, class_of, work);
	CHECK(order[0] == 1 && order[1] == 3 && order[2] == 2 && order[3] == 0,
		  "numeric order");

	CHECK(km_classes_find(packed, sizeof(packed), 5, "no") == 2, "find no");
	CHECK(km_classes_find(packed, sizeof(packed), 5, "\xc3\xa4pfel") == 4, "find unicode");
	CHECK(km_classes_find(packed, sizeof(packed), 5, "maybe") == -1, "unseen");
	CHECK(strcmp(km_classes_label(packed, sizeof(packed), 5, 1), "a b") == 0, "label 1");
	CHECK(km_classes_label(packed, sizeof(packed), 5, 5) == NULL, "label out of range");
	CHECK(km_classes_label(packed, 3, 5, 2) == NULL, "short table");
}

/*
 * The classification task's class table from the rows' labels: text from
 * a dictionary (class order by bytes, cls by row, labels packed in class
 * order); float8 by value with -0 as 0, one class past the limit refused.
 */
void
test_classify_class_table(void)
{
	const char *dict[3] = {"yes", "no", "B"};
	const uint32_t id[6] = {0, 1, 0, 2, 1, 0};
	const double y[6] = {2.5, -0.0, 7.0, 0.0, 2.5, -3.0};
	char		labels[16];
	uint32_t	labels_bytes = 0;
	uint32_t	cls[6];
	uint64_t	counts[4];
	double		v[KM_MAX_CLASSES + 2];
	double	   *many = malloc(sizeof(double) * (KM_MAX_CLASSES + 1));
	uint32_t   *many_cls = malloc(sizeof(uint32_t) * (KM_MAX_CLASSES + 1));
	char	   *work = malloc(km_classes_text_work_bytes(3));

	km_classes_from_text(dict, 3, id, 6, labels, &labels_bytes, cls, work);
	CHECK(labels_bytes == 9 && memcmp(labels, "B\0no\0yes\0", 9) == 0, "packed labels");
	CHECK(cls[0] == 2 && cls[1] == 1 && cls[2] == 2 && cls[3] == 0 && cls[4] == 1 &&
		  cls[5] == 2, "text classes %u %u %u %u %u %u", cls[0], cls[1], cls[2],
		  cls[3], cls[4], cls[5]);
	km_classes_count(cls, 6, 3, counts);
	CHECK(counts[0] == 1 && counts[1] == 2 && counts[2] == 3, "text counts");

	CHECK(km_classes_from_float8(y, 6, v, cls) == 4, "four values (-0 is 0)");
	CHECK(v[0] == -3.0 && v[1] == 0.0 && !signbit(v[1]) && v[2] == 2.5 && v[3] == 7.0,
		  "numeric order");
	CHECK(cls[0] == 2 && cls[1] == 1 && cls[2] == 3 && cls[3] == 1 && cls[4] == 2 &&
		  cls[5] == 0, "float8 classes");
	km_classes_count(cls, 6, 4, counts);
	CHECK(counts[0] == 1 && counts[1] == 2 && counts[2] == 2 && counts[3] == 1, "float8 counts");

	for (int i = 0; i <= KM_MAX_CLASSES; i++)
		many[i] = (double) i;
	CHECK(km_classes_from_float8(many, KM_MAX_CLASSES, v, many_cls) == KM_MAX_CLASSES,
		  "as many classes as a model may have");
	CHECK(km_classes_from_float8(many, KM_MAX_CLASSES + 1, v, many_cls) == KM_MAX_CLASSES + 1,
		  "one more is refused");
	free(many);
	free(many_cls);
	free(work);
}

/* A regression target that looks like class labels (task.h). */
void
test_regression_label_like(void)
{
	const double two[4] = {0.0, 1.0, 1.0, 0.0};
	const double codes[6] = {3.0, 1.0, 2.0, 3.0, 1.0, 2.0};
	const double few[5] = {3.0, 1.0, 2.0, 4.0, 1.0};
	const double frac[3] = {0.0, 1.0, 0.5};
	const double big[2] = {0.0, 3e9};
	double		lo = 0.0;
	double		hi = 0.0;
	double		many[42];

	CHECK(km_regression_label_like(two, 4, &lo, &hi) == 2 && lo == 0.0 && hi == 1.0, "0/1");
	CHECK(km_regression_label_like(codes, 6, &lo, &hi) == 3 && lo == 1.0 && hi == 3.0, "codes");
	CHECK(km_regression_label_like(few, 5, &lo, &hi) == 0, "4 values in 5 rows: measurements");
	CHECK(km_regression_label_like(frac, 3, &lo, &hi) == 0, "a fraction");
	CHECK(km_regression_label_like(big, 2, &lo, &hi) == 0, "beyond int4");
	CHECK(km_regression_label_like(two, 1, &lo, &hi) == 0, "one row");
	for (int i = 0; i < 42; i++)
		many[i] = (double) (i % 21);
	CHECK(km_regression_label_like(many, 42, &lo, &hi) == 0, "21 values");
	for (int i = 0; i < 40; i++)
		many[i] = (double) (i % 20);
	CHECK(km_regression_label_like(many, 40, &lo, &hi) == 20 && lo == 0.0 && hi == 19.0,
		  "20 values");
}

/* "balanced" is n / (k n_c) as scikit-learn's compute_class_weight. */
void
test_classify_class_weights(void)
{
	const char	packed[] = "a\0b\0c";
	const uint64_t counts[3] = {10, 30, 60};
	double		w[3];
	km_class_weights cw;
	km_error	err;

	memset(&cw, 0, sizeof(cw));
	CHECK(km_class_weights_resolve(&cw, packed, sizeof(packed), 3, counts, w, &err) == KM_OK &&
		  w[0] == 1.0 && w[1] == 1.0 && w[2] == 1.0, "none");
	cw.mode = KM_CLASS_WEIGHT_BALANCED;
	CHECK(km_class_weights_resolve(&cw, packed, sizeof(packed), 3, counts, w, &err) == KM_OK, "balanced");
	CHECK_CLOSE(w[0], 100.0 / 30.0, 1e-15);
	CHECK_CLOSE(w[1], 100.0 / 90.0, 1e-15);
	CHECK_CLOSE(w[2], 100.0 / 180.0, 1e-15);
	cw.mode = KM_CLASS_WEIGHT_TABLE;
	cw.n = 1;
	strcpy(cw.label[0], "c");
	cw.weight[0] = 2.5;
	CHECK(km_class_weights_resolve(&cw, packed, sizeof(packed), 3, counts, w, &err) == KM_OK &&
		  w[0] == 1.0 && w[1] == 1.0 && w[2] == 2.5, "table");
	strcpy(cw.label[0], "d");
	CHECK(km_class_weights_resolve(&cw, packed, sizeof(packed), 3, counts, w, &err) == KM_ERR_INVALID,
		  "a label that is no class");
}

/* Binary sign rule, one-vs-one votes in libsvm's pair order, argmax. */
void
test_classify_decide(void)
{
	double		f1 = 0.0;
	/* k = 4, pairs (0,1) (0,2) (0,3) (1,2) (1,3) (2,3) */
	const double ovo[6] = {-1, -1, 1, 1, 1, 1};	/* votes: 0:1, 1:3, 2:2, 3:0 */
	const double tie[3] = {1, -1, 1};	/* k = 3: 0, 2, 1 one vote each: class 0 */
	const double ovr[3] = {0.2, 0.7, 0.7};

	CHECK(km_classify_decide(KM_MULTICLASS_BINARY, 2, &f1) == 0, "f = 0 is classes[0]");
	f1 = 1e-300;
	CHECK(km_classify_decide(KM_MULTICLASS_BINARY, 2, &f1) == 1, "f > 0 is classes[1]");
	CHECK(km_classify_decide(KM_MULTICLASS_OVO, 4, ovo) == 1, "ovo votes");
	CHECK(km_classify_decide(KM_MULTICLASS_OVO, 3, tie) == 0, "ovo tie to the lower class");
	CHECK(km_classify_decide(KM_MULTICLASS_OVR, 3, ovr) == 1, "argmax tie to the lower class");
	CHECK(km_ovo_pair_index(0, 1, 4) == 0 && km_ovo_pair_index(0, 3, 4) == 2 &&
		  km_ovo_pair_index(1, 2, 4) == 3 && km_ovo_pair_index(2, 3, 4) == 5, "pair index");
	CHECK(km_multiclass_outputs(KM_MULTICLASS_OVO, 10) == 45 &&
		  km_multiclass_outputs(KM_MULTICLASS_BINARY, 3) == 0 &&
		  km_multiclass_outputs(KM_MULTICLASS_MULTINOMIAL, 10) == 10, "outputs");
}

/*
 * Softmax sums to 1 within 1e-12 even for huge decision values; the
 * sigmoid is 1 / (1 + e^-f); Platt is libsvm's; coupling recovers p from
 * consistent pairwise probabilities r_ij = p_i / (p_i + p_j).
 */
void
test_classify_proba(void)
{
	double		p[4];
	double		work[64];
	km_error	err;
	const double f_big[3] = {800.0, -900.0, 799.0};
	const double f_mid[4] = {0.3, -1.2, 2.0, 0.0};
	double		sum = 0.0;
	const double truth[4] = {0.1, 0.2, 0.3, 0.4};
	double		f_ovo[6];
	double		A[6];
	double		B[6];
	int			t = 0;

	CHECK(km_classify_proba(KM_PROB_LOGISTIC, KM_MULTICLASS_MULTINOMIAL, 3, f_big,
							NULL, NULL, p, work, &err) == KM_OK, "softmax");
	CHECK(fabs(p[0] + p[1] + p[2] - 1.0) <= 1e-12, "sum %.17g", p[0] + p[1] + p[2]);
	CHECK_CLOSE(p[0], 1.0 / (1.0 + exp(-1.0)), 1e-14);
	CHECK(km_classify_proba(KM_PROB_LOGISTIC, KM_MULTICLASS_MULTINOMIAL, 4, f_mid,
							NULL, NULL, p, work, &err) == KM_OK, "softmax 4");
	for (int c = 0; c < 4; c++)
		sum += exp(f_mid[c]);
	for (int c = 0; c < 4; c++)
		CHECK_CLOSE(p[c], exp(f_mid[c]) / sum, 1e-14);

	CHECK(km_classify_proba(KM_PROB_LOGISTIC, KM_MULTICLASS_BINARY, 2, &f_mid[1],
							NULL, NULL, p, work, &err) == KM_OK, "sigmoid");
	CHECK_CLOSE(p[1], 1.0 / (1.0 + exp(1.2)), 1e-15);
	CHECK(fabs(p[0] + p[1] - 1.0) <= 1e-15, "binary sum");
	CHECK(km_sigmoid(-700.0) > 0.0 && km_sigmoid(800.0) == 1.0, "sigmoid range");

	A[0] = -2.0;
	B[0] = 0.5;
	CHECK(km_classify_proba(KM_PROB_PLATT, KM_MULTICLASS_BINARY, 2, &f_mid[0],
							A, B, p, work, &err) == KM_OK, "platt");
	CHECK_CLOSE(p[1], 1.0 / (1.0 + exp(-2.0 * 0.3 + 0.5)), 1e-15);

	/* pairwise Platt outputs that are exactly consistent with truth */
	for (int i = 0; i < 4; i++)
		for (int j = i + 1; j < 4; j++, t++)
		{
			double		r = truth[i] / (truth[i] + truth[j]);

			A[t] = -1.0;
			B[t] = 0.0;
			f_ovo[t] = log(r / (1.0 - r));	/* sigmoid(f) = r */
		}
	CHECK(km_classify_proba_work_doubles(4) <= 64, "work");
	CHECK(km_classify_proba(KM_PROB_PLATT, KM_MULTICLASS_OVO, 4, f_ovo, A, B, p,
							work, &err) == KM_OK, "coupling");
	sum = 0.0;
	for (int c = 0; c < 4; c++)
	{
		CHECK(fabs(p[c] - truth[c]) < 5e-3, "class %d: %g vs %g", c, p[c], truth[c]);
		sum += p[c];
	}
	CHECK(fabs(sum - 1.0) <= 1e-12, "coupled sum %.17g", sum);
	CHECK(km_classify_proba(KM_PROB_NONE, KM_MULTICLASS_BINARY, 2, f_mid, NULL, NULL,
							p, work, &err) == KM_ERR_INVALID, "none");
}

/* Accuracy, balanced accuracy, log-loss by hand; combine; AUC as roc_auc_score. */
void
test_classify_metrics(void)
{
	uint64_t	c1[9];
	uint64_t	c2[9];
	km_class_metrics a;
	km_class_metrics b;
	const double p0[3] = {0.7, 0.2, 0.1};
	const double p1[3] = {0.1, 0.6, 0.3};
	const double scores[6] = {0.1, 0.4, 0.35, 0.8, 0.4, 0.2};
	const bool	pos[6] = {false, false, true, true, true, false};
	char		work[256];

	km_class_metrics_init(&a, 3, c1);
	km_class_metrics_init(&b, 3, c2);
	CHECK(isnan(km_class_metrics_accuracy(&a)), "empty");
	km_class_metrics_add(&a, 0, 0, p0);
	km_class_metrics_add(&a, 0, 1, p1);
	km_class_metrics_add(&b, 1, 1, p1);
	km_class_metrics_add(&b, 2, 1, p1);
	km_class_metrics_combine(&a, &b);
	CHECK(a.n == 4 && a.confusion[0] == 1 && a.confusion[1] == 1 &&
		  a.confusion[4] == 1 && a.confusion[7] == 1, "confusion");
	CHECK_CLOSE(km_class_metrics_accuracy(&a), 0.5, 1e-15);
	/* recalls: class 0 1/2, class 1 1/1, class 2 0/1 */
	CHECK_CLOSE(km_class_metrics_balanced_accuracy(&a), 0.5, 1e-15);
	CHECK_CLOSE(km_class_metrics_log_loss(&a),
				-(log(0.7) + log(0.1) + log(0.6) + log(0.3)) / 4.0, 1e-15);
	km_class_metrics_add(&a, 2, 2, NULL);
	CHECK(isnan(km_class_metrics_log_loss(&a)), "a row without probabilities");

	/*
	 * positives .35 .8 .4 against negatives .1 .4 .2: 2 + 3 + 2.5 of 9
	 * pairs, the tie counted one half (roc_auc_score gives 0.8333...)
	 */
	CHECK(km_auc_work_bytes(6) <= sizeof(work), "work");
	CHECK_CLOSE(km_auc(scores, pos, 6, work), 7.5 / 9.0, 1e-15);
	CHECK(isnan(km_auc(scores, pos, 2, work)), "one kind of row");
}
