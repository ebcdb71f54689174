// SPDX-License-Identifier: Apache-2.0
// SHA-256 through libcrypto's EVP digest interface: the report's provenance
// needs a digest that other tools (sha256sum, a CI's artifact store) agree
// with, and libcrypto is the implementation every Linux distribution keeps
// correct and fast.
#include "report/sha256.hpp"

#include <openssl/evp.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <vector>

namespace conformance {

namespace {

struct FreeDigest {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};
using DigestContext = std::unique_ptr<EVP_MD_CTX, FreeDigest>;

DigestContext startSha256() {
  DigestContext ctx(EVP_MD_CTX_new());
  if (ctx && EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) ctx.reset();
  return ctx;
}

// Lower-case hex of the finished digest, or "" when libcrypto failed.
std::string finishHex(EVP_MD_CTX* ctx) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(ctx, digest, &length) != 1) return "";
  std::string hex(2 * length, '0');
  for (unsigned int i = 0; i < length; i++) std::snprintf(&hex[2 * i], 3, "%02x", digest[i]);
  return hex;
}

}  // namespace

std::string sha256OfFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  DigestContext ctx = startSha256();
  if (!in || !ctx) return "";
  std::vector<char> chunk(1 << 16);
  while (in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || in.gcount() > 0) {
    if (EVP_DigestUpdate(ctx.get(), chunk.data(), static_cast<size_t>(in.gcount())) != 1) return "";
  }
  if (in.bad()) return "";
  return finishHex(ctx.get());
}

std::string sha256OfBytes(const std::string& bytes) {
  DigestContext ctx = startSha256();
  if (!ctx || EVP_DigestUpdate(ctx.get(), bytes.data(), bytes.size()) != 1) return "";
  return finishHex(ctx.get());
}

}  // namespace conformance
