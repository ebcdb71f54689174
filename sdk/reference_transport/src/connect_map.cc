// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): planning and resolving a connection's
// memory map.
#include "ncclnet/transport/connect_map.hpp"

#include <cstdio>

namespace ncclnet::transport {

const char* bankName(Bank bank) {
  switch (bank) {
    case Bank::Host: return "host";
    case Bank::Device: return "device";
    case Bank::SharedHost: return "shared-host";
    case Bank::SharedDevice: return "shared-device";
    case Bank::GdcWord: return "gdc-word";
  }
  return "?";
}

MapEntry ConnectMap::reserve(Bank bank, size_t size) {
  MapEntry e{.used = true, .bank = bank, .offset = 0, .size = size};
  BankMemory& b = banks_[int(bank)];
  if (bank == Bank::Host || bank == Bank::Device) {
    // Keep every entry 128-byte aligned: LL128 lines and the control words
    // rely on it.
    e.offset = (b.size + 127) / 128 * 128;
    b.size = e.offset + size;
  } else if (size > b.size) {
    b.size = size;
  }
  return e;
}

void ConnectMap::attach(Bank bank, char* cpu, char* gpu, size_t size) {
  BankMemory& b = banks_[int(bank)];
  b.cpu = cpu;
  b.gpu = gpu;
  b.size = size;
}

std::string ConnectMap::describe() const {
  std::string out;
  auto line = [&](const char* name, const MapEntry& e) {
    if (!e.used) return;
    char text[160];
    std::snprintf(text, sizeof(text), "%s: %s+%zu (%zu bytes)\n", name, bankName(e.bank), e.offset,
                  e.size);
    out += text;
  };
  line("sendMem", sendMem);
  line("recvMem", recvMem);
  line("buffs[LL]", buffs[index(Protocol::LL)]);
  line("buffs[LL128]", buffs[index(Protocol::LL128)]);
  line("buffs[SIMPLE]", buffs[index(Protocol::Simple)]);
  return out;
}

}  // namespace ncclnet::transport
