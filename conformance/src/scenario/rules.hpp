// SPDX-License-Identifier: Apache-2.0
// The contract's rules under the suite's own names. The list itself
// (number, name, severity, title) is ncclnet/contract/rules.hpp's, shared
// with ncclnet-check; nothing here adds to it.
#pragma once

#include "ncclnet/contract/rules.hpp"

namespace conformance {

using ncclnet::contract::allRules;
using ncclnet::contract::findRule;
using ncclnet::contract::isShould;
using ncclnet::contract::Rule;
using ncclnet::contract::RuleInfo;
using ncclnet::contract::ruleInfo;
using ncclnet::contract::ruleLabel;
using ncclnet::contract::ruleNumber;
using ncclnet::contract::ruleTag;
using ncclnet::contract::Severity;
using ncclnet::contract::severityName;

}  // namespace conformance
