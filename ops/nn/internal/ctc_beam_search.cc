// Why a TopN of our own and not a std::priority_queue or a sort: the
// order of prefixes with equal probabilities is what TensorFlow's TopN
// (libstdc++'s heap and sort algorithms driven through its three states)
// gives; reproducing it makes Sluice's tied paths TensorFlow's.
#include "ops/nn/internal/ctc_beam_search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <utility>

#include "absl/container/flat_hash_map.h"

namespace sluice {
namespace internal {
namespace {

template <typename T>
constexpr T kLogZero = -std::numeric_limits<T>::infinity();

// log(e^a + e^b), the correction term through float as TensorFlow's.
template <typename T>
T LogSumExp(T a, T b) {
  if (a == kLogZero<T>) return b;
  if (b == kLogZero<T>) return a;
  const T hi = a > b ? a : b;
  const T lo = a > b ? b : a;
  return hi + static_cast<T>(std::log1p(std::exp(static_cast<float>(lo - hi))));
}

template <typename T>
struct Probs {
  T total = kLogZero<T>;
  T blank = kLogZero<T>;
  T label = kLogZero<T>;
  void Reset() { *this = Probs(); }
};

template <typename T>
struct Entry {
  Entry* parent = nullptr;
  int label = -1;
  Probs<T> old_p, new_p;
  absl::flat_hash_map<int, std::unique_ptr<Entry>> children;

  bool Active() const { return new_p.total != kLogZero<T>; }
  Entry* Child(int l) {
    std::unique_ptr<Entry>& c = children[l];
    if (c == nullptr) {
      c = std::make_unique<Entry>();
      c->parent = this;
      c->label = l;
    }
    return c.get();
  }
};

// The best `limit` entries by new_p.total, in TensorFlow's TopN states:
// unordered, then (once the bottom is asked for) bottom-known, then (once
// over the limit) a heap.
template <typename T>
class TopN {
 public:
  explicit TopN(size_t limit) : limit_(limit) {}

  size_t size() const { return items_.size(); }

  void Push(Entry<T>* e) {
    if (state_ != State::kHeap) {
      items_.push_back(e);
      if (items_.size() == limit_ + 1) {
        std::make_heap(items_.begin(), items_.end(), Greater);
        std::pop_heap(items_.begin(), items_.end(), Greater);
        items_.pop_back();
        state_ = State::kHeap;
      } else if (state_ == State::kBottomKnown && !Greater(items_.back(), items_.front())) {
        std::swap(items_.front(), items_.back());
      }
    } else if (Greater(e, items_.front())) {
      std::pop_heap(items_.begin(), items_.end(), Greater);
      items_.back() = e;
      std::push_heap(items_.begin(), items_.end(), Greater);
    }
  }

  Entry<T>* Bottom() {
    if (state_ == State::kUnordered) {
      size_t min = 0;
      for (size_t i = 1; i < items_.size(); ++i) {
        if (Greater(items_[min], items_[i])) min = i;
      }
      if (min != 0) std::swap(items_[0], items_[min]);
      state_ = State::kBottomKnown;
    }
    return items_.front();
  }

  // Best first; empties the container.
  std::vector<Entry<T>*> Extract() {
    std::vector<Entry<T>*> out = std::move(items_);
    items_.clear();
    if (state_ == State::kHeap) {
      std::sort_heap(out.begin(), out.end(), Greater);
    } else {
      std::sort(out.begin(), out.end(), Greater);
    }
    state_ = State::kUnordered;
    return out;
  }

  const std::vector<Entry<T>*>& items() const { return items_; }

 private:
  enum class State { kUnordered, kBottomKnown, kHeap };
  static bool Greater(const Entry<T>* a, const Entry<T>* b) { return a->new_p.total > b->new_p.total; }

  size_t limit_;
  std::vector<Entry<T>*> items_;
  State state_ = State::kUnordered;
};

// The labels from the root to `e`, repeats merged when asked.
template <typename T>
std::vector<int64_t> LabelsOf(const Entry<T>* e, bool merge_repeated) {
  std::vector<int64_t> out;
  int previous = -1;
  for (; e->parent != nullptr; e = e->parent) {
    if (!merge_repeated || e->label != previous) out.push_back(e->label);
    previous = e->label;
  }
  std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace

template <typename T>
absl::Status CtcBeamSearch(const T* logits, int64_t steps, int64_t classes, int64_t stride,
                           int beam_width, int top_paths, bool merge_repeated,
                           std::vector<CtcPath<T>>* paths) {
  const int blank = static_cast<int>(classes - 1);
  Entry<T> root;
  root.new_p.total = 0;
  root.new_p.blank = 0;
  TopN<T> leaves(beam_width);
  leaves.Push(&root);
  // Whether probabilities `p` may enter the beam now.
  auto candidate = [&](const Probs<T>& p) {
    return p.total > kLogZero<T> &&
           (leaves.size() < static_cast<size_t>(beam_width) || p.total > leaves.Bottom()->new_p.total);
  };
  for (int64_t t = 0; t < steps; ++t) {
    const T* x = logits + t * stride;
    // log-softmax in T: x - (max + log sum exp(x - max)).
    T top = x[0];
    for (int64_t c = 1; c < classes; ++c) top = x[c] > top ? x[c] : top;
    T sum = 0;
    for (int64_t c = 0; c < classes; ++c) sum += std::exp(x[c] - top);
    const T norm = top + std::log(sum);

    const std::vector<Entry<T>*> branches = leaves.Extract();
    for (Entry<T>* b : branches) b->old_p = b->new_p;
    // The prefixes already in the beam: a blank, their last label again,
    // or (for a child) the step that made them from their parent.
    for (Entry<T>* b : branches) {
      if (b->parent != nullptr) {
        const Entry<T>* p = b->parent;
        if (p->Active()) {
          const T previous = b->label == p->label ? p->old_p.blank : p->old_p.total;
          b->new_p.label = LogSumExp(b->new_p.label, previous);
        }
        b->new_p.label = b->new_p.label + (x[b->label] - norm);
      }
      b->new_p.blank = (b->old_p.total + x[blank]) - norm;
      b->new_p.total = LogSumExp(b->new_p.blank, b->new_p.label);
      leaves.Push(b);
    }
    // Each prefix extended by every label.
    for (Entry<T>* b : branches) {
      if (!candidate(b->old_p)) continue;
      for (int l = 0; l < blank; ++l) {
        Entry<T>* c = b->Child(l);
        if (c->Active()) continue;
        c->new_p.blank = kLogZero<T>;
        const T previous = l == b->label ? b->old_p.blank : b->old_p.total;
        c->new_p.label = (x[l] - norm) + previous;
        c->new_p.total = c->new_p.label;
        if (candidate(c->new_p)) {
          if (leaves.size() == static_cast<size_t>(beam_width)) leaves.Bottom()->new_p.Reset();
          leaves.Push(c);
        } else {
          c->old_p.Reset();
          c->new_p.Reset();
        }
      }
    }
  }
  if (top_paths > beam_width) {
    return absl::InvalidArgumentError("requested more paths than the beam width.");
  }
  if (static_cast<size_t>(top_paths) > leaves.size()) {
    return absl::InvalidArgumentError("Less leaves in the beam search than requested.");
  }
  TopN<T> best(top_paths);
  for (Entry<T>* e : leaves.items()) best.Push(e);
  paths->clear();
  for (Entry<T>* e : best.Extract()) paths->push_back({LabelsOf(e, merge_repeated), e->new_p.total});
  return absl::OkStatus();
}

template absl::Status CtcBeamSearch<float>(const float*, int64_t, int64_t, int64_t, int, int, bool,
                                           std::vector<CtcPath<float>>*);
template absl::Status CtcBeamSearch<double>(const double*, int64_t, int64_t, int64_t, int, int, bool,
                                            std::vector<CtcPath<double>>*);

}  // namespace internal
}  // namespace sluice
