#!/usr/bin/env python3
"""check_thread_safety.py — clang's -Wthread-safety over pgring's sources.

pgring's locks (src/util/sync.h: Mutex, MutexLock, ReaderMutexLock, CondVar)
carry Abseil's thread-safety annotations, and the data they protect says so
(ABSL_GUARDED_BY, ABSL_EXCLUSIVE_LOCKS_REQUIRED, ...). GCC ignores those
annotations; this check has clang read them. It takes the build's
compile_commands.json (any preset: GCC's flags are rewritten), and runs
clang in syntax-only mode (no code generation) with
-Wthread-safety -Werror=thread-safety over

  - every translation unit of the library (src/), pgring-tool (src/tool,
    tools/) and the fio engine (tools/fio_engine), and
  - every test or benchmark source that names a lock or an annotation
    (Mutex, MutexLock, CondVar, ABSL_*LOCK*, ABSL_*GUARDED*, ...): a source
    that names none of them has nothing for the analysis to check beyond the
    headers, and those are checked through the library's own sources.

A unity build's batches are taken apart: each source is compiled alone, so
the check also shows that each source of the library, the tool and the fio
engine includes what it uses (the presets build in unity batches, which
would hide a missing include behind an earlier source of the batch).

Any thread-safety warning fails the check. The other warnings are left to
the compiler that builds the code (every -W flag of the build is dropped).

Usage:
  check_thread_safety.py --build-dir DIR --source-dir ROOT [--clang CLANG] [-j N]
  check_thread_safety.py --self-test --build-dir DIR --source-dir ROOT [--clang CLANG]
      compiles a correct and a broken use of a guarded field with the flags
      of the library's first source, and fails unless the first passes and
      the second fails with the analysis' warning.
"""

import argparse
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

TSA_FLAGS = ["-fsyntax-only", "-Wthread-safety", "-Werror=thread-safety"]

# A source the analysis has something to check in.
NAMES_A_LOCK = re.compile(
    r"\b(Mutex|MutexLock|ReaderMutexLock|CondVar|"
    r"ABSL_[A-Z_]*(GUARDED|LOCK|LOCKS|REQUIRED|EXCLUDED|ACQUIRE|RELEASE|CAPABILITY)[A-Z_]*)\b")

# Always checked, whatever they name.
ALWAYS = ("src/", "tools/")


def clang_args(entry, clang, source=None):
    """The entry's compile command as a clang syntax-only thread-safety pass."""
    if "arguments" in entry:
        args = list(entry["arguments"])
    else:
        args = shlex.split(entry["command"])
    out = [clang]
    skip = False
    for i, a in enumerate(args[1:]):
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        # The tests' precompiled header (tests/CMakeLists.txt) is GCC's
        # .gch, which clang cannot read; the test includes what it uses.
        if a == "-include" and i + 2 < len(args) and "cmake_pch" in args[i + 2]:
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD"):
            continue
        if os.path.abspath(os.path.join(entry["directory"], a)) in (entry["file"], entry.get("batch")):
            continue
        # The build's warnings (GCC's -Wall -Wextra ...) are the build's
        # business; sanitizers add nothing to a syntax-only pass.
        if a.startswith("-W") or a.startswith("-fsanitize") or a.startswith("-fno-sanitize"):
            continue
        out.append(a)
    out += TSA_FLAGS
    out.append(source or entry["file"])
    return out


def run(args, cwd):
    p = subprocess.run(args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def load_entries(build_dir):
    path = os.path.join(build_dir, "compile_commands.json")
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        sys.exit(f"check_thread_safety: cannot read {path} ({e}); configure the build first")


# A unity batch's line for each source it holds.
UNITY_INCLUDE = re.compile(r'^#include "([^"]+)"', re.M)


def one_source_a_unit(entries):
    """A unity build's compile_commands.json names its batches
    (CMakeFiles/<target>.dir/Unity/unity_N_cxx.cxx, each #including a few of
    the target's sources), not the sources: each source becomes an entry of
    its own, with its batch's command, so that it is compiled alone and its
    own includes are what it compiles with."""
    out = []
    for e in entries:
        f = os.path.abspath(os.path.join(e["directory"], e["file"]))
        if "/Unity/unity_" not in f:
            out.append(e)
            continue
        with open(f) as batch:
            for src in UNITY_INCLUDE.findall(batch.read()):
                out.append(dict(e, file=src, batch=f))
    return out


def selected(entries, root):
    root = os.path.abspath(root) + "/"
    seen, chosen = set(), []
    for e in one_source_a_unit(entries):
        f = os.path.abspath(os.path.join(e["directory"], e["file"]))
        if not f.startswith(root) or f in seen:
            continue
        rel = f[len(root):]
        if not rel.startswith(ALWAYS):
            with open(f, errors="replace") as src:
                if not NAMES_A_LOCK.search(src.read()):
                    continue
        seen.add(f)
        chosen.append((rel, dict(e, file=f)))
    return sorted(chosen)


def check(args):
    entries = selected(load_entries(args.build_dir), args.source_dir)
    if not any(rel.startswith("src/store/") for rel, _ in entries):
        sys.exit("check_thread_safety: compile_commands.json has no src/store/ source: "
                 "is this pgring's build directory?")
    failed = []

    def one(item):
        rel, e = item
        rc, out = run(clang_args(e, args.clang), e["directory"])
        return rel, rc, out

    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for rel, rc, out in pool.map(one, entries):
            tsa = "-Wthread-safety" in out
            if rc != 0 or tsa:
                failed.append(rel)
                print(f"FAIL {rel}" + ("" if tsa else " (clang failed; not a thread-safety warning)"))
                print(out, end="")
    print(f"check_thread_safety: {len(entries)} sources checked with {args.clang} "
          f"-Wthread-safety, {len(failed)} failed")
    return 1 if failed else 0


GOOD = r"""
#include "util/sync.h"
namespace {
class Counter {
 public:
  int Get() ABSL_LOCKS_EXCLUDED(mu_) { pgring::ReaderMutexLock l(&mu_); return n_; }
  void Add() ABSL_LOCKS_EXCLUDED(mu_) { pgring::MutexLock l(&mu_); AddLocked(); }
 private:
  void AddLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { ++n_; }
  pgring::Mutex mu_;
  int n_ ABSL_GUARDED_BY(mu_) = 0;
};
}  // namespace
int PgringTsaSelfTest() { Counter c; c.Add(); return c.Get(); }
"""

# Each mutation of GOOD the analysis must reject.
BROKEN = {
    "read without the lock": ("pgring::ReaderMutexLock l(&mu_); return n_;", "return n_;"),
    "write under a reader lock": ("pgring::MutexLock l(&mu_); AddLocked();",
                                  "pgring::ReaderMutexLock l(&mu_); AddLocked();"),
    "call of a REQUIRED function without the lock": ("pgring::MutexLock l(&mu_); AddLocked();",
                                                      "AddLocked();"),
}


def self_test(args):
    entries = [e for rel, e in selected(load_entries(args.build_dir), args.source_dir)
               if rel.startswith("src/")]
    if not entries:
        sys.exit("check_thread_safety --self-test: no src/ source in compile_commands.json")
    e = entries[0]
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        cases = [("correct use", GOOD, True)]
        for name, (old, new) in BROKEN.items():
            assert old in GOOD, name
            cases.append((name, GOOD.replace(old, new), False))
        for name, text, should_pass in cases:
            path = os.path.join(tmp, "tsa_self_test.cc")
            with open(path, "w") as f:
                f.write(text)
            rc, out = run(clang_args(e, args.clang, source=path), e["directory"])
            tsa = "-Wthread-safety" in out
            ok = (rc == 0 and not tsa) if should_pass else (rc != 0 and tsa)
            print(f"{'ok  ' if ok else 'FAIL'} {name}: "
                  f"{'passes' if rc == 0 else 'fails'} ({'a thread-safety warning' if tsa else 'no thread-safety warning'})")
            if not ok:
                print(out, end="")
                bad += 1
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--clang", default="clang++-14")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    args.source_dir = os.path.abspath(args.source_dir)
    return self_test(args) if args.self_test else check(args)


if __name__ == "__main__":
    sys.exit(main())
