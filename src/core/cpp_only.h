// Include last in every core header: the core is pure C++17 and must never see PostgreSQL headers,
// whose macros (ereport, palloc, elog's longjmp) are unsafe in code that owns C++ objects.
#pragma once
#if defined(POSTGRES_H)
static_assert(sizeof(char) == 0, "src/core is PostgreSQL-free: do not include postgres.h before a core header");
#endif
