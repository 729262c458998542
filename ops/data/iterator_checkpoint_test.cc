// SerializeIterator / DeserializeIterator: a pipeline saved in the middle of
// an epoch and restored in a new session (a restarted worker: new devices,
// new resources) continues without repeating or skipping an element,
// through TFRecord reading, shuffle, repeat, batch and prefetch; saved at
// the start, at an epoch boundary and at the end too. The state crosses as
// bytes (EncodeIteratorState), as it would through a file.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/data/dataset_builder.h"
#include "ops/data/internal/session_drain.h"
#include "runtime/data/iterator_state.h"
#include "runtime/io/record_writer.h"

namespace sluice {
namespace data {
namespace {

using ::testing::HasSubstr;

std::vector<std::string> WriteShards(const std::string& name, int shards, int per_shard,
                                     RecordCompression c) {
  std::vector<std::string> files;
  int n = 0;
  for (int s = 0; s < shards; ++s) {
    const std::string path = ::testing::TempDir() + "/" + name + "-" + std::to_string(s) +
                             (c == RecordCompression::kGzip ? ".gz" : "") + ".tfrecord";
    auto w = RecordWriter::Create(path, c);
    EXPECT_TRUE(w.ok()) << w.status();
    for (int i = 0; i < per_shard; ++i) {
      EXPECT_TRUE((*w)->WriteRecord("record-" + std::to_string(n++)).ok());
    }
    EXPECT_TRUE((*w)->Close().ok());
    files.push_back(path);
  }
  return files;
}

// One graph: the pipeline, its iterator, Serialize and Deserialize.
struct Pipeline {
  Scope s = Scope::NewRootScope(BuiltinOps());
  std::vector<Output> next;
  Output state;
  Output state_in;
  Node* restore = nullptr;
  Node* init = nullptr;

  template <typename BuildFn>
  explicit Pipeline(BuildFn build) {
    Iterator it = build(s).MakeInitializableIterator();
    next = it.GetNext();
    state = it.Serialize();
    state_in = ops::Placeholder(s.WithOpName("state_in"), ::tensorflow::DT_VARIANT);
    restore = it.Deserialize(state_in);
    init = it.initializer();
  }

  std::unique_ptr<Session> NewStartedSession() {
    EXPECT_TRUE(s.ok()) << s.status();
    auto sess = NewSession(BuiltinSessionConfig(), *s.graph());
    EXPECT_TRUE(sess.ok()) << sess.status();
    EXPECT_TRUE((*sess)->Run({}, {}, {init}).ok());
    return *std::move(sess);
  }

  // Up to `n` elements, flattened to strings (component 0).
  std::vector<std::string> Read(Session* sess, int n = 1 << 20) {
    std::vector<std::string> out;
    for (int i = 0; i < n; ++i) {
      absl::StatusOr<std::vector<Tensor>> e = sess->Run({}, next, {});
      if (!e.ok()) {
        EXPECT_TRUE(absl::IsOutOfRange(e.status())) << e.status();
        break;
      }
      const Tensor& t = (*e)[0];
      if (t.dtype() == DT_STRING) {
        for (const std::string& x : t.flat<std::string>()) out.push_back(x);
      } else {
        for (int64_t x : t.flat<int64_t>()) out.push_back(std::to_string(x));
      }
    }
    return out;
  }

  std::string Save(Session* sess) {
    absl::StatusOr<std::vector<Tensor>> st = sess->Run({}, {state}, {});
    EXPECT_TRUE(st.ok()) << st.status();
    if (!st.ok()) return "";
    auto v = IteratorStateFromTensor((*st)[0]);
    EXPECT_TRUE(v.ok()) << v.status();
    return EncodeIteratorState((*v)->values());
  }

  absl::Status Restore(Session* sess, const std::string& bytes) {
    absl::StatusOr<IteratorStateMap> m = DecodeIteratorState(bytes);
    if (!m.ok()) return m.status();
    return sess->Run({{state_in, IteratorStateTensor(*std::move(m))}}, {}, {restore}).status();
  }
};

// For each checkpoint position (in elements of the pipeline), the elements
// before it plus those a restored session reads after it are exactly the
// uninterrupted run.
void CheckResumes(Pipeline& p, const std::vector<int>& positions, size_t expected_total) {
  std::unique_ptr<Session> ref_sess = p.NewStartedSession();
  const std::vector<std::string> reference = p.Read(ref_sess.get());
  ASSERT_EQ(reference.size(), expected_total);
  for (int k : positions) {
    SCOPED_TRACE(::testing::Message() << "saved after " << k << " elements");
    std::unique_ptr<Session> a = p.NewStartedSession();
    std::vector<std::string> got = p.Read(a.get(), k);
    const std::string bytes = p.Save(a.get());
    const std::vector<std::string> rest_a = p.Read(a.get());  // saving does not disturb
    std::unique_ptr<Session> b = p.NewStartedSession();     // the restarted worker
    ASSERT_TRUE(p.Restore(b.get(), bytes).ok());
    const std::vector<std::string> rest_b = p.Read(b.get());
    EXPECT_EQ(rest_a, rest_b);
    got.insert(got.end(), rest_b.begin(), rest_b.end());
    EXPECT_EQ(got, reference);
  }
}

TEST(IteratorCheckpointTest, TFRecordShuffleRepeatBatchPrefetch) {
  const std::vector<std::string> files = WriteShards("shuffled", 2, 25, RecordCompression::kNone);
  Pipeline p([&](const Scope& s) {
    return TFRecordDataset(s, Input(std::initializer_list<std::string>{files[0], files[1]}))
        .Shuffle(16, 11)
        .Repeat(2)
        .Batch(4)
        .Prefetch(2);
  });
  // 100 records in 25 batches; 12 batches = 48 records, near the epoch end.
  CheckResumes(p, {0, 7, 12, 13, 16, 24, 25}, 100);
  // Every record exactly twice.
  std::unique_ptr<Session> sess = p.NewStartedSession();
  std::vector<std::string> all = p.Read(sess.get());
  std::map<std::string, int> counts;
  for (const std::string& r : all) ++counts[r];
  ASSERT_EQ(counts.size(), 50u);
  for (const auto& [r, n] : counts) EXPECT_EQ(n, 2) << r;
}

TEST(IteratorCheckpointTest, GzipRecordsShuffleAndRepeat) {
  const std::vector<std::string> files = WriteShards("gzip", 3, 10, RecordCompression::kGzip);
  Pipeline p([&](const Scope& s) {
    return TFRecordDataset(s, Input(std::initializer_list<std::string>{files[0], files[1], files[2]}),
                           "GZIP")
        .ShuffleAndRepeat(8, 3, 5)
        .Batch(7, true);
  });
  CheckResumes(p, {0, 3, 6, 12}, 84);  // 90 records, 12 whole batches
}

TEST(IteratorCheckpointTest, CountingAndCombiningDatasets) {
  Pipeline p([](const Scope& s) {
    return Range(s, 0, 40)
        .Shard(2, 1)
        .Concatenate(Range(s, 100, 110))
        .Skip(3)
        .Take(20)
        .Cache()
        .Repeat(2)
        .Batch(3);
  });
  CheckResumes(p, {0, 1, 5, 7, 13, 14}, 40);
}

TEST(IteratorCheckpointTest, ZipOfShuffles) {
  Pipeline p([](const Scope& s) {
    Dataset a = Range(s, 0, 30).Shuffle(10, 1);
    Dataset b = Range(s, 100, 140).Shuffle(5, 2, false);
    return Zip(s, {a, b}).Prefetch(4);
  });
  CheckResumes(p, {0, 4, 17, 29, 30}, 30);
}

// The state through a file, as a restarted worker would find it.
TEST(IteratorCheckpointTest, RestartedWorkerThroughAFile) {
  const std::vector<std::string> files = WriteShards("restart", 2, 20, RecordCompression::kNone);
  Pipeline p([&](const Scope& s) {
    return TFRecordDataset(s, Input(std::initializer_list<std::string>{files[0], files[1]}))
        .Shuffle(8, 3)
        .Batch(5)
        .Prefetch(1);
  });
  std::unique_ptr<Session> ref = p.NewStartedSession();
  const std::vector<std::string> reference = p.Read(ref.get());
  std::unique_ptr<Session> a = p.NewStartedSession();
  std::vector<std::string> got = p.Read(a.get(), 3);
  absl::StatusOr<std::vector<Tensor>> state = a->Run({}, {p.state}, {});
  ASSERT_TRUE(state.ok()) << state.status();
  const std::string path = ::testing::TempDir() + "/worker0.iterator";
  ASSERT_TRUE(WriteIteratorStateFile(path, (*state)[0]).ok());
  a.reset();  // the worker goes away
  std::unique_ptr<Session> b = p.NewStartedSession();
  absl::StatusOr<Tensor> loaded = ReadIteratorStateFile(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_TRUE(b->Run({{p.state_in, *loaded}}, {}, {p.restore}).ok());
  std::vector<std::string> rest = p.Read(b.get());
  got.insert(got.end(), rest.begin(), rest.end());
  EXPECT_EQ(got, reference);
}

TEST(IteratorCheckpointTest, Errors) {
  Pipeline p([](const Scope& s) { return Range(s, 0, 10); });
  Pipeline other([](const Scope& s) { return Range(s, 0, 10).Skip(1); });
  ASSERT_TRUE(p.s.ok());
  auto sess = NewSession(BuiltinSessionConfig(), *p.s.graph());
  ASSERT_TRUE(sess.ok());
  // Before the initializer: nothing to save or restore.
  absl::Status st = (*sess)->Run({}, {p.state}, {}).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(st)) << st;
  std::unique_ptr<Session> o = other.NewStartedSession();
  const std::string other_state = other.Save(o.get());
  ASSERT_TRUE((*sess)->Run({}, {}, {p.init}).ok());
  st = p.Restore(sess->get(), other_state);
  EXPECT_TRUE(absl::IsNotFound(st)) << st;
  EXPECT_THAT(st.message(), HasSubstr("Iterator::Range:index"));
  st = p.Restore(sess->get(), "not a state");
  EXPECT_TRUE(absl::IsInvalidArgument(st)) << st;
}

}  // namespace
}  // namespace data
}  // namespace sluice
