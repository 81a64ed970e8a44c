/*
 * approx_classify.h - approximate classifiers (issue 13, "Approximate"):
 * kernel_train(f, label, '{"method": "logistic" | "svm", "approximation":
 * "nystrom" | "rff", ...}') over the rows a RowSet collected.
 *
 * Features: the basis of the regression path (train_rows.h's rowset_basis:
 * the scaler, and the m centres of smallest (hash, row) or rff's random
 * features from the seed).  Nystrom features are whitened,
 * z(x) = L^-1 k(C, x) with L = chol(K_mm + eps I) (eps: the first rung of
 * approx.c's ladder), so the penalty is ||w||^2 and the model is
 * scikit-learn's Nystroem followed by a linear model; rff features are
 * RBFSampler's.  The loss (logistic, or the squared hinge of LIBLINEAR's
 * L2-SVM) is minimized by primal.h's Newton, driven through
 * primal_pass.h's passes (the numbers are in the core; this file's .c
 * only walks the rows, owns the memory and raises), one pass over the rows per
 * step (features a block at a time, or cached when n x m doubles and the rest
 * take at most half of kernel_ml.max_memory), one solver per class (one-vs-rest) in the same
 * pass.  The model stores alpha = L^-T w over the centres (rff: w), so
 * score.c scores it as any nystrom / rff model with q outputs.
 */
#ifndef KM_APPROX_CLASSIFY_H
#define KM_APPROX_CLASSIFY_H

#include "postgres.h"

#include "approx.h"
#include "method.h"
#include "options.h"
#include "rowset.h"

typedef struct KmApproxClassFit
{
	km_basis	basis;			/* scaler, centres (nystrom) or W, b (rff) */
	uint32		q;				/* outputs: 1 (binary) or k (one-vs-rest) */
	double	   *alpha;			/* m x q column-major, over the basis */
	double	   *intercepts;		/* q */
	double		eps;			/* nystrom: chol(K_mm + eps I); rff: 0 */
	bool		cached;			/* the features were kept in memory */
	int			passes;			/* passes over the rows (metrics' included) */
	km_class_fit_result res;
	double		gamma;			/* the kernel's (the winner's after selection) */
	double		lambda;			/* the fit's (the winner's after selection) */
	int			ncand;			/* model selection's candidates (0: none) */
	int			best;
	struct km_candidate *cand;	/* ncand, gamma-major as select.h */
} KmApproxClassFit;

/*
 * Fit on the rows of rs in their order (classify.c passes a copy in hash
 * order, so that the model does not depend on the order rows arrived in),
 * classes cls (n, < k) and class weights class_w (k: every one-vs-rest
 * problem weighs a row by its own class's weight), with opts (resolved,
 * approximation set).  The memory estimate counts the caller's copy.
 * Raises ERROR on failure; warns nothing (the caller warns when
 * !fit->res.converged).  Allocates in CurrentMemoryContext.
 */
void		km_approx_fit_classifier(RowSet *rs, const km_options *opts,
									 const uint32 *cls, uint32 k,
									 const double *class_w,
									 KmApproxClassFit *fit);

#endif							/* KM_APPROX_CLASSIFY_H */
