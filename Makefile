# simhash: PGXS build of the extension (C++17, C linkage), plus the core unit tests and benchmarks.
EXTENSION = simhash
EXTVERSION = 0.4.0
MODULE_big = simhash
# The current version's install script, the first release's (the upgrade test starts there) and
# every upgrade script (simhash--A--B.sql); other versions install through the upgrade path.
DATA = $(sort $(wildcard simhash--*.sql))
PGFILEDESC = "simhash - near-duplicate detection with SimHash, MinHash and a Hamming-radius index"

CORE_SRCS = $(sort $(wildcard src/core/*.cpp))
GLUE_SRCS = $(sort $(wildcard src/*.cpp) $(wildcard src/am/*.cpp))
OBJS = $(CORE_SRCS:.cpp=.o) $(GLUE_SRCS:.cpp=.o)

REGRESS = $(sort $(notdir $(basename $(wildcard sql/*.sql))))
REGRESS_OPTS = --inputdir=. --load-extension=$(EXTENSION)
# Isolation specs (specs/*.spec, expected/*.out): installcheck runs them after pg_regress.
ISOLATION = load_race insert_distinct_race merge_snapshot merge_list_scan scan_resume order_resume
ISOLATION_OPTS = --load-extension=$(EXTENSION)
PROVE_TESTS = test/t/*.pl

PG_CONFIG ?= pg_config

# Debian's PostgreSQL is built with LLVM: PGXS would try to emit bitcode for C++ files with clang.
override with_llvm = no
# PostgreSQL headers use `register` (removed in C++17). -fvect-cost-model=dynamic lets -O2 vectorize
# the MinHash slot loop; -fno-math-errno keeps std::isfinite and friends inline.
# -fvisibility=hidden: the module exports only what PostgreSQL looks up (SIMHASH_EXPORT in
# src/compat.h); PGXS adds it itself from PostgreSQL 16 on, 15 needs it here.
PG_CXXFLAGS = -std=c++17 -Wall -Wextra -Wno-register -Wno-unused-parameter -fvect-cost-model=dynamic \
	-fvisibility=hidden -fvisibility-inlines-hidden
PG_CPPFLAGS = -I$(srcdir)/src -DSIMHASH_EXTVERSION='"$(EXTVERSION)"'
SHLIB_LINK = -lstdc++

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# Exported symbols: see src/exports.map (ELF platforms; scripts/check_exports.sh verifies the list).
ifneq ($(filter linux freebsd netbsd openbsd,$(PORTNAME)),)
SHLIB_LINK += -Wl,--version-script=$(srcdir)/src/exports.map
$(shlib): $(srcdir)/src/exports.map
endif

# TAP tests (PostgreSQL::Test::Cluster; they start clusters of their own, so run them as a non-root
# user): `make tap`. Kept out of `installcheck`, which runs only pg_regress.
.PHONY: tap
tap:
	$(prove_installcheck)

# PGXS tracks no header dependencies (without --enable-depend): rebuild the objects when any
# header changes (a stale object reading an old struct layout corrupts on-disk formats).
$(OBJS): $(wildcard src/*.h src/core/*.h src/am/*.h)

# Core unit tests (GoogleTest + CTest) and benchmarks, built apart from the extension.
UNIT_BUILD = build/unit
.PHONY: unit bench-core bench-layout
unit:
	cmake -S test/unit -B $(UNIT_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(UNIT_BUILD) -j2
	cd $(UNIT_BUILD) && ctest --output-on-failure

bench-core:
	cmake -S test/unit -B $(UNIT_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(UNIT_BUILD) -j2 --target core_bench
	$(UNIT_BUILD)/core_bench /usr/share/common-licenses/* /usr/share/doc/*/copyright

# Radius-3 queries over table layouts in memory (bench/layout_bench.cpp); LAYOUT_ROWS=300000000
# needs about 17 GB.
LAYOUT_ROWS ?= 3000000 30000000
bench-layout:
	cmake -S test/unit -B $(UNIT_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(UNIT_BUILD) -j2 --target layout_bench
	$(UNIT_BUILD)/layout_bench $(LAYOUT_ROWS)

# The release archive for PGXN (META.json), named and laid out as PGXN expects:
# simhash-VERSION.zip holding simhash-VERSION/. It is the committed tree at HEAD, less what
# .gitattributes marks export-ignore (the Debian packaging and the CI entry point).
DIST_ARCHIVE ?= $(EXTENSION)-$(EXTVERSION).zip
.PHONY: dist
dist:
	git archive --format zip --prefix=$(EXTENSION)-$(EXTVERSION)/ -o $(DIST_ARCHIVE) HEAD
