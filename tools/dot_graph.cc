// Graphviz through its C libraries. See dot_graph.h.
#include "tools/dot_graph.h"

#include <graphviz/gvc.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"

namespace sluice {
namespace {

// Graphviz keeps global state (error handler, plugin tables): one lock.
absl::Mutex& GraphvizMutex() {
  static absl::Mutex* mu = new absl::Mutex;
  return *mu;
}

// Where Graphviz's messages go while a call runs; null outside one.
std::string* graphviz_messages = nullptr;

int CollectMessage(char* message) {
  if (graphviz_messages != nullptr) absl::StrAppend(graphviz_messages, message);
  return 0;
}

// Routes Graphviz's messages into `sink` for one scope (the lock held).
class MessageCapture {
 public:
  explicit MessageCapture(std::string* sink) {
    graphviz_messages = sink;
    agseterrf(CollectMessage);
  }
  ~MessageCapture() {
    agseterrf(nullptr);
    graphviz_messages = nullptr;
  }
};

// One context for the process: loading the plugin list is not free.
GVC_t* Context() {
  static GVC_t* gvc = gvContext();
  return gvc;
}

char* C(const std::string& s) { return const_cast<char*>(s.c_str()); }

std::string OneLine(absl::string_view text) {
  return absl::StrReplaceAll(absl::StripTrailingAsciiWhitespace(text), {{"\n", "; "}});
}

}  // namespace

DotGraph::DotGraph(absl::string_view name) {
  absl::MutexLock lock(&GraphvizMutex());
  root_ = agopen(C(std::string(name)), Agdirected, nullptr);
}

DotGraph::~DotGraph() {
  absl::MutexLock lock(&GraphvizMutex());
  agclose(root_);
}

DotGraph::Graph* DotGraph::AddSubgraph(Graph* parent, absl::string_view name) {
  absl::MutexLock lock(&GraphvizMutex());
  return agsubg(parent, C(std::string(name)), 1);
}

DotGraph::Node* DotGraph::AddNode(Graph* parent, absl::string_view name) {
  absl::MutexLock lock(&GraphvizMutex());
  return agnode(parent, C(std::string(name)), 1);
}

DotGraph::Edge* DotGraph::AddEdge(Node* from, Node* to) {
  absl::MutexLock lock(&GraphvizMutex());
  return agedge(root_, from, to, nullptr, 1);
}

void DotGraph::SetAttr(void* object, absl::string_view key, absl::string_view value) {
  absl::MutexLock lock(&GraphvizMutex());
  std::string k(key), v(value), empty;
  agsafeset(object, C(k), C(v), C(empty));
}

void DotGraph::Set(Graph* g, absl::string_view key, absl::string_view value) {
  SetAttr(g, key, value);
}

void DotGraph::Set(Node* n, absl::string_view key, absl::string_view value) {
  SetAttr(n, key, value);
}

void DotGraph::Set(Edge* e, absl::string_view key, absl::string_view value) {
  SetAttr(e, key, value);
}

void DotGraph::SetHtml(Node* n, absl::string_view key, absl::string_view html) {
  absl::MutexLock lock(&GraphvizMutex());
  std::string k(key), h(html), empty;
  char* value = agstrdup_html(root_, C(h));
  agsafeset(n, C(k), value, C(empty));
  agstrfree(root_, value);
}

void DotGraph::SetNodeDefault(absl::string_view key, absl::string_view value) {
  absl::MutexLock lock(&GraphvizMutex());
  std::string k(key), v(value);
  agattr(root_, AGNODE, C(k), C(v));
}

void DotGraph::SetEdgeDefault(absl::string_view key, absl::string_view value) {
  absl::MutexLock lock(&GraphvizMutex());
  std::string k(key), v(value);
  agattr(root_, AGEDGE, C(k), C(v));
}

std::string DotGraph::ToSource() const {
  absl::MutexLock lock(&GraphvizMutex());
  char* buffer = nullptr;
  size_t size = 0;
  FILE* stream = open_memstream(&buffer, &size);
  if (stream == nullptr) return "";
  agwrite(root_, stream);
  std::fclose(stream);
  std::string source(buffer, size);
  std::free(buffer);
  return source;
}

absl::StatusOr<std::string> DotGraph::Render(absl::string_view format) {
  absl::MutexLock lock(&GraphvizMutex());
  std::string messages;
  MessageCapture capture(&messages);
  GVC_t* gvc = Context();
  if (gvc == nullptr) return absl::InternalError("graphviz: cannot create a gvc context");
  if (gvLayout(gvc, root_, "dot") != 0) {
    return absl::InternalError(absl::StrCat(
        "graphviz cannot lay the graph out with 'dot' (is libgvplugin_dot_layout installed and "
        "registered in Graphviz's plugin config?): ",
        OneLine(messages)));
  }
  std::string f(format);
  char* data = nullptr;
  unsigned int length = 0;
  int rc = gvRenderData(gvc, root_, f.c_str(), &data, &length);
  std::string out;
  if (rc == 0 && data != nullptr) out.assign(data, length);
  if (data != nullptr) gvFreeRenderData(data);
  gvFreeLayout(gvc, root_);
  if (rc != 0 || out.empty()) {
    return absl::InternalError(absl::StrCat("graphviz cannot render ", f,
                                            " (is its plugin installed?): ", OneLine(messages)));
  }
  return out;
}

}  // namespace sluice
