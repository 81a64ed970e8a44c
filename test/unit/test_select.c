/*
 * test_select.c - model selection against brute force and the definitions.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <lapacke.h>

#include "select.h"
#include "unit.h"

void		test_select_loo_matches_refits(void);
void		test_select_gcv_matches_definition(void);
void		test_select_kfold(void);
void		test_select_cholesky_route_large(void);
void		test_select_grid_loop(void);

static km_status
run_select_folds(km_select_params *p, const double *X, size_t n, int d,
				 const double *y, const int *fold, km_candidate *cand, int *best)
{
	double	   *work = malloc(km_select_workspace_doubles(p, n, d) * sizeof(double));
	km_error	err;
	km_status	st = km_select(p, X, n, d, y, fold, cand, best, work, &err, NULL);

	free(work);
	return st;
}

static km_status
run_select(km_select_params *p, const double *X, size_t n, int d,
		   const double *y, km_candidate *cand, int *best)
{
	return run_select_folds(p, X, n, d, y, NULL, cand, best);
}

void
test_select_loo_matches_refits(void)
{
	size_t		n = 40;
	int			d = 3;
	double	   *X = unit_rand_vec(n * d, 21);
	double	   *y = unit_rand_vec(n, 22);
	double		lambdas[3] = {1e-3, 0.1, 2.0};
	double		gamma = 0.7;
	double	   *res = malloc(n * 3 * sizeof(double));
	km_candidate cand[3];
	int			best;
	km_select_params p;
	double	   *Xtr = malloc(n * d * sizeof(double));
	double	   *ytr = malloc(n * sizeof(double));
	double	   *alpha = malloc(n * sizeof(double));
	double	   *work = malloc(km_fit_workspace_doubles(KM_METHOD_RIDGE, n) * sizeof(double));
	double		worst = 0.0;

	memset(&p, 0, sizeof(p));
	p.base.kernel.type = KM_KERNEL_RBF;
	p.base.method = KM_METHOD_RIDGE;
	p.gammas = &gamma;
	p.n_gammas = 1;
	p.lambdas = lambdas;
	p.n_lambdas = 3;
	p.cv = KM_CV_LOO;
	p.loo_residuals = res;
	CHECK(run_select(&p, X, n, d, y, cand, &best) == KM_OK, "select failed");

	/* brute force: n refits per lambda, each predicting the row left out */
	for (int l = 0; l < 3; l++)
	{
		km_fit_params fp = {{KM_KERNEL_RBF, 0, gamma, 0}, KM_METHOD_RIDGE, lambdas[l], 0, 0, 0};
		double		sse = 0.0;

		for (size_t out = 0; out < n; out++)
		{
			size_t		m = 0;
			double		pred = 0.0;
			km_fit_result fr;
			km_error	err;

			for (size_t i = 0; i < n; i++)
				if (i != out)
				{
					memcpy(Xtr + m * d, X + i * d, d * sizeof(double));
					ytr[m++] = y[i];
				}
			CHECK(km_fit(&fp, Xtr, m, d, ytr, alpha, work, &fr, &err, NULL) == KM_OK,
				  "refit failed");
			for (size_t i = 0; i < m; i++)
				pred += alpha[i] * km_kernel_eval(&fp.kernel, Xtr + i * d, X + out * d, d);
			worst = fmax(worst, fabs((y[out] - pred) - res[out + l * n]));
			sse += (y[out] - pred) * (y[out] - pred);
		}
		CHECK_CLOSE(cand[l].score, sse / n, 1e-8);
	}
	CHECK(worst <= 1e-8, "closed-form vs refit residuals differ by %g", worst);

	/*
	 * The eigendecomposition route (KM_EIGEN_MIN_LAMBDAS or more lambdas)
	 * gives the same residuals as the Cholesky route above.
	 */
	{
		double		many[KM_EIGEN_MIN_LAMBDAS];
		double	   *res2 = malloc(n * KM_EIGEN_MIN_LAMBDAS * sizeof(double));
		km_candidate cand2[KM_EIGEN_MIN_LAMBDAS];
		double		diff = 0.0;

		for (int l = 0; l < KM_EIGEN_MIN_LAMBDAS; l++)
			many[l] = lambdas[l % 3] * (1.0 + (l / 3) * 0.5);
		p.lambdas = many;
		p.n_lambdas = KM_EIGEN_MIN_LAMBDAS;
		p.loo_residuals = res2;
		CHECK(run_select(&p, X, n, d, y, cand2, &best) == KM_OK, "eigen route failed");
		for (int l = 0; l < 3; l++)
		{
			CHECK_CLOSE(cand2[l].score, cand[l].score, 1e-9);
			for (size_t i = 0; i < n; i++)
				diff = fmax(diff, fabs(res2[i + l * n] - res[i + l * n]));
		}
		CHECK(diff <= 1e-8, "eigen vs Cholesky residuals differ by %g", diff);
		free(res2);
	}
	free(X);
	free(y);
	free(res);
	free(Xtr);
	free(ytr);
	free(alpha);
	free(work);
}

void
test_select_gcv_matches_definition(void)
{
	size_t		n = 30;
	int			d = 2;
	double	   *X = unit_rand_vec(n * d, 31);
	double	   *y = unit_rand_vec(n, 32);
	double		lambdas[2] = {0.01, 0.5};
	double		gamma = 1.3;
	km_candidate cand[2];
	int			best;
	km_select_params p;
	km_kernel	k = {KM_KERNEL_RBF, 0, gamma, 0};
	double	   *A = malloc(n * n * sizeof(double));
	double	   *B = malloc(n * n * sizeof(double));

	memset(&p, 0, sizeof(p));
	p.base.kernel = k;
	p.base.method = KM_METHOD_RIDGE;
	p.gammas = &gamma;
	p.n_gammas = 1;
	p.lambdas = lambdas;
	p.n_lambdas = 2;
	p.cv = KM_CV_GCV;
	CHECK(run_select(&p, X, n, d, y, cand, &best) == KM_OK, "select failed");

	for (int l = 0; l < 2; l++)
	{
		/* (I - H) = lambda (K + lambda I)^-1: B := (K + lambda I)^-1 */
		double		rss = 0.0;
		double		tr = 0.0;
		lapack_int	ipiv[30];

		for (size_t j = 0; j < n; j++)
			for (size_t i = 0; i < n; i++)
			{
				A[i + j * n] = km_kernel_eval(&k, X + i * d, X + j * d, d) +
					(i == j ? lambdas[l] : 0.0);
				B[i + j * n] = i == j ? 1.0 : 0.0;
			}
		LAPACKE_dgesv(LAPACK_COL_MAJOR, (lapack_int) n, (lapack_int) n, A,
					  (lapack_int) n, ipiv, B, (lapack_int) n);
		for (size_t i = 0; i < n; i++)
		{
			double		r = 0.0;

			for (size_t j = 0; j < n; j++)
				r += lambdas[l] * B[i + j * n] * y[j];
			rss += r * r;
			tr += lambdas[l] * B[i + i * n];
		}
		CHECK_CLOSE(cand[l].score, (rss / n) / ((tr / n) * (tr / n)), 1e-9);
	}

	/* the eigendecomposition route agrees */
	{
		double		many[KM_EIGEN_MIN_LAMBDAS];
		km_candidate cand2[KM_EIGEN_MIN_LAMBDAS];

		for (int l = 0; l < KM_EIGEN_MIN_LAMBDAS; l++)
			many[l] = l < 2 ? lambdas[l] : 1.0 + l;
		p.lambdas = many;
		p.n_lambdas = KM_EIGEN_MIN_LAMBDAS;
		CHECK(run_select(&p, X, n, d, y, cand2, &best) == KM_OK, "eigen route failed");
		CHECK_CLOSE(cand2[0].score, cand[0].score, 1e-9);
		CHECK_CLOSE(cand2[1].score, cand[1].score, 1e-9);
	}
	free(X);
	free(y);
	free(A);
	free(B);
}

void
test_select_kfold(void)
{
	size_t		n = 103;
	int			d = 2;
	int			fold[103];
	int			other[103];
	int			rfold[103];
	double	   *X = unit_rand_vec(n * d, 41);
	double	   *y = unit_rand_vec(n, 42);
	double	   *rX = malloc(n * d * sizeof(double));
	double	   *ry = malloc(n * sizeof(double));
	double		lambdas[2] = {0.1, 1.0};
	double		gamma = 0.5;
	km_candidate c1[2];
	km_candidate c2[2];
	int			best;
	km_select_params p;

	/* the folds come from the caller (the glue ranks rows by hash) */
	for (size_t i = 0; i < n; i++)
	{
		fold[i] = (int) (i % 5);
		other[i] = (int) ((i / 7) % 5);	/* another partition */
		rfold[n - 1 - i] = fold[i];
		memcpy(rX + (n - 1 - i) * d, X + i * d, d * sizeof(double));
		ry[n - 1 - i] = y[i];
	}

	memset(&p, 0, sizeof(p));
	p.base.kernel.type = KM_KERNEL_RBF;
	p.base.method = KM_METHOD_RIDGE;
	p.gammas = &gamma;
	p.n_gammas = 1;
	p.lambdas = lambdas;
	p.n_lambdas = 2;
	p.cv = KM_CV_KFOLD;
	p.folds = 5;
	CHECK(run_select_folds(&p, X, n, d, y, fold, c1, &best) == KM_OK, "kfold failed");
	CHECK(run_select_folds(&p, X, n, d, y, fold, c2, &best) == KM_OK, "kfold failed");
	CHECK(memcmp(c1, c2, sizeof(c1)) == 0, "same folds, different scores");
	CHECK(c1[0].score > 0.0 && c1[0].score_std > 0.0, "score %g std %g",
		  c1[0].score, c1[0].score_std);
	CHECK(run_select_folds(&p, X, n, d, y, other, c2, &best) == KM_OK, "kfold failed");
	CHECK(c1[0].score != c2[0].score, "other folds give the same scores");

	/* rows in reverse order with their folds: the same scores */
	CHECK(run_select_folds(&p, rX, n, d, ry, rfold, c2, &best) == KM_OK, "kfold failed");
	for (int i = 0; i < 2; i++)
		CHECK(fabs(c1[i].score - c2[i].score) <= 1e-10 * c1[i].score,
			  "reversed rows: score %.17g vs %.17g", c1[i].score, c2[i].score);

	/* a fold out of range, no folds, more folds than rows */
	other[50] = 5;
	CHECK(run_select_folds(&p, X, n, d, y, other, c2, &best) == KM_ERR_INVALID, "fold 5 of 5");
	CHECK(run_select_folds(&p, X, n, d, y, NULL, c2, &best) == KM_ERR_INVALID, "no folds");
	p.folds = 200;
	CHECK(run_select_folds(&p, X, n, d, y, fold, c2, &best) == KM_ERR_INVALID, "200 folds of 103 rows");

	/* a fold no row is in (issue 29): refused, never scored as MSE 0 */
	p.folds = 5;
	for (size_t i = 0; i < n; i++)
		other[i] = (int) (i % 4);
	CHECK(run_select_folds(&p, X, n, d, y, other, c2, &best) == KM_ERR_INVALID,
		  "fold 5 of 5 empty: score %g", c2[0].score);
	free(X);
	free(y);
	free(rX);
	free(ry);
}

/*
 * Beyond about 1,400 rows the Cholesky route's panels of L^-1 grow wider as
 * they lose rows: the workspace must hold the largest, not the first (ASan
 * reports the overflow at 1,900 rows, whose second panel of 1,623 rows is the
 * wider; with 2 BLAS threads the scores were NaN).  One
 * lambda takes that route, ten the tridiagonal one: same LOO score.
 */
void
test_select_cholesky_route_large(void)
{
	size_t		n = 1900;
	int			d = 4;
	double	   *X = unit_rand_vec(n * d, 31);
	double	   *y = unit_rand_vec(n, 32);
	double		one[1] = {0.1};
	double		ten[10] = {0.1, 0.2, 0.3, 0.5, 1, 2, 3, 5, 8, 13};
	double		gamma = 0.25;
	km_candidate c1[1];
	km_candidate c10[10];
	int			best;
	km_select_params p;

	memset(&p, 0, sizeof(p));
	p.base.kernel.type = KM_KERNEL_RBF;
	p.base.kernel.gamma = gamma;
	p.base.method = KM_METHOD_RIDGE;
	p.gammas = &gamma;
	p.n_gammas = 1;
	p.cv = KM_CV_LOO;
	p.lambdas = one;
	p.n_lambdas = 1;
	CHECK(run_select(&p, X, n, d, y, c1, &best) == KM_OK, "one lambda (Cholesky route) is scored");
	p.lambdas = ten;
	p.n_lambdas = 10;
	CHECK(run_select(&p, X, n, d, y, c10, &best) == KM_OK, "ten lambdas (tridiagonal route) are scored");
	CHECK(isfinite(c1[0].score), "the Cholesky route's score is finite");
	CHECK_CLOSE(c1[0].score, c10[0].score, 1e-9);
	free(X);
	free(y);
}

/*
 * A toy route for the grid loop: it logs each call ('g' gamma setup, 's' a
 * candidate, 'c' a column, 'n' no candidate), scores candidate i by
 * scores[i], and fails at candidate fail_at (>= 0).
 */
typedef struct toy_route
{
	const double *scores;
	int			n_lambdas;
	int			fail_at;
	char		log[64];
	int			calls;
	int			none_count;
	bool		mismatch;		/* a candidate came without its gamma and lambda */
	const double *gammas;
	const double *lambdas;
} toy_route;

static void
toy_log(toy_route *t, char what, int i)
{
	if (t->calls + 2 < (int) sizeof(t->log))
	{
		t->log[t->calls++] = what;
		t->log[t->calls++] = (char) ('0' + i);
		t->log[t->calls] = '\0';
	}
}

static km_status
toy_gamma(void *arg, int g, double gamma, km_error *err)
{
	toy_route  *t = arg;

	(void) err;
	t->mismatch |= gamma != t->gammas[g];
	toy_log(t, 'g', g);
	return KM_OK;
}

static km_status
toy_score(void *arg, int index, km_candidate *cand, km_error *err)
{
	toy_route  *t = arg;

	toy_log(t, 's', index);
	if (index == t->fail_at)
		return km_fail(err, KM_ERR_INVALID, "toy failure", "At candidate %d.", index);
	t->mismatch |= cand->gamma != t->gammas[index / t->n_lambdas] ||
		cand->lambda != t->lambdas[index % t->n_lambdas];
	cand->score = t->scores[index];
	cand->score_std = 0.0;
	return KM_OK;
}

static km_status
toy_column(void *arg, int g, km_candidate *column, km_error *err)
{
	toy_route  *t = arg;

	(void) err;
	toy_log(t, 'c', g);
	for (int l = 0; l < t->n_lambdas; l++)
	{
		t->mismatch |= column[l].gamma != t->gammas[g] ||
			column[l].lambda != t->lambdas[l];
		column[l].score = t->scores[g * t->n_lambdas + l];
		column[l].score_std = 0.0;
	}
	return KM_OK;
}

static km_status
toy_none(void *arg, int count, km_error *err)
{
	toy_route  *t = arg;

	toy_log(t, 'n', 0);
	t->none_count = count;
	return km_fail(err, KM_ERR_INACCURATE, "toy: no candidate", "None of %d.", count);
}

static km_status
toy_search(toy_route *t, bool column, int *best, km_error *err)
{
	static const double gammas[3] = {2.0, 0.5, 1.0};
	static const double lambdas[2] = {0.1, 1.0};
	km_grid_route route = {.arg = t, .gamma = toy_gamma, .score = toy_score,
		.none = toy_none};
	km_candidate cand[6];

	t->gammas = gammas;
	t->lambdas = lambdas;
	t->n_lambdas = 2;
	t->calls = 0;
	t->log[0] = '\0';
	t->mismatch = false;
	if (column)
		route.column = toy_column;
	return km_grid_search(gammas, 3, lambdas, 2, &route, cand, best, err);
}

void
test_select_grid_loop(void)
{
	/* candidates (2, 0.1) (2, 1) (0.5, 0.1) (0.5, 1) (1, 0.1) (1, 1) */
	const double tied[6] = {3.0, 1.0, NAN, 1.0, 1.0, 2.0};
	const double none[6] = {NAN, NAN, NAN, NAN, NAN, NAN};
	toy_route	t;
	km_error	err;
	int			best;

	memset(&t, 0, sizeof(t));
	t.fail_at = -1;
	t.scores = tied;
	/* gamma major, each gamma's setup first; ties: larger lambda, then smaller gamma */
	CHECK(toy_search(&t, false, &best, &err) == KM_OK, "the toy search succeeds");
	CHECK(strcmp(t.log, "g0s0s1g1s2s3g2s4s5") == 0, "order %s", t.log);
	CHECK(!t.mismatch, "every candidate has its gamma and lambda");
	CHECK(best == 3, "the tie goes to (0.5, 1): best %d", best);

	/* the whole-column shortcut replaces the candidates, same winner */
	CHECK(toy_search(&t, true, &best, &err) == KM_OK, "the column search succeeds");
	CHECK(strcmp(t.log, "g0c0g1c1g2c2") == 0, "column order %s", t.log);
	CHECK(!t.mismatch && best == 3, "column: best %d", best);

	/* no candidate scores: the route's own error, after every candidate */
	t.scores = none;
	CHECK(toy_search(&t, false, &best, &err) == KM_ERR_INACCURATE, "no candidate fails");
	CHECK(strcmp(t.log, "g0s0s1g1s2s3g2s4s5n0") == 0, "order %s", t.log);
	CHECK(best == -1 && t.none_count == 6, "best %d, count %d", best, t.none_count);
	CHECK(strcmp(err.message, "toy: no candidate") == 0, "message %s", err.message);

	/* a route's failure ends the search with it */
	t.scores = tied;
	t.fail_at = 2;
	CHECK(toy_search(&t, false, &best, &err) == KM_ERR_INVALID, "the failure is returned");
	CHECK(strcmp(t.log, "g0s0s1g1s2") == 0, "stops at once: %s", t.log);
	CHECK(best == -1 && strcmp(err.message, "toy failure") == 0, "best %d", best);
}
