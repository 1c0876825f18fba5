/* Plugin A of reload_main.c: its plugin_entry calls alpha_work. */
static volatile unsigned long sink;

int alpha_work(int x) { return x * 2; }

int plugin_entry(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += alpha_work(i);
    return s;
}

/* Never instrumented: only samples see it. */
__attribute__((no_instrument_function)) void alpha_spin(long n)
{
    for (long i = 0; i < n; i++)
        sink += (unsigned long)i;
}
