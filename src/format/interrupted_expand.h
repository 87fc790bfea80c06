// interrupted_expand.h — a store whose growth a crash cut short.
//
// Growing a store (pgring-tool expand; docs/FORMAT.md, "Growing a store")
// writes the label first and pgring.meta second, both with the new
// partition_size and chunk_count. A crash between the two leaves a label
// that describes a larger store than pgring.meta and is otherwise the same.
// The chunks past the metadata's count were never used (a store is grown
// offline), so an open finishes the growth: the label's geometry holds
// (GrownMeta), and a writable open writes it to pgring.meta.
#ifndef PGRING_FORMAT_INTERRUPTED_EXPAND_H_
#define PGRING_FORMAT_INTERRUPTED_EXPAND_H_

#include "format/label.h"
#include "format/metadata_keys.h"

namespace pgring {

// True for exactly that pair: the same UUID, block size, chunk size and
// backend, the label's partition_size and chunk_count each larger than the
// metadata's (expand adds at least one whole chunk, so both grow). Any other
// disagreement, such as a chunk_count alone, is damage, not a growth.
bool IsInterruptedExpand(const Label& label, const StoreMeta& meta);

// `meta` with the label's partition_size and chunk_count.
StoreMeta GrownMeta(const Label& label, StoreMeta meta);

}  // namespace pgring

#endif  // PGRING_FORMAT_INTERRUPTED_EXPAND_H_
