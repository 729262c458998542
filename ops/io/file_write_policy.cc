#include "ops/io/file_write_policy.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "absl/base/thread_annotations.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"

namespace sluice {
namespace {

struct Policy {
  absl::Mutex mu;
  bool restricted ABSL_GUARDED_BY(mu) = false;
  std::vector<std::string> roots ABSL_GUARDED_BY(mu);  // canonical, no trailing '/'
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

}  // namespace

absl::Status RestrictGraphFileWrites(const std::vector<std::string>& roots) {
  std::vector<std::string> canonical;
  for (const std::string& root : roots) {
    if (root.empty() || root[0] != '/') {
      return absl::InvalidArgumentError(
          absl::StrCat("file write root '", root, "' must be an absolute path"));
    }
    {
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
          absl::StrCat("file write root '", root, "' cannot be resolved: ", why));
    }
    canonical.push_back(std::move(c));
  }
  Policy& p = ThePolicy();
  absl::MutexLock lock(&p.mu);
  p.restricted = true;
  for (std::string& c : canonical) p.roots.push_back(std::move(c));
  return absl::OkStatus();
}

absl::Status CheckGraphFileWrite(const std::string& path) {
  Policy& p = ThePolicy();
  std::vector<std::string> roots;
  {
    absl::MutexLock lock(&p.mu);
    if (!p.restricted) return absl::OkStatus();
    roots = p.roots;
  }
  std::string why;
  const std::string c = Canonical(path, &why);
  if (!c.empty()) {
    for (const std::string& root : roots) {
      if (Under(c, root)) return absl::OkStatus();
    }
    why = absl::StrCat("it resolves to ", c);
  }
  return absl::PermissionDeniedError(absl::StrCat(
      "graphs may write files only under [", absl::StrJoin(roots, ", "), "] in this process; '",
      path, "' is not (", why, ")"));
}

}  // namespace sluice
