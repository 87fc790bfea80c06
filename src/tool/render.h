// render.h — prints any CommandResult: the text renderer and the JSON
// renderer, and Render, which picks one by --format and adds the error line.
// They know nothing of commands or backends: what is shown is decided when
// the result is built (command.h), so a change of layout here is a change
// for every command alike.
#ifndef PGRING_TOOL_RENDER_H_
#define PGRING_TOOL_RENDER_H_

#include <ostream>

#include "tool/command.h"
#include "tool/text_output.h"
#include "tool/tool_common.h"

namespace pgring::tool {

// Every block of `text`, in order.
void RenderText(const TextOutput& text, std::ostream& out);

// `doc` indented by two, then a newline. Bytes that are not UTF-8 are
// replaced (payloads are hex, so only paths could hold any).
void RenderJson(const Json& doc, std::ostream& out);

// Prints `r` on ctx.out in ctx's format (the JSON form only when there is a
// document), then its error, if any, as one line on ctx.err (PrintError); returns
// r.exit_code.
int Render(const ToolContext& ctx, const CommandResult& r);

}  // namespace pgring::tool

#endif  // PGRING_TOOL_RENDER_H_
