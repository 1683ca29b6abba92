// packlab-ch: ClickHouse's own dictionaries in the lab, through chDB's
// libchdb.so (ClickHouse embedded as a library; `make chdb` fetches it).
//
//   packlab-ch              serve one job from stdin (what the lab starts)
//   packlab-ch --describe   one JSON line: the protocol, ClickHouse's version
//
// It speaks the lab's worker protocol (../worker.h): the job line, load
// frames, the read phase's counts and key frames on stdin; progress lines
// and one result or error line on stdout. What it does with them:
//
//   job line      the folder the lab made for this run (dir), the CREATE
//                 DICTIONARY statement the lab wrote (ddl), the types
//   connect       chdb_set_signal_handlers_enabled(0), then chdb_connect with
//                 --path=dir/db --user_files_path=dir/files
//   load frames   written as RowBinary to dir/files/rows.bin, each key as the
//                 dictionary keeps it (a simple key widened to UInt64), the
//                 dictionary's FILE source
//   prepare       with several attributes, the lab's INSERT INTO FUNCTION
//                 file(...) SELECT ... FROM file('rows.bin', ...) that
//                 writes the dictionary's source file with every attribute
//                 column (not timed)
//   sync          every file in dir/files on disk (fdatasync), not timed:
//                 the kernel's writeback of them would otherwise run
//                 beside the load or the read (rows.bin's 30 s dirty expiry
//                 falls about on the read at 1e7 rows), a cost ClickHouse
//                 fed from a table does not have
//   baseline      CREATE DICTIONARY (not loaded yet); VmRSS, VmHWM reset,
//                 ClickHouse's MemoryTracking: chDB's own memory
//   load          SYSTEM RELOAD DICTIONARY, timed; a thread samples VmRSS
//                 every 100 ms for the progress lines and the timeline
//   after         VmRSS - baseline; peak = VmHWM - baseline; then SYSTEM
//                 JEMALLOC PURGE and VmRSS again (ClickHouse's allocator keeps
//                 the rehash's freed buffers until purged or decayed), the
//                 purge repeated until VmRSS stops falling
//   figures       system.dictionaries: element_count, bytes_allocated,
//                 load_factor, loading_duration
//   verify        count() and core.PairChecksum summed in SQL over
//                 dictionary(...): ClickHouse holds exactly the rows written
//   read          the hit frames written to dir/files/read.bin (synced),
//                 copied into a Memory table in the lab's order, then
//                 sum(dictGet(...)) over it with max_threads = 1 (timed),
//                 and again with every thread; read.bin is removed after
//                 the reads, so that no freeing of its blocks runs beside them
//
// A ClickHouse error is this run's one error line, with ClickHouse's
// message; the folder is removed at the end either way (the lab removes it
// too, after a crash).
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../worker.h"
#include "chdb.h"

namespace chw {

using refs::fail;
using refs::json_number;
using refs::json_string;
using refs::write_line;

// kProtocol is experiments/chdriver/clickhouse.go's chProtocol.
constexpr int kProtocol = 5;
// kDict and kReadTable are the names the lab's DDL and the read use.
constexpr const char* kDict = "packlab_dict";
constexpr const char* kReadTable = "packlab_read";

std::string g_dir;  // the run's folder, removed at exit
chdb_connection g_conn = nullptr;

// remove_folder removes the run's folder, once whichever thread asks; a
// second thread that asks waits until it is gone. (With a flag instead,
// the watcher and a reader that saw the lab's pipe end both asked, the
// second went straight on to _Exit, and the process ended half-way
// through the first one's remove_all: CI found the folder left.) ClickHouse's
// threads may still be writing into the folder, so remove_all is tried
// again, for up to 2 s, until the folder is gone.
void remove_folder() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (g_dir.empty()) return;
    for (int i = 0; i < 200; i++) {
      std::error_code ec;
      std::filesystem::remove_all(g_dir, ec);
      if (!std::filesystem::exists(g_dir, ec)) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
}

// finish removes the run's folder and ends the process now: ClickHouse's
// static destructors and background threads have nothing to do for a
// worker that is done.
[[noreturn]] void finish(int code) {
  remove_folder();
  std::fflush(stdout);
  std::_Exit(code);
}

// watch_lab ends the worker, its folder removed, once the lab that started
// it has gone, whatever the worker is doing: a lab killed with SIGKILL
// during a load left the folder (80 MB and more) while ClickHouse went on
// loading, and a write to its broken pipe killed the worker by SIGPIPE
// (now ignored: the write fails, and refs::before_gone removes the folder).
// The lab's process id is polled every 100 ms rather than asked of the
// kernel (PR_SET_PDEATHSIG): that fires when the thread that started the
// worker ends, and the Go runtime ends threads of a living lab.
void watch_lab() {
  const pid_t lab = ::getppid();
  refs::before_gone = remove_folder;
  signal(SIGPIPE, SIG_IGN);
  std::thread([lab] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (::getppid() != lab) {
        remove_folder();
        std::_Exit(1);
      }
    }
  }).detach();
}

[[noreturn]] void die(const std::string& msg) {
  fail(msg);
  finish(0);
}

// frame_size reads the count that heads a frame of the lab's stream (0
// ends the phase); more than a frame holds is a broken stream.
uint32_t frame_size(const char* frame, const char* unit) {
  uint32_t n = 0;
  refs::read_exact(&n, sizeof n, frame);
  if (n > refs::kFrameRows) die(std::string("protocol: ") + frame + " of " + std::to_string(n) + " " + unit);
  return n;
}

// first_line is ClickHouse's message without its stack trace, at most 600
// characters.
std::string first_line(const char* s) {
  std::string m(s ? s : "");
  size_t nl = m.find('\n');
  if (nl != std::string::npos) m.resize(nl);
  while (!m.empty() && (m.back() == ' ' || m.back() == '\r')) m.pop_back();
  if (m.size() > 600) m = m.substr(0, 600) + "...";
  return m;
}

// query runs sql and returns its TSV output; a ClickHouse error ends the
// run with ClickHouse's message, saying what was being done.
std::string query(const std::string& sql, const char* doing, double* seconds = nullptr) {
  const double t0 = refs::now_seconds();
  chdb_result* r = chdb_query(g_conn, sql.c_str(), "TSV");
  const double t1 = refs::now_seconds();
  if (seconds) *seconds = t1 - t0;
  if (!r) die(std::string("ClickHouse gave no result ") + doing);
  const char* err = chdb_result_error(r);
  if (err) {
    std::string msg = std::string("ClickHouse ") + doing + ": " + first_line(err);
    chdb_destroy_query_result(r);
    die(msg);
  }
  std::string out;
  if (char* b = chdb_result_buffer(r)) out.assign(b, chdb_result_length(r));
  chdb_destroy_query_result(r);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::vector<std::string> split_tabs(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t t = s.find('\t', start);
    out.push_back(s.substr(start, t == std::string::npos ? std::string::npos : t - start));
    if (t == std::string::npos) break;
    start = t + 1;
  }
  return out;
}

// connect starts ClickHouse in this process, its storage in dir.
void connect(const std::string& dir) {
  // Before chdb_connect: no ClickHouse handlers of deadly signals (see chdb.h).
  chdb_set_signal_handlers_enabled(0);
  std::string path = "--path=" + dir + "/db";
  std::string files = "--user_files_path=" + dir + "/files";
  std::vector<std::string> args = {"clickhouse", path, files};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  chdb_connection* c = chdb_connect(static_cast<int>(argv.size()), argv.data());
  if (!c || !*c) die("ClickHouse did not start (chdb_connect failed with --path=" + dir + "/db)");
  g_conn = *c;
}

// ---- words of a value as core.PairChecksum reads them ----

inline void load_words(const uint8_t* p, int size, uint64_t& lo, uint64_t& hi) {
  lo = hi = 0;
  std::memcpy(&lo, p, std::min(size, 8));
  if (size == 16) std::memcpy(&hi, p + 8, 8);
}

// words_sql is the SQL of a column's two 64-bit words, as load_words reads
// its bytes (the low word first).
std::pair<std::string, std::string> words_sql(const std::string& col, int size) {
  if (size <= 8) return {"reinterpretAsUInt64(" + col + ")", "toUInt64(0)"};
  std::string u = "reinterpretAsUInt128(" + col + ")";
  return {"toUInt64(bitAnd(" + u + ", toUInt128('18446744073709551615')))", "toUInt64(bitShiftRight(" + u + ", 64))"};
}

// fmix64_sql is core's intHash64 (Murmur's fmix64) in SQL: ClickHouse's
// intHash64 function is its intHash64 of x ^ 0x4CF2D2BAAE6DA887
// (IntHash64Impl), so the constant is xored in once more to cancel it.
std::string fmix64_sql(const std::string& x) { return "intHash64(bitXor(" + x + ", 0x4cf2d2baae6da887))"; }

// checksum_sql is core.PairChecksum in SQL (UInt64 arithmetic wraps in
// ClickHouse as in Go and C++).
std::string checksum_sql(const std::string& key, int key_size, const std::string& value, int value_size) {
  auto [klo, khi] = words_sql(key, key_size);
  auto [vlo, vhi] = words_sql(value, value_size);
  return "bitXor(" + fmix64_sql("bitXor(" + klo + ", " + fmix64_sql("bitXor(" + khi + ", 0x2545f4914f6cdd1d)") + ")") + ", " +
         fmix64_sql(vlo + " + bitRotateLeft(" + vhi + ", 17) + 0x9e3779b97f4a7c15") + " * 0x9fb21c651e98df25)";
}

// ---- the job ----

struct Job {
  std::string layout;
  int key_bytes = 0;        // the lab's key, as it streams it
  int value_bytes = 0;
  int dict_key_bytes = 0;   // the dictionary's key: 8 for a simple key, the lab's for a complex one
  std::string dict_key_type;  // the dictionary's key column type
  std::string value_type;
  bool complex_key = false;
  int64_t total_rows = -1;
  bool no_read = false;
  bool reload = false;      // reload once after the load, for a reload's peak
  int read_threads = 0;     // every thread's read: max_threads
  std::string dir;
  std::string ddl;
  std::string prepare;      // empty, or the statement that writes the source file with every attribute
  std::string value_column = "value";  // the first attribute's column, which the checks and reads use
  // A String or tuple key derived from the lab's (the lab's key.go): the
  // read's table's key columns, their expressions over the lab's key,
  // the lab's key from them, dictGet's key. Empty: the key is the lab's.
  std::string key_columns;
  std::string key_select;
  std::string key_check;
  std::string key_args;
};

Job parse_job() {
  std::map<std::string, std::string> f;
  if (std::string err = refs::read_job(&f); !err.empty()) die(err);
  Job job;
  long long v = 0;
  if (!refs::parse_int(f["protocol"], 0, 1 << 30, &v) || v != kProtocol) {
    die("protocol " + f["protocol"] + ": this packlab-ch speaks protocol " + std::to_string(kProtocol) +
        " (rebuild it with: make chdb)");
  }
  job.layout = f["layout"];
  auto size_field = [&](const char* name, int* dst) {
    if (!refs::parse_int(f[name], 1, 16, &v) || (v != 1 && v != 2 && v != 4 && v != 8 && v != 16)) {
      die(std::string(name) + " \"" + f[name] + "\": no such size (allowed: 1, 2, 4, 8, 16)");
    }
    *dst = static_cast<int>(v);
  };
  size_field("key_bytes", &job.key_bytes);
  size_field("value_bytes", &job.value_bytes);
  size_field("dict_key_bytes", &job.dict_key_bytes);
  job.dict_key_type = f["dict_key_type"];
  job.value_type = f["value_type"];
  job.complex_key = f["complex_key"] == "true";
  if (f.count("total_rows") && !refs::parse_int(f["total_rows"], -1, INT64_MAX, &v)) {
    die("total_rows \"" + f["total_rows"] + "\": not a row count (allowed: -1 or more)");
  }
  job.total_rows = f.count("total_rows") ? v : -1;
  job.no_read = f["no_read"] == "true";
  job.reload = f["reload"] == "true";
  if (!refs::parse_int(f["read_threads"], 1, 1024, &v)) die("read_threads \"" + f["read_threads"] + "\": allowed 1 to 1024");
  job.read_threads = static_cast<int>(v);
  job.dir = f["dir"];
  job.ddl = f["ddl"];
  job.prepare = f["prepare"];
  if (!f["value_column"].empty()) job.value_column = f["value_column"];
  job.key_columns = f["key_columns"];
  job.key_select = f["key_select"];
  job.key_check = f["key_check"];
  job.key_args = f["key_args"];
  const int derived = !job.key_columns.empty() + !job.key_select.empty() + !job.key_check.empty() + !job.key_args.empty();
  if (derived != 0 && derived != 4) die("key_columns, key_select, key_check, key_args: all four or none");
  if (derived && !job.complex_key) die("key_columns: a String or tuple key is a complex key");
  if (derived && job.prepare.empty()) die("key_columns: a derived key's source is written by the prepare statement");
  for (const std::string* sql : {&job.key_columns, &job.key_select, &job.key_check, &job.key_args}) {
    if (sql->find(';') != std::string::npos) die("key_columns, key_select, key_check, key_args: one expression list each, no ';'");
  }
  for (char c : job.value_column) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) die("value_column \"" + job.value_column + "\": not a column name");
  }
  struct stat st {};
  if (job.dir.empty() || job.dir[0] != '/' || ::stat(job.dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    die("dir \"" + job.dir + "\": not an existing folder (the lab makes one for each run)");
  }
  if (job.ddl.find("CREATE DICTIONARY") != 0) die("ddl: not a CREATE DICTIONARY statement");
  if (!job.prepare.empty() && job.prepare.find("INSERT INTO FUNCTION file(") != 0) {
    die("prepare: not an INSERT INTO FUNCTION file(...) statement");
  }
  if (!job.complex_key && job.dict_key_bytes != 8) die("dict_key_bytes: a simple key is UInt64, 8 bytes");
  if (job.complex_key && job.dict_key_bytes != job.key_bytes) die("dict_key_bytes: a complex key is the lab's key");
  return job;
}

// Writer buffers a file's writes.
struct Writer {
  FILE* f = nullptr;
  std::string path;
  explicit Writer(const std::string& p) : path(p) {
    f = std::fopen(p.c_str(), "wb");
    if (!f) die("writing " + p + ": " + std::strerror(errno));
    static std::vector<char> buf(1 << 20);
    std::setvbuf(f, buf.data(), _IOFBF, buf.size());
  }
  void write(const void* p, size_t n) {
    if (std::fwrite(p, 1, n, f) != n) die("writing " + path + ": " + std::strerror(errno));
  }
  // close closes the file; with sync, once its bytes are on disk
  // (fdatasync), so that no writeback of it runs during a timed phase.
  void close(bool sync = false) {
    if (sync && (std::fflush(f) != 0 || ::fdatasync(fileno(f)) != 0)) die("writing " + path + ": " + std::strerror(errno));
    if (std::fclose(f) != 0) die("writing " + path + ": " + std::strerror(errno));
    f = nullptr;
  }
};

// sync_files puts every file in dir on disk (fdatasync): the dictionary's
// source, whoever wrote it (this worker, ClickHouse's prepare statement or
// the lab). Not timed; what the kernel would otherwise write back later,
// beside ClickHouse's load or read, a dictionary loaded from a table does
// not have (the side-by-side harness's).
void sync_files(const std::string& dir) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (!e.is_regular_file(ec)) continue;
    const std::string p = e.path().string();
    FILE* f = std::fopen(p.c_str(), "rb");
    if (!f) die("syncing " + p + ": " + std::strerror(errno));
    const bool ok = ::fdatasync(fileno(f)) == 0;
    const int err = errno;
    std::fclose(f);
    if (!ok) die("syncing " + p + ": " + std::strerror(err));
  }
  if (ec) die("listing " + dir + ": " + ec.message());
}

std::string progress_line(const std::string& layout, const char* phase, int64_t rows, int64_t total, double seconds,
                          int64_t rss) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "{\"progress\":{\"layout\":\"%s\",\"phase\":\"%s\",\"rows\":%" PRId64 ",\"total_rows\":%" PRId64
                ",\"seconds\":%s,\"rss_bytes\":%" PRId64 "}}",
                layout.c_str(), phase, rows, total, json_number(seconds).c_str(), rss);
  return buf;
}

struct TimePoint {
  double seconds;
  int64_t rows;
  int64_t rss;
};

int64_t parse_i64(const std::string& s) { return std::strtoll(s.c_str(), nullptr, 10); }
double parse_f64(const std::string& s) { return std::strtod(s.c_str(), nullptr); }

// tracked is ClickHouse's own count of the memory it holds (MemoryTracking).
int64_t tracked() {
  return parse_i64(query("SELECT value FROM system.metrics WHERE metric = 'MemoryTracking'", "reading its memory tracker"));
}

// Sampler reads VmRSS every 100 ms while ClickHouse loads (its load is one
// call): the progress lines and the timeline.
struct Sampler {
  std::mutex mu;
  std::vector<TimePoint> points;
  int64_t max_rss = 0;
  std::atomic<bool> stop{false};
  std::thread th;
  void start(const std::string& layout, int64_t rows, int64_t total, double t0, int64_t rss0) {
    points.reserve(8192);
    th = std::thread([this, layout, rows, total, t0, rss0] {
      while (!stop.load()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        if (stop.load()) break;
        const double t = refs::now_seconds() - t0;
        const int64_t rss = refs::current_rss();
        {
          std::lock_guard<std::mutex> g(mu);
          max_rss = std::max(max_rss, rss);
          if (points.size() < points.capacity()) points.push_back({t, rows, rss - rss0});
        }
        write_line(progress_line(layout, "load", rows, total, t, rss - rss0));
      }
    });
  }
  void join() {
    stop.store(true);
    th.join();
  }
};

int serve() {
  Job job = parse_job();
  g_dir = job.dir;
  watch_lab();
  const std::string files = job.dir + "/files";
  if (::mkdir(files.c_str(), 0700) != 0 && errno != EEXIST) die("making " + files + ": " + std::strerror(errno));

  connect(job.dir);
  const std::string version = query("SELECT version()", "telling its version");

  // Receive the rows; write them as the dictionary's source, each key as
  // the dictionary keeps it.
  const double recv0 = refs::now_seconds();
  std::vector<uint8_t> keys(refs::kFrameRows * 16), values(refs::kFrameRows * 16), row(32);
  int64_t rows = 0;
  uint64_t sent_sum = 0;  // PairChecksum over the lab's pairs: the lab checks it
  uint64_t dict_sum = 0;  // over the pairs as the dictionary gets them (a simple key widened or cut to UInt64)
  bool truncated = false; // a 16-byte key was cut to its low word
  {
    Writer out(files + "/rows.bin");
    double last = 0;
    for (;;) {
      const uint32_t n = frame_size("a load frame", "rows");
      if (n == 0) break;
      refs::read_exact(keys.data(), size_t(n) * job.key_bytes, "a load frame's keys");
      refs::read_exact(values.data(), size_t(n) * job.value_bytes, "a load frame's values");
      for (uint32_t i = 0; i < n; ++i) {
        const uint8_t* k = keys.data() + size_t(i) * job.key_bytes;
        const uint8_t* v = values.data() + size_t(i) * job.value_bytes;
        uint64_t klo, khi, vlo, vhi;
        load_words(k, job.key_bytes, klo, khi);
        load_words(v, job.value_bytes, vlo, vhi);
        sent_sum += refs::pair_checksum(refs::U128{klo, khi}, refs::U128{vlo, vhi});
        if (job.complex_key) {
          std::memcpy(row.data(), k, job.key_bytes);
          dict_sum += refs::pair_checksum(refs::U128{klo, khi}, refs::U128{vlo, vhi});
        } else {
          truncated |= khi != 0;
          std::memcpy(row.data(), &klo, 8);
          dict_sum += refs::pair_checksum(refs::U128{klo, 0}, refs::U128{vlo, vhi});
        }
        std::memcpy(row.data() + job.dict_key_bytes, v, job.value_bytes);
        out.write(row.data(), job.dict_key_bytes + job.value_bytes);
      }
      rows += n;
      const double t = refs::now_seconds() - recv0;
      if (t - last >= 0.1) {
        last = t;
        write_line(progress_line(job.layout, "load", rows, job.total_rows, t, 0));
      }
    }
    out.close();
  }
  const double receive_seconds = refs::now_seconds() - recv0;

  // The source file with every attribute, then the dictionary, not loaded
  // yet (LIFETIME(0): loaded when asked).
  if (!job.prepare.empty()) {
    query(job.prepare, "writing the attributes' source file");
    // The statement's buffers go back before the baseline, or the load
    // would reuse them unseen.
    query("SYSTEM JEMALLOC PURGE", "giving the statement's memory back");
  }
  query(job.ddl, "creating the dictionary");
  sync_files(files);

  // Baseline: chDB's own memory, with the rows on disk.
  refs::trim_malloc();
  const int64_t tracked0 = tracked();
  const int64_t rss0 = refs::current_rss();
  const bool reset = refs::reset_peak();
  const int64_t hwm0 = refs::status_hwm();
  const double kernel0 = refs::kernel_seconds();

  Sampler sampler;
  const double t0 = refs::now_seconds();
  sampler.points.push_back({0, 0, 0});
  sampler.start(job.layout, rows, job.total_rows, t0, rss0);
  chdb_result* r = chdb_query(g_conn, (std::string("SYSTEM RELOAD DICTIONARY ") + kDict).c_str(), "TSV");
  const double load_seconds = refs::now_seconds() - t0;
  sampler.join();
  if (!r || chdb_result_error(r)) {
    std::string msg = "ClickHouse loading the dictionary: " + first_line(r ? chdb_result_error(r) : "no result");
    die(msg);
  }
  chdb_destroy_query_result(r);
  const double kernel1 = refs::kernel_seconds();
  const int64_t rss1 = refs::current_rss();
  const int64_t hwm1 = refs::status_hwm();
  const int64_t tracked1 = tracked();
  int64_t peak = std::max(rss1, sampler.max_rss);
  if (hwm1 > hwm0 || (reset && hwm0 <= rss0 + (1 << 20))) peak = std::max(peak, hwm1);
  sampler.points.push_back({load_seconds, rows, rss1 - rss0});

  // What ClickHouse says of it.
  auto info = split_tabs(query(std::string("SELECT element_count, bytes_allocated, load_factor, loading_duration, "
                                           "arrayStringConcat(key.types, ',') FROM system.dictionaries WHERE name = '") +
                                   kDict + "'",
                               "reading system.dictionaries"));
  if (info.size() != 5) die("system.dictionaries has no row for " + std::string(kDict));
  const int64_t element_count = parse_i64(info[0]);
  const int64_t bytes_allocated = parse_i64(info[1]);
  const double load_factor = parse_f64(info[2]);
  const double loading_duration = parse_f64(info[3]);
  const std::string key_types = info[4];

  // Its allocator's free pages given back. One purge right after the load
  // usually returns the rehash's freed tables, but not always: once, on a
  // clean clone's test run, HASHED at 1e7 kept 937 MB after it, its 537 MB
  // table and its two previous ones (the 402 MB it had freed). So purge
  // again, 200 ms apart, until RSS stops falling (by 1 MiB), at most 6
  // purges; the usual case costs one more purge and 200 ms.
  int64_t rss_purged = INT64_MAX;
  for (int i = 0; i < 6; i++) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    query("SYSTEM JEMALLOC PURGE", "purging its allocator");
    const int64_t rss = refs::current_rss();
    const bool fell = rss < rss_purged - (int64_t(1) << 20);
    rss_purged = std::min(rss_purged, rss);
    if (!fell) break;
  }

  // Verify: ClickHouse holds the rows written, no more, no less.
  const std::string lab_key = job.key_check.empty() ? "key" : job.key_check;
  auto check = split_tabs(query("SELECT count(), sum(" + checksum_sql(lab_key, job.dict_key_bytes, job.value_column, job.value_bytes) +
                                    ") FROM dictionary('" + kDict + "')",
                                "reading the dictionary back"));
  if (check.size() != 2) die("reading the dictionary back: no count and checksum");
  const int64_t held = parse_i64(check[0]);
  const uint64_t held_sum = std::strtoull(check[1].c_str(), nullptr, 10);
  if (held != element_count) {
    die("ClickHouse's dictionary has " + std::to_string(held) + " pairs but system.dictionaries says " +
        std::to_string(element_count));
  }
  if (held == rows && held_sum != dict_sum) {
    char buf[300];
    std::snprintf(buf, sizeof buf,
                  "ClickHouse's dictionary holds %" PRId64 " pairs with checksum %016" PRIx64
                  ", the %" PRId64 " rows written have %016" PRIx64,
                  held, held_sum, rows, dict_sum);
    die(buf);
  }

  // A reload, as ClickHouse reloads a dictionary in service: the new
  // version is built while the old one still answers, so both are held at
  // the peak. The peak is the process's high-water mark over the reload
  // (VmHWM reset through clear_refs; the sampler's maximum where it cannot
  // be), above the baseline before the first load.
  int64_t reload_peak = -1;
  double reload_seconds = 0;
  if (job.reload) {
    refs::reset_peak();
    Sampler rs;
    const double r0 = refs::now_seconds();
    rs.start(job.layout, rows, job.total_rows, r0, rss0);
    query(std::string("SYSTEM RELOAD DICTIONARY ") + kDict, "reloading the dictionary", &reload_seconds);
    rs.join();
    reload_peak = std::max(std::max(refs::status_hwm(), rs.max_rss), refs::current_rss()) - rss0;
  }

  // Read phase.
  int64_t lookups = 0, found = 0;
  double read_seconds = 0, read_all_seconds = 0;
  std::string read_sum;
  if (!job.no_read) {
    write_line(progress_line(job.layout, "read", rows, job.total_rows, load_seconds, refs::current_rss() - rss0));
    uint64_t head[2];
    refs::read_exact(head, sizeof head, "the read phase's counts");
    if (head[1] != 0) die("read: ClickHouse's dictionaries are read with loaded keys only (--miss-rate 0)");
    {
      Writer out(files + "/read.bin");
      for (;;) {
        const uint32_t n = frame_size("a read frame", "keys");
        if (n == 0) break;
        refs::read_exact(keys.data(), size_t(n) * job.key_bytes, "a read frame's keys");
        for (uint32_t i = 0; i < n; ++i) {
          const uint8_t* k = keys.data() + size_t(i) * job.key_bytes;
          if (job.complex_key) {
            out.write(k, job.key_bytes);
          } else {
            uint64_t klo, khi;
            load_words(k, job.key_bytes, klo, khi);
            out.write(&klo, 8);
          }
        }
        lookups += n;
      }
      out.close(true);
    }
    if (uint64_t(lookups) != head[0]) die("protocol: the lab announced " + std::to_string(head[0]) + " keys and sent " + std::to_string(lookups));
    // The keys in the lab's order: one thread reads the file, one inserts.
    // A derived key's columns are made here, before the timed read.
    const bool derived = !job.key_columns.empty();
    query(std::string("CREATE TABLE ") + kReadTable + " (" + (derived ? job.key_columns : "key " + job.dict_key_type) + ") ENGINE = Memory",
          "making the read's table");
    query(std::string("INSERT INTO ") + kReadTable + " SELECT " + (derived ? job.key_select : "key") + " FROM file('read.bin', 'RowBinary', 'key " +
              job.dict_key_type + "') SETTINGS max_threads = 1, max_insert_threads = 1",
          "copying the read's keys");
    const std::string key_arg = derived ? job.key_args : job.complex_key ? "tuple(key)" : "key";
    const std::string get = std::string("dictGet('") + kDict + "', '" + job.value_column + "', " + key_arg + ")";
    const std::string sum = job.value_bytes == 16 ? "sum(reinterpretAsUInt128(" + get + "))" : "sum(reinterpretAsUInt64(" + get + "))";
    read_sum = query("SELECT " + sum + " FROM " + kReadTable + " SETTINGS max_threads = 1", "reading the dictionary", &read_seconds);
    query("SELECT " + sum + " FROM " + kReadTable + " SETTINGS max_threads = " + std::to_string(job.read_threads),
          "reading the dictionary with every thread", &read_all_seconds);
    std::remove((files + "/read.bin").c_str());
    found = parse_i64(query(std::string("SELECT countIf(dictHas('") + kDict + "', " + key_arg + ")) FROM " + kReadTable,
                            "counting the read's keys found"));
  }

  const int64_t duplicates = rows - element_count;
  const int64_t bucket_count = load_factor > 0 ? int64_t(double(element_count) / load_factor + 0.5) : 0;
  std::string out = "{\"result\":{";
  char buf[4096];
  std::snprintf(
      buf, sizeof buf,
      "\"layout\":%s,\"rows\":%" PRId64 ",\"element_count\":%" PRId64 ",\"duplicates\":%" PRId64
      ",\"bucket_count\":%" PRId64 ",\"load_factor\":%s,\"bytes_allocated\":%" PRId64
      ",\"heap_bytes\":%" PRId64 ",\"rss_bytes\":%" PRId64 ",\"peak_rss_bytes\":%" PRId64
      ",\"load_seconds\":%s,\"load_kernel_seconds\":%s,\"load_rows_per_second\":%s"
      ",\"read_seconds\":%s,\"read_rows_per_second\":%s,\"found_rate\":%s,\"checksum\":\"%016" PRIx64 "\""
      ",\"repeats\":1,\"isolated\":true,\"runtime\":\"native\""
      ",\"workers\":[{\"shard\":0,\"rows\":%" PRId64 ",\"busy_seconds\":%s,\"wait_seconds\":%s,\"rows_per_second\":%s}]"
      ",\"clickhouse\":{\"version\":%s,\"ddl\":%s,\"key_types\":%s,\"loading_duration_seconds\":%s"
      ",\"baseline_rss_bytes\":%" PRId64 ",\"rss_purged_bytes\":%" PRId64 ",\"tracked_bytes\":%" PRId64
      ",\"receive_seconds\":%s,\"read_threads\":%d,\"read_all_threads_seconds\":%s,\"read_all_threads_rows_per_second\":%s"
      ",\"read_sum\":%s,\"key_cut\":%s,\"sent_checksum\":\"%016" PRIx64 "\""
      ",\"reload_peak_rss_bytes\":%" PRId64 ",\"reload_seconds\":%s}",
      json_string(job.layout).c_str(), rows, element_count, duplicates, bucket_count,
      json_number(load_factor).c_str(), bytes_allocated, tracked1 - tracked0, rss1 - rss0, peak - rss0,
      json_number(load_seconds).c_str(), json_number(kernel0 >= 0 && kernel1 >= kernel0 ? kernel1 - kernel0 : 0).c_str(),
      json_number(load_seconds > 0 ? double(rows) / load_seconds : 0).c_str(), json_number(read_seconds).c_str(),
      json_number(read_seconds > 0 ? double(lookups) / read_seconds : 0).c_str(),
      json_number(lookups > 0 ? double(found) / double(lookups) : 0).c_str(), held_sum, rows,
      json_number(load_seconds).c_str(), json_number(receive_seconds).c_str(),
      json_number(load_seconds > 0 ? double(rows) / load_seconds : 0).c_str(), json_string(version).c_str(),
      json_string(job.ddl).c_str(), json_string(key_types).c_str(), json_number(loading_duration).c_str(), rss0,
      rss_purged - rss0, tracked1 - tracked0, json_number(receive_seconds).c_str(), job.read_threads,
      json_number(read_all_seconds).c_str(),
      json_number(read_all_seconds > 0 ? double(lookups) / read_all_seconds : 0).c_str(), json_string(read_sum).c_str(),
      truncated ? "true" : "false", sent_sum, reload_peak, json_number(reload_seconds).c_str());
  out += buf;
  out += ",\"timeline\":[";
  for (size_t i = 0; i < sampler.points.size(); ++i) {
    const TimePoint& p = sampler.points[i];
    std::snprintf(buf, sizeof buf, "%s{\"seconds\":%s,\"rows\":%" PRId64 ",\"rss_bytes\":%" PRId64 "}", i ? "," : "",
                  json_number(p.seconds).c_str(), p.rows, p.rss);
    out += buf;
  }
  out += "]}}";
  write_line(out);
  finish(0);
}

// describe starts ClickHouse in a folder of its own and says its version.
int describe() {
  const char* base = std::getenv("TMPDIR");
  std::string t = std::string(base && *base ? base : "/tmp") + "/packlab-ch-describe-XXXXXX";
  std::vector<char> path(t.begin(), t.end());
  path.push_back(0);
  if (!::mkdtemp(path.data())) {
    std::fprintf(stderr, "packlab-ch: making a folder in %s: %s\n", base ? base : "/tmp", std::strerror(errno));
    return 1;
  }
  g_dir = path.data();
  connect(g_dir);
  const std::string version = query("SELECT version()", "telling its version");
  write_line("{\"protocol\":" + std::to_string(kProtocol) + ",\"clickhouse\":" + json_string(version) + "}");
  finish(0);
}

}  // namespace chw

int main(int argc, char** argv) {
  return refs::worker_main(argc, argv, "packlab-ch", chw::describe, chw::serve);
}
