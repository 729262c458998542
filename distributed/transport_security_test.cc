// TransportSecurity: the environment's choice, the loopback rule of an
// insecure run, and the error that names what to do without credentials.
#include "distributed/transport_security.h"

#include <cstdlib>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

class TransportSecurityTest : public testing::Test {
 protected:
  void TearDown() override {
    unsetenv(kTlsDirEnv);
    unsetenv(kInsecureEnv);
  }
};

TEST_F(TransportSecurityTest, LoopbackHosts) {
  for (const char* host : {"localhost", "127.0.0.1", "127.1.2.3", "::1"}) {
    EXPECT_TRUE(IsLoopbackHost(host)) << host;
  }
  for (const char* host : {"0.0.0.0", "10.0.0.1", "192.168.1.7", "::", "example.com",
                           "localhost.example.com", "128.0.0.1", ""}) {
    EXPECT_FALSE(IsLoopbackHost(host)) << host;
  }
}

TEST_F(TransportSecurityTest, FromTheEnvironment) {
  unsetenv(kTlsDirEnv);
  unsetenv(kInsecureEnv);
  EXPECT_TRUE(TransportSecurityFromEnv().unset());
  setenv(kInsecureEnv, "1", 1);
  EXPECT_TRUE(TransportSecurityFromEnv().insecure);
  setenv(kInsecureEnv, "", 1);  // the launcher's "not insecure"
  EXPECT_FALSE(TransportSecurityFromEnv().insecure);
  setenv(kTlsDirEnv, "/etc/sluice/tls", 1);
  EXPECT_EQ(TransportSecurityFromEnv().tls_dir, "/etc/sluice/tls");
}

TEST_F(TransportSecurityTest, NoCredentialsSaysWhatToDo) {
  absl::StatusOr<std::shared_ptr<const TlsContext>> r =
      ResolveTransportSecurity({}, "/job:worker/replica:0/task:0", {"127.0.0.1"});
  ASSERT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), "//tools:launch")) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), "--insecure")) << r.status();
}

TEST_F(TransportSecurityTest, InsecureOnlyOnLoopback) {
  TransportSecurity insecure;
  insecure.insecure = true;
  absl::StatusOr<std::shared_ptr<const TlsContext>> ok =
      ResolveTransportSecurity(insecure, "/job:worker/replica:0/task:0", {"localhost", "127.0.0.1"});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(*ok, nullptr);  // plaintext
  for (const char* host : {"10.1.2.3", "worker-0.svc", "0.0.0.0"}) {
    absl::StatusOr<std::shared_ptr<const TlsContext>> r =
        ResolveTransportSecurity(insecure, "/job:worker/replica:0/task:0", {"127.0.0.1", host});
    ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << host << ": " << r.status();
    EXPECT_TRUE(absl::StrContains(r.status().message(), host)) << r.status();
  }
}

TEST_F(TransportSecurityTest, MissingCredentialsAreNotFound) {
  TransportSecurity tls;
  tls.tls_dir = "/nonexistent/tls";
  absl::StatusOr<std::shared_ptr<const TlsContext>> r =
      ResolveTransportSecurity(tls, "/job:worker/replica:0/task:0", {"10.0.0.1"});
  ASSERT_EQ(r.status().code(), absl::StatusCode::kNotFound) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), "/nonexistent/tls")) << r.status();
}

}  // namespace
}  // namespace sluice
