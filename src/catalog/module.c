/*
 * module.c - the module's entry: the magic block and _PG_init, which
 * defines the settings (src/pg/kernel_ml.c) and installs the planner hook
 * that scores by name over Citus tables (predict_citus.c).  It sits in the
 * top layer because it wires the layers together.
 */
#include "postgres.h"

#include "fmgr.h"

#include "kernel_ml.h"
#include "predict_citus.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
	km_define_settings();
	km_predict_citus_init();
}
