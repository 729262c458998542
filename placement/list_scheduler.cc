#include "placement/list_scheduler.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "graph/algorithm.h"

namespace sluice {
namespace internal {
namespace {

// Earliest-start-time list scheduling with memory limits (m-ETF style): among
// every ready node and every device that can still hold its group, take the
// pair that starts earliest, ties to the higher static level; the node then
// goes to the device where it finishes earliest (the same one unless devices
// differ in speed). Each device keeps two lazy heaps: nodes whose inputs
// arrive after the device frees ("waiting", by arrival time) and nodes it
// could start now ("released", by level), so one step costs O(D log V).
class ListScheduler {
 public:
  explicit ListScheduler(Problem* p)
      : p_(*p),
        g_(*p->graph),
        devs_(*p->devices),
        num_devices_(static_cast<int>(devs_.size())),
        n_(g_.num_node_ids()) {}

  absl::StatusOr<Schedule> Run() {
    RETURN_IF_ERROR(ComputeLevels());
    Init();
    std::vector<int> sources;
    for (const Node* node : g_.nodes()) {
      if (pending_[node->id()] == 0) sources.push_back(node->id());
    }
    init_phase_ = true;
    for (int id : sources) RETURN_IF_ERROR(MakeReady(id));
    init_phase_ = false;
    // Every floating node is settled now: its inputs are floating too.
    ComputeAnchorLevels();
    for (int id : initial_ready_) RETURN_IF_ERROR(Admit(id));
    int remaining_nodes = 0;
    for (const Node* node : g_.nodes()) remaining_nodes += floating_[node->id()] ? 0 : 1;
    while (remaining_nodes > 0) {
      Choice next;
      RETURN_IF_ERROR(PickNext(&next));
      if (next.node < 0 && num_deferred_ > 0) {
        for (size_t g = 0; g < deferred_.size(); ++g) {
          RETURN_IF_ERROR(ReleaseDeferred(static_cast<int>(g)));
        }
        continue;
      }
      if (next.node < 0) {
        return absl::InternalError(absl::StrCat("auto placer: ", remaining_nodes,
                                                " nodes left but none is ready"));
      }
      RETURN_IF_ERROR(Place(next.node, next.device, next.start));
      --remaining_nodes;
    }
    RETURN_IF_ERROR(PlaceLeftoverGroups());
    Schedule out;
    out.device.assign(n_, -1);
    out.finish = finish_;
    for (const Node* node : g_.nodes()) {
      const int id = node->id();
      out.device[id] = floating_[id] ? p_.group_device[p_.group_of[id]] : device_[id];
      out.makespan = std::max(out.makespan, finish_[id]);
    }
    return out;
  }

 private:
  struct Choice {
    int node = -1;
    int device = -1;
    double start = 0;
  };

  // The ready node and device to schedule next; node -1 when none is ready.
  absl::Status PickNext(Choice* out) {
    Choice best;
    for (int d = 0; d < num_devices_; ++d) {
      ASSIGN_OR_RETURN(auto top, Top(d));
      if (!top.first) continue;
      const Entry& e = top.second;
      const double start = std::max(e.ready, avail_[d]);
      if (best.node < 0 || start < best.start ||
          (start == best.start && level_[e.node] > level_[best.node])) {
        best = Choice{e.node, d, start};
      }
    }
    if (best.node < 0) {
      *out = best;
      return absl::OkStatus();
    }
    // The node goes where it finishes first (on uniform devices: where it
    // starts first); a faster device may be worth a later start.
    const int v = best.node;
    Choice chosen = best;
    for (int d = 0; d < num_devices_; ++d) {
      if (d == best.device || !Allowed(v, d) || OwnNeed(v) > free_[d]) continue;
      const double start = std::max(avail_[d], ReadyOn(v, d).first);
      const double finish = start + Compute(v, d);
      const double chosen_finish = chosen.start + Compute(v, chosen.device);
      if (finish < chosen_finish || (finish == chosen_finish && start < chosen.start)) {
        chosen = Choice{v, d, start};
      }
    }
    *out = chosen;
    return absl::OkStatus();
  }

  struct Entry {
    double ready = 0;      // when every input can be on the device
    int node = -1;
    int64_t pulled = 0;    // bytes of floating groups it brings along
    int version = 0;       // floating_commits_ when `ready` was computed
  };
  struct WaitingOrder {  // a max-heap comparator: earliest ready on top
    const std::vector<double>* level;
    bool operator()(const Entry& a, const Entry& b) const {
      if (a.ready != b.ready) return a.ready > b.ready;
      if ((*level)[a.node] != (*level)[b.node]) return (*level)[a.node] < (*level)[b.node];
      return a.node > b.node;
    }
  };
  struct ReleasedOrder {  // highest level on top
    const std::vector<double>* level;
    bool operator()(const Entry& a, const Entry& b) const {
      if ((*level)[a.node] != (*level)[b.node]) return (*level)[a.node] < (*level)[b.node];
      return a.node > b.node;
    }
  };

  double EdgeBytes(const Edge* e) const {
    if (e->IsControl()) return 0;
    return static_cast<double>(p_.cost->cost(*e->src).output_bytes[e->src_output]);
  }

  // Static level: the longest path to an exit, in seconds, counting compute
  // on the fastest device and, on each edge, the transfer it would expect
  // between two devices.
  absl::Status ComputeLevels() {
    absl::StatusOr<std::vector<Node*>> sorted = TopologicalOrder(g_);
    if (!sorted.ok()) return AddContext(sorted.status(), "auto placer");
    const std::vector<Node*>& order = *sorted;
    compute_.assign(static_cast<size_t>(n_) * num_devices_, 0);
    level_.assign(n_, 0);
    double latency = 0, bandwidth = 0;
    for (const DeviceSpec& d : devs_) {
      latency += d.link_latency_seconds / num_devices_;
      bandwidth += d.link_bytes_per_second / num_devices_;
    }
    if (!(bandwidth > 0)) bandwidth = 1e9;
    mean_latency_ = latency;
    mean_bandwidth_ = bandwidth;
    const double cross = num_devices_ > 1 ? double(num_devices_ - 1) / num_devices_ : 0;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const Node* node = *it;
      const int id = node->id();
      double fastest = std::numeric_limits<double>::infinity();
      for (int d = 0; d < num_devices_; ++d) {
        const double s = p_.cost->ComputeSeconds(*node, devs_[d]);
        compute_[static_cast<size_t>(id) * num_devices_ + d] = s;
        fastest = std::min(fastest, s);
      }
      double tail = 0;
      for (const Edge* e : node->out_edges()) {
        const double comm = cross * (mean_latency_ + EdgeBytes(e) / mean_bandwidth_);
        tail = std::max(tail, comm + level_[e->dst->id()]);
      }
      level_[id] = fastest + tail;
    }
    return absl::OkStatus();
  }

  void Init() {
    pending_.assign(n_, 0);
    floating_.assign(n_, false);
    done_.assign(n_, false);
    device_.assign(n_, -1);
    finish_.assign(n_, 0);
    alive_.assign(n_, 0);
    pull_mark_.assign(p_.group_device.size(), -1);
    has_floating_.assign(p_.group_device.size(), false);
    deferred_.assign(p_.group_device.size(), {});
    avail_.assign(num_devices_, 0);
    free_ = p_.capacity;
    waiting_.assign(num_devices_, {});
    released_.assign(num_devices_, {});
    for (const Node* node : g_.nodes()) pending_[node->id()] = node->in_edges().size();
  }

  bool IsFloating(const Node* node) const {
    const int g = p_.group_of[node->id()];
    if (!p_.allow_floating || p_.group_device[g] >= 0) return false;
    if (p_.cost->cost(*node).flops > 0) return false;
    for (const Edge* e : node->in_edges()) {
      if (!floating_[e->src->id()] || p_.group_of[e->src->id()] != g) return false;
    }
    return true;
  }

  // Device `src` ends up on, or -1 while its floating group is uncommitted.
  int DeviceOf(int src) const {
    return floating_[src] ? p_.group_device[p_.group_of[src]] : device_[src];
  }

  // When all inputs of `id` could be on device `d`, and the bytes of the
  // uncommitted floating groups feeding it that would come along to `d`
  // (those allowed there and still fitting after its own group).
  std::pair<double, int64_t> ReadyOn(int id, int d) {
    const Node* node = g_.node(id);
    const int own = p_.group_of[id];
    int64_t need = p_.group_device[own] < 0 ? p_.group_bytes[own] : 0;
    int64_t pulled = 0;
    ++stamp_;
    double ready = 0;
    for (const Edge* e : node->in_edges()) {
      const int src = e->src->id();
      const double bytes = EdgeBytes(e);
      double arrival = finish_[src];
      const int src_device = DeviceOf(src);
      if (src_device < 0 && e->IsControl()) {
        // Ordering only: nothing to move, nothing to bring along.
      } else if (src_device < 0) {
        const int sg = p_.group_of[src];
        if (sg == own || pull_mark_[sg] == stamp_) {
          // Comes along with this node's group, or already pulled.
        } else if (p_.allowed[sg][d] && need + p_.group_bytes[sg] <= free_[d]) {
          pull_mark_[sg] = stamp_;
          need += p_.group_bytes[sg];
          pulled += p_.group_bytes[sg];
        } else {
          arrival += mean_latency_ + bytes / mean_bandwidth_;
        }
      } else if (src_device != d) {
        arrival += e->IsControl()
                       ? std::max(devs_[src_device].link_latency_seconds,
                                  devs_[d].link_latency_seconds)
                       : CostModel::TransferSeconds(static_cast<int64_t>(bytes),
                                                    devs_[src_device], devs_[d]);
      }
      ready = std::max(ready, arrival);
    }
    return {ready, pulled};
  }

  double Compute(int id, int d) const {
    return compute_[static_cast<size_t>(id) * num_devices_ + d];
  }

  int64_t OwnNeed(int id) const {
    const int g = p_.group_of[id];
    return p_.group_device[g] < 0 ? p_.group_bytes[g] : 0;
  }

  bool Allowed(int id, int d) const {
    const int g = p_.group_of[id];
    return p_.group_device[g] >= 0 ? p_.group_device[g] == d : p_.allowed[g][d];
  }

  void Push(int d, const Entry& e) {
    if (e.ready <= avail_[d]) {
      released_[d].push_back(e);
      std::push_heap(released_[d].begin(), released_[d].end(), ReleasedOrder{&level_});
    } else {
      waiting_[d].push_back(e);
      std::push_heap(waiting_[d].begin(), waiting_[d].end(), WaitingOrder{&level_});
    }
  }

  // Queues `id` on every device that may take it and can hold its group.
  absl::Status Enqueue(int id) {
    int count = 0;
    for (int d = 0; d < num_devices_; ++d) {
      if (!Allowed(id, d) || OwnNeed(id) > free_[d]) continue;
      auto [ready, pulled] = ReadyOn(id, d);
      Push(d, Entry{ready, id, pulled, floating_commits_});
      ++count;
    }
    alive_[id] = count;
    if (count > 0) return absl::OkStatus();
    return NoRoom(p_.group_of[id]);
  }

  absl::Status NoRoom(int g) const {
    std::vector<std::string> free_list;
    for (int d = 0; d < num_devices_; ++d) {
      if (!p_.allowed[g][d] && p_.group_device[g] != d) continue;
      const std::string left = free_[d] == kUnlimitedBytes ? "unlimited" : FormatBytes(free_[d]);
      free_list.push_back(absl::StrCat(devs_[d].name, " ", left));
    }
    const Node* first = g_.node(p_.first_node[g]);
    return absl::ResourceExhaustedError(absl::StrCat(
        "auto placer: no device has room left for node ", first->DebugName(),
        " and its colocation group of ", p_.group_size[g], " nodes, which need ",
        p_.group_bytes[g], " bytes (", FormatBytes(p_.group_bytes[g]),
        "); free memory: ", absl::StrJoin(free_list, ", ")));
  }

  // For each group with floating members: the highest static level among
  // the nodes outside it that read them.
  void ComputeAnchorLevels() {
    anchor_level_.assign(p_.group_device.size(), -1);
    for (const Node* node : g_.nodes()) {
      if (!floating_[node->id()]) continue;
      const int g = p_.group_of[node->id()];
      for (const Edge* e : node->out_edges()) {
        if (e->IsControl() || p_.group_of[e->dst->id()] == g) continue;
        anchor_level_[g] = std::max(anchor_level_[g], level_[e->dst->id()]);
      }
    }
  }

  // Queues a ready node, unless it would commit a group with floating members
  // (a variable's initializing Assign) ahead of a more critical reader of
  // theirs: then it waits until a reader is placed. The reader cannot depend
  // on it (its static level is higher), so the wait ends.
  absl::Status Admit(int id) {
    const int g = p_.group_of[id];
    if (p_.group_device[g] < 0 && has_floating_[g] && anchor_level_[g] > level_[id]) {
      deferred_[g].push_back(id);
      ++num_deferred_;
      return absl::OkStatus();
    }
    return Enqueue(id);
  }

  absl::Status ReleaseDeferred(int g) {
    std::vector<int> nodes = std::move(deferred_[g]);
    deferred_[g].clear();
    num_deferred_ -= static_cast<int>(nodes.size());
    for (int id : nodes) RETURN_IF_ERROR(Enqueue(id));
    return absl::OkStatus();
  }

  absl::Status MakeReady(int id) {
    const Node* node = g_.node(id);
    if (!IsFloating(node)) {
      if (init_phase_) {
        initial_ready_.push_back(id);
        return absl::OkStatus();
      }
      return Admit(id);
    }
    // A floating node is done at once; its finish time is that of its inputs.
    floating_[id] = true;
    has_floating_[p_.group_of[id]] = true;
    done_[id] = true;
    for (const Edge* e : node->in_edges()) {
      finish_[id] = std::max(finish_[id], finish_[e->src->id()]);
    }
    return Release(node);
  }

  absl::Status Release(const Node* node) {
    for (const Edge* e : node->out_edges()) {
      if (--pending_[e->dst->id()] == 0) RETURN_IF_ERROR(MakeReady(e->dst->id()));
    }
    return absl::OkStatus();
  }

  // Drops the top entry of a heap of device `d`.
  template <typename Order>
  void PopTop(std::vector<Entry>& heap, Order order) {
    std::pop_heap(heap.begin(), heap.end(), order);
    heap.pop_back();
  }

  // Checks the top entry of `heap`; true when it is valid as it stands,
  // false when it was dropped or moved (look again).
  template <typename Order>
  absl::StatusOr<bool> CheckTop(int d, std::vector<Entry>& heap, Order order) {
    Entry& e = heap.front();
    const int id = e.node;
    if (done_[id]) {
      PopTop(heap, order);
      return false;
    }
    if (!Allowed(id, d) || OwnNeed(id) > free_[d]) {
      PopTop(heap, order);
      if (--alive_[id] == 0) RETURN_IF_ERROR(Enqueue(id));
      return false;
    }
    if (e.version == floating_commits_ && OwnNeed(id) + e.pulled <= free_[d]) return true;
    auto [ready, pulled] = ReadyOn(id, d);
    if (ready == e.ready) {
      e.pulled = pulled;
      e.version = floating_commits_;
      return true;
    }
    Entry moved{ready, id, pulled, floating_commits_};
    PopTop(heap, order);
    Push(d, moved);
    return false;
  }

  // The best entry device `d` could run next, if any.
  absl::StatusOr<std::pair<bool, Entry>> Top(int d) {
    WaitingOrder wait_order{&level_};
    ReleasedOrder rel_order{&level_};
    for (;;) {
      auto& waiting = waiting_[d];
      while (!waiting.empty() && waiting.front().ready <= avail_[d]) {
        Entry e = waiting.front();
        PopTop(waiting, wait_order);
        released_[d].push_back(e);
        std::push_heap(released_[d].begin(), released_[d].end(), rel_order);
      }
      if (!released_[d].empty()) {
        ASSIGN_OR_RETURN(bool valid, CheckTop(d, released_[d], rel_order));
        if (valid) return std::make_pair(true, released_[d].front());
      } else if (!waiting.empty()) {
        ASSIGN_OR_RETURN(bool valid, CheckTop(d, waiting, wait_order));
        if (valid) return std::make_pair(true, waiting.front());
      } else {
        return std::make_pair(false, Entry{});
      }
    }
  }

  void Commit(int group, int d) {
    p_.group_device[group] = d;
    if (free_[d] != kUnlimitedBytes) free_[d] -= p_.group_bytes[group];
  }

  absl::Status Place(int id, int d, double start) {
    const Node* node = g_.node(id);
    // Commit the floating groups that come along (as ReadyOn chose them).
    const int own = p_.group_of[id];
    int64_t need = OwnNeed(id);
    ++stamp_;
    std::vector<int> pulled;
    for (const Edge* e : node->in_edges()) {
      const int src = e->src->id();
      const int sg = p_.group_of[src];
      if (e->IsControl() || DeviceOf(src) >= 0 || sg == own || pull_mark_[sg] == stamp_) {
        continue;
      }
      if (p_.allowed[sg][d] && need + p_.group_bytes[sg] <= free_[d]) {
        pull_mark_[sg] = stamp_;
        need += p_.group_bytes[sg];
        pulled.push_back(sg);
      }
    }
    if (p_.group_device[own] < 0) {
      Commit(own, d);
      if (has_floating_[own]) ++floating_commits_;
    }
    for (int sg : pulled) Commit(sg, d);
    if (!pulled.empty()) ++floating_commits_;
    // Nodes waiting for these groups to settle may go now.
    RETURN_IF_ERROR(ReleaseDeferred(own));
    for (const Edge* e : node->in_edges()) {
      const int src = e->src->id();
      if (!e->IsControl() && floating_[src]) RETURN_IF_ERROR(ReleaseDeferred(p_.group_of[src]));
    }
    device_[id] = d;
    done_[id] = true;
    finish_[id] = start + Compute(id, d);
    avail_[d] = finish_[id];
    return Release(node);
  }

  // Floating groups no consumer pulled go where memory is most plentiful.
  absl::Status PlaceLeftoverGroups() {
    for (size_t g = 0; g < p_.group_device.size(); ++g) {
      if (p_.group_device[g] >= 0 || p_.first_node[g] < 0) continue;
      int best = -1;
      for (int d = 0; d < num_devices_; ++d) {
        if (!p_.allowed[g][d] || p_.group_bytes[g] > free_[d]) continue;
        if (best < 0 || free_[d] > free_[best]) best = d;
      }
      if (best < 0) return NoRoom(static_cast<int>(g));
      Commit(static_cast<int>(g), best);
    }
    return absl::OkStatus();
  }

  Problem& p_;
  const Graph& g_;
  const std::vector<DeviceSpec>& devs_;
  const int num_devices_;
  const int n_;
  double mean_latency_ = 0;
  double mean_bandwidth_ = 1e9;
  std::vector<double> compute_;  // [node id * D + device]
  std::vector<double> level_;
  std::vector<int> pending_;
  std::vector<bool> floating_;
  std::vector<bool> done_;
  std::vector<int> device_;
  std::vector<double> finish_;
  std::vector<int> alive_;
  std::vector<int> pull_mark_;
  std::vector<bool> has_floating_;  // per group
  std::vector<double> anchor_level_;  // per group
  std::vector<std::vector<int>> deferred_;  // per group: ready nodes held back
  int num_deferred_ = 0;
  bool init_phase_ = false;
  std::vector<int> initial_ready_;
  int stamp_ = 0;
  int floating_commits_ = 0;
  std::vector<double> avail_;
  std::vector<int64_t> free_;
  std::vector<std::vector<Entry>> waiting_;
  std::vector<std::vector<Entry>> released_;
};

}  // namespace

absl::StatusOr<Schedule> ScheduleList(Problem* p) {
  ListScheduler scheduler(p);
  return scheduler.Run();
}

std::string FormatBytes(int64_t bytes) {
  const double b = static_cast<double>(bytes);
  char buf[64];
  if (b >= 1024.0 * 1024 * 1024) {
    std::snprintf(buf, sizeof(buf), "%.2f GiB", b / (1024.0 * 1024 * 1024));
  } else if (b >= 1024.0 * 1024) {
    std::snprintf(buf, sizeof(buf), "%.2f MiB", b / (1024.0 * 1024));
  } else if (b >= 1024.0) {
    std::snprintf(buf, sizeof(buf), "%.1f KiB", b / 1024.0);
  } else {
    std::snprintf(buf, sizeof(buf), "%lld B", static_cast<long long>(bytes));
  }
  return buf;
}

}  // namespace internal
}  // namespace sluice
