#!/bin/sh
# The ISA files of alap_kernels (sse4/, avx2/, avx_vnni/, avx512_vnni/, compiled with their instruction
# set's flags) must define no weak symbols. The linker keeps one copy of each weak symbol for the
# whole program (a std::vector member, an inline function not inlined), and an ISA file's copy would
# then also run on machines without that instruction set (kernels/cpu/thread_scratch.h).
# Usage: isa_weak_symbols_check.sh NM ARCHIVE. Lists the offenders and exits 1 when there are any.
set -eu
nm_tool="$1"
archive="$2"
out=$("$nm_tool" -A -C --defined-only "$archive" | awk '
  {
    split($1, where, ":")
    member = where[2]
    type = $2
    if (member !~ /_(sse4|avx2|avxvnni|vnni)\.cpp\.o$/) next
    if (type != "W" && type != "V" && type != "u") next
    name = $3
    for (i = 4; i <= NF; ++i) name = name " " $i
    if (name == "DW.ref.__gxx_personality_v0") next
    print member ": " type " " name
  }')
if [ -n "$out" ]; then
  echo "weak symbols in ISA files (one copy is kept for the whole program, possibly this one):"
  echo "$out"
  exit 1
fi
echo "no weak symbols in the ISA files of $archive"
