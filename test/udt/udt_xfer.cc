// udt_xfer.cc — SABUL's successor as a contender: serves files over UDT (Debian's libudt) and fetches them, reporting bytes, time and UDT's own loss count.
//
//   udt_xfer serve [--listen IPV4] --port PORT DIR    serves DIR/NAME to each client, one at a time, until killed
//   udt_xfer get IPV4 PORT NAME OUT                   fetches NAME into OUT (a file or /dev/null) and prints
//                                                     "BYTES SECONDS LOST" (LOST: data packets the receiver
//                                                     found missing, each sent again)
// Exit: 0 done, 1 a transfer failed, 2 bad usage.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <unistd.h>
#include <udt/udt.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

int usage() {
  std::fprintf(stderr,
               "usage: udt_xfer serve [--listen IPV4] --port PORT DIR\n"
               "       udt_xfer get IPV4 PORT NAME OUT\n");
  return 2;
}

bool parse_addr(const char *ip, const char *port, sockaddr_in *a) {
  char *end = nullptr;
  long p = std::strtol(port, &end, 10);
  std::memset(a, 0, sizeof *a);
  a->sin_family = AF_INET;
  a->sin_port = htons(static_cast<uint16_t>(p));
  return *port && !*end && p > 0 && p < 65536 && inet_pton(AF_INET, ip, &a->sin_addr) == 1;
}

int fail(const char *what) {
  std::fprintf(stderr, "udt_xfer: %s: %s\n", what, UDT::getlasterror_desc());
  return 1;
}

bool send_all(UDTSOCKET u, const char *p, int n) {
  while (n > 0) {
    int w = UDT::send(u, p, n, 0);
    if (w == UDT::ERROR) return false;
    p += w;
    n -= w;
  }
  return true;
}

bool recv_all(UDTSOCKET u, char *p, int n) {
  while (n > 0) {
    int r = UDT::recv(u, p, n, 0);
    if (r == UDT::ERROR) return false;
    p += r;
    n -= r;
  }
  return true;
}

// One client: it names a file (a line), gets its size (8 bytes, little-endian) and then its bytes.
// UDT's linger (on by default) keeps close() waiting until every byte is acknowledged.
void serve_one(UDTSOCKET c, const std::string &dir) {
  char name[256] = {};
  int len = 0;
  while (len < static_cast<int>(sizeof name) - 1) {
    if (!recv_all(c, name + len, 1)) return;
    if (name[len] == '\n') break;
    len++;
  }
  name[len] = '\0';
  int64_t size = -1;
  std::string path = dir + "/" + name;
  struct stat st;
  if (!std::strchr(name, '/') && stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) size = st.st_size;
  if (!send_all(c, reinterpret_cast<const char *>(&size), sizeof size) || size < 0) return;
  int64_t offset = 0;
  if (UDT::sendfile2(c, path.c_str(), &offset, size) != size) fail("sendfile");
}

int serve(int argc, char **argv) {
  const char *listen_ip = "0.0.0.0", *port = nullptr, *dir = nullptr;
  for (int i = 2; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--listen" && i + 1 < argc) listen_ip = argv[++i];
    else if (a == "--port" && i + 1 < argc) port = argv[++i];
    else if (!dir && a[0] != '-') dir = argv[i];
    else return usage();
  }
  sockaddr_in addr;
  if (!port || !dir || !parse_addr(listen_ip, port, &addr)) return usage();
  UDTSOCKET l = UDT::socket(AF_INET, SOCK_STREAM, 0);
  if (UDT::bind(l, reinterpret_cast<sockaddr *>(&addr), sizeof addr) == UDT::ERROR) return fail("bind");
  if (UDT::listen(l, 8) == UDT::ERROR) return fail("listen");
  std::fprintf(stderr, "udt_xfer: serving %s on %s:%s\n", dir, listen_ip, port);
  for (;;) {
    UDTSOCKET c = UDT::accept(l, nullptr, nullptr);
    if (c == UDT::INVALID_SOCK) return fail("accept");
    serve_one(c, dir);
    UDT::close(c);
  }
}

int get(int argc, char **argv) {
  sockaddr_in addr;
  if (argc != 6 || !parse_addr(argv[2], argv[3], &addr)) return usage();
  int out = open(argv[5], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) {
    std::perror("udt_xfer: output");
    return 1;
  }
  auto t0 = std::chrono::steady_clock::now();
  UDTSOCKET u = UDT::socket(AF_INET, SOCK_STREAM, 0);
  if (UDT::connect(u, reinterpret_cast<sockaddr *>(&addr), sizeof addr) == UDT::ERROR) return fail("connect");
  std::string req = std::string(argv[4]) + "\n";
  int64_t size = -1;
  if (!send_all(u, req.data(), static_cast<int>(req.size())) ||
      !recv_all(u, reinterpret_cast<char *>(&size), sizeof size))
    return fail("request");
  if (size < 0) {
    std::fprintf(stderr, "udt_xfer: %s: no such file on the server\n", argv[4]);
    return 1;
  }
  std::vector<char> buf(1 << 20);
  int64_t got = 0;
  while (got < size) {
    int want = static_cast<int>(std::min<int64_t>(buf.size(), size - got));
    int r = UDT::recv(u, buf.data(), want, 0);
    if (r == UDT::ERROR) return fail("recv");
    for (int done = 0; done < r;) {
      ssize_t w = write(out, buf.data() + done, static_cast<size_t>(r - done));
      if (w < 0) {
        std::perror("udt_xfer: write");
        return 1;
      }
      done += static_cast<int>(w);
    }
    got += r;
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  UDT::TRACEINFO perf;
  int lost = UDT::perfmon(u, &perf, false) == 0 ? perf.pktRcvLossTotal : -1;
  UDT::close(u);
  close(out);
  std::printf("%lld %.6f %d\n", static_cast<long long>(got), secs, lost);
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) return usage();
  UDT::startup();
  std::string cmd = argv[1];
  int rc = cmd == "serve" ? serve(argc, argv) : cmd == "get" ? get(argc, argv) : usage();
  UDT::cleanup();
  return rc;
}
