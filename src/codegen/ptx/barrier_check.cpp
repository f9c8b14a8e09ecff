#include "codegen/ptx/barrier_check.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "numr/error.h"

namespace numr::ptx {

namespace {

uint64_t reg_key(Reg r) { return (uint64_t(r.type) << 32) | r.n; }

struct Block {
  int begin = 0, end = 0;  // instruction range [begin, end)
  std::vector<int> succ;   // block indexes; the virtual exit is blocks.size()
  bool reachable = false;
};

struct Cfg {
  std::vector<Block> blocks;
  std::vector<int> block_of;  // instruction -> block
  int exit() const { return int(blocks.size()); }
};

bool ends_block(const Instr& in) {
  return in.kind == InstrKind::branch || in.kind == InstrKind::ret;
}

Cfg build_cfg(std::string_view kernel, std::span<const Instr> body) {
  Cfg g;
  const int n = int(body.size());
  std::vector<bool> leader(size_t(n) + 1, false);
  leader[0] = true;
  for (int i = 0; i < n; ++i) {
    if (body[i].kind == InstrKind::label) leader[i] = true;
    if (ends_block(body[i])) leader[i + 1] = true;
  }
  g.block_of.assign(n, -1);
  for (int i = 0; i < n;) {
    Block b;
    b.begin = i;
    do {
      g.block_of[i] = int(g.blocks.size());
      ++i;
    } while (i < n && !leader[i]);
    b.end = i;
    g.blocks.push_back(b);
  }
  std::vector<int> label_block;
  for (int i = 0; i < n; ++i) {
    if (body[i].kind != InstrKind::label) continue;
    if (int(label_block.size()) <= body[i].label) label_block.resize(body[i].label + 1, -1);
    label_block[body[i].label] = g.block_of[i];
  }
  const int nb = int(g.blocks.size());
  for (int bi = 0; bi < nb; ++bi) {
    Block& b = g.blocks[bi];
    const Instr& last = body[b.end - 1];
    const int next = bi + 1 < nb ? bi + 1 : nb;  // falling off the end leaves the kernel
    if (last.kind == InstrKind::branch) {
      if (last.label < 0 || last.label >= int(label_block.size()) || label_block[last.label] < 0)
        fail<BackendError>("ptx", "kernel '", kernel, "': branch to a label never placed");
      b.succ.push_back(label_block[last.label]);
      if (last.guard.valid()) b.succ.push_back(next);
    } else if (last.kind == InstrKind::ret) {
      b.succ.push_back(nb);
      if (last.guard.valid()) b.succ.push_back(next);
    } else {
      b.succ.push_back(next);
    }
  }
  // Reachability from the entry.
  std::vector<int> stack{0};
  if (nb > 0) g.blocks[0].reachable = true;
  while (!stack.empty()) {
    const int b = stack.back();
    stack.pop_back();
    for (int s : g.blocks[b].succ)
      if (s < nb && !g.blocks[s].reachable) {
        g.blocks[s].reachable = true;
        stack.push_back(s);
      }
  }
  return g;
}

// Immediate post-dominator of every block (the virtual exit is g.exit()); -1 where a
// block cannot reach the exit (an endless loop), so it has none.
std::vector<int> immediate_post_dominators(const Cfg& g) {
  const int nb = int(g.blocks.size()), nn = nb + 1;
  // pdom[b] as a bit set over nn nodes; starts full except at the exit.
  std::vector<std::vector<bool>> pdom(nn, std::vector<bool>(nn, true));
  pdom[nb].assign(nn, false);
  pdom[nb][nb] = true;
  for (bool changed = true; changed;) {
    changed = false;
    for (int b = nb - 1; b >= 0; --b) {
      std::vector<bool> s(nn, true);
      for (int t : g.blocks[b].succ)
        for (int k = 0; k < nn; ++k) s[k] = s[k] && pdom[t][k];
      s[b] = true;
      if (s != pdom[b]) {
        pdom[b] = std::move(s);
        changed = true;
      }
    }
  }
  std::vector<int> ipdom(nb, -1);
  for (int b = 0; b < nb; ++b) {
    if (!pdom[b][nb]) continue;  // never reaches the exit
    // The strict post-dominator that all other strict post-dominators post-dominate: the
    // one whose own set is largest.
    int best = -1;
    size_t best_size = 0;
    for (int d = 0; d < nn; ++d) {
      if (d == b || !pdom[b][d]) continue;
      const size_t size = size_t(std::count(pdom[d].begin(), pdom[d].end(), true));
      if (best < 0 || size > best_size) {
        best = d;
        best_size = size;
      }
    }
    ipdom[b] = best;
  }
  return ipdom;
}

// Blocks that execute between conditional block b and its immediate post-dominator.
std::vector<int> region_of(const Cfg& g, int b, int ipdom) {
  const int nb = int(g.blocks.size());
  std::vector<bool> seen(nb, false);
  std::vector<int> out, stack;
  for (int s : g.blocks[b].succ)
    if (s < nb && s != ipdom && !seen[s]) {
      seen[s] = true;
      stack.push_back(s);
    }
  while (!stack.empty()) {
    const int x = stack.back();
    stack.pop_back();
    out.push_back(x);
    for (int s : g.blocks[x].succ)
      if (s < nb && s != ipdom && !seen[s]) {
        seen[s] = true;
        stack.push_back(s);
      }
  }
  return out;
}

std::string where(std::span<const int> lines, int i) {
  if (size_t(i) < lines.size()) return "line " + std::to_string(lines[i]);
  return "instruction " + std::to_string(i);
}

std::string guard_text(const Instr& in) {
  std::string s = "@";
  if (in.guard_negated) s += "!";
  return s + reg_name(in.guard) + " " + in.text;
}

}  // namespace

void check_barriers(std::string_view kernel, std::span<const Instr> body,
                    std::span<const int> lines) {
  if (body.empty()) return;
  const Cfg g = build_cfg(kernel, body);
  const std::vector<int> ipdom = immediate_post_dominators(g);
  const int nb = int(g.blocks.size());

  // Divergence: grow the sets of varying registers and divergent blocks to a fixed point.
  std::unordered_set<uint64_t> varying;
  std::vector<int> region_owner(nb, -1);  // for a divergent block: the branch instruction
  auto is_varying = [&](Reg r) { return r.valid() && varying.count(reg_key(r)) > 0; };
  for (bool changed = true; changed;) {
    changed = false;
    for (int bi = 0; bi < nb; ++bi) {
      const Block& b = g.blocks[bi];
      if (!b.reachable) continue;
      for (int i = b.begin; i < b.end; ++i) {
        const Instr& in = body[i];
        if (in.defs.empty()) continue;
        bool v = in.varying || is_varying(in.guard) || region_owner[bi] >= 0;
        for (Reg u : in.uses) v = v || is_varying(u);
        if (!v) continue;
        for (Reg d : in.defs) changed = varying.insert(reg_key(d)).second || changed;
      }
    }
    for (int bi = 0; bi < nb; ++bi) {
      const Block& b = g.blocks[bi];
      const Instr& last = body[b.end - 1];
      if (!b.reachable || !ends_block(last) || !is_varying(last.guard)) continue;
      for (int r : region_of(g, bi, ipdom[bi]))
        if (region_owner[r] < 0) {
          region_owner[r] = b.end - 1;
          changed = true;
        }
    }
  }

  for (int bi = 0; bi < nb; ++bi) {
    const Block& b = g.blocks[bi];
    if (!b.reachable) continue;
    for (int i = b.begin; i < b.end; ++i) {
      const Instr& in = body[i];
      if (in.kind != InstrKind::barrier) continue;
      if (is_varying(in.guard))
        fail<BackendError>("ptx", "kernel '", kernel, "': ", in.text, " at ", where(lines, i),
                           " is predicated on the thread-varying ", reg_name(in.guard),
                           ", so not every thread of the block reaches it");
      const int owner = region_owner[bi];
      if (owner < 0) continue;
      const Instr& br = body[owner];
      const char* why = br.kind == InstrKind::ret ? "threads that leave there never reach it"
                                                  : "only some threads of the block may reach it";
      fail<BackendError>("ptx", "kernel '", kernel, "': ", in.text, " at ", where(lines, i),
                         " lies under the thread-varying `", guard_text(br), "` at ",
                         where(lines, owner), ": ", why);
    }
  }
}

}  // namespace numr::ptx
