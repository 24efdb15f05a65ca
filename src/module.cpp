// The module's load-time entry point. Each part of the extension that registers settings exports
// an init function, called from here (one _PG_init per shared library).
#include "guard.h"
#include "module.h"

extern "C" {
void _PG_init(void);
}

void _PG_init(void) { simhash_etl_init(); }
