"""bench/hdd_model.py — what a disk that does 150 seeks a second allows, in
client writes a second, from the engine's counts per client write (the HDD
model of docs/DESIGN.md §10; bench/report.py's section states it in full).

One disk for data, log partition and RocksDB: each commit group writes its
data blocks (a seek each), its log-partition writes (a seek each), then its
WAL append (a seek back to the WAL), plus RocksDB's own seeks. A data disk
and a metadata disk: the busier one decides; on the metadata disk the log's
writes and the WAL appends alternate (RocksDB alone appends in sequence).
A disk each: the device with the most seeks decides."""

SEEKS_PER_SECOND = 150


def rates(data_seeks, log_writes, log_seeks, groups, rdb_seeks):
    """(one disk, data + metadata disk, a disk each) in client writes a
    second, each None where no seek is left to limit it."""
    one = data_seeks + log_writes + groups + rdb_seeks
    meta = log_writes + groups + rdb_seeks if log_writes > 0 else rdb_seeks
    two = max(data_seeks, meta)
    each = max(data_seeks, log_seeks, rdb_seeks)
    return tuple(SEEKS_PER_SECOND / v if v > 0 else None for v in (one, two, each))
