/*
 * progress.h - progress reports of long training (core, no PostgreSQL
 * headers).
 *
 * The core says where it is; the glue decides whether anyone hears it.
 * Like the interrupt callback (core.h), the report goes through functions
 * the glue supplies, here registered once (km_progress_set_hooks) rather
 * than passed down every call: a report is optional and never changes a
 * result, and the core's signatures stay as they are.  Without hooks (the
 * unit tests, the benchmarks) every call is a no-op.
 *
 * Three levels make one line, "stage; phase: step":
 *   stage  what the caller is scoring (a model-selection candidate and
 *          fold), set by select.c and classify's selection;
 *   phase  what the method is doing (building the kernel matrix, a class
 *          pair of SMO, a Newton step), set by the methods;
 *   step   how far it is within the phase (SMO iterations, LMS
 *          iterations, SGD epochs).
 * Setting a level clears the levels below it.  The glue's due() says
 * whether a line is wanted now (kernel_ml.progress on, and the interval
 * since the last line, or since training began, elapsed); only then is the
 * line formatted and handed to emit().  A line the same as the last one
 * emitted is not emitted again: a line says how far the work is, or
 * nothing.  Call from the thread that calls the interrupt callback.
 *
 * Where the work of a phase is countable (panels of a factorization, rows
 * of a kernel matrix), km_progress_fraction gives the step with the share
 * of the phase's work done, and the line ends with an estimate of the time
 * left, from the time the phase has taken so far (the glue's clock).
 */
#ifndef KM_PROGRESS_H
#define KM_PROGRESS_H

#include <stdbool.h>

typedef bool (*km_progress_due_fn) (void);
typedef void (*km_progress_emit_fn) (const char *line);

typedef double (*km_progress_clock_fn) (void);

/* Register the glue's functions (NULL, NULL: silence). */
void		km_progress_set_hooks(km_progress_due_fn due, km_progress_emit_fn emit);

/* Register a clock in seconds (NULL: no estimate of the time left). */
void		km_progress_set_clock(km_progress_clock_fn now);

/* Forget every level (the glue calls it when a training begins). */
void		km_progress_reset(void);

/* Set a level (NULL: clear it) and report the line if one is due. */
void		km_progress_stage(const char *fmt,...)
			__attribute__((format(printf, 1, 2)));
void		km_progress_phase(const char *fmt,...)
			__attribute__((format(printf, 1, 2)));
void		km_progress_step(const char *fmt,...)
			__attribute__((format(printf, 1, 2)));

/*
 * A countable piece of work begins (a factorization, a kernel matrix):
 * the time left is estimated from the time since then, or since the phase
 * was set, whichever is later.
 */
void		km_progress_work_begin(void);

/*
 * A step with done, the share (0 to 1) of the work since
 * km_progress_work_begin done: when a line is due, the step from fmt, then
 * ", about N s left" once the share and the time taken allow an estimate.
 */
void		km_progress_fraction(double done, const char *fmt,...)
			__attribute__((format(printf, 2, 3)));

/*
 * Report the current line (stage and phase) if one is due and a phase is
 * set: the glue calls it between blocks of work (with the interrupt
 * check), so that a long Gram build or factorization is heard from
 * without the kernels knowing about progress.
 */
void		km_progress_heartbeat(void);

/* The current line, "" if no level is set (into buf of size bytes). */
void		km_progress_line(char *buf, int size);

#endif							/* KM_PROGRESS_H */
