// surgery.h — the commands that write a store through the public API: mkfs,
// and the offline surgery trim, rewind and remove-pg. Surgery requires the
// explicit --yes-i-really-mean-it; without it nothing is opened and the
// command exits 2.
#ifndef PGRING_TOOL_SURGERY_H_
#define PGRING_TOOL_SURGERY_H_

#include <cstdint>
#include <string>

#include "pgring/transaction.h"
#include "tool/command.h"
#include "tool/tool_common.h"
#include "tool/tool_db.h"

namespace pgring::tool {

// Opens the store for writing through the library (in the log layout it is
// in: stream_view.h), after checking read-only, without touching anything,
// that the partition and the RocksDB are one pgring store.
absl::StatusOr<LibraryStore> OpenForWrite(const ToolContext& ctx, RecoveryPolicy policy);
// What a command's --dry-run opens instead: the same checks, then the store
// read-only (nothing on the partition or in the RocksDB changes).
absl::StatusOr<LibraryStore> OpenForDryRun(const ToolContext& ctx, RecoveryPolicy policy);

struct MkfsArgs {
  uint64_t chunk_size = 1 << 20;
  uint64_t size = 0;             // 0: the whole device
  std::string backend = "ring";  // "ring" or "rocksdb"
  bool force = false;
  bool dry_run = false;
};

class MkfsCommand final : public Command {
 public:
  MkfsCommand() : Command("mkfs", "make a new, empty store on --dev with its metadata in --db") {}
  bool writes() const override { return true; }
  void AddOptions(CLI::App* app) override;
  CommandResult Run(const ToolContext& ctx) const override;

 private:
  MkfsArgs args_;
};

// trim and rewind: one PG, one version, the same checks and report; they
// differ in the transaction they commit.
class VersionSurgeryCommand : public Command {
 public:
  bool writes() const override { return true; }
  void AddOptions(CLI::App* app) override;
  CommandResult Run(const ToolContext& ctx) const override;

 protected:
  // `to_help` says what --to means; `done` names the operation in the report
  // ("trimmed"). Both are string literals.
  VersionSurgeryCommand(std::string_view name, std::string_view help, std::string_view to_help,
                        std::string_view done)
      : Command(name, help), to_help_(to_help), done_(done) {}
  virtual void Apply(Transaction* t, const PgId& pg, const Version& to) const = 0;
  // Whether it changes the dups (else the entries), and which versions it
  // drops (what --dry-run counts).
  virtual bool on_dups() const { return false; }
  virtual bool Drops(const Version& v, const Version& to) const = 0;

 private:
  std::string_view to_help_, done_;
  std::string pg_, to_;
  bool confirmed_ = false;
  bool dry_run_ = false;
};

// Drops the PG's entries with versions <= --to (Transaction::Trim).
class TrimCommand final : public VersionSurgeryCommand {
 public:
  TrimCommand()
      : VersionSurgeryCommand("trim", "drop a PG's entries up to a version",
                              "drop entries with versions <= this", "trimmed") {}

 protected:
  void Apply(Transaction* t, const PgId& pg, const Version& to) const override { t->Trim(pg, to); }
  bool Drops(const Version& v, const Version& to) const override { return v <= to; }
};

// Drops the PG's dups with versions <= --to (Transaction::TrimDups): Ceph's
// trim-pg-log-dups, for a PG whose dups grew without bound.
class TrimDupsCommand final : public VersionSurgeryCommand {
 public:
  TrimDupsCommand()
      : VersionSurgeryCommand("trim-dups", "drop a PG's dup entries up to a version",
                              "drop dups with versions <= this", "dups trimmed") {}

 protected:
  void Apply(Transaction* t, const PgId& pg, const Version& to) const override {
    t->TrimDups(pg, to);
  }
  bool on_dups() const override { return true; }
  bool Drops(const Version& v, const Version& to) const override { return v <= to; }
};

// Drops the PG's entries with versions > --to (Transaction::Rewind).
class RewindCommand final : public VersionSurgeryCommand {
 public:
  RewindCommand()
      : VersionSurgeryCommand("rewind", "drop a PG's entries after a version (a divergent tail)",
                              "drop entries with versions > this", "rewound") {}

 protected:
  void Apply(Transaction* t, const PgId& pg, const Version& to) const override {
    t->Rewind(pg, to);
  }
  bool Drops(const Version& v, const Version& to) const override { return v > to; }
};

// Removes the PG and frees its chunks; works on a PG that is damaged.
class RemovePgCommand final : public Command {
 public:
  RemovePgCommand() : Command("remove-pg", "remove a PG and free its chunks") {}
  bool writes() const override { return true; }
  void AddOptions(CLI::App* app) override;
  CommandResult Run(const ToolContext& ctx) const override;

 private:
  std::string pg_;
  bool confirmed_ = false;
  bool dry_run_ = false;
};

}  // namespace pgring::tool

#endif  // PGRING_TOOL_SURGERY_H_
