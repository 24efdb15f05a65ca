#include "guard.h"

#include <cstring>

extern "C" {
PG_MODULE_MAGIC;
}

namespace simhash_pg {

void copy_message(char *buffer, size_t size, const char *message) {
    std::strncpy(buffer, message ? message : "", size - 1);
    buffer[size - 1] = '\0';
}

}  // namespace simhash_pg
