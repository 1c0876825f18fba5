/* A simple co-scheduler (gang scheduler), as in the IPS-2 paper's psim study: processes
 * register themselves with an application id over a Unix socket; every quantum the
 * co-scheduler lets the processes of one application run (SIGCONT) and stops the others
 * (SIGSTOP), taking the applications in turn, so that all processes of one application are
 * scheduled together and never spin at a barrier waiting for a descheduled partner.
 *
 *   cosched PATH [QUANTUM_MS] [APPS]     defaults: 100 ms; 2 applications
 *
 * It exits once APPS applications have registered and all their processes have ended (or on
 * SIGINT/SIGTERM), continuing every process it stopped. A registration is one line
 * "APP PID\n"; the answer is one byte once the process is scheduled or stopped. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_PROCS 256
#define MAX_APPS 16

static struct proc {
    int pid;
    int app;
    int alive;
} procs[MAX_PROCS];
static int nprocs;
static char apps[MAX_APPS][64];
static int napps;
static volatile sig_atomic_t stop_requested;

static int app_index(const char *name)
{
    for (int i = 0; i < napps; i++)
        if (strcmp(apps[i], name) == 0)
            return i;
    if (napps == MAX_APPS)
        return -1;
    snprintf(apps[napps], sizeof apps[napps], "%s", name);
    return napps++;
}

/* A zombie (ended, not yet reaped by its launcher) counts as ended. */
static int alive(int pid)
{
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

static void set_running(int app)
{
    for (int i = 0; i < nprocs; i++)
        if (procs[i].alive)
            kill(procs[i].pid, procs[i].app == app ? SIGCONT : SIGSTOP);
}

static void continue_all(void)
{
    for (int i = 0; i < nprocs; i++)
        if (procs[i].alive)
            kill(procs[i].pid, SIGCONT);
}

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: cosched PATH [QUANTUM_MS] [APPS]\n");
        return 2;
    }
    const char *path = argv[1];
    double quantum = argc > 2 ? atof(argv[2]) : 100;
    int expect = argc > 3 ? atoi(argv[3]) : 2;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGPIPE, SIG_IGN);

    int ls = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    unlink(path);
    if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof a) != 0 || listen(ls, 64) != 0) {
        perror("cosched");
        return 1;
    }
    int current = -1;
    double switched = now_ms();
    long switches = 0;
    while (!stop_requested) {
        struct pollfd pfd = {.fd = ls, .events = POLLIN};
        double left = switched + quantum - now_ms();
        int r = poll(&pfd, 1, left > 1 ? (int)left : 1);
        if (r > 0 && (pfd.revents & POLLIN)) {
            int c = accept(ls, NULL, NULL);
            char line[128] = {0};
            ssize_t n = c >= 0 ? read(c, line, sizeof line - 1) : -1;
            char name[64];
            int pid;
            if (n > 0 && sscanf(line, "%63s %d", name, &pid) == 2 && nprocs < MAX_PROCS) {
                int ai = app_index(name);
                if (ai >= 0) {
                    procs[nprocs++] = (struct proc){pid, ai, 1};
                    if (current < 0)
                        current = ai;
                    if (ai != current)
                        kill(pid, SIGSTOP);
                }
            }
            if (c >= 0) {
                (void)!write(c, "k", 1);
                close(c);
            }
        }
        if (now_ms() < switched + quantum)
            continue;
        int living = 0;
        for (int i = 0; i < nprocs; i++) {
            if (procs[i].alive && !alive(procs[i].pid))
                procs[i].alive = 0;
            living += procs[i].alive;
        }
        if (napps >= expect && living == 0)
            break;
        /* the next application that still has a process */
        for (int k = 1; k <= napps; k++) {
            int cand = (current + k) % napps;
            int has = 0;
            for (int i = 0; i < nprocs; i++)
                has |= procs[i].alive && procs[i].app == cand;
            if (has) {
                if (cand != current)
                    switches++;
                current = cand;
                break;
            }
        }
        set_running(current);
        switched = now_ms();
    }
    continue_all();
    unlink(path);
    printf("cosched: %d application(s), %d process(es), %ld switches\n", napps, nprocs, switches);
    return 0;
}
