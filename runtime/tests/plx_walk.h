/* Reading any record by the schema's table (records.h, generated from spec/records.toml): field
 * values for plx_check's expectations, and the dump the golden tests compare with the Rust
 * reader's. */
#ifndef PLX_WALK_H
#define PLX_WALK_H

#include <stdint.h>
#include <stdio.h>

#include "records.h"

/* A field's value: integers in `u` (i32/i64 sign-extended, f64 as its bits); a str's bytes in
 * p/n; a repeated field's first item in p and its count in n. */
struct plx_val {
    uint64_t u;
    const unsigned char *p;
    uint32_t n;
};

/* The definition of a record type, NULL for a type this reader does not know. */
const struct plx_record_def *plx_walk_def(uint16_t type);
/* Every field of a payload into v[nfields]: 0, or -1 when a field runs past the payload (bytes
 * after the last known field are allowed: later versions may append fields). */
int plx_walk_record(const struct plx_record_def *d, const unsigned char *p, uint32_t len,
                    struct plx_val *v);
/* Field j of item i of repeated field k (items of fixed size). */
uint64_t plx_walk_item(const struct plx_record_def *d, int k, const struct plx_val *v, uint32_t i, int j);
/* The definition of an extended subtype, NULL if unknown. */
const struct plx_subtype_def *plx_walk_subtype(unsigned id);
/* Field k of a subtype's payload (its bits, i32 sign-extended). */
uint64_t plx_walk_subfield(const struct plx_subtype_def *st, const uint64_t *payload, int k);
/* The dump of every process directory of an experiment, in name order (the golden format). */
void plx_walk_dump(const char *experiment, FILE *out);

#endif
