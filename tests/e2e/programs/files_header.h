/* A function defined in a header: its code belongs to this file, not to the .c including it. */
static __attribute__((noinline, unused)) int header_fn(int x) { return x * 3; }
