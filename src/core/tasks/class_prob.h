/*
 * class_prob.h - class probabilities from decision values, as the
 * classification task serves them to every classifier (classify.h lists the
 * links): Platt's sigmoid of a decision value and libsvm's pairwise
 * coupling of one-vs-one probabilities (Wu, Lin & Weng 2004, method 2).
 * The methods fit the Platt coefficients (svm_prob.c); this is how a model
 * turns them into probabilities.
 */
#ifndef KM_CLASS_PROB_H
#define KM_CLASS_PROB_H

#include <stddef.h>
#include <stdint.h>

/* 1 / (1 + exp(A f + B)) without overflow. */
double		km_platt_prob(double f, double A, double B);

/*
 * Class probabilities p (k, summing to 1 within 1e-12) from the q decision
 * values and the Platt A, B of each output: k == 2, p[1] = P(class 1); k >= 3,
 * pairwise probabilities r_st = km_platt_prob(dec_st) clipped to
 * [1e-7, 1 - 1e-7] and coupled by Wu, Lin & Weng's method 2 (libsvm's
 * multiclass_probability, the same stopping rule), then divided by their sum.
 * work: km_svm_proba_doubles(k).
 */
size_t		km_svm_proba_doubles(uint32_t k);
void		km_svm_proba(uint32_t k, const double *dec, const double *A,
						 const double *B, double *p, double *work);

/* Coupling alone: r k x k row-major (r[s k + t] = P(s | s or t)), p k. */
void		km_svm_couple(uint32_t k, const double *r, double *p, double *work);

#endif							/* KM_CLASS_PROB_H */
