#include "tool/tool_db.h"

#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "pgring/device.h"
#include "store/metadata_db.h"
#include "util/status_macros.h"

namespace pgring::tool {
namespace {

absl::Status Rocks(const rocksdb::Status& s, std::string_view context) {
  return FromRocks(&s, context);
}

}  // namespace

absl::StatusOr<std::unique_ptr<ToolDb>> ToolDb::Open(const ToolContext& ctx, Mode mode) {
  std::unique_ptr<ToolDb> t(new ToolDb);
  t->path_ = ctx.db;
  if (ctx.db.empty()) return absl::InvalidArgumentError("no RocksDB given (--db PATH)");
  if (!NeedsToolDb(ctx)) return t;
  if (ctx.live && mode != Mode::kReadOnly) {
    return absl::InvalidArgumentError(
        "--live is for commands that only read: a store in use cannot be changed");
  }
  const std::string family =
      ctx.column_family.empty() ? rocksdb::kDefaultColumnFamilyName : ctx.column_family;
  rocksdb::DBOptions o;
  rocksdb::Env* env = rocksdb::Env::Default();
  const bool exists = env->FileExists(ctx.db + "/CURRENT").ok();
  if (!exists && mode != Mode::kCreate) {
    return absl::NotFoundError(absl::StrCat("no RocksDB at ", ctx.db));
  }
  std::vector<std::string> families = {rocksdb::kDefaultColumnFamilyName};
  if (exists) {
    rocksdb::Status s = rocksdb::DB::ListColumnFamilies(o, ctx.db, &families);
    if (!s.ok()) {
      return ExplainOpenError(Rocks(s, absl::StrCat("listing the column families of RocksDB at ",
                                                    ctx.db)),
                              absl::StrCat("RocksDB at ", ctx.db));
    }
  }
  const bool has_family = std::find(families.begin(), families.end(), family) != families.end();
  if (!has_family && mode != Mode::kCreate) {
    return absl::NotFoundError(absl::StrCat("RocksDB at ", ctx.db, " has no column family '",
                                            family, "' (it has: ", absl::StrJoin(families, ", "),
                                            ")"));
  }
  // Read-only and secondary opens may name a subset of the families;
  // read-write ones must name them all.
  std::vector<std::string> open_families;
  if (mode == Mode::kReadOnly) {
    open_families = {rocksdb::kDefaultColumnFamilyName};
    if (family != rocksdb::kDefaultColumnFamilyName) open_families.push_back(family);
  } else {
    open_families = families;
  }
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const std::string& f : open_families) {
    descriptors.emplace_back(f, rocksdb::ColumnFamilyOptions());
  }
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s;
  const std::string what = absl::StrCat("RocksDB at ", ctx.db);
  if (mode == Mode::kReadOnly && ctx.live) {
    // A secondary instance keeps its own info log and MANIFEST tail here.
    std::string tmpl = (std::filesystem::temp_directory_path() / "pgring-tool-live.XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) {
      return absl::InternalError(absl::StrCat("cannot make a directory for a secondary RocksDB in ",
                                              std::filesystem::temp_directory_path().string()));
    }
    t->secondary_dir_ = tmpl;
    o.max_open_files = -1;  // RocksDB requires it of a secondary instance
    s = rocksdb::DB::OpenAsSecondary(o, ctx.db, t->secondary_dir_, descriptors, &t->handles_, &raw);
    if (s.ok()) {
      t->db_ = raw;
      s = raw->TryCatchUpWithPrimary();
    }
  } else if (mode == Mode::kReadOnly) {
    s = rocksdb::DB::OpenForReadOnly(o, ctx.db, descriptors, &t->handles_, &raw);
  } else {
    o.create_if_missing = mode == Mode::kCreate;
    s = rocksdb::DB::Open(o, ctx.db, descriptors, &t->handles_, &raw);
  }
  if (raw != nullptr) t->db_ = raw;
  if (!s.ok()) return ExplainOpenError(Rocks(s, absl::StrCat("opening ", what)), what);
  for (rocksdb::ColumnFamilyHandle* h : t->handles_) {
    if (h->GetName() == family) t->cf_ = h;
  }
  if (t->cf_ == nullptr) {
    rocksdb::ColumnFamilyHandle* h = nullptr;
    s = raw->CreateColumnFamily(rocksdb::ColumnFamilyOptions(), family, &h);
    if (!s.ok()) {
      return Rocks(s, absl::StrCat("creating column family '", family, "' in ", what));
    }
    t->handles_.push_back(h);
    t->cf_ = h;
  }
  return t;
}

ToolDb::~ToolDb() {
  if (db_ != nullptr) {
    for (rocksdb::ColumnFamilyHandle* h : handles_) db_->DestroyColumnFamilyHandle(h).PermitUncheckedError();
    db_->Close().PermitUncheckedError();
    delete db_;
  }
  if (!secondary_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(secondary_dir_, ec);
  }
}

absl::StatusOr<LibraryStore> OpenLibraryStore(const ToolContext& ctx, const Options& options) {
  LibraryStore l;
  ASSIGN_OR_RETURN(l.db, ToolDb::Open(ctx, options.read_only ? ToolDb::Mode::kReadOnly
                                                     : ToolDb::Mode::kReadWrite));
  absl::StatusOr<std::unique_ptr<Store>> st;
  if (ctx.live) {
    DeviceOptions d;
    d.io_engine = options.io_engine;
    d.io_queue_depth = options.io_queue_depth;
    d.read_only = true;
    d.exclusive_lock = false;  // the running process holds LOCK_EX
    auto device = Device::Open(ctx.dev, d);
    if (!device.ok()) return ExplainOpenError(device.status(), absl::StrCat("partition ", ctx.dev));
    st = Store::Open(*std::move(device), l.db->location(), options);
  } else {
    st = Store::Open(ctx.dev, l.db->location(), options);
  }
  if (!st.ok()) return ExplainOpenError(st.status(), "the store");
  l.store = *std::move(st);
  return l;
}

absl::StatusOr<std::unique_ptr<OfflineStore>> OpenOfflineStore(const ToolContext& ctx,
                                                               bool writable) {
  if (ctx.dev.empty()) return absl::InvalidArgumentError("no partition given (--dev PATH)");
  if (ctx.live && writable) {
    return absl::InvalidArgumentError(
        "--live is for commands that only read: a store in use cannot be changed");
  }
  OfflineStoreOptions o;
  o.writable = writable;
  // LOCK_SH read-only, LOCK_EX writable; none for --live (the process
  // holding the store has LOCK_EX).
  o.lock_partition = !ctx.live;
  o.db_name = DbName(ctx);
  o.explain_open_error = ExplainOpenError;
  ASSIGN_OR_RETURN(auto s, OfflineStore::OpenPartition(ctx.dev, o));
  if (ctx.db.empty()) return s;
  auto t = ToolDb::Open(ctx, writable ? ToolDb::Mode::kReadWrite : ToolDb::Mode::kReadOnly);
  if (!t.ok()) return ExplainOpenError(t.status(), DbName(ctx));
  std::shared_ptr<ToolDb> db = *std::move(t);
  const MetadataLocation location = db->location();
  RETURN_IF_ERROR(s->OpenMetadata(location, std::move(db)));
  return s;
}

std::string DbName(const ToolContext& ctx) {
  std::string name = absl::StrCat("RocksDB at ", ctx.db);
  if (!ctx.column_family.empty()) absl::StrAppend(&name, ", column family '", ctx.column_family, "'");
  return name;
}

MetadataLocation ToolDb::location() const {
  if (db_ == nullptr) return MetadataLocation::OwnDb(path_);
  return MetadataLocation::SharedDb(db_, cf_);
}

}  // namespace pgring::tool
