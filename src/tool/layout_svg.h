// layout_svg.h — a picture of a ring store's partition: every chunk as a
// cell coloured by the PG that owns it (a colour hashed from the PG id) or
// grey when free, the log stream's chunks (stream mode) in their own colour,
// each PG's (and the stream's) head and tail marked, and a legend. When the
// partition has more chunks than `max_cells`, consecutive chunks are
// aggregated into one cell, coloured by the PG owning most of them (striped
// when shared), so 100,000 chunks and 1,000 PGs still make a readable image.
#ifndef PGRING_TOOL_LAYOUT_SVG_H_
#define PGRING_TOOL_LAYOUT_SVG_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pgring/types.h"
#include "tool/command.h"
#include "tool/tool_common.h"

namespace pgring::tool {

// What the picture shows: the owner of every chunk, and where heads/tails are.
struct LayoutInput {
  std::string title;  // e.g. the store UUID
  uint64_t chunk_count = 0;
  uint64_t chunk_size = 0;
  struct Pg {
    PgId id;
    std::vector<uint32_t> chunks;  // ring order
    int64_t head_chunk = -1;       // chunk holding the head (-1: none)
    int64_t tail_chunk = -1;       // chunk holding tail - 1 (-1: empty ring)
  };
  std::vector<Pg> pgs;
  // Stream mode: the log stream's chunks (ring order), drawn as the
  // stream's, and the chunks holding its head and tail - 1 (-1: none).
  std::vector<uint32_t> stream_chunks;
  int64_t stream_head_chunk = -1;
  int64_t stream_tail_chunk = -1;
};

struct LayoutOptions {
  uint64_t max_cells = 16384;
  uint32_t columns = 128;
};

// The SVG document. Deterministic: the same input gives the same bytes.
std::string RenderLayoutSvg(const LayoutInput& in, const LayoutOptions& options);

// "#rrggbb" for a PG: a hue from a hash of its id, so neighbours differ.
std::string PgColour(const PgId& pg);

// `layout --out FILE.svg [--max-cells N]`: ring stores only.
class LayoutCommand final : public Command {
 public:
  LayoutCommand()
      : Command("layout",
                "draw the partition as SVG: chunks coloured by PG, heads and tails marked") {}
  void AddOptions(CLI::App* app) override;
  CommandResult Run(const ToolContext& ctx) const override;

 private:
  std::string out_path_;
  LayoutOptions options_;
};

}  // namespace pgring::tool

#endif  // PGRING_TOOL_LAYOUT_SVG_H_
