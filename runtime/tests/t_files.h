/* A function defined in a header: its code belongs to this file. */
static __attribute__((noinline, unused)) int header_fn(int x) { return x * 3; }
