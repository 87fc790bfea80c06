// write_requests.h — a device's write requests, and how many of them do not
// start where the previous one ended: on a disk each of those is a seek
// (the HDD model of docs/DESIGN.md §10). The log partition's are the
// store's own (StoreStats::device_writes, device_seeks); the engine counts
// the data file's and RocksDB's with this.
#ifndef PGRING_TOOLS_FIO_ENGINE_WRITE_REQUESTS_H_
#define PGRING_TOOLS_FIO_ENGINE_WRITE_REQUESTS_H_

#include <cstdint>
#include <mutex>

namespace pgring::fio {

class WriteRequests {
 public:
  // A request of `length` bytes at `offset` in `file`, in the order the
  // requests are issued. Files lie apart on a disk, so a request to another
  // file than the previous one is not contiguous with it.
  void Issued(uint64_t file, uint64_t offset, uint64_t length) {
    std::lock_guard<std::mutex> l(mu_);
    ++requests_;
    if (!any_ || file != file_ || offset != end_) ++noncontiguous_;
    any_ = true;
    file_ = file;
    end_ = offset + length;
  }
  // Both counts at one moment.
  struct Counts {
    uint64_t requests = 0;
    uint64_t noncontiguous = 0;
  };
  Counts Read() const {
    std::lock_guard<std::mutex> l(mu_);
    return {requests_, noncontiguous_};
  }

 private:
  mutable std::mutex mu_;
  bool any_ = false;
  uint64_t file_ = 0;
  uint64_t end_ = 0;
  uint64_t requests_ = 0;
  uint64_t noncontiguous_ = 0;
};

}  // namespace pgring::fio

#endif  // PGRING_TOOLS_FIO_ENGINE_WRITE_REQUESTS_H_
