// packlab's C++ workers' plumbing: the job line, stdin's frames, stdout's
// JSON lines, /proc readings (shared by packlab-refs and packlab-ch).
#include <fcntl.h>
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "worker.h"

namespace refs {

namespace {

// readFile reads a small /proc file into buf without malloc.
int read_proc(const char* path, char* buf, size_t size) {
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t n = 0;
  while (n + 1 < size) {
    ssize_t r = ::read(fd, buf + n, size - 1 - n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    n += static_cast<size_t>(r);
  }
  ::close(fd);
  buf[n] = 0;
  return static_cast<int>(n);
}

// ---- the job line: a flat JSON object; nested values are skipped ----

struct Parser {
  const std::string& s;
  size_t i = 0;
  void ws() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n')) ++i;
  }
  bool string(std::string* out) {
    if (i >= s.size() || s[i] != '"') return false;
    ++i;
    while (i < s.size() && s[i] != '"') {
      char c = s[i++];
      if (c == '\\') {
        if (i >= s.size()) return false;
        char e = s[i++];
        switch (e) {
          case 'n': c = '\n'; break;
          case 't': c = '\t'; break;
          case 'r': c = '\r'; break;
          case 'b': c = '\b'; break;
          case 'f': c = '\f'; break;
          case 'u':  // kept as '?': names in a job are ASCII
            if (i + 4 > s.size()) return false;
            i += 4;
            c = '?';
            break;
          default: c = e;
        }
      }
      if (out) out->push_back(c);
    }
    if (i >= s.size()) return false;
    ++i;
    return true;
  }
  // value stores a scalar's text (a string unquoted) in out; an object or an
  // array is skipped and leaves out empty.
  bool value(std::string* out) {
    ws();
    if (i >= s.size()) return false;
    if (s[i] == '"') return string(out);
    if (s[i] == '{' || s[i] == '[') {
      int depth = 0;
      while (i < s.size()) {
        char c = s[i];
        if (c == '"') {
          if (!string(nullptr)) return false;
          continue;
        }
        ++i;
        if (c == '{' || c == '[') ++depth;
        if (c == '}' || c == ']') {
          if (--depth == 0) return true;
        }
      }
      return false;
    }
    size_t start = i;
    while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ' ' && s[i] != '\n') ++i;
    if (out) *out = s.substr(start, i - start);
    return i > start;
  }
  bool object(std::map<std::string, std::string>& fields) {
    ws();
    if (i >= s.size() || s[i] != '{') return false;
    ++i;
    ws();
    if (i < s.size() && s[i] == '}') return true;
    for (;;) {
      ws();
      std::string key, val;
      if (!string(&key)) return false;
      ws();
      if (i >= s.size() || s[i] != ':') return false;
      ++i;
      if (!value(&val)) return false;
      fields[key] = val;
      ws();
      if (i < s.size() && s[i] == ',') {
        ++i;
        continue;
      }
      if (i < s.size() && s[i] == '}') return true;
      return false;
    }
  }
};

}  // namespace

std::string read_job(std::map<std::string, std::string>* fields) {
  // The job line, read a byte at a time: what follows it is the binary
  // stream, which must not be read ahead into a buffer here.
  std::string line;
  for (;;) {
    char c;
    ssize_t r = ::read(0, &c, 1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      if (line.empty()) return "reading the job from stdin: no job (this worker is started by packlab; run it with --describe to see what it holds)";
      break;
    }
    if (c == '\n') break;
    line.push_back(c);
    if (line.size() > (1 << 20)) return "reading the job from stdin: the line is longer than 1 MiB";
  }
  Parser p{line};
  if (!p.object(*fields)) return "reading the job from stdin: not a JSON object";
  return "";
}

bool parse_int(const std::string& text, long long lo, long long hi, long long* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != 0 || v < lo || v > hi) return false;
  *out = v;
  return true;
}

int worker_main(int argc, char** argv, const char* name, int (*describe)(), int (*serve)()) {
  signal(SIGINT, SIG_IGN);
  if (argc == 2 && std::strcmp(argv[1], "--describe") == 0) return describe();
  if (argc != 1) {
    std::fprintf(stderr, "usage: %s [--describe] (packlab starts it and writes a job on stdin)\n", name);
    return 2;
  }
  return serve();
}

void (*before_gone)() = nullptr;

// gone ends a worker whose lab has gone, after before_gone.
[[noreturn]] static void gone() {
  if (before_gone) before_gone();
  std::_Exit(1);
}

int fail(const std::string& msg) {
  write_line("{\"error\":" + json_string(msg) + "}");
  return 0;
}

void read_exact(void* buf, size_t n, const char* what) {
  char* p = static_cast<char*>(buf);
  while (n > 0) {
    ssize_t r = ::read(0, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      fail(std::string("the lab's stream ended in ") + what + " (the lab has stopped)");
      gone();
    }
    p += r;
    n -= static_cast<size_t>(r);
  }
}

void write_line(const std::string& s) {
  std::string line = s + "\n";
  const char* p = line.data();
  size_t n = line.size();
  while (n > 0) {
    ssize_t w = ::write(1, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) gone();  // the lab has gone
    p += w;
    n -= static_cast<size_t>(w);
  }
}

int64_t current_rss() {
  char buf[256];
  if (read_proc("/proc/self/statm", buf, sizeof buf) <= 0) return -1;
  long long size = 0, resident = 0;
  if (std::sscanf(buf, "%lld %lld", &size, &resident) != 2) return -1;
  return resident * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

int64_t status_hwm() {
  char buf[4096];
  if (read_proc("/proc/self/status", buf, sizeof buf) <= 0) return -1;
  const char* p = std::strstr(buf, "\nVmHWM:");
  if (!p) return -1;
  return std::atoll(p + 7) * 1024;
}

bool reset_peak() {
  int fd = ::open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::write(fd, "5", 1) == 1;
  ::close(fd);
  return ok;
}

int64_t malloc_in_use() {
  struct mallinfo2 mi = mallinfo2();
  return static_cast<int64_t>(mi.uordblks + mi.hblkhd);
}

void trim_malloc() { malloc_trim(0); }

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double kernel_seconds() {
  struct rusage ru {};
  if (getrusage(RUSAGE_SELF, &ru) != 0) return -1;
  return double(ru.ru_stime.tv_sec) + double(ru.ru_stime.tv_usec) / 1e6;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  return out + "\"";
}

std::string json_number(double v) {
  if (!std::isfinite(v)) return "0";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace refs
