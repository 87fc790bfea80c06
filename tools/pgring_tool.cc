// pgring-tool: the front end. Everything it does is in the command library
// (src/tool/), where tests/tool/ exercises it.
#include <unistd.h>

#include <iostream>

#include "tool/commands.h"

int main(int argc, char** argv) {
  return pgring::tool::RunTool(argc, argv, std::cout, std::cerr, isatty(STDERR_FILENO) != 0);
}
