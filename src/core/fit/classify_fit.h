/*
 * classify_fit.h - training a classifier on the exact Gram matrix, and its
 * k-fold model selection (core, no PostgreSQL headers).
 */
#ifndef KM_CLASSIFY_FIT_H
#define KM_CLASSIFY_FIT_H

#include "method.h"

/*
 * Doubles of workspace km_fit_classes needs: the full Gram matrix (or the
 * column cache, km_fit_classes_gram_on_demand), norms,
 * the decision values of the training rows (n x q), the method's own; 0 on
 * overflow or for a method that does not classify.
 */
size_t		km_fit_classes_doubles(const km_fit_params *p, size_t n, uint32_t k);

/*
 * Whether km_fit_classes computes K's columns only when the method reads
 * them, into a cache of KM_GRAM_COLS_BYTES (kernels.h km_gram_cols): the
 * svm's SMO without probabilities, with a kernel km_gram_cols supports.
 * The workspace then holds the cache instead of the n x n matrix, and the
 * caller need not populate it: pages are touched column by column.
 * Otherwise the full Gram matrix is built first.
 */
bool		km_fit_classes_gram_on_demand(const km_fit_params *p);

/*
 * Fit a classifier (p->method with task classification): the Gram matrix
 * of X, the method's fit_classes, then the training accuracy and, with
 * probabilities, the training log-loss into res (and res->multiclass,
 * n_outputs).  Arguments as fit_classes; work of km_fit_classes_doubles.
 * A failure carries the method's hint.
 */
km_status	km_fit_classes(const km_fit_params *p, const double *X, size_t n,
						   int d, const uint32_t *cls, uint32_t k,
						   const double *class_w, const uint32_t *fold,
						   uint32_t n_folds, double *alpha, double *intercepts,
						   double *prob_A, double *prob_B, double *work,
						   km_class_fit_result *res, km_error *err,
						   km_interrupt_fn interrupt);

/*
 * k-fold model selection for a classifier over gammas x lambdas, a route of
 * select.h's grid loop (km_grid_search: candidate i = g * n_lambdas + l,
 * progress, the winner and the "no candidate" error): for each gamma the full
 * Gram matrix once, then per fold the method's fit_classes on the rows
 * with fold[i] != v (their block of the Gram matrix) and the decision
 * values of the held-out rows from the cross block.  Scored by the
 * method's score_metric as a loss, lower better: 1 - accuracy (svm) or
 * mean log-loss (logistic); score_std over folds.  A fold whose training
 * rows miss a class, or whose fit fails, makes the candidate NaN (not
 * chosen).  *best: km_best_candidate's (the lowest score; ties to the
 * larger lambda, then the smaller gamma).
 * Probability (Platt) is not fitted during selection.  work:
 * km_classify_select_doubles.
 */
size_t		km_classify_select_doubles(const km_fit_params *base, size_t n,
									   uint32_t k);
km_status	km_classify_select(const km_fit_params *base, const double *gammas,
							   int n_gammas, const double *lambdas,
							   int n_lambdas, const double *X, size_t n, int d,
							   const uint32_t *cls, uint32_t k,
							   const double *class_w, const uint32_t *fold,
							   uint32_t folds, struct km_candidate *cand,
							   int *best, double *work, km_error *err,
							   km_interrupt_fn interrupt);

#endif							/* KM_CLASSIFY_FIT_H */
