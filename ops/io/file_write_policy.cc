#include "ops/io/file_write_policy.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/base/thread_annotations.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"

namespace sluice {
namespace {

struct Policy {
  absl::Mutex mu;
  bool restricted ABSL_GUARDED_BY(mu) = false;
  std::vector<std::string> roots ABSL_GUARDED_BY(mu);  // canonical, no trailing '/'
  std::vector<std::string> read_roots ABSL_GUARDED_BY(mu);
};

Policy& ThePolicy() {
  static Policy* policy = new Policy();  // never destroyed
  return *policy;
}

// The canonical form of `path`: realpath() of its longest existing prefix,
// then the remaining components as written (none of them "..", which could
// climb out once the directories exist). Empty on failure (`why` says).
std::string Canonical(const std::string& path, std::string* why) {
  if (path.empty()) {
    *why = "an empty path";
    return "";
  }
  std::string absolute = path;
  if (path[0] != '/') {
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof(cwd)) == nullptr) {
      *why = absl::StrCat("getcwd: ", std::strerror(errno));
      return "";
    }
    absolute = absl::StrCat(cwd, "/", path);
  }
  std::vector<std::string> parts = absl::StrSplit(absolute, '/', absl::SkipEmpty());
  // Longest existing prefix.
  for (size_t keep = parts.size() + 1; keep-- > 0;) {
    const std::string prefix = absl::StrCat("/", absl::StrJoin(parts.begin(), parts.begin() + keep, "/"));
    char resolved[PATH_MAX];
    if (realpath(prefix.c_str(), resolved) == nullptr) continue;
    std::string out = resolved;
    for (size_t i = keep; i < parts.size(); ++i) {
      if (parts[i] == "..") {
        *why = absl::StrCat("'..' below the existing directory ", prefix);
        return "";
      }
      if (parts[i] == ".") continue;
      if (out != "/") out += "/";
      out += parts[i];
    }
    return out;
  }
  *why = "no part of it exists";
  return "";
}

bool Under(const std::string& path, const std::string& root) {
  if (root == "/") return true;
  return path == root || absl::StartsWith(path, absl::StrCat(root, "/"));
}

// A root another user owns, or may write, could hold their links.
absl::Status CheckRootOwner(const std::string& root, const std::string& canonical) {
  struct stat st;
  if (stat(canonical.c_str(), &st) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("file root '", root, "': ", std::strerror(errno)));
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat("file root '", root, "' is not a directory"));
  }
  if (st.st_uid != geteuid()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "file root '", root, "' belongs to uid ", st.st_uid, ", not to this user (uid ", geteuid(),
        "): its owner could redirect this task's files; remove it or choose another directory"));
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "file root '", root, "' may be written by other users (mode ",
        absl::Hex(st.st_mode & 07777), "); make it 0700 or 0755"));
  }
  return absl::OkStatus();
}

// The canonical forms of `roots`; `create` makes missing ones (0700).
absl::StatusOr<std::vector<std::string>> CanonicalRoots(const std::vector<std::string>& roots,
                                                        bool create) {
  std::vector<std::string> canonical;
  for (const std::string& root : roots) {
    if (root.empty() || root[0] != '/') {
      return absl::InvalidArgumentError(
          absl::StrCat("file root '", root, "' must be an absolute path"));
    }
    if (create) {
      // Create it (and its parents) so that its canonical form is known.
      std::string partial;
      for (absl::string_view part : absl::StrSplit(root, '/', absl::SkipEmpty())) {
        absl::StrAppend(&partial, "/", part);
        if (mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST) break;
      }
    }
    std::string why;
    std::string c = Canonical(root, &why);
    if (c.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("file root '", root, "' cannot be resolved: ", why));
    }
    RETURN_IF_ERROR(CheckRootOwner(root, c));
    canonical.push_back(std::move(c));
  }
  return canonical;
}

// OK when `path` is under one of `roots`.
absl::Status CheckUnder(const char* what, const std::string& path,
                        const std::vector<std::string>& roots) {
  std::string why;
  const std::string c = Canonical(path, &why);
  if (!c.empty()) {
    for (const std::string& root : roots) {
      if (Under(c, root)) return absl::OkStatus();
    }
    why = absl::StrCat("it resolves to ", c);
  }
  return absl::PermissionDeniedError(absl::StrCat("graphs may ", what, " files only under [",
                                                  absl::StrJoin(roots, ", "),
                                                  "] in this process; '", path, "' is not (",
                                                  why, ")"));
}

// OK when unrestricted or `path` is under a write root (or, when
// `reading`, a read root).
absl::Status Check(const std::string& path, bool reading) {
  Policy& p = ThePolicy();
  std::vector<std::string> roots;
  {
    absl::MutexLock lock(&p.mu);
    if (!p.restricted) return absl::OkStatus();
    roots = p.roots;
    if (reading) roots.insert(roots.end(), p.read_roots.begin(), p.read_roots.end());
  }
  return CheckUnder(reading ? "read" : "write", path, roots);
}

}  // namespace

absl::Status RestrictGraphFileWrites(const std::vector<std::string>& roots) {
  ASSIGN_OR_RETURN(std::vector<std::string> canonical, CanonicalRoots(roots, /*create=*/true));
  Policy& p = ThePolicy();
  absl::MutexLock lock(&p.mu);
  p.restricted = true;
  for (std::string& c : canonical) p.roots.push_back(std::move(c));
  return absl::OkStatus();
}

absl::Status AllowGraphFileReads(const std::vector<std::string>& roots) {
  ASSIGN_OR_RETURN(std::vector<std::string> canonical, CanonicalRoots(roots, /*create=*/false));
  Policy& p = ThePolicy();
  absl::MutexLock lock(&p.mu);
  for (std::string& c : canonical) p.read_roots.push_back(std::move(c));
  return absl::OkStatus();
}

absl::Status CheckGraphFileWrite(const std::string& path) { return Check(path, /*reading=*/false); }

absl::Status CheckGraphFileRead(const std::string& path) { return Check(path, /*reading=*/true); }

std::string PrivateRoot(const std::string& base) {
  struct stat st;
  if (lstat(base.c_str(), &st) != 0 || st.st_uid == geteuid()) return base;
  return absl::StrCat(base, "-", geteuid());
}

}  // namespace sluice
