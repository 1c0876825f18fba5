/* The process's lifetime: start (constructor), end (exit, fatal signals, exec), fork. */
#include "hotpath.h"
#include "streams.h"
#include "counters.h"
#include "launchers.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

static atomic_int ended;

#define MAX_HOOKS 4
static const struct plx_process_hooks *hooks[MAX_HOOKS];
static int nhooks;

void plx_process_hooks_add(const struct plx_process_hooks *h)
{
    if (nhooks < MAX_HOOKS)
        hooks[nhooks++] = h;
}
static _Atomic pid_t writer;
/* Signals whose default action ends the process (SIGPROF, SIGVTALRM and SIGTRAP are left to
 * profilers and debuggers). */
static const int fatal_signals[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGTERM, SIGINT,
                                    SIGQUIT, SIGHUP, SIGPIPE, SIGALRM, SIGUSR1, SIGUSR2, SIGXCPU,
                                    SIGXFSZ, SIGSYS};
#define NSIGNALS (sizeof fatal_signals / sizeof fatal_signals[0])

void plx_warn(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = snprintf(msg, sizeof msg, "plx: ");
    n += vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof msg - 2)
        n = (int)sizeof msg - 2;
    msg[n++] = '\n';
    sigset_t mask; /* stderr may be a file past a file size limit: no SIGXFSZ from a warning */
    int pending;
    plx_fsize_hold(&mask, &pending);
    ssize_t w = plx_sys_write(2, msg, (size_t)n);
    (void)w;
    plx_fsize_release(&mask, pending);
}

static void write_calibration(void)
{
    uint64_t ticks = plx_ticks();
    struct plx_rec rec;
    plx_rec_init(&rec);
    plx_enc_calibration(&rec, ticks, plx_monotonic_ns());
    plx_rec_write(&rec, 0);
}

static void write_process_info(void)
{
    struct plx_rec rec;
    plx_rec_init(&rec);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char host[256] = "localhost";
    gethostname(host, sizeof host - 1);
    host[255] = 0;
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    /* argv from /proc: NUL-separated */
    static char args[65536];
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    ssize_t len = fd >= 0 ? plx_sys_read(fd, args, sizeof args - 1) : 0;
    if (fd >= 0)
        plx_sys_close(fd);
    if (len < 0)
        len = 0;
    args[len] = 0;
    uint32_t argc = 0; /* the strings the loop below appends (a cut last one included) */
    for (ssize_t i = 0; i < len; i += (ssize_t)strlen(args + i) + 1)
        argc++;
    plx_enc_process_info(&rec, (uint32_t)getpid(), (uint32_t)getppid(),
                         (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec,
                         (uint8_t)plx_clock_kind, host, PLX_VERSION, exe, argc);
    for (ssize_t i = 0; i < len; i += (ssize_t)strlen(args + i) + 1)
        plx_enc_process_info_argv(&rec, args + i);
    plx_rec_write(&rec, 0);
    plx_enc_clock_rate(&rec, plx_clock_rate());
    plx_rec_write(&rec, 0);
    write_calibration();
}

static void write_filter_text(void)
{
    const char *text = plx_filter_text();
    if (!text)
        return;
    struct plx_rec rec;
    plx_rec_init(&rec);
    plx_enc_filter(&rec, text);
    plx_rec_write(&rec, 0);
}

/* A WriteFailures record (spec/format.md) for each file whose writes failed, and a warning:
 * what could not be written is lost, never silently. */
static void write_failures(struct plx_rec *rec)
{
    static const char *const names[2] = {"process.plx", "trace.plx"};
    for (int f = 0; f < 2; f++) {
        uint64_t bytes = 0;
        int err = 0;
        uint64_t n = plx_writer_failures(f, &bytes, &err);
        if (n == 0)
            continue;
        plx_enc_write_failures(rec, (uint8_t)f, n, bytes, err);
        plx_warn("%s/%s: %llu writes (%llu bytes) failed: %s", plx_process_dir, names[f],
                 (unsigned long long)n, (unsigned long long)bytes, strerror(err));
    }
}

/* Writes everything and the ProcessEnd record; runs once, from exit, a signal or exec.
 * `ended`: 0 running, 1 being written (by thread `writer`), 2 written. A second caller on
 * another thread (a signal delivered twice, exit racing a signal) waits until the first has
 * finished, so nobody re-raises a fatal signal while the experiment is half written; the
 * writing thread itself, re-entered by a nested signal, returns at once. */
void plx_process_end(int reason, int status)
{
    int expected = 0;
    if (!atomic_compare_exchange_strong(&ended, &expected, 1)) {
        if (expected == 1 && atomic_load(&writer) != (pid_t)syscall(SYS_gettid))
            for (int i = 0; i < 5000 && atomic_load(&ended) == 1; i++) {
                struct timespec ms = {0, 1000000};
                plx_real_nanosleep(&ms, NULL);
            }
        return;
    }
    atomic_store(&writer, (pid_t)syscall(SYS_gettid));
    if (!plx_active) {
        atomic_store(&ended, 2);
        return;
    }
    /* nothing the runtime calls while it writes is recorded (the thread records nothing after) */
    if (plx_self)
        plx_self->guard++;
    plx_ext_process_ending();
    plx_sampler_stop(); /* its final sample reads the threads before they are finished */
    plx_stack_sampler_stop();
    plx_active = 0;
    plx_threads_finish_all();
    plx_live_pool_remove();
    plx_writer_open_end_room(); /* for the records below, whatever room the threads left */
    write_calibration();
    struct plx_rec rec;
    plx_rec_init(&rec);
    write_failures(&rec);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    plx_enc_process_end(&rec, plx_ticks(), (uint8_t)reason, status,
                        (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec);
    plx_rec_write(&rec, 0);
    plx_writer_trim();
    plx_writer_close_end_room();
    plx_writer_close();
    for (int i = 0; i < nhooks; i++)
        if (hooks[i]->finished)
            hooks[i]->finished();
    atomic_store(&ended, 2);
    if (plx_cfg.verbose)
        plx_warn("experiment written to %s (%llu hook calls removed)", plx_process_dir,
                 (unsigned long long)plx_patched_sites());
}

static void on_exit_handler(int status, void *arg)
{
    (void)arg;
    plx_process_end(0, status);
}

static void on_fatal_signal(int sig)
{
    plx_process_end(1, sig);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* The process whose state this memory holds: a vfork()ed child shares the memory (and runs
 * no atfork handler) but has another pid. */
static pid_t measured_pid;

int plx_process_is_ours(void)
{
    return getpid() == measured_pid;
}

static void reset_child(void)
{
    plx_writer_close();
    if (plx_writer_open() != 0) {
        plx_active = 0;
        return;
    }
    atomic_store(&ended, 0);
    atomic_store(&writer, 0);
    write_process_info();
    plx_modules_rewrite();
    plx_regions_rewrite();
    write_filter_text();
    plx_counters_rewrite();
    plx_sync_objects_after_fork();
    plx_threads_after_fork();
    plx_stack_sampler_after_fork(plx_self);
    plx_streams_after_fork();
    plx_sampler_after_fork();
    for (int i = 0; i < nhooks; i++)
        if (hooks[i]->after_fork)
            hooks[i]->after_fork();
}

/* The child's state is rebuilt with the thread's guard held: what the runtime calls meanwhile
 * (munmap of the parent's live files, which UCX hooks and answers with pthread_rwlock_unlock)
 * may reach an interposed function, which must pass straight through, never record into a
 * thread state half reset. */
static void after_fork_child(void)
{
    measured_pid = getpid();
    if (!plx_active)
        return;
    struct plx_thread *self = plx_self;
    if (self)
        self->guard++;
    reset_child();
    if (self && plx_self == self)
        self->guard--;
}

static int attached; /* started by plx attach: served on the control socket */

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* What this process runs (launchers.c): a launcher or helper by its executable, or by the name
 * it was started by (argv[0], a launcher started through a link of another name). `exe` gets
 * the executable's path, links followed. */
static int launcher_kind(char *exe, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", exe, size - 1);
    exe[n > 0 ? n : 0] = 0;
    int kind = plx_launcher_kind(base_name(exe));
    if (kind != PLX_LAUNCHER_NONE)
        return kind;
    char argv0[4096];
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    ssize_t len = fd >= 0 ? plx_sys_read(fd, argv0, sizeof argv0 - 1) : 0;
    if (fd >= 0)
        plx_sys_close(fd);
    argv0[len > 0 ? len : 0] = 0;
    return plx_launcher_kind(base_name(argv0));
}

/* A job launcher whose ranks would miss the MPI wrappers: one started by a command plx run did
 * not know for a launcher (a script that runs mpirun), when LD_PRELOAD has libplx.so and no
 * wrapper. Its ranks inherit its environment, so the wrapper library of its MPI (by its
 * executable `exe`), beside libplx.so, is added to its LD_PRELOAD, as plx run adds it for a
 * launcher it starts itself (plx-cli mpi_detect.rs). Called at the start, before the launcher
 * runs a thread or a child. */
static void launcher_add_wrappers(const char *exe)
{
    const char *preload = plx_env_preload();
    Dl_info dl;
    if (!preload || strstr(preload, "libplx-mpi") || !dladdr((void *)&plx_active, &dl) ||
        !dl.dli_fname || !strstr(preload, dl.dli_fname))
        return;
    const char *slash = strrchr(dl.dli_fname, '/');
    char lib[4096], value[16384];
    int n = slash ? snprintf(lib, sizeof lib, "%.*s/%s", (int)(slash - dl.dli_fname),
                             dl.dli_fname, plx_mpi_wrapper(plx_launcher_mpi(base_name(exe))))
                  : -1;
    if (n <= 0 || (size_t)n >= sizeof lib || access(lib, R_OK) != 0)
        return;
    n = snprintf(value, sizeof value, "%s:%s", preload, lib);
    if (n > 0 && (size_t)n < sizeof value)
        setenv("LD_PRELOAD", value, 1);
}

/* Starts measuring this process (the constructor, or plx attach): 0, or -1 with a warning. A
 * second start after plx_attach_stop writes a new experiment: modules and regions known from
 * the first are written again. */
static int measure_start(int again)
{
    plx_clock_init();
    measured_pid = getpid();
    if (!attached) {
        char exe[4096];
        int kind = launcher_kind(exe, sizeof exe);
        plx_launcher = kind != PLX_LAUNCHER_NONE;
        if (kind == PLX_LAUNCHER_JOB)
            launcher_add_wrappers(exe);
    } else {
        plx_launcher = 0;
    }
    if (plx_writer_open() != 0)
        return -1;
    write_process_info();
    plx_symbols_init();
    if (again) {
        plx_modules_rewrite();
        plx_regions_rewrite();
    } else if (plx_regions_init() != 0) {
        plx_warn("cannot reserve memory for the region table; nothing is measured");
        return -1;
    }
    if (plx_cfg.filter[0]) {
        plx_filter_load(plx_cfg.filter);
        write_filter_text();
    }
    plx_counters_init();
    if (!plx_launcher) /* no signal handler of ours in a launcher: it forwards signals to its job */
        plx_stack_sampler_init();
    plx_active = 1;
    plx_thread_attach();
    for (int i = 0; i < nhooks; i++)
        if (hooks[i]->started)
            hooks[i]->started(attached);
    static int handlers; /* once per process, however many attaches */
    if (!handlers) {
        handlers = 1;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fatal_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_NODEFER;
        for (size_t i = 0; i < NSIGNALS; i++) {
            struct sigaction old;
            /* a handler the program installed before us stays */
            if (sigaction(fatal_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
                sigaction(fatal_signals[i], &sa, NULL);
        }
        on_exit(on_exit_handler, NULL);
        pthread_atfork(NULL, NULL, after_fork_child);
    }
    if (!plx_launcher)
        plx_sampler_start();
    return 0;
}

__attribute__((constructor(102))) static void plx_process_init(void)
{
    if (plx_config_load() != 0)
        return; /* not under `plx run`: nothing is measured (or loaded by plx attach) */
    measure_start(0);
}

uint32_t plx_attach_generation;

int plx_process_attach(const char *settings)
{
    static int starts;
    if (plx_active)
        return -1;
    if (plx_config_load_from(settings) != 0)
        return -2;
    attached = 1;
    plx_attach_generation++;
    plx_self = NULL; /* this thread's state of an earlier attach is finished */
    atomic_store(&ended, 0);
    atomic_store(&writer, 0);
    return measure_start(starts++ > 0) != 0 ? -3 : 0;
}
