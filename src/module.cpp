// The module's magic block and load-time entry point. Each part of the extension that registers
// settings exports an init function, called from here (one _PG_init per shared library).
#include "guard.h"
#include "module.h"

extern "C" {
#include "utils/guc.h"
}

extern "C" {
SIMHASH_MODULE_MAGIC;

SIMHASH_EXPORT void _PG_init(void);
}

void _PG_init(void) {
    simhash_am_init();
    simhash_batch_init();
    // After every simhash.* setting is defined: typos such as simhash.max_probe are then errors.
    MarkGUCPrefixReserved("simhash");
}
