/*
 * Writes a few valid models, in format 2 and in format 1 (0.1.0's), to the
 * fuzz corpus directory given as argv[1].
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

static void
write_bytes(const char *dir, const char *name, const uint8_t *buf, size_t size)
{
	char		path[4096];
	FILE	   *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(buf, 1, size, f) != size)
	{
		perror(path);
		exit(1);
	}
	fclose(f);
}

/* m in both formats: name (format 2) and name_v1. */
static void
write_model(const char *dir, const char *name, const km_model *m)
{
	size_t		size = km_model_size(m->method, m->n_train, m->n_features, m->n_candidates);
	size_t		size1 = km_model_v1_size(m->n_train, m->n_features, m->n_candidates);
	uint8_t    *buf = malloc(size > size1 ? size : size1);
	char		v1name[256];

	km_model_encode(m, buf);
	write_bytes(dir, name, buf, size);
	km_model_encode_v1(m, buf);
	snprintf(v1name, sizeof(v1name), "%s_v1", name);
	write_bytes(dir, v1name, buf, size1);
	free(buf);
}

int
main(int argc, char **argv)
{
	double		mean[2] = {0.5, -1.0},
				scale[2] = {1.0, 2.0},
				alpha[3] = {0.25, -0.5, 1.0},
				X[6] = {1, 2, 3, 4, 5, 6};
	km_candidate cand[2] = {{0.5, 0.1, 1.0, 0.0}, {0.5, 1.0, 2.0, 0.0}};
	km_model	m;

	if (argc != 2)
		return 2;
	memset(&m, 0, sizeof(m));
	m.writer_version[1] = 1;
	m.kernel.type = KM_KERNEL_RBF;
	m.kernel.gamma = 0.5;
	m.kernel.degree = 3;
	m.kernel.coef0 = 1.0;
	m.method = KM_METHOD_RIDGE;
	m.task = KM_TASK_REGRESSION;
	m.standardize = true;
	m.fit_intercept = true;
	m.n_train = 3;
	m.n_features = 2;
	m.rows_seen = 3;
	m.lambda = 1.0;
	m.mean = mean;
	m.scale = scale;
	m.alpha = alpha;
	m.X = X;
	write_model(argv[1], "ridge_rbf", &m);

	m.n_candidates = 2;
	m.cv = KM_CV_LOO;
	m.best = 0;
	m.candidates = cand;
	write_model(argv[1], "ridge_selection", &m);

	m.n_candidates = 0;
	m.cv = KM_CV_NONE;
	m.candidates = NULL;
	m.method = KM_METHOD_LMS;
	m.kernel.type = KM_KERNEL_POLY;
	m.max_iter = 10;
	m.iterations = 10;
	m.learning_rate = 0.01;
	write_model(argv[1], "lms_poly", &m);
	return 0;
}
