// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): a connection's memory map (NCCL's
// struct connectMap), with explicit fields instead of bit-packed offsets.
//
//   bank           holds                                       owner
//   Host           SendMem, RecvMem, host step buffers         the connection
//   Device         device step buffers (GDR)                   the connection
//   SharedHost     the p2p pool of (local rank, direction)     the pool registry
//   SharedDevice   same, in device memory (GDR)                the pool registry
//   GdcWord        a gdrcopy-mapped tail/head word             (GPU builds only)
//
// Layout is planned first (reserve() hands out offsets and grows the
// private banks), then the banks are backed (attach()), then entries
// resolve to pointers.
#pragma once

#include <cstddef>
#include <string>

#include "ncclnet/transport/constants.hpp"
#include "ncclnet/transport/memory.hpp"

namespace ncclnet::transport {

enum class Bank : int { Host = 0, Device = 1, SharedHost = 2, SharedDevice = 3, GdcWord = 4 };
constexpr int kNumBanks = 5;
const char* bankName(Bank bank);

struct MapEntry {
  bool used = false;
  Bank bank = Bank::Host;
  size_t offset = 0;
  size_t size = 0;
};

struct BankMemory {
  char* cpu = nullptr;
  char* gpu = nullptr;
  size_t size = 0;
};

class ConnectMap {
 public:
  // Plans `size` bytes in `bank`. Private banks (Host, Device) grow; in a
  // shared bank the entry is the whole pool, at offset 0.
  MapEntry reserve(Bank bank, size_t size);
  // Backs a bank with memory of at least its planned size.
  void attach(Bank bank, char* cpu, char* gpu, size_t size);

  char* cpu(const MapEntry& e) const {
    return e.used ? banks_[int(e.bank)].cpu + e.offset : nullptr;
  }
  char* gpu(const MapEntry& e) const {
    return e.used ? banks_[int(e.bank)].gpu + e.offset : nullptr;
  }
  static bool isDevice(const MapEntry& e) {
    return e.used && (e.bank == Bank::Device || e.bank == Bank::SharedDevice);
  }
  const BankMemory& bank(Bank b) const { return banks_[int(b)]; }

  MapEntry sendMem;
  MapEntry recvMem;
  MapEntry buffs[kNumProtocols];

  // One line per used entry, for logs and tests.
  std::string describe() const;

 private:
  BankMemory banks_[kNumBanks];
};

}  // namespace ncclnet::transport
