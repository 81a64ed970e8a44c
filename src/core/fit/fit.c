/*
 * fit.c - the fit entry point that hands the work to a method (ridge.c,
 * lms.c) through the registry (fit.h).
 */
#include <string.h>

#include "fit.h"

size_t
km_fit_workspace_doubles(km_method method, size_t n)
{
	const km_method_ops *ops = km_method_get(method);
	size_t		own;

	/* n^2 + a few n must fit in size_t bytes */
	if (ops == NULL || n == 0 || n > ((size_t) 1 << 28))
		return 0;
	own = ops->workspace_doubles(n);
	if (own == 0)
		return 0;
	/* K, norms, then the method's own */
	return n * n + n + own;
}

size_t
km_fit_first_row(size_t j, size_t n, int d)
{
	size_t		width = km_gram_panel_width(n, d);

	/* the Gram panels; the Cholesky blocks (KM_CHOL_BLOCK) stay below them */
	return j / width * width;
}

km_status
km_fit(const km_fit_params *p, const double *X, size_t n, int d,
	   const double *y, double *alpha, double *work, km_fit_result *res,
	   km_error *err, km_interrupt_fn interrupt)
{
	const km_method_ops *ops = km_method_get(p->method);
	double	   *K = work;
	double	   *norms = work + n * n;
	km_status	st;

	memset(res, 0, sizeof(*res));
	if (ops == NULL)
		return km_fail(err, KM_ERR_INVALID, "unknown training method",
					   "Method %d is not a method of this build of kernel_ml.",
					   (int) p->method);
	km_row_norms(&p->kernel, X, n, d, norms);
	st = ops->fit(p, X, n, d, y, alpha, K, norms, norms + n, res, err,
				  interrupt);
	if (st != KM_OK)
		km_method_fill_hint(p->method, err);
	return st;
}
