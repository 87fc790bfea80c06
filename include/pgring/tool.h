// pgring/tool.h — pgring-tool, the debug tool (docs/TOOL.md), as one call:
// a program whose main() calls RunTool is pgring-tool (tools/pgring_tool.cc
// is that program). It lives in the `tool` component of the CMake package:
//   find_package(pgring CONFIG REQUIRED COMPONENTS tool)
//   target_link_libraries(my-tool PRIVATE pgring::tool)
#ifndef PGRING_TOOL_H_
#define PGRING_TOOL_H_

#include <istream>
#include <ostream>

namespace pgring {

// Runs the command line `argv` (argv[0] is the program's name, as main()
// gets it) and returns its exit status:
//   0  OK;
//   1  the command ran and failed (a missing PG, a version out of range,
//      damage met while reading, a refused import), or fsck/repair found
//      problems;
//   2  bad usage, or the store could not be opened (a missing path, not a
//      pgring store, in use by another process, partition and RocksDB of
//      different stores).
// Output and help go to `out`; an error is one line on `err`
// ("pgring-tool: error: ..."). `stderr_is_tty` shows the progress of long
// commands on `err` unless the command line's --progress says otherwise.
// `in` is what `import --file -` reads.
int RunTool(int argc, const char* const* argv, std::istream& in, std::ostream& out,
            std::ostream& err, bool stderr_is_tty);
// The same, reading std::cin.
int RunTool(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
            bool stderr_is_tty);

}  // namespace pgring

#endif  // PGRING_TOOL_H_
