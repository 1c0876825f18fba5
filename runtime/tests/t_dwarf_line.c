/* Unit test of the DWARF line-table index (runtime/src/core/dwarf_line.c).
 *
 *   t_dwarf_line ELF [ADDRHEX=EXPECTED_SUFFIX:LINE | ADDRHEX=- ]...
 *       checks that each address resolves to a path ending with EXPECTED_SUFFIX and that line
 *       ("-" expects the address not to be covered); prints failures, exits 1 on any failure.
 *   t_dwarf_line ELF --query
 *       reads hexadecimal addresses from stdin, one a line, and prints "FILE:LINE" for each
 *       ("??:0" when not covered), the format dwarf_line_check.sh compares with addr2line.
 *   t_dwarf_line ELF --expect-none
 *       exits 0 only if the index cannot be built (no usable .debug_line).
 *
 * Build: cc -std=c11 -D_GNU_SOURCE -I runtime/src/core runtime/tests/t_dwarf_line.c \
 *           runtime/src/core/dwarf_line.c -o t_dwarf_line */
#include "../src/core/dwarf_line.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int check(const struct plx_dwarf_lines *d, const char *arg)
{
    const char *eq = strchr(arg, '=');
    if (!eq) {
        fprintf(stderr, "bad argument (want ADDRHEX=SUFFIX:LINE): %s\n", arg);
        return 1;
    }
    char *endp;
    errno = 0;
    uint64_t addr = strtoull(arg, &endp, 16);
    if (errno || endp != eq) {
        fprintf(stderr, "bad address: %s\n", arg);
        return 1;
    }
    unsigned line = 0;
    const char *file = plx_dwarf_file_of(d, addr, &line);
    const char *want = eq + 1;
    if (!strcmp(want, "-")) {
        if (file) {
            printf("FAIL %" PRIx64 ": expected not covered, got %s:%u\n", addr, file, line);
            return 1;
        }
        return 0;
    }
    const char *colon = strrchr(want, ':');
    if (!colon) {
        fprintf(stderr, "bad expectation (want SUFFIX:LINE): %s\n", arg);
        return 1;
    }
    unsigned want_line = (unsigned)strtoul(colon + 1, NULL, 10);
    char suffix[4096];
    snprintf(suffix, sizeof suffix, "%.*s", (int)(colon - want), want);
    if (!file) {
        printf("FAIL %" PRIx64 ": expected %s:%u, not covered\n", addr, suffix, want_line);
        return 1;
    }
    if (!ends_with(file, suffix) || line != want_line) {
        printf("FAIL %" PRIx64 ": expected ...%s:%u, got %s:%u\n", addr, suffix, want_line, file, line);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s ELF [ADDRHEX=SUFFIX:LINE|ADDRHEX=-]... | --query | --expect-none\n",
                argv[0]);
        return 2;
    }
    int fd = open(argv[1], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0) {
        perror(argv[1]);
        return 2;
    }
    size_t size = (size_t)st.st_size;
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        perror("mmap");
        return 2;
    }
    struct plx_dwarf_lines *d = plx_dwarf_lines_build(map, size);
    /* the index must not refer to the image once built */
    munmap(map, size);

    int failures = 0;
    if (argc == 3 && !strcmp(argv[2], "--expect-none")) {
        failures = d != NULL;
        if (failures)
            printf("FAIL %s: expected no usable line table\n", argv[1]);
    } else if (argc == 3 && !strcmp(argv[2], "--query")) {
        char buf[256];
        while (fgets(buf, sizeof buf, stdin)) {
            uint64_t addr = strtoull(buf, NULL, 16);
            unsigned line = 0;
            const char *file = plx_dwarf_file_of(d, addr, &line);
            if (file)
                printf("%s:%u\n", file, line);
            else
                printf("??:0\n");
        }
    } else {
        if (!d && argc > 2)
            printf("note: %s: no usable line table\n", argv[1]);
        for (int i = 2; i < argc; i++)
            failures += check(d, argv[i]);
        if (failures)
            printf("%d of %d checks failed\n", failures, argc - 2);
    }
    plx_dwarf_lines_free(d);
    return failures ? 1 : 0;
}
