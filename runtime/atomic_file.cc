#include "runtime/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"

namespace sluice {
namespace {

std::atomic<AtomicFileCrashHook> crash_hook{nullptr};

// SLUICE_TEST_CRASH_IN_ATOMIC_WRITE (see the header): the ordinal of the
// writer that crashes, 0 when unset.
int64_t CrashOrdinalFromEnv() {
  static const int64_t ordinal = [] {
    const char* v = std::getenv("SLUICE_TEST_CRASH_IN_ATOMIC_WRITE");
    return v == nullptr ? int64_t{0} : std::max<int64_t>(0, std::atoll(v));
  }();
  return ordinal;
}
std::atomic<int64_t> writers_created{0};

void Stage(absl::string_view stage, absl::string_view path) {
  if (AtomicFileCrashHook hook = crash_hook.load(std::memory_order_acquire)) hook(stage, path);
}

absl::Status ErrnoStatus(int err, absl::string_view what, absl::string_view path) {
  std::string message = absl::StrCat(what, " '", path, "': ", std::strerror(err));
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return absl::NotFoundError(message);
    case EACCES:
    case EPERM:
    case EROFS:
      return absl::PermissionDeniedError(message);
    case ENOSPC:
    case EDQUOT:
    case EFBIG:  // past the file size the process may write (RLIMIT_FSIZE)
      return absl::ResourceExhaustedError(message);
    case EEXIST:
      return absl::AlreadyExistsError(message);
    default:
      return absl::InternalError(message);
  }
}

std::string DirectoryOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string RandomSuffix() {
  static std::atomic<uint64_t> counter{0};
  std::random_device rd;
  uint64_t r = (static_cast<uint64_t>(rd()) << 32) ^ rd() ^
               (static_cast<uint64_t>(getpid()) << 16) ^ counter.fetch_add(1);
  return absl::StrFormat("%016x", r);
}

absl::Status SyncDirectory(const std::string& dir) {
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "opening directory", dir);
  absl::Status s;
  if (fsync(fd) != 0) s = ErrnoStatus(errno, "fsync of directory", dir);
  close(fd);
  return s;
}

}  // namespace

AtomicFileWriter::AtomicFileWriter(std::string path, std::string temp_path, int fd)
    : path_(std::move(path)), temp_path_(std::move(temp_path)), fd_(fd) {}

absl::StatusOr<std::unique_ptr<AtomicFileWriter>> AtomicFileWriter::Create(
    const std::string& path) {
  std::string temp = absl::StrCat(path, ".tmp-", RandomSuffix());
  int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return ErrnoStatus(errno, "creating", temp);
  auto writer = std::unique_ptr<AtomicFileWriter>(new AtomicFileWriter(path, std::move(temp), fd));
  const int64_t crash_at = CrashOrdinalFromEnv();
  writer->crash_in_append_ = crash_at > 0 && writers_created.fetch_add(1) + 1 == crash_at;
  return writer;
}

AtomicFileWriter::~AtomicFileWriter() {
  if (done_) return;
  close(fd_);
  unlink(temp_path_.c_str());
}

absl::Status AtomicFileWriter::Append(absl::string_view data) {
  if (done_) return absl::FailedPreconditionError(absl::StrCat("'", path_, "' already committed"));
  if (crash_in_append_) {
    // The test failpoint: half of the data reaches the file, then the process dies.
    (void)!write(fd_, data.data(), data.size() / 2);
    _exit(86);
  }
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "writing", temp_path_);
    }
    p += n;
    left -= static_cast<size_t>(n);
    bytes_ += static_cast<uint64_t>(n);
  }
  // Large files: start writing back what is appended every few tens of MiB
  // (without waiting), so the disk works while the rest is copied and the
  // fsync in Commit has little left to do.
  constexpr uint64_t kWritebackEvery = uint64_t{32} << 20;
  if (bytes_ - written_back_ >= kWritebackEvery) {
    (void)sync_file_range(fd_, static_cast<off_t>(written_back_),
                          static_cast<off_t>(bytes_ - written_back_), SYNC_FILE_RANGE_WRITE);
    written_back_ = bytes_;
  }
  Stage("appended", path_);
  return absl::OkStatus();
}

absl::Status AtomicFileWriter::Commit() {
  if (done_) return absl::FailedPreconditionError(absl::StrCat("'", path_, "' already committed"));
  absl::Status s;
  if (fsync(fd_) != 0) s = ErrnoStatus(errno, "fsync of", temp_path_);
  if (close(fd_) != 0 && s.ok()) s = ErrnoStatus(errno, "closing", temp_path_);
  done_ = true;
  if (!s.ok()) {
    unlink(temp_path_.c_str());
    return s;
  }
  Stage("synced", path_);
  if (rename(temp_path_.c_str(), path_.c_str()) != 0) {
    s = ErrnoStatus(errno, absl::StrCat("renaming '", temp_path_, "' over"), path_);
    unlink(temp_path_.c_str());
    return s;
  }
  Stage("renamed", path_);
  return SyncDirectory(DirectoryOf(path_));
}

absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents) {
  auto writer = AtomicFileWriter::Create(path);
  if (!writer.ok()) return writer.status();
  absl::Status s = (*writer)->Append(contents);
  if (!s.ok()) return s;
  return (*writer)->Commit();
}

absl::StatusOr<std::string> ReadFileToString(const std::string& path, int64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO does not wait for a writer (it is refused
  // below); regular files ignore it.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return ErrnoStatus(errno, "opening", path);
  struct stat st;
  if (fstat(fd, &st) != 0) {
    absl::Status s = ErrnoStatus(errno, "reading", path);
    close(fd);
    return s;
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return absl::FailedPreconditionError(
        absl::StrCat("reading '", path, "': not a regular file (a device, FIFO or directory)"));
  }
  if (max_bytes >= 0 && st.st_size > max_bytes) {
    close(fd);
    return absl::ResourceExhaustedError(absl::StrCat(
        "reading '", path, "': ", st.st_size, " bytes, more than the ", max_bytes, " allowed"));
  }
  // The size fstat saw, no more: a file growing meanwhile is read as it was.
  const size_t size = static_cast<size_t>(st.st_size);
  std::string out(size, '\0');
  size_t done = 0;
  while (done < size) {
    ssize_t n = read(fd, out.data() + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      absl::Status s = ErrnoStatus(errno, "reading", path);
      close(fd);
      return s;
    }
    if (n == 0) break;  // shrank meanwhile
    done += static_cast<size_t>(n);
  }
  close(fd);
  out.resize(done);
  return out;
}

absl::Status CreateDirectories(const std::string& dir) {
  if (dir.empty()) return absl::OkStatus();
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    size_t next = dir.find('/', pos + 1);
    partial = dir.substr(0, next);
    pos = next;
    if (partial.empty() || partial == "/") continue;
    if (mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) {
      return ErrnoStatus(errno, "creating directory", partial);
    }
  }
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) return ErrnoStatus(errno, "creating directory", dir);
  if (!S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat("'", dir, "' exists and is not a directory"));
  }
  return absl::OkStatus();
}

void SetAtomicFileCrashHookForTesting(AtomicFileCrashHook hook) {
  crash_hook.store(hook, std::memory_order_release);
}

absl::StatusOr<int> RemoveOrphanedTempFiles(const std::string& dir, absl::Duration older_than) {
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) {
    return absl::NotFoundError(absl::StrCat("cannot list ", dir, ": ", ec.message()));
  }
  const absl::Time cutoff = absl::Now() - older_than;
  int removed = 0;
  for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    const std::string name = it->path().filename().string();
    if (!absl::StrContains(name, ".tmp-") || !it->is_regular_file(ec)) continue;
    struct stat st;
    if (stat(it->path().c_str(), &st) != 0) continue;
    if (absl::FromTimeT(st.st_mtime) > cutoff) continue;
    if (std::filesystem::remove(it->path(), ec)) ++removed;
  }
  return removed;
}

}  // namespace sluice
