/*
 * Writes a few valid models, in format 2 and in format 1 (0.1.0's), to the
 * fuzz corpus directory given as argv[1].
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encoder.h"
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

/*
 * m in format 2 as name and, if format 1 can hold it (one output, exact),
 * as name_v1.
 */
static void
write_model(const char *dir, const char *name, const km_model *m)
{
	km_model_shape shape = km_model_shape_of(m);
	bool		v1 = shape.q == 1 && shape.approximation == KM_APPROX_EXACT &&
		shape.n_classes == 0;
	size_t		size = km_model_size(&shape);
	size_t		size1 = km_model_v1_size(m->n_train, m->n_features, m->n_candidates);
	uint8_t    *buf = malloc(size > size1 ? size : size1);
	char		v1name[256];

	if (size == 0)
	{
		fprintf(stderr, "%s: no size\n", name);
		exit(1);
	}
	km_model_encode(m, buf);
	write_bytes(dir, name, buf, size);
	if (v1)
	{
		km_model_encode_v1(m, buf);
		snprintf(v1name, sizeof(v1name), "%s_v1", name);
		write_bytes(dir, v1name, buf, size1);
	}
	free(buf);
}

/* The first registered classification method, if any. */
static bool
classification_method(km_method *method)
{
	for (int i = KM_METHOD_FIRST; i <= KM_METHOD_LAST; i++)
		if (km_method_get((km_method) i) &&
			km_method_task((km_method) i) == KM_TASK_CLASSIFICATION)
		{
			*method = (km_method) i;
			return true;
		}
	return false;
}

/* Seeds of the approximate and classification shapes, from the ridge m. */
static void
write_new_shapes(const char *dir, km_model m)
{
	static const double W[2 * 3] = {0.5, -1.25, 2.0, 0.75, 0.0, -0.5};
	static const double b[3] = {0.1, 3.0, 6.0};
	static const double alpha3[3 * 3] = {1, -1, 0.5, 0.25, 2, -2, 3, 0, -0.5};
	static const double intercepts[3] = {0.5, -0.25, 1.0};
	static const double pa[3] = {-1.5, -2.0, -0.5};
	static const double pb[3] = {0.1, 0.0, -0.2};
	static const uint64_t counts[3] = {4, 5, 6};
	static const char labels[] = "ant\0bee\0cat";
	static const double R[3 * 4 / 2] = {1.5, -0.25, 0.5, 1.0, 0.125, 2.0};

	m.approximation = KM_APPROX_NYSTROM;
	m.components = 4;
	m.rank = 2;
	m.approx_eps = 1e-10;
	m.approx_seed = 42;
	write_model(dir, "ridge_nystrom", &m);
	/* with the factor of the GP reading (GP_APPROX section, model.h) */
	m.gp_factor = R;
	m.gp_amplitude = 0.4;
	m.gp_logdet_half = -1.25;
	write_model(dir, "ridge_nystrom_gp", &m);
	m.gp_factor = NULL;

	m.approximation = KM_APPROX_RFF;
	m.components = 3;
	m.rank = 3;
	m.approx_eps = 0.0;
	m.X = NULL;
	m.rff_W = W;
	m.rff_b = b;
	write_model(dir, "ridge_rff", &m);
	m.gp_factor = R;
	write_model(dir, "ridge_rff_gp", &m);
	m.gp_factor = NULL;

	if (!classification_method(&m.method))
		return;
	m.task = KM_TASK_CLASSIFICATION;
	m.approximation = KM_APPROX_EXACT;
	m.components = m.rank = 0;
	m.approx_seed = 0;
	m.rff_W = m.rff_b = NULL;
	m.X = (const double[]) {1, 2, 3, 4, 5, 6};
	m.n_outputs = 3;
	m.alpha = alpha3;
	m.intercepts = intercepts;
	m.intercept = intercepts[0];
	m.n_classes = 3;
	m.label_type = KM_LABEL_TEXT;
	m.multiclass = KM_MULTICLASS_OVO;
	m.labels = labels;
	m.labels_bytes = sizeof(labels);
	m.class_counts = counts;
	m.has_probability = true;
	m.prob_A = pa;
	m.prob_B = pb;
	write_model(dir, "classifier_ovo", &m);
}

/*
 * Kernel PCA (the transform task, PCA section), exact and nystrom, from the
 * ridge m: two components over its three rows.
 */
static void
write_pca(const char *dir, km_model m)
{
	static const double coef[3 * 2] = {0.5, -0.25, -0.25, 0.1, 0.2, -0.3};
	static const double intercepts[2] = {-0.125, 0.0625};
	static const double eigenvalues[2] = {2.5, 0.5};
	uint32_t	dimensions = 2;

	if (!km_method_from_name("pca", &m.method))
		return;
	m.task = km_method_task(m.method);
	m.fit_intercept = false;
	m.lambda = 0.0;
	m.n_outputs = 2;
	m.alpha = coef;
	m.intercepts = intercepts;
	m.intercept = intercepts[0];
	m.eigenvalues = eigenvalues;
	m.eigen_total = 3.5;
	m.converged = true;
	memset(&m.method_data, 0, sizeof(m.method_data));
	memcpy(m.method_data.bytes, &dimensions, sizeof(dimensions));
	write_model(dir, "pca_rbf", &m);
	m.approximation = KM_APPROX_NYSTROM;
	m.components = 4;
	m.rank = 3;
	m.approx_eps = 1e-12;
	m.approx_seed = 7;
	write_model(dir, "pca_nystrom", &m);
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
	/* with the GP values an exact ridge fit keeps (GP section, model.h) */
	m.has_gp = true;
	m.gp_amplitude = 0.4;
	m.gp_logdet_half = -1.25;
	write_model(argv[1], "ridge_gp", &m);
	m.has_gp = false;

	/* a table model: one text column, two categories (encoder.h) */
	{
		static const char *const cats[] = {"a", "b"};
		km_encoder_column ec = {"c", "text", KM_COLUMN_CATEGORY, true, 0.0, 1, 2, cats, 0};
		km_encoder	e = {1, 2, KM_IMPUTE_MOST_FREQUENT, KM_UNKNOWN_IGNORE, &ec, NULL, NULL, KM_COLUMN_NUMBER};
		uint8_t		payload[256];

		km_encoder_write(&e, payload);
		m.encoder = payload;
		m.encoder_bytes = (uint32_t) km_encoder_size(&e);
		write_model(argv[1], "ridge_encoder", &m);
		/* version 2: the target column too */
		e.target = "price";
		e.target_type = "numeric";
		e.target_kind = KM_COLUMN_NUMBER;
		km_encoder_write(&e, payload);
		m.encoder_bytes = (uint32_t) km_encoder_size(&e);
		write_model(argv[1], "ridge_encoder_target", &m);
		m.encoder = NULL;
		m.encoder_bytes = 0;
	}

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

	m.method = KM_METHOD_RIDGE;
	m.kernel.type = KM_KERNEL_RBF;
	write_new_shapes(argv[1], m);
	write_pca(argv[1], m);
	return 0;
}
