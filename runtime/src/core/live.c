/* Live files: a thread's profile tree (and an extension's per-thread tables) kept in a
 * file-backed shared mapping in the process directory, so what it has measured survives a
 * SIGKILL — the kernel keeps the pages of a killed process's shared file mappings. Removed once
 * the same data has been written as records (thread or process end). spec/format.md defines
 * the layout; an item is published by writing it before the header's count. */
#include "plx_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void live_path(char *out, size_t cap, const char *kind, uint32_t thread)
{
    snprintf(out, cap, "%s/live.%u.%s", plx_process_dir, thread, kind);
}

void *plx_live_map(const char *kind, uint32_t thread, uint16_t item_size, uint32_t capacity,
                   struct plx_live_header **header)
{
    char path[4700];
    live_path(path, sizeof path, kind, thread);
    size_t bytes = sizeof(struct plx_live_header) + (size_t)item_size * capacity;
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return NULL;
    void *p = MAP_FAILED;
    if (ftruncate(fd, (off_t)bytes) == 0)
        p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    plx_sys_close(fd);
    if (p == MAP_FAILED) {
        unlink(path);
        return NULL;
    }
    struct plx_live_header *h = p;
    memcpy(h->magic, "PLXL", 4);
    h->version = 1;
    h->item_size = item_size;
    h->thread = thread;
    h->capacity = capacity;
    memcpy(h->kind, kind, strnlen(kind, sizeof h->kind - 1));
    *header = h;
    return (char *)p + sizeof *h;
}

void plx_live_unmap(struct plx_live_header *header)
{
    if (header)
        munmap(header, sizeof *header + (size_t)header->item_size * header->capacity);
}

void plx_live_remove(const char *kind, uint32_t thread)
{
    char path[4700];
    int saved = errno;
    live_path(path, sizeof path, kind, thread);
    unlink(path);
    errno = saved;
}
