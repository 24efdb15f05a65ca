// Argument checks shared by the SQL wrappers (glue only: raises PostgreSQL errors).
#pragma once

#include "guard.h"

// A radius argument of a batch or load function: not NULL, 0..64 (ERRCODE_INVALID_PARAMETER_VALUE).
int radius_argument(FunctionCallInfo fcinfo, int arg);
