// Load-time initialisation of the parts of the extension (called from _PG_init in module.cpp).
#pragma once

// The batch functions (batch_run.cpp): simhash.progress_seconds and simhash.temp_file_limit.
void simhash_batch_init(void);

// The simhash index access method (am/simhash_am.cpp): reloptions and simhash.max_probes.
void simhash_am_init(void);
