// TLS and mutual TLS between the real exactqd and the real exactq, with certificates
// made on the fly by openssl: a CA, a server certificate for 127.0.0.1/localhost and
// a client certificate.
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "tests/testing/server_process.h"

namespace exactq {
namespace {

using exactq::testing::RunCommand;

class TlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(exactq::testing::MakeTempDir("tls"));
    const std::string d = *dir_;
    std::string out;
    auto run = [&](std::vector<std::string> argv) { ASSERT_EQ(RunCommand(argv, &out), 0) << out; };
    std::ofstream(d + "/server.ext") << "subjectAltName=IP:127.0.0.1,DNS:localhost\n";
    run({"/usr/bin/openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
         "/CN=ExactQ test CA", "-keyout", d + "/ca.key", "-out", d + "/ca.pem"});
    for (const std::string name : {"server", "client"}) {
      run({"/usr/bin/openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=" + name, "-keyout",
           d + "/" + name + ".key", "-out", d + "/" + name + ".csr"});
      std::vector<std::string> sign = {"/usr/bin/openssl",
                                       "x509",
                                       "-req",
                                       "-in",
                                       d + "/" + name + ".csr",
                                       "-CA",
                                       d + "/ca.pem",
                                       "-CAkey",
                                       d + "/ca.key",
                                       "-CAcreateserial",
                                       "-days",
                                       "2",
                                       "-out",
                                       d + "/" + name + ".pem"};
      if (name == "server") sign.insert(sign.end(), {"-extfile", d + "/server.ext"});
      run(sign);
    }
  }
  static void TearDownTestSuite() { delete dir_; }

  static int Score(const exactq::testing::ServerProcess& server, std::vector<std::string> tls_flags,
                   std::string* output) {
    std::vector<std::string> argv = {exactq::testing::ClientBinary(),
                                     "score",
                                     "samples/sample.ref.y4m",
                                     "samples/sample.dist.y4m",
                                     "--server",
                                     server.address(),
                                     "--quiet",
                                     "--connect-timeout",
                                     "3"};
    argv.insert(argv.end(), tls_flags.begin(), tls_flags.end());
    return RunCommand(argv, output);
  }

  static std::string* dir_;
};

std::string* TlsTest::dir_ = nullptr;

TEST_F(TlsTest, ServerTlsAcceptsClientsThatTrustItsCa) {
  const std::string d = *dir_;
  exactq::testing::ServerProcess server(
      {"--tls-cert-file=" + d + "/server.pem", "--tls-key-file=" + d + "/server.key"});
  ASSERT_TRUE(server.Start()) << server.log();
  std::string out;
  EXPECT_EQ(Score(server, {"--tls-ca-file", d + "/ca.pem"}, &out), 0) << out;
  EXPECT_NE(Score(server, {}, &out), 0) << "a plaintext client must not get through";
  EXPECT_NE(server.log().find(", TLS)"), std::string::npos) << server.log();
}

TEST_F(TlsTest, MutualTlsRequiresAClientCertificate) {
  const std::string d = *dir_;
  exactq::testing::ServerProcess server({"--tls-cert-file=" + d + "/server.pem", "--tls-key-file=" + d + "/server.key",
                                         "--tls-client-ca-file=" + d + "/ca.pem"});
  ASSERT_TRUE(server.Start()) << server.log();
  std::string out;
  EXPECT_NE(Score(server, {"--tls-ca-file", d + "/ca.pem"}, &out), 0) << "no client certificate must be refused";
  EXPECT_EQ(
      Score(server,
            {"--tls-ca-file", d + "/ca.pem", "--tls-cert-file", d + "/client.pem", "--tls-key-file", d + "/client.key"},
            &out),
      0)
      << out;
}

TEST_F(TlsTest, BadTlsConfigurationStopsTheServerWithAReason) {
  exactq::testing::ServerProcess server({"--tls-cert-file=/nonexistent.pem", "--tls-key-file=/nonexistent.key"});
  EXPECT_FALSE(server.Start());
  EXPECT_NE(server.log().find("cannot read --tls_cert_file"), std::string::npos) << server.log();
}

}  // namespace
}  // namespace exactq
