#include "check/stream_view.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "format/record.h"
#include "log/stream_reader.h"
#include "store/options_check.h"

namespace pgring {
namespace {

// Turns what the stream's reader reports into problems located in the
// stream: chunk and offset in the stream's chunks, the stream lpos.
class StreamReporter final : public RingReader::Reporter {
 public:
  explicit StreamReporter(std::vector<VerifyProblem>* out) : out_(out) {}
  void Corruption(const RingDamage& d) override {
    VerifyProblem p = StreamProblem(d.kind, d.what);
    if (d.where.chunk >= 0) {
      p.chunk = static_cast<uint64_t>(d.where.chunk);
      p.offset = d.where.offset;
    }
    p.lpos = d.lpos;
    out_->push_back(std::move(p));
  }

 private:
  std::vector<VerifyProblem>* out_;
};

}  // namespace

absl::StatusOr<StreamRead> ReadStreamForPgs(BlockDevice* device, const Geometry& g,
                                            const StreamKeys& stream,
                                            const std::map<PgId, const RingPgKeys*>& pgs,
                                            bool report) {
  StreamRead out;
  std::vector<PgId> ids;
  std::vector<UnhomedWant> wants;
  const absl::Status keys = stream.present() ? CheckStreamKeys(stream, g) : absl::OkStatus();
  const bool usable = stream.present() && keys.ok();
  for (const auto& [id, k] : pgs) {
    const PgPointer& p = *k->pointer;
    // A pointer with nothing unhomed counts every record.
    if (p.unhomed == 0) continue;
    ids.push_back(id);
    wants.push_back(UnhomedWant{id.ToString(), p.stamp, p.homed(), p.tail, p.stream_pos});
  }
  if (!usable) {
    const std::string why =
        stream.present()
            ? std::string(keys.message())
            : absl::StrCat("the store has no log stream (no ", std::string(kStreamPointerKey),
                           " key)");
    for (size_t i = 0; i < ids.size(); ++i) {
      UnhomedBytes& u = out.unhomed[ids[i]];
      u.stream_lpos = wants[i].stream_pos;
      u.error = absl::DataLossError(absl::StrFormat(
          "PG %s: its ring bytes [%u, %u) are in the log stream (from stream lpos %u), but %s",
          wants[i].name, wants[i].homed, wants[i].tail, wants[i].stream_pos, why));
    }
    return out;
  }
  StreamReporter reporter(&out.problems);
  std::vector<UnhomedFound> found;
  absl::Status read = CollectUnhomed(device, g, *stream.chunks, *stream.pointer, wants, &found,
                                     report ? &reporter : nullptr);
  // Damage is in the reporter's problems and in the PGs it cost; a device
  // error ends the command.
  if (!read.ok() && !absl::IsDataLoss(read)) return read;
  for (size_t i = 0; i < ids.size(); ++i) {
    UnhomedBytes& u = out.unhomed[ids[i]];
    u.error = found[i].error;
    u.stream_lpos = found[i].error_stream_lpos;
    u.lost_newest = found[i].lost_newest;
    if (u.error.ok()) u.bytes = std::move(found[i].bytes);
  }
  return out;
}

PgPointer LogPointer(const PgPointer& stored, const UnhomedBytes& u) {
  if (!u.error.ok() || u.bytes.size() <= stored.unhomed) return stored;
  PgPointer p = stored;
  const uint64_t homed = stored.homed();
  p.tail = homed + u.bytes.size();
  p.unhomed = u.bytes.size();
  // Items end at records' ends, and the records past the stored tail
  // follow it: their headers give each length and sequence.
  for (uint64_t at = stored.tail - homed; at + kRecordHeaderSize <= u.bytes.size();) {
    const RecordHeader h = DecodeRecordHeader(u.bytes.data() + at);
    p.tail_seq = h.seq + 1;
    at += kRecordHeaderSize + h.length;
  }
  return p;
}

void KeepLogLayout(const StreamKeys& stream, Options* options) {
  // A store without a stream stays without one (and at its format
  // version): the tool's writes go to the rings.
  if (!stream.present()) {
    options->log_layout = LogLayout::kPerPgRings;
    return;
  }
  options->log_layout = LogLayout::kStream;
  if (options->stream.home_bytes == 0) {
    // home_bytes 0 runs the stream cleaner, which would restate PGs the
    // command was not asked about. The largest home_bytes homes no PG by
    // count either (records are still written once) and runs no cleaner.
    options->stream.home_bytes = kMaxStreamBytes;
  }
  if (stream.chunks.ok() && options->stream.max_chunks != 0) {
    // StreamOptions::max_chunks bounds it to [2, 4096]; 0 (three quarters
    // of the partition) is left to the store, which keeps what its stream
    // holds.
    const uint64_t have = stream.chunks->chunks.size();
    options->stream.max_chunks = static_cast<uint32_t>(
        std::clamp<uint64_t>(std::max<uint64_t>(have, options->stream.max_chunks), 2, 4096));
  }
}

}  // namespace pgring
