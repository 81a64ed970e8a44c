/*
 * deploy.h - the deploy policy of a named training (deploy.c).
 */
#ifndef KM_DEPLOY_H
#define KM_DEPLOY_H

#include "postgres.h"

#include "named_common.h"

/* deploy.c */
void		decide_deployment(const Catalog *cat, const char *name, const NamedRun *run,
							  MemoryContext work, Decision *d);

#endif							/* KM_DEPLOY_H */
