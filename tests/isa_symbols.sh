#!/usr/bin/env bash
# Usage: isa_symbols.sh ISA OBJECT...
# The per-ISA kernel objects may define weak (shared) functions outside their own
# namespaces (numr::cpu::ISA, numr::math::ISA) only when that code was compiled for the
# baseline target: the linker keeps one copy of each weak function for the whole library,
# and a copy with wider instructions would then run on every CPU. This fails when such a
# function uses instructions beyond x86-64: VEX or EVEX encoded ones (AVX, AVX2, AVX-512,
# FMA), BMI1/BMI2, or SSE3 to SSE4.2 and POPCNT.
set -euo pipefail
isa=$1
shift
status=0
for obj in "$@"; do
  bad=$(
    {
      nm -C --defined-only "$obj" | awk '$2 == "W" { sub(/^[^ ]+ W /, ""); print "W\t" $0 }'
      objdump -d -C --no-show-raw-insn "$obj"
    } | awk -F'\t' -v isa="$isa" '
      $1 == "W" { weak[$2] = 1; next }
      /^[0-9a-f]+ <.*>:$/ {
        name = substr($0, index($0, "<") + 1)
        sub(/>:$/, "", name)
        check = (name in weak) && index(name, "numr::cpu::" isa "::") == 0 &&
                index(name, "numr::math::" isa "::") == 0
        next
      }
      check && NF >= 2 {
        split($2, w, " ")
        op = w[1]
        if (op ~ /^v/ || op ~ /^(andn|bextr|blsi|blsmsk|blsr|bzhi|mulx|pdep|pext|rorx|sarx|shlx|shrx|lzcnt|tzcnt|movbe|popcnt|crc32)$/ ||
            op ~ /^(pshufb|palignr|pabs[bwd]|ptest|round[ps][sd]|blendv?p[sd]|pblend(vb|w)|pmin[su][bwd]|pmax[su][bwd]|pmull?d|pmuldq|pextr[bdq]|pinsr[bdq]|pmov[sz]x|packusdw|pcmpeqq|pcmpgtq|dpp[sd]|insertps|extractps|haddp[sd]|hsubp[sd]|addsubp[sd]|lddqu|movs[hl]dup|movddup)$/) {
          if (!(name in seen)) { seen[name] = 1; print name " (" op ")" }
        }
      }')
  if [[ -n "$bad" ]]; then
    echo "isa_symbols: $obj defines, outside numr::cpu::$isa and numr::math::$isa, weak functions compiled for $isa:" >&2
    echo "$bad" >&2
    status=1
  fi
done
[[ $status -eq 0 ]] && echo "isa_symbols: $# $isa objects checked, no weak function outside the $isa namespaces uses wider instructions"
exit $status
