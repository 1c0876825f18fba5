/* A profiling timer fires every 50 us while the main thread calls work() 200000 times; the
 * handler runs measured code (in_handler → leaf) in a tight loop. The runtime must skip the
 * handler's events when they land inside its own work and stay exact otherwise. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
static volatile unsigned long sink, signals;
void leaf(void) { sink++; }
void in_handler(void) { for (int i = 0; i < 10; i++) leaf(); }
static void on_prof(int sig) { (void)sig; signals++; in_handler(); }
void work(void) { for (int i = 0; i < 1000; i++) sink += i; }
int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_prof;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
    struct itimerval it = {{0, 50}, {0, 50}};
    setitimer(ITIMER_PROF, &it, NULL);
    for (int i = 0; i < 200000; i++)
        work();
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &off, NULL);
    printf("%lu signals\n", signals);
    return signals > 0 ? 0 : 1;
}
