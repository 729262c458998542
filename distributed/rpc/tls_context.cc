#include "distributed/rpc/tls_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <signal.h>
#include <sys/stat.h>

#include <cstdio>
#include <utility>

#include <thrift/TOutput.h>

#include <thrift/transport/TSSLSocket.h>
#include <thrift/transport/TTransportException.h>

#include "absl/base/call_once.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"

namespace sluice {

using apache::thrift::transport::AccessManager;
using apache::thrift::transport::SSLContext;
using apache::thrift::transport::SSLTLS;
using apache::thrift::transport::TSSLException;
using apache::thrift::transport::TSSLSocket;
using apache::thrift::transport::TSSLSocketFactory;
using apache::thrift::transport::TTransportException;

std::string CredentialStem(const std::string& identity) {
  // "/job:J/replica:R/task:T" -> "J-T".
  std::string job, task;
  for (absl::string_view part : absl::StrSplit(identity, '/', absl::SkipEmpty())) {
    if (absl::ConsumePrefix(&part, "job:")) job = std::string(part);
    if (absl::ConsumePrefix(&part, "task:")) task = std::string(part);
  }
  int index;
  std::string stem = !job.empty() && absl::SimpleAtoi(task, &index) && index >= 0
                         ? absl::StrCat(job, "-", index)
                         : identity;
  for (char& c : stem) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_';
    if (!ok) c = '_';
  }
  return stem;
}

// Called by TSSLSocket::authorize after OpenSSL verified the chain: the
// certificate carries no subjectAltName, so each common name is offered
// here. Records the peer's name; a client also requires the one it expects.
class TlsPeerCheck : public AccessManager {
 public:
  explicit TlsPeerCheck(std::string expected) : expected_(std::move(expected)) {}

  Decision verify(const sockaddr_storage&) noexcept override { return SKIP; }
  Decision verify(const sockaddr_storage&, const char*, int) noexcept override { return SKIP; }
  Decision verify(const std::string&, const char* name, int size) noexcept override {
    if (name == nullptr || size <= 0) return DENY;
    std::string got(name, static_cast<size_t>(size));
    absl::MutexLock lock(&mu_);
    if (!expected_.empty() && got != expected_) {
      refused_ = got;
      return DENY;
    }
    peer_ = std::move(got);
    return ALLOW;
  }

  std::string peer() const {
    absl::MutexLock lock(&mu_);
    return peer_;
  }
  std::string refused() const {
    absl::MutexLock lock(&mu_);
    return refused_;
  }
  const std::string& expected() const { return expected_; }

 private:
  const std::string expected_;
  mutable absl::Mutex mu_;
  std::string peer_ ABSL_GUARDED_BY(mu_);
  std::string refused_ ABSL_GUARDED_BY(mu_);
};

absl::StatusOr<std::string> TlsSocket::Handshake() {
  try {
    // A write of nothing runs SSL_accept / SSL_connect and the identity
    // check when not done yet, and sends nothing else (TSSLSocket has no
    // public handshake call).
    uint8_t none = 0;
    socket->write(&none, 0);
  } catch (const TSSLException& e) {
    if (!check->refused().empty()) {
      return absl::UnauthenticatedError(absl::StrCat("the peer is '", check->refused(),
                                                     "', not '", check->expected(), "'"));
    }
    // SSL_ERROR_SYSCALL (5) and SSL_ERROR_ZERO_RETURN (6): the connection
    // broke (a peer that died or restarted), which callers treat as a peer
    // that is unavailable; the rest is the TLS protocol saying no.
    const absl::string_view what = e.what();
    if (absl::StrContains(what, "SSL_error_code = 5") ||
        absl::StrContains(what, "SSL_error_code = 6")) {
      return absl::UnavailableError(absl::StrCat("connection lost in the TLS handshake: ", what));
    }
    return absl::UnauthenticatedError(absl::StrCat("TLS handshake failed: ", what));
  } catch (const TTransportException& e) {
    if (e.getType() == TTransportException::TIMED_OUT) {
      return absl::DeadlineExceededError("TLS handshake timed out");
    }
    return absl::UnavailableError(absl::StrCat("TLS handshake failed: ", e.what()));
  }
  return check->peer();
}

std::string TlsSocket::peer() const { return check == nullptr ? "" : check->peer(); }

class TlsContext::Factory : public TSSLSocketFactory {
 public:
  explicit Factory(bool server) : TSSLSocketFactory(SSLTLS) {
    this->server(server);
    SSL_CTX* ctx = ctx_->get();
    SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
    // No session tickets: a client's pooled connection must have nothing
    // to read while idle (RpcChannel takes that as a closed connection).
    SSL_CTX_set_num_tickets(ctx, 0);
    // Close without waiting for the peer's close_notify (never blocks on a
    // vanished peer); frames carry their lengths, so a cut is always seen.
    SSL_CTX_set_quiet_shutdown(ctx, 1);
    SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
    // AES-128-GCM first: as safe for this use and the fastest with AES-NI.
    SSL_CTX_set_ciphersuites(
        ctx, "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256");
    // Both directions: a certificate of the job's CA, or no connection.
    authenticate(true);
    // Set once here, so that createSocket never changes the factory (each
    // socket then gets its own check).
    access(std::make_shared<TlsPeerCheck>(""));
  }

  const std::shared_ptr<SSLContext>& context() const { return ctx_; }
};

namespace {

// A TSSLSocket over an SSL whose handshake a TlsHandshake ran: OpenSSL
// verified the peer's chain then, and the identity was read from it, so
// authorize() has nothing left to check. TSSLSocket's constructors are for
// subclasses; this is the one way to give it an SSL it did not create.
class HandedOverTlsSocket : public TSSLSocket {
 public:
  HandedOverTlsSocket(std::shared_ptr<SSLContext> context, int fd, SSL* ssl)
      : TSSLSocket(std::move(context), fd) {
    server(true);
    ssl_ = ssl;
  }

 protected:
  void authorize() override {}
};

// The subject's common name of the peer's certificate ("" when none).
std::string PeerCommonName(SSL* ssl) {
  X509* cert = SSL_get1_peer_certificate(ssl);
  if (cert == nullptr) return "";
  std::string name;
  X509_NAME* subject = X509_get_subject_name(cert);
  const int index = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
  if (index >= 0) {
    ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, index));
    name.assign(reinterpret_cast<const char*>(ASN1_STRING_get0_data(data)),
                static_cast<size_t>(ASN1_STRING_length(data)));
  }
  X509_free(cert);
  return name;
}

// OpenSSL's queued reasons, "; "-joined (or `fallback` when none).
std::string OpenSslErrors(const char* fallback) {
  std::string out;
  char buf[256];
  while (unsigned long e = ERR_get_error()) {
    ERR_error_string_n(e, buf, sizeof(buf));
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? fallback : out;
}

}  // namespace

TlsHandshake::TlsHandshake(const TlsContext* context, int fd, void* ssl)
    : context_(context), fd_(fd), ssl_(ssl) {}

TlsHandshake::~TlsHandshake() {
  if (ssl_ != nullptr) SSL_free(static_cast<SSL*>(ssl_));
}

TlsHandshake::State TlsHandshake::Step() {
  if (!error_.ok()) return State::kFailed;
  SSL* ssl = static_cast<SSL*>(ssl_);
  ERR_clear_error();
  int rc;
  if (!authenticated_) {
    rc = SSL_accept(ssl);
    if (rc == 1) {
      peer_ = PeerCommonName(ssl);
      if (peer_.empty()) {
        error_ = absl::UnauthenticatedError("the peer's certificate names no task");
        return State::kFailed;
      }
      authenticated_ = true;
    }
  }
  if (authenticated_) {
    uint8_t byte;
    rc = SSL_peek(ssl, &byte, 1);
    if (rc > 0) return State::kReady;
  }
  const int err = SSL_get_error(ssl, rc);
  switch (err) {
    case SSL_ERROR_WANT_READ:
      return State::kWantRead;
    case SSL_ERROR_WANT_WRITE:
      return State::kWantWrite;
    case SSL_ERROR_ZERO_RETURN:
      error_ = absl::UnavailableError("the peer closed the connection");
      return State::kFailed;
    case SSL_ERROR_SYSCALL:
      if (ERR_peek_error() == 0) {
        error_ = absl::UnavailableError(
            authenticated_ ? "the peer closed the connection before its first request"
                           : "connection lost in the TLS handshake");
        return State::kFailed;
      }
      break;
    default:
      break;
  }
  error_ = absl::UnauthenticatedError(
      absl::StrCat("TLS handshake failed: ", OpenSslErrors("no reason given")));
  return State::kFailed;
}

TlsSocket TlsHandshake::Release() {
  TlsSocket s;
  auto socket = std::make_shared<HandedOverTlsSocket>(context_->server_->context(), fd_,
                                                      static_cast<SSL*>(ssl_));
  ssl_ = nullptr;
  s.check = std::make_shared<TlsPeerCheck>("");
  (void)s.check->verify(std::string(), peer_.data(), static_cast<int>(peer_.size()));
  s.socket = std::move(socket);
  s.socket->access(s.check);
  return s;
}

namespace {

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

}  // namespace

namespace {

// Thrift prints through one process-wide function; a handshake that failed
// (a refused peer, already reported by the server) also makes TSSLSocket's
// close print "SSL_shutdown: shutdown while in init". That line is dropped;
// the rest goes to stderr as before.
void ThriftOutput(const char* message) {
  if (absl::StrContains(message, "SSL_shutdown: shutdown while in init")) return;
  std::fprintf(stderr, "Thrift: %s\n", message);
}

// OpenSSL writes through its socket BIO with write(), not send(MSG_NOSIGNAL):
// a TLS write to a peer that died raises SIGPIPE, whose default kills the
// process (a worker of an elastic job, say, when another was killed). As
// gRPC does, a process that speaks TLS ignores SIGPIPE, so the write fails
// with EPIPE and the RPC with an error naming the peer. A handler the
// program installed itself is left alone.
void IgnoreSigpipeUnlessHandled() {
  struct sigaction current;
  if (sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
    signal(SIGPIPE, SIG_IGN);
  }
}

}  // namespace

absl::StatusOr<std::shared_ptr<const TlsContext>> TlsContext::Load(const std::string& dir,
                                                                   const std::string& identity) {
  static absl::once_flag output_once;
  absl::call_once(output_once, [] {
    apache::thrift::GlobalOutput.setOutputFunction(ThriftOutput);
    IgnoreSigpipeUnlessHandled();
  });
  const std::string ca = absl::StrCat(dir, "/ca.crt");
  const std::string stem = absl::StrCat(dir, "/", CredentialStem(identity));
  const std::string cert = stem + ".crt";
  const std::string key = stem + ".key";
  for (const std::string& f : {ca, cert, key}) {
    if (!Exists(f)) {
      return absl::NotFoundError(absl::StrCat("TLS credentials of '", identity, "': no file ", f));
    }
  }
  try {
    auto server = std::make_unique<Factory>(/*server=*/true);
    auto client = std::make_unique<Factory>(/*server=*/false);
    for (Factory* f : {server.get(), client.get()}) {
      f->loadTrustedCertificates(ca.c_str());
      f->loadCertificate(cert.c_str());
      f->loadPrivateKey(key.c_str());
    }
    return std::shared_ptr<const TlsContext>(
        new TlsContext(dir, identity, std::move(server), std::move(client)));
  } catch (const TTransportException& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("TLS credentials of '", identity, "' in ", dir, ": ", e.what()));
  }
}

TlsContext::TlsContext(std::string dir, std::string identity, std::unique_ptr<Factory> server,
                       std::unique_ptr<Factory> client)
    : dir_(std::move(dir)),
      identity_(std::move(identity)),
      server_(std::move(server)),
      client_(std::move(client)) {}

TlsContext::~TlsContext() = default;

TlsSocket TlsContext::Accept(int fd) const {
  TlsSocket s;
  s.socket = server_->createSocket(fd);
  s.check = std::make_shared<TlsPeerCheck>("");
  s.socket->access(s.check);
  return s;
}

std::unique_ptr<TlsHandshake> TlsContext::StartAccept(int fd) const {
  SSL* ssl;
  try {
    ssl = server_->context()->createSSL();
  } catch (const TTransportException&) {
    return nullptr;  // out of memory
  }
  SSL_set_fd(ssl, fd);
  SSL_set_accept_state(ssl);
  return std::unique_ptr<TlsHandshake>(new TlsHandshake(this, fd, ssl));
}

TlsSocket TlsContext::Connect(int fd, const std::string& expected_peer) const {
  TlsSocket s;
  s.socket = client_->createSocket(fd);
  s.check = std::make_shared<TlsPeerCheck>(expected_peer);
  s.socket->access(s.check);
  return s;
}

}  // namespace sluice
