#include "block_stats.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"

namespace pgring::fio {

std::optional<BlockStat> ParseBlockStat(std::string_view text) {
  std::vector<uint64_t> fields;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n')) ++i;
    if (i == text.size()) break;
    uint64_t v = 0;
    size_t digits = 0;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++digits) {
      v = v * 10 + static_cast<uint64_t>(text[i] - '0');
    }
    if (digits == 0 || (i < text.size() && text[i] != ' ' && text[i] != '\t' && text[i] != '\n')) {
      return std::nullopt;
    }
    fields.push_back(v);
  }
  if (fields.size() < 11) return std::nullopt;
  BlockStat s;
  s.write_requests = fields[4];
  s.write_sectors = fields[6];
  if (fields.size() >= 16) {
    s.flushes = fields[15];
    s.has_flushes = true;
  }
  return s;
}

absl::StatusOr<BlockDeviceOf> FindBlockDevice(const std::string& path,
                                              const std::string& sys_dev_block) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat("stat ", path, ": ", std::strerror(errno)));
  }
  const dev_t dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
  const std::string link = absl::StrCat(sys_dev_block, "/", major(dev), ":", minor(dev));
  std::error_code ec;
  const std::filesystem::path real = std::filesystem::canonical(link, ec);
  if (ec) {
    return absl::NotFoundError(absl::StrCat(path, (S_ISBLK(st.st_mode) ? " is" : " lives on"),
                                            " device ", major(dev), ":", minor(dev),
                                            ", which is no block device (", link, ": ",
                                            ec.message(), ")"));
  }
  BlockDeviceOf out;
  out.name = real.filename().string();
  if (std::filesystem::exists(real / "partition", ec)) out.disk = real.parent_path().filename().string();
  return out;
}

std::optional<BlockStat> BlockStats::ReadStat(const std::string& name) const {
  std::ifstream in(sys_class_block_ + "/" + name + "/stat");
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return ParseBlockStat(text.str());
}

void BlockStats::AddDeviceLocked(const std::string& name, const std::string& role,
                                 const std::string& disk) {
  auto it = devices_.find(name);
  if (it == devices_.end()) {
    std::optional<BlockStat> start = ReadStat(name);
    if (!start) {
      unavailable_[role] = absl::StrCat("cannot read ", sys_class_block_, "/", name, "/stat");
      return;
    }
    it = devices_.emplace(name, Device{{}, disk, *start}).first;
  }
  it->second.roles.insert(role);
}

void BlockStats::Add(const std::string& role, const std::string& path) {
  absl::StatusOr<BlockDeviceOf> dev = FindBlockDevice(path);
  std::lock_guard<std::mutex> lock(mu_);
  if (!dev.ok()) {
    unavailable_[role] = std::string(dev.status().message());
    return;
  }
  AddDeviceLocked(dev->name, role, dev->disk);
  // Linux counts a partition's flushes on its whole disk only.
  if (!dev->disk.empty()) AddDeviceLocked(dev->disk, "disk", "");
}

std::map<std::string, BlockStats::Delta> BlockStats::Read(
    std::map<std::string, std::string>* unavailable) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (unavailable != nullptr) *unavailable = unavailable_;
  std::map<std::string, Delta> out;
  for (const auto& [name, d] : devices_) {
    std::optional<BlockStat> now = ReadStat(name);
    if (!now) {
      if (unavailable != nullptr) {
        (*unavailable)[name] = absl::StrCat("cannot read ", sys_class_block_, "/", name, "/stat at the end");
      }
      continue;
    }
    auto sub = [](uint64_t a, uint64_t b) { return a >= b ? a - b : 0; };
    BlockStat c;
    c.write_requests = sub(now->write_requests, d.start.write_requests);
    c.write_sectors = sub(now->write_sectors, d.start.write_sectors);
    c.flushes = sub(now->flushes, d.start.flushes);
    c.has_flushes = now->has_flushes && d.start.has_flushes;
    out[name] = Delta{d.roles, d.disk, c};
  }
  return out;
}

std::map<std::string, std::string> BlockStats::unavailable() const {
  std::lock_guard<std::mutex> lock(mu_);
  return unavailable_;
}

}  // namespace pgring::fio
