// SPDX-License-Identifier: Apache-2.0
// SHA-256 of a file, for report provenance: two certificates
// name the same plugin build and the same profile only if these agree.
#pragma once

#include <string>

namespace conformance {

// Lower-case hex digest of the file's bytes, or "" when it cannot be read.
std::string sha256OfFile(const std::string& path);

// Lower-case hex digest of a byte string.
std::string sha256OfBytes(const std::string& bytes);

}  // namespace conformance
