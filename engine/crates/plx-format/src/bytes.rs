//! Little-endian field codec: a bounds-checked reader over a payload and append helpers.

/// A payload field ran past the end of its record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShortPayload {
    /// Offset inside the payload where the field started.
    pub at: usize,
    /// Bytes the field needed.
    pub needed: usize,
}

/// Reads fields in order from one record payload; never reads past its end.
pub(crate) struct FieldReader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> FieldReader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        FieldReader { bytes, pos: 0 }
    }

    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], ShortPayload> {
        if self.remaining() < n {
            return Err(ShortPayload {
                at: self.pos,
                needed: n,
            });
        }
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    pub(crate) fn u8(&mut self) -> Result<u8, ShortPayload> {
        Ok(self.take(1)?[0])
    }

    pub(crate) fn u32(&mut self) -> Result<u32, ShortPayload> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub(crate) fn i32(&mut self) -> Result<i32, ShortPayload> {
        Ok(self.u32()? as i32)
    }

    pub(crate) fn u64(&mut self) -> Result<u64, ShortPayload> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    pub(crate) fn i64(&mut self) -> Result<i64, ShortPayload> {
        Ok(self.u64()? as i64)
    }

    pub(crate) fn f64(&mut self) -> Result<f64, ShortPayload> {
        Ok(f64::from_bits(self.u64()?))
    }

    /// A `str`: u32 length then UTF-8 bytes (invalid UTF-8 is replaced, not rejected).
    pub(crate) fn str(&mut self) -> Result<String, ShortPayload> {
        let at = self.pos;
        let n = self.u32()? as usize;
        match self.take(n) {
            Ok(b) => Ok(String::from_utf8_lossy(b).into_owned()),
            Err(_) => {
                self.pos = at;
                Err(ShortPayload { at, needed: 4 + n })
            }
        }
    }
}

/// Appends fields in the format's encoding.
pub(crate) trait Put {
    fn put_u8(&mut self, v: u8);
    fn put_u32(&mut self, v: u32);
    fn put_i32(&mut self, v: i32);
    fn put_u64(&mut self, v: u64);
    fn put_i64(&mut self, v: i64);
    fn put_f64(&mut self, v: f64);
    fn put_str(&mut self, v: &str);
}

impl Put for Vec<u8> {
    fn put_u8(&mut self, v: u8) {
        self.push(v);
    }
    fn put_u32(&mut self, v: u32) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_i32(&mut self, v: i32) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_u64(&mut self, v: u64) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_i64(&mut self, v: i64) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_f64(&mut self, v: f64) {
        self.extend_from_slice(&v.to_bits().to_le_bytes());
    }
    fn put_str(&mut self, v: &str) {
        self.put_u32(v.len() as u32);
        self.extend_from_slice(v.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_fields() {
        let mut v = Vec::new();
        v.put_u8(7);
        v.put_u32(0xdead_beef);
        v.put_i32(-5);
        v.put_u64(u64::MAX - 1);
        v.put_f64(2.5);
        v.put_i64(-7);
        v.put_str("héllo");
        let mut r = FieldReader::new(&v);
        assert_eq!(r.u8().unwrap(), 7);
        assert_eq!(r.u32().unwrap(), 0xdead_beef);
        assert_eq!(r.i32().unwrap(), -5);
        assert_eq!(r.u64().unwrap(), u64::MAX - 1);
        assert_eq!(r.f64().unwrap(), 2.5);
        assert_eq!(r.i64().unwrap(), -7);
        assert_eq!(r.str().unwrap(), "héllo");
        assert_eq!(r.remaining(), 0);
        assert!(r.u8().is_err());
    }

    #[test]
    fn string_past_end_is_short() {
        let mut v = Vec::new();
        v.put_u32(100);
        v.extend_from_slice(b"abc");
        let mut r = FieldReader::new(&v);
        let e = r.str().unwrap_err();
        assert_eq!(e.needed, 104);
    }
}
