/*
 * reprs.c - the representation registry: exact, nystrom and rff (repr.h,
 * one file each: exact.c, nystrom.c, rff.c), and the steps every
 * representation answers from its row: its basis's steps and components,
 * the rows its model keeps, its memory plan, the kernels it serves and the
 * options that concern it.  Core: no PostgreSQL header.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "repr.h"

/* Indexed by id: km_approx's values (approx.h), stored in models. */
static const km_repr_ops *const reprs[] = {
	&km_repr_exact,
	&km_repr_nystrom,
	&km_repr_rff,
};

#define N_REPRS ((int) (sizeof(reprs) / sizeof(reprs[0])))

const km_repr_ops *
km_repr_get(long long id)
{
	return id >= 0 && id < N_REPRS ? reprs[id] : NULL;
}

const km_repr_ops *
km_repr_lookup(long long id)
{
	const km_repr_ops *r = km_repr_get(id);

	return r ? r : km_repr_default();
}

const km_repr_ops *
km_repr_by_name(const char *name)
{
	for (int i = 0; i < N_REPRS; i++)
		if (strcmp(name, reprs[i]->name) == 0)
			return reprs[i];
	return NULL;
}

const km_repr_ops *
km_repr_by_option(const char *name)
{
	const km_repr_ops *r = km_repr_by_name(name);

	return r != NULL && r->approximate ? r : NULL;
}

int
km_repr_option_names(const char **names, int max)
{
	int			n = 0;

	for (int i = 0; i < N_REPRS && n < max; i++)
		if (reprs[i]->approximate)
			names[n++] = reprs[i]->name;
	return n;
}

const km_repr_ops *
km_repr_default(void)
{
	return reprs[0];
}

int
km_repr_basis_steps(const km_repr_ops *r, int centres, km_basis_step steps[KM_BASIS_MAX_STEPS])
{
	return r->basis_steps(centres, steps);
}

uint32_t
km_repr_basis_components(const km_repr_ops *r, uint32_t asked, size_t n)
{
	return r->centres && (size_t) asked > n ? (uint32_t) n : asked;
}

uint64_t
km_repr_kept_doubles(const km_repr_ops *r, uint64_t n_train, uint64_t d)
{
	return r->kept_doubles(n_train, d);
}

bool
km_repr_serves(const km_repr_ops *r, int kernel_type)
{
	return kernel_type >= 0 && kernel_type < 32 &&
		(r->kernels & (UINT32_C(1) << kernel_type)) != 0;
}

km_repr_memory
km_repr_memory_plan(const km_repr_ops *r, double n, uint32_t components)
{
	return r->memory(n, components);
}

bool
km_repr_basis_takes(const km_repr_ops *r, int centres, km_basis_step s)
{
	km_basis_step steps[KM_BASIS_MAX_STEPS];
	int			n = km_repr_basis_steps(r, centres, steps);

	for (int i = 0; i < n; i++)
		if (steps[i] == s)
			return true;
	return false;
}

/* err's message, detail and hint (an invalid options object): false. */
static bool
option_fail(km_error *err, const char *hint, const char *message,
			const char *detailfmt,...)
__attribute__((format(printf, 4, 5)));

static bool
option_fail(km_error *err, const char *hint, const char *message,
			const char *detailfmt,...)
{
	va_list		ap;

	err->status = KM_ERR_INVALID;
	snprintf(err->message, sizeof(err->message), "%s", message);
	va_start(ap, detailfmt);
	vsnprintf(err->detail, sizeof(err->detail), detailfmt, ap);
	va_end(ap);
	snprintf(err->hint, sizeof(err->hint), "%s", hint);
	return false;
}

bool
km_repr_check_components(const km_repr_ops *r, bool given, int components, km_error *err)
{
	if (!given || r->approximate)
		return true;
	return option_fail(err, "Add \"approximation\": \"nystrom\" or \"rff\", or remove the option.",
					   "option \"components\" applies only to approximate models",
					   "Option \"components\" is %d but no \"approximation\" is given; exact models use every row.",
					   components);
}

bool
km_repr_check_cg(const km_repr_ops *r, km_error *err)
{
	if (r->centres)
		return true;
	return option_fail(err, "Add \"approximation\": \"nystrom\", or remove \"solver\".",
					   "solver \"cg\" applies only to nystrom models",
					   "Solver \"cg\" is preconditioned by the kernel matrix of the nystrom centres; the model is %s.",
					   r->described);
}

bool
km_repr_check_exact_bias(const km_repr_ops *r, const char *method, km_error *err)
{
	char		message[128];

	if (r->approximate)
		return true;
	snprintf(message, sizeof(message),
			 "option \"fit_intercept\" false does not apply to exact method \"%s\"",
			 method);
	return option_fail(err, "Remove \"fit_intercept\", or add \"approximation\": \"nystrom\" or \"rff\", whose primal fit honours it (b = 0).",
					   message, "Exact method \"%s\" solves libsvm's dual, whose equality constraint always fits the bias b; option \"fit_intercept\" is false.",
					   method);
}

km_status
km_repr_check_cg_point(long long id, km_error *err)
{
	const km_repr_ops *r = km_repr_get(id);

	if (r != NULL && r->centres)
		return KM_OK;
	return km_fail(err, KM_ERR_FORMAT, "pass point has an invalid shape",
				   "A conjugate gradient pass needs a nystrom basis; the point's is %s.",
				   r != NULL ? r->name : "unknown");
}

bool
km_repr_scores_sums(const km_repr_ops *r, bool sums, int n_lambdas)
{
	return r->approximate && sums && n_lambdas > 1;
}
