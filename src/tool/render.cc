#include "tool/render.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace pgring::tool {
namespace {

void AppendCell(std::string* line, std::string_view cell, int width, Column::Align align) {
  const size_t pad = cell.size() < static_cast<size_t>(width) ? width - cell.size() : 0;
  if (align == Column::Align::kRight) line->append(pad, ' ');
  line->append(cell);
  if (align == Column::Align::kLeft) line->append(pad, ' ');
}

std::string TableLine(const std::vector<Column>& columns, const std::vector<std::string>& cells) {
  std::string line;
  const size_t n = std::min(cells.size(), columns.size());
  for (size_t i = 0; i < n; ++i) {
    const Column& c = columns[i];
    if (i > 0) line.append(c.gap, ' ');
    const bool spans_rest = i + 1 == n && n < columns.size();
    AppendCell(&line, cells[i], spans_rest ? 0 : c.width, c.align);
  }
  return line;
}

struct BlockPrinter {
  std::ostream& out;

  void operator()(const TextLine& l) const { out << l.text << "\n"; }

  void operator()(const KeyValues& kv) const {
    for (const auto& [key, value] : kv.rows) {
      std::string line(kv.indent, ' ');
      line.append(key);
      const size_t width = static_cast<size_t>(kv.key_width);
      line.append(key.size() < width ? width - key.size() : 1, ' ');
      line.append(value);
      out << line << "\n";
    }
  }

  void operator()(const Table& t) const {
    std::vector<std::string> headers;
    for (const Column& c : t.columns) headers.push_back(c.header);
    out << TableLine(t.columns, headers) << "\n";
    for (const auto& row : t.rows) out << TableLine(t.columns, row) << "\n";
  }

  void operator()(const ProblemList& ps) const {
    for (const auto& item : ps.items) {
      if (!item.label.empty()) out << item.label << ": ";
      out << item.problem.ToString() << "\n";
      for (const std::string& d : item.details) out << "    " << d << "\n";
    }
  }
};

}  // namespace

void RenderText(const TextOutput& text, std::ostream& out) {
  for (const TextBlock& b : text.blocks()) std::visit(BlockPrinter{out}, b);
}

void RenderJson(const Json& doc, std::ostream& out) {
  out << doc.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
}

int Render(const ToolContext& ctx, const CommandResult& r) {
  if (ctx.json()) {
    if (!r.json.is_null()) RenderJson(r.json, *ctx.out);
  } else {
    RenderText(r.text, *ctx.out);
  }
  if (r.error) return PrintError(ctx, *r.error, r.exit_code);
  return r.exit_code;
}

}  // namespace pgring::tool
