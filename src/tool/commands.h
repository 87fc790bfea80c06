// commands.h — pgring-tool's command line: builds it (CLI11) from the
// command list (command.h), runs the command asked for and prints its result
// (render.h). tools/pgring_tool.cc is only
//   return pgring::tool::RunTool(argc, argv, std::cout, std::cerr, isatty(2));
#ifndef PGRING_TOOL_COMMANDS_H_
#define PGRING_TOOL_COMMANDS_H_

#include <ostream>

namespace pgring::tool {

// Runs `pgring-tool <argv...>`; returns the exit status (tool_common.h:
// 0 OK, 1 failed or problems found, 2 usage or cannot open). Help goes to
// `out`; errors are one line on `err`. `stderr_is_tty` turns progress on
// (unless --progress says otherwise).
int RunTool(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
            bool stderr_is_tty);

}  // namespace pgring::tool

#endif  // PGRING_TOOL_COMMANDS_H_
