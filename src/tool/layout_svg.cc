#include "tool/layout_svg.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <fstream>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tool/inspect.h"

namespace pgring::tool {
namespace {

constexpr char kFreeColour[] = "#e4e4e4";
constexpr int32_t kFree = -1;
constexpr int32_t kConflict = -2;
// The log stream's chunks: one colour no PG hue takes (PG colours are
// saturated mid-lightness hues; this is near black).
constexpr int32_t kStream = -3;
constexpr char kStreamColour[] = "#23233a";

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

uint64_t HashPg(const PgId& pg) {
  // FNV-1a over the fields, then a final mix so close ids spread far apart.
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 1099511628211ull;
    }
  };
  mix(static_cast<uint64_t>(pg.pool), 8);
  mix(pg.seed, 4);
  mix(static_cast<uint8_t>(pg.shard), 1);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

}  // namespace

std::string PgColour(const PgId& pg) {
  const uint64_t h = HashPg(pg);
  const double hue = static_cast<double>(h % 360);
  const double sat = 0.55 + 0.30 * static_cast<double>((h >> 16) % 100) / 100.0;
  const double light = 0.38 + 0.24 * static_cast<double>((h >> 32) % 100) / 100.0;
  // HSL to RGB.
  const double c = (1 - std::fabs(2 * light - 1)) * sat;
  const double hp = hue / 60.0;
  const double x = c * (1 - std::fabs(std::fmod(hp, 2.0) - 1));
  double r = 0, g = 0, b = 0;
  if (hp < 1) {
    r = c;
    g = x;
  } else if (hp < 2) {
    r = x;
    g = c;
  } else if (hp < 3) {
    g = c;
    b = x;
  } else if (hp < 4) {
    g = x;
    b = c;
  } else if (hp < 5) {
    r = x;
    b = c;
  } else {
    r = c;
    b = x;
  }
  const double m = light - c / 2;
  auto to8 = [&](double v) { return static_cast<int>(std::lround((v + m) * 255)); };
  return absl::StrFormat("#%02x%02x%02x", to8(r), to8(g), to8(b));
}

std::string RenderLayoutSvg(const LayoutInput& in, const LayoutOptions& options) {
  const uint64_t n = in.chunk_count;
  const uint64_t max_cells = std::max<uint64_t>(1, options.max_cells);
  const uint64_t per_cell = std::max<uint64_t>(1, (n + max_cells - 1) / max_cells);
  const uint64_t cells = n == 0 ? 0 : (n + per_cell - 1) / per_cell;
  const uint64_t cols = std::max<uint64_t>(1, std::min<uint64_t>(options.columns, cells));
  const uint64_t rows = cells == 0 ? 0 : (cells + cols - 1) / cols;
  const int cell = static_cast<int>(std::clamp<uint64_t>(1024 / cols, 6, 24));
  const int margin = 16, top = 56;
  const int grid_w = static_cast<int>(cols) * cell, grid_h = static_cast<int>(rows) * cell;

  // Owner of every owned chunk (index into in.pgs, or kConflict). A map, not
  // an array per chunk: a partition may have billions of chunks.
  absl::flat_hash_map<uint32_t, int32_t> owner;
  std::vector<uint64_t> owned_by(in.pgs.size(), 0);
  // The stream's first, as the store claims them: a PG naming one conflicts.
  uint64_t stream_owned = 0;
  for (uint32_t c : in.stream_chunks) {
    if (c >= n) continue;
    auto [it, fresh] = owner.emplace(c, kStream);
    if (!fresh) it->second = kConflict;
    ++stream_owned;
  }
  for (size_t i = 0; i < in.pgs.size(); ++i) {
    for (uint32_t c : in.pgs[i].chunks) {
      if (c >= n) continue;
      auto [it, fresh] = owner.emplace(c, static_cast<int32_t>(i));
      if (!fresh) it->second = kConflict;
      ++owned_by[i];
    }
  }
  // Per cell: (owner, chunks), the largest first (ties: lowest owner).
  std::vector<std::vector<std::pair<int32_t, uint64_t>>> cell_counts(cells);
  auto add = [](std::vector<std::pair<int32_t, uint64_t>>* v, int32_t o, uint64_t k) {
    for (auto& p : *v) {
      if (p.first == o) {
        p.second += k;
        return;
      }
    }
    v->emplace_back(o, k);
  };
  for (const auto& [c, o] : owner) add(&cell_counts[c / per_cell], o, 1);
  for (uint64_t ci = 0; ci < cells; ++ci) {
    auto& v = cell_counts[ci];
    uint64_t owned_here = 0;
    for (const auto& p : v) owned_here += p.second;
    const uint64_t len = std::min(n, (ci + 1) * per_cell) - ci * per_cell;
    if (len > owned_here) v.emplace_back(kFree, len - owned_here);
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
      return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
  }
  // The legend lists the PGs holding the most chunks.
  std::vector<size_t> order(in.pgs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return owned_by[a] > owned_by[b]; });
  const size_t legend_pgs = std::min<size_t>(order.size(), 40);
  const int legend_x = margin + grid_w + 24;
  const int legend_h =
      20 * static_cast<int>(5 + legend_pgs + 2 + (in.stream_chunks.empty() ? 0 : 1));
  const int width = legend_x + 360;
  const int height = std::max(top + grid_h + margin + 40, top + legend_h);

  std::string s;
  absl::StrAppend(&s, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  absl::StrAppendFormat(&s,
                        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                        "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n",
                        width, height, width, height);
  absl::StrAppend(&s, "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
  absl::StrAppendFormat(&s, "<text x=\"%d\" y=\"22\" font-size=\"16\">%s</text>\n", margin,
                        Escape(in.title));
  const uint64_t free_chunks = n - owner.size();
  const std::string stream_part =
      in.stream_chunks.empty() ? std::string()
                               : absl::StrFormat(", %u in the log stream", stream_owned);
  absl::StrAppendFormat(
      &s,
      "<text x=\"%d\" y=\"42\">%u chunks of %s, %u PGs%s, %u free; %u chunk%s per cell</text>\n",
      margin, n, HumanBytes(in.chunk_size), in.pgs.size(), stream_part, free_chunks, per_cell,
      per_cell == 1 ? "" : "s");

  // Cells.
  std::vector<int64_t> cell_head_marks(cells, 0), cell_tail_marks(cells, 0);
  auto mark = [&](int64_t head_chunk, int64_t tail_chunk) {
    if (head_chunk >= 0 && static_cast<uint64_t>(head_chunk) < n) {
      ++cell_head_marks[static_cast<uint64_t>(head_chunk) / per_cell];
    }
    if (tail_chunk >= 0 && static_cast<uint64_t>(tail_chunk) < n) {
      ++cell_tail_marks[static_cast<uint64_t>(tail_chunk) / per_cell];
    }
  };
  for (const auto& pg : in.pgs) mark(pg.head_chunk, pg.tail_chunk);
  mark(in.stream_head_chunk, in.stream_tail_chunk);
  absl::StrAppend(&s, "<g id=\"chunks\" stroke=\"white\" stroke-width=\"0.5\">\n");
  for (uint64_t ci = 0; ci < cells; ++ci) {
    const uint64_t first = ci * per_cell, last = std::min(n, first + per_cell);
    const auto& counts = cell_counts[ci];
    int32_t top_owner = counts.front().first;
    // An owned chunk outweighs free ones in the colour: space in use shows.
    if (top_owner == kFree && counts.size() > 1) top_owner = counts[1].first;
    std::string colour = top_owner == kFree       ? kFreeColour
                         : top_owner == kConflict ? "#ff0000"
                         : top_owner == kStream   ? kStreamColour
                                                  : PgColour(in.pgs[top_owner].id);
    const int x = margin + static_cast<int>(ci % cols) * cell;
    const int y = top + static_cast<int>(ci / cols) * cell;
    std::string title = last - first == 1 ? absl::StrCat("chunk ", first)
                                          : absl::StrCat("chunks ", first, "-", last - 1);
    for (size_t k = 0; k < counts.size(); ++k) {
      const auto& [o, cnt] = counts[k];
      absl::StrAppend(&title, k == 0 ? ": " : ", ",
                      o == kFree       ? std::string("free")
                      : o == kConflict ? std::string("CLAIMED BY TWO PGS")
                      : o == kStream   ? std::string("the log stream")
                                       : absl::StrCat("PG ", in.pgs[o].id.ToString()));
      if (last - first > 1) absl::StrAppend(&title, " (", cnt, ")");
    }
    absl::StrAppendFormat(
        &s,
        "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"><title>%s</title></rect>\n",
        x, y, cell, cell, colour, Escape(title));
    const bool shared =
        std::count_if(counts.begin(), counts.end(), [](auto& p) { return p.first != kFree; }) > 1;
    if (shared) {
      absl::StrAppendFormat(
          &s,
          "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\" stroke-width=\"1\"/>\n", x,
          y + cell, x + cell, y);
    }
    if (std::any_of(counts.begin(), counts.end(), [](auto& p) { return p.first == kConflict; })) {
      absl::StrAppendFormat(
          &s, "<path d=\"M%d %dL%d %dM%d %dL%d %d\" stroke=\"black\" stroke-width=\"2\"/>\n", x + 1,
          y + 1, x + cell - 1, y + cell - 1, x + cell - 1, y + 1, x + 1, y + cell - 1);
    }
  }
  absl::StrAppend(&s, "</g>\n<g id=\"marks\">\n");
  for (uint64_t ci = 0; ci < cells; ++ci) {
    const int x = margin + static_cast<int>(ci % cols) * cell;
    const int y = top + static_cast<int>(ci / cols) * cell;
    const int r = std::max(2, cell / 4);
    if (cell_head_marks[ci] > 0) {
      // Head: a triangle at the cell's left.
      absl::StrAppendFormat(&s,
                            "<path d=\"M%d %dL%d %dL%d %dZ\" fill=\"white\" stroke=\"black\" "
                            "stroke-width=\"0.8\"><title>%d head(s)</title></path>\n",
                            x + 1, y + 1, x + 1 + 3 * r / 2, y + cell / 2, x + 1, y + cell - 1,
                            cell_head_marks[ci]);
    }
    if (cell_tail_marks[ci] > 0) {
      // Tail: a dot at the cell's right.
      absl::StrAppendFormat(&s,
                            "<circle cx=\"%d\" cy=\"%d\" r=\"%d\" fill=\"black\" stroke=\"white\" "
                            "stroke-width=\"0.8\"><title>%d tail(s)</title></circle>\n",
                            x + cell - r - 1, y + cell / 2, r, cell_tail_marks[ci]);
    }
  }
  absl::StrAppend(&s, "</g>\n<g id=\"legend\">\n");
  int ly = top + 4;
  auto swatch = [&](const std::string& fill, const std::string& label) {
    absl::StrAppendFormat(&s,
                          "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\" "
                          "stroke=\"#999\" stroke-width=\"0.5\"/>"
                          "<text x=\"%d\" y=\"%d\">%s</text>\n",
                          legend_x, ly, fill, legend_x + 18, ly + 10, Escape(label));
    ly += 20;
  };
  swatch(kFreeColour, "free chunk");
  absl::StrAppendFormat(&s,
                        "<path d=\"M%d %dL%d %dL%d %dZ\" fill=\"white\" stroke=\"black\"/><text "
                        "x=\"%d\" y=\"%d\">head of a PG's ring</text>\n",
                        legend_x, ly, legend_x + 10, ly + 6, legend_x, ly + 12, legend_x + 18,
                        ly + 10);
  ly += 20;
  absl::StrAppendFormat(&s,
                        "<circle cx=\"%d\" cy=\"%d\" r=\"4\" fill=\"black\"/><text x=\"%d\" "
                        "y=\"%d\">tail of a PG's ring</text>\n",
                        legend_x + 6, ly + 6, legend_x + 18, ly + 10);
  ly += 20;
  if (per_cell > 1) {
    absl::StrAppendFormat(
        &s,
        "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/><text x=\"%d\" "
        "y=\"%d\">cell shared by several PGs (colour: the largest)</text>\n",
        legend_x, ly + 12, legend_x + 12, ly, legend_x + 18, ly + 10);
    ly += 20;
  }
  if (!in.stream_chunks.empty()) {
    swatch(kStreamColour, absl::StrFormat("the log stream: %u chunk%s (marks: its head, tail)",
                                          stream_owned, stream_owned == 1 ? "" : "s"));
  }
  swatch("#ff0000", "chunk claimed by two PGs (damage)");
  absl::StrAppendFormat(
      &s, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">PGs (colour hashed from the id)</text>\n",
      legend_x, ly + 10);
  ly += 20;
  for (size_t k = 0; k < legend_pgs; ++k) {
    const auto& pg = in.pgs[order[k]];
    swatch(PgColour(pg.id),
           absl::StrFormat("PG %s: %u chunk%s", pg.id.ToString(), owned_by[order[k]],
                           owned_by[order[k]] == 1 ? "" : "s"));
  }
  if (order.size() > legend_pgs) {
    absl::StrAppendFormat(
        &s, "<text x=\"%d\" y=\"%d\">... and %u more PGs (hover a cell for its owner)</text>\n",
        legend_x, ly + 10, order.size() - legend_pgs);
  }
  absl::StrAppend(&s, "</g>\n</svg>\n");
  return s;
}

void LayoutCommand::AddOptions(CLI::App* app) {
  app->add_option("--out", out_path_, "the SVG file to write")->required();
  app->add_option("--max-cells", options_.max_cells,
                  "at most this many cells; more chunks are aggregated per cell")
      ->check(CLI::Range(uint64_t{16}, uint64_t{1} << 20))
      ->capture_default_str();
}

CommandResult LayoutCommand::Run(const ToolContext& ctx) const {
  auto a = OpenForRead(ctx);
  if (!a.ok()) return Fail(ctx, a.status(), kExitUsage);
  if (a->backend != Backend::kRing) {
    return Fail(ctx, "layout draws ring stores; the RocksDB backend keeps no logs on the partition",
                kExitFailed);
  }
  LayoutInput in;
  in.title = absl::StrCat("pgring store ", a->uuid);
  in.chunk_count = a->geometry.chunk_count;
  in.chunk_size = a->geometry.chunk_size;
  for (const auto& [id, k] : a->ring_pgs) {
    if (!k.chunks.ok()) continue;
    LayoutInput::Pg pg;
    pg.id = id;
    pg.chunks = k.chunks->chunks;
    if (k.pointer.ok()) {
      const PgChunkList& c = *k.chunks;
      ChunkPos h = Locate(c, a->geometry, k.pointer->head);
      pg.head_chunk = h.chunk;
      if (k.pointer->tail > c.base)
        pg.tail_chunk = Locate(c, a->geometry, k.pointer->tail - 1).chunk;
      if (k.pointer->head == k.pointer->tail) pg.head_chunk = -1;  // nothing live: no head to show
    }
    in.pgs.push_back(std::move(pg));
  }
  if (a->stream.chunks.ok()) {
    const PgChunkList& c = *a->stream.chunks;
    in.stream_chunks = c.chunks;
    if (a->stream.pointer.ok()) {
      const StreamPointer& p = *a->stream.pointer;
      if (p.head != p.tail) {
        in.stream_head_chunk = Locate(c, a->geometry, p.head).chunk;
        in.stream_tail_chunk = Locate(c, a->geometry, p.tail - 1).chunk;
      }
    }
  }
  const std::string svg = RenderLayoutSvg(in, options_);
  {
    std::ofstream f(out_path_, std::ios::binary | std::ios::trunc);
    f << svg;
    f.close();
    if (!f) return Fail(ctx, absl::StrCat("cannot write ", out_path_), kExitFailed);
  }
  const uint64_t per_cell = std::max<uint64_t>(
      1, (in.chunk_count + options_.max_cells - 1) / std::max<uint64_t>(1, options_.max_cells));
  CommandResult r;
  Json& j = r.json;
  j["file"] = out_path_;
  j["bytes"] = svg.size();
  j["chunks"] = in.chunk_count;
  j["chunks_per_cell"] = per_cell;
  j["pgs"] = in.pgs.size();
  j["stream_chunks"] = in.stream_chunks.size();
  r.text.Line(absl::StrFormat(
      "wrote %s: %u chunks (%u per cell), %u PGs%s, %u bytes", out_path_, in.chunk_count, per_cell,
      in.pgs.size(),
      in.stream_chunks.empty() ? std::string()
                               : absl::StrFormat(", the log stream (%u chunk%s)",
                                                 in.stream_chunks.size(),
                                                 in.stream_chunks.size() == 1 ? "" : "s"),
      svg.size()));
  return r;
}

}  // namespace pgring::tool
