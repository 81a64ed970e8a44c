/*
 * classify.h - classes, class weights, decision rules and probabilities of
 * the classification methods (core, no PostgreSQL headers).
 *
 * Class order.  The classes of a model are sorted once, at training:
 *   - text labels by strcmp, i.e. by their UTF-8 bytes (the order of the
 *     "C" collation).  Deliberately collation-free: a model must decode to
 *     the same classes on every server, whatever its locale.
 *   - float8 labels (kernel_train(f, y float8, '{"method": "svm"}')) in
 *     numeric order; -0 is 0; they are stored as their shortest text
 *     (float8out), which is what kernel_predict_class returns.
 * For two classes, a decision value f(x) > 0 means classes[1], the second
 * in this order (f = 0 is classes[0], as libsvm's sign convention for
 * scikit-learn's classes_[1]).
 *
 * Multi-class schemes (km_multiclass, class_types.h; stored in the model):
 *   BINARY      q = 1: f > 0 -> classes[1]
 *   OVO         q = k(k-1)/2 outputs for the pairs (0,1),(0,2)..(0,k-1),
 *               (1,2).. as libsvm; output > 0 votes for the first of the
 *               pair; most votes wins, ties to the lower class index
 *               (libsvm's rule)
 *   OVR         q = k: argmax, ties to the lower class index
 *   MULTINOMIAL q = k: argmax (the softmax is monotone), ties as OVR
 *
 * Probabilities (km_prob_link: how a method turns decision values into
 * them):
 *   LOGISTIC + BINARY       p(classes[1]) = 1 / (1 + exp(-f))
 *   LOGISTIC + MULTINOMIAL  softmax, shifted by the largest f, normalized
 *                           so that the sum is 1 within 1e-12
 *   LOGISTIC + OVR          sigmoids normalized to sum 1 (scikit-learn's
 *                           one-vs-rest rule); in the log domain when a
 *                           sigmoid is below the normal doubles (a row far
 *                           from the data, where every sigmoid can underflow
 *                           to 0): exp(log s(f_c) - log sum_j s(f_j))
 *   PLATT + BINARY          p(classes[1]) = 1 / (1 + exp(A f + B)) (Platt,
 *                           libsvm's sigmoid_predict)
 *   PLATT + OVO             pairwise Platt probabilities coupled by Wu, Lin
 *                           and Weng's method 2 (libsvm's
 *                           multiclass_probability)
 *   (both by class_prob.c's km_svm_proba: one implementation of the coupling)
 *   PLATT + OVR             Platt sigmoids normalized to sum 1
 *   NONE                    no probabilities (an svm trained without
 *                           "probability": true): the caller raises an error
 *                           with the method's hint
 * Every link gives k finite probabilities in [0, 1] that sum to 1 within
 * 1e-12 for any finite f, and finite log-probabilities: the logistic ones
 * from log-sigmoids and a log-sum-exp (finite where p underflows to 0),
 * Platt's as log p, which the clipping of each pairwise or one-vs-rest
 * Platt probability to [1e-7, 1 - 1e-7] (libsvm's rule) keeps above 0.
 */
#ifndef KM_CLASSIFY_H
#define KM_CLASSIFY_H

#include "class_types.h"
#include "core.h"
#include "task.h"

/* Libsvm's clipping of pairwise probabilities. */
#define KM_PLATT_MIN_PROB 1e-7

/* "text", "float8"; "binary", "ovo", "ovr", "multinomial"; "unknown" otherwise. */
const char *km_label_type_name(km_label_type t);
const char *km_multiclass_name(km_multiclass mc);

/* q for k classes under mc; 0 if mc names nothing or k does not fit it. */
uint32_t	km_multiclass_outputs(km_multiclass mc, uint32_t k);

/* Output index of the OVO pair (i, j), i < j < k. */
uint32_t	km_ovo_pair_index(uint32_t i, uint32_t j, uint32_t k);

/*
 * Sort a dictionary of m distinct labels into class order: class_of[id]
 * is the class index of dictionary entry id, and order[c] the entry of
 * class c.  Text by strcmp; float8 by value (the values must be finite
 * and distinct; -0 and 0 must already be one value).  work: m pointers'
 * worth, km_classes_sort_work_bytes(m).
 */
size_t		km_classes_sort_work_bytes(uint32_t m);
void		km_classes_sort_text(const char *const *labels, uint32_t m,
								 uint32_t *order, uint32_t *class_of, void *work);
void		km_classes_sort_float8(const double *values, uint32_t m,
								   uint32_t *order, uint32_t *class_of, void *work);

/*
 * The classification task's class table (classification.c), from the
 * labels of n rows, in class order as above:
 *   km_classes_from_text    m distinct text labels dict[0..m-1] and row
 *                           i's dictionary id id[i]: k = m classes, their
 *                           labels back to back (NUL-terminated) into
 *                           labels (the dictionary's bytes; *labels_bytes
 *                           set), cls[i] (n).  work:
 *                           km_classes_text_work_bytes(m).
 *   km_classes_from_float8  float8 labels y (n): their distinct values in
 *                           numeric order (-0 is 0) into v (n doubles: the
 *                           first k on return) and cls[i] (n); returns k,
 *                           or KM_MAX_CLASSES + 1 when there are more
 *                           distinct values than a model may have classes
 *                           (cls then unset).
 *   km_classes_count        counts[c] (k) of the rows of class c.
 */
size_t		km_classes_text_work_bytes(uint32_t m);
void		km_classes_from_text(const char *const *dict, uint32_t m,
								 const uint32_t *id, size_t n, char *labels,
								 uint32_t *labels_bytes, uint32_t *cls, void *work);
uint32_t	km_classes_from_float8(const double *y, size_t n, double *v, uint32_t *cls);
void		km_classes_count(const uint32_t *cls, size_t n, uint32_t k, uint64_t *counts);

/*
 * The class index of label among k labels stored back to back
 * (NUL-terminated, labels_bytes in all), or -1 when it is not a class.
 */
int			km_classes_find(const char *labels, uint32_t labels_bytes,
							uint32_t k, const char *label);

/* The label of class c (a pointer into labels), or NULL if c >= k or the table is short. */
const char *km_classes_label(const char *labels, uint32_t labels_bytes,
							 uint32_t k, uint32_t c);

/* weights[k] for the classes, from their training counts. */
km_status	km_class_weights_resolve(const km_class_weights *cw,
									 const char *labels, uint32_t labels_bytes,
									 uint32_t k, const uint64_t *counts,
									 double *weights, km_error *err);

/* The class of decision values f (q of them) under the scheme. */
uint32_t	km_classify_decide(km_multiclass mc, uint32_t k, const double *f);

/* Doubles of work km_classify_proba needs for k classes. */
size_t		km_classify_proba_work_doubles(uint32_t k);

/*
 * p[k] from decision values f (q); A, B: the Platt coefficients (q each)
 * for KM_PROB_PLATT, else unused.  KM_ERR_INVALID for KM_PROB_NONE or a
 * combination the table above does not list.
 */
km_status	km_classify_proba(km_prob_link link, km_multiclass mc, uint32_t k,
							  const double *f, const double *A,
							  const double *B, double *p, double *work,
							  km_error *err);

/*
 * The same p[k] and, when logp is not NULL, logp[k] = log p, computed in
 * the log domain for the logistic links: finite for finite f even where
 * p underflows to 0 (use it for log-losses instead of log(p)).  The
 * probabilities are those of km_classify_proba bit for bit.
 */
km_status	km_classify_proba_log(km_prob_link link, km_multiclass mc,
								  uint32_t k, const double *f,
								  const double *A, const double *B, double *p,
								  double *logp, double *work, km_error *err);

/* The logistic sigmoid 1 / (1 + exp(-t)) without overflow. */
double		km_sigmoid(double t);

/* log(1 / (1 + exp(-t))) without overflow or log(0): finite for finite t. */
double		km_log_sigmoid(double t);

/*
 * The scoring of a block of an approximate classifier's primal passes
 * (primal_pass.h: q = 1 for two classes, else one-vs-rest outputs).
 * Training metrics of a block of decision values F (rows x q) against
 * class ids cls: *correct += rows decided right, and with logistic
 * *logloss -= log(max(p[y], 1e-300)).  p: k doubles, pwork:
 * km_classify_proba_work_doubles(k).  A row whose decision values are not
 * finite: KM_ERR_DIVERGED with *bad_row its index in the block; else
 * *bad_row is SIZE_MAX and a probability's error is returned as is.
 */
km_status	km_primal_block_metrics(const double *F, size_t rows, uint32_t q,
									uint32_t k, bool logistic,
									const uint32_t *cls, double *p,
									double *pwork, double *correct,
									double *logloss, size_t *bad_row,
									km_error *err);

/*
 * The held-out loss of the rows of fold v in a block (fold: each row's
 * fold): *sum += 1 - decided right (svm) or the log-loss with p clipped
 * to [DBL_EPSILON, 1 - DBL_EPSILON] (logistic), *count += those rows.
 * false when a held-out row's values are not finite or its probabilities
 * fail (the candidate cannot be scored).
 */
bool		km_primal_block_holdout(const double *F, size_t rows, uint32_t q,
									uint32_t k, bool logistic,
									const uint32_t *cls, const uint32_t *fold,
									uint32_t v, double *p, double *pwork,
									double *sum, int64_t *count);

#endif							/* KM_CLASSIFY_H */
