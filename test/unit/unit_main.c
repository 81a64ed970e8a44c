/*
 * unit_main.c - runs the core unit tests and prints "N passed, N failed".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "unit.h"

int			unit_failures = 0;

#define UNIT_TESTS(X) \
	X(test_kernels_definitions) \
	X(test_kernels_gram_matches_eval) \
	X(test_kernels_polysum_feature_map) \
	X(test_kernels_psd) \
	X(test_kernels_parameter_rule) \
	X(test_method_registry) \
	X(test_model2_roundtrip) \
	X(test_model2_truncation) \
	X(test_model2_bitflips) \
	X(test_model2_sections) \
	X(test_model2_invalid_fields) \
	X(test_model3_roundtrip) \
	X(test_model3_truncation) \
	X(test_model3_bitflips) \
	X(test_model3_invalid) \
	X(test_model3_old_outputs) \
	X(test_model3_sections) \
	X(test_score_exact) \
	X(test_score_rff) \
	X(test_score_block) \
	X(test_score_overflow) \
	X(test_method_unknown_is_an_error) \
	X(test_method_task_table) \
	X(test_method_answers) \
	X(test_solve_standardize) \
	X(test_solve_cholesky_blocked) \
	X(test_solve_ridge_residual) \
	X(test_solve_jitter_and_not_pd) \
	X(test_solve_lms_recurrence) \
	X(test_solve_lms_reaches_ridge) \
	X(test_model_roundtrip) \
	X(test_model_truncation) \
	X(test_model_bitflips) \
	X(test_model_newer_version) \
	X(test_model_random_bytes) \
	X(test_model_invalid_fields) \
	X(test_model_selection) \
	X(test_select_loo_matches_refits) \
	X(test_select_gcv_matches_definition) \
	X(test_select_kfold) \
	X(test_pipeline_matches_steps) \
	X(test_pipeline_centre_overflow) \
	X(test_pipeline_every_task_has_a_road) \
	X(test_pipeline_approx_nystrom_is_exact) \
	X(test_pipeline_approx_primal) \
	X(test_pipeline_approx_needs_hashes) \
	X(test_pipeline_approx_kfold) \
	X(test_pipeline_approx_classes) \
	X(test_pipeline_approx_blocks) \
	X(test_pipeline_learn_gather) \
	X(test_pipeline_pass_combine) \
	X(test_cg_matches_direct) \
	X(test_cg_stops_at_max_iter) \
	X(test_cg_options) \
	X(test_newton_cg_matches_direct) \
	X(test_cg_sample_state) \
	X(test_cg_precondition_sample) \
	X(test_cg_sample_matches_direct) \
	X(test_pipeline_approx_classes_kfold) \
	X(test_select_cholesky_route_large) \
	X(test_select_grid_loop) \
	X(test_numerics_all_finite) \
	X(test_numerics_standardize_extremes) \
	X(test_numerics_standardize_row_overflow) \
	X(test_numerics_cosine_scaled) \
	X(test_numerics_gram_overflow) \
	X(test_numerics_row_dot_overflow) \
	X(test_numerics_ridge_real_rmse) \
	X(test_numerics_ridge_inaccurate) \
	X(test_numerics_gram_times) \
	X(test_numerics_gram_times_norm) \
	X(test_eigen_tridiagonal_matches_dsyevd) \
	X(test_eigen_spectrum_matches_dsyevd) \
	X(test_eigen_closed_form_matches_dsyevd) \
	X(test_eigen_top_random_psd) \
	X(test_eigen_top_clustered) \
	X(test_eigen_top_kernel) \
	X(test_eigen_top_edges) \
	X(test_crc_check_values) \
	X(test_encoder_round_trip) \
	X(test_encoder_statistics) \
	X(test_encoder_crafted) \
	X(test_encoder_target) \
	X(test_encoder_model_section) \
	X(test_crc_extension_model) \
	X(test_metrics_definitions) \
	X(test_gp_closed_form) \
	X(test_gp_section_fit_keeps) \
	X(test_gp_section_crafted) \
	X(test_gp_approx_nystrom) \
	X(test_gp_approx_rff) \
	X(test_gp_approx_crafted) \
	X(test_gp_approx_clip) \
	X(test_drift_chi2) \
	X(test_drift_statistic) \
	X(test_drift_reference_bytes) \
	X(test_pca_learner) \
	X(test_pca_section_crafted) \
	X(test_metrics_combine) \
	X(test_metrics_per_class) \
	X(test_accum_layout) \
	X(test_accum_gram_sums) \
	X(test_accum_validate) \
	X(test_classify_class_order) \
	X(test_classify_class_table) \
	X(test_regression_label_like) \
	X(test_classify_class_weights) \
	X(test_classify_decide) \
	X(test_classify_proba) \
	X(test_classify_metrics) \
	X(test_proba_log_sigmoid) \
	X(test_proba_ovr_underflow) \
	X(test_proba_ordinary_unchanged) \
	X(test_proba_logistic_extreme) \
	X(test_proba_platt_extreme) \
	X(test_logistic_binary) \
	X(test_logistic_multinomial) \
	X(test_logistic_multinomial_weights) \
	X(test_logistic_invalid) \
	X(test_sgd_reaches_optimum) \
	X(test_primal_newton) \
	X(test_primal_fixtures) \
	X(test_centres_leverage_scores) \
	X(test_centres_leverage_grid) \
	X(test_centres_leverage_sample) \
	X(test_centres_kmeans) \
	X(test_centres_names) \
	X(test_primal_errors) \
	X(test_primal_stall) \
	X(test_primal_add_pieces) \
	X(test_primal_pass_split_combine) \
	X(test_primal_pass_first_step) \
	X(test_primal_pass_block_metrics) \
	X(test_pass_points_rebuild) \
	X(test_pass_points_truncated) \
	X(test_pass_points_bitflips) \
	X(test_pass_points_tiny_trace) \
	X(test_pass_points_findings) \
	X(test_pass_points_score_state) \
	X(test_score_pass_exact) \
	X(test_accum_gram_pieces) \
	X(test_svm_breast_cancer) \
	X(test_svm_wine_ovo) \
	X(test_svm_platt) \
	X(test_svm_couple) \
	X(test_svm_edge_cases) \
	X(test_svm_interrupts) \
	X(test_svr_diabetes) \
	X(test_svr_sinc) \
	X(test_svr_primal) \
	X(test_svr_errors) \
	X(test_oneclass_exact) \
	X(test_oneclass_features) \
	X(test_oneclass_edges) \
	X(test_oneclass_learner) \
	X(test_kpca_iris) \
	X(test_kpca_synthetic) \
	X(test_kpca_errors) \
	X(test_kpca_nystrom) \
	X(test_svm_cols_columns) \
	X(test_svm_cols_breast_cancer) \
	X(test_svm_cols_wine_ovo) \
	X(test_svm_cols_fit_classes) \
	X(test_svm_cols_small_cache) \
	X(test_basis_order_and_combine) \
	X(test_basis_untrusted) \
	X(test_approx_features_match_eval) \
	X(test_approx_nystrom_all_rows_is_exact_ridge) \
	X(test_approx_gcv_matches_brute_force) \
	X(test_approx_rff_error_falls_as_root_d) \
	X(test_approx_combine_matches_one_pass) \
	X(test_approx_errors) \
	X(test_approx_model_fill_roundtrip) \
	X(test_approx_nystrom_ill_conditioned_centres) \
	X(test_approx_repr_table) \
	X(test_approx_repr_steps) \
	X(test_approx_rff_draw_interruptible) \
	X(test_approx_gcv_winner_is_best_candidate) \
	X(test_defaults_stratified_folds) \
	X(test_defaults_tie_rule) \
	X(test_defaults_sigest) \
	X(test_defaults_classifier_lambda) \
	X(test_progress_no_repeated_line) \
	X(test_progress_estimate) \
	X(test_progress_cholesky_panels) \
	X(test_options_suggest_distance) \
	X(test_options_suggest_hints)

#define DECLARE(name) void name(void);
UNIT_TESTS(DECLARE)

int
main(void)
{
	int			passed = 0;
	int			failed = 0;

#define RUN(name) \
	do { \
		unit_failures = 0; \
		name(); \
		if (unit_failures == 0) { passed++; printf("ok - %s\n", #name); } \
		else { failed++; printf("not ok - %s (%d checks failed)\n", #name, unit_failures); } \
	} while (0);
	UNIT_TESTS(RUN)

	printf("%d passed, %d failed\n", passed, failed);
	return failed == 0 ? 0 : 1;
}

double
unit_urand(unsigned long long *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return (double) (*state >> 11) / 9007199254740992.0 - 0.5;
}

double *
unit_rand_vec(size_t len, unsigned long long seed)
{
	double	   *v = malloc(len * sizeof(double));

	for (size_t i = 0; i < len; i++)
		v[i] = unit_urand(&seed);
	return v;
}

unsigned char *
unit_copy_bytes(const unsigned char *src, size_t len)
{
	unsigned char *p = malloc(len ? len : 1);

	if (len > 0)
		memcpy(p, src, len);
	return p;
}

double *
unit_full_gram(const km_kernel *k, const double *X, size_t n, int d)
{
	double	   *K = malloc(n * n * sizeof(double));
	double	   *norms = malloc(n * sizeof(double));

	km_row_norms(k, X, n, d, norms);
	km_gram_lower(k, X, n, d, norms, K, n, NULL);
	km_symmetrize(K, n, n, NULL);
	free(norms);
	return K;
}

double
unit_rel_diff(const double *a, const double *b, size_t n)
{
	double		dm = 0,
				bm = 0;

	for (size_t i = 0; i < n; i++)
	{
		dm = fmax(dm, fabs(a[i] - b[i]));
		bm = fmax(bm, fabs(b[i]));
	}
	return dm / bm;
}
