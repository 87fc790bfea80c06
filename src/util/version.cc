// The library's own version, compiled in: an embedder compares it with the
// PGRING_VERSION_STRING of the headers it was built against.
#include "pgring/version.h"

namespace pgring {

const char* LibraryVersion() { return PGRING_VERSION_STRING; }

}  // namespace pgring
