// Joining the world a launcher started: the rank, world size and NCCL unique id come from
// the environment (scripts/launch-dp.sh, or mpirun's OMPI_COMM_WORLD_*).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "numr/distributed.h"
#include "numr/error.h"

namespace numr::dist {

namespace {

// The integer in $name, or `fallback` when unset; throws when it is not a number.
int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (*end || x < 0 || x > 1 << 20)
    fail<InvalidArgument>("init_from_env", name, "=", v, " is not a rank or size");
  return int(x);
}

}  // namespace

std::string to_hex(const UniqueId& id) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  s.reserve(2 * id.size());
  for (uint8_t b : id) {
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

UniqueId unique_id_from_hex(const std::string& hex) {
  UniqueId id{};
  if (hex.size() != 2 * id.size())
    fail<InvalidArgument>("unique_id_from_hex", "expected ", 2 * id.size(), " hex digits, got ",
                          hex.size());
  auto nibble = [&](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    fail<InvalidArgument>("unique_id_from_hex", "'", c, "' is not a hex digit");
  };
  for (size_t i = 0; i < id.size(); ++i)
    id[i] = uint8_t(nibble(hex[2 * i]) << 4 | nibble(hex[2 * i + 1]));
  return id;
}

void write_unique_id(const std::string& path, const UniqueId& id) {
  // Written aside and renamed, so a reader never sees half an id.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::trunc);
    f << to_hex(id) << '\n';
    if (!f) fail<BackendError>("write_unique_id", "cannot write ", tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    fail<BackendError>("write_unique_id", "cannot rename ", tmp, " to ", path);
}

UniqueId read_unique_id(const std::string& path, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    std::ifstream f(path);
    std::string hex;
    if (f && (f >> hex) && hex.size() == 2 * std::tuple_size_v<UniqueId>)
      return unique_id_from_hex(hex);
    if (std::chrono::steady_clock::now() > deadline)
      fail<BackendError>("read_unique_id", "no unique id in ", path, " after ", timeout_s,
                         " s (did rank 0 start?)");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::unique_ptr<Communicator> init_from_env(Device device) {
  const int mpi_world = env_int("OMPI_COMM_WORLD_SIZE", 0);
  const int world = env_int("NUMR_WORLD_SIZE", mpi_world > 0 ? mpi_world : 1);
  if (mpi_world > 0 && world != mpi_world)
    fail<InvalidArgument>("init_from_env", "world size mismatch: NUMR_WORLD_SIZE=", world,
                          " but mpirun started ", mpi_world, " processes");
  if (world <= 1) return local_communicator(device);
  const char* rank_var = std::getenv("NUMR_RANK")              ? "NUMR_RANK"
                         : std::getenv("OMPI_COMM_WORLD_RANK") ? "OMPI_COMM_WORLD_RANK"
                                                               : nullptr;
  if (!rank_var)
    fail<InvalidArgument>("init_from_env", "NUMR_WORLD_SIZE=", world, " but NUMR_RANK is unset");
  const int rank = env_int(rank_var, 0);
  if (rank >= world)
    fail<InvalidArgument>("init_from_env", "rank ", rank, " in a world of ", world);
  if (device.type == DeviceType::Cpu) {
    if (mpi_world == 0)
      fail<InvalidArgument>("init_from_env", "CPU ranks communicate over MPI: start the ", world,
                            " processes with mpirun (scripts/launch-dp.sh --cpu)");
    auto comm = mpi_communicator();
    if (comm->world_size() != world || comm->rank() != rank)
      fail<InvalidArgument>("init_from_env", "world size mismatch: MPI has rank ", comm->rank(),
                            " of ", comm->world_size(), ", the environment ", rank, " of ", world);
    return comm;
  }
  if (device.type != DeviceType::Cuda)
    fail<BackendLimitation>("init_from_env", "no multi-process transport for ", device.str());
  const int local = env_int("NUMR_LOCAL_RANK", env_int("OMPI_COMM_WORLD_LOCAL_RANK", 0));
  UniqueId id{};
  if (const char* hex = std::getenv("NUMR_NCCL_ID"); hex && *hex) {
    id = unique_id_from_hex(hex);
  } else if (const char* file = std::getenv("NUMR_NCCL_ID_FILE"); file && *file) {
    if (rank == 0) {
      id = nccl_unique_id();
      write_unique_id(file, id);
    } else {
      id = read_unique_id(file);
    }
  } else if (mpi_world > 0) {
    // Under mpirun: rank 0's id reaches the others through MPI.
    auto host = mpi_communicator();
    Tensor bytes = Tensor::empty({int64_t(id.size())}, DType::U8, Device::cpu());
    if (rank == 0) {
      id = nccl_unique_id();
      std::copy(id.begin(), id.end(), static_cast<uint8_t*>(bytes.storage()->handle()));
    }
    host->broadcast(bytes, 0);
    const std::vector<uint8_t> got = bytes.to_vector<uint8_t>();
    std::copy(got.begin(), got.end(), id.begin());
  } else {
    fail<InvalidArgument>("init_from_env", "NUMR_WORLD_SIZE=", world,
                          " needs the NCCL unique id: set NUMR_NCCL_ID (hex) or "
                          "NUMR_NCCL_ID_FILE, or start the ranks with mpirun");
  }
  return nccl_communicator(Device::cuda(device.index + local), rank, world, id);
}

}  // namespace numr::dist
