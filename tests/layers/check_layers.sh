#!/usr/bin/env bash
# check_layers.sh — fails on an #include that goes up the library's layer
# order, or on a front end that reaches into src/ or downcasts (a
# dynamic_cast, the way to a backend's internals) (docs/DESIGN.md §1).
#
# Layers, bottom to top (each may include its own and those below it):
#   util, device, format, alloc, log, store, check, tool
# Every layer may include the public API (include/pgring/), Abseil, RocksDB
# and system headers; format (the encodings) takes only the public value
# types (pgring/types.h) and the format versions (pgring/version.h), not the
# store's options or API. Front ends (examples/, tools/pgring_tool.cc, the fio
# engine, bench's end-to-end programs) include the public API only.
#
# Usage: check_layers.sh [ROOT]     check the tree at ROOT (default: repo)
#        check_layers.sh --self-test   show that each rule fails when broken
set -euo pipefail

LAYERS=(util device format alloc log store check tool)

rank_of() {
  local i
  for i in "${!LAYERS[@]}"; do
    [[ ${LAYERS[$i]} == "$1" ]] && { echo "$i"; return; }
  done
  echo -1
}

# bench's micro-benchmarks of internal units may include src/ as tests do.
MICRO_BENCHMARKS=(bench/chunk_allocator_bench.cc bench/crc32c_bench.cc
                  bench/mapping_table_bench.cc bench/record_bench.cc bench/ring_space_bench.cc)

# The project headers FILE includes, one a line: "x/y.h" and <x/y.h> alike
# (an angle-bracket include of a layer's header reaches into src/ all the
# same); <format> and the like, which have no directory, are the standard
# library's.
includes_of() {
  sed -n -e 's/^#include "\([^"]*\)".*/\1/p' -e 's/^#include <\([^>]*\/[^>]*\)>.*/\1/p' "$1"
}

check_tree() {
  local root=$1 bad=0 f layer rank inc target trank rel
  while IFS= read -r f; do
    rel=${f#"$root"/src/}
    layer=${rel%%/*}
    rank=$(rank_of "$layer")
    if [[ $rank -lt 0 ]]; then
      echo "layers: $f: src/$layer is not a known layer (${LAYERS[*]})"
      bad=1
      continue
    fi
    while IFS= read -r inc; do
      target=${inc%%/*}
      if [[ $layer == format && $target == pgring && $inc != pgring/types.h && $inc != pgring/version.h ]]; then
        echo "layers: $f includes \"$inc\": format takes only pgring/types.h and pgring/version.h from the public API"
        bad=1
      fi
      trank=$(rank_of "$target")
      [[ $trank -lt 0 ]] && continue  # pgring/, absl/, rocksdb/, ...
      if [[ $trank -gt $rank ]]; then
        echo "layers: $f includes \"$inc\": $layer may not include from $target (above it)"
        bad=1
      fi
    done < <(includes_of "$f")
  done < <(find "$root/src" -name '*.h' -o -name '*.cc' | sort)

  while IFS= read -r f; do
    rel=${f#"$root"/}
    case " ${MICRO_BENCHMARKS[*]} " in *" $rel "*) continue ;; esac
    while IFS= read -r inc; do
      target=${inc%%/*}
      if [[ $(rank_of "$target") -ge 0 ]]; then
        echo "layers: front end $rel includes \"$inc\" from src/: use the public API (include/pgring/)"
        bad=1
      fi
    done < <(includes_of "$f")
    if grep -q 'dynamic_cast<' "$f"; then
      echo "layers: front end $rel uses dynamic_cast: what it needs of a Store belongs in the public API"
      bad=1
    fi
  done < <(find "$root/examples" "$root/tools" "$root/bench" \( -name '*.h' -o -name '*.cc' \) 2>/dev/null | sort)
  return $bad
}

self_test() {
  local tmp rc=0
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  mkdir -p "$tmp/src/format" "$tmp/src/store" "$tmp/src/check" "$tmp/examples/x" "$tmp/tools"
  # expect caught|accepted FILE LINE WHAT: FILE (under the tree) holds LINE
  # alone among the files the step writes; the check must fail / pass.
  expect() {
    local want=$1 file=$tmp/$2 line=$3 what=$4 got=accepted
    echo "$line" > "$file"
    check_tree "$tmp" >/dev/null || got=caught
    rm "$file"
    if [[ $got != "$want" ]]; then
      echo "self-test: $what was $got"; rc=1
    fi
  }
  expect caught src/format/up.h '#include "store/x.h"' "an upward include (format -> store)"
  expect accepted src/store/down.h '#include "format/x.h"' "a downward include (store -> format)"
  expect caught src/check/up.h '#include "tool/x.h"' "the core library's checks including the tool (check -> tool)"
  expect accepted src/check/down.h '#include "store/x.h"' "a downward include (check -> store)"
  expect caught src/format/opts.h '#include "pgring/options.h"' "format including pgring/options.h"
  expect accepted src/format/opts.h '#include "pgring/types.h"' "format including pgring/types.h"
  expect caught examples/x/main.cc '#include "store/x.h"' "a front end including src/"
  expect caught examples/x/main.cc '#include <tool/x.h>' "a front end including src/ with <>"
  expect caught tools/pgring_tool.cc '#include "tool/x.h"' "pgring-tool's front end including src/"
  expect caught src/format/up.h '#include <store/x.h>' "an upward include with <>"
  expect accepted src/format/std.h '#include <format>' "a standard header named like a layer"
  expect caught examples/x/main.cc 'auto* r = dynamic_cast<RingStore*>(store);' \
         "a front end using dynamic_cast"
  expect accepted examples/x/main.cc '#include "pgring/store.h"' \
         "a front end using the public API only"
  [[ $rc -eq 0 ]] && echo "self-test: each rule fails when broken"
  return $rc
}

if [[ ${1:-} == --self-test ]]; then
  self_test
  exit
fi
ROOT=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
if check_tree "$ROOT"; then
  echo "layers: every include goes down the layer order; no front end includes src/ or downcasts"
else
  exit 1
fi
