# The test-only module of test/bench/citus_partial.sh, built on its own:
#   make -f citus_fresh_fmgr.mk PG_CONFIG=...   (in a copy of this folder)
MODULE_big = citus_fresh_fmgr
OBJS = citus_fresh_fmgr.o
PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)
