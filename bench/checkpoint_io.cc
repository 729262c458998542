// Saving and restoring a large checkpoint against `dd` of the same bytes on
// the same disk: the Saver's sharded TensorFlow V2 checkpoint (one SaveV2
// per device, in parallel, then the merge) against `dd ... conv=fsync` (the
// Saver fsyncs every file), and a restore with the page cache dropped (when
// this process may drop it: root) against `dd` reading the file back cold.
//
//   bazel run -c opt //bench:checkpoint_io -- --gib=1 --shards=4 --reps=3 --dir=/var/tmp/ckpt_bench
//
// Prints, per figure, the median of --reps runs:
//   checkpoint_save_<G>GiB_<S>shards: X GB/s   dd_write: Y GB/s   ratio
//   checkpoint_restore_...: X GB/s             dd_read: Y GB/s    ratio
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "bench/bench_util.h"
#include "builtin_session.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/state/state_ops.h"
#include "runtime/session.h"
#include "session/direct_session.h"
#include "training/checkpoint/saver.h"

ABSL_FLAG(double, gib, 1.0, "checkpoint size in GiB");
ABSL_FLAG(int, shards, 4, "devices holding variables (one SaveV2 each)");
ABSL_FLAG(int, reps, 3, "runs per figure (the median is printed)");
ABSL_FLAG(std::string, dir, "/var/tmp/sluice_checkpoint_bench", "a directory on the disk measured");

namespace sluice {
namespace {

std::string Cpu(int id) { return absl::StrCat("/job:localhost/replica:0/task:0/device:CPU:", id); }

// Drops the page cache (root only); false when not allowed.
bool DropCaches() {
  ::sync();
  int fd = ::open("/proc/sys/vm/drop_caches", O_WRONLY);
  if (fd < 0) return false;
  const bool ok = ::write(fd, "3", 1) == 1;
  ::close(fd);
  return ok;
}

// Seconds `command` takes under the shell; -1 when it fails.
double TimeShell(const std::string& command) {
  auto t0 = std::chrono::steady_clock::now();
  const int rc = std::system(command.c_str());
  auto t1 = std::chrono::steady_clock::now();
  return rc == 0 ? std::chrono::duration<double>(t1 - t0).count() : -1;
}

absl::Status Run() {
  const int shards = absl::GetFlag(FLAGS_shards);
  const int reps = absl::GetFlag(FLAGS_reps);
  const std::string dir = absl::GetFlag(FLAGS_dir);
  constexpr int64_t kCols = 1024;
  const int64_t total_floats = static_cast<int64_t>(absl::GetFlag(FLAGS_gib) * (1 << 28));
  const int64_t rows = total_floats / kCols / shards;
  const double bytes = static_cast<double>(rows * kCols * shards) * 4;
  if (shards < 1 || rows < 1 || reps < 1) return absl::InvalidArgumentError("bad flags");

  Scope s = Scope::NewRootScope(BuiltinOps());
  for (int k = 0; k < shards; ++k) {
    Scope d = s.WithDevice(Cpu(k));
    ops::VariableWithInit(
        d.WithOpName(absl::StrCat("layer_", k, "/kernel")),
        ops::Fill(d, ops::Const(d, std::vector<int64_t>{rows, kCols}), ops::Const(d, 0.5f + k)));
  }
  Node* init = ops::GlobalVariablesInitializer(s);
  ASSIGN_OR_RETURN(std::unique_ptr<Saver> saver, Saver::Build(s, {}, {.max_to_keep = 1}));
  RETURN_IF_ERROR(s.status());
  SessionConfig config = BuiltinSessionConfig();
  config.devices.num_virtual_cpus = shards - 1;
  ASSIGN_OR_RETURN(std::unique_ptr<Session> sess, NewSession(config, *s.graph()));
  RETURN_IF_ERROR(sess->Run({}, {}, {init}).status());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);

  const bool cold = DropCaches();
  std::vector<double> save_s, restore_s, dd_write_s, dd_read_s;
  std::string prefix;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    ASSIGN_OR_RETURN(prefix, saver->Save(sess.get(), dir, r));
    auto t1 = std::chrono::steady_clock::now();
    save_s.push_back(std::chrono::duration<double>(t1 - t0).count());
    DropCaches();
    t0 = std::chrono::steady_clock::now();
    RETURN_IF_ERROR(saver->Restore(sess.get(), prefix));
    t1 = std::chrono::steady_clock::now();
    restore_s.push_back(std::chrono::duration<double>(t1 - t0).count());

    const std::string file = dir + "/dd.bin";
    const int64_t mib = static_cast<int64_t>(bytes) >> 20;
    dd_write_s.push_back(TimeShell(absl::StrCat("dd if=/dev/zero of=", file, " bs=1M count=", mib,
                                                " conv=fsync status=none")));
    DropCaches();
    dd_read_s.push_back(TimeShell(absl::StrCat("dd if=", file, " of=/dev/null bs=1M status=none")));
    std::filesystem::remove(file);
  }
  const std::string tag = absl::StrCat(absl::GetFlag(FLAGS_gib), "GiB_", shards, "shards");
  const double gb = bytes / 1e9;
  const double save = gb / bench::Median(save_s), dd_w = gb / bench::Median(dd_write_s);
  const double restore = gb / bench::Median(restore_s), dd_r = gb / bench::Median(dd_read_s);
  std::printf("checkpoint_bytes: %.0f bytes\n", bytes);
  std::printf("checkpoint_cache_dropped: %d\n", cold ? 1 : 0);
  std::printf("checkpoint_save_%s: %.3f GB/s\n", tag.c_str(), save);
  std::printf("dd_write_fsync_%s: %.3f GB/s\n", tag.c_str(), dd_w);
  std::printf("checkpoint_save_vs_dd: %.2f (target >= 0.8)\n", save / dd_w);
  std::printf("checkpoint_restore_%s: %.3f GB/s\n", tag.c_str(), restore);
  std::printf("dd_read_%s: %.3f GB/s\n", tag.c_str(), dd_r);
  std::printf("checkpoint_restore_vs_dd: %.2f (target >= 0.8)\n", restore / dd_r);
  std::filesystem::remove_all(dir);
  return absl::OkStatus();
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  return sluice::bench::BenchMain(argc, argv, "checkpoint_io", sluice::Run);
}
