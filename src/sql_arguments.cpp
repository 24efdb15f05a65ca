#include "sql_arguments.h"

int radius_argument(FunctionCallInfo fcinfo, int arg) {
    if (PG_ARGISNULL(arg))
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("radius must not be NULL")));
    const int32 radius = PG_GETARG_INT32(arg);
    if (radius < 0 || radius > 64)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("radius must be between 0 and 64, not %d", radius)));
    return radius;
}
