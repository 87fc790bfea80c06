#include "format/interrupted_expand.h"

namespace pgring {

bool IsInterruptedExpand(const Label& label, const StoreMeta& meta) {
  return meta.uuid == label.uuid && meta.block_size == label.block_size &&
         meta.chunk_size == label.chunk_size && meta.backend == label.backend &&
         label.partition_size > meta.partition_size && label.chunk_count > meta.chunk_count;
}

StoreMeta GrownMeta(const Label& label, StoreMeta meta) {
  meta.partition_size = label.partition_size;
  meta.chunk_count = label.chunk_count;
  return meta;
}

}  // namespace pgring
