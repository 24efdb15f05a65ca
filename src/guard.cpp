#include "guard.h"

#include <cstring>

namespace simhash_pg {

void copy_message(char *buffer, size_t size, const char *message) {
    std::strncpy(buffer, message ? message : "", size - 1);
    buffer[size - 1] = '\0';
}

}  // namespace simhash_pg
