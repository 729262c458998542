#include "runtime/collective/ring.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "runtime/collective/reduce_kernels.h"

namespace sluice {
namespace internal {
namespace {

using Done = std::function<void(absl::StatusOr<Tensor>)>;

const char* KindName(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return "all-reduce";
    case CollectiveKind::kBroadcast:
      return "broadcast";
    case CollectiveKind::kAllGather:
      return "all-gather";
  }
  return "collective";
}

// [begin, begin + size) in elements.
struct Range {
  int64_t begin;
  int64_t size;
};

// Part i of `total` cut into `parts` as equal as possible.
Range Split(int64_t total, int64_t parts, int64_t i) {
  const int64_t base = total / parts;
  const int64_t rem = total % parts;
  return {i * base + std::min(i, rem), base + (i < rem ? 1 : 0)};
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Chains a member runs at once (all-reduce, all-gather): enough to keep
// every link busy, few enough that the chunks in flight stay bounded.
constexpr int64_t kDefaultBytesInFlight = 32 << 20;
constexpr int64_t kMinChainsInFlight = 4;
// How long telling the next member of a failure may take (a dead one does
// not answer).
constexpr int64_t kTellAbortedTimeoutMs = 5000;

// Hands out one block: bytes inside a tensor's buffer, which it keeps
// alive. Lets a piece of the input go to a transport that copies it without
// a copy here first.
class ViewAllocator : public Allocator {
 public:
  ViewAllocator(Tensor owner, void* at) : owner_(std::move(owner)), at_(at) {}
  std::string Name() const override { return "collective_input_view"; }
  void* AllocateRaw(size_t /*alignment*/, size_t /*bytes*/) override { return at_; }
  void DeallocateRaw(void* /*ptr*/, size_t /*bytes*/) override {}
  AllocatorStats GetStats() const override { return {}; }

 private:
  const Tensor owner_;
  void* const at_;
};

// Errors from peers (aborts) already carry a node's context.
absl::Status WithContext(const absl::Status& s, const CollectiveParams& p) {
  if (s.ok() || absl::StartsWith(s.message(), "node '")) return s;
  return AddContext(s, p.DebugString());
}

class RingCollective : public std::enable_shared_from_this<RingCollective> {
 public:
  RingCollective(RingOptions options, Tensor input, Done done)
      : o_(std::move(options)),
        p_(o_.params),
        n_(p_.group_size()),
        r_(p_.rank),
        me_(p_.group_devices[r_]),
        next_(p_.group_devices[(r_ + 1) % n_]),
        prev_(p_.group_devices[(r_ + n_ - 1) % n_]),
        esize_(DataTypeSize(input.dtype())),
        input_(std::move(input)),
        done_(std::move(done)) {}

  void Start();

 private:
  absl::Status Init();
  int Mod(int64_t x) const { return static_cast<int>(((x % n_) + n_) % n_); }
  int64_t BytesInFlight() const {
    return p_.max_bytes_in_flight > 0 ? p_.max_bytes_in_flight : kDefaultBytesInFlight;
  }

  Range Segment(int seg) const {
    switch (p_.kind) {
      case CollectiveKind::kAllReduce:
        return Split(input_.NumElements(), n_, seg);
      case CollectiveKind::kAllGather:
        return {seg * block_, block_};
      case CollectiveKind::kBroadcast:
        break;
    }
    return {0, input_.NumElements()};
  }
  // Chunk c of segment `seg`, in output elements.
  Range Piece(int seg, int64_t c) const {
    Range s = Segment(seg);
    Range p = Split(s.size, chunks_, c);
    return {s.begin + p.begin, p.size};
  }
  // The input element where output element `out_begin` of segment `seg`
  // comes from (all-gather blocks sit at rank * block in the output).
  int64_t InputOffset(int seg, int64_t out_begin) const {
    return p_.kind == CollectiveKind::kAllGather ? out_begin - seg * block_ : out_begin;
  }
  int SendSegment(int s) const {
    return s < rs_steps_ ? Mod(r_ - s) : Mod(ag_base_ - (s - rs_steps_));
  }
  int RecvSegment(int s) const {
    return s < rs_steps_ ? Mod(r_ - s - 1) : Mod(ag_base_ - (s - rs_steps_) - 1);
  }
  std::string StepKey(int s, int64_t c) const {
    return s < rs_steps_ ? absl::StrCat(o_.prefix, "/rs/s", s, "/c", c)
                         : absl::StrCat(o_.prefix, "/ag/s", s - rs_steps_, "/c", c);
  }
  char* OutAt(int64_t elem) const { return static_cast<char*>(output_.raw_data()) + elem * esize_; }
  const char* InAt(int64_t elem) const {
    return static_cast<const char*>(input_.raw_data()) + elem * esize_;
  }

  std::string Describe(const std::vector<int64_t>& header) const;
  Tensor Header() const;
  void OnHeader(absl::StatusOr<Tensor> t);

  // A 1-D tensor holding input elements [begin, begin + size): a view of
  // the input when the transport copies what it sends to the next member,
  // else a copy.
  absl::StatusOr<Tensor> PieceOfInput(int64_t begin, int64_t size) const;
  // A 1-D tensor of `size` elements at `at` inside `of`'s buffer (kept
  // alive by the view); only for the transport's sends (send_views_).
  absl::StatusOr<Tensor> View(const Tensor& of, const char* at, int64_t size) const;
  // Host memory from the scratch allocator, else from `fallback`.
  absl::StatusOr<Tensor> AllocateHost(Allocator* fallback, const TensorShape& shape) const;
  void StartChain(int64_t c);
  // Starts the next chain not yet started, if any (a chain ended here).
  void StartNextChain() {
    const int64_t c = next_chain_.fetch_add(1, std::memory_order_relaxed);
    if (c < chunks_ && !finished_.load(std::memory_order_relaxed)) StartChain(c);
  }
  void Step(int64_t c, int s, Tensor carry);
  void OnPiece(int64_t c, int s, absl::StatusOr<Tensor> t);
  void OnBroadcastPiece(int64_t c, absl::StatusOr<Tensor> t);
  // OK when `t` is the piece expected under `key`; else the error, failed.
  bool CheckPiece(const absl::StatusOr<Tensor>& t, int64_t size, const std::string& key);

  void Send(const std::string& key, const Tensor& t);
  // Asks the transport to read the bytes into `landing` (see ResultView)
  // when it is initialized.
  void Recv(const std::string& key, Tensor landing,
            std::function<void(absl::StatusOr<Tensor>)> fn);
  // A view of the result's piece `p`, where a received piece that only gets
  // copied into the result (and passed on as a view, or not at all) may
  // land; uninitialized for an empty piece.
  Tensor ResultView(const Range& p) const {
    if (p.size == 0) return Tensor();
    absl::StatusOr<Tensor> view = View(output_, OutAt(p.begin), p.size);
    return view.ok() ? *std::move(view) : Tensor();
  }
  void Fail(const absl::Status& status);
  void Release() {
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) Finish();
  }
  void Finish() {
    if (finished_.exchange(true)) return;
    Done done = std::move(done_);
    done(std::move(output_));
  }

  const RingOptions o_;
  const CollectiveParams& p_;
  const int n_;
  const int r_;
  const std::string& me_;
  const std::string& next_;
  const std::string& prev_;
  const int64_t esize_;
  const Tensor input_;
  Tensor output_;
  const ReduceKernels* kernels_ = nullptr;
  int64_t block_ = 0;   // all-gather: elements of one member's block
  int64_t chunks_ = 0;  // per segment
  int rs_steps_ = 0;    // reduce-scatter steps (all-reduce: N-1)
  int steps_ = 0;       // all steps of a chain
  int ag_base_ = 0;     // the segment sent at all-gather step 0
  int pos_ = 0;         // broadcast: distance from the source along the ring
  int64_t window_ = 0;  // chains started at once
  bool send_views_ = false;  // the transport copies what goes to next_
  std::atomic<int64_t> next_chain_{0};
  // One for the start, one per chain, header receive and send in flight.
  std::atomic<int64_t> pending_{1};
  std::atomic<bool> finished_{false};
  Done done_;
};

absl::Status RingCollective::Init() {
  const int64_t chunk_elems = std::max<int64_t>(1, p_.chunk_bytes / esize_);
  const int64_t elems = input_.NumElements();
  TensorShape out_shape = input_.shape();
  switch (p_.kind) {
    case CollectiveKind::kAllReduce: {
      ASSIGN_OR_RETURN(kernels_, ReduceKernelsFor(input_.dtype()));
      rs_steps_ = n_ - 1;
      steps_ = 2 * (n_ - 1);
      ag_base_ = r_ + 1;
      chunks_ = CeilDiv(CeilDiv(elems, n_), chunk_elems);
      break;
    }
    case CollectiveKind::kAllGather:
      block_ = elems;
      steps_ = n_ - 1;
      ag_base_ = r_;
      chunks_ = CeilDiv(block_, chunk_elems);
      out_shape.set_dim(0, input_.dim_size(0) * n_);
      break;
    case CollectiveKind::kBroadcast:
      pos_ = Mod(r_ - p_.source_rank);
      chunks_ = CeilDiv(elems, chunk_elems);
      break;
  }
  window_ = p_.kind == CollectiveKind::kBroadcast
                ? chunks_
                : std::min(chunks_, std::max(kMinChainsInFlight, BytesInFlight() / p_.chunk_bytes));
  send_views_ = o_.transport->CopiesOnSend(next_);
  if (p_.kind == CollectiveKind::kBroadcast && pos_ == 0) {
    output_ = input_;
  } else {
    ASSIGN_OR_RETURN(output_, AllocateHost(o_.output_allocator, out_shape));
  }
  if (p_.kind == CollectiveKind::kAllGather && block_ > 0) {
    std::memcpy(OutAt(r_ * block_), input_.raw_data(), block_ * esize_);
  }
  return absl::OkStatus();
}

Tensor RingCollective::Header() const {
  std::vector<int64_t> h = {static_cast<int64_t>(p_.kind), static_cast<int64_t>(input_.dtype()),
                            p_.kind == CollectiveKind::kBroadcast ? p_.source_rank : -1,
                            input_.dims()};
  for (int64_t d : input_.shape().dims()) h.push_back(d);
  return Tensor::FromVector<int64_t>(h);
}

std::string RingCollective::Describe(const std::vector<int64_t>& h) const {
  if (h.size() < 4 || static_cast<int64_t>(h.size()) != 4 + h[3]) return "a malformed header";
  std::string s = absl::StrCat(KindName(static_cast<CollectiveKind>(h[0])), " of ",
                               DataTypeName(static_cast<DataType>(h[1])), " [",
                               absl::StrJoin(h.begin() + 4, h.end(), ","), "]");
  if (h[2] >= 0) absl::StrAppend(&s, " from rank ", h[2]);
  return s;
}

void RingCollective::OnHeader(absl::StatusOr<Tensor> t) {
  if (!t.ok()) {
    Fail(t.status());
  } else {
    const Tensor mine = Header();
    std::vector<int64_t> want(mine.flat<int64_t>().begin(), mine.flat<int64_t>().end());
    std::vector<int64_t> got;
    if (t->dtype() == DT_INT64) got.assign(t->flat<int64_t>().begin(), t->flat<int64_t>().end());
    if (got != want) {
      const int prev_rank = Mod(r_ - 1);
      std::string why;
      if (p_.kind == CollectiveKind::kAllGather && got.size() == want.size() && got.size() > 4 &&
          std::equal(got.begin(), got.begin() + 4, want.begin()) &&
          std::equal(got.begin() + 5, got.end(), want.begin() + 5)) {
        why = " (an all-gather across processes needs the same dim 0 on every member)";
      }
      Fail(absl::InvalidArgumentError(absl::StrCat(
          p_.DebugString(), ": members disagree: rank ", prev_rank, " (", prev_, ") runs ",
          Describe(got), " but rank ", r_, " (", me_, ") runs ", Describe(want), why)));
    }
  }
  Release();
}

void RingCollective::Start() {
  if (absl::Status s = Init(); !s.ok()) {
    Fail(s);  // also aborts the execution, so local members do not wait for this one
    return Release();
  }
  Send(o_.prefix + "/hdr", Header());
  pending_.fetch_add(1, std::memory_order_relaxed);
  auto self = shared_from_this();
  Recv(o_.prefix + "/hdr", Tensor(),
       [self](absl::StatusOr<Tensor> t) { self->OnHeader(std::move(t)); });
  next_chain_.store(window_, std::memory_order_relaxed);
  for (int64_t c = 0; c < window_ && !finished_.load(std::memory_order_relaxed); ++c) {
    StartChain(c);
  }
  Release();
}

absl::StatusOr<Tensor> RingCollective::AllocateHost(Allocator* fallback,
                                                    const TensorShape& shape) const {
  if (o_.scratch_allocator != nullptr) {
    absl::StatusOr<Tensor> t = Tensor::Allocate(o_.scratch_allocator, input_.dtype(), shape);
    if (t.ok()) return t;
  }
  return Tensor::Allocate(fallback, input_.dtype(), shape);
}

absl::StatusOr<Tensor> RingCollective::View(const Tensor& of, const char* at, int64_t size) const {
  auto view = std::make_shared<ViewAllocator>(of, const_cast<char*>(at));
  return Tensor::Allocate(view.get(), input_.dtype(), TensorShape({size}));
}

absl::StatusOr<Tensor> RingCollective::PieceOfInput(int64_t begin, int64_t size) const {
  if (send_views_) return View(input_, InAt(begin), size);
  ASSIGN_OR_RETURN(Tensor t, AllocateHost(DefaultCpuAllocator(), TensorShape({size})));
  if (size > 0) std::memcpy(t.raw_data(), InAt(begin), size * esize_);
  return t;
}

void RingCollective::StartChain(int64_t c) {
  if (p_.kind != CollectiveKind::kBroadcast) {
    pending_.fetch_add(1, std::memory_order_relaxed);
    Step(c, 0, Tensor());
    return;
  }
  std::string key = absl::StrCat(o_.prefix, "/bc/c", c);
  Range p = Piece(0, c);
  if (pos_ == 0) {
    absl::StatusOr<Tensor> piece = PieceOfInput(p.begin, p.size);
    if (!piece.ok()) return Fail(piece.status());
    Send(key, *piece);
    return;
  }
  pending_.fetch_add(1, std::memory_order_relaxed);
  auto self = shared_from_this();
  Recv(key, send_views_ || pos_ == n_ - 1 ? ResultView(p) : Tensor(),
       [self, c](absl::StatusOr<Tensor> t) { self->OnBroadcastPiece(c, std::move(t)); });
}

void RingCollective::Step(int64_t c, int s, Tensor carry) {
  std::string key = StepKey(s, c);
  if (s == 0) {
    const int seg = SendSegment(0);
    Range p = Piece(seg, c);
    absl::StatusOr<Tensor> piece = PieceOfInput(InputOffset(seg, p.begin), p.size);
    if (!piece.ok()) {
      Fail(piece.status());
      return Release();
    }
    carry = *std::move(piece);
  }
  Send(key, carry);
  carry = Tensor();  // the receiver owns it now
  auto self = shared_from_this();
  // All-gather pieces land in the result.
  const bool land = s >= rs_steps_ && (send_views_ || s == steps_ - 1);
  Recv(key, land ? ResultView(Piece(RecvSegment(s), c)) : Tensor(),
       [self, c, s](absl::StatusOr<Tensor> t) { self->OnPiece(c, s, std::move(t)); });
}

bool RingCollective::CheckPiece(const absl::StatusOr<Tensor>& t, int64_t size,
                                const std::string& key) {
  if (!t.ok()) {
    Fail(t.status());
    return false;
  }
  if (finished_.load(std::memory_order_relaxed)) return false;
  if (t->dtype() != input_.dtype() || t->NumElements() != size) {
    Fail(absl::InvalidArgumentError(absl::StrCat(
        p_.DebugString(), ": members disagree: rank ", Mod(r_ - 1), " (", prev_, ") sent ",
        DataTypeName(t->dtype()), " [", t->NumElements(), "] under '", key, "' where rank ", r_,
        " (", me_, ") expects ", DataTypeName(input_.dtype()), " [", size, "]")));
    return false;
  }
  return true;
}

void RingCollective::OnPiece(int64_t c, int s, absl::StatusOr<Tensor> t) {
  const int seg = RecvSegment(s);
  const Range p = Piece(seg, c);
  if (!CheckPiece(t, p.size, StepKey(s, c))) return Release();
  if (p.size > 0) {
    void* got = t->raw_data();
    if (s < rs_steps_ - 1) {
      kernels_->add(got, InAt(p.begin), p.size);
    } else if (s == rs_steps_ - 1) {
      const int64_t divisor = p_.reduce_op == ReduceOp::kMean ? n_ : 1;
      if (send_views_) {
        // Reduced straight into the result, which the all-gather then
        // sends from: one write of the piece instead of two.
        kernels_->sum(OutAt(p.begin), got, InAt(p.begin), p.size);
        if (divisor != 1) kernels_->divide(OutAt(p.begin), p.size, divisor);
        t = View(output_, OutAt(p.begin), p.size);
      } else {
        kernels_->finish(got, InAt(p.begin), OutAt(p.begin), p.size, divisor);
      }
    } else if (got != OutAt(p.begin)) {  // else it landed in the result
      CopyToResult(OutAt(p.begin), got, p.size * esize_);
    }
  }
  if (s + 1 < steps_) {
    if (!t.ok()) {
      Fail(t.status());
      return Release();
    }
    Step(c, s + 1, *std::move(t));
  } else {
    t = Tensor();  // back to its pool before the next chain takes memory
    StartNextChain();
    Release();
  }
}

void RingCollective::OnBroadcastPiece(int64_t c, absl::StatusOr<Tensor> t) {
  const Range p = Piece(0, c);
  std::string key = absl::StrCat(o_.prefix, "/bc/c", c);
  if (!CheckPiece(t, p.size, key)) return Release();
  if (p.size > 0 && t->raw_data() != OutAt(p.begin)) {  // else it landed in the result
    std::memcpy(OutAt(p.begin), t->raw_data(), p.size * esize_);
  }
  if (pos_ < n_ - 1) Send(key, *t);
  Release();
}

void RingCollective::Send(const std::string& key, const Tensor& t) {
  pending_.fetch_add(1, std::memory_order_relaxed);
  auto self = shared_from_this();
  o_.transport->Send(next_, key, t, p_.timeout_ms, [self](absl::Status s) {
    if (!s.ok()) self->Fail(s);
    self->Release();
  });
}

void RingCollective::Recv(const std::string& key, Tensor landing,
                          std::function<void(absl::StatusOr<Tensor>)> fn) {
  if (!landing.IsInitialized()) {
    return o_.transport->Recv(prev_, me_, key, p_.timeout_ms, std::move(fn));
  }
  o_.transport->RecvInto(prev_, me_, key, std::move(landing), p_.timeout_ms, std::move(fn));
}

void RingCollective::Fail(const absl::Status& status) {
  if (finished_.exchange(true)) return;
  absl::Status s = WithContext(status, p_);
  Done done = std::move(done_);
  o_.transport->Abort(o_.prefix + "/", s);
  // The next member waits on this one (and its successor on it): it learns
  // the root cause now, not from its own timeout naming this member.
  o_.transport->TellAborted(
      next_, o_.prefix + "/",
      absl::Status(status.code(), absl::StrCat("collective member ", me_, " (rank ", r_, " of ", n_,
                                               ") failed: ", status.message())),
      std::min<int64_t>(p_.timeout_ms > 0 ? p_.timeout_ms : kDefaultCollectiveTimeoutMs,
                        kTellAbortedTimeoutMs));
  done(s);
}

}  // namespace

void RunRing(RingOptions options, Tensor input, Done done) {
  const CollectiveParams& p = options.params;
  if (p.group_size() == 1) {
    if (p.kind == CollectiveKind::kBroadcast) return done(std::move(input));
    Tensor copy = input.DeepCopy(options.output_allocator);
    if (!copy.IsInitialized()) {
      return done(absl::ResourceExhaustedError(
          absl::StrCat(p.DebugString(), ": cannot allocate the result ", input.DebugString(0))));
    }
    return done(std::move(copy));
  }
  auto ring =
      std::make_shared<RingCollective>(std::move(options), std::move(input), std::move(done));
  ring->Start();
}

}  // namespace internal
}  // namespace sluice
