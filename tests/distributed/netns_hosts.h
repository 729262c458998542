// NetnsHosts: a cluster of hosts on one machine for multi-process tests and
// benches. Each host is a Linux network namespace with its own address,
// joined to the others through a bridge in one more namespace (a switch)
// by a veth pair; a link can go down and up, be limited in bandwidth (tc
// tbf on both ends) or vanish with its host. Addresses are in 10.x.y.0/24,
// which exist only inside these namespaces: nothing outside them is ever a
// target, and the machine's own interfaces are not touched.
//
//   absl::StatusOr<std::unique_ptr<NetnsHosts>> hosts = NetnsHosts::Create(3);
//   if (!hosts.ok()) GTEST_SKIP() << hosts.status();   // not root, no `ip`
//   std::string a = (*hosts)->address(0);              // "10.61.23.1"
//   ChildProcess::Start((*hosts)->Wrap(0, {RunfilePath("tools/server"), ...}), ...);
//   (*hosts)->SetLinkUp(1, false);  ...  (*hosts)->SetLinkUp(1, true);
//   (*hosts)->LimitBandwidth("10gbit");
//   // ~NetnsHosts: every namespace (and so every link) is deleted.
//
// Requires root (CAP_NET_ADMIN and CAP_SYS_ADMIN) and iproute2's `ip` and
// `tc`; Create says which is missing (Unavailable), so callers can skip.
// Namespaces are named "slt<pid>s" (the switch) and "slt<pid>h<i>"; ones
// left by a test process that died are removed by the next Create.
//
// Thread-compatible.
#ifndef SLUICE_TESTS_DISTRIBUTED_NETNS_HOSTS_H_
#define SLUICE_TESTS_DISTRIBUTED_NETNS_HOSTS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace sluice {

class NetnsHosts {
 public:
  static absl::StatusOr<std::unique_ptr<NetnsHosts>> Create(int num_hosts);
  ~NetnsHosts();
  NetnsHosts(const NetnsHosts&) = delete;
  NetnsHosts& operator=(const NetnsHosts&) = delete;

  int size() const { return static_cast<int>(addresses_.size()); }
  // Host i's address ("10.a.b.<i+1>").
  const std::string& address(int i) const { return addresses_[i]; }
  const std::string& ns(int i) const { return namespaces_[i]; }

  // argv run inside host i's namespace (`ip netns exec NS argv...`).
  std::vector<std::string> Wrap(int i, const std::vector<std::string>& argv) const;

  // Takes host i's link to the switch down (its packets go nowhere, its
  // connections see no reset) or brings it back.
  absl::Status SetLinkUp(int i, bool up);
  // Host i disappears from the network: its link is deleted (whatever runs
  // in it is the caller's to kill).
  absl::Status RemoveHost(int i);
  // Every link carries at most `rate` ("1gbit", "10gbit", "25gbit") each
  // way; "" lifts the limit.
  absl::Status LimitBandwidth(const std::string& rate);

 private:
  NetnsHosts() = default;
  // Runs `ip` or `tc` with `args`; Internal with its output on failure.
  static absl::Status Run(const std::vector<std::string>& argv);

  std::string switch_ns_;
  std::vector<std::string> namespaces_;
  std::vector<std::string> addresses_;
  std::vector<bool> removed_;
};

}  // namespace sluice

#endif  // SLUICE_TESTS_DISTRIBUTED_NETNS_HOSTS_H_
