/* A shared library loaded with dlopen: plugin_work() is called through dlsym. */
static volatile unsigned plugin_sink;

static void plugin_helper(int i) { plugin_sink += (unsigned)i; }

int plugin_work(int n)
{
    for (int i = 0; i < n; i++)
        plugin_helper(i);
    return (int)plugin_sink;
}
