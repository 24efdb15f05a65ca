// Load-time initialisation of the parts of the extension (called from _PG_init in module.cpp).
#pragma once

// Batch deduplication (etl_sql.cpp): defines simhash.progress_seconds.
void simhash_etl_init(void);

// The simhash index access method (am/simhash_am.cpp): reloptions and simhash.max_probes.
void simhash_am_init(void);
