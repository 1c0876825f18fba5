/* exec() and _exit(): the experiment is written before the process image goes away. */
#include "../core/plx_internal.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#define PLX_EXPORT __attribute__((visibility("default")))

extern char **environ;

static void *next(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

/* Finalises before the image is replaced; if exec fails the process goes on unmeasured. A
 * vfork()ed child's exec replaces no measured image: the state in its memory is its parent's,
 * still running, and is left alone (the child's new image measures itself). */
static void before_exec(void)
{
    if (plx_process_is_ours())
        plx_process_end(2, 0);
}

PLX_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    static int (*real)(const char *, char *const[], char *const[]);
    if (!real)
        real = (int (*)(const char *, char *const[], char *const[]))next("execve");
    before_exec();
    return real(path, argv, envp);
}

PLX_EXPORT int execv(const char *path, char *const argv[])
{
    return execve(path, argv, environ);
}

PLX_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    static int (*real)(const char *, char *const[], char *const[]);
    if (!real)
        real = (int (*)(const char *, char *const[], char *const[]))next("execvpe");
    before_exec();
    return real(file, argv, envp);
}

PLX_EXPORT int execvp(const char *file, char *const argv[])
{
    return execvpe(file, argv, environ);
}

/* The execl family gathers its arguments into an argv. */
#define GATHER_ARGS(first, ap, argv)                                                          \
    size_t n = 1;                                                                          \
    va_start(ap, first);                                                                   \
    while (va_arg(ap, char *))                                                             \
        n++;                                                                               \
    va_end(ap);                                                                            \
    char **argv = alloca((n + 1) * sizeof(char *));                                        \
    argv[0] = (char *)(first);                                                             \
    va_start(ap, first);                                                                   \
    for (size_t i = 1; i <= n; i++)                                                        \
        argv[i] = va_arg(ap, char *);

PLX_EXPORT int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    GATHER_ARGS(arg, ap, argv)
    va_end(ap);
    return execve(path, argv, environ);
}

PLX_EXPORT int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    GATHER_ARGS(arg, ap, argv)
    va_end(ap);
    return execvpe(file, argv, environ);
}

PLX_EXPORT int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    GATHER_ARGS(arg, ap, argv)
    char **envp = va_arg(ap, char **);
    va_end(ap);
    return execve(path, argv, envp);
}

PLX_EXPORT void _exit(int status)
{
    static void (*real)(int);
    if (!real)
        real = (void (*)(int))next("_exit");
    if (plx_process_is_ours())
        plx_process_end(0, status);
    real(status);
    __builtin_unreachable();
}
