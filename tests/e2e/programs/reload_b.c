/* Plugin B of reload_main.c: code laid out as A's (reload_a.c), so that each function is
 * where A's was when B is loaded where A was. */
static volatile unsigned long sink;

int beta_work(int x) { return x * 2; }

int plugin_entry(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += beta_work(i);
    return s;
}

/* Never instrumented: only samples see it. */
__attribute__((no_instrument_function)) void beta_spin(long n)
{
    for (long i = 0; i < n; i++)
        sink += (unsigned long)i;
}
