/* The second source file of t_files. */
int other_fn(int x) { return x - 1; }
int other_fn2(int x) { return x * 2; }
