// A small decoder-only transformer trained on text, character by character: token and
// position embeddings, pre-norm blocks of RMS norm, causal attention and a SwiGLU MLP built
// from the fused gate and GEMM epilogues, an output projection tied to the token
// embedding, cross-entropy. The text is the licence collection every Debian system ships
// (/usr/share/common-licenses), every tenth block held out. Prints one line per interval with
// tokens/s, evaluates on the held-out text, saves a safetensors checkpoint, loads it back,
// checks that it gives the same loss, and samples text from it. Exits 0 once the held-out
// loss reaches the target.
//   numr_transformer [--device cpu|cuda:0] [--steps N] [--threads N] [--csv loss.csv]
//                    [--checkpoint model.safetensors] [--text file]... [--text-dir dir]
//                    [--target nats] [--batch N] [--distributed]
// --text-dir: where the licences are (default /usr/share/common-licenses).
// --batch: sequences per step over all ranks (default 32).
// --distributed: data-parallel in the world a launcher started (scripts/launch-dp.sh -n 2
// numr_transformer --device cuda --distributed): every rank draws the same batch and trains
// on its share; the gradients are averaged over ranks, so the run follows the single-process
// one. Rank 0 prints, writes the CSV and the checkpoint.
#include <numr/distributed.h>
#include <numr/numr.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <numbers>
#include <random>
#include <string>
#include <vector>

using namespace numr;

namespace {

constexpr double kTargetLoss = 1.10;  // nats per character on the held-out text

struct Config {
  int64_t vocab = 0, dim = 128, heads = 4, layers = 4, hidden = 352, context = 128;
};

// The licences of /usr/share/common-licenses, in a fixed order.
const char* const kDefaultTexts[] = {"GPL-3",   "GPL-2",    "GPL-1",    "LGPL-2.1",   "LGPL-2",
                                     "LGPL-3",  "GFDL-1.3", "GFDL-1.2", "Apache-2.0", "MPL-2.0",
                                     "MPL-1.1", "Artistic", "CC0-1.0",  "BSD"};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

struct Corpus {
  std::vector<int64_t> train, val;
  std::vector<unsigned char> chars;  // id -> byte
};

Corpus make_corpus(const std::vector<std::string>& paths) {
  std::string text;
  for (const std::string& p : paths) text += read_file(p) + "\n";
  std::vector<int> id(256, -1);
  Corpus c;
  for (unsigned char ch : text)
    if (id[ch] < 0) id[ch] = 0;
  for (int b = 0; b < 256; ++b)
    if (id[size_t(b)] == 0)
      id[size_t(b)] = int(c.chars.size()), c.chars.push_back((unsigned char)b);
  std::vector<int64_t> ids;
  ids.reserve(text.size());
  for (unsigned char ch : text) ids.push_back(id[ch]);
  // Every tenth block of 2 KiB is held out, so both parts cover every licence.
  constexpr size_t kBlock = 2048;
  for (size_t at = 0; at < ids.size(); at += kBlock) {
    std::vector<int64_t>& part = (at / kBlock) % 10 == 9 ? c.val : c.train;
    part.insert(part.end(), ids.begin() + long(at),
                ids.begin() + long(std::min(ids.size(), at + kBlock)));
  }
  return c;
}

struct Block {
  Var norm1, wqkv, bqkv, wo, bo, norm2, w13, b13, w2, b2;
};

struct Model {
  Config cfg;
  Var tok, pos, norm_f;
  std::vector<Block> blocks;

  Model(const Config& c, Device dev, uint64_t seed) : cfg(c) {
    Generator gen(seed);
    auto param = [&](const Shape& s, double scale) {
      return Var((randn(s, DType::F32, Device::cpu(), gen) * scale).to(dev), true);
    };
    auto constant = [&](const Shape& s, double v) {
      return Var(full(s, v, DType::F32, dev), true);
    };
    const double w = 0.02, w_out = 0.02 / std::sqrt(2.0 * double(c.layers));
    tok = param({c.vocab, c.dim}, w);
    pos = param({c.context, c.dim}, w);
    for (int64_t l = 0; l < c.layers; ++l)
      blocks.push_back({constant({c.dim}, 1), param({c.dim, 3 * c.dim}, w),
                        constant({3 * c.dim}, 0), param({c.dim, c.dim}, w_out),
                        constant({c.dim}, 0), constant({c.dim}, 1), param({c.dim, 2 * c.hidden}, w),
                        constant({2 * c.hidden}, 0), param({c.hidden, c.dim}, w_out),
                        constant({c.dim}, 0)});
    norm_f = constant({c.dim}, 1);
  }

  std::map<std::string, Var> named() const {
    std::map<std::string, Var> m = {{"tok", tok}, {"pos", pos}, {"norm_f", norm_f}};
    for (size_t l = 0; l < blocks.size(); ++l) {
      const Block& b = blocks[l];
      const std::string p = "block" + std::to_string(l) + ".";
      m.insert({{p + "norm1", b.norm1},
                {p + "wqkv", b.wqkv},
                {p + "bqkv", b.bqkv},
                {p + "wo", b.wo},
                {p + "bo", b.bo},
                {p + "norm2", b.norm2},
                {p + "w13", b.w13},
                {p + "b13", b.b13},
                {p + "w2", b.w2},
                {p + "b2", b.b2}});
    }
    return m;
  }
  std::vector<Var> params() const {
    std::vector<Var> p;
    for (const auto& [name, v] : named()) p.push_back(v);
    return p;
  }

  // tokens [B, T] I64 -> logits [B * T, vocab]
  Var forward(const Tensor& tokens) const {
    const int64_t b = tokens.size(0), t = tokens.size(1), d = cfg.dim, h = cfg.heads;
    const Tensor positions = arange(0, double(t), 1, DType::I64, tokens.device());
    Var x = (embedding_lookup(tok, tokens) + embedding_lookup(pos, positions)).reshape({b * t, d});
    for (const Block& blk : blocks) {
      // Attention: one GEMM for q, k and v, heads split by views.
      const Var qkv =
          matmul_bias_activation(rms_norm(x, blk.norm1), blk.wqkv, blk.bqkv, Activation::None);
      const Var heads = qkv.reshape({b, t, 3, h, d / h}).permute({2, 0, 3, 1, 4});
      const std::vector<Var> qkv3 = chunk(heads, 3, 0);
      const Var att = scaled_dot_product_attention(qkv3[0].reshape({b, h, t, d / h}),
                                                   qkv3[1].reshape({b, h, t, d / h}),
                                                   qkv3[2].reshape({b, h, t, d / h}), Tensor(),
                                                   /*causal=*/true);
      const Var merged = att.permute({0, 2, 1, 3}).reshape({b * t, d});
      x = matmul_bias_residual(merged, blk.wo, blk.bo, x);
      // SwiGLU MLP: the gate and up projections in one GEMM, the fused gate, then the down
      // projection with the residual added in its epilogue.
      const Var gate_up =
          matmul_bias_activation(rms_norm(x, blk.norm2), blk.w13, blk.b13, Activation::None);
      const std::vector<Var> gu = chunk(gate_up, 2, -1);
      x = matmul_bias_residual(silu_mul(gu[0], gu[1]), blk.w2, blk.b2, x);
    }
    return matmul(rms_norm(x, norm_f), tok.transpose(0, 1));  // tied output projection
  }
};

struct Batch {
  Tensor x, y;  // [B, T] I64 and [B * T] I64
};

Batch make_batch(const std::vector<int64_t>& data, const std::vector<size_t>& starts, int64_t t,
                 Device dev) {
  std::vector<int64_t> x, y;
  for (size_t s : starts) {
    x.insert(x.end(), data.begin() + long(s), data.begin() + long(s) + t);
    y.insert(y.end(), data.begin() + long(s) + 1, data.begin() + long(s) + t + 1);
  }
  const int64_t b = int64_t(starts.size());
  return {Tensor::from_vector(x, {b, t}, dev), Tensor::from_vector(y, {b * t}, dev)};
}

// Mean cross-entropy over fixed, evenly spaced windows of the held-out text.
double evaluate(const Model& m, const std::vector<int64_t>& val, Device dev) {
  NoGradGuard no_grad;
  const int64_t t = m.cfg.context;
  std::vector<size_t> starts;
  for (size_t s = 0; s + size_t(t) + 1 <= val.size(); s += size_t(t)) starts.push_back(s);
  double total = 0;
  size_t n = 0;
  for (size_t i = 0; i < starts.size(); i += 64) {
    const std::vector<size_t> part(starts.begin() + long(i),
                                   starts.begin() + long(std::min(starts.size(), i + 64)));
    const Batch b = make_batch(val, part, t, dev);
    total += cross_entropy(m.forward(b.x), b.y, Reduction::Sum).tensor().item_double();
    n += part.size() * size_t(t);
  }
  return total / double(n);
}

std::string sample(const Model& m, const Corpus& c, const std::string& prompt, int n, uint64_t seed,
                   Device dev) {
  NoGradGuard no_grad;
  std::mt19937_64 rng(seed);
  std::vector<int64_t> ids;
  for (unsigned char ch : prompt) {
    const auto it = std::find(c.chars.begin(), c.chars.end(), ch);
    if (it != c.chars.end()) ids.push_back(int64_t(it - c.chars.begin()));
  }
  std::string out = prompt;
  for (int i = 0; i < n; ++i) {
    const int64_t t = std::min<int64_t>(int64_t(ids.size()), m.cfg.context);
    const std::vector<int64_t> window(ids.end() - t, ids.end());
    const Tensor logits = m.forward(Tensor::from_vector(window, {1, t}, dev)).tensor();
    const Tensor p = softmax(logits.narrow(0, t - 1, 1).to(Device::cpu()) / 0.8, -1);
    const std::vector<float> pv = p.to_vector<float>();
    std::discrete_distribution<int64_t> pick(pv.begin(), pv.end());
    ids.push_back(pick(rng));
    out += char(c.chars[size_t(ids.back())]);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Device dev = Device::cpu();
  int steps = 1000;
  int64_t batch = 32;
  bool distributed = false;
  double target = kTargetLoss;
  std::string csv_path, ckpt_path = "transformer.safetensors";
  std::vector<std::string> texts;
  std::string text_dir = "/usr/share/common-licenses";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--device" && i + 1 < argc) {
      dev = parse_device(argv[++i]);
    } else if (arg == "--steps" && i + 1 < argc) {
      steps = std::atoi(argv[++i]);
    } else if (arg == "--threads" && i + 1 < argc) {
      set_num_threads(std::atoi(argv[++i]));
    } else if (arg == "--csv" && i + 1 < argc) {
      csv_path = argv[++i];
    } else if (arg == "--checkpoint" && i + 1 < argc) {
      ckpt_path = argv[++i];
    } else if (arg == "--text" && i + 1 < argc) {
      texts.push_back(argv[++i]);
    } else if (arg == "--text-dir" && i + 1 < argc) {
      text_dir = argv[++i];
    } else if (arg == "--target" && i + 1 < argc) {
      target = std::atof(argv[++i]);
    } else if (arg == "--batch" && i + 1 < argc) {
      batch = std::atoll(argv[++i]);
    } else if (arg == "--distributed") {
      distributed = true;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--device cpu|cuda:0] [--steps N] [--threads N] [--csv FILE] "
                   "[--checkpoint FILE] [--text FILE]... [--text-dir DIR] [--target NATS] "
                   "[--batch N] [--distributed]\n",
                   argv[0]);
      return 2;
    }
  }
  if (texts.empty())
    for (const char* name : kDefaultTexts) texts.push_back(text_dir + "/" + name);
  try {
    std::unique_ptr<dist::Communicator> comm =
        distributed ? dist::init_from_env(dev) : dist::local_communicator(dev);
    dev = comm->device();
    const int rank = comm->rank(), world = comm->world_size();
    const bool lead = rank == 0;
    if (batch % world != 0)
      throw InvalidArgument("[numr_transformer] --batch " + std::to_string(batch) +
                            " is not a multiple of the " + std::to_string(world) + " ranks");
    const int64_t share = batch / world;
    const Corpus corpus = make_corpus(texts);
    Config cfg;
    cfg.vocab = int64_t(corpus.chars.size());
    Model model(cfg, dev, 1);
    const double peak_lr = 2e-3;
    AdamW opt(model.params(), {.lr = peak_lr, .beta2 = 0.99, .weight_decay = 0.01});
    std::unique_ptr<dist::DataParallel> dp;
    if (distributed) dp = std::make_unique<dist::DataParallel>(*comm, model.params());
    const int64_t t = cfg.context;
    int64_t n_params = 0;
    for (const Var& p : model.params()) n_params += p.tensor().numel();
    if (lead)
      std::printf(
          "numr: transformer (%lld layers, dim %lld, %lld heads, %lld parameters) on %s "
          "(%d threads) x %d rank%s, batch %lld; %zu training and %zu held-out characters, "
          "vocabulary %lld\n",
          (long long)cfg.layers, (long long)cfg.dim, (long long)cfg.heads, (long long)n_params,
          dev.str().c_str(), num_threads(), world, world == 1 ? "" : "s", (long long)batch,
          corpus.train.size(), corpus.val.size(), (long long)cfg.vocab);
    std::FILE* csv = csv_path.empty() || !lead ? nullptr : std::fopen(csv_path.c_str(), "w");
    if (csv) std::fprintf(csv, "step,train_loss,val_loss,tokens_per_s\n");
    std::mt19937_64 rng(7);
    std::uniform_int_distribution<size_t> start_of(0, corpus.train.size() - size_t(t) - 2);
    const int interval = 50, warmup = 100;
    const auto t_start = std::chrono::steady_clock::now();
    auto t0 = t_start;
    double loss_sum = 0, val = 0;
    for (int step = 1; step <= steps; ++step) {
      // Linear warm-up, then cosine decay to a tenth of the peak.
      const double progress = double(step - warmup) / double(std::max(1, steps - warmup));
      opt.set_lr(step <= warmup
                     ? peak_lr * step / warmup
                     : peak_lr * (0.1 + 0.45 * (1 + std::cos(std::numbers::pi * progress))));
      std::vector<size_t> starts(static_cast<size_t>(batch));
      for (size_t& s : starts) s = start_of(rng);
      // This rank's share of the batch every rank drew alike.
      const std::vector<size_t> mine(starts.begin() + rank * share,
                                     starts.begin() + (rank + 1) * share);
      const Batch b = make_batch(corpus.train, mine, t, dev);
      const Var loss = cross_entropy(model.forward(b.x), b.y);
      opt.step(dp ? dp->reduce(backward(loss)) : backward(loss));
      loss_sum += loss.tensor().item_double();
      if (step % interval == 0 || step == steps) {
        const int n = step % interval == 0 ? interval : step % interval;
        const double secs =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const double tok_s = double(n * batch * t) / secs;  // over every rank
        Tensor mean_loss = full({1}, loss_sum / n, DType::F64, dev);
        comm->all_reduce(mean_loss, dist::ReduceOp::Avg);
        val = evaluate(model, corpus.val, dev);
        const double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
        const double train_loss = mean_loss.item_double();
        if (lead)
          std::printf("step %5d/%d  train loss %.3f  held-out loss %.3f  %8.0f tokens/s  %6.1f s\n",
                      step, steps, train_loss, val, tok_s, elapsed);
        std::fflush(stdout);
        if (csv) std::fprintf(csv, "%d,%.5f,%.5f,%.0f\n", step, train_loss, val, tok_s);
        loss_sum = 0;
        t0 = std::chrono::steady_clock::now();
      }
    }
    if (csv) std::fclose(csv);
    if (!lead) return val <= target ? 0 : 1;  // rank 0 checks the checkpoint and samples

    std::map<std::string, Tensor> weights;
    for (const auto& [name, v] : model.named()) weights[name] = v.tensor();
    save_safetensors(ckpt_path, weights);
    Model loaded(cfg, dev, 2);
    const std::map<std::string, Tensor> read = load_safetensors(ckpt_path, dev);
    for (const auto& [name, v] : loaded.named()) {
      Tensor w = v.tensor();  // a handle on the parameter's storage
      w.copy_(read.at(name));
    }
    const double val_loaded = evaluate(loaded, corpus.val, dev);
    std::printf("checkpoint %s: held-out loss %.4f after loading (%.4f before)\n",
                ckpt_path.c_str(), val_loaded, val);
    std::printf("sample:\n%s\n", sample(loaded, corpus, "This License", 300, 3, dev).c_str());
    const bool ok = val <= target && std::fabs(val_loaded - val) < 1e-6;
    std::printf("%s: held-out loss %.3f (target %.2f)\n", ok ? "reached" : "NOT reached", val,
                target);
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
