#include "sql_arguments.h"

#include <cstring>

extern "C" {
#include "mb/pg_wchar.h"
}

int radius_argument(FunctionCallInfo fcinfo, int arg) {
    if (PG_ARGISNULL(arg))
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("radius must not be NULL")));
    const int32 radius = PG_GETARG_INT32(arg);
    if (radius < 0 || radius > 64)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("radius must be between 0 and 64, not %d", radius)));
    return radius;
}

Utf8Bytes utf8_bytes(const char *data, int len) {
    const int encoding = GetDatabaseEncoding();
    if (encoding == PG_UTF8 || encoding == PG_SQL_ASCII || len == 0) return {data, static_cast<size_t>(len)};
    char *converted = pg_server_to_any(data, len, PG_UTF8);
    if (converted == data) return {data, static_cast<size_t>(len)};
    return {converted, std::strlen(converted)};
}

simhash::ShingleOptions shingle_options(text *unit, int32 size) {
    simhash::ShingleOptions options;
    options.unit = simhash::parse_shingle_unit(VARDATA_ANY(unit), VARSIZE_ANY_EXHDR(unit));
    options.size = size;
    simhash::validate(options);
    return options;
}
