// The neighbourhood locks of dedup on load (load_sql.cpp), for the bulk load of
// insert_distinct_sql.cpp: both take the same advisory keys, so trigger loads and bulk loads of one
// table exclude each other's near-duplicates.
#pragma once

#include "compat.h"

// Takes every neighbourhood key of table `relid` for the current transaction, in ascending order,
// never holding a key of this call while it waits for another (see load_sql.cpp).
void simhash_lock_every_neighbourhood(Oid relid);


// The boolean a query of Citus's catalogs returns for `relid` (its $1, a regclass): false where
// Citus is not installed or no row comes back.
bool simhash_citus_catalog_says(const char *query, Oid relid, const char *function_name);
