/*
 * repr.h - the representation table: how a model represents f(x)
 * (core, no PostgreSQL headers).
 *
 * One km_repr_ops row per representation, one file each (exact.c,
 * nystrom.c, rff.c), listed by one registry (reprs.c, as tasks.c lists
 * the tasks of task.h):
 *   exact:   the kernel expansion over every training row;
 *   nystrom: m centres (rows of the table) kept by a basis pass,
 *            z(x) = (K(c_1, x), ..., K(c_m, x)), penalty lambda K_mm;
 *   rff:     m random Fourier features drawn from the seed,
 *            z(x) = sqrt(2 / D) cos(W^T x + b), penalty lambda I.
 * The ids are approx.h's km_approx values (stored in models and bases as
 * one byte).  Code above this file asks the row what it needs instead of
 * naming a representation.  This file does not include approx.h (which
 * includes it), so it speaks of the id as an integer and of the basis
 * through km_feature_map.
 */
#ifndef KM_REPR_H
#define KM_REPR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core.h"
#include "kernels.h"

/*
 * The steps that make a representation's basis, in the order its list
 * gives them (km_repr_basis_steps); the learner walks the list
 * (learn/learner.c, learn/pipeline_approx.c, learn/pipeline_centres.c) and
 * runs each step's pass, or its work when it has none.  Not stored.
 */
typedef enum km_basis_step
{
	KM_BASIS_GATHER = 0,		/* one pass: every row as it is (the exact expansion) */
	KM_BASIS_SAMPLE,			/* one pass: the scaler's sums and the reservoir of the
								 * smallest hashes (basis.h) */
	KM_BASIS_DRAW,				/* no pass: the random features drawn from the seed */
	KM_BASIS_KMEANS,			/* refine: Lloyd's iterations over the centres, a pass
								 * each (centres.h) */
	KM_BASIS_LEVERAGE			/* refine: a leverage sample of the centres, one pass */
} km_basis_step;

/* Steps of a basis at most. */
#define KM_BASIS_MAX_STEPS 3

/* The part of a basis that maps a standardized row to its m features. */
typedef struct km_feature_map
{
	km_kernel	kernel;
	uint32_t	d;				/* features of a row */
	uint32_t	m;				/* components */
	const double *centres;		/* m x d row-major, or NULL */
	const double *W;			/* d x m row-major, or NULL */
	const double *b;			/* m, or NULL */
} km_feature_map;

/*
 * The memory a training under r plans for n rows, before they are read
 * (the memory host, rowset.c, refuses from it:
 * km_repr_memory_plan): a basis that gathers
 * every row is fitted on their n x n kernel matrix, which grows as the
 * rows arrive (the method sizes it, rows_squared > 0 then); a feature
 * map's fit holds its m x m sums and solve, whatever the rows, known
 * before the first row (components > 0 then).
 */
typedef struct km_repr_memory
{
	double		rows_squared;	/* n * n, or 0 */
	uint32_t	components;		/* m of the m x m work, or 0 */
} km_repr_memory;

/* The kernels field of a representation that serves them all. */
#define KM_REPR_ALL_KERNELS UINT32_C(0xFFFFFFFF)

typedef struct km_repr_ops
{
	int			id;				/* its km_approx value (approx.h) */
	const char *name;			/* the "approximation" option's spelling */
	const char *described;		/* what a model of it is, in an error's words */

	/*
	 * An m-component feature map built by a basis pass: the value of the
	 * "approximation" option, a model with an approximation section.
	 * false: the exact expansion, what a model is without the option.
	 */
	bool		approximate;
	/* the kernels it serves: bit (1 << km_kernel_type) */
	uint32_t	kernels;
	/*
	 * Its basis pass keeps m rows of the table as centres (a reservoir of
	 * at most "components"), and the penalty is lambda K_mm over them: the
	 * solve factors K_mm + eps I (an eps ladder) and the model's rank and
	 * eps are the solve's.
	 */
	bool		centres;
	/*
	 * Its features are drawn from the seed (W and b): the basis keeps
	 * exactly "components" of them and no row; the model keeps W and b
	 * (its RFF section), its rank is m and its eps 0.
	 */
	bool		drawn;
	/* the model's expansion keeps n_train rows X (training rows or centres) */
	bool		keeps_rows;

	/*
	 * Its model sections live with their codec, a layer up, chosen from
	 * what this row does (model_sections_repr.c, km_repr_sections in
	 * model_section.h: a feature map keeps APPROXIMATION, a draw step RFF),
	 * so that this row points at nothing above it.  A new representation
	 * that stores something of its own adds its list there (the next free
	 * tag of model.h's list); model_format.c is not edited.
	 */

	/*
	 * Z (rows x m, row-major) := z(x_i) for standardized rows X (rows x
	 * d); work has features_doubles(d, m, rows) doubles (0 on overflow).
	 * Returns true when Z is known finite (the caller checks otherwise).
	 * NULL for the exact expansion, which has no feature map.
	 */
	bool		(*features) (const km_feature_map *f, const double *X, size_t rows,
							 double *Z, double *work);
	size_t		(*features_doubles) (uint32_t d, uint32_t m, size_t rows);

	/*
	 * Its basis as a list of steps into steps (KM_BASIS_MAX_STEPS): the
	 * exact expansion gathers the rows; rff samples (the scaler) and draws;
	 * nystrom samples, then the refine passes "centers" (centres, a
	 * km_centres of centres.h) asks.  Returns how many.
	 */
	int			(*basis_steps) (int centres, km_basis_step *steps);

	/*
	 * Doubles of the rows its model keeps for n_train rows of d features
	 * (km_repr_kept_doubles below).
	 */
	uint64_t	(*kept_doubles) (uint64_t n_train, uint64_t d);

	/* Its memory plan for n rows (km_repr_memory above). */
	km_repr_memory (*memory) (double n, uint32_t components);
} km_repr_ops;

/* The rows, one file each (exact.c, nystrom.c, rff.c); reprs.c lists them by id. */
extern const km_repr_ops km_repr_exact;
extern const km_repr_ops km_repr_nystrom;
extern const km_repr_ops km_repr_rff;

/* The row of id, or NULL when it names no representation. */
const km_repr_ops *km_repr_get(long long id);

/* The row of id, or the exact expansion's when it names none (readers that validate later). */
const km_repr_ops *km_repr_lookup(long long id);

/* The row spelled name, or NULL. */
const km_repr_ops *km_repr_by_name(const char *name);

/*
 * The "approximation" option's value: the row spelled name when it has a
 * basis (the exact expansion is the option's absence), else NULL; and the
 * spellings it takes, at most max of them into names (returns how many).
 */
const km_repr_ops *km_repr_by_option(const char *name);
int			km_repr_option_names(const char **names, int max);

/* What a model is without the "approximation" option: the exact expansion. */
const km_repr_ops *km_repr_default(void);

/* r's basis as its list of steps (basis_steps above); returns how many. */
int			km_repr_basis_steps(const km_repr_ops *r, int centres,
								km_basis_step steps[KM_BASIS_MAX_STEPS]);

/*
 * Components a basis of r holds over n rows when "components" asks for
 * asked: a basis that keeps rows as centres keeps at most n of them.
 */
uint32_t	km_repr_basis_components(const km_repr_ops *r, uint32_t asked, size_t n);

/*
 * Doubles of the rows a model's expansion under r keeps for n_train rows
 * of d features (the model's X: the training rows, or nystrom's centres):
 * n_train * d, or 0 for a representation that keeps none (rff).
 */
uint64_t	km_repr_kept_doubles(const km_repr_ops *r, uint64_t n_train, uint64_t d);

/* r's memory plan for n rows and "components" asked (its memory step above). */
km_repr_memory km_repr_memory_plan(const km_repr_ops *r, double n, uint32_t components);

/*
 * Whether r's basis with "centers" centres takes step s (its list,
 * basis_steps above): e.g. KM_BASIS_GATHER, every row held in one place
 * as it is.
 */
bool		km_repr_basis_takes(const km_repr_ops *r, int centres, km_basis_step s);

/*
 * The options that concern a representation, from plain values (the
 * options' checks call these in their order, options_check.c): false
 * with err filled (message, detail and hint) when r does not take them.
 *   components: option "components" given (as components) applies only
 *     to a basis of components;
 *   cg: solver "cg" over a method's sums is preconditioned by the kernel
 *     matrix of the centres, and needs them;
 *   exact_bias: "fit_intercept" false for method, whose exact fit always
 *     fits its bias, applies only to r's fit over features (b = 0).
 */
bool		km_repr_check_components(const km_repr_ops *r, bool given, int components,
									 km_error *err);
bool		km_repr_check_cg(const km_repr_ops *r, km_error *err);
bool		km_repr_check_exact_bias(const km_repr_ops *r, const char *method, km_error *err);

/*
 * The same need of centres for a conjugate gradient pass rebuilt from its
 * point, whose basis is of representation id (learn/pipeline_approx_cg.c):
 * an invalid point otherwise.
 */
km_status	km_repr_check_cg_point(long long id, km_error *err);

/*
 * Whether a grid of n_lambdas lambdas of a fit by sums (sums: the method
 * solves from its m x m sums, ridge) is scored from r's sums after their
 * one pass (GCV), the route of such a grid without option "cv".
 */
bool		km_repr_scores_sums(const km_repr_ops *r, bool sums, int n_lambdas);

/* Whether r serves kernel type t. */
bool		km_repr_serves(const km_repr_ops *r, int kernel_type);

/*
 * Draw the random features of an rff basis from seed: W (d x D,
 * row-major) with N(0, 2 gamma) entries and b (D) uniform on [0, 2 pi),
 * from libc's erand48 seeded by the seed, W first, row by row.  Only the
 * rbf kernel has a random-feature map here.
 */
void		km_rff_draw(double gamma, uint64_t seed, uint32_t d, uint32_t D,
						double *W, double *b);

/*
 * The same draw, interrupt (if not NULL) called every million entries:
 * 8192 features of 12,000 inputs are 98 million normals.
 */
void		km_rff_draw_interruptible(double gamma, uint64_t seed, uint32_t d,
									  uint32_t D, double *W, double *b,
									  km_interrupt_fn interrupt);

/*
 * Z (rows x D, row-major) = sqrt(2 / D) cos(X W + b) for standardized rows
 * X (rows x d, row-major): one GEMM and an element-wise map.
 */
void		km_rff_map(const double *W, const double *b, uint32_t d, uint32_t D,
					   const double *X, size_t rows, double *Z);

#endif							/* KM_REPR_H */
