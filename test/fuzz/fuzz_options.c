/*
 * libFuzzer target for the options validator (src/options_core.c): any
 * byte string is parsed as JSON by PostgreSQL's frontend JSON parser
 * (libpgcommon), and the members of a top-level object are handed to the
 * validator as the glue (src/options.c) hands jsonb members.  It must
 * accept or reject every input without reading outside its buffers (built
 * with AddressSanitizer and UBSan by "make fuzz"), and the options it
 * accepts must satisfy every range the training code relies on.
 */
#include "postgres_fe.h"

#include <math.h>

#include "common/jsonapi.h"
#include "mb/pg_wchar.h"

#include "options_core.h"

#define MAX_ELEMS 256			/* more than KM_MAX_GRID, to reach that check */

typedef struct parse_state
{
	int			depth;			/* containers open */
	char	   *key;			/* member of the top-level object being read */
	km_value	value;			/* its value */
	km_value	elems[MAX_ELEMS];	/* elements when it is an array */
	char	   *texts[MAX_ELEMS + 1];	/* tokens to free */
	int			n_texts;
	bool		failed;			/* the validator rejected a member */
	km_options_parser parser;
	km_option_error err;
} parse_state;

static void
keep(parse_state *s, char *token)
{
	if (s->n_texts < MAX_ELEMS + 1)
		s->texts[s->n_texts++] = token;
	else
		pfree(token);
}

static void
scalar_of(parse_state *s, char *token, JsonTokenType type, km_value *v)
{
	memset(v, 0, sizeof(*v));
	keep(s, token);
	v->text = token;
	switch (type)
	{
		case JSON_TOKEN_STRING:
			v->type = KM_VALUE_STRING;
			v->string = token;
			break;
		case JSON_TOKEN_NUMBER:
			v->type = KM_VALUE_NUMBER;
			v->number = strtod(token, NULL);
			break;
		case JSON_TOKEN_TRUE:
		case JSON_TOKEN_FALSE:
			v->type = KM_VALUE_BOOL;
			v->boolean = type == JSON_TOKEN_TRUE;
			break;
		default:
			v->type = KM_VALUE_NULL;
			break;
	}
}

static void
container_start(parse_state *s, km_value_type type)
{
	s->depth++;
	if (s->depth == 2)			/* the value of a member */
	{
		memset(&s->value, 0, sizeof(s->value));
		s->value.type = type;
		s->value.text = "an array or object";
		s->value.elems = s->elems;
	}
	else if (s->depth == 3 && s->value.type == KM_VALUE_ARRAY &&
			 s->value.n_elems < MAX_ELEMS)
	{
		km_value   *e = &s->elems[s->value.n_elems++];

		memset(e, 0, sizeof(*e));
		e->type = type;
		e->text = "an array or object";
	}
}

static void
object_start(void *state)
{
	container_start(state, KM_VALUE_OBJECT);
}

static void
array_start(void *state)
{
	container_start(state, KM_VALUE_ARRAY);
}

static void
container_end(void *state)
{
	((parse_state *) state)->depth--;
}

static void
field_start(void *state, char *fname, bool isnull)
{
	parse_state *s = state;

	if (s->depth == 1)
	{
		s->key = fname;
		memset(&s->value, 0, sizeof(s->value));
	}
	else
		pfree(fname);
}

static void
field_end(void *state, char *fname, bool isnull)
{
	parse_state *s = state;

	if (s->depth != 1)
		return;
	if (!s->failed && !km_options_set(&s->parser, s->key, &s->value, &s->err))
		s->failed = true;
	pfree(s->key);
	s->key = NULL;
	for (int i = 0; i < s->n_texts; i++)
		pfree(s->texts[i]);
	s->n_texts = 0;
}

static void
scalar(void *state, char *token, JsonTokenType type)
{
	parse_state *s = state;

	if (s->depth == 1 && s->key != NULL)
		scalar_of(s, token, type, &s->value);
	else if (s->depth == 2 && s->value.type == KM_VALUE_ARRAY &&
			 s->value.n_elems < MAX_ELEMS)
		scalar_of(s, token, type, &s->elems[s->value.n_elems++]);
	else
		pfree(token);
}

static void
check(bool ok)
{
	if (!ok)
		abort();
}

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
	check(f->method == KM_METHOD_RIDGE || f->method == KM_METHOD_LMS);
	check(isfinite(f->lambda) && f->lambda >= 0);
	check(isfinite(f->learning_rate) && f->learning_rate >= 0);
	check(f->max_iter >= 1);
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

		km_options_resolve(&r, d);
		check(r.gammas.n >= 1 && r.lambdas.n >= 1);
		check(isfinite(r.fit.kernel.gamma) && r.fit.kernel.gamma > 0);
		check(r.fit.lambda == r.lambdas.v[0] || r.lambdas.n > 1);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	   *json = malloc(size + 1);
	JsonLexContext *lex;
	JsonSemAction sem = {0};
	parse_state *s = calloc(1, sizeof(parse_state));
	km_options	out;
	JsonParseErrorType rc;

	memcpy(json, data, size);
	json[size] = '\0';
	km_options_begin(&s->parser, &out);
	sem.semstate = s;
	sem.object_start = object_start;
	sem.object_end = container_end;
	sem.array_start = array_start;
	sem.array_end = container_end;
	sem.object_field_start = field_start;
	sem.object_field_end = field_end;
	sem.scalar = scalar;

	/* the top level must be an object, as km_options_parse requires */
	lex = makeJsonLexContextCstringLen(json, (int) size, PG_UTF8, true);
	if (size > 0 && json[0] == '{')
	{
		rc = pg_parse_json(lex, &sem);
		if (rc == JSON_SUCCESS && !s->failed)
		{
			if (km_options_finish(&s->parser, &s->err))
				check_accepted(&out);
			else
				s->failed = true;
		}
		if (s->failed)
			check(s->err.message[0] != '\0' && s->err.detail[0] != '\0');
	}
	if (s->key)
		pfree(s->key);
	for (int i = 0; i < s->n_texts; i++)
		pfree(s->texts[i]);
	if (lex->strval)
	{
		pfree(lex->strval->data);
		pfree(lex->strval);
	}
	pfree(lex);
	free(s);
	free(json);
	check(strlen(km_options_valid_keys()) > 0);
	return 0;
}
