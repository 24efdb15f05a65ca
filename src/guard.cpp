#include "guard.h"

#include <cstring>

extern "C" {
#include "mb/pg_wchar.h"
#include "miscadmin.h"
}

namespace simhash_pg {

// Cut on a character boundary of the database encoding: messages repeat the caller's arguments,
// and half a character would be invalid text for the client (or replace the message with an
// encoding error when the client's encoding differs).
void copy_message(char *buffer, size_t size, const char *message) {
    if (message == nullptr) message = "";
    const size_t length = std::strlen(message);
    const int limit = static_cast<int>(size - 1);
    const size_t kept = length < size ? length : static_cast<size_t>(pg_mbcliplen(message, limit, limit));
    std::memcpy(buffer, message, kept);
    buffer[kept] = '\0';
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
