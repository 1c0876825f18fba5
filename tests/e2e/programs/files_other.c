/* The second source file of files_main.c. */
static volatile unsigned other_sink;

void other_one(void) { other_sink += 1; }
void other_two(void) { other_sink += 2; }
