// packlab-chserver: a ClickHouse server for packlab's tests, from the same
// libchdb.so as packlab-ch (ClickHouse 26.7's clickhouse-local, which opens
// real TCP and HTTP listeners on SYSTEM START LISTEN since ClickHouse PR
// #101143).
//
// usage: packlab-chserver PATH TCP_PORT HTTP_PORT CONFIG_XML
//
// It serves on 127.0.0.1 only (clickhouse-local's listeners have no
// authentication), with its own data folder PATH, until it is killed; it
// dies with its parent (PR_SET_PDEATHSIG), so a test that crashes leaves no
// server behind. CONFIG_XML must be valid XML (<clickhouse></clickhouse> at
// least): a cluster's nodes share its <remote_servers>.
//
// The listeners exist only while a query runs (it must be started through
// chdb_query_cmdline, clickhouse-local's command line: through a connection
// SYSTEM START LISTEN fails, "start_servers_callback is not set"), so the
// statement list ends with a query that sleeps for about 30 years.
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

// chDB's C API (programs/local/chdb.h at v26.7.3), the calls this program
// makes, declared exactly.
typedef struct chdb_result_ chdb_result;
chdb_result* chdb_query_cmdline(int argc, char** argv);
char* chdb_result_buffer(chdb_result* result);
size_t chdb_result_length(chdb_result* result);
const char* chdb_result_error(chdb_result* result);
void chdb_set_signal_handlers_enabled(int enabled);

static int port(const char* s) {
  char* end;
  long p = strtol(s, &end, 10);
  return *s && !*end && p > 0 && p < 65536 ? (int)p : 0;
}

int main(int argc, char** argv) {
  if (argc != 5 || !port(argv[2]) || !port(argv[3])) {
    fprintf(stderr, "usage: packlab-chserver PATH TCP_PORT HTTP_PORT CONFIG_XML\n");
    return 2;
  }
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() == 1) return 1;  // the parent died before the line above
  chdb_set_signal_handlers_enabled(0);  // a crash ends the process at once
  char path[4096], tcp[64], http[64], config[4096];
  if (snprintf(path, sizeof path, "--path=%s", argv[1]) >= (int)sizeof path ||
      snprintf(config, sizeof config, "--config-file=%s", argv[4]) >= (int)sizeof config) {
    fprintf(stderr, "packlab-chserver: a path is too long\n");
    return 2;
  }
  snprintf(tcp, sizeof tcp, "--tcp_port=%d", port(argv[2]));
  snprintf(http, sizeof http, "--http_port=%d", port(argv[3]));
  char query[] =
      "--query=SYSTEM START LISTEN TCP; SYSTEM START LISTEN HTTP; "
      "SELECT max(sleepEachRow(1)) FROM numbers(1000000000) "
      "SETTINGS function_sleep_max_microseconds_per_block=0, max_block_size=1";
  char* args[] = {"clickhouse", path, config, "--listen_host=127.0.0.1", tcp, http, "--multiquery", query, NULL};
  chdb_result* r = chdb_query_cmdline(8, args);
  const char* e = r ? chdb_result_error(r) : "no result";
  if (e) {
    fprintf(stderr, "packlab-chserver: %s\n", e);
    return 1;
  }
  return 0;
}
