/*
 * classify_fit.c - training a classifier on the exact Gram matrix (core, no
 * PostgreSQL headers): the Gram matrix (or its column cache), the method's
 * fit_classes, the training scores, and k-fold selection over a grid.  The
 * methods themselves are in the registry (methods.c).
 */
#include <string.h>

#include <float.h>
#include <math.h>

#include <cblas.h>

#include "classify.h"
#include "classify_fit.h"
#include "method.h"
#include "progress.h"
#include "select.h"

/* The method fits classes: its classification ops (method.h), NULL for the others. */
static bool
fits_classes(const km_method_ops *ops)
{
	return ops != NULL && ops->fit_classes != NULL && ops->multiclass != NULL &&
		ops->class_workspace_doubles != NULL;
}

/*
 * The Gram space: the full n x n matrix, or a column cache of
 * KM_GRAM_COLS_BYTES and its tables (km_fit_classes_gram_on_demand).
 */
static size_t
gram_space_doubles(const km_fit_params *p, size_t n)
{
	size_t		slots;

	if (!km_fit_classes_gram_on_demand(p))
		return n * n;
	slots = km_gram_cols_slots(n, KM_GRAM_COLS_BYTES);
	return slots * n + km_gram_cols_table_doubles(n, slots);
}

size_t
km_fit_classes_doubles(const km_fit_params *p, size_t n, uint32_t k)
{
	const km_method_ops *ops = km_method_get(p->method);
	uint32_t	q;
	size_t		own;

	if (!fits_classes(ops) || n == 0 ||
		n > ((size_t) 1 << 28) || k < 2 || k > KM_MAX_CLASSES)
		return 0;
	q = km_multiclass_outputs(ops->multiclass(k), k);
	own = ops->class_workspace_doubles(n, k, p);
	if (q == 0 || own == 0 || (size_t) q > (SIZE_MAX / 8 - gram_space_doubles(p, n) - own) / (n + 2))
		return 0;
	/* K (or the column cache), norms, F (n x q), one row's probabilities, their work, its q values, the method's own */
	return gram_space_doubles(p, n) + n + n * q + k + km_classify_proba_work_doubles(k) + q + own;
}

bool
km_fit_classes_gram_on_demand(const km_fit_params *p)
{
	const km_method_ops *ops = km_method_get(p->method);

	return ops != NULL && ops->gram_cols && !p->probability &&
		km_method_solver(ops, p->solver) == KM_SOLVER_SMO &&
		km_gram_cols_supported(&p->kernel);
}

/* Training accuracy (and log-loss with probabilities) from F = K alpha + b. */
static km_status
training_scores(const km_method_ops *ops, size_t n, uint32_t k, uint32_t q,
				const uint32_t *cls, const double *K, km_gram_cols *cols,
				const double *alpha,
				const double *intercepts, const double *prob_A,
				const double *prob_B, double *F, double *prob, double *pwork,
				km_class_fit_result *res, km_error *err, km_interrupt_fn interrupt)
{
	const char *hint = NULL;
	km_prob_link link = ops->prob_link(res->has_probability, res->multiclass, &hint);
	size_t		correct = 0;
	double		log_loss = 0.0;

	/* F := K alpha (n x q); row i's decision values are F[i + j n] + b_j */
	if (cols == NULL)
		cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int) n, (int) q,
					(int) n, 1.0, K, (int) n, alpha, (int) n, 0.0, F, (int) n);
	else
	{
		/* only the columns of nonzero coefficients, which the fit computed */
		memset(F, 0, n * q * sizeof(double));
		for (size_t c = 0; c < n; c++)
		{
			const double *col = NULL;

			for (uint32_t j = 0; j < q; j++)
				if (alpha[c + j * n] != 0.0)
				{
					if (col == NULL)
						col = km_gram_cols_get(cols, c);
					cblas_daxpy((int) n, alpha[c + j * n], col, 1, F + j * n, 1);
				}
			/* an evicted column is computed again: a check every 256 rows */
			if ((c & 255) == 255)
				km_check_interrupts(interrupt);
		}
	}
	for (size_t i = 0; i < n; i++)
	{
		double	   *f = pwork + km_classify_proba_work_doubles(k);

		for (uint32_t j = 0; j < q; j++)
			f[j] = F[i + j * n] + intercepts[j];
		correct += km_classify_decide(res->multiclass, k, f) == cls[i];
		if (link != KM_PROB_NONE)
		{
			km_status	st = km_classify_proba(link, res->multiclass, k, f, prob_A,
											   prob_B, prob, pwork, err);

			if (st != KM_OK)
				return st;
			/* clipped as km_class_metrics_add does */
			log_loss -= log(fmin(fmax(prob[cls[i]], DBL_EPSILON), 1.0 - DBL_EPSILON));
		}
	}
	res->train_accuracy = (double) correct / (double) n;
	res->train_log_loss = link != KM_PROB_NONE ? log_loss / (double) n : NAN;
	return KM_OK;
}

km_status
km_fit_classes(const km_fit_params *p, const double *X, size_t n, int d,
			   const uint32_t *cls, uint32_t k, const double *class_w,
			   const uint32_t *fold, uint32_t n_folds, double *alpha,
			   double *intercepts, double *prob_A, double *prob_B,
			   double *work, km_class_fit_result *res, km_error *err,
			   km_interrupt_fn interrupt)
{
	const km_method_ops *ops = km_method_get(p->method);
	double	   *K = work;
	double	   *norms;
	double	   *F;
	double	   *prob;
	double	   *pwork;
	double	   *own;
	km_fit_params lp;
	km_gram_cols cols;
	uint32_t	q;
	km_status	st;

	memset(res, 0, sizeof(*res));
	if (!fits_classes(ops))
		return km_fail(err, KM_ERR_INVALID, "not a classification method",
					   "Method %s does not classify.", km_method_name(p->method));
	res->multiclass = ops->multiclass(k);
	q = res->n_outputs = km_multiclass_outputs(res->multiclass, k);
	norms = K + gram_space_doubles(p, n);
	F = norms + n;
	prob = F + n * q;
	pwork = prob + k;
	own = pwork + km_classify_proba_work_doubles(k) + q;
	lp = *p;
	lp.gram_cols = NULL;
	km_row_norms(&p->kernel, X, n, d, norms);
	if (km_fit_classes_gram_on_demand(p))
	{
		size_t		slots = km_gram_cols_slots(n, KM_GRAM_COLS_BYTES);

		km_gram_cols_init(&cols, &lp.kernel, X, n, d, norms, K, n, slots,
						  K + slots * n);
		lp.gram_cols = &cols;
	}
	else
	{
		km_progress_phase("%s: kernel matrix of %zu rows", ops->name, n);
		if (!km_gram_lower(&p->kernel, X, n, d, norms, K, n, interrupt))
			return km_gram_overflow(&p->kernel, K, n, n, err);
		km_symmetrize(K, n, n, interrupt);
	}
	st = ops->fit_classes(&lp, X, n, d, cls, k, class_w, fold, n_folds, alpha,
						  intercepts, prob_A, prob_B, K, own, res, err,
						  interrupt);
	if (st == KM_OK)
		st = training_scores(ops, n, k, q, cls, K, lp.gram_cols, alpha, intercepts, prob_A,
							 prob_B, F, prob, pwork, res, err, interrupt);
	if (st != KM_OK)
		km_method_fill_hint(p->method, err);
	return st;
}

size_t
km_classify_select_doubles(const km_fit_params *base, size_t n, uint32_t k)
{
	const km_method_ops *ops = km_method_get(base->method);
	km_fit_params p = *base;
	size_t		own;
	uint32_t	q;

	if (!fits_classes(ops) || n == 0 ||
		n > ((size_t) 1 << 27) || k < 2 || k > KM_MAX_CLASSES)
		return 0;
	p.probability = false;
	q = km_multiclass_outputs((km_multiclass) ops->multiclass(k), k);
	own = ops->class_workspace_doubles(n, k, &p);
	if (own == 0 || q == 0)
		return 0;
	/* full K, norms, training block, cross block, alpha n x q, F, q + k + proba work, own, row maps */
	return 2 * n * n + n + n * n + 2 * n * (size_t) q + 2 * (size_t) q + k +
		km_classify_proba_work_doubles(k) + own + 2 * n;
}

/* The loss of candidate fit on the held-out rows: 1 - accuracy or log-loss. */
static km_status
held_out_loss(const km_method_ops *ops, const km_fit_params *p, size_t nte,
			  size_t ntr, uint32_t k, uint32_t q, int mc,
			  const double *Kx /* nte x ntr */, const double *alpha,
			  const double *intercepts, const uint32_t *cls_te, double *F,
			  double *f, double *prob, double *pwork, double *loss,
			  km_error *err)
{
	const char *hint = NULL;
	km_prob_link link = ops->prob_link(false, mc, &hint);
	double		sum = 0.0;

	cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int) nte, (int) q,
				(int) ntr, 1.0, Kx, (int) nte, alpha, (int) ntr, 0.0, F, (int) nte);
	for (size_t i = 0; i < nte; i++)
	{
		for (uint32_t j = 0; j < q; j++)
			f[j] = F[i + j * nte] + intercepts[j];
		if (ops->score_metric == KM_SCORE_LOG_LOSS && link != KM_PROB_NONE)
		{
			km_status	st = km_classify_proba(link, (km_multiclass) mc, k, f,
											   NULL, NULL, prob, pwork, err);

			if (st != KM_OK)
				return st;
			sum -= log(fmin(fmax(prob[cls_te[i]], DBL_EPSILON), 1.0 - DBL_EPSILON));
		}
		else
			sum += km_classify_decide((km_multiclass) mc, k, f) != cls_te[i];
	}
	*loss = sum / (double) nte;
	return KM_OK;
}

/*
 * The rows of fold v (test) and of the others (training), with their
 * classes; false when the test side is empty or the training side lacks a
 * class (the fold cannot be scored).
 */
static bool
split_fold(const uint32_t *fold, const uint32_t *cls, size_t n, uint32_t k,
		   uint32_t v, uint32_t *tr_rows, uint32_t *cls_tr, size_t *ntr,
		   uint32_t *te_rows, uint32_t *cls_te, size_t *nte)
{
	uint64_t	seen[KM_MAX_CLASSES / 64 + 1] = {0};
	uint32_t	present = 0;

	*ntr = 0;
	*nte = 0;
	for (size_t i = 0; i < n; i++)
	{
		if (fold[i] == v)
		{
			te_rows[*nte] = (uint32_t) i;
			cls_te[(*nte)++] = cls[i];
			continue;
		}
		tr_rows[*ntr] = (uint32_t) i;
		cls_tr[(*ntr)++] = cls[i];
		if (!(seen[cls[i] / 64] & (1ull << (cls[i] % 64))))
		{
			seen[cls[i] / 64] |= 1ull << (cls[i] % 64);
			present++;
		}
	}
	return *nte > 0 && present == k;
}

/* Ktr (ntr x ntr) and Kx (nte x ntr): blocks of the full Gram matrix K (n x n). */
static void
gather_fold_blocks(const double *K, size_t n, const uint32_t *tr_rows,
				   size_t ntr, const uint32_t *te_rows, size_t nte,
				   double *Ktr, double *Kx)
{
	for (size_t b = 0; b < ntr; b++)
	{
		const double *col = K + (size_t) tr_rows[b] * n;

		for (size_t a = 0; a < ntr; a++)
			Ktr[a + b * ntr] = col[tr_rows[a]];
		for (size_t a = 0; a < nte; a++)
			Kx[a + b * nte] = col[te_rows[a]];
	}
}

/*
 * The k-fold route of a classifier's selection: the workspace of
 * km_classify_select_doubles, laid out once, and the current gamma's fit
 * parameters (probability off).
 */
typedef struct classify_route
{
	const km_method_ops *ops;
	km_fit_params p;
	int			mc;
	uint32_t	q;
	const double *X;
	size_t		n;
	int			d;
	const uint32_t *cls;
	uint32_t	k;
	const double *class_w;
	const uint32_t *fold;
	uint32_t	folds;
	int			count;			/* candidates */
	double	   *K;				/* the full Gram matrix of the gamma */
	double	   *norms;
	double	   *Ktr;			/* a fold's blocks */
	double	   *Kx;
	double	   *alpha;
	double	   *F;
	double	   *intercepts;
	double	   *f;
	double	   *prob;
	double	   *pwork;
	double	   *own;
	uint32_t   *tr_rows;
	uint32_t   *te_rows;
	uint32_t   *cls_tr;
	uint32_t   *cls_te;
	km_error   *err;
	km_interrupt_fn interrupt;
} classify_route;

static void
classify_layout(classify_route *r, double *work)
{
	size_t		n = r->n;

	r->K = work;
	r->norms = r->K + n * n;
	r->Ktr = r->norms + n;
	r->Kx = r->Ktr + n * n;
	r->alpha = r->Kx + n * n;
	r->F = r->alpha + n * (size_t) r->q;
	r->intercepts = r->F + n * (size_t) r->q;
	r->f = r->intercepts + r->q;
	r->prob = r->f + r->q;
	r->pwork = r->prob + r->k;
	r->own = r->pwork + km_classify_proba_work_doubles(r->k);
	r->tr_rows = (uint32_t *) (r->own + r->ops->class_workspace_doubles(n, r->k, &r->p));
	r->te_rows = r->tr_rows + n;
	r->cls_tr = r->te_rows + n;
	r->cls_te = r->cls_tr + n;
}

/* A gamma's setup: the full Gram matrix, once for all its lambdas and folds. */
static km_status
classify_gamma(void *arg, int g, double gamma, km_error *err)
{
	classify_route *r = arg;

	r->p.kernel.gamma = gamma;
	km_row_norms(&r->p.kernel, r->X, r->n, r->d, r->norms);
	km_progress_phase("%s: kernel matrix of %zu rows", r->ops->name, r->n);
	if (!km_gram_lower(&r->p.kernel, r->X, r->n, r->d, r->norms, r->K, r->n,
					   r->interrupt))
		return km_gram_overflow(&r->p.kernel, r->K, r->n, r->n, err);
	km_symmetrize(r->K, r->n, r->n, r->interrupt);
	return KM_OK;
}

/*
 * The loss of one fold: fit on the others, score the fold; false when the
 * fold cannot be scored (its training rows miss a class, or the fit fails).
 */
static bool
classify_fold(classify_route *r, int index, const km_candidate *c, uint32_t v,
			  double *loss)
{
	size_t		ntr;
	size_t		nte;
	km_class_fit_result res;
	km_error	ferr;

	if (!split_fold(r->fold, r->cls, r->n, r->k, v, r->tr_rows, r->cls_tr, &ntr,
					r->te_rows, r->cls_te, &nte))
		return false;
	gather_fold_blocks(r->K, r->n, r->tr_rows, ntr, r->te_rows, nte, r->Ktr, r->Kx);
	km_check_interrupts(r->interrupt);
	km_grid_fold_stage(index, r->count, c, (int) v, (int) r->folds);
	memset(&res, 0, sizeof(res));
	res.multiclass = r->mc;
	return r->ops->fit_classes(&r->p, NULL, ntr, r->d, r->cls_tr, r->k,
							   r->class_w, NULL, 0, r->alpha, r->intercepts,
							   NULL, NULL, r->Ktr, r->own, &res, &ferr,
							   r->interrupt) == KM_OK &&
		held_out_loss(r->ops, &r->p, nte, ntr, r->k, r->q, r->mc, r->Kx,
					  r->alpha, r->intercepts, r->cls_te, r->F, r->f, r->prob,
					  r->pwork, loss, r->err) == KM_OK && isfinite(*loss);
}

/* A candidate's k-fold score: the mean loss over folds, NaN if one fails. */
static km_status
classify_score(void *arg, int index, km_candidate *c, km_error *err)
{
	classify_route *r = arg;
	double		sum = 0.0;
	double		sumsq = 0.0;

	r->p.lambda = c->lambda;
	for (uint32_t v = 0; v < r->folds; v++)
	{
		double		loss;

		if (!classify_fold(r, index, c, v, &loss))
		{
			c->score = NAN;
			c->score_std = 0.0;
			return KM_OK;
		}
		sum += loss;
		sumsq += loss * loss;
	}
	c->score = sum / r->folds;
	c->score_std = sqrt(fmax(sumsq / r->folds - c->score * c->score, 0.0));
	return KM_OK;
}

static km_status
classify_none(void *arg, int count, km_error *err)
{
	return km_fail(err, KM_ERR_INACCURATE, "no candidate could be scored",
				   "Every one of the %d candidates failed to fit on some fold, or a fold missed a class.",
				   count);
}

km_status
km_classify_select(const km_fit_params *base, const double *gammas,
				   int n_gammas, const double *lambdas, int n_lambdas,
				   const double *X, size_t n, int d, const uint32_t *cls,
				   uint32_t k, const double *class_w, const uint32_t *fold,
				   uint32_t folds, km_candidate *cand, int *best,
				   double *work, km_error *err, km_interrupt_fn interrupt)
{
	classify_route r = {0};
	km_grid_route route = {.arg = &r, .gamma = classify_gamma,
		.score = classify_score, .none = classify_none, .gamma_stage = ""};

	r.ops = km_method_get(base->method);
	r.p = *base;
	r.p.probability = false;
	r.mc = r.ops->multiclass(k);
	r.q = km_multiclass_outputs((km_multiclass) r.mc, k);
	r.X = X;
	r.n = n;
	r.d = d;
	r.cls = cls;
	r.k = k;
	r.class_w = class_w;
	r.fold = fold;
	r.folds = folds;
	r.count = n_gammas * n_lambdas;
	r.err = err;
	r.interrupt = interrupt;
	classify_layout(&r, work);
	return km_grid_search(gammas, n_gammas, lambdas, n_lambdas, &route, cand,
						  best, err);
}
