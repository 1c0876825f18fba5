//! Parses buffer sizes such as `65536`, `64K`, `4M`, `1G`.

/// Smallest accepted buffer.
pub const MIN_BUFFER: u64 = 4096;

/// Bytes from a size with an optional K/M/G suffix (powers of 1024; `KB`/`KiB` also accepted).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits = t.bytes().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return Err(format!(
            "invalid size '{s}': expected bytes or a number with K, M or G"
        ));
    }
    let n: u64 = t[..digits]
        .parse()
        .map_err(|_| format!("invalid size '{s}': number too large"))?;
    let unit = t[digits..].to_ascii_uppercase();
    let mult: u64 = match unit.as_str() {
        "" | "B" => 1,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        "G" | "GB" | "GIB" => 1 << 30,
        _ => {
            return Err(format!(
                "invalid size '{s}': unknown unit '{}' (use K, M or G)",
                &t[digits..]
            ))
        }
    };
    let bytes = n
        .checked_mul(mult)
        .ok_or_else(|| format!("invalid size '{s}': too large"))?;
    if bytes < MIN_BUFFER {
        return Err(format!(
            "invalid size '{s}': at least {MIN_BUFFER} bytes (4K)"
        ));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("64K"), Ok(65536));
        assert_eq!(parse_size("4m"), Ok(4 << 20));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("8192"), Ok(8192));
        assert!(parse_size("12").is_err());
        assert!(parse_size("4X").is_err());
        assert!(parse_size("K").is_err());
        assert!(parse_size("-4K").is_err());
        assert!(parse_size("99999999999999999999G").is_err());
    }
}
