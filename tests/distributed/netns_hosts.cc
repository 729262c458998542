#include "tests/distributed/netns_hosts.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace sluice {
namespace {

// iproute2's programs, wherever the distribution put them ("" when absent).
std::string FindTool(const std::string& name) {
  for (const char* dir : {"/usr/sbin/", "/sbin/", "/usr/bin/", "/bin/"}) {
    const std::string path = absl::StrCat(dir, name);
    if (access(path.c_str(), X_OK) == 0) return path;
  }
  return "";
}

// Runs argv (each word a plain token: names, addresses, numbers) through
// the shell with its output captured; the exit status and the output.
std::pair<int, std::string> Capture(const std::vector<std::string>& argv) {
  const std::string command = absl::StrCat(absl::StrJoin(argv, " "), " 2>&1");
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed"};
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof(buf), pipe)) out.append(buf, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// Bytes per second of a tc rate ("10gbit", "500mbit").
double RateBytesPerSecond(const std::string& rate) {
  double value = 0;
  std::string unit;
  size_t i = 0;
  while (i < rate.size() && (absl::ascii_isdigit(rate[i]) || rate[i] == '.')) ++i;
  if (!absl::SimpleAtod(rate.substr(0, i), &value)) return 0;
  unit = rate.substr(i);
  if (unit == "gbit") return value * 1e9 / 8;
  if (unit == "mbit") return value * 1e6 / 8;
  if (unit == "kbit") return value * 1e3 / 8;
  return 0;
}

// Removes the namespaces of test processes that died without cleaning up.
void RemoveStale(const std::string& ip) {
  auto [status, list] = Capture({ip, "netns", "list"});
  if (status != 0) return;
  for (absl::string_view line : absl::StrSplit(list, '\n', absl::SkipEmpty())) {
    const std::string name(line.substr(0, line.find(' ')));
    if (!absl::StartsWith(name, "slt")) continue;
    size_t end = 3;
    while (end < name.size() && absl::ascii_isdigit(name[end])) ++end;
    int pid;
    if (!absl::SimpleAtoi(name.substr(3, end - 3), &pid)) continue;
    if (kill(pid, 0) != 0 && errno == ESRCH) (void)Capture({ip, "netns", "del", name});
  }
}

}  // namespace

absl::Status NetnsHosts::Run(const std::vector<std::string>& argv) {
  auto [status, out] = Capture(argv);
  if (status == 0) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("`", absl::StrJoin(argv, " "), "` failed (", status,
                                          "): ", out));
}

absl::StatusOr<std::unique_ptr<NetnsHosts>> NetnsHosts::Create(int num_hosts) {
  if (geteuid() != 0) {
    return absl::UnavailableError("network namespaces need root (CAP_NET_ADMIN); not root here");
  }
  const std::string ip = FindTool("ip");
  const std::string tc = FindTool("tc");
  if (ip.empty() || tc.empty()) {
    return absl::UnavailableError("iproute2's `ip` and `tc` are not installed");
  }
  RemoveStale(ip);
  std::unique_ptr<NetnsHosts> hosts(new NetnsHosts());
  const std::string prefix = absl::StrCat("slt", getpid());
  const std::string subnet = absl::StrCat("10.77.", getpid() % 250, ".");
  hosts->switch_ns_ = prefix + "s";
  if (absl::Status s = Run({ip, "netns", "add", hosts->switch_ns_}); !s.ok()) {
    return absl::UnavailableError(absl::StrCat("cannot make a network namespace: ", s.message()));
  }
  const std::string& sw = hosts->switch_ns_;
  for (const auto& argv : std::vector<std::vector<std::string>>{
           {ip, "-n", sw, "link", "add", "br0", "type", "bridge"},
           {ip, "-n", sw, "link", "set", "br0", "up"}}) {
    if (absl::Status s = Run(argv); !s.ok()) return s;
  }
  for (int i = 0; i < num_hosts; ++i) {
    const std::string ns = absl::StrCat(prefix, "h", i);
    const std::string port = absl::StrCat("s", i);
    const std::string address = absl::StrCat(subnet, i + 1);
    hosts->namespaces_.push_back(ns);
    hosts->addresses_.push_back(address);
    hosts->removed_.push_back(false);
    for (const auto& argv : std::vector<std::vector<std::string>>{
             {ip, "netns", "add", ns},
             {ip, "-n", ns, "link", "set", "lo", "up"},
             {ip, "link", "add", "eth0", "netns", ns, "type", "veth", "peer", "name", port,
              "netns", sw},
             {ip, "-n", ns, "addr", "add", address + "/24", "dev", "eth0"},
             {ip, "-n", ns, "link", "set", "eth0", "up"},
             {ip, "-n", sw, "link", "set", port, "master", "br0"},
             {ip, "-n", sw, "link", "set", port, "up"}}) {
      if (absl::Status s = Run(argv); !s.ok()) return s;
    }
  }
  // Everyone can reach everyone before the caller starts anything.
  if (const std::string ping = FindTool("ping"); !ping.empty()) {
    for (int i = 1; i < num_hosts; ++i) {
      if (absl::Status s = Run({ip, "netns", "exec", hosts->namespaces_[0], ping, "-c", "1", "-W",
                                "2", hosts->addresses_[i]});
          !s.ok()) {
        return s;
      }
    }
  }
  return hosts;
}

NetnsHosts::~NetnsHosts() {
  const std::string ip = FindTool("ip");
  std::vector<std::string> all = namespaces_;
  if (!switch_ns_.empty()) all.push_back(switch_ns_);
  for (const std::string& ns : all) {
    auto [status, pids] = Capture({ip, "netns", "pids", ns});
    if (status == 0) {
      for (absl::string_view p : absl::StrSplit(pids, '\n', absl::SkipEmpty())) {
        int pid;
        if (absl::SimpleAtoi(p, &pid) && pid > 1) kill(pid, SIGKILL);
      }
    }
    (void)Capture({ip, "netns", "del", ns});
  }
}

std::vector<std::string> NetnsHosts::Wrap(int i, const std::vector<std::string>& argv) const {
  std::vector<std::string> wrapped = {FindTool("ip"), "netns", "exec", namespaces_[i]};
  wrapped.insert(wrapped.end(), argv.begin(), argv.end());
  return wrapped;
}

absl::Status NetnsHosts::SetLinkUp(int i, bool up) {
  return Run({FindTool("ip"), "-n", switch_ns_, "link", "set", absl::StrCat("s", i),
              up ? "up" : "down"});
}

absl::Status NetnsHosts::RemoveHost(int i) {
  removed_[i] = true;
  return Run({FindTool("ip"), "-n", switch_ns_, "link", "del", absl::StrCat("s", i)});
}

absl::Status NetnsHosts::LimitBandwidth(const std::string& rate) {
  const std::string tc = FindTool("tc");
  const double bytes_per_s = rate.empty() ? 0 : RateBytesPerSecond(rate);
  if (!rate.empty() && bytes_per_s <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("not a rate: '", rate, "' (say 10gbit)"));
  }
  // The bucket holds 4 ms at the rate, and at least 256 KiB: more than the
  // 64 KiB segments veth passes whole (a packet over the bucket is dropped).
  const int64_t burst = std::max<int64_t>(256 << 10, static_cast<int64_t>(bytes_per_s * 0.004));
  for (int i = 0; i < size(); ++i) {
    if (removed_[i]) continue;
    for (const auto& [ns, dev] : {std::pair<std::string, std::string>{namespaces_[i], "eth0"},
                                  {switch_ns_, absl::StrCat("s", i)}}) {
      if (rate.empty()) {
        (void)Capture({tc, "-n", ns, "qdisc", "del", "dev", dev, "root"});
        continue;
      }
      if (absl::Status s = Run({tc, "-n", ns, "qdisc", "replace", "dev", dev, "root", "tbf",
                                "rate", rate, "burst", absl::StrCat(burst), "latency", "20ms"});
          !s.ok()) {
        return s;
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace sluice
