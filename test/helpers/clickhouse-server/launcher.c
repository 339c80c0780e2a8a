/*
 * Runs clickhouse-local from the chdb engine library with a full command line: argv[1] is the path
 * of libchdb.so, the rest are clickhouse-local's arguments. Given listen ports and a query that
 * starts the listeners and then runs until the process is signalled, the process is a real
 * ClickHouse server (HTTP and native TCP). Compiled at test time (clickhouse-server.ts).
 */
#include <dlfcn.h>
#include <stdio.h>

typedef void *(*cmdline_fn)(int, char **);
typedef const char *(*error_fn)(void *);

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s LIBCHDB CLICKHOUSE_LOCAL_ARGS...\n", argv[0]);
    return 2;
  }
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
  if (!lib) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 2;
  }
  cmdline_fn run = (cmdline_fn)dlsym(lib, "chdb_query_cmdline");
  error_fn error = (error_fn)dlsym(lib, "chdb_result_error");
  if (!run) {
    fprintf(stderr, "dlsym chdb_query_cmdline: %s\n", dlerror());
    return 2;
  }
  argv[1] = "clickhouse";
  void *result = run(argc - 1, argv + 1);
  const char *message = result && error ? error(result) : NULL;
  if (!result || message) {
    fprintf(stderr, "%s\n", message ? message : "chdb_query_cmdline failed");
    return 1;
  }
  return 0;
}
