// SPDX-License-Identifier: Apache-2.0
// ncclnet-info: the SDK's property checks (ncclnet/host/property_checks.hpp)
// as warnings, plus what only this tool sees (failed calls, devices left
// uninspected).
#include "checks.hpp"

#include "ncclnet/host/property_checks.hpp"
#include "ncclnet/result_name.hpp"

namespace ncclnet::info {

namespace {

bool provided(const PluginInfo& p, const char* slot) {
  for (const OptionalSlot& s : p.optional) {
    if (std::string(s.name) == slot) return s.state == SlotState::Provided;
  }
  return false;
}

void add(const std::vector<host::PropertyFinding>& findings, std::vector<Warning>* out) {
  for (const host::PropertyFinding& f : findings)
    out->push_back(Warning{f.device, f.field, f.message});
}

}  // namespace

std::vector<Warning> checkPlugin(const PluginInfo& plugin) {
  std::vector<Warning> out;
  if (plugin.finalizeResult != ncclSuccess) {
    out.push_back(Warning{
        -1, "finalize", std::string("finalize failed with ") + resultText(plugin.finalizeResult)});
  }
  if (plugin.deviceCount > static_cast<int>(plugin.devices.size())) {
    out.push_back(Warning{-1, "devices",
                          "devices() reported " + std::to_string(plugin.deviceCount) +
                              "; only the first " + std::to_string(plugin.devices.size()) +
                              " were inspected"});
  }
  host::PluginShape shape{plugin.version, plugin.deviceCount, provided(plugin, "regMrDmaBuf")};
  std::vector<const char*> names;
  for (const DeviceInfo& d : plugin.devices) {
    names.push_back(d.name ? d.name->c_str() : nullptr);
    if (d.status != ncclSuccess) {
      out.push_back(Warning{d.index, "getProperties",
                            std::string("getProperties failed with ") + resultText(d.status) +
                                "; NCCL aborts topology detection on this error"});
      continue;
    }
    // The strings were copied when the plugin was unloaded; point at the copies.
    ncclNetProperties_v12_t props = d.props;
    props.name = d.name ? const_cast<char*>(d.name->c_str()) : nullptr;
    props.pciPath = d.pciPath ? const_cast<char*>(d.pciPath->c_str()) : nullptr;
    add(host::checkDeviceProperties(shape, d.index, props), &out);
  }
  add(host::checkDeviceNames(names), &out);
  return out;
}

}  // namespace ncclnet::info
