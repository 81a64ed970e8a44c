/*
 * pca_info.h - kernel_model_info's kernel PCA keys (pca_info.c).
 */
#ifndef KM_PCA_INFO_H
#define KM_PCA_INFO_H

#include "postgres.h"

#include "json.h"

/*
 * The arrays of the PCA section of the model b into j: "eigenvalues",
 * "explained_variance_ratio" (each over the section's total, the trace of
 * the centred matrix) and "explained_variance" (their sum); nothing for a
 * model without one.
 */
void		km_pca_describe(KmJson *j, bytea *b);

#endif							/* KM_PCA_INFO_H */
