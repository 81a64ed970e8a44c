/*
 * pipeline_approx_classify.h - km_train's approximate classifiers (core,
 * no PostgreSQL headers): logistic and svm over a representation with a
 * basis (nystrom, rff), by primal Newton passes over the rows in memory
 * (pipeline_approx_classify.c), and the classifier's model fields that
 * the exact classifiers share.
 *
 * The features: the basis of the approximate regression (the scaler, and
 * the m centres of smallest (hash, row) or rff's random features from the
 * seed).  Nystrom features are whitened, z(x) = L^-1 k(C, x) with
 * L = chol(K_mm + eps I) (eps: the first rung of approx.c's ladder), so
 * the penalty is ||w||^2 and the model is scikit-learn's Nystroem followed
 * by a linear model; rff features are RBFSampler's.  The loss (logistic,
 * or the squared hinge of LIBLINEAR's L2-SVM) is minimized by primal.h's
 * Newton through the learner's one Newton (learn/newton.h), one pass per step,
 * one solver per class (one-vs-rest) in the same pass.  The model stores
 * alpha = L^-T w over the centres (rff: w), so score.c scores it as any
 * nystrom / rff model with q outputs.
 */
#ifndef KM_PIPELINE_APPROX_CLASSIFY_H
#define KM_PIPELINE_APPROX_CLASSIFY_H

#include "learn/point.h"
#include "pipeline_types.h"

/*
 * Train on the rows host holds (in the caller's hash order, with each
 * row's basis key; rows: the shape, rows->classes the classes' table, the
 * learner's: learn/learner.h km_learn) with plan into m; rows->classes->res gets the
 * fit's result (convergence: the caller warns).  Lines for a debug log go
 * to env->note.
 */
km_status	km_train_approx_classes(const km_rows *rows, const km_host *host,
									const km_train_plan *plan,
									const km_train_env *env, km_model *m,
									km_error *err);

/*
 * A pass of the approximate classifiers' road (its kind, learn/pass.h)
 * rebuilt from its point in another process (learner.h km_pass_rebuild);
 * *out NULL when kind is not one of its kinds.
 */
km_status	km_class_pass_rebuild(uint16_t kind, km_point_reader *r,
								  const km_train_env *env, km_pass **out,
								  km_error *err);

#endif							/* KM_PIPELINE_APPROX_CLASSIFY_H */
