#include "distributed/rpc/job_credentials.h"

#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "distributed/rpc/tls_context.h"
#include "base/status_macros.h"
#include "runtime/atomic_file.h"

namespace sluice {
namespace {

struct Free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(BIGNUM* p) const { BN_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
};
using Key = std::unique_ptr<EVP_PKEY, Free>;
using Cert = std::unique_ptr<X509, Free>;

absl::Status OpenSslError(const char* what) {
  return absl::InternalError(absl::StrCat("job credentials: ", what, " failed (OpenSSL)"));
}

absl::StatusOr<Key> NewKey() {
  Key key(EVP_EC_gen("P-256"));
  if (key == nullptr) return OpenSslError("EVP_EC_gen");
  return key;
}

absl::Status AddExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  std::unique_ptr<X509_EXTENSION, Free> ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
  if (ext == nullptr || X509_add_ext(cert, ext.get(), -1) != 1) {
    return OpenSslError("X509_add_ext");
  }
  return absl::OkStatus();
}

// A certificate for `name` holding `key`'s public half, signed by
// `issuer_key` (issuer null: self-signed, a CA).
absl::StatusOr<Cert> NewCert(const std::string& name, EVP_PKEY* key, X509* issuer,
                             EVP_PKEY* issuer_key, absl::Duration validity) {
  Cert cert(X509_new());
  if (cert == nullptr) return OpenSslError("X509_new");
  X509_set_version(cert.get(), 2);  // v3
  std::unique_ptr<BIGNUM, Free> serial(BN_new());
  if (serial == nullptr || BN_rand(serial.get(), 63, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1 ||
      BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get())) == nullptr) {
    return OpenSslError("serial number");
  }
  // An hour back: clocks of a cluster's hosts differ a little.
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), absl::ToInt64Seconds(validity));
  X509_NAME* subject = X509_get_subject_name(cert.get());
  if (X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>(name.c_str()), -1, -1,
                                 0) != 1) {
    return OpenSslError("X509_NAME_add_entry_by_txt");
  }
  X509* signer = issuer != nullptr ? issuer : cert.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(signer));
  if (X509_set_pubkey(cert.get(), key) != 1) return OpenSslError("X509_set_pubkey");
  RETURN_IF_ERROR(AddExtension(cert.get(), signer, NID_subject_key_identifier, "hash"));
  if (issuer == nullptr) {
    RETURN_IF_ERROR(AddExtension(cert.get(), signer, NID_basic_constraints, "critical,CA:TRUE"));
    RETURN_IF_ERROR(AddExtension(cert.get(), signer, NID_key_usage, "critical,keyCertSign,cRLSign"));
  } else {
    RETURN_IF_ERROR(AddExtension(cert.get(), signer, NID_basic_constraints, "critical,CA:FALSE"));
    RETURN_IF_ERROR(AddExtension(cert.get(), signer, NID_key_usage, "critical,digitalSignature"));
    RETURN_IF_ERROR(AddExtension(cert.get(), signer, NID_ext_key_usage, "serverAuth,clientAuth"));
    RETURN_IF_ERROR(AddExtension(cert.get(), signer, NID_authority_key_identifier, "keyid:always"));
  }
  if (X509_sign(cert.get(), issuer_key != nullptr ? issuer_key : key, EVP_sha256()) == 0) {
    return OpenSslError("X509_sign");
  }
  return cert;
}

template <typename WriteFn>
absl::StatusOr<std::string> Pem(WriteFn write) {
  std::unique_ptr<BIO, Free> bio(BIO_new(BIO_s_mem()));
  if (bio == nullptr || write(bio.get()) != 1) return OpenSslError("PEM_write");
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

absl::StatusOr<std::string> CertPem(X509* cert) {
  return Pem([cert](BIO* b) { return PEM_write_bio_X509(b, cert); });
}

absl::StatusOr<std::string> KeyPem(EVP_PKEY* key) {
  return Pem([key](BIO* b) {
    return PEM_write_bio_PrivateKey(b, key, nullptr, nullptr, 0, nullptr, nullptr);
  });
}

}  // namespace

absl::StatusOr<std::map<std::string, std::string>> MakeJobCredentials(
    const std::vector<std::string>& identities, absl::Duration validity) {
  std::set<std::string> stems;
  for (const std::string& id : identities) {
    if (id.empty()) return absl::InvalidArgumentError("job credentials: an empty identity");
    if (!stems.insert(CredentialStem(id)).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("job credentials: identity '", id, "' is given twice"));
    }
  }
  ASSIGN_OR_RETURN(Key ca_key, NewKey());
  ASSIGN_OR_RETURN(Cert ca, NewCert("Sluice job CA", ca_key.get(), nullptr, nullptr, validity));
  std::map<std::string, std::string> files;
  ASSIGN_OR_RETURN(files["ca.crt"], CertPem(ca.get()));
  for (const std::string& id : identities) {
    ASSIGN_OR_RETURN(Key key, NewKey());
    ASSIGN_OR_RETURN(Cert cert, NewCert(id, key.get(), ca.get(), ca_key.get(), validity));
    const std::string stem = CredentialStem(id);
    ASSIGN_OR_RETURN(files[stem + ".crt"], CertPem(cert.get()));
    ASSIGN_OR_RETURN(files[stem + ".key"], KeyPem(key.get()));
  }
  return files;
}

absl::Status WriteJobCredentials(const std::string& dir, const std::vector<std::string>& identities,
                                 absl::Duration validity) {
  ASSIGN_OR_RETURN(auto files, MakeJobCredentials(identities, validity));
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::PermissionDeniedError(
        absl::StrCat("job credentials: cannot create ", dir, ": ", std::strerror(errno)));
  }
  for (const auto& [name, text] : files) {
    RETURN_IF_ERROR(WriteFileAtomically(absl::StrCat(dir, "/", name), text));
  }
  return absl::OkStatus();
}

}  // namespace sluice
