/* Source file and line of a code address from an ELF image's DWARF line table (.debug_line).
 *
 * Used to evaluate `include file` / `exclude file` filter rules against the file a function's
 * first instruction comes from (a template defined in a header resolves to the header).
 * Supports DWARF 2-5 line programs (32- and 64-bit DWARF), ELF64 little-endian images, and
 * debug sections compressed with zlib (SHF_COMPRESSED / ELFCOMPRESS_ZLIB and the older
 * .zdebug_* form); zstd-compressed sections are treated as absent. */
#ifndef PLX_DWARF_LINE_H
#define PLX_DWARF_LINE_H

#include <stddef.h>
#include <stdint.h>

/* Index of one module's line table; built once, queried many times. It keeps no reference to
 * the image after plx_dwarf_lines_build returns (the image may be unmapped). */
struct plx_dwarf_lines;

/* Builds the index from an ELF image in memory; returns NULL if it has no usable .debug_line
 * (stripped, sections compressed other than with zlib, malformed, no rows). Never crashes on
 * bad input. Sequences of discarded code (start address outside every executable section, as
 * left by the linker for dropped COMDAT / gc'd functions) are ignored. */
__attribute__((visibility("hidden")))
struct plx_dwarf_lines *plx_dwarf_lines_build(const unsigned char *image, size_t size);

/* Source file of the row covering file_addr (the row with the greatest address <= file_addr
 * within a sequence that contains it; of several rows at one address the last one), as an
 * absolute path when the table gives a directory (include directory or compilation directory
 * joined with the file name; DWARF 5: directory index 0 is the compilation directory; DWARF 2-4:
 * the compilation directory comes from the unit's DW_AT_comp_dir in .debug_info). The path is
 * normalized lexically ("." components and "dir/.." pairs removed, repeated '/' collapsed).
 * Stores the row's line number in *line if line is not NULL. Returns NULL if not covered. The
 * returned string lives as long as the index. */
__attribute__((visibility("hidden")))
const char *plx_dwarf_file_of(const struct plx_dwarf_lines *d, uint64_t file_addr, unsigned *line);

__attribute__((visibility("hidden")))
void plx_dwarf_lines_free(struct plx_dwarf_lines *d);

#endif
