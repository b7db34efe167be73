/* cpuexec-info: what libcpuexec sees on this machine and what a policy
 * resolves to. Prints the topology summary, the OpenMP runtimes present,
 * the threaded libraries installed and what the runtime guards do with
 * each, and the resolution of the default policy (or of --policy), in text
 * or JSON. Bad input: the library's message on stderr and exit status 2. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <io.h>
#define access _access
#define F_OK 0
#else
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include <cpuexec.h>
#include <cpuexec/compat/libraries.h>

#include "info_bench.h"
#include "info_openmp.h"
#include "info_runtimes.h"

#define EXIT_BAD_INPUT 2

typedef struct info_options {
  const char *policy;   /* --policy TEXT, NULL: the process default (CPUEXEC_POLICY) */
  const char *topology; /* --topology FILE.xml or fixture DIR, NULL: this machine */
  bool json;
  bool help;
  bool version; /* --version: the library's version, the one loaded at run time */
  bool bench; /* --bench: dispatch overhead next to OpenMP, and counters */
  bool node;  /* --node: the node budget only */
} info_options;

static void usage(FILE *out) {
  fprintf(out,
          "usage: cpuexec-info [--policy TEXT] [--topology FILE.xml|DIR] [--json] [--bench] [--node] [--help] [--version]\n"
          "       cpuexec-info --openmp-report PROGRAM [ARGS...]\n"
          "       cpuexec-info --libraries-report PROGRAM [ARGS...]\n"
          "\n"
          "Prints the process-visible CPU topology, the OpenMP runtimes present, the threaded\n"
          "libraries installed (OpenBLAS, BLIS, oneTBB, MKL) and whether the runtime guards keep\n"
          "their calls inside callbacks inline, and the resolution of the default policy\n"
          "(CPUEXEC_POLICY, else the defaults).\n"
          "\n"
          "  --policy TEXT      resolve TEXT instead, e.g. num_threads=4,affinity_policy=physical_cores\n"
          "  --topology PATH    resolve against a stored hwloc XML topology instead of this machine;\n"
          "                     a directory holds topology.xml and, optionally, a cgroup fixture:\n"
          "                     proc-self-cgroup (\"0::/path\") and cgroup/<path>/cpu.max\n"
          "  --json             one JSON object instead of text\n"
          "  --bench            time the default executor's dispatch next to the OpenMP runtimes\n"
          "                     installed (a few seconds), then show its counters for a short run\n"
          "  --node             the node budget only: its size, where it came from, who holds what,\n"
          "                     and what the cgroup's quota throttled since this process joined\n"
          "  --openmp-report PROGRAM [ARGS...]\n"
          "                     run PROGRAM and print the OpenMP regions it ran, per calling function\n"
          "  --libraries-report PROGRAM [ARGS...]\n"
          "                     run PROGRAM and print which threaded libraries it loaded (FFTW, OpenCV, Eigen,\n"
          "                     pthreadpool) and whether each ran on libcpuexec\n"
          "  --help             this text\n"
          "  --version          the version of the libcpuexec this runs on\n"
          "\n"
          "Exit status: 0 success, 2 invalid input (the message names the field), 1 other failure.\n");
}

/* Returns 0, or EXIT_BAD_INPUT after printing why. */
static int parse_args(int argc, char **argv, info_options *o) {
  memset(o, 0, sizeof *o);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      o->help = true;
    } else if (strcmp(a, "--version") == 0) {
      o->version = true;
    } else if (strcmp(a, "--bench") == 0) {
      o->bench = true;
    } else if (strcmp(a, "--node") == 0) {
      o->node = true;
    } else if (strcmp(a, "--json") == 0) {
      o->json = true;
    } else if (strcmp(a, "--policy") == 0 || strcmp(a, "--topology") == 0) {
      if (i + 1 >= argc) {
        fprintf(stderr, "cpuexec-info: %s needs a value\n", a);
        return EXIT_BAD_INPUT;
      }
      *(a[2] == 'p' ? &o->policy : &o->topology) = argv[++i];
    } else if (strncmp(a, "--policy=", 9) == 0) {
      o->policy = a + 9;
    } else if (strncmp(a, "--topology=", 11) == 0) {
      o->topology = a + 11;
    } else {
      fprintf(stderr, "cpuexec-info: unknown argument \"%s\"; see --help\n", a);
      return EXIT_BAD_INPUT;
    }
  }
  return 0;
}

/* Loads the topology to report and resolve against. A directory is a
 * fixture: DIR/topology.xml with DIR/proc-self-cgroup and DIR/cgroup. */
static int load_topology(const char *path, cpuexec_topology **out) {
  if (path == NULL)
    return cpuexec_topology_load(NULL, out);
  struct stat st;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
    char xml[4096], proc[4096], root[4096];
    snprintf(xml, sizeof xml, "%s/topology.xml", path);
    snprintf(proc, sizeof proc, "%s/proc-self-cgroup", path);
    snprintf(root, sizeof root, "%s/cgroup", path);
    cpuexec_topology_options options;
    cpuexec_topology_options_init(&options);
    if (access(proc, F_OK) == 0) {
      options.proc_self_cgroup = proc;
      options.cgroup_root = root;
    }
    return cpuexec_topology_load_xml(xml, &options, out);
  }
  return cpuexec_topology_load_xml(path, NULL, out);
}

/* Reads the topology once in a child first: the library checks a file
 * before hwloc sees it and checks what hwloc made of it, but hwloc's loader
 * is not written for hostile input, so a file that still crashes the load
 * takes down the child, not this command (exit 2 with a message, never a
 * signal). The message does not guess whose code crashed. */
#ifdef _WIN32
/* Windows has no fork: the one load below is the only try. */
static bool topology_crashes_in_child(const char *path) {
  (void)path;
  return false;
}
#else
static bool topology_crashes_in_child(const char *path) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0)
    return false; /* no child: the load below is the only try */
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0)
      dup2(devnull, 2);
    cpuexec_topology *t = NULL;
    int rc = load_topology(path, &t);
    cpuexec_topology_destroy(t);
    _exit(rc == 0 ? 0 : 1);
  }
  int status;
  while (waitpid(pid, &status, 0) < 0) {
  }
  if (!WIFSIGNALED(status))
    return false;
  fprintf(stderr, "cpuexec-info: topology: reading \"%s\" crashed (signal %d, %s); it is not a usable hwloc XML "
                  "topology\n",
          path, WTERMSIG(status), strsignal(WTERMSIG(status)));
  return true;
}
#endif

/* One OpenMP runtime: is it loaded in this process, can it be loaded. */
typedef struct openmp_runtime {
  const char *soname;
  bool loaded;
  bool loadable;
} openmp_runtime;

#ifdef _WIN32
/* The DLL search order finds it (SearchPath: nothing is loaded). */
static bool loadable_in_child(const char *soname) {
  char found[MAX_PATH];
  return SearchPathA(NULL, soname, NULL, sizeof found, found, NULL) > 0;
}

static bool loaded_now(const char *soname) { return GetModuleHandleA(soname) != NULL; }

static const char *const openmp_sonames[] = {"libomp.dll", "libgomp-1.dll"};
#else
/* Loadability is tried in a child so this process never loads a runtime
 * it did not already have. */
static bool loadable_in_child(const char *soname) {
  pid_t pid = fork();
  if (pid < 0)
    return false;
  if (pid == 0) {
    /* A runtime's constructor may complain about the environment: not ours to print. */
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0)
      dup2(devnull, 2);
    _exit(dlopen(soname, RTLD_LAZY | RTLD_LOCAL) != NULL ? 0 : 1);
  }
  int status;
  while (waitpid(pid, &status, 0) < 0) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static bool loaded_now(const char *soname) {
  void *h = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD);
  if (h != NULL)
    dlclose(h);
  return h != NULL;
}

static const char *const openmp_sonames[] = {"libomp.so.5", "libgomp.so.1"};
#endif

static size_t find_openmp_runtimes(openmp_runtime *out, size_t max) {
  const char *const *sonames = openmp_sonames;
  size_t n = 0;
  for (size_t i = 0; i < sizeof openmp_sonames / sizeof openmp_sonames[0] && n < max; i++) {
    out[n].soname = sonames[i];
    out[n].loaded = loaded_now(sonames[i]);
    out[n].loadable = out[n].loaded || loadable_in_child(sonames[i]);
    n++;
  }
  return n;
}

/* describe() output into a fresh string, without the trailing newline. */
static char *describe(int (*fn)(const void *, cpuexec_format, char *, size_t), const void *object,
                      cpuexec_format format) {
  int n = fn(object, format, NULL, 0);
  char *text = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (text == NULL)
    return NULL;
  fn(object, format, text, (size_t)n + 1);
  while (n > 0 && text[n - 1] == '\n')
    text[--n] = '\0';
  return text;
}

static int describe_topology(const void *t, cpuexec_format f, char *b, size_t s) {
  return cpuexec_topology_describe(t, f, b, s);
}

static int describe_resolved(const void *r, cpuexec_format f, char *b, size_t s) {
  return cpuexec_resolved_describe(r, f, b, s);
}

static void print_report(const info_options *o, const cpuexec_topology *topology, const cpuexec_resolved *resolved) {
  openmp_runtime omp[4];
  size_t nomp = find_openmp_runtimes(omp, 4);
  cpuexec_format format = o->json ? CPUEXEC_FORMAT_JSON : CPUEXEC_FORMAT_TEXT;
  char *topo_text = describe(describe_topology, topology, format);
  char *res_text = describe(describe_resolved, resolved, format);
  if (o->json) {
    printf("{\"version\":\"%s\",\"topology\":%s,\"openmp_runtimes\":[", cpuexec_version_string(),
           topo_text != NULL ? topo_text : "null");
    for (size_t i = 0; i < nomp; i++)
      printf("%s{\"library\":\"%s\",\"loaded\":%s,\"loadable\":%s}", i ? "," : "", omp[i].soname,
             omp[i].loaded ? "true" : "false", omp[i].loadable ? "true" : "false");
    printf("]");
    fflush(stdout); /* the runtimes section forks children */
    info_runtimes_print(stdout, true);
    printf(",\"resolution\":%s}\n", res_text != NULL ? res_text : "null");
  } else {
    printf("libcpuexec %s\n\n== Topology ==\n%s\n\n== OpenMP runtimes ==\n", cpuexec_version_string(),
           topo_text != NULL ? topo_text : "(out of memory)");
    for (size_t i = 0; i < nomp; i++)
      printf("%-13s %s, %s\n", omp[i].soname, omp[i].loaded ? "loaded in this process" : "not loaded",
             omp[i].loadable ? "installed" : "not installed");
    char libraries[2048];
    if (cpuexec_libraries_describe(libraries, sizeof libraries) < 0) libraries[0] = '\0';
    printf("\n== Threaded libraries in this process (--libraries-report PROGRAM for a program's) ==\n%s", libraries);
    fflush(stdout); /* the runtimes section forks children */
    info_runtimes_print(stdout, false);
    if (o->topology == NULL) { /* this process's: not a stored machine's */
      char node[2048];
      if (cpuexec_node_budget_describe(node, sizeof node) < 0) node[0] = '\0';
      printf("\n== Node budget (CPUs shared with this user's other processes) ==\n%s\n", node);
    }
    printf("\n== Resolution of %s ==\n%s\n", o->policy != NULL ? "--policy" : "the default policy",
           res_text != NULL ? res_text : "(out of memory)");
  }
  free(topo_text);
  free(res_text);
}

/* The default command: topology, OpenMP runtimes, resolution. */
static int run_info(const info_options *o) {
  cpuexec_policy policy;
  cpuexec_policy *request = NULL;
  if (o->policy != NULL) {
    if (cpuexec_policy_parse(o->policy, &policy) != 0) {
      fprintf(stderr, "cpuexec-info: --policy: %s\n", cpuexec_error_message());
      return EXIT_BAD_INPUT;
    }
    request = &policy;
  }
  if (o->topology != NULL && topology_crashes_in_child(o->topology))
    return EXIT_BAD_INPUT;
  cpuexec_topology *topology;
  int rc = load_topology(o->topology, &topology);
  if (rc != 0) {
    fprintf(stderr, "cpuexec-info: %s\n", cpuexec_error_message());
    return o->topology != NULL ? EXIT_BAD_INPUT : EXIT_FAILURE;
  }
  cpuexec_resolved *resolved;
  rc = cpuexec_policy_resolve(request, topology, &resolved);
  if (rc != 0) {
    fprintf(stderr, "cpuexec-info: %s\n", cpuexec_error_message());
    cpuexec_topology_destroy(topology);
    return rc == CPUEXEC_EINVAL ? EXIT_BAD_INPUT : EXIT_FAILURE;
  }
  print_report(o, topology, resolved);
  cpuexec_resolved_destroy(resolved);
  cpuexec_topology_destroy(topology);
  return fflush(stdout) == 0 ? 0 : EXIT_FAILURE;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--openmp-report") == 0) /* --openmp-report PROGRAM [ARGS...] */
    return cpuexec_info_openmp_report(argc - 2, argv + 2);
  if (argc > 1 && strcmp(argv[1], "--libraries-report") == 0) /* --libraries-report PROGRAM [ARGS...] */
    return cpuexec_info_libraries_report(argc - 2, argv + 2);
  info_options o;
  int rc = parse_args(argc, argv, &o);
  if (rc != 0)
    return rc;
  if (o.help) {
    usage(stdout);
    return 0;
  }
  if (o.version) {
    printf("cpuexec-info (libcpuexec) %s\n", cpuexec_version_string());
    return 0;
  }
  if (o.bench)
    return info_bench_run(stdout);
  if (o.node) {
    char node[4096];
    if (cpuexec_node_budget_describe(node, sizeof node) < 0)
      return fprintf(stderr, "cpuexec-info: %s\n", cpuexec_error_message()), EXIT_FAILURE;
    printf("%s\n", node);
    return 0;
  }
  return run_info(&o);
}
