#include "guard.h"

#include <cstring>

extern "C" {
#include "miscadmin.h"
}

namespace simhash_pg {

void copy_message(char *buffer, size_t size, const char *message) {
    std::strncpy(buffer, message ? message : "", size - 1);
    buffer[size - 1] = '\0';
}

bool interrupt_requested(void *) {
    // Held-off interrupts (INTERRUPTS_CAN_BE_PROCESSED false) stay pending, as PostgreSQL's own
    // loops leave them: stopping then would report a cancel that CHECK_FOR_INTERRUPTS defers.
    return InterruptPending && INTERRUPTS_CAN_BE_PROCESSED() && (QueryCancelPending || ProcDiePending);
}

void raise_interrupt(const char *function_name) {
    CHECK_FOR_INTERRUPTS();
    ereport(ERROR, (errcode(ERRCODE_QUERY_CANCELED), errmsg("%s was interrupted", function_name)));
    pg_unreachable();
}

}  // namespace simhash_pg
