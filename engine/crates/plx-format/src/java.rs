//! The Java agent's record of `process.plx` (type 40: JavaClass).

use crate::bytes::{FieldReader, Put};
use crate::records::DecodeProblem;

/// Record 40: a class the Java agent rewrote as it loaded (or failed to).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JavaClass {
    /// Methods instrumented in it.
    pub methods: u32,
    /// Nanoseconds the rewrite took.
    pub nanos: u64,
    /// Bit 0: the rewrite failed and the class runs unmeasured.
    pub flags: u32,
    /// The class, `pkg.Class$Inner`.
    pub name: String,
}

pub(crate) fn decode_java_class(r: &mut FieldReader) -> Result<JavaClass, DecodeProblem> {
    Ok(JavaClass {
        methods: r.u32()?,
        nanos: r.u64()?,
        flags: r.u32()?,
        name: r.str()?,
    })
}

pub(crate) fn encode_java_class(c: &JavaClass, out: &mut Vec<u8>) {
    out.put_u32(c.methods);
    out.put_u64(c.nanos);
    out.put_u32(c.flags);
    out.put_str(&c.name);
}
