# kernel_ml - PGXS build.  The version lives only in kernel_ml.control.
EXTENSION = kernel_ml
EXTVERSION = $(shell sed -n "s/^default_version *= *'\(.*\)'/\1/p" $(EXTENSION).control)

MODULE_big = kernel_ml
# The numerical core includes no PostgreSQL header; the glue does.
CORE_OBJS = src/core.o src/kernels.o src/solve.o src/model.o
GLUE_OBJS = src/crc32c.o src/kernel_ml.o src/options.o src/pgutil.o \
	src/train.o src/predict.o
OBJS = $(CORE_OBJS) $(GLUE_OBJS)

DATA_built = sql/$(EXTENSION)--$(EXTVERSION).sql
DATA = $(wildcard sql/$(EXTENSION)--*--*.sql)

TESTS = $(wildcard test/sql/*.sql)
REGRESS = $(patsubst test/sql/%.sql,%,$(TESTS))
REGRESS_OPTS = --inputdir=test --load-extension=$(EXTENSION)

KM_VERSION_DEFS = -DKM_VERSION_STRING=\"$(EXTVERSION)\"
PG_CPPFLAGS = -Isrc $(KM_VERSION_DEFS)
PG_CFLAGS = $(KM_EXTRA_CFLAGS)
SHLIB_LINK = -lopenblas -llapacke -lm

EXTRA_CLEAN = test/unit/run_unit test/unit/*.o

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

sql/$(EXTENSION)--$(EXTVERSION).sql: sql/$(EXTENSION).sql $(EXTENSION).control
	cp $< $@

# Core unit tests: the core sources plus PostgreSQL's CRC-32C from libpgport,
# no server.  Ends with "N passed, N failed".
UNIT_SRCS = $(wildcard test/unit/*.c) $(CORE_OBJS:.o=.c) src/crc32c.c
test/unit/run_unit: $(UNIT_SRCS) $(wildcard src/*.h) test/unit/unit.h
	$(CC) -std=gnu99 -O2 -g -Wall -Wextra $(KM_EXTRA_CFLAGS) -Isrc \
		-I$(shell $(PG_CONFIG) --includedir-server) $(KM_VERSION_DEFS) \
		-o $@ $(UNIT_SRCS) -L$(shell $(PG_CONFIG) --pkglibdir) -lpgport \
		-lopenblas -llapacke -lm

.PHONY: unittest
unittest: test/unit/run_unit
	test/unit/run_unit
