// pgring-tool: the front end. Everything it does is in the tool library
// (src/tool/; pgring::tool in the installed package), where tests/tool/
// exercises it.
#include <unistd.h>

#include <iostream>

#include "pgring/tool.h"

int main(int argc, char** argv) {
  return pgring::RunTool(argc, argv, std::cin, std::cout, std::cerr, isatty(STDERR_FILENO) != 0);
}
