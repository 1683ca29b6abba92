// The part of chDB's C API (programs/local/chdb.h in github.com/chdb-io/chdb,
// at the tag of the release the Makefile pins, v26.7.3) that packlab-ch
// calls. The npm package carries the library, not its header, so the
// declarations are copied here exactly: a guessed prototype (1.x's
// chdb_connect(const char *path), say) links and then crashes.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

typedef struct chdb_connection_ {
  void* internal_data;
} * chdb_connection;

typedef struct chdb_result_ chdb_result;

// chdb_connect takes clickhouse-local's command line ({"clickhouse",
// "--path=DIR", ...}); NULL on failure. One storage path per process.
chdb_connection* chdb_connect(int argc, char** argv);
void chdb_close_conn(chdb_connection* conn);

// chdb_query runs one statement; the result's error is NULL when it worked.
chdb_result* chdb_query(chdb_connection conn, const char* query, const char* format);
void chdb_destroy_query_result(chdb_result* result);
char* chdb_result_buffer(chdb_result* result);
size_t chdb_result_length(chdb_result* result);
const char* chdb_result_error(chdb_result* result);

// chdb_set_signal_handlers_enabled(0), before chdb_connect, keeps
// ClickHouse's handlers of deadly signals out (they sleep for minutes
// before re-raising, so a crash would look like a hang), and resets SIGSEGV,
// SIGABRT, SIGBUS, ... to their defaults: a crash ends the worker at once
// and the lab reports it.
void chdb_set_signal_handlers_enabled(int enabled);
}
