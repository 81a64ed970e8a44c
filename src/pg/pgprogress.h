/*
 * pgprogress.h - kernel_ml.progress: the glue that turns the core's progress
 * reports (src/core/base/progress.h) into NOTICEs.
 *
 * The core's levels (and the glue's own, through the same functions)
 * become at most one NOTICE per kernel_ml.progress_interval, the first one
 * interval after the statement began, so that short statements stay
 * silent; the time is the statement's:
 *
 *   NOTICE:  kernel_train: svm: class pair 2 of 3, 4000 rows: SMO iteration 12288 (2.0 s)
 *
 * A training brackets its work with km_progress_begin and km_progress_end,
 * which name the lines and clear the levels left behind.  Trainings nest
 * (kernel_model_train runs kernel_train through SPI): the outermost names
 * the lines.  An error ends every training at the end of its
 * (sub)transaction.
 */
#ifndef KM_PG_PROGRESS_H
#define KM_PG_PROGRESS_H

#include "progress.h"

extern bool km_progress;		/* kernel_ml.progress */
extern int	km_progress_interval_ms;	/* kernel_ml.progress_interval */

/* _PG_init: register the hooks and the end-of-transaction reset. */
void		km_progress_init(void);

/* A training named what ("kernel_train") begins, or ends. */
void		km_progress_begin(const char *what);
void		km_progress_end(void);

#endif							/* KM_PG_PROGRESS_H */
