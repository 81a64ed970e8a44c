/*
 * libFuzzer target for the options validator (src/core/methods/options_core.c): any
 * byte string that starts with '{' is parsed as JSON by json-c (Debian
 * libjson-c-dev; nothing from PostgreSQL is linked), and the members of the
 * top-level object are handed to the validator as the glue
 * (src/pg/options.c) hands jsonb members: in jsonb's key order (shorter keys
 * first, then bytewise), the last of duplicate keys, numbers as doubles
 * (+-Inf beyond the double range), array elements as scalars or empty
 * containers.  It must accept or reject every input without reading
 * outside its buffers or leaking (built with AddressSanitizer and UBSan by
 * "make fuzz"), and the options it accepts must satisfy every range the
 * training code relies on.
 *
 * json-c is laxer than jsonb in two ways, undone here: NaN and Infinity
 * literals are not JSON (inputs with them are skipped: jsonb cannot hold
 * them), and integers beyond 64 bits are clamped to the 64-bit limits
 * (still out of every range the validator allows).
 */
#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "options_core.h"
#include "task.h"

/* What a JSON value converts to; *texts collects strings to free. */
typedef struct conversion
{
	char	  **texts;
	int			n_texts;
	bool		not_json;		/* a NaN or Infinity literal */
} conversion;

static const char *
keep(conversion *c, char *text)
{
	c->texts[c->n_texts++] = text;
	return text;
}

/* A scalar, or a nested container (its elements are not read). */
static void
scalar_value(conversion *c, struct json_object *j, km_value *out)
{
	const char *s;
	char	   *q;

	memset(out, 0, sizeof(*out));
	switch (json_object_get_type(j))
	{
		case json_type_null:
			out->type = KM_VALUE_NULL;
			out->text = "null";
			break;
		case json_type_string:
			out->type = KM_VALUE_STRING;
			out->string = json_object_get_string(j);
			q = malloc(strlen(out->string) + 3);
			sprintf(q, "\"%s\"", out->string);
			out->text = keep(c, q);
			break;
		case json_type_int:
		case json_type_double:
			s = json_object_get_string(j);	/* a double's text as written */
			if (!(isdigit((unsigned char) s[0]) ||
				  (s[0] == '-' && isdigit((unsigned char) s[1]))))
				c->not_json = true;
			out->type = KM_VALUE_NUMBER;
			out->number = json_object_get_double(j);
			out->text = s;
			break;
		case json_type_boolean:
			out->type = KM_VALUE_BOOL;
			out->boolean = json_object_get_boolean(j);
			out->text = out->boolean ? "true" : "false";
			break;
		case json_type_array:
		case json_type_object:
			out->type = json_object_is_type(j, json_type_array) ?
				KM_VALUE_ARRAY : KM_VALUE_OBJECT;
			out->text = "an array or object";
			break;
	}
}

/* The value of a key: a scalar, an object, or an array and its elements. */
static void
member_value(conversion *c, struct json_object *j, km_value *out)
{
	size_t		n;
	km_value   *elems;

	scalar_value(c, j, out);
	if (out->type != KM_VALUE_ARRAY)
		return;
	n = json_object_array_length(j);
	elems = malloc(sizeof(km_value) * (n > 0 ? n : 1));
	for (size_t i = 0; i < n; i++)
		scalar_value(c, json_object_array_get_idx(j, i), &elems[i]);
	keep(c, (char *) elems);
	out->elems = elems;
	out->n_elems = (int) n;
}

/* jsonb's order of object keys: shorter first, then bytewise */
static int
jsonb_key_order(const void *a, const void *b)
{
	const char *x = *(const char *const *) a;
	const char *y = *(const char *const *) b;
	size_t		lx = strlen(x);
	size_t		ly = strlen(y);

	if (lx != ly)
		return lx < ly ? -1 : 1;
	return memcmp(x, y, lx);
}

static void
check_at(bool ok, int line)
{
	if (!ok)
	{
		fprintf(stderr, "fuzz_options.c:%d: check failed\n", line);
		abort();
	}
}

#define check(ok) check_at((ok), __LINE__)

static void
check_grid(const km_grid *g, bool strict)
{
	check(g->n >= 0 && g->n <= KM_MAX_GRID);
	for (int i = 0; i < g->n; i++)
		check(isfinite(g->v[i]) && (strict ? g->v[i] > 0 : g->v[i] >= 0));
}

/* What the training code relies on, for options the validator accepted. */
static void
check_accepted(km_options *o)
{
	const km_fit_params *f = &o->fit;
	unsigned	used = km_kernel_params(f->kernel.type);

	check(f->kernel.type >= KM_KERNEL_FIRST && f->kernel.type <= KM_KERNEL_LAST);
	check(f->kernel.degree >= 1 && f->kernel.degree <= 100);
	check(isfinite(f->kernel.coef0));
	/*
	 * A registered method of any task: a float8 target takes a classifier
	 * too (its values are the classes), and whether the call's task fits
	 * (kernel_fit's methods have no target) is the training call's check
	 * (km_task_check_training), not the options'.
	 */
	check(km_method_get(f->method) != NULL);
	check(isfinite(f->lambda) && f->lambda >= 0);
	check(isfinite(f->learning_rate) && f->learning_rate >= 0);
	/* 0 only for a method whose solver has its own limit (libsvm's), unless given */
	check(f->max_iter >= 1 || (f->max_iter == 0 && km_method_get(f->method)->solver_max_iter));
	check(isfinite(f->tol) && f->tol >= 0);
	check_grid(&o->gammas, true);
	check_grid(&o->lambdas, false);
	check(o->gammas.n == 0 || (used & KM_PARAM_GAMMA));
	switch (o->cv)
	{
		case KM_CV_NONE:
			check(o->gammas.n <= 1 && o->lambdas.n <= 1);
			break;
		case KM_CV_LOO:
		case KM_CV_GCV:
		case KM_CV_EVIDENCE:
			check(f->method == KM_METHOD_RIDGE);
			break;
		case KM_CV_KFOLD:
			check(o->folds >= 2 && o->folds <= 1000);
			break;
		default:
			abort();
	}
	check(o->seed >= INT32_MIN && o->seed <= INT32_MAX);
	check(o->test_fraction >= 0 && o->test_fraction < 1);
	check(o->deploy == KM_DEPLOY_IF_BETTER || o->deploy == KM_DEPLOY_ALWAYS ||
		  o->deploy == KM_DEPLOY_NEVER);
	if (f->method == KM_METHOD_RIDGE)
		check(f->learning_rate == 0 && f->max_iter == 1000 && f->tol == 1e-6);

	for (int d = 1; d <= 100000; d *= 100)
	{
		km_options	r = *o;
		/* a method without a target (kernel_fit's) takes no lambda */
		bool		target = km_task_lookup(km_method_task(f->method))->target;

		km_options_resolve(&r, d);
		check(r.gammas.n >= 1 && (!target || r.lambdas.n >= 1));
		check(isfinite(r.fit.kernel.gamma) && r.fit.kernel.gamma > 0);
		check(!target || r.fit.lambda == r.lambdas.v[0] || r.lambdas.n > 1);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_tokener *tok;
	struct json_object *root;
	km_options_parser parser;
	km_option_error err;
	km_options	out;
	bool		failed = false;

	check(strlen(km_options_valid_keys()) > 0);
	/* the top level must be an object, as km_options_parse requires */
	if (size == 0 || data[0] != '{' || size > INT32_MAX)
		return 0;
	tok = json_tokener_new();
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	root = json_tokener_parse_ex(tok, (const char *) data, (int) size);
	if (root != NULL && json_tokener_get_error(tok) == json_tokener_success &&
		json_tokener_get_parse_end(tok) == size &&
		json_object_is_type(root, json_type_object))
	{
		int			n = json_object_object_length(root);
		const char **keys = malloc(sizeof(char *) * (n > 0 ? n : 1));
		km_value   *values = malloc(sizeof(km_value) * (n > 0 ? n : 1));
		conversion	c = {0};
		int			i = 0;

		/* every value with all its elements and their texts, at most */
		c.texts = malloc(sizeof(char *) * (2 * size + 2));
		json_object_object_foreach(root, key, val)
			keys[i++] = key;
		qsort(keys, n, sizeof(char *), jsonb_key_order);
		for (i = 0; i < n; i++)
			member_value(&c, json_object_object_get(root, keys[i]), &values[i]);

		if (!c.not_json)
		{
			km_options_begin(&parser, &out);
			for (i = 0; i < n && !failed; i++)
				failed = !km_options_set(&parser, keys[i], &values[i], &err);
			if (!failed)
			{
				if (km_options_finish(&parser, &err))
					check_accepted(&out);
				else
					failed = true;
			}
			if (failed)
				check(err.message[0] != '\0' && err.detail[0] != '\0');
		}
		for (i = 0; i < c.n_texts; i++)
			free(c.texts[i]);
		free(c.texts);
		free(values);
		free(keys);
	}
	json_object_put(root);
	json_tokener_free(tok);
	return 0;
}
