/* Loads the plugin given as argv[1] with dlopen and calls plugin_work() 4 times through dlsym. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    void *h = dlopen(argv[1], RTLD_NOW);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 3;
    }
    int (*plugin_work)(int) = (int (*)(int))dlsym(h, "plugin_work");
    if (!plugin_work)
        return 4;
    int r = 0;
    for (int i = 0; i < 4; i++)
        r = plugin_work(3);
    printf("%d\n", r);
    return 0;
}
