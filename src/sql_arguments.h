// Argument helpers shared by the SQL wrappers (glue only: raises PostgreSQL errors).
#pragma once

#include <cstddef>

#include "core/shingle_counts.h"
#include "core/shingles.h"
#include "core/simhash.h"
#include "guard.h"

extern "C" {
#include "utils/array.h"
}

// A radius argument of a batch or load function: not NULL, 0..64 (ERRCODE_INVALID_PARAMETER_VALUE).
int radius_argument(FunctionCallInfo fcinfo, int arg);

// A Jaccard threshold argument of the MinHash pair functions: not NULL, in (0, 1] (not NaN).
double threshold_argument(FunctionCallInfo fcinfo, int arg);

// A MinHash slot count: 1..kMaxMinhashSlots, the signatures minhash() makes.
int32 minhash_slots_argument(int32 slots);

// Whether the bytes are all ASCII: the same characters in every server encoding, so they need no
// conversion (MULE_INTERNAL has none to or from UTF-8 at all).
bool is_ascii(const char *data, size_t len);

// The bytes of a string in UTF-8, whatever the database encoding, so that a document gets the
// same fingerprint in every database. SQL_ASCII declares no encoding: its bytes are read as
// UTF-8 (invalid sequences act as separators); a character without a Unicode mapping reads as
// U+FFFD.
struct Utf8Bytes {
    const char *data;
    size_t len;
};
Utf8Bytes utf8_bytes(const char *data, int len);
inline Utf8Bytes utf8_text(text *t) { return utf8_bytes(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t)); }

// The memory context of the aggregate calling this transition, combine or deserialization
// function; `caller` (e.g. "simhash_agg transition function") names it in the error raised when
// it is called outside an aggregate.
MemoryContext aggregate_context(FunctionCallInfo fcinfo, const char *caller);

// Argument `arg` as a shingle weighting ('set', 'log', 'count'), or `omitted` when the call has no
// such argument; throws simhash::InvalidArgument for another name.
simhash::ShingleWeighting weighting_argument(FunctionCallInfo fcinfo, int arg, simhash::ShingleWeighting omitted);

// Refuses an array argument of more than one dimension (array_subscript_error): its elements would
// otherwise be read in storage order as if it were flat, a 2x2 weights array as the weights of
// four features. `argument_name` names it in the message ("features", "weights").
void one_dimensional(ArrayType *array, const char *function_name, const char *argument_name);

// The slots of a MinHash signature argument: a one-dimensional integer[] without NULLs, else
// invalid_parameter_value naming `argument_name` ("the signature", "a").
const uint32_t *signature_slots(ArrayType *signature, const char *argument_name, int *slots);

// Shingle options from unit and size arguments; throws simhash::InvalidArgument when invalid.
simhash::ShingleOptions shingle_options(text *unit, int32 size);

// Runs a core computation that counts a document's distinct shingles, reporting the cap on them
// as program_limit_exceeded with `hint` (what the calling function's user can do instead).
template <typename F>
auto with_shingle_limit(const char *hint, F &&compute) -> decltype(compute()) {
    try {
        return compute();
    } catch (const simhash::TooManyShingles &e) {
        throw simhash_pg::SqlError(ERRCODE_PROGRAM_LIMIT_EXCEEDED, e.what(), hint);
    }
}
