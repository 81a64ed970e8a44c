/*
 * pass.c - a pass's run on a host and its regrouping of the host's blocks
 * into the pass's chunks (pass.h).
 */
#include <string.h>

#include "learn/pass.h"
#include "progress.h"

/* The chunk buffer for rows of d features, from the learner's memory, once. */
static km_status
buffer(km_pass *pass, int d, km_error *err)
{
	size_t		rows = KM_BLOCK_ROWS;
	double	   *buf;

	if (pass->buf_X != NULL)
		return KM_OK;
	if (pass->alloc == NULL || pass->chunk > rows)
		return km_fail(err, KM_ERR_INVALID, "a pass cannot regroup the host's rows",
					   "Pass \"%s\" adds %zu rows at once; the learner regroups up to %d rows, with memory from its env (%s).",
					   pass->what, pass->chunk, KM_BLOCK_ROWS, pass->alloc ? "given" : "none");
	/* X, y, then the hashes, class ids, folds and held flags, a double each at most */
	buf = pass->alloc(pass->alloc_ctx, sizeof(double) * rows * ((size_t) d + 5));
	pass->buf_X = buf;
	pass->buf_y = buf + rows * (size_t) d;
	pass->buf_hash = (uint64_t *) (void *) (pass->buf_y + rows);
	pass->buf_cls = (uint32_t *) (void *) (pass->buf_y + 2 * rows);
	pass->buf_fold = (int *) (void *) (pass->buf_y + 3 * rows);
	pass->buf_held = (uint8_t *) (void *) (pass->buf_y + 4 * rows);
	return KM_OK;
}

/* rows [i, i + r) of a block, as a block */
static km_block
slice(const km_block *b, size_t i, size_t r)
{
	km_block	s = *b;

	s.n = r;
	s.X = b->X + i * (size_t) b->d;
	s.y = b->y ? b->y + i : NULL;
	s.cls = b->cls ? b->cls + i : NULL;
	s.hash = b->hash ? b->hash + i : NULL;
	s.fold = b->fold ? b->fold + i : NULL;
	s.held = b->held ? b->held + i : NULL;
	return s;
}

/* the buffered rows, as a block (the arrays the host's blocks have) */
static km_status
flush(km_pass *pass, void *state, km_error *err)
{
	const km_block *like = &pass->like;
	km_block	b = {.n = pass->buffered, .d = like->d, .X = pass->buf_X,
		.y = like->y ? pass->buf_y : NULL,
		.cls = like->cls ? pass->buf_cls : NULL,
		.hash = like->hash ? pass->buf_hash : NULL,
		.fold = like->fold ? pass->buf_fold : NULL,
	.held = like->held ? pass->buf_held : NULL};
	size_t		first = pass->rows_done - pass->buffered;

	pass->buffered = 0;
	return pass->add(pass, &b, first, state, err);
}

km_status
km_pass_feed(km_pass *pass, const km_block *rows, void *state, km_error *err)
{
	size_t		chunk = pass->chunk;
	size_t		d = (size_t) rows->d;
	size_t		i = 0;

	pass->like = *rows;
	while (i < rows->n)
	{
		size_t		r;

		if (pass->buffered == 0 &&
			(chunk == 0 || rows->n - i >= chunk ||
			 pass->rows_done + (rows->n - i) == pass->rows_all))
		{
			/* whole chunks in place, and the last one when it ends the rows */
			km_block	s;

			r = chunk == 0 || rows->n - i < chunk ? rows->n - i : chunk;
			s = slice(rows, i, r);
			if (pass->add(pass, &s, pass->rows_done, state, err) != KM_OK)
				return err->status;
			pass->rows_done += r;
			i += r;
			continue;
		}
		if (buffer(pass, rows->d, err) != KM_OK)
			return err->status;
		r = chunk - pass->buffered;
		if (r > rows->n - i)
			r = rows->n - i;
		memcpy(pass->buf_X + pass->buffered * d, rows->X + i * d, sizeof(double) * r * d);
		if (rows->y)
			memcpy(pass->buf_y + pass->buffered, rows->y + i, sizeof(double) * r);
		if (rows->cls)
			memcpy(pass->buf_cls + pass->buffered, rows->cls + i, sizeof(uint32_t) * r);
		if (rows->hash)
			memcpy(pass->buf_hash + pass->buffered, rows->hash + i, sizeof(uint64_t) * r);
		if (rows->fold)
			memcpy(pass->buf_fold + pass->buffered, rows->fold + i, sizeof(int) * r);
		if (rows->held)
			memcpy(pass->buf_held + pass->buffered, rows->held + i, r);
		pass->buffered += r;
		pass->rows_done += r;
		i += r;
		if (pass->buffered == chunk && flush(pass, state, err) != KM_OK)
			return err->status;
	}
	km_check_interrupts(pass->interrupt);
	if (pass->rows_all > 0)
		km_progress_step("%zu of %zu rows", pass->rows_done, pass->rows_all);
	else
		km_progress_step("%zu rows", pass->rows_done);
	return KM_OK;
}

km_status
km_pass_run(const km_host *host, km_pass *pass, void *state, size_t *rows,
			km_error *err)
{
	pass->rows_done = 0;
	pass->buffered = 0;
	pass->rows_all = host->rows;
	km_progress_phase("%s", pass->what);
	if (pass->init != NULL)
		pass->init(pass, state);
	if (host->run(host->ctx, pass, state, err) != KM_OK)
		return err->status;
	/* the last partial chunk */
	if (pass->buffered > 0 && flush(pass, state, err) != KM_OK)
		return err->status;
	if (pass->end != NULL)
		pass->end(pass, state);
	*rows = pass->rows_done;
	return KM_OK;
}

km_status
km_pass_rows_check(const km_pass *pass, const km_block *rows, int d, bool y,
				   uint32_t k, bool hash, size_t first, km_error *err)
{
	if (pass->chunk > 0 && rows->n > pass->chunk)
		return km_fail(err, KM_ERR_INVALID, "the host handed more rows than a chunk",
					   "The block of rows from %zu has %zu rows; pass \"%s\" adds %zu at once.",
					   first + 1, rows->n, pass->what, pass->chunk);
	if (rows->d != d || rows->X == NULL || (y && rows->y == NULL) ||
		(k > 0 && rows->cls == NULL) || (hash && rows->hash == NULL))
		return km_fail(err, KM_ERR_INVALID, "the host handed rows of another shape",
					   "The block of rows from %zu has %d features%s%s%s; pass \"%s\" reads %d%s%s%s.",
					   first + 1, rows->d, rows->y ? ", targets" : "",
					   rows->cls ? ", class ids" : "", rows->hash ? ", hashes" : "",
					   pass->what, d, y ? ", targets" : "", k > 0 ? ", class ids" : "",
					   hash ? ", hashes" : "");
	for (size_t i = 0; k > 0 && i < rows->n; i++)
		if (rows->cls[i] >= k)
			return km_fail(err, KM_ERR_INVALID, "the host handed a row of no class",
						   "Row %zu has class %u of %u.", first + i + 1,
						   (unsigned) rows->cls[i], (unsigned) k);
	return KM_OK;
}

km_status
km_pass_combine(const km_pass *pass, void *into, const void *from, km_error *err)
{
	double	   *a = into;
	const double *b = from;

	if (pass->ordered)
		return km_fail(err, KM_ERR_INVALID, "an ordered pass does not combine",
					   "Pass \"%s\" takes every row in the host's order into one state.",
					   pass->what);
	if (pass->combine != NULL)
		return pass->combine(pass, into, from, err);
	for (size_t i = 0; i < pass->state_bytes / sizeof(double); i++)
		a[i] += b[i];
	return KM_OK;
}
