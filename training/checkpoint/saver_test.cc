#include "training/checkpoint/saver.h"

#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "builtin_session.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/io/internal/checkpoint_shard.h"
#include "ops/io/io_ops.h"
#include "ops/state/resource_variable_ops.h"
#include "ops/state/state_ops.h"
#include "runtime/io/tensor_bundle.h"
#include "runtime/atomic_file.h"
#include "runtime/session.h"
#include "session/direct_session.h"

namespace sluice {
namespace {

using ::absl::StatusCode;

constexpr char kPrefix[] = "/job:localhost/replica:0/task:0";
std::string Cpu(int id) { return absl::StrCat(kPrefix, "/device:CPU:", id); }

std::string TestDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return absl::StrCat(tmp ? tmp : "/tmp", "/saver_test_", getpid(), "/", name);
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

bool Contains(const absl::Status& s, absl::string_view needle) {
  return absl::StrContains(s.message(), needle);
}

// Variables on CPU:1 (w1, count) and CPU:2 (w2), a bump op that changes
// them all, and a saver over every variable.
class SaverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Scope s1 = root_.WithDevice(Cpu(1));
    Scope s2 = root_.WithDevice(Cpu(2));
    w1_ = ops::VariableWithInit(s1.WithOpName("w1"),
                                Input(MakeTensorProto<float>({1, 2, 3, 4}, TensorShape({2, 2}))));
    count_ = ops::VariableWithInit(s1.WithOpName("count"), Input(int64_t{7}));
    w2_ = ops::VariableWithInit(s2.WithOpName("w2"), {0.5f, 0.25f, 0.125f});
    bump_ = ops::GroupDeps(
        root_.WithOpName("bump"),
        {ops::AssignAdd(s1, w1_.var, ops::Const(s1, {1.f}, TensorShape({2, 2}))).node,
         ops::AssignAdd(s1, count_.var, Input(int64_t{1})).node,
         ops::AssignAdd(s2, w2_.var, {1.f, 1.f, 1.f}).node});
    init_ = ops::GlobalVariablesInitializer(root_);
    ASSERT_TRUE(root_.ok()) << root_.status();
  }

  void MakeSaver(SaverOptions options = {}) {
    absl::StatusOr<std::unique_ptr<Saver>> saver = Saver::Build(root_, {}, options);
    ASSERT_TRUE(saver.ok()) << saver.status();
    saver_ = *std::move(saver);
  }

  std::unique_ptr<Session> NewSess() {
    SessionConfig opts = BuiltinSessionConfig();
    opts.devices.num_virtual_cpus = 2;
    opts.devices.cpu_threads = 2;
    opts.devices.virtual_cpu_threads = 1;
    absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(opts, *root_.graph());
    EXPECT_TRUE(sess.ok()) << sess.status();
    return sess.ok() ? *std::move(sess) : nullptr;
  }

  // w1[0], count, w2[0].
  std::vector<double> Values(Session* sess) {
    absl::StatusOr<std::vector<Tensor>> out =
        sess->Run({}, {w1_.var.name(), count_.var.name(), w2_.var.name()}, {});
    EXPECT_TRUE(out.ok()) << out.status();
    if (!out.ok()) return {};
    return {(*out)[0].flat<float>()[0], static_cast<double>((*out)[1].scalar<int64_t>()),
            (*out)[2].flat<float>()[0]};
  }

  void Bump(Session* sess) { ASSERT_TRUE(sess->Run({}, {}, {"bump"}).ok()); }

  Scope root_ = Scope::NewRootScope(BuiltinOps());
  ops::VariableAndInit w1_, count_, w2_;
  Node* bump_ = nullptr;
  Node* init_ = nullptr;
  std::unique_ptr<Saver> saver_;
};

TEST_F(SaverTest, RoundTripOneShardPerDevice) {
  MakeSaver();
  ASSERT_EQ(saver_->num_shards(), 2);
  std::unique_ptr<Session> sess = NewSess();
  ASSERT_TRUE(sess->Run({}, {}, {"init"}).ok());
  Bump(sess.get());
  const std::string dir = TestDir("roundtrip");
  absl::StatusOr<std::string> prefix = saver_->Save(sess.get(), dir, 100);
  ASSERT_TRUE(prefix.ok()) << prefix.status();
  EXPECT_EQ(*prefix, dir + "/model.ckpt-100");
  // TensorFlow's layout: an index and a data file per shard, merged from
  // the shards' "_temp" directory, which is gone.
  EXPECT_TRUE(Exists(dir + "/model.ckpt-100.index"));
  EXPECT_TRUE(Exists(dir + "/model.ckpt-100.data-00000-of-00002"));
  EXPECT_TRUE(Exists(dir + "/model.ckpt-100.data-00001-of-00002"));
  EXPECT_FALSE(Exists(dir + "/model.ckpt-100_temp"));
  EXPECT_EQ(*LatestCheckpoint(dir), *prefix);

  Bump(sess.get());
  EXPECT_EQ(Values(sess.get()), (std::vector<double>{3, 9, 2.5}));
  ASSERT_TRUE(saver_->Restore(sess.get(), *prefix).ok());
  EXPECT_EQ(Values(sess.get()), (std::vector<double>{2, 8, 1.5}));

  // A fresh session (as after a restart) restores without initializing.
  std::unique_ptr<Session> fresh = NewSess();
  absl::Status st = saver_->Restore(fresh.get(), *LatestCheckpoint(dir));
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(Values(fresh.get()), (std::vector<double>{2, 8, 1.5}));
}

TEST_F(SaverTest, EachShardIsWrittenOnItsVariablesDevice) {
  MakeSaver();
  std::unique_ptr<Session> sess = NewSess();
  ASSERT_TRUE(sess->Run({}, {}, {"init"}).ok());
  const std::string prefix = TestDir("placed") + "/m-1";
  ASSERT_TRUE(CreateDirectories(TestDir("placed")).ok());
  RunOptions ro;
  ro.output_partition_graphs = true;
  RunMetadata meta;
  const SaverNodeNames& names = saver_->node_names();
  ASSERT_TRUE(sess->Run({{names.prefix_feed, Tensor::Scalar<std::string>(prefix)}}, {},
                        {names.save_target}, ro, &meta)
                  .ok());
  std::vector<std::string> save_devices;
  // Only the fed prefix and the save ops' completion (control) cross
  // devices; variable values never do. Transfers are named after their source.
  std::vector<std::string> sent;
  for (const GraphDef& g : meta.partition_graphs) {
    for (const NodeDef& n : g.node()) {
      if (n.op() == "SaveV2") save_devices.push_back(absl::StrCat(n.name(), "@", n.device()));
      if (n.op() == "_Send") sent.push_back(n.attr().at("tensor_name").s());
    }
  }
  EXPECT_FALSE(sent.empty());
  for (const std::string& t : sent) EXPECT_TRUE(absl::StrContains(t, "_save/")) << t;
  std::sort(save_devices.begin(), save_devices.end());
  EXPECT_EQ(save_devices, (std::vector<std::string>{"save/shard_0/save@" + Cpu(1),
                                                    "save/shard_1/save@" + Cpu(2)}));
  // Both shards merged at the prefix.
  Scope s = Scope::NewRootScope(BuiltinOps());
  std::vector<Output> r0 =
      ops::RestoreV2(s, prefix, {"count", "w1"}, {"", ""}, {DT_INT64, DT_FLOAT});
  std::vector<Output> r1 = ops::RestoreV2(s, prefix, {"w2"}, {""}, {DT_FLOAT});
  ASSERT_TRUE(s.ok()) << s.status();
  auto check = NewSession(BuiltinSessionConfig(), *s.graph());
  ASSERT_TRUE(check.ok());
  absl::StatusOr<std::vector<Tensor>> got =
      (*check)->Run({}, {r0[0].name(), r0[1].name(), r1[0].name()}, {});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)[0].scalar<int64_t>(), 7);
  EXPECT_EQ((*got)[1].flat<float>()[3], 4);
  EXPECT_EQ((*got)[2].flat<float>()[2], 0.125f);
  // Each data file holds its own device's variables only: shard 0 CPU:1's
  // (count: 8 bytes, w1: 16), shard 1 CPU:2's (w2: 12).
  EXPECT_EQ(std::filesystem::file_size(Saver::DataFilename(prefix, 0, 2)), 24u);
  EXPECT_EQ(std::filesystem::file_size(Saver::DataFilename(prefix, 1, 2)), 12u);
}

TEST_F(SaverTest, MaxToKeepDeletesTheOldestAndLatestIsTheNewest) {
  MakeSaver({.max_to_keep = 2});
  std::unique_ptr<Session> sess = NewSess();
  ASSERT_TRUE(sess->Run({}, {}, {"init"}).ok());
  const std::string dir = TestDir("keep");
  for (int step = 1; step <= 4; ++step) {
    ASSERT_TRUE(saver_->Save(sess.get(), dir, step * 10).ok());
    Bump(sess.get());
  }
  EXPECT_EQ(*LatestCheckpoint(dir), dir + "/model.ckpt-40");
  EXPECT_EQ(*ListCheckpoints(dir),
            (std::vector<std::string>{dir + "/model.ckpt-30", dir + "/model.ckpt-40"}));
  for (int step : {10, 20}) {
    for (int k : {0, 1}) {
      EXPECT_FALSE(Exists(Saver::DataFilename(absl::StrCat(dir, "/model.ckpt-", step), k, 2)));
    }
  }
  for (int step : {30, 40}) {
    for (int k : {0, 1}) {
      EXPECT_TRUE(Exists(Saver::DataFilename(absl::StrCat(dir, "/model.ckpt-", step), k, 2)));
    }
  }
  ASSERT_TRUE(saver_->Restore(sess.get(), dir + "/model.ckpt-30").ok());
  EXPECT_EQ(Values(sess.get()), (std::vector<double>{3, 9, 2.5}));
  // Saving a step again replaces it and keeps the list duplicate-free.
  ASSERT_TRUE(saver_->Save(sess.get(), dir, 30).ok());
  EXPECT_EQ(*ListCheckpoints(dir),
            (std::vector<std::string>{dir + "/model.ckpt-40", dir + "/model.ckpt-30"}));
}

TEST_F(SaverTest, CorruptShardIsDataLossOnRestore) {
  MakeSaver();
  std::unique_ptr<Session> sess = NewSess();
  ASSERT_TRUE(sess->Run({}, {}, {"init"}).ok());
  const std::string dir = TestDir("corrupt");
  absl::StatusOr<std::string> prefix = saver_->Save(sess.get(), dir, 5);
  ASSERT_TRUE(prefix.ok());
  const std::string shard = Saver::DataFilename(*prefix, 1, 2);
  std::string bytes = *ReadFileToString(shard);
  bytes[bytes.size() / 2] ^= 0x40;
  ASSERT_TRUE(WriteFileAtomically(shard, bytes).ok());
  absl::Status st = saver_->Restore(sess.get(), *prefix);
  EXPECT_EQ(st.code(), StatusCode::kDataLoss) << st;
  EXPECT_TRUE(Contains(st, shard)) << st;
  EXPECT_TRUE(Contains(st, "w2")) << st;
}

// A corrupt latest checkpoint no longer stops the chief: the one before is
// restored (and a corrupt state of every kept one is an error, not a fresh
// start).
TEST_F(SaverTest, RestoreNewestFallsBackPastACorruptLatest) {
  MakeSaver();
  std::unique_ptr<Session> sess = NewSess();
  ASSERT_TRUE(sess->Run({}, {}, {"init"}).ok());
  const std::string dir = TestDir("fallback");
  EXPECT_EQ(saver_->RestoreNewest(sess.get(), dir).status().code(), StatusCode::kNotFound);
  absl::StatusOr<std::string> first = saver_->Save(sess.get(), dir, 1);
  ASSERT_TRUE(first.ok());
  Bump(sess.get());
  absl::StatusOr<std::string> second = saver_->Save(sess.get(), dir, 2);
  ASSERT_TRUE(second.ok());
  Bump(sess.get());
  auto corrupt = [](const std::string& prefix) {
    const std::string shard = Saver::DataFilename(prefix, 0, 2);
    std::string bytes = *ReadFileToString(shard);
    bytes[bytes.size() / 2] ^= 0x40;
    ASSERT_TRUE(WriteFileAtomically(shard, bytes).ok());
  };
  corrupt(*second);
  absl::StatusOr<std::string> restored = saver_->RestoreNewest(sess.get(), dir);
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ(*restored, *first);
  EXPECT_EQ(Values(sess.get()), (std::vector<double>{1, 7, 0.5}));
  corrupt(*first);
  absl::StatusOr<std::string> none = saver_->RestoreNewest(sess.get(), dir);
  EXPECT_EQ(none.status().code(), StatusCode::kDataLoss) << none.status();
  EXPECT_TRUE(Contains(none.status(), *first) && Contains(none.status(), *second)) << none.status();
}

TEST_F(SaverTest, InterruptedSaveLeavesThePreviousCheckpointUsable) {
  MakeSaver();
  std::unique_ptr<Session> sess = NewSess();
  ASSERT_TRUE(sess->Run({}, {}, {"init"}).ok());
  const std::string dir = TestDir("interrupted");
  ASSERT_TRUE(saver_->Save(sess.get(), dir, 10).ok());
  Bump(sess.get());
  // Step 20's shards are written (the save ops ran) but the process "dies"
  // before the state file is updated; step 30 dies between shards.
  const SaverNodeNames& names = saver_->node_names();
  for (int step : {20, 30}) {
    const std::string prefix = absl::StrCat(dir, "/model.ckpt-", step);
    ASSERT_TRUE(sess->Run({{names.prefix_feed, Tensor::Scalar<std::string>(prefix)}}, {},
                          {names.save_target})
                    .ok());
    if (step == 30) {
      ASSERT_EQ(unlink(Saver::DataFilename(prefix, 1, 2).c_str()), 0);
    }
  }
  EXPECT_EQ(*LatestCheckpoint(dir), dir + "/model.ckpt-10");
  EXPECT_EQ(*ListCheckpoints(dir), std::vector<std::string>{dir + "/model.ckpt-10"});
  std::unique_ptr<Session> fresh = NewSess();
  ASSERT_TRUE(saver_->Restore(fresh.get(), *LatestCheckpoint(dir)).ok());
  EXPECT_EQ(Values(fresh.get()), (std::vector<double>{1, 7, 0.5}));
  // The half-written step 30 is unusable, and says which file is missing.
  absl::Status st = saver_->Restore(fresh.get(), dir + "/model.ckpt-30");
  EXPECT_EQ(st.code(), StatusCode::kNotFound) << st;
  EXPECT_TRUE(Contains(st, "model.ckpt-30.data-00001-of-00002")) << st;
  // Saving goes on normally afterwards.
  ASSERT_TRUE(saver_->Save(sess.get(), dir, 40).ok());
  EXPECT_EQ(*LatestCheckpoint(dir), dir + "/model.ckpt-40");
}

TEST_F(SaverTest, WorksFromNamesOverAGraphDefSession) {
  MakeSaver({.name = "ckpt"});
  absl::StatusOr<GraphDef> def = root_.ToGraphDef();
  ASSERT_TRUE(def.ok());
  SessionConfig opts = BuiltinSessionConfig();
  opts.devices.num_virtual_cpus = 2;
  auto sess = NewSession(opts, *def);
  ASSERT_TRUE(sess.ok()) << sess.status();
  ASSERT_TRUE((*sess)->Run({}, {}, {"init"}).ok());
  std::unique_ptr<Saver> by_name = Saver::FromNames(saver_->node_names());
  EXPECT_EQ(by_name->node_names().save_target, "ckpt/save_all");
  const std::string dir = TestDir("by_name");
  absl::StatusOr<std::string> prefix = by_name->Save(sess->get(), dir, 1, "net");
  ASSERT_TRUE(prefix.ok()) << prefix.status();
  EXPECT_EQ(*prefix, dir + "/net-1");
  ASSERT_TRUE((*sess)->Run({}, {}, {"bump"}).ok());
  ASSERT_TRUE(by_name->Restore(sess->get(), *prefix).ok());
  absl::StatusOr<std::vector<Tensor>> out = (*sess)->Run({}, {"count"}, {});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].scalar<int64_t>(), 7);
}

TEST(SaverBuildTest, RejectsNonVariablesAndEmptyGraphs) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  EXPECT_EQ(Saver::Build(s, {}).status().code(), StatusCode::kInvalidArgument);
  Output c = ops::Const(s.WithOpName("c"), 1.f);
  absl::StatusOr<std::unique_ptr<Saver>> saver = Saver::Build(s, {c.node});
  EXPECT_EQ(saver.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(saver.status(), "'c'"));
}

TEST(SaverBuildTest, UnshardedWritesOneFile) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::VariableWithInit(s.WithOpName("a").WithDevice(Cpu(1)), {1.f});
  ops::VariableWithInit(s.WithOpName("b").WithDevice(Cpu(2)), {2.f});
  ops::GlobalVariablesInitializer(s);
  absl::StatusOr<std::unique_ptr<Saver>> saver = Saver::Build(s, {}, {.sharded = false});
  ASSERT_TRUE(saver.ok()) << saver.status();
  EXPECT_EQ((*saver)->num_shards(), 1);
  SessionConfig opts = BuiltinSessionConfig();
  opts.devices.num_virtual_cpus = 2;
  auto sess = NewSession(opts, *s.graph());
  ASSERT_TRUE(sess.ok());
  ASSERT_TRUE((*sess)->Run({}, {}, {"init"}).ok());
  const std::string dir = TestDir("unsharded");
  absl::StatusOr<std::string> prefix = (*saver)->Save(sess->get(), dir, 3);
  ASSERT_TRUE(prefix.ok()) << prefix.status();
  EXPECT_TRUE(Exists(*prefix + ".index"));
  EXPECT_TRUE(Exists(*prefix + ".data-00000-of-00001"));
  ASSERT_TRUE((*saver)->Restore(sess->get(), *prefix).ok());
}

// Resource variables (VarHandleOp) beside a ref variable: saved through a
// read on their device and restored by AssignVariableOp, under their node
// names, in the same TensorFlow bundle; a fresh session restores them
// without running any initializer.
TEST(SaverBuildTest, ResourceVariablesRoundTripBesideRefVariables) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Scope on2 = s.WithDevice(Cpu(2));
  ops::VariableWithInit(s.WithOpName("a").WithDevice(Cpu(1)), {1.f, 2.f});
  Output r = ops::VarHandleOp(on2.WithOpName("r"), DT_FLOAT, TensorShape({3}));
  Output steps = ops::VarHandleOp(on2.WithOpName("steps"), DT_INT64, TensorShape({}));
  Node* init_r = ops::AssignVariableOp(on2, r, {0.5f, 0.25f, 0.125f});
  Node* init_steps = ops::AssignVariableOp(on2, steps, Input(int64_t{7}));
  ops::NoOp(s.WithOpName("init").WithControlDependencies(
      std::vector<Node*>{ops::GlobalVariablesInitializer(s.WithOpName("ref_init")), init_r,
                         init_steps}));
  ops::NoOp(s.WithOpName("bump").WithControlDependencies(std::vector<Node*>{
      ops::AssignAddVariableOp(on2, r, {1.f, 1.f, 1.f}),
      ops::AssignAddVariableOp(on2, steps, Input(int64_t{1}))}));
  ops::ReadVariableOp(on2.WithOpName("r_value"), r, DT_FLOAT);
  ops::ReadVariableOp(on2.WithOpName("steps_value"), steps, DT_INT64);
  absl::StatusOr<std::unique_ptr<Saver>> saver = Saver::Build(s, {});
  ASSERT_TRUE(saver.ok()) << saver.status();
  EXPECT_EQ((*saver)->num_shards(), 2);  // CPU:1's and CPU:2's
  const Node* read = s.graph()->FindNode("save/shard_1/read_0");
  ASSERT_NE(read, nullptr);
  EXPECT_EQ(read->op(), "ReadVariableOp");
  SessionConfig opts = BuiltinSessionConfig();
  opts.devices.num_virtual_cpus = 2;
  auto values = [&](Session* sess) {
    absl::StatusOr<std::vector<Tensor>> out =
        sess->Run({}, std::vector<std::string>{"r_value", "steps_value"}, {});
    EXPECT_TRUE(out.ok()) << out.status();
    if (!out.ok()) return std::vector<double>{};
    return std::vector<double>{(*out)[0].flat<float>()[0], (*out)[0].flat<float>()[2],
                               static_cast<double>((*out)[1].scalar<int64_t>())};
  };
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(opts, *s.graph());
  ASSERT_TRUE(sess.ok()) << sess.status();
  for (const char* target : {"init", "bump"}) {
    absl::Status ran = (*sess)->Run({}, {}, {target}).status();
    ASSERT_TRUE(ran.ok()) << target << ": " << ran;
  }
  const std::string dir = TestDir("resource");
  absl::StatusOr<std::string> prefix = (*saver)->Save(sess->get(), dir, 1);
  ASSERT_TRUE(prefix.ok()) << prefix.status();
  ASSERT_TRUE((*sess)->Run({}, {}, {"bump"}).ok());
  EXPECT_EQ(values(sess->get()), (std::vector<double>{2.5, 2.125, 9}));
  ASSERT_TRUE((*saver)->Restore(sess->get(), *prefix).ok());
  EXPECT_EQ(values(sess->get()), (std::vector<double>{1.5, 1.125, 8}));

  absl::StatusOr<std::unique_ptr<Session>> fresh = NewSession(opts, *s.graph());
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  absl::Status restored = (*saver)->Restore(fresh->get(), *prefix);
  ASSERT_TRUE(restored.ok()) << restored;
  EXPECT_EQ(values(fresh->get()), (std::vector<double>{1.5, 1.125, 8}));

  // Stored as TensorFlow stores a resource variable: its value under its name.
  absl::StatusOr<std::unique_ptr<BundleReader>> bundle = BundleReader::Open(*prefix);
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  absl::StatusOr<Tensor> r_saved = (*bundle)->Read("r");
  ASSERT_TRUE(r_saved.ok()) << r_saved.status();
  EXPECT_EQ(r_saved->dtype(), DT_FLOAT);
  EXPECT_EQ(r_saved->shape(), TensorShape({3}));
  EXPECT_EQ(r_saved->flat<float>()[1], 1.25f);
}

// A checkpoint in Sluice's older layout ("<prefix>.shard-<k>-of-<n>", in
// its own file format) restores through the same graph.
TEST_F(SaverTest, RestoresTheOlderLayout) {
  MakeSaver();
  std::unique_ptr<Session> sess = NewSess();
  ASSERT_TRUE(sess->Run({}, {}, {"init"}).ok());
  const std::string dir = TestDir("older");
  ASSERT_TRUE(CreateDirectories(dir).ok());
  const std::string prefix = dir + "/model.ckpt-9";
  ASSERT_TRUE(internal::WriteCheckpointShard(
                  prefix + ".shard-0-of-2",
                  {{"count", Tensor::Scalar<int64_t>(40)},
                   {"w1", Tensor::FromVector<float>({5, 6, 7, 8}, TensorShape({2, 2}))}})
                  .ok());
  ASSERT_TRUE(internal::WriteCheckpointShard(prefix + ".shard-1-of-2",
                                             {{"w2", Tensor::FromVector<float>({9, 9, 9})}})
                  .ok());
  absl::Status st = saver_->Restore(sess.get(), prefix);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(Values(sess.get()), (std::vector<double>{5, 40, 9}));
}

// The "_temp" directory of a save that died long ago is removed by the next
// save; a young one (a save at work) stays.
TEST_F(SaverTest, OrphanedTempDirectoriesAreRemoved) {
  MakeSaver();
  std::unique_ptr<Session> sess = NewSess();
  ASSERT_TRUE(sess->Run({}, {}, {"init"}).ok());
  const std::string dir = TestDir("orphans");
  for (const char* name : {"/model.ckpt-1_temp", "/model.ckpt-2_temp"}) {
    ASSERT_TRUE(CreateDirectories(dir + name).ok());
    ASSERT_TRUE(WriteFileAtomically(dir + name + "/part-00000-of-00002.index", "x").ok());
  }
  const std::string old = dir + "/model.ckpt-1_temp";
  struct timeval times[2] = {{1000000000, 0}, {1000000000, 0}};
  ASSERT_EQ(utimes(old.c_str(), times), 0);
  ASSERT_TRUE(saver_->Save(sess.get(), dir, 3).ok());
  EXPECT_FALSE(Exists(old));
  EXPECT_TRUE(Exists(dir + "/model.ckpt-2_temp"));
}

}  // namespace
}  // namespace sluice
