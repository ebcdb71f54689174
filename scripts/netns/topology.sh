# SPDX-License-Identifier: Apache-2.0
# Two network namespaces that stand in for two nodes (sourced by run.sh):
#
#   <prefix>0                                   <prefix>1
#     nd0 10.200.1.1/24  <== data veth ==>   nd0 10.200.1.2/24   the plugin's traffic
#     nc0 10.200.2.1/24  <== control veth ==> nc0 10.200.2.2/24  the rendezvous
#
# softverbs (sdk-ib's software device) gives each device an address in one
# /8 (SOFTVERBS_NET): 11.0.0.0/8 is local to <prefix>0 and routed to it over
# nd0 from <prefix>1, 12.0.0.0/8 the other way round; the networks exist
# only inside these two namespaces.
#
# Faults (netns_fault) touch nd0 only, so a partition cuts the plugin's
# connections while the harness's rendezvous and verdicts keep flowing. Both
# namespaces are private: their addresses and interface names cannot collide
# with the host's or with another run's, only the namespace names can, and
# those carry the caller's pid.

NETNS_DATA_IF=nd0
NETNS_CONTROL_IF=nc0
NETNS_DATA_ADDR=(10.200.1.1 10.200.1.2)
NETNS_CONTROL_ADDR=(10.200.2.1 10.200.2.2)
NETNS_SOFTVERBS_NET=(11 12)

# netns_usable: 0 when this process may create namespaces; else prints why.
netns_usable() {
  if [ "$(id -u)" != 0 ]; then
    echo "network namespaces need root (uid $(id -u))"
    return 1
  fi
  local probe="nnprobe$$"
  if ! ip netns add "$probe" 2>/dev/null; then
    echo "'ip netns add' is not permitted here"
    return 1
  fi
  ip netns del "$probe"
}

# netns_up PREFIX: creates PREFIX0 and PREFIX1 and both veth pairs.
netns_up() {
  local p=$1 i
  ip netns add "${p}0" && ip netns add "${p}1" || return 1
  ip link add "$NETNS_DATA_IF" netns "${p}0" type veth peer name "$NETNS_DATA_IF" netns "${p}1" &&
    ip link add "$NETNS_CONTROL_IF" netns "${p}0" type veth peer name "$NETNS_CONTROL_IF" netns "${p}1" ||
    return 1
  for i in 0 1; do
    ip -n "${p}$i" addr add "${NETNS_DATA_ADDR[$i]}/24" dev "$NETNS_DATA_IF" &&
      ip -n "${p}$i" addr add "${NETNS_CONTROL_ADDR[$i]}/24" dev "$NETNS_CONTROL_IF" &&
      ip -n "${p}$i" link set lo up &&
      ip -n "${p}$i" link set "$NETNS_DATA_IF" up &&
      ip -n "${p}$i" link set "$NETNS_CONTROL_IF" up || return 1
  done
  for i in 0 1; do
    ip -n "${p}$i" route add local "${NETNS_SOFTVERBS_NET[$i]}.0.0.0/8" dev lo &&
      ip -n "${p}$i" route add "${NETNS_SOFTVERBS_NET[$((1 - i))]}.0.0.0/8" \
        via "${NETNS_DATA_ADDR[$((1 - i))]}" dev "$NETNS_DATA_IF" || return 1
  done
}

# netns_down PREFIX: deleting a namespace deletes its veth ends (and with
# them the peers), its nftables tables and its qdiscs.
netns_down() {
  ip netns del "${1}0" 2>/dev/null
  ip netns del "${1}1" 2>/dev/null
  return 0
}

# netns_fault PREFIX SPEC: applies SPEC to nd0 in both namespaces.
#   loss:P       drop P % of the packets arriving on nd0 (nftables numgen)
#   partition    drop every packet arriving on nd0 (silent, as a cut cable)
#   rate:R       tbf on nd0's egress at rate R (tc syntax, e.g. 50mbit)
#   none         remove every fault
# Drops are on input, not output: an output drop is reported to the
# sending socket (EPERM), which no real network does.
netns_fault() {
  local p=$1 spec=$2 i ns
  for i in 0 1; do
    ns="${p}$i"
    case $spec in
      none)
        ip netns exec "$ns" nft delete table inet ncclnet_fault 2>/dev/null
        tc -n "$ns" qdisc del dev "$NETNS_DATA_IF" root 2>/dev/null
        ;;
      loss:*)
        netns_drop "$ns" "numgen random mod 100 < ${spec#loss:} drop" || return 1
        ;;
      partition)
        netns_drop "$ns" "drop" || return 1
        ;;
      rate:*)
        tc -n "$ns" qdisc replace dev "$NETNS_DATA_IF" root tbf rate "${spec#rate:}" \
          burst 64kb latency 100ms || return 1
        ;;
      *)
        echo "unknown fault '$spec'" >&2
        return 1
        ;;
    esac
  done
  return 0
}

# netns_drop NS ACTION: an input rule that takes ACTION on what nd0 receives.
netns_drop() {
  ip netns exec "$1" nft -f - <<NFT
table inet ncclnet_fault {
  chain in {
    type filter hook input priority 0; policy accept;
    iifname "$NETNS_DATA_IF" $2
  }
}
NFT
}
