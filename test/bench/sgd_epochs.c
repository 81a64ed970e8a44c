/*
 * sgd_epochs.c - how far kernelized SGD (src/core/methods/sgd.h) is above the
 * optimum after a number of epochs, for seeds 1..5, on the unit tests'
 * breast cancer problem (test/unit/fixtures/logistic_data.h): the table in
 * sgd.h.  make test/bench/sgd_epochs && test/bench/sgd_epochs
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels.h"
#include "sgd.h"
#include "solve.h"
#include "../unit/fixtures/logistic_data.h"

int
main(void)
{
	size_t		n = FX_BC_N;
	int			d = FX_BC_D;
	double	   *Xs = malloc(n * d * sizeof(double));
	double	   *mean = malloc(d * sizeof(double));
	double	   *scale = malloc(d * sizeof(double));
	double	   *norms = malloc(n * sizeof(double));
	double	   *K = malloc(n * n * sizeof(double));
	double	   *alpha = malloc(n * sizeof(double));
	double	   *work = malloc(n * sizeof(double));
	km_kernel	k = {KM_KERNEL_RBF, 3, 1.0 / d, 0.0};
	const int	epochs[] = {100, 200, 400, 800};

	km_standardize(fx_bc_X, n, d, mean, scale, Xs);
	km_row_norms(&k, Xs, n, d, norms);
	if (!km_gram_lower(&k, Xs, n, d, norms, K, n, NULL))
		return 1;
	for (int l = 0; l < 2; l++)
	{
		printf("%-8s", l == 0 ? "logistic" : "hinge");
		for (int e = 0; e < 4; e++)
		{
			double		worst = 0.0;

			for (uint64_t seed = 1; seed <= 5; seed++)
			{
				km_sgd_params p = {l == 0 ? KM_SGD_LOGISTIC : KM_SGD_HINGE,
								   FX_LAMBDA, true, 0.0, epochs[e], seed};
				km_sgd_result res;
				km_error	err;
				double		b;

				if (km_sgd_fit(&p, K, n, fx_bc_y, NULL, alpha, &b, work, &res, &err,
							   NULL) != KM_OK)
					return 1;
				worst = fmax(worst, res.objective / (l == 0 ? fx_bc_J[0] : fx_bc_J_svm) - 1);
			}
			printf("  %d epochs: %.2f%%", epochs[e], 100 * worst);
		}
		printf("\n");
	}
	return 0;
}
