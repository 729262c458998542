// TlsContext: mutual TLS for Sluice's RPC connections, through Thrift's
// TSSLSocket over OpenSSL. TLS 1.3 only; both ends present a certificate
// signed by the job's CA (anything else fails the handshake); a client also
// checks that the server is the task it meant to reach (the certificate's
// common name is the task's name).
//
//   ASSIGN_OR_RETURN(std::shared_ptr<const TlsContext> tls,
//                    TlsContext::Load("/tmp/job/tls", "/job:worker/replica:0/task:1"));
//   TlsSocket server_side = tls->Accept(accepted_fd);          // in a server
//   ASSIGN_OR_RETURN(std::string peer, server_side.Handshake()); // "/job:ps/replica:0/task:0"
//   TlsSocket client_side = tls->Connect(connected_fd, "/job:ps/replica:0/task:0");
//
// The files of a directory (tools:launch writes them, see
// distributed/rpc/job_credentials.h): `ca.crt`, the job's CA; and per
// identity `<stem>.crt` and `<stem>.key` (CredentialStem). Keys are read
// once, at Load.
//
// Why Thrift's TSSLSocket and not a transport of our own: it is the TLS
// socket of the library every connection already uses, and handles
// OpenSSL's retry states, timeouts (poll with the socket's timeouts) and
// shutdown. What it lacks is added here: a TLS 1.3 floor, no session
// tickets (an idle pooled connection must have nothing to read), quiet
// shutdown, and per-connection identity checks through an AccessManager.
//
// Thread-safe: Accept and Connect may be called concurrently; each
// TlsSocket is used by one thread at a time.
#ifndef SLUICE_DISTRIBUTED_RPC_TLS_CONTEXT_H_
#define SLUICE_DISTRIBUTED_RPC_TLS_CONTEXT_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace apache::thrift::transport {
class TSSLSocket;
class TSSLSocketFactory;
}  // namespace apache::thrift::transport

namespace sluice {

// The file stem of an identity's certificate and key: "worker-1" for
// "/job:worker/replica:0/task:1"; other names (e.g. "client") as they are,
// with characters outside [A-Za-z0-9_-] replaced by '_'.
std::string CredentialStem(const std::string& identity);

class TlsPeerCheck;  // records (and on a client, checks) the peer's name
class TlsContext;

// One TLS connection over a connected TCP socket (the TSSLSocket owns the
// fd from then on).
struct TlsSocket {
  std::shared_ptr<apache::thrift::transport::TSSLSocket> socket;
  std::shared_ptr<TlsPeerCheck> check;

  // Runs the handshake now, within the socket's receive timeout (otherwise
  // it runs on first read or write). The peer's identity; Unauthenticated
  // with OpenSSL's reason when the peer has no certificate of the job's CA
  // (or, for a client, is not the task it asked for), Unavailable when the
  // connection fails.
  absl::StatusOr<std::string> Handshake();
  // The peer's identity once the handshake is done; "" before.
  std::string peer() const;
};

// The server side of a handshake driven by an event loop on a non-blocking
// socket (connection_gate.h): no thread waits for a peer that is slow or
// silent. Step() runs OpenSSL as far as the bytes that arrived allow, then
// waits for the peer's first application byte (its first request), which
// it leaves unread. Once kReady, Release() hands the connection on as a
// TlsSocket whose handshake is done. The fd stays the caller's until then
// (the destructor frees the TLS state, not the fd).
class TlsHandshake {
 public:
  enum class State {
    kWantRead,   // call Step() again when the socket is readable
    kWantWrite,  // ... when it is writable
    kReady,      // authenticated, and request bytes are waiting
    kFailed,     // error() says why; close the fd
  };

  ~TlsHandshake();
  TlsHandshake(const TlsHandshake&) = delete;
  TlsHandshake& operator=(const TlsHandshake&) = delete;

  State Step();
  // Why the handshake failed: Unauthenticated (OpenSSL's reason: no or a
  // foreign certificate, not TLS at all), Unavailable (the peer hung up).
  const absl::Status& error() const { return error_; }
  // The peer's identity (its certificate's common name) once authenticated.
  const std::string& peer() const { return peer_; }
  // After kReady: the connection, blocking-emulated as every TlsSocket.
  TlsSocket Release();

 private:
  friend class TlsContext;
  TlsHandshake(const TlsContext* context, int fd, void* ssl);

  const TlsContext* const context_;
  const int fd_;
  void* ssl_;  // SSL*, null once released
  bool authenticated_ = false;
  std::string peer_;
  absl::Status error_;
};

class TlsContext {
 public:
  // Loads `dir`/ca.crt and the certificate and key of `identity`.
  // NotFound naming a missing file; InvalidArgument when OpenSSL rejects a
  // file or the key does not match the certificate.
  static absl::StatusOr<std::shared_ptr<const TlsContext>> Load(const std::string& dir,
                                                                const std::string& identity);
  ~TlsContext();

  const std::string& identity() const { return identity_; }
  const std::string& dir() const { return dir_; }

  // The server side of an accepted connection: any certificate of the
  // job's CA is let in; its name is the peer's identity.
  TlsSocket Accept(int fd) const;
  // The same, as a handshake an event loop drives; `fd` must be
  // non-blocking. Null when OpenSSL has no memory for it.
  std::unique_ptr<TlsHandshake> StartAccept(int fd) const;
  // The client side of a connection to `expected_peer` (a task name; ""
  // accepts any certificate of the job's CA, for a target known only by
  // its address).
  TlsSocket Connect(int fd, const std::string& expected_peer) const;

 private:
  class Factory;
  friend class TlsHandshake;
  TlsContext(std::string dir, std::string identity, std::unique_ptr<Factory> server,
             std::unique_ptr<Factory> client);

  const std::string dir_;
  const std::string identity_;
  const std::unique_ptr<Factory> server_;
  const std::unique_ptr<Factory> client_;
};

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_RPC_TLS_CONTEXT_H_
