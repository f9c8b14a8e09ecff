#include "support/ptxas.h"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace numr::test {

namespace {

bool executable(const std::string& path) {
  return !path.empty() && access(path.c_str(), X_OK) == 0;
}

// Single-quoted for /bin/sh.
std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

bool turned_off() {
  const char* env = std::getenv("NUMR_TEST_PTXAS");
  return env && std::string(env) == "off";
}

}  // namespace

std::optional<std::string> find_ptxas() {
  if (turned_off()) return std::nullopt;
  if (const char* env = std::getenv("NUMR_PTXAS"); env && executable(env)) return std::string(env);
  if (const char* path = std::getenv("PATH")) {
    std::istringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');)
      if (!dir.empty() && executable(dir + "/ptxas")) return dir + "/ptxas";
  }
  if (executable("/usr/local/cuda/bin/ptxas")) return std::string("/usr/local/cuda/bin/ptxas");
  return std::nullopt;
}

std::string no_ptxas_reason() {
  if (turned_off())
    return "ptxas assembly runs in the release tier; off here (NUMR_TEST_PTXAS=off)";
  return "ptxas not found (set NUMR_PTXAS, put it on PATH, or install it in /usr/local/cuda/bin)";
}

bool PtxasResult::ok() const {
  return exit_status == 0 && output.find("warning") == std::string::npos &&
         output.find("error") == std::string::npos;
}

PtxasResult assemble(const std::string& ptx, int sm) {
  return assemble(ptx, "sm_" + std::to_string(sm), "");
}

PtxasResult assemble(const std::string& ptx, const std::string& arch, const std::string& flags) {
  const std::optional<std::string> ptxas = find_ptxas();
  if (!ptxas) throw std::runtime_error("ptxas not found");
  char name[] = "/tmp/numr_ptx_XXXXXX";
  const int fd = mkstemp(name);
  if (fd < 0) throw std::runtime_error("cannot create a temporary file");
  close(fd);
  const std::string ptx_path = std::string(name) + ".ptx", out_path = std::string(name) + ".cubin";
  std::rename(name, ptx_path.c_str());
  std::ofstream(ptx_path) << ptx;

  std::string cmd = quoted(*ptxas) + " -arch=" + arch;
  if (!flags.empty()) cmd += ' ' + flags;
  cmd += ' ';
  cmd += quoted(ptx_path) + " -o " + quoted(out_path) + " 2>&1";
  PtxasResult r;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    std::array<char, 4096> buf;
    for (size_t n; (n = fread(buf.data(), 1, buf.size(), p)) > 0;) r.output.append(buf.data(), n);
    const int status = pclose(p);
    r.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::remove(ptx_path.c_str());
  std::remove(out_path.c_str());
  return r;
}

}  // namespace numr::test
