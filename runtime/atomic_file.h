// Files that appear whole or not at all: AtomicFileWriter streams into a
// temporary file beside the target, then fsyncs it, renames it over the
// target and fsyncs the directory, so a crash at any point leaves either the
// previous file or the new one, never a mix. Plus the two small file helpers
// the checkpoint code needs (read a whole file, create directories).
//
//   ASSIGN_OR_RETURN(std::unique_ptr<AtomicFileWriter> w,
//                    AtomicFileWriter::Create("/ckpt/model.ckpt-10.shard-0-of-2"));
//   RETURN_IF_ERROR(w->Append(header));
//   RETURN_IF_ERROR(w->Append(data));
//   RETURN_IF_ERROR(w->Commit());      // fsync, rename, fsync the directory
//   // or, for a small file:  RETURN_IF_ERROR(WriteFileAtomically(path, contents));
//
// Files are created 0600 (owner only: checkpoints hold the model). The
// temporary file is "<path>.tmp-<random hex>"; a writer destroyed
// without Commit (an error, an early return) removes it. A process that dies
// before Commit leaves it behind: whoever owns the directory may delete
// "*.tmp-*" files (RemoveOrphanedTempFiles; the Saver does for its own
// checkpoints).
//
// Errors name the file and the failing system call with errno's text:
// NotFound / PermissionDenied / ResourceExhausted (disk full) as errno says,
// else Internal.
//
// Crash testing: SetAtomicFileCrashHookForTesting installs a process-wide
// function called at each stage ("appended" after every Append, "synced"
// before the rename, "renamed" before the directory fsync) with the target
// path; a test hook may _exit() there to simulate a crash at that point.
//
// Crash testing across processes (TEST ONLY): when the environment variable
// SLUICE_TEST_CRASH_IN_ATOMIC_WRITE=<n> is set (n >= 1), the n-th
// AtomicFileWriter this process creates writes the first half of its first
// Append to the temporary file and then calls _exit(86), leaving a partial
// temporary file and the target untouched. Multi-process tests use it to
// kill a parameter server in the middle of a checkpoint write.
//
// Thread-safety: a writer is used from one thread; different writers are
// independent. The hook is set before the writers run.
#ifndef SLUICE_RUNTIME_ATOMIC_FILE_H_
#define SLUICE_RUNTIME_ATOMIC_FILE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace sluice {

class AtomicFileWriter {
 public:
  // Opens the temporary file (the directory must exist).
  static absl::StatusOr<std::unique_ptr<AtomicFileWriter>> Create(const std::string& path);
  ~AtomicFileWriter();  // removes the temporary file unless committed
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  absl::Status Append(absl::string_view data);
  // Makes the file durable under its final name. The writer is done after
  // it, whatever it returns.
  absl::Status Commit();

  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_path_; }
  uint64_t bytes_written() const { return bytes_; }

 private:
  AtomicFileWriter(std::string path, std::string temp_path, int fd);

  std::string path_;
  std::string temp_path_;
  int fd_;
  uint64_t bytes_ = 0;
  uint64_t written_back_ = 0;  // bytes whose writeback has been started
  bool done_ = false;
  bool crash_in_append_ = false;  // SLUICE_TEST_CRASH_IN_ATOMIC_WRITE
};

// The whole file in one call.
absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents);

// The bytes of a regular file, as long as it was when opened. NotFound when
// it does not exist; FailedPrecondition for anything but a regular file (a
// device such as /dev/zero has no end, a FIFO may never answer);
// ResourceExhausted when it holds more than max_bytes (< 0: no bound).
absl::StatusOr<std::string> ReadFileToString(const std::string& path, int64_t max_bytes = -1);

// mkdir -p. OK when the directory already exists.
absl::Status CreateDirectories(const std::string& dir);

// Removes the temporary files ("<path>.tmp-<hex>") in `dir` last modified
// more than `older_than` ago: what writers that died before Commit left.
// Younger ones may belong to a writer still at work and stay. Returns how
// many were removed; NotFound when `dir` does not exist.
absl::StatusOr<int> RemoveOrphanedTempFiles(const std::string& dir, absl::Duration older_than);

using AtomicFileCrashHook = void (*)(absl::string_view stage, absl::string_view path);
// nullptr removes the hook.
void SetAtomicFileCrashHookForTesting(AtomicFileCrashHook hook);

}  // namespace sluice

#endif  // SLUICE_RUNTIME_ATOMIC_FILE_H_
