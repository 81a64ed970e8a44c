/*
 * predict_citus.h - scoring by name in a statement over a Citus table
 * (predict_citus.c): the planner hook that gives the workers the model's
 * bytes instead of its name.
 */
#ifndef KM_PREDICT_CITUS_H
#define KM_PREDICT_CITUS_H

/* _PG_init: install the planner hook (after Citus's, when Citus is loaded). */
void		km_predict_citus_init(void);

#endif							/* KM_PREDICT_CITUS_H */
