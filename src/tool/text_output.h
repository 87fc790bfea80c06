// text_output.h — the text form of a command's result, as data. The command
// decides what is shown (which lines, which table columns for its backend,
// which problems under which label); render.h prints any TextOutput the same
// way. Keeping the text as data lets one renderer serve every command, and
// lets a test look at a result without parsing what was printed.
#ifndef PGRING_TOOL_TEXT_OUTPUT_H_
#define PGRING_TOOL_TEXT_OUTPUT_H_

#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "pgring/verify.h"

namespace pgring::tool {

// One line, printed as it is.
struct TextLine {
  std::string text;
};

// "<indent><key><padding><value>" lines: values start in one column, so a
// record's fields read as a list.
struct KeyValues {
  int indent = 2;
  // Columns from the key's start to its value's. A key as long as this still
  // gets one space before its value.
  int key_width = 20;
  std::vector<std::pair<std::string, std::string>> rows;

  void Add(std::string key, std::string value) {
    rows.emplace_back(std::move(key), std::move(value));
  }
};

struct Column {
  enum class Align { kLeft, kRight };
  std::string header;
  // Shorter cells are padded to this many characters; longer ones are printed
  // whole and push the rest of the line right (printf's rule), so a number
  // is never cut. 0: never padded (the last column of a line).
  int width = 0;
  Align align = Align::kRight;
  int gap = 1;  // spaces before the column; the first column has none

  static Column Left(std::string header, int width, int gap = 1) {
    return {std::move(header), width, Align::kLeft, gap};
  }
  static Column Right(std::string header, int width, int gap = 1) {
    return {std::move(header), width, Align::kRight, gap};
  }
};

// A header line, then one line per row, every cell in its column's width.
struct Table {
  std::vector<Column> columns;
  // A row with fewer cells than columns ends in its last cell, unpadded: it
  // spans the rest of the line (a PG whose keys cannot be read has only a
  // status to show).
  std::vector<std::vector<std::string>> rows;

  void AddRow(std::vector<std::string> cells) { rows.push_back(std::move(cells)); }
};

// Problems (VerifyProblem), one line each ("<label>: <problem>", or the problem alone with
// no label), each followed by its detail lines indented by four spaces.
struct ProblemList {
  struct Item {
    std::string label;  // "problem", "note", "fixed", ...; empty: none
    VerifyProblem problem;
    std::vector<std::string> details;  // "why: ...", "did: ..."
  };
  std::vector<Item> items;

  void Add(std::string label, VerifyProblem problem, std::vector<std::string> details = {}) {
    items.push_back({std::move(label), std::move(problem), std::move(details)});
  }
};

using TextBlock = std::variant<TextLine, KeyValues, Table, ProblemList>;

// The blocks of a command's text output, printed in order.
class TextOutput {
 public:
  void Line(std::string text) {
    blocks_.emplace_back(std::in_place_type<TextLine>, TextLine{std::move(text)});
  }
  void Add(TextBlock block) { blocks_.push_back(std::move(block)); }

  const std::vector<TextBlock>& blocks() const { return blocks_; }
  bool empty() const { return blocks_.empty(); }

 private:
  std::vector<TextBlock> blocks_;
};

}  // namespace pgring::tool

#endif  // PGRING_TOOL_TEXT_OUTPUT_H_
