#include "store/ring/extent_write.h"

#include <atomic>
#include <cstring>

#include "util/sync.h"

namespace pgring {

namespace {
// The bytes of one extent of `buffer` at `offset`: the buffer itself when
// the write has one extent (no copy), else a copy (each device write owns
// its buffer).
std::shared_ptr<AlignedBuffer> Piece(const std::shared_ptr<AlignedBuffer>& buffer,
                                     size_t extents, uint64_t offset, uint64_t length) {
  if (extents == 1) return buffer;
  auto piece = std::make_shared<AlignedBuffer>(length);
  std::memcpy(piece->data(), buffer->data() + offset, length);
  return piece;
}
}  // namespace

void SeekCounter::Issued(uint64_t offset, uint64_t length) {
  if (end_.exchange(offset + length) != offset) seeks_.fetch_add(1);
}

void WritesInFlight::Begin() {
  std::lock_guard<std::mutex> l(mu_);
  ++n_;
}

void WritesInFlight::End() {
  std::lock_guard<std::mutex> l(mu_);
  if (--n_ == 0) cv_.notify_all();
}

void WritesInFlight::WaitNone() {
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait(l, [this] { return n_ == 0; });
}

void WriteExtents(BlockDevice* device, const std::vector<Extent>& extents,
                  std::shared_ptr<AlignedBuffer> buffer, SeekCounter* seeks,
                  WritesInFlight* in_flight, std::function<void(absl::Status)> done) {
  struct Pending {
    std::atomic<int> left;
    Mutex mu;
    absl::Status status ABSL_GUARDED_BY(mu);
    std::function<void(absl::Status)> done;
    WritesInFlight* in_flight;
  };
  auto p = std::make_shared<Pending>();
  p->left.store(static_cast<int>(extents.size()));
  p->done = std::move(done);
  p->in_flight = in_flight;
  if (!extents.empty()) in_flight->Begin();
  uint64_t buf_off = 0;
  for (const Extent& e : extents) {
    std::shared_ptr<AlignedBuffer> piece = Piece(buffer, extents.size(), buf_off, e.length);
    buf_off += e.length;
    seeks->Issued(e.device_offset, e.length);
    device->WriteAsync(e.device_offset, std::move(piece), [p](absl::Status s) {
      if (!s.ok()) {
        MutexLock l(&p->mu);
        if (p->status.ok()) p->status = s;
      }
      if (p->left.fetch_sub(1) == 1) {
        absl::Status st;
        {
          MutexLock l(&p->mu);
          st = p->status;
        }
        // `done` (and what it holds) goes before the count does: once it
        // is zero the store may be destroyed.
        std::function<void(absl::Status)> done = std::move(p->done);
        done(st);
        done = nullptr;
        p->in_flight->End();
      }
    });
  }
}

void StartExtents(CallerWrites* writes, const std::vector<Extent>& extents,
                  std::shared_ptr<AlignedBuffer> buffer, SeekCounter* seeks,
                  std::function<void(absl::Status)> done) {
  // Every callback runs on the thread that waits (CallerWrites::Wait): no
  // lock; the last extent's reports the first error.
  struct Pending {
    size_t left;
    absl::Status status;
    std::function<void(absl::Status)> done;
  };
  auto p = std::make_shared<Pending>();
  p->left = extents.size();
  p->done = std::move(done);
  if (extents.empty()) {  // nothing to write: done in Wait all the same
    p->left = 1;
    writes->Start(0, nullptr, [p](absl::Status s) { p->done(std::move(s)); });
    return;
  }
  uint64_t buf_off = 0;
  for (const Extent& e : extents) {
    std::shared_ptr<AlignedBuffer> piece = Piece(buffer, extents.size(), buf_off, e.length);
    buf_off += e.length;
    seeks->Issued(e.device_offset, e.length);
    writes->Start(e.device_offset, std::move(piece), [p](absl::Status s) {
      if (!s.ok() && p->status.ok()) p->status = std::move(s);
      if (--p->left == 0 && p->done) p->done(std::move(p->status));
    });
  }
}

}  // namespace pgring
