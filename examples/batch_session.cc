#include "examples/batch_session.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"

namespace sluice {

absl::StatusOr<std::unique_ptr<BatchSession>> BatchSession::Create(const Scope& s,
                                                                   const data::Dataset& ds,
                                                                   int cpu_threads) {
  data::Iterator it = ds.MakeInitializableIterator();
  std::vector<Output> next = it.GetNext();
  RETURN_IF_ERROR(s.status());
  std::vector<std::string> outputs;
  for (const Output& o : next) outputs.push_back(absl::StrCat(o.node->name(), ":", o.index));
  SessionConfig config = BuiltinSessionConfig();
  config.devices.cpu_threads = cpu_threads;
  ASSIGN_OR_RETURN(GraphDef def, s.ToGraphDef());
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(config, def));
  RETURN_IF_ERROR(session->Run({}, {}, {it.initializer()->name()}).status());
  return std::unique_ptr<BatchSession>(new BatchSession(std::move(session), std::move(outputs)));
}

absl::StatusOr<std::vector<Tensor>> BatchSession::Next() {
  const absl::Time start = absl::Now();
  absl::StatusOr<std::vector<Tensor>> out = session_->Run({}, outputs_, {});
  wait_seconds_ += absl::ToDoubleSeconds(absl::Now() - start);
  return out;
}

absl::StatusOr<std::vector<std::vector<Tensor>>> BatchSession::ReadAll() {
  std::vector<std::vector<Tensor>> all;
  while (true) {
    absl::StatusOr<std::vector<Tensor>> b = Next();
    if (absl::IsOutOfRange(b.status())) return all;
    RETURN_IF_ERROR(b.status());
    all.push_back(*std::move(b));
  }
}

}  // namespace sluice
